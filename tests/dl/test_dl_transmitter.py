"""The transmitter: packing TL bytes, the window, sequence numbers and the implicit
form (specs/dl.md section 6, rules 1, 2, 4, 7)."""

from __future__ import annotations

from typing import Any

import pytest

from tests.helpers.dl_links import (
    NEVER,
    TL_256,
    TL_512,
    WrapLossChannel,
    decode_flit,
    decoded_op,
    header_fields,
    random_tl_flits,
)
from ualink_ref.dl import (
    DataLink,
    DLFlit,
    FlitOp,
)
from ualink_ref.dl.config import DLConfig
from ualink_ref.errors import EncodeError
from ualink_ref.net.channels import FaultyChannel
from ualink_ref.net.link_pair import LinkPair


def test_tx_backlog_counts_tl_flits_not_completely_packed() -> None:
    link = DataLink()
    link.send(random_tl_flits(0, 20))
    assert link.tx_backlog == 20
    link.poll(0)  # 628 bytes: 9 whole TL flits and 52 bytes of the 10th
    assert link.tx_backlog == 11
    link.poll(1)
    assert link.tx_backlog == 1  # 24 bytes of the 20th remain
    link.poll(2)
    assert link.tx_backlog == 0


def test_send_rejects_wrong_size() -> None:
    for bad in (bytes(63), [0] * 64, "x" * 64):
        with pytest.raises(EncodeError):
            DataLink().send([bad])  # type: ignore[list-item]


def test_window_caps_flits_in_flight() -> None:
    pair = LinkPair(a=DataLink(DLConfig(replay_timeout=10_000)), ba=FaultyChannel(drop=1.0))
    pair.a.send(random_tl_flits(6, 3000))
    pair.run(400)
    assert pair.a.in_flight == 256
    assert pair.a.counters.data_flits_sent == 256


@pytest.mark.parametrize("window", [1, 2, 4, 256])
def test_window_edge(window: int) -> None:
    link = DataLink(DLConfig(window=window, replay_timeout=10**9))
    link.send(TL_256 * 12)
    sent = [link.poll(t) for t in range(window)]
    assert all(s is not None for s in sent)
    assert link.poll(window) is None and link.in_flight == window  # window full
    link.receive(DLFlit(FlitOp.ACK, ack_req_seq=1).encode(), window)
    assert link.poll(window + 1) is not None  # one acknowledged: exactly one more


def test_explicit_header_at_least_every_32_data_flits() -> None:
    pair = LinkPair()
    pair.record_wire = True
    pair.a.send(random_tl_flits(7, 1000))
    pair.b.send(random_tl_flits(8, 1000))
    pair.run_until_idle()
    for direction in ("ab", "ba"):
        run = longest = 0
        for _, d, flit in pair.wire:
            op, payload, _ = header_fields(flit)
            if d != direction or not payload:
                continue
            run = run + 1 if op is FlitOp.ACK else 0
            longest = max(longest, run)
        assert 0 < longest <= 31


def test_implicit_form_only_within_reach_seven() -> None:
    link = DataLink(DLConfig(replay_timeout=10**9))
    link.send(TL_256 * 12)
    ops = [decoded_op(link.poll(t)) for t in range(9)]
    # flits 1..7 may piggy-back (0..6 unacknowledged before each); the 8th may not
    assert ops[:7] == [FlitOp.ACK] * 7
    assert ops[7] is FlitOp.EXPLICIT


def test_a_replayed_flit_restarts_the_implicit_count() -> None:
    # Rule 4: at most explicit_interval - 1 implicit flits since the last explicit one;
    # every replayed flit is explicit, so after a replay the full allowance is back.
    link = DataLink(DLConfig(explicit_interval=3, replay_timeout=NEVER))
    link.send(TL_512)
    assert [decode_flit(link.poll(t)).op for t in (0, 1)] == [FlitOp.ACK, FlitOp.ACK]
    link.receive(DLFlit(FlitOp.REPLAY_REQUEST, ack_req_seq=2).encode(), 2)  # seq 1 acked
    replay = decode_flit(link.poll(3))
    assert (replay.op, replay.flit_seq) == (FlitOp.REPLAY, 2)
    ops = [decode_flit(link.poll(t)).op for t in (4, 5, 6)]
    assert ops == [FlitOp.ACK, FlitOp.ACK, FlitOp.EXPLICIT]


def test_sequence_wraps_four_times_with_losses_at_510_511_1() -> None:
    a, b = DataLink(), DataLink()
    ab, ba = WrapLossChannel(a), WrapLossChannel(b)
    pair = LinkPair(a, b, ab, ba)  # type: ignore[arg-type]
    n = 4 * 511 * 628 // 64 + 60
    sa, sb = random_tl_flits(10, n), random_tl_flits(11, n // 2)
    pair.a.send(sa)
    pair.b.send(sb)
    pair.run_until_idle()
    assert pair.delivered["b"] == sa and pair.delivered["a"] == sb
    assert a.counters.data_flits_sent >= 4 * 511 + 3
    assert ab.lost.count(510) >= 4 and ab.lost.count(511) >= 4 and ab.lost.count(1) >= 5
    assert ba.lost.count(510) >= 2


@pytest.mark.parametrize("run", [8, 16, 7, 24])
@pytest.mark.parametrize("delay", [1, 6])
def test_silent_loss_of_consecutive_flits_never_misdelivers(run: int, delay: int) -> None:
    # Runs that are multiples of 8 would fool a bare 3-bit check; rule 4 prevents it.
    script: dict[int, Any] = {i: "drop" for i in range(3, 3 + run)}
    script.update({i: "drop" for i in range(40, 40 + run)})
    pair = LinkPair(ab=FaultyChannel(script=script, delay=delay),
                    ba=FaultyChannel(delay=delay))
    sent = random_tl_flits(run, 600)
    for i in range(0, 600, 6):
        pair.a.send(sent[i:i + 6])
        pair.step()
    pair.run_until_idle()
    assert pair.delivered["b"] == sent


def test_silent_loss_of_seven_across_the_wrap_never_misdelivers() -> None:
    # 506..511 and 1 lost silently: the next flit, seq 2, has the same low 3 bits as 506
    # (the wrap skips 0), so the implicit form must not reach 7 flits past the ack.
    a = DataLink()
    lost = (*range(506, 512), 1)
    ab = WrapLossChannel(a, seqs=lost, silent=True)
    pair = LinkPair(a, DataLink(), ab)  # type: ignore[arg-type]
    sent = random_tl_flits(12, 530 * 628 // 64)
    for i in range(0, len(sent), 9):
        pair.a.send(sent[i:i + 9])
        pair.step()
    pair.run_until_idle()
    assert ab.lost == [1, *lost]  # seq 1 also at the very start
    assert pair.delivered["b"] == sent
