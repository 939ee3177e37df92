"""CRC-32 of the DL flit.

The UALink 200G 1.0 DL flit ends in a 4-byte CRC whose polynomial is not
public. We use the IEEE 802.3 CRC-32 (polynomial 0x04C11DB7, reflected,
initial value and final XOR 0xFFFFFFFF — the Ethernet FCS of IEEE 802.3
clause 3.2.9), computed with ``crcmod`` and stored big-endian. Because it is
the same function as ``zlib.crc32``, tests use zlib as an independent oracle.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache

from ualink_ref.errors import EncodeError

#: Bytes-like types as a tuple: ``isinstance(x, a | b)`` builds a union object per call.
_BYTES_LIKE = (bytes, bytearray, memoryview)

#: Bytes of the flit covered by the CRC (0..635).
CRC_COVERAGE = 636
#: Width of the CRC field in bytes (636..639).
CRC_BYTES = 4


@cache
def _crc_fun() -> Callable[[bytes], int]:
    # Imported lazily: crcmod builds its table on first use, and `import
    # ualink_ref.dl` should not pay for it.
    import crcmod.predefined

    fun: Callable[[bytes], int] = crcmod.predefined.mkCrcFun("crc-32")
    return fun


def crc32(data: bytes | bytearray | memoryview) -> int:
    """IEEE 802.3 CRC-32 of ``data`` (equal to ``zlib.crc32(data)``); bytes-like only."""
    if not isinstance(data, _BYTES_LIKE):
        # bytes(5) would be five zero bytes and bytes(None) a TypeError: refuse both
        raise EncodeError(f"CRC-32 input must be bytes, got {type(data).__name__}")
    return _crc_fun()(bytes(data))


def crc32_bytes(data: bytes | bytearray | memoryview) -> bytes:
    """The CRC-32 of ``data`` as the 4 big-endian bytes stored in a flit."""
    return crc32(data).to_bytes(CRC_BYTES, "big")


__all__ = ["CRC_BYTES", "CRC_COVERAGE", "crc32", "crc32_bytes"]
