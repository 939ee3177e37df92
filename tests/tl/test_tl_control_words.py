"""``codec.control_words``: the walk of ``decode_control_half`` without typed values."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from ualink_ref.errors import DecodeError
from ualink_ref.testing.strategies import tl_stream_halves
from ualink_ref.tl import codec as C


def _typed(half: bytes) -> object:
    try:
        return [C.FTYPE_OF[type(v)] for _, v in C.decode_control_half(half)], [
            v for _, v in C.decode_control_half(half)]
    except DecodeError as exc:
        return type(exc), str(exc)


def _words(half: bytes) -> object:
    try:
        found = C.control_words(half)
    except DecodeError as exc:
        return type(exc), str(exc)
    return [ft for ft, _ in found], [C.unpack_word(ft, bits) for ft, bits in found]


@given(st.one_of(tl_stream_halves(), st.binary(min_size=0, max_size=40)))
def test_control_words_walk_as_decode_control_half(half: bytes) -> None:
    # Same fields in the same order (typed by unpack_word), or the same error.
    assert _words(half) == _typed(half)


def test_control_words_of_a_known_half() -> None:
    fc = C.pack_field(C.FlowControl(req_cmd=5))
    rsp = C.pack_field(C.CompressedResponseNoData(vchan=1, tag=7, pool=0, len=0))
    half = fc + rsp + bytes(32 - len(fc) - len(rsp))
    assert C.control_words(half) == [(0, int.from_bytes(fc, "big")),
                                     (5, int.from_bytes(rsp, "big"))]
    assert C.control_words(bytes(32)) == []
