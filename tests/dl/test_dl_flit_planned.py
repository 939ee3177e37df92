"""The DL flit codec's planned hot path agrees with the checked path, bit for bit.

``DLFlit.encode`` and ``DLFlit.decode`` run from per-header-combination plans
(``ualink_ref.dl.flit``, "planned codec"); ``encode_checked`` and ``_parse`` are
the long way through the declarations. Here both are run on valid flits and on
mutated ones: the planned parser must accept exactly the flits the checked one
accepts, with equal values, and leave every fault to it (so errors are its).
"""

from __future__ import annotations

import zlib

from hypothesis import given
from hypothesis import strategies as st

from ualink_ref.dl import DLFlit, FlitOp
from ualink_ref.dl.flit import (
    FLIT_BYTES,
    SEGMENT_OFFSETS,
    _parse,
    _parse_planned,
    encode_fields,
)
from ualink_ref.errors import DecodeError
from ualink_ref.testing.strategies import dl_flits

_HEADER_BYTES = [0, 1, 2] + [hdr for hdr, _body in SEGMENT_OFFSETS]


def _with_crc(body: bytes) -> bytes:
    return body + zlib.crc32(body).to_bytes(4, "big")


def _checked(data: bytes) -> DLFlit | str:
    try:
        return _parse(data)
    except DecodeError as exc:
        return f"{type(exc).__name__}: {exc}"


def _agree(data: bytes) -> None:
    planned = _parse_planned(data)
    checked = _checked(data)
    if planned is None:
        assert isinstance(checked, str), "the planned parser refused a valid flit"
        assert _checked(data) == checked
    else:
        assert planned == checked
        assert type(planned.op) is FlitOp and type(planned.tl) is bytes
    # The public decoder is the two in turn: its answer is the checked one.
    try:
        got: DLFlit | str = DLFlit.decode(data)
    except DecodeError as exc:
        got = f"{type(exc).__name__}: {exc}"
    assert got == checked


@given(dl_flits())
def test_encode_equals_the_declaration_path(flit: DLFlit) -> None:
    planned = flit.encode()
    assert planned == flit.encode_checked()
    assert planned == encode_fields(flit.op, flit.flit_seq, flit.ack_req_seq, flit.flit_seq_lo,
                                    flit.tl, flit.first_tl_start, tuple(flit.messages))


@given(dl_flits())
def test_valid_flits_parse_the_same(flit: DLFlit) -> None:
    data = flit.encode_checked()
    _agree(data)
    assert _parse_planned(data) == flit


@given(dl_flits(), st.data())
def test_mutated_flits_parse_the_same(flit: DLFlit, data: st.DataObject) -> None:
    raw = bytearray(flit.encode_checked()[:636])
    # Flip bits where the structure lives (headers) and anywhere (fill, words, TL bytes).
    for _ in range(data.draw(st.integers(1, 4))):
        at = data.draw(st.sampled_from(_HEADER_BYTES) | st.integers(0, 635))
        raw[at] ^= 1 << data.draw(st.integers(0, 7))
    _agree(_with_crc(bytes(raw)))


@given(st.binary(min_size=FLIT_BYTES - 4, max_size=FLIT_BYTES - 4))
def test_arbitrary_bytes_parse_the_same(body: bytes) -> None:
    _agree(_with_crc(body))


@given(st.lists(st.integers(0, 255), min_size=5, max_size=5), st.integers(0, (1 << 24) - 1))
def test_any_headers_parse_the_same(segment_headers: list[int], header: int) -> None:
    """Every segment-header and flit-header combination, on zero words and fill."""
    raw = bytearray(FLIT_BYTES - 4)
    raw[0:3] = header.to_bytes(3, "big")
    for (hdr, _body), byte in zip(SEGMENT_OFFSETS, segment_headers, strict=True):
        raw[hdr] = byte
    _agree(_with_crc(bytes(raw)))


def test_header_corner_cases_parse_the_same() -> None:
    """Every op and payload bit, on a flit with and without TL bytes: the header rules
    (payload bit against the segments, sequence fields by op) decide alike."""
    bodies = [DLFlit(FlitOp.ACK, ack_req_seq=3).encode_checked()[:636],
              DLFlit(FlitOp.EXPLICIT, flit_seq=9, tl=bytes(range(64))).encode_checked()[:636]]
    for body in bodies:
        for op in range(8):
            for payload in (0, 1):
                for seq_bits in (0, 1, 7, 0x1FF, 0xFFF):
                    word = op << 21 | payload << 20 | seq_bits << 8
                    _agree(_with_crc(word.to_bytes(3, "big") + body[3:]))
