"""TL and endpoint entry points (``specs/tl.md`` rule 6): any input of any type raises
only ``UALinkError`` — wrong-length bytes, ``str``, ``None``, numbers, lists, arrays of
the wrong dtype or shape."""

from __future__ import annotations

import contextlib
from collections.abc import Callable

import numpy as np
import pytest

from ualink_ref.errors import UALinkError
from ualink_ref.node.config import EndpointConfig
from ualink_ref.node.endpoint import Endpoint
from ualink_ref.tl import TransactionLayer, codec, dissect, fields, flit
from ualink_ref.tl.framing import TLDeframer


def _inputs(n: int) -> list[object]:
    return [None, "a" * n, 3.5, 7, [0] * n, np.zeros(n, np.int64), np.zeros((2, n // 2), np.uint8),
            np.zeros(n, np.float32), memoryview(np.zeros(n, np.int32)), b"\x00" * (n + 1), b"",
            bytearray(n - 1), object()]


ENTRY_POINTS: dict[str, tuple[Callable[[object], object], int]] = {
    "fields.decode_field": (fields.decode_field, 4),  # type: ignore[dict-item]
    "fields.field_sectors": (fields.field_sectors, 4),  # type: ignore[dict-item]
    "codec.unpack_field": (codec.unpack_field, 4),  # type: ignore[dict-item]
    "codec.decode_control_half": (codec.decode_control_half, 32),  # type: ignore[dict-item]
    "codec.control_words": (codec.control_words, 32),  # type: ignore[dict-item]
    "flit.decode_control_half": (flit.decode_control_half, 32),  # type: ignore[dict-item]
    "dissect": (dissect, 64),  # type: ignore[dict-item]
    "TLDeframer.feed_half": (lambda x: TLDeframer().feed_half(x), 32),  # type: ignore[arg-type]
    "TransactionLayer.receive": (lambda x: TransactionLayer(1).receive(x), 64),  # type: ignore[arg-type]
    "Endpoint.receive none": (  # type: ignore[arg-type]
        lambda x: Endpoint(1, config=EndpointConfig.with_fec("none")).receive(x, 0), 640),
    "Endpoint.receive kp4": (lambda x: Endpoint(1).receive(x, 0), 680),  # type: ignore[arg-type]
}


@pytest.mark.parametrize("name", sorted(ENTRY_POINTS))
def test_entry_point_raises_only_ualink_errors(name: str) -> None:
    call, size = ENTRY_POINTS[name]
    for value in _inputs(size):
        with contextlib.suppress(UALinkError):
            call(value)
        # Anything else propagates and fails the test, naming the input.


def test_byte_buffers_are_taken_by_their_bytes() -> None:
    tl = TransactionLayer(1)
    assert tl.receive(np.zeros(64, np.uint8)) == []
    assert tl.receive(memoryview(bytearray(64))) == []
    with pytest.raises(UALinkError):
        tl.receive(memoryview(np.zeros(16, np.int32)))  # 64 bytes, but not a byte string
    assert tl.counters.flits_received == 2
