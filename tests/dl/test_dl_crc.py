"""The flit CRC: IEEE 802.3 CRC-32 (zlib as oracle); every 1-, 2-, 3-bit error is caught.

1-bit errors are checked exhaustively through ``DLFlit.decode``. For 2- and
3-bit errors the check is exhaustive by linearity: for a fixed length, the
CRC of ``data ^ e`` is ``crc(data) ^ L(e)`` with ``L`` linear over GF(2), so
an error pattern escapes detection exactly when the XOR of its bits'
syndromes is zero. The 5120 single-bit syndromes are computed with
``zlib.crc32`` (independent of the model); no two are equal (all 2-bit
errors caught) and no XOR of two equals a third (all 3-bit errors caught).
Hypothesis samples 2- and 3-bit errors through the real decoder as well.
"""

from __future__ import annotations

import zlib

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from ualink_ref.dl import DLFlit, FlitOp
from ualink_ref.dl.crc import crc32, crc32_bytes
from ualink_ref.errors import CrcError
from ualink_ref.net.channels import flip_bits

FLIT = DLFlit(FlitOp.EXPLICIT, flit_seq=77, tl=bytes(range(256)) * 2 + bytes(112),
              messages=(0x11223344, None, None, None, None)).encode()
BITS = 640 * 8


def test_known_answer() -> None:
    # CRC-32 check value for ASCII "123456789" (the catalogued IEEE 802.3 CRC-32 check value)
    assert crc32(b"123456789") == 0xCBF43926
    assert crc32_bytes(b"123456789") == bytes.fromhex("cbf43926")


@given(st.binary(max_size=1000))
def test_crc_equals_zlib(data: bytes) -> None:
    assert crc32(data) == zlib.crc32(data)


def test_flit_stores_zlib_crc_big_endian() -> None:
    assert FLIT[636:] == zlib.crc32(FLIT[:636]).to_bytes(4, "big")


def test_every_single_bit_error_is_caught_by_decode() -> None:
    for bit in range(BITS):
        bad = flip_bits(FLIT, [bit])
        assert zlib.crc32(bad[:636]) != int.from_bytes(bad[636:], "big"), bit
        try:
            DLFlit.decode(bad)
        except CrcError:
            continue
        raise AssertionError(f"bit {bit} flip not detected")


def _syndromes() -> np.ndarray:
    """Per-bit syndrome: zlib CRC of the received body XOR the received CRC field (0 = ok)."""
    out = np.empty(BITS, dtype=np.uint32)
    for bit in range(BITS):
        out[bit] = _syndrome(flip_bits(FLIT, [bit]))
    return out


def _syndrome(flit: bytes) -> int:
    return zlib.crc32(flit[:636]) ^ int.from_bytes(flit[636:], "big")


def test_every_two_and_three_bit_error_is_caught_exhaustively() -> None:
    syn = _syndromes()
    assert np.all(syn != 0)  # 1-bit
    assert len(np.unique(syn)) == BITS  # 2-bit: syn[i] ^ syn[j] != 0 for all i != j
    ordered = np.sort(syn)
    for i in range(BITS - 1):  # 3-bit: syn[i] ^ syn[j] never equals a third syndrome
        pair = syn[i] ^ syn[i + 1:]
        hit = np.searchsorted(ordered, pair)
        hit[hit == BITS] = 0
        assert not np.any(ordered[hit] == pair), f"3-bit pattern with bit {i} undetected"


def test_syndrome_linearity_holds_on_samples() -> None:
    syn = _syndromes()
    assert _syndrome(FLIT) == 0
    for bits in ([0, 1], [5, 700, 5119], [100, 2000, 4000], [5080, 5090, 5100]):
        actual = _syndrome(flip_bits(FLIT, bits))
        expected = 0
        for b in bits:
            expected ^= int(syn[b])
        assert actual == expected


@given(st.lists(st.integers(0, BITS - 1), min_size=2, max_size=3, unique=True))
def test_sampled_multi_bit_errors_are_caught_by_decode(bits: list[int]) -> None:
    bad = flip_bits(FLIT, bits)
    assert zlib.crc32(bad[:636]) != int.from_bytes(bad[636:], "big")
    try:
        DLFlit.decode(bad)
    except CrcError:
        return
    raise AssertionError(f"bits {bits} not detected")
