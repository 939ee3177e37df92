"""Fast packing and unpacking of TL control fields for the engine's hot path.

The readable codec is :mod:`.fields` (``BitFormat.pack`` / ``unpack``, dicts).
The engine needs the same bits with fewer allocations, so these functions use
plain shifts and masks — every one of them read at import time from the one
:class:`~ualink_ref.bitfields.BitFormat` declaration of its layout, so no
layout is typed twice. Tests check both paths agree bit for bit.
"""

from __future__ import annotations

from ualink_ref.bitfields import BitFormat
from ualink_ref.tl import fields as F

POOL_SOURCE = 4  # index of the shared pool (same as credits.POOL)


def _sm(fmt: BitFormat, *names: str) -> list[int]:
    """Shift then mask of each named field, flattened."""
    out: list[int] = []
    for name in names:
        out += [fmt.position(name).shift, fmt.field(name).max_value]
    return out


(RQ_FT, _, RQ_CMD, M_CMD, RQ_VC, M_VC, RQ_ASI, M_ASI, RQ_TAG, M_TAG, RQ_POOL, M_POOL,
 RQ_ATTR, M_ATTR, RQ_LEN, M_RQLEN, RQ_META, M_META, RQ_ADDR, M_ADDR, RQ_SRC, M_ACC,
 RQ_DST, _, RQ_CLOAD, _, RQ_CWAY, M_CWAY, RQ_BEATS, M_BEATS) = _sm(
    F.REQUEST, "ftype", "cmd", "vchan", "asi", "tag", "pool", "attr", "len", "metadata", "addr",
    "src_acc", "dst_acc", "cload", "cway", "numbeats")
(CQ_FT, _, CQ_CMD, _, CQ_VC, _, CQ_TAG, _, CQ_POOL, _, CQ_ATTR, _, CQ_LEN, _, CQ_CWAY, _,
 CQ_BEATS, _, CQ_ADDR, M_ADDR_LO) = _sm(
    F.COMPRESSED_REQUEST, "ftype", "cmd", "vchan", "tag", "pool", "attr", "len", "cway",
    "numbeats", "addr_lo")
(RS_FT, _, RS_VC, _, RS_TAG, _, RS_POOL, _, RS_LEN, M_RSLEN, RS_OFF, M_OFF, RS_STATUS, M_STATUS,
 RS_RDWR, _, RS_LAST, _, RS_SRC, _, RS_DST, _, RS_SPARE, M_RS_SPARE) = _sm(
    F.RESPONSE, "ftype", "vchan", "tag", "pool", "len", "offset", "status", "rd_wr", "last",
    "src_acc", "dst_acc", "spare")
(CS_FT, _, CS_VC, _, CS_TAG, _, CS_POOL, _, CS_LEN, _, CS_OFF, _, CS_LAST, _, CS_SPARE,
 M_CS_SPARE) = _sm(
    F.COMPRESSED_RESPONSE_DATA, "ftype", "vchan", "tag", "pool", "len", "offset", "last", "spare")
_CREDIT_NAMES = ("req_cmd", "rsp_cmd", "req_data", "rsp_data")
FC_SM = tuple(zip(*[iter(_sm(F.FLOW_CONTROL, *_CREDIT_NAMES))] * 2, strict=True))
VF_SM = tuple(zip(*[iter(_sm(F.VC_FLOW_CONTROL, *_CREDIT_NAMES))] * 2, strict=True))
VF_VC, _ = _sm(F.VC_FLOW_CONTROL, "vchan")
FT_SHIFT = 28  # FTYPE is the top 4 bits of a field's first sector (every layout)
#: Address bits carried by a compressed request (bits 23..0; 1..0 are zero).
ADDR_LO_BITS = F.COMPRESSED_REQUEST.field("addr_lo").width + 2
_ADDR_LO_MASK = (1 << ADDR_LO_BITS) - 1

assert all(fmt.position("ftype").shift == fmt.bit_length - 4 for fmt in F.ALL_FORMATS)


def pack_request(
    cmd: int, vc: int, asi: int, tag: int, pool: int, attr: int, len_field: int, metadata: int,
    addr: int, src: int, dst: int, cload: int, cway: int, numbeats: int,
) -> bytes:
    """An uncompressed request (16 bytes); ``addr`` is the byte address."""
    return (
        1 << RQ_FT | cmd << RQ_CMD | vc << RQ_VC | asi << RQ_ASI | tag << RQ_TAG
        | pool << RQ_POOL | attr << RQ_ATTR | len_field << RQ_LEN | metadata << RQ_META
        | (addr >> 2) << RQ_ADDR | src << RQ_SRC | dst << RQ_DST | cload << RQ_CLOAD
        | cway << RQ_CWAY | numbeats << RQ_BEATS
    ).to_bytes(16, "big")


def unpack_request(word: int) -> tuple[int, ...]:
    """``(cmd, vc, asi, tag, pool, attr, len, metadata, addr, src, dst, cload, cway, beats)``."""
    return (
        word >> RQ_CMD & M_CMD, word >> RQ_VC & M_VC, word >> RQ_ASI & M_ASI,
        word >> RQ_TAG & M_TAG, word >> RQ_POOL & M_POOL, word >> RQ_ATTR & M_ATTR,
        word >> RQ_LEN & M_RQLEN, word >> RQ_META & M_META, (word >> RQ_ADDR & M_ADDR) << 2,
        word >> RQ_SRC & M_ACC, word >> RQ_DST & M_ACC, word >> RQ_CLOAD & 1,
        word >> RQ_CWAY & M_CWAY, word >> RQ_BEATS & M_BEATS,
    )


def pack_compressed_request(
    cmd: int, vc: int, tag: int, pool: int, attr: int, len_field: int, cway: int,
    numbeats: int, addr: int,
) -> bytes:
    """A compressed request (8 bytes); only ``addr`` bits 23..2 are carried."""
    return (
        3 << CQ_FT | cmd << CQ_CMD | vc << CQ_VC | tag << CQ_TAG | pool << CQ_POOL
        | attr << CQ_ATTR | len_field << CQ_LEN | cway << CQ_CWAY | numbeats << CQ_BEATS
        | ((addr & _ADDR_LO_MASK) >> 2) << CQ_ADDR
    ).to_bytes(8, "big")


def unpack_compressed_request(word: int) -> tuple[int, ...]:
    """``(cmd, vc, tag, pool, attr, len, cway, beats, addr bits 23..0)``."""
    return (
        word >> CQ_CMD & M_CMD, word >> CQ_VC & M_VC, word >> CQ_TAG & M_TAG,
        word >> CQ_POOL & M_POOL, word >> CQ_ATTR & M_ATTR, word >> CQ_LEN & M_RQLEN,
        word >> CQ_CWAY & M_CWAY, word >> CQ_BEATS & M_BEATS,
        (word >> CQ_ADDR & M_ADDR_LO) << 2,
    )


def pack_response(
    vc: int, tag: int, pool: int, len_field: int, status: int, rd_wr: int, src: int, dst: int
) -> bytes:
    """An uncompressed, single, final response (8 bytes; offset 0, last 1)."""
    return (
        2 << RS_FT | vc << RS_VC | tag << RS_TAG | pool << RS_POOL | len_field << RS_LEN
        | status << RS_STATUS | rd_wr << RS_RDWR | 1 << RS_LAST | src << RS_SRC | dst << RS_DST
    ).to_bytes(8, "big")


def unpack_response(word: int) -> tuple[int, ...]:
    """``(vc, tag, pool, len, offset, status, rd_wr, last, src, dst, spare)``."""
    return (
        word >> RS_VC & M_VC, word >> RS_TAG & M_TAG, word >> RS_POOL & M_POOL,
        word >> RS_LEN & M_RSLEN, word >> RS_OFF & M_OFF, word >> RS_STATUS & M_STATUS,
        word >> RS_RDWR & 1, word >> RS_LAST & 1, word >> RS_SRC & M_ACC,
        word >> RS_DST & M_ACC, word >> RS_SPARE & M_RS_SPARE,
    )


def pack_compressed_response(
    with_data: bool, vc: int, tag: int, pool: int, len_field: int
) -> bytes:
    """A compressed, single, final OKAY response (4 bytes); FTYPE 4 with data, 5 without."""
    return (
        (4 if with_data else 5) << CS_FT | vc << CS_VC | tag << CS_TAG | pool << CS_POOL
        | len_field << CS_LEN | 1 << CS_LAST
    ).to_bytes(4, "big")


def unpack_compressed_response(word: int) -> tuple[int, ...]:
    """``(ftype, vc, tag, pool, len, offset, last, spare)``."""
    return (
        word >> CS_FT, word >> CS_VC & M_VC, word >> CS_TAG & M_TAG, word >> CS_POOL & M_POOL,
        word >> CS_LEN & M_RSLEN, word >> CS_OFF & M_OFF, word >> CS_LAST & 1,
        word >> CS_SPARE & M_CS_SPARE,
    )


def pack_flow_control(source: int, counts: tuple[int, int, int, int]) -> bytes:
    """A credit return: FTYPE 0 for the pool (``source`` 4), FTYPE 6 for VC ``source``."""
    if source == POOL_SOURCE:
        word = 0
        for (shift, _mask), count in zip(FC_SM, counts, strict=True):
            word |= count << shift
    else:
        word = 6 << FT_SHIFT | source << VF_VC
        for (shift, _mask), count in zip(VF_SM, counts, strict=True):
            word |= count << shift
    return word.to_bytes(4, "big")


def unpack_flow_control(word: int) -> tuple[int, tuple[int, ...]]:
    """``(source, (req_cmd, rsp_cmd, req_data, rsp_data))`` of an FTYPE 0 or 6 sector."""
    if word >> FT_SHIFT == 0:
        return POOL_SOURCE, tuple(word >> s & m for s, m in FC_SM)
    return word >> VF_VC & M_VC, tuple(word >> s & m for s, m in VF_SM)


__all__ = [
    "ADDR_LO_BITS",
    "pack_compressed_request",
    "pack_compressed_response",
    "pack_flow_control",
    "pack_request",
    "pack_response",
    "unpack_compressed_request",
    "unpack_compressed_response",
    "unpack_flow_control",
    "unpack_request",
    "unpack_response",
]
