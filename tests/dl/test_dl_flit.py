"""DLFlit codec: round trips, canonical decoding, and only DecodeError on bad input."""

from __future__ import annotations

import contextlib
import zlib

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ualink_ref.dl import DLFlit, FlitOp
from ualink_ref.dl.flit import (
    FLIT_BYTES,
    PAYLOAD_BYTES,
    SEGMENT_LENGTHS,
    SEGMENT_OFFSETS,
)
from ualink_ref.errors import CrcError, DecodeError, EncodeError, TruncatedError
from ualink_ref.testing.strategies import dl_flits


def _with_crc(body: bytes) -> bytes:
    return body + zlib.crc32(body).to_bytes(4, "big")


def test_layout_sizes_are_the_public_ones() -> None:
    assert FLIT_BYTES == 640 and PAYLOAD_BYTES == 628
    assert SEGMENT_LENGTHS == (128, 128, 128, 124, 120)
    assert SEGMENT_OFFSETS == ((3, 4), (132, 133), (261, 262), (390, 391), (515, 516))


@given(dl_flits())
def test_round_trip(flit: DLFlit) -> None:
    data = flit.encode()
    assert len(data) == FLIT_BYTES
    assert DLFlit.decode(data) == flit


@given(dl_flits(payload=True))
def test_tl_flit_starts_found_without_earlier_state(flit: DLFlit) -> None:
    # Only the encoded flit is used: the starts must be exactly the TL-flit boundaries
    # first_tl_start + 64k inside the TL bytes, and hold those bytes.
    data = flit.encode()
    starts = DLFlit.decode(data).tl_flit_starts()
    boundaries = list(range(flit.first_tl_start, len(flit.tl), 64))
    assert len(starts) == len(boundaries)
    for pos, b in zip(starts, boundaries, strict=True):
        assert data[pos:pos + 4] == flit.tl[b:b + 4]


@given(st.binary(min_size=0, max_size=700))
def test_arbitrary_bytes_raise_only_decode_errors(data: bytes) -> None:
    with contextlib.suppress(DecodeError):  # anything else escapes and fails the test
        DLFlit.decode(data)


@given(st.binary(min_size=636, max_size=636))
def test_arbitrary_bytes_with_good_crc_decode_canonically_or_raise(body: bytes) -> None:
    data = _with_crc(body)
    try:
        flit = DLFlit.decode(data)
    except DecodeError as exc:
        assert not isinstance(exc, CrcError)
        return
    assert flit.encode() == data


@given(dl_flits(), st.integers(0, 635), st.integers(1, 255))
def test_mutated_flit_with_fixed_crc_is_rejected_or_canonical(
    flit: DLFlit, pos: int, xor: int
) -> None:
    data = bytearray(flit.encode()[:636])
    data[pos] ^= xor
    mutated = _with_crc(bytes(data))
    try:
        decoded = DLFlit.decode(mutated)
    except DecodeError:
        return
    assert decoded.encode() == mutated  # decoding is injective: no two encodings of one flit


@pytest.mark.parametrize("bad", [b"", bytes(639), bytes(641), "x" * 640, None])
def test_wrong_length_or_type_is_truncated_error(bad: object) -> None:
    with pytest.raises(TruncatedError):
        DLFlit.decode(bad)  # type: ignore[arg-type]


def test_bad_crc_names_both_values() -> None:
    data = bytearray(DLFlit(FlitOp.ACK, ack_req_seq=3).encode())
    data[10] ^= 0x40
    with pytest.raises(CrcError) as info:
        DLFlit.decode(bytes(data))
    assert info.value.expected == int.from_bytes(data[636:], "big")
    assert info.value.actual == zlib.crc32(bytes(data[:636]))


@pytest.mark.parametrize(
    "kwargs",
    [
        {"op": FlitOp.EXPLICIT, "flit_seq": 0, "tl": bytes(628)},  # data without a number
        {"op": FlitOp.EXPLICIT, "flit_seq": 5},  # a number without data
        {"op": FlitOp.EXPLICIT, "flit_seq": 512, "tl": bytes(628)},
        {"op": FlitOp.REPLAY},  # a replay carries data
        {"op": FlitOp.REPLAY_REQUEST, "ack_req_seq": 0},
        {"op": FlitOp.ACK, "flit_seq_lo": 3},  # seq_lo without payload
        {"op": FlitOp.ACK, "flit_seq": 3},
        {"op": FlitOp.EXPLICIT, "flit_seq": 1, "tl": bytes(629)},  # over capacity
        {"op": FlitOp.EXPLICIT, "flit_seq": 1, "tl": bytes(100)},  # fill not at a boundary
        {"op": FlitOp.EXPLICIT, "flit_seq": 1, "tl": bytes(628), "first_tl_start": 2},
        {"op": FlitOp.EXPLICIT, "flit_seq": 1, "tl": bytes(628), "first_tl_start": 64},
        {"op": FlitOp.ACK, "first_tl_start": 4},
        {"op": FlitOp.ACK, "messages": (None,) * 4},
        {"op": FlitOp.ACK, "messages": (1 << 32, None, None, None, None)},
        {"op": 7},
        {"op": "ack"},
        {"op": FlitOp.ACK, "tl": "text"},
        {"op": FlitOp.ACK, "messages": 5},
        {"op": FlitOp.EXPLICIT, "flit_seq": 1, "tl": bytes(628), "first_tl_start": "0"},
        {"op": FlitOp.ACK, "ack_req_seq": True},
    ],
)
def test_invalid_values_raise_encode_error(kwargs: dict[str, object]) -> None:
    with pytest.raises(EncodeError):
        DLFlit(**kwargs)  # type: ignore[arg-type]


def test_partial_flit_is_followed_by_zero_fill() -> None:
    flit = DLFlit(FlitOp.EXPLICIT, flit_seq=1, tl=b"\xff" * 128)
    data = flit.encode()
    assert data[4:132] == b"\xff" * 128 and data[3] == 0b10_0_0000_0  # two TL flits start
    assert data[132] == 0 and set(data[133:636]) == {0}
