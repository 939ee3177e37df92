"""Errors from the peer (``specs/tl.md`` rule 6, E1-E7): a peer's bad TL field is
handled on its own.

Each test is one reproducer or one rule: the field is rejected, counted and reported
with its reason; the fields around it are processed; every operation ends with
exactly one completion; tags and credits never leak. Last, a bare TransactionLayer
against a hostile peer (rules and invariants in ``tests/helpers/hostile_peer.py``).
"""

from __future__ import annotations

import pytest
from hypothesis import settings

from tests.helpers.hostile_peer import CREDITS, HONEST, LIMITS, HostilePeer
from tests.helpers.tl_peer import (
    books_balance,
    drain,
    flits,
    grant_all,
    halves,
    ok_response,
    requests_in,
)
from ualink_ref.errors import (
    AddressCacheError,
    CreditError,
    LinkFailedError,
    MisroutedError,
    ReservedBitsError,
    ResponseMismatchError,
    TagError,
)
from ualink_ref.tl import Status, TransactionLayer
from ualink_ref.tl.codec import (
    CompressedRequest,
    CompressedResponseData,
    CompressedResponseNoData,
    FlowControl,
    Request,
    Response,
)
from ualink_ref.tl.config import TLConfig
from ualink_ref.tl.events import Completion, FieldRejected, LateResponse, LinkFailed
from ualink_ref.tl.limits import TLLimits

# -- Issue 15, deliverable 1: a peer's bad TL field is handled on its own

def _ready(acc: int = 1, **options: object) -> TransactionLayer:
    """A TL that has granted its credits to the peer (us) and holds ours."""
    tl = TransactionLayer(acc, config=TLConfig(compress=False, **options))  # type: ignore[arg-type]
    drain(tl)  # its initial credit grant goes out
    grant_all(tl)
    return tl


def _issue_reads(tl: TransactionLayer, n: int, length: int = 64) -> tuple[list[int], list[Request]]:
    handles = [tl.read(2, 0x1000 + 256 * i, length) for i in range(n)]
    return handles, requests_in(drain(tl))


def _completions(events: list) -> list[Completion]:
    return [e for e in events if type(e) is Completion]


def _rejections(events: list) -> list[FieldRejected]:
    return [e for e in events if type(e) is FieldRejected]


def _feed(tl: TransactionLayer, stream: list[bytes]) -> list:
    events = []
    for flit in flits(stream):
        events.extend(tl.receive(flit))
    return events


def test_unknown_tag_response_does_not_stop_the_fields_after_it() -> None:
    # Issue reproducer: a response for a tag never issued, then the answers to two reads,
    # all in one flit. The two reads must complete.
    tl = _ready()
    handles, reqs = _issue_reads(tl, 2, 4)
    beat = b"\x11" * 32
    stream = halves([ok_response(reqs[0], rd_wr=1, tag=2000),
                     ok_response(reqs[0], beats=1), ok_response(reqs[1], beats=1)],
                    [beat, beat, beat, beat])
    events = _feed(tl, stream)
    [rejected] = _rejections(events)
    assert isinstance(rejected.error, TagError)
    assert "TagError" in rejected.reason
    assert [(c.handle, c.status, c.data) for c in _completions(events)] == [
        (handles[0], Status.OKAY, b"\x11" * 4), (handles[1], Status.OKAY, b"\x11" * 4)]
    assert tl.counters.fields_rejected == 1
    assert tl.outstanding == 0
    books_balance(tl)


@pytest.mark.parametrize(
    ("change", "beats", "error", "what"),
    [
        ({"src_acc": 7}, 1, ResponseMismatchError, "src_acc"),  # the wrong responder
        ({"len": 1}, 2, ResponseMismatchError, "beats"),  # two beats for a 64-byte read
        ({"rd_wr": 1}, 0, ResponseMismatchError, "beats"),  # a no-data OKAY to a read
        ({"spare": 5}, 1, ReservedBitsError, "spare"),
        ({"offset": 1}, 1, ResponseMismatchError, "last beat is 1"),  # past the one beat (S4)
        ({"last": 0}, 1, ResponseMismatchError, "last is 0"),  # all beats, not last (S6)
        ({"dst_acc": 9}, 1, MisroutedError, "accelerator 9"),
        ({"status": 9, "rd_wr": 0}, 0, Exception, "status"),
    ],
)
def test_bad_response_ends_its_operation_with_an_error(
    change: dict[str, int], beats: int, error: type[Exception], what: str
) -> None:
    tl = _ready()
    [handle], [req] = _issue_reads(tl, 1)
    events = _feed(tl, halves([ok_response(req, beats=1, **change)], [bytes(32)] * (2 * beats)))
    [rejected] = _rejections(events)
    assert isinstance(rejected.error, error) and what in str(rejected.error)
    [done] = _completions(events)
    assert done.handle == handle and done.status == Status.DATA_ERROR and done.data is None
    assert done.error is not None and type(rejected.error).__name__ in done.error
    assert tl.outstanding == 0
    books_balance(tl)
    # The op is not completed twice by a late good answer. A bad piece without
    # last = 1 leaves the tag quarantined (rule S7): the answer is discarded and
    # frees it; otherwise the tag is free again and the answer names no op (E5).
    quarantined = change.get("last") == 0
    assert tl.quarantined == (1 if quarantined else 0)
    late = _feed(tl, halves([ok_response(req, beats=1)], [bytes(32)] * 2))
    if quarantined:
        assert _rejections(late) == []
        [discarded] = [e for e in late if isinstance(e, LateResponse)]
        assert (discarded.handle, discarded.after, discarded.final) == (handle, "error", True)
    else:
        assert [type(r.error) for r in _rejections(late)] == [TagError]
    assert _completions(late) == [] and tl.quarantined == 0
    books_balance(tl)


def test_misaddressed_responses_do_not_leak_credits() -> None:
    # Issue reproducer: 16 misaddressed responses leaked 16 credits for good and the 17th
    # raised CreditError. Now each is rejected on its own and its credit comes back.
    tl = _ready()
    held = tl.credit_books().receiver.outstanding[0][1]  # response-command credits we hold
    assert held == 16
    bogus = Response(vchan=0, tag=5, pool=0, len=0, offset=0, status=0, rd_wr=1, last=1,
                     src_acc=2, dst_acc=33)
    for round_ in range(3):
        for _ in range(16):  # spend every VC-0 credit we hold
            events = _feed(tl, halves([bogus]))
            [rejected] = _rejections(events)
            assert isinstance(rejected.error, MisroutedError), round_
        books_balance(tl)
        drain(tl)  # the TL returns the 16 credits
        assert tl.credit_books().receiver.outstanding[0][1] == 16
    assert tl.counters.fields_rejected == 48


def test_overspent_credits_reject_the_field_and_keep_the_books() -> None:
    tl = _ready()
    bogus = Response(vchan=0, tag=5, pool=0, len=0, offset=0, status=0, rd_wr=1, last=1,
                     src_acc=2, dst_acc=1)
    errors = [type(_rejections(_feed(tl, halves([bogus])))[0].error) for _ in range(17)]
    assert errors == [TagError] * 16 + [CreditError]
    books_balance(tl)


def test_overspent_response_still_ends_its_operation() -> None:
    tl = _ready()
    rx = tl._rx_credits  # the books as a peer that spent every credit would leave them
    for source in range(5):
        rx.owed[source] = [a + b for a, b in zip(rx.owed[source], rx.outstanding[source],
                                                 strict=True)]
        rx.outstanding[source] = [0, 0, 0, 0]  # (as if we, the peer, had spent them all)
    [handle], [req] = _issue_reads(tl, 1)
    events = _feed(tl, halves([ok_response(req, beats=1)], [bytes(32)] * 2))
    assert isinstance(_rejections(events)[0].error, CreditError)
    [done] = _completions(events)
    assert done.handle == handle and done.status == Status.DATA_ERROR
    books_balance(tl)


def test_compressed_request_naming_an_empty_way_is_rejected_alone() -> None:
    tl = _ready(2)
    bad = CompressedRequest(cmd=0x03, vchan=0, tag=1, pool=1, attr=0, len=0, cway=2,
                            numbeats=0, addr_lo=0)
    good = Request(cmd=0x29, vchan=0, asi=0, tag=2, pool=1, attr=0, len=15, metadata=0,
                   addr=0x100, src_acc=1, dst_acc=2, cload=0, cway=0, numbeats=0)
    events = _feed(tl, halves([bad, good], [b"\x5a" * 32] * 2))
    [rejected] = _rejections(events)
    assert isinstance(rejected.error, AddressCacheError)
    assert tl.memory.peek(0x100, 64) == b"\x5a" * 64  # the request after it was served
    assert tl.responses_queued == 1
    books_balance(tl)


def test_over_grant_is_a_credit_error_and_changes_nothing() -> None:
    tl = TransactionLayer(1, config=TLConfig(limits=TLLimits(max_credits=100)))
    events = [e for _ in range(3) for e in tl.receive(flits(halves([FlowControl(40)]))[0])]
    [rejected] = _rejections(events)
    assert isinstance(rejected.error, CreditError) and "maximum 100" in str(rejected.error)
    assert tl.credit_books().sender.available[4][0] == 80


def test_undecodable_framing_fails_the_link_and_completes_everything_once() -> None:
    tl = _ready()
    handles, reqs = _issue_reads(tl, 3)
    queued = tl.write(2, 0x40, b"\x01" * 8)  # still queued: it is completed too
    garbage = bytes([0x70]) + bytes(31)  # FTYPE 7: unknown, the framing is lost
    events = tl.receive(garbage + halves([ok_response(reqs[0], beats=1)])[0])
    assert isinstance(events[0], LinkFailed) and "FTYPE" in events[0].reason.upper()
    done = _completions(events)
    assert sorted(c.handle for c in done) == [*handles, queued]
    assert all(c.status == Status.DATA_ERROR and c.error for c in done)
    assert tl.failed and not tl.busy and tl.outstanding == 0 and tl.queued == 0
    assert tl.poll() is None
    assert tl.receive(flits(halves([ok_response(reqs[1], beats=1)]))[0]) == []
    assert tl.counters.flits_ignored == 1
    with pytest.raises(LinkFailedError):
        tl.read(2, 0, 4)
    books_balance(tl)


def test_compressed_responses_for_unknown_tags_are_rejected() -> None:
    tl = _ready()
    events = _feed(tl, halves([CompressedResponseNoData(0, 77, 1, 0),
                               CompressedResponseData(0, 78, 1, 0)], [bytes(32)] * 2))
    assert [type(r.error) for r in _rejections(events)] == [TagError, TagError]
    books_balance(tl)



# -- Issue 15, deliverable 7: a bare TransactionLayer against a hostile peer

class HostileTL(HostilePeer):
    """The peer's TL flits go straight to the honest TL; its output comes straight back."""

    def __init__(self) -> None:
        super().__init__()
        self._tl = TransactionLayer(HONEST, self.memory, config=TLConfig(
            credits=CREDITS, compress=False, limits=LIMITS))

    @property
    def tl(self) -> TransactionLayer:
        return self._tl

    def deliver(self, tl_flits: list[bytes]) -> list[object]:
        events: list[object] = []
        for flit in tl_flits:
            events.extend(self._tl.receive(flit))
        return events

    def collect(self, budget: int) -> list[bytes]:
        out = []
        for _ in range(budget):
            flit = self._tl.poll()
            if flit is None:
                break
            out.append(flit)
        return out


HostileTL.TestCase.settings = settings(
    HostileTL.TestCase.settings, stateful_step_count=80, max_examples=100
)
TestHostileTL = HostileTL.TestCase
