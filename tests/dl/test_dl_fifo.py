"""The FIFO assumption (specs/dl.md, "Fault model: the link is FIFO"): what a receiver
sees when a link re-delivers an old flit, for implicit and explicit sequence numbers."""

from __future__ import annotations

from ualink_ref.dl import DataLink, DLFlit, FlitOp, SequenceGap, TLFlitDelivered
from ualink_ref.dl.config import DLConfig
from ualink_ref.net.link_pair import LinkPair

TL = [bytes([n]) * 64 for n in range(1, 40)]


def _trickle(pair: LinkPair, flits: list[bytes], until_accepted: int) -> None:
    """One TL flit per slot from a to b (so every DL flit carries exactly one and the
    TL-stream phase stays 0) until b has accepted ``until_accepted`` data flits."""
    queue = list(flits)
    while pair.b.accepted < until_accepted:
        if queue:
            pair.a.send([queue.pop(0)])
        pair.step()
    flits[:] = queue


def _wire_flit(pair: LinkPair, seq: int, op: FlitOp) -> bytes:
    """The first a-to-b data flit of ``op`` numbered ``seq`` (low 3 bits if implicit)."""
    for _, direction, flit in pair.wire:
        f = DLFlit.decode(flit)
        number = f.flit_seq_lo if op is FlitOp.ACK else f.flit_seq
        if direction == "ab" and f.payload and f.op is op and number == seq:
            return flit
    raise AssertionError(f"no {op.name} data flit numbered {seq} on the wire")


def test_late_redelivery_of_an_implicit_flit_is_accepted_as_new() -> None:
    # The stated consequence: an implicit flit re-delivered when the receiver expects a
    # number 8 later (same low 3 bits) passes CRC, sequence and phase checks: its TL
    # flit is delivered a second time and the real flit of that number is then dropped
    # as a duplicate of what was "received" — silently, no error event at all.
    pair = LinkPair()
    pair.record_wire = True
    queue = list(TL[:20])
    _trickle(pair, queue, until_accepted=9)  # b now expects seq 10 (low bits 2)
    old = _wire_flit(pair, 2, FlitOp.ACK)  # seq 2, sent implicit
    events = pair.b.receive(old, pair.now)  # injected beside the harness: not in `delivered`
    assert not any(isinstance(e, SequenceGap) for e in events)
    assert pair.b.accepted == 10  # taken as seq 10
    injected = [e.data for e in events if isinstance(e, TLFlitDelivered)]
    assert injected == [TL[1]]
    before = pair.delivered["b"]
    for tl in queue:
        pair.a.send([tl])
    pair.run_until_idle()
    after = pair.delivered["b"][len(before):]
    got = before + injected + after
    assert len(got) == 20 and pair.b.counters.tl_flits_delivered == 20
    assert got[9] == TL[1] != TL[9]  # seq 2's TL flit again in place of seq 10's
    assert got[:9] == TL[:9] and got[10:] == TL[10:20]
    assert TL[9] not in got  # seq 10's own data is lost


def test_late_redelivery_of_an_explicit_flit_is_a_harmless_duplicate() -> None:
    # Explicit numbers survive the same fault: 9 bits within a 256-flit window tell
    # "behind" from "ahead", so the old flit is dropped and re-acknowledged.
    pair = LinkPair(a=DataLink(DLConfig(explicit_interval=1)))  # every data flit explicit
    pair.record_wire = True
    queue = list(TL[:20])
    _trickle(pair, queue, until_accepted=9)
    old = _wire_flit(pair, 2, FlitOp.EXPLICIT)
    before = pair.b.counters.duplicates
    pair.b.receive(old, pair.now)
    assert pair.b.counters.duplicates == before + 1 and pair.b.accepted == 9
    for tl in queue:
        pair.a.send([tl])
    pair.run_until_idle()
    assert pair.delivered["b"] == TL[:20]


def test_redelivery_within_reach_is_detected_and_recovered() -> None:
    # An implicit flit re-delivered fewer than 8 numbers later fails the 3-bit check:
    # a SequenceGap and a replay, nothing misdelivered.
    pair = LinkPair()
    pair.record_wire = True
    queue = list(TL[:12])
    _trickle(pair, queue, until_accepted=4)  # b expects seq 5
    early = _wire_flit(pair, 3, FlitOp.ACK)  # seq 3 seen again while 5 is expected
    events = pair.b.receive(early, pair.now)
    assert [type(e) for e in events] == [SequenceGap]
    for tl in queue:
        pair.a.send([tl])
    pair.run_until_idle()
    assert pair.delivered["b"] == TL[:12]
