"""H7's per-target index of the switch's outstanding tags (ualink_ref/node/outstanding.py):
``fail_targets`` answers exactly the ops outstanding to the faulted targets, checked
against a plain model of the slots kept by this test."""

from __future__ import annotations

import random

from ualink_ref.node.outstanding import OutstandingTags
from ualink_ref.tl import codec
from ualink_ref.tl.upli import Command, Status

ORIGINATORS = (0, 1, 2, 5)
TARGETS = (0, 1, 2, 5, 9)


def _request(src: int, dst: int, tag: int) -> codec.Request:
    return codec.Request(cmd=int(Command.WRITE), vchan=0, asi=0, tag=tag, pool=0, attr=0,
                         len=0, metadata=0, addr=0, src_acc=src, dst_acc=dst, cload=0,
                         cway=0, numbeats=0)


def _response(src: int, dst: int, tag: int, last: int) -> codec.Response:
    return codec.Response(vchan=0, tag=tag, pool=0, len=0, offset=0, status=0, rd_wr=1,
                          last=last, src_acc=src, dst_acc=dst)


def test_fail_targets_answers_exactly_the_ops_outstanding_to_the_target() -> None:
    rng = random.Random(26)
    for _ in range(40):
        table = OutstandingTags(ORIGINATORS)
        model: dict[tuple[int, int], int] = {}  # (originator, tag) -> target
        for _ in range(300):
            src, tag = rng.choice(ORIGINATORS), rng.randrange(8)
            step = rng.random()
            if step < 0.6:  # issue (a reused tag takes the slot over)
                dst = rng.choice(TARGETS)
                table.issue(_request(src, dst, tag))
                model[src, tag] = dst
            elif step < 0.9 and (src, tag) in model:  # an answer, last or not
                last = rng.randrange(2)
                assert table.answer(_response(model[src, tag], src, tag, last))
                if last:
                    del model[src, tag]
            elif step < 0.95:
                table.forget_originator(src)
                model = {k: v for k, v in model.items() if k[0] != src}
            else:
                dead = set(rng.sample(TARGETS, rng.randrange(1, 3)))
                answers = table.fail_targets(dead, Status.DATA_ERROR)
                got = [(r.dst_acc, r.tag, r.src_acc) for r in answers]
                want = sorted((k[0], k[1], v) for k, v in model.items() if v in dead)
                assert sorted(got) == want
                assert len(got) == len(set(got))
                assert all(r.status == int(Status.DATA_ERROR) and r.last for r in answers)
                model = {k: v for k, v in model.items() if v not in dead}
            assert table.count == len(model)
            for target in TARGETS:
                assert table.outstanding_to(target) == {k for k, v in model.items()
                                                        if v == target}


def test_a_retargeted_tag_is_failed_only_by_its_new_target() -> None:
    table = OutstandingTags(ORIGINATORS)
    table.issue(_request(1, 2, 7))
    table.issue(_request(1, 9, 7))  # same tag, new target: the slot moves
    assert table.fail_targets({2}, Status.DATA_ERROR) == []
    [answer] = table.fail_targets({9}, Status.DATA_ERROR)
    assert (answer.src_acc, answer.dst_acc, answer.tag) == (9, 1, 7)
    assert table.count == 0
