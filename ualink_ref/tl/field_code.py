"""Encode and unpack functions of each TL control field layout: GENERATED, do not edit.

Written by ``python -m ualink_ref.tl.field_code_gen`` from :mod:`ualink_ref.tl.fields`;
its module docstring says what each function does.
"""

from __future__ import annotations

from collections.abc import Callable

from ualink_ref.tl.fields import misfit


def encode_flow_control(
    *,
    req_cmd: int = 0,
    rsp_cmd: int = 0,
    req_data: int = 0,
    rsp_data: int = 0,
) -> bytes:
    """tl_flow_control (FTYPE 0, 4 bytes) from its field values."""
    try:
        if (
            0 <= req_cmd <= 0x3f
            and 0 <= rsp_cmd <= 0x3f
            and 0 <= req_data <= 0xff
            and 0 <= rsp_data <= 0xff
        ):
            return (
                0 << 28  # ftype
                | req_cmd << 22
                | rsp_cmd << 16
                | req_data << 8
                | rsp_data
            ).to_bytes(4, "big")
    except TypeError:  # a value that is not an integer: named below
        pass
    raise misfit("FlowControl", (
        ("req_cmd", req_cmd, 0x3f, 0),
        ("rsp_cmd", rsp_cmd, 0x3f, 0),
        ("req_data", req_data, 0xff, 0),
        ("rsp_data", rsp_data, 0xff, 0),
    ))


def unpack_flow_control(word: int) -> tuple[int, ...]:
    """The values of a tl_flow_control (FTYPE 0) whose bits are ``word``."""
    return (
        word >> 22 & 0x3f,  # req_cmd
        word >> 16 & 0x3f,  # rsp_cmd
        word >> 8 & 0xff,  # req_data
        word & 0xff,  # rsp_data
    )


def encode_request(
    *,
    cmd: int,
    vchan: int,
    asi: int,
    tag: int,
    pool: int,
    attr: int,
    len: int,
    metadata: int,
    addr: int,
    src_acc: int,
    dst_acc: int,
    cload: int,
    cway: int,
    numbeats: int,
) -> bytes:
    """tl_request (FTYPE 1, 16 bytes) from its field values."""
    try:
        if (
            0 <= cmd <= 0x3f
            and 0 <= vchan <= 0x3
            and 0 <= asi <= 0x3
            and 0 <= tag <= 0x7ff
            and 0 <= pool <= 0x1
            and 0 <= attr <= 0xff
            and 0 <= len <= 0x3f
            and 0 <= metadata <= 0xff
            and 0 <= addr <= 0x1fffffffffffffc and not addr & 3
            and 0 <= src_acc <= 0x3ff
            and 0 <= dst_acc <= 0x3ff
            and 0 <= cload <= 0x1
            and 0 <= cway <= 0x3
            and 0 <= numbeats <= 0x3
        ):
            return (
                1 << 124  # ftype
                | cmd << 118
                | vchan << 116
                | asi << 114
                | tag << 103
                | pool << 102
                | attr << 94
                | len << 88
                | metadata << 80
                | (addr >> 2) << 25
                | src_acc << 15
                | dst_acc << 5
                | cload << 4
                | cway << 2
                | numbeats
            ).to_bytes(16, "big")
    except TypeError:  # a value that is not an integer: named below
        pass
    raise misfit("Request", (
        ("cmd", cmd, 0x3f, 0),
        ("vchan", vchan, 0x3, 0),
        ("asi", asi, 0x3, 0),
        ("tag", tag, 0x7ff, 0),
        ("pool", pool, 0x1, 0),
        ("attr", attr, 0xff, 0),
        ("len", len, 0x3f, 0),
        ("metadata", metadata, 0xff, 0),
        ("addr", addr, 0x1fffffffffffffc, 2),
        ("src_acc", src_acc, 0x3ff, 0),
        ("dst_acc", dst_acc, 0x3ff, 0),
        ("cload", cload, 0x1, 0),
        ("cway", cway, 0x3, 0),
        ("numbeats", numbeats, 0x3, 0),
    ))


def unpack_request(word: int) -> tuple[int, ...]:
    """The values of a tl_request (FTYPE 1) whose bits are ``word``."""
    return (
        word >> 118 & 0x3f,  # cmd
        word >> 116 & 0x3,  # vchan
        word >> 114 & 0x3,  # asi
        word >> 103 & 0x7ff,  # tag
        word >> 102 & 0x1,  # pool
        word >> 94 & 0xff,  # attr
        word >> 88 & 0x3f,  # len
        word >> 80 & 0xff,  # metadata
        (word >> 25 & 0x7fffffffffffff) << 2,  # addr
        word >> 15 & 0x3ff,  # src_acc
        word >> 5 & 0x3ff,  # dst_acc
        word >> 4 & 0x1,  # cload
        word >> 2 & 0x3,  # cway
        word & 0x3,  # numbeats
    )


def encode_response(
    *,
    vchan: int,
    tag: int,
    pool: int,
    len: int,
    offset: int,
    status: int,
    rd_wr: int,
    last: int,
    src_acc: int,
    dst_acc: int,
    spare: int = 0,
) -> bytes:
    """tl_response (FTYPE 2, 8 bytes) from its field values."""
    try:
        if (
            0 <= vchan <= 0x3
            and 0 <= tag <= 0x7ff
            and 0 <= pool <= 0x1
            and 0 <= len <= 0x3
            and 0 <= offset <= 0x3
            and 0 <= status <= 0xf
            and 0 <= rd_wr <= 0x1
            and 0 <= last <= 0x1
            and 0 <= src_acc <= 0x3ff
            and 0 <= dst_acc <= 0x3ff
            and 0 <= spare <= 0xffff
        ):
            return (
                2 << 60  # ftype
                | vchan << 58
                | tag << 47
                | pool << 46
                | len << 44
                | offset << 42
                | status << 38
                | rd_wr << 37
                | last << 36
                | src_acc << 26
                | dst_acc << 16
                | spare
            ).to_bytes(8, "big")
    except TypeError:  # a value that is not an integer: named below
        pass
    raise misfit("Response", (
        ("vchan", vchan, 0x3, 0),
        ("tag", tag, 0x7ff, 0),
        ("pool", pool, 0x1, 0),
        ("len", len, 0x3, 0),
        ("offset", offset, 0x3, 0),
        ("status", status, 0xf, 0),
        ("rd_wr", rd_wr, 0x1, 0),
        ("last", last, 0x1, 0),
        ("src_acc", src_acc, 0x3ff, 0),
        ("dst_acc", dst_acc, 0x3ff, 0),
        ("spare", spare, 0xffff, 0),
    ))


def unpack_response(word: int) -> tuple[int, ...]:
    """The values of a tl_response (FTYPE 2) whose bits are ``word``."""
    return (
        word >> 58 & 0x3,  # vchan
        word >> 47 & 0x7ff,  # tag
        word >> 46 & 0x1,  # pool
        word >> 44 & 0x3,  # len
        word >> 42 & 0x3,  # offset
        word >> 38 & 0xf,  # status
        word >> 37 & 0x1,  # rd_wr
        word >> 36 & 0x1,  # last
        word >> 26 & 0x3ff,  # src_acc
        word >> 16 & 0x3ff,  # dst_acc
        word & 0xffff,  # spare
    )


def encode_compressed_request(
    *,
    cmd: int,
    vchan: int,
    tag: int,
    pool: int,
    attr: int,
    len: int,
    cway: int,
    numbeats: int,
    addr_lo: int,
) -> bytes:
    """tl_compressed_request (FTYPE 3, 8 bytes) from its field values."""
    try:
        if (
            0 <= cmd <= 0x3f
            and 0 <= vchan <= 0x3
            and 0 <= tag <= 0x7ff
            and 0 <= pool <= 0x1
            and 0 <= attr <= 0xff
            and 0 <= len <= 0x3f
            and 0 <= cway <= 0x3
            and 0 <= numbeats <= 0x3
            and 0 <= addr_lo <= 0xfffffc and not addr_lo & 3
        ):
            return (
                3 << 60  # ftype
                | cmd << 54
                | vchan << 52
                | tag << 41
                | pool << 40
                | attr << 32
                | len << 26
                | cway << 24
                | numbeats << 22
                | (addr_lo >> 2)
            ).to_bytes(8, "big")
    except TypeError:  # a value that is not an integer: named below
        pass
    raise misfit("CompressedRequest", (
        ("cmd", cmd, 0x3f, 0),
        ("vchan", vchan, 0x3, 0),
        ("tag", tag, 0x7ff, 0),
        ("pool", pool, 0x1, 0),
        ("attr", attr, 0xff, 0),
        ("len", len, 0x3f, 0),
        ("cway", cway, 0x3, 0),
        ("numbeats", numbeats, 0x3, 0),
        ("addr_lo", addr_lo, 0xfffffc, 2),
    ))


def unpack_compressed_request(word: int) -> tuple[int, ...]:
    """The values of a tl_compressed_request (FTYPE 3) whose bits are ``word``."""
    return (
        word >> 54 & 0x3f,  # cmd
        word >> 52 & 0x3,  # vchan
        word >> 41 & 0x7ff,  # tag
        word >> 40 & 0x1,  # pool
        word >> 32 & 0xff,  # attr
        word >> 26 & 0x3f,  # len
        word >> 24 & 0x3,  # cway
        word >> 22 & 0x3,  # numbeats
        (word & 0x3fffff) << 2,  # addr_lo
    )


def encode_compressed_response_with_data(
    *,
    vchan: int,
    tag: int,
    pool: int,
    len: int,
    offset: int = 0,
    last: int = 1,
    spare: int = 0,
) -> bytes:
    """tl_compressed_response_with_data (FTYPE 4, 4 bytes) from its field values."""
    try:
        if (
            0 <= vchan <= 0x3
            and 0 <= tag <= 0x7ff
            and 0 <= pool <= 0x1
            and 0 <= len <= 0x3
            and 0 <= offset <= 0x3
            and 0 <= last <= 0x1
            and 0 <= spare <= 0x1ff
        ):
            return (
                4 << 28  # ftype
                | vchan << 26
                | tag << 15
                | pool << 14
                | len << 12
                | offset << 10
                | last << 9
                | spare
            ).to_bytes(4, "big")
    except TypeError:  # a value that is not an integer: named below
        pass
    raise misfit("CompressedResponseData", (
        ("vchan", vchan, 0x3, 0),
        ("tag", tag, 0x7ff, 0),
        ("pool", pool, 0x1, 0),
        ("len", len, 0x3, 0),
        ("offset", offset, 0x3, 0),
        ("last", last, 0x1, 0),
        ("spare", spare, 0x1ff, 0),
    ))


def unpack_compressed_response_with_data(word: int) -> tuple[int, ...]:
    """The values of a tl_compressed_response_with_data (FTYPE 4) whose bits are ``word``."""
    return (
        word >> 26 & 0x3,  # vchan
        word >> 15 & 0x7ff,  # tag
        word >> 14 & 0x1,  # pool
        word >> 12 & 0x3,  # len
        word >> 10 & 0x3,  # offset
        word >> 9 & 0x1,  # last
        word & 0x1ff,  # spare
    )


def encode_compressed_response_no_data(
    *,
    vchan: int,
    tag: int,
    pool: int,
    len: int,
    offset: int = 0,
    last: int = 1,
    spare: int = 0,
) -> bytes:
    """tl_compressed_response_no_data (FTYPE 5, 4 bytes) from its field values."""
    try:
        if (
            0 <= vchan <= 0x3
            and 0 <= tag <= 0x7ff
            and 0 <= pool <= 0x1
            and 0 <= len <= 0x3
            and 0 <= offset <= 0x3
            and 0 <= last <= 0x1
            and 0 <= spare <= 0x1ff
        ):
            return (
                5 << 28  # ftype
                | vchan << 26
                | tag << 15
                | pool << 14
                | len << 12
                | offset << 10
                | last << 9
                | spare
            ).to_bytes(4, "big")
    except TypeError:  # a value that is not an integer: named below
        pass
    raise misfit("CompressedResponseNoData", (
        ("vchan", vchan, 0x3, 0),
        ("tag", tag, 0x7ff, 0),
        ("pool", pool, 0x1, 0),
        ("len", len, 0x3, 0),
        ("offset", offset, 0x3, 0),
        ("last", last, 0x1, 0),
        ("spare", spare, 0x1ff, 0),
    ))


#: tl_compressed_response_no_data unpacks as tl_compressed_response_with_data does.
unpack_compressed_response_no_data = unpack_compressed_response_with_data


def encode_vc_flow_control(
    *,
    vchan: int,
    req_cmd: int = 0,
    rsp_cmd: int = 0,
    req_data: int = 0,
    rsp_data: int = 0,
) -> bytes:
    """tl_vc_flow_control (FTYPE 6, 4 bytes) from its field values."""
    try:
        if (
            0 <= vchan <= 0x3
            and 0 <= req_cmd <= 0x1f
            and 0 <= rsp_cmd <= 0x1f
            and 0 <= req_data <= 0xff
            and 0 <= rsp_data <= 0xff
        ):
            return (
                6 << 28  # ftype
                | vchan << 26
                | req_cmd << 21
                | rsp_cmd << 16
                | req_data << 8
                | rsp_data
            ).to_bytes(4, "big")
    except TypeError:  # a value that is not an integer: named below
        pass
    raise misfit("VcFlowControl", (
        ("vchan", vchan, 0x3, 0),
        ("req_cmd", req_cmd, 0x1f, 0),
        ("rsp_cmd", rsp_cmd, 0x1f, 0),
        ("req_data", req_data, 0xff, 0),
        ("rsp_data", rsp_data, 0xff, 0),
    ))


def unpack_vc_flow_control(word: int) -> tuple[int, ...]:
    """The values of a tl_vc_flow_control (FTYPE 6) whose bits are ``word``."""
    return (
        word >> 26 & 0x3,  # vchan
        word >> 21 & 0x1f,  # req_cmd
        word >> 16 & 0x1f,  # rsp_cmd
        word >> 8 & 0xff,  # req_data
        word & 0xff,  # rsp_data
    )


#: FTYPE -> the encode function of its layout (field values as keywords).
ENCODE_BY_FTYPE: dict[int, Callable[..., bytes]] = {
    0: encode_flow_control,  # FLOW_CONTROL
    1: encode_request,  # REQUEST
    2: encode_response,  # RESPONSE
    3: encode_compressed_request,  # COMPRESSED_REQUEST
    4: encode_compressed_response_with_data,  # COMPRESSED_RESPONSE_DATA
    5: encode_compressed_response_no_data,  # COMPRESSED_RESPONSE_NODATA
    6: encode_vc_flow_control,  # VC_FLOW_CONTROL
}


#: FTYPE -> the unpack function of its layout.
UNPACK_BY_FTYPE: dict[int, Callable[[int], tuple[int, ...]]] = {
    0: unpack_flow_control,
    1: unpack_request,
    2: unpack_response,
    3: unpack_compressed_request,
    4: unpack_compressed_response_with_data,
    5: unpack_compressed_response_no_data,
    6: unpack_vc_flow_control,
}
