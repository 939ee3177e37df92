"""Seeded bugs that difftest must find within a fixed budget and shrink to a reproducer
naming the differing field (issue 14, "What must show")."""

from __future__ import annotations

import json
from typing import Any

import pytest

pytest.importorskip("hypothesis")

from ualink_ref.dl.crc import crc32
from ualink_ref.phy.flits import encode_flits
from ualink_ref.testing import vectors
from ualink_ref.testing.difftest import CODECS, difftest, replay, write_reproducer

BUDGET = 500  # cases per mutant; each is found well inside it (see the report of issue 14)
SEED = 14


def swapped_field_order(data: bytes) -> dict[str, Any]:
    """dl-header decoder reading the command header's ack_req_seq / flit_seq_lo swapped."""
    out: dict[str, Any] = CODECS["dl-header"].reference(data)
    if out["op"] in (2, 3):
        span = (int.from_bytes(data[:3], "big") >> 8) & 0xFFF  # the 12 bits of both fields
        out["flit_seq_lo"], out["ack_req_seq"] = span >> 9, span & 0x1FF  # wrong order
    return out


def crc_wrong_span(values: dict[str, Any]) -> bytes:
    """dl-encode computing the CRC over bytes 0..634 instead of 0..635."""
    flit = bytearray(CODECS["dl-encode"].reference(values))
    flit[636:] = crc32(bytes(flit[:635])).to_bytes(4, "big")
    return bytes(flit)


def reserved_ignored(data: bytes) -> dict[str, Any]:
    """dl-message decoder that ignores the reserved bits (clears them, decodes the rest)."""
    from ualink_ref.dl.messages import _KNOWN

    if len(data) == 4:
        word = int.from_bytes(data, "big")
        fmt = _KNOWN.get(((word >> 2) & 0xF, (word >> 6) & 0x7))  # (mclass, mtype)
        if fmt is not None and not word & 1:  # compressed words decode as unknown
            for pos in fmt.positions:
                if pos.field.reserved:
                    word &= ~(pos.field.max_value << pos.shift)
            data = word.to_bytes(4, "big")
    result: dict[str, Any] = CODECS["dl-message"].reference(data)
    return result


def uart_count_off_by_one(data: bytes) -> dict[str, Any]:
    """dl-message decoder whose UART length check allows count <= 3 (off by one)."""
    if len(data) == 4:
        word = int.from_bytes(data, "big")
        # UART data word: count[31:30] rsvd[29:25] data[24:9] mtype[8:6] mclass[5:2]
        # rsvd_c[1] compressed[0] (specs/dl.md)
        mclass, mtype, low = (word >> 2) & 0xF, (word >> 6) & 7, word & 3
        if (mclass, mtype, low) == (1, 0, 0) and word >> 30 == 3 and not (word >> 25) & 0x1F:
            return {"type": "UartData", "data": ((word >> 9) & 0xFFFF).to_bytes(2, "big").hex()}
    result: dict[str, Any] = CODECS["dl-message"].reference(data)
    return result


def fec_symbol_bit_order(data: bytes) -> bytes:
    """kp4 encoder that puts each 10-bit symbol on the wire MSB first instead of LSB first."""
    wire = encode_flits(data, "kp4", 1)
    bits = int.from_bytes(wire, "little")
    out = 0
    for s in range(len(wire) * 8 // 10):
        sym = (bits >> (10 * s)) & 0x3FF
        out |= int(f"{sym:010b}"[::-1], 2) << (10 * s)
    return out.to_bytes(len(wire), "little")


MUTANTS = [
    # (codec, implementation, a field name the shrunk reproducer must name)
    ("dl-header", swapped_field_order, "ack_req_seq"),
    ("dl-encode", crc_wrong_span, "crc"),
    ("dl-message", reserved_ignored, "rsvd"),
    ("dl-message", uart_count_off_by_one, "dl_msg_uart_data.count"),
    ("phy-kp4-encode", fec_symbol_bit_order, "symbol["),
]


@pytest.mark.parametrize(("codec", "impl", "field"), MUTANTS,
                         ids=[m[1].__name__ for m in MUTANTS])
def test_mutant_found_shrunk_and_reproducible(tmp_path, codec, impl, field) -> None:
    result = difftest(codec, impl, seed=SEED, max_cases=BUDGET)
    assert result.failure is not None, f"{impl.__name__} not found in {BUDGET} cases"
    assert result.coverage.cases <= BUDGET
    described = result.failure.describe()
    assert field in described, described
    # The reproducer names the field, replays the disagreement, and the model agrees with it.
    path = write_reproducer(tmp_path, codec, result.failure, SEED)
    doc = json.loads(path.read_text())
    names = " ".join(d["field"] + " " + str(d["model"])
                     for d in doc["cases"][0]["difftest"]["differences"])
    assert field in names
    [(case_id, diffs)] = replay(path, impl)
    assert diffs, f"{case_id}: replay against the mutant must disagree again"
    [(_, clean)] = replay(path, CODECS[codec].reference)
    assert clean == []
    if doc["format"] == vectors.VECTOR_FORMAT:  # a regression vector `vectors verify` accepts
        report = vectors.verify_dir(tmp_path)
        assert report.ok, [str(m) for m in report.mismatches]


def test_shrinking_gives_a_small_input() -> None:
    """The symbol bit-order bug needs one set bit: the shrunk flit has at most two."""
    result = difftest("phy-kp4-encode", fec_symbol_bit_order, seed=SEED, max_cases=BUDGET)
    assert result.failure is not None
    flit = bytes.fromhex(result.failure.request)
    assert sum(bin(b).count("1") for b in flit) <= 2
