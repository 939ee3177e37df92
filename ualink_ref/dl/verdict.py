"""The DL receiver's verdict on a data flit: one function, used by the receiver and the dissector.

A data flit (one carrying TL bytes) is *accepted* when its sequence number
is the one the receiver expects next; a *duplicate* when it lies behind it
(within the window: DL rule 2); otherwise it reveals a *gap* (flits were lost
or corrupted). An implicit-sequence flit carries only the low 3 bits of its
number, which must equal those of the expected number (DL rule 4). Its TL
bytes must continue the TL stream's phase: ``first_tl_start`` equals the bytes
still missing from the TL flit the receiver holds part of.

:class:`~ualink_ref.dl.DataLink` and :mod:`ualink_ref.capture.dissect` both
call :func:`classify`, so the rules are written once.
"""

from __future__ import annotations

from enum import Enum

from ualink_ref.dl.flit import DLFlit
from ualink_ref.errors import SequenceError
from ualink_ref.sizes import MAX_WINDOW, SEQ_MAX, TL_FLIT_BYTES


class Verdict(Enum):
    """What a receiver expecting a given sequence number does with a data flit."""

    ACCEPT = "accepted"
    DUPLICATE = "duplicate"
    GAP = "gap"



def _check(seq: int) -> None:
    if not 1 <= seq <= SEQ_MAX:
        raise SequenceError(f"sequence number must be 1..{SEQ_MAX}, got {seq}")


def next_seq(seq: int) -> int:
    """The wire sequence number after ``seq`` (1..511, wrapping to 1)."""
    return seq % SEQ_MAX + 1


def classify(flit: DLFlit, expected: int) -> tuple[Verdict, int | None]:
    """``(verdict, wire sequence number or None)`` of data flit ``flit`` at a receiver
    expecting wire number ``expected`` next (rules 2 and 4).

    For an implicit-sequence flit the number is ``expected`` when accepted and
    unknown (``None``) on a gap; for an explicit one it is the header's. An
    ``expected`` outside 1..511 is a :class:`~ualink_ref.errors.SequenceError`.
    """
    _check(expected)
    if flit.op.is_command:
        if flit.flit_seq_lo != expected & 7:
            return Verdict.GAP, None
        return Verdict.ACCEPT, expected
    seq = flit.flit_seq
    if seq == expected:
        return Verdict.ACCEPT, seq
    if (seq - expected) % SEQ_MAX >= MAX_WINDOW:
        return Verdict.DUPLICATE, seq
    return Verdict.GAP, seq


def implicit_seq(expected: int, low_bits: int) -> int:
    """The number an implicit flit with ``low_bits`` names: the first from ``expected`` on
    with those low 3 bits (a sender goes implicit only within 7 of the acked point)."""
    _check(expected)
    if not isinstance(low_bits, int) or not 0 <= low_bits <= 7:  # 1.5 would never match
        raise SequenceError(f"implicit sequence bits must be 0..7, got {low_bits}")
    seq = expected
    while seq & 7 != low_bits:
        seq = next_seq(seq)
    return seq


def phase_matches(flit: DLFlit, held: int) -> bool:
    """True when ``flit``'s TL bytes continue a stream of which ``held`` bytes of an
    unfinished TL flit are held (``first_tl_start`` = the bytes it still misses)."""
    return flit.first_tl_start == (-held) % TL_FLIT_BYTES


__all__ = ["Verdict", "classify", "implicit_seq", "next_seq", "phase_matches"]
