"""The DL receiver's verdict functions, checked by hand against rules 2 and 4."""

from __future__ import annotations

import pytest

from ualink_ref.dl import DLFlit, FlitOp
from ualink_ref.dl.verdict import Verdict, classify, implicit_seq, next_seq, phase_matches
from ualink_ref.errors import SequenceError

TL = bytes(64)


def test_explicit_flits_accept_duplicate_gap() -> None:
    flit = DLFlit(FlitOp.EXPLICIT, flit_seq=5, tl=TL)
    assert classify(flit, 5) == (Verdict.ACCEPT, 5)
    assert classify(flit, 6) == (Verdict.DUPLICATE, 5)  # behind: already received
    assert classify(flit, 4) == (Verdict.GAP, 5)  # ahead: 4 was lost
    # (seq - expected) mod 511 >= 256 is behind: 255 behind is a duplicate, 256 behind
    # already reads as ahead (a gap); 255 ahead is a gap (worked by hand)
    assert classify(DLFlit(FlitOp.EXPLICIT, flit_seq=2, tl=TL), 257)[0] is Verdict.DUPLICATE
    assert classify(DLFlit(FlitOp.EXPLICIT, flit_seq=1, tl=TL), 257)[0] is Verdict.GAP
    assert classify(DLFlit(FlitOp.EXPLICIT, flit_seq=511, tl=TL), 256)[0] is Verdict.GAP


def test_implicit_flits_use_the_low_bits() -> None:
    flit = DLFlit(FlitOp.ACK, ack_req_seq=3, flit_seq_lo=13 & 7, tl=TL)
    assert classify(flit, 13) == (Verdict.ACCEPT, 13)
    assert classify(flit, 12) == (Verdict.GAP, None)
    assert implicit_seq(12, 13 & 7) == 13
    assert implicit_seq(510, 1) == 1  # 511 wraps to 1: low bits 001
    assert next_seq(511) == 1


def test_phase_and_bad_sequence_numbers() -> None:
    assert phase_matches(DLFlit(FlitOp.EXPLICIT, flit_seq=1, tl=TL), 0)
    flit = DLFlit(FlitOp.EXPLICIT, flit_seq=1, tl=bytes(20) + TL, first_tl_start=20)
    assert phase_matches(flit, 44) and not phase_matches(flit, 0)
    with pytest.raises(SequenceError):
        classify(flit, 0)
    with pytest.raises(SequenceError):
        implicit_seq(512, 1)
    with pytest.raises(SequenceError):
        implicit_seq(5, 8)
