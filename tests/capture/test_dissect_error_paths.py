"""`dissect` explains the TL error paths in words: split pieces, poisoned data, unanswered requests.

The expected words are written from the rules (``specs/tl.md`` S1-S7, P1-P2) and from
the committed scenarios' own descriptions (which tag the target drops), not from the
dissector's output.
"""

from __future__ import annotations

from pathlib import Path

from ualink_ref.capture.dissect import dissect_records
from ualink_ref.capture.dissect_tl import TLOp
from ualink_ref.capture.format import read_capture
from ualink_ref.capture.listing import Summary
from ualink_ref.tl import codec as C
from ualink_ref.tl.upli import AtomicOp, Command, Status

CAPTURES = Path(__file__).resolve().parents[2] / "vectors" / "captures"


def _response(offset: int, length: int, last: int, status: int = Status.OKAY) -> TLOp:
    field = C.Response(vchan=0, tag=9, pool=0, len=length, offset=offset, status=status,
                       rd_wr=0, last=last, src_acc=2, dst_acc=1)
    return TLOp("response", "Response", 9, field)


def _request(cmd: int, attr: int, words: int, name: str) -> TLOp:
    field = C.Request(cmd=cmd, vchan=0, asi=0, tag=4, pool=0, attr=attr, len=words - 1,
                      metadata=0, addr=0x1000, src_acc=1, dst_acc=2, cload=0, cway=0,
                      numbeats=(4 * words + 63) // 64 - 1)  # 64-byte beats carried, minus one
    return TLOp("request", name, 4, field)


def test_a_split_piece_names_its_beats_and_whether_more_follow() -> None:
    assert _response(1, 0, 0).describe() == "Response tag=9 OKAY beats 1-1 of a split, more to come"
    assert _response(2, 1, 1).describe() == "Response tag=9 OKAY beats 2-3 of a split, last piece"
    assert _response(0, 3, 1).describe() == "Response tag=9 OKAY"  # a whole answer is no piece


def test_poisoned_write_beats_and_atomic_operand_are_named() -> None:
    write = _request(Command.WRITE_FULL, 0b0010, 32, "WriteFull")
    assert write.describe() == "WriteFull tag=4 addr=0x1000 128B poisoned beats 0x2"
    add = _request(Command.ATOMIC_R, AtomicOp.ADD << 4 | 1, 2, "AtomicR")
    assert add.describe() == "AtomicR tag=4 addr=0x1000 op=ADD 8B poisoned operand"
    clean = _request(Command.ATOMIC_R, AtomicOp.SWAP << 4, 2, "AtomicR")
    assert clean.describe() == "AtomicR tag=4 addr=0x1000 op=SWAP 8B"


def _summary(name: str) -> str:
    summary = Summary()
    for flit in dissect_records(read_capture(CAPTURES / name)):
        summary.add(flit)
    return summary.render()


def test_timeout_capture_names_the_request_the_target_never_answered() -> None:
    # the scenario: fault plan "stop-tag 1", A reads 64 B at 0x1000 + 64 * tag, so the
    # Read with wire tag 1 (0x1040) is the one that never gets an answer
    text = _summary("timeout.pcap")
    line = next(x for x in text.splitlines() if "without a final response" in x)
    assert line.endswith(": 1: A>B Read tag=1 addr=0x1040 64B")


def test_split_and_poison_captures_count_pieces_and_poisoned_writes() -> None:
    split = _summary("split.pcap")
    assert "split responses:" in split and "without a final response" not in split
    poison = _summary("poison.pcap")
    assert "poisoned data sent: 1 write(s) with poisoned beats" in poison
    assert "DATA_ERROR" in poison  # the poisoned beat of the read comes back as DATA_ERROR


def test_answered_captures_have_no_error_path_lines() -> None:
    for name in ("clean.pcap", "replay.pcap", "credits.pcap", "atomics.pcap"):
        text = _summary(name)
        assert "split responses" not in text and "without a final response" not in text, name


def test_poison_bits_beyond_the_beats_carried_are_not_reported() -> None:
    # a 1-beat WriteFull with attr bit 3 set: the target poisons nothing (P1 reads the
    # mask over the beats carried), so the listing must not say "poisoned"
    one_beat = _request(Command.WRITE_FULL, 0b1000, 16, "WriteFull")
    assert one_beat.poisoned_beats == 0 and "poisoned" not in one_beat.describe()
