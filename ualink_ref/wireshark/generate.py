"""Generate the Wireshark Lua plugin ``ualink.lua`` from the BitFormat declarations.

Every header layout of the capture, DL and TL is declared once
(:mod:`ualink_ref.capture.format`, :mod:`ualink_ref.dl.formats`,
:mod:`ualink_ref.tl.fields`). This module turns each declared field into a
Wireshark ``ProtoField``: its display-filter name (``<prefix>.<field>``, prefixes in
:data:`FORMAT_PREFIX`), a label, a bit mask over the smallest byte window that holds
it, the enum names as a value string, and the description as the blurb. The tables
the hand-written ``core.lua`` walks (field lists per format, DL message and TL FTYPE
dispatch, which commands carry data, sizes and offsets) are generated too, so no
layout or constant is typed twice. Run ``python -m ualink_ref.wireshark.generate``
to rewrite the committed plugin.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable, Mapping
from pathlib import Path

from ualink_ref.bitfields import BitFormat, FieldPosition
from ualink_ref.capture.format import (
    CAPTURE_MAGIC,
    DIRECTIONS,
    LINKTYPE_USER0,
    PSEUDO_HEADER,
    PSEUDO_HEADER_BYTES,
    RECORD_KINDS,
)
from ualink_ref.dl import formats as dlf
from ualink_ref.dl.crc import CRC_COVERAGE
from ualink_ref.dl.flit import (
    FLIT_BYTES,
    HEADER_BYTES,
    MESSAGE_BYTES,
    SEGMENT_LENGTHS,
    SEGMENT_OFFSETS,
    SEQ_MAX,
    TL_FLIT_BYTES,
)
from ualink_ref.tl import fields as tlf
from ualink_ref.tl.flit import HALF_FLIT_BYTES, SECTORS_PER_HALF
from ualink_ref.tl.upli import Status, request_data_halves, request_has_data
from ualink_ref.wireshark import PLUGIN_NAME, plugin_path

#: Display-filter prefix of each format (project choice, ``specs/wireshark.md``):
#: Wireshark style ``<protocol>.<layer>.<part>``; formats with the same layout share one.
FORMAT_PREFIX: Mapping[str, str] = {
    PSEUDO_HEADER.name: "ualink.cap",
    dlf.EXPLICIT_HEADER.name: "ualink.dl.hdr",
    dlf.COMMAND_HEADER.name: "ualink.dl.hdr",
    dlf.SEGMENT_HEADER.name: "ualink.dl.seg",
    dlf.DL_MESSAGE.name: "ualink.dl.msg",
    dlf.NOOP_MESSAGE.name: "ualink.dl.msg.noop",
    dlf.TL_RATE_MESSAGE.name: "ualink.dl.msg.tl_rate",
    dlf.DEVICE_ID_MESSAGE.name: "ualink.dl.msg.device_id",
    dlf.PORT_NUMBER_MESSAGE.name: "ualink.dl.msg.port_number",
    dlf.CHANNEL_NEGOTIATION_MESSAGE.name: "ualink.dl.msg.channel",
    dlf.UART_MESSAGE.name: "ualink.dl.msg.uart",
    dlf.VENDOR_MESSAGE.name: "ualink.dl.msg.vendor",
    tlf.FLOW_CONTROL.name: "ualink.tl.fc",
    tlf.VC_FLOW_CONTROL.name: "ualink.tl.vcfc",
    tlf.REQUEST.name: "ualink.tl.req",
    tlf.RESPONSE.name: "ualink.tl.rsp",
    tlf.COMPRESSED_REQUEST.name: "ualink.tl.creq",
    tlf.COMPRESSED_RESPONSE_DATA.name: "ualink.tl.crsp",
    tlf.COMPRESSED_RESPONSE_NODATA.name: "ualink.tl.crsp",
}

#: Fields every DL message shares: filtered as ``ualink.dl.msg.<name>`` whatever the type.
_MSG_COMMON = frozenset(p.field.name for p in dlf.DL_MESSAGE.positions[1:])
#: Every TL field opens with FTYPE: filtered as ``ualink.tl.ftype`` in every layout.
_TL_COMMON = frozenset({"ftype"})
#: Fields shown in hexadecimal (addresses, opaque words); the rest in decimal.
_HEX_FIELDS = frozenset({"magic", "addr", "addr_lo", "body", "data", "metadata", "attr"})
#: Doubles (Lua 5.2 numbers) hold masks exactly up to 2**53; wider masks are not used.
_MAX_MASK = 1 << 53

#: Every format the plugin declares, in the order the plugin lists them.
FORMATS: tuple[BitFormat, ...] = (PSEUDO_HEADER, *dlf.ALL_FORMATS, *tlf.ALL_FORMATS)

_CORE = Path(__file__).resolve().parent / "core.lua"


def filter_name(fmt: BitFormat, field: str) -> str:
    """The display-filter name of ``fmt``'s field ``field`` (``ualink.tl.req.cmd``)."""
    prefix = FORMAT_PREFIX[fmt.name]
    if field in _MSG_COMMON and prefix.startswith("ualink.dl.msg"):
        prefix = "ualink.dl.msg"
    if field in _TL_COMMON and prefix.startswith("ualink.tl."):
        prefix = "ualink.tl"
    return f"{prefix}.{field}"


def _lua_str(text: str) -> str:
    escaped = text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
    return f'"{escaped}"'


def _lua_enum(enum: Mapping[int, str]) -> str:
    return "{" + ", ".join(f"[{k}] = {_lua_str(v)}" for k, v in sorted(enum.items())) + "}"


def _window(fmt: BitFormat, pos: FieldPosition) -> tuple[int, int, int, int | None]:
    """(byte offset, byte length, bit position in the window, mask or None) of a field."""
    first = pos.offset // 8
    last = (pos.offset + pos.field.width - 1) // 8
    length = last - first + 1
    bit = pos.offset - 8 * first
    mask = pos.field.max_value << (8 * length - bit - pos.field.width)
    return first, length, bit, (mask if mask < _MAX_MASK else None)


_TYPES = {1: "uint8", 2: "uint16", 3: "uint24", 4: "uint32"}


def _field_lines(fmt: BitFormat) -> list[str]:
    lines = [f"FMT[{_lua_str(fmt.name)}] = {{ name = {_lua_str(fmt.name)}, "
             f"bytes = {fmt.bit_length // 8}, "
             f"check_reserved = {str(fmt.check_reserved).lower()}, fields = {{"]
    for pos in fmt.positions:
        f = pos.field
        off, length, bit, mask = _window(fmt, pos)
        ftype = _TYPES.get(length, "uint64")
        base = "base.HEX" if f.name in _HEX_FIELDS and not f.enum else "base.DEC"
        enum = _lua_enum(f.enum) if f.enum else "nil"
        blurb = f.description + (" (reserved: zero)" if f.reserved else "")
        mask_text = f"0x{mask:x}" if mask is not None else "nil"
        abbrev = filter_name(fmt, f.name)
        lines.append(
            f"  {{ name = {_lua_str(f.name)}, off = {off}, len = {length}, bit = {bit}, "
            f"width = {f.width}, reserved = {str(f.reserved).lower()}, "
            f"strict = {str(f.strict_enum).lower()}, enum = {enum}, "
            f"wide = {str(mask is None).lower()},\n"
            f"    pf = pf(ProtoField.{ftype}({_lua_str(abbrev)}, {_lua_str(f.name)}, {base}, "
            f"{enum}, {mask_text}, {_lua_str(blurb)})) }},"
        )
    lines.append("} }")
    return lines


def _table(name: str, items: Iterable[tuple[int, str]]) -> str:
    return f"{name} = {{" + ", ".join(f"[{k}] = {v}" for k, v in items) + "}"


def _generated_part() -> str:
    out = [
        f"-- {PLUGIN_NAME}: Wireshark dissector for ualink_ref captures (LINKTYPE_USER0).",
        "-- GENERATED by `python -m ualink_ref.wireshark.generate` from the BitFormat",
        "-- declarations, followed by the hand-written ualink_ref/wireshark/core.lua.",
        "-- Do not edit: change the declarations or core.lua and regenerate.",
        "",
        'local ualink = Proto("ualink", "UALink (ualink_ref capture)")',
        "local FIELDS = {}  -- every ProtoField, registered by core.lua",
        "local function pf(field) FIELDS[#FIELDS + 1] = field; return field end",
        "local FMT = {}",
        "",
        "-- Constants (from ualink_ref.capture.format, ualink_ref.dl.flit, ualink_ref.tl).",
        "local C = {",
        f"  linktype = {LINKTYPE_USER0}, magic = {CAPTURE_MAGIC}, "
        f"pseudo_header_bytes = {PSEUDO_HEADER_BYTES},",
        f"  flit_bytes = {FLIT_BYTES}, header_bytes = {HEADER_BYTES}, "
        f"crc_coverage = {CRC_COVERAGE}, message_bytes = {MESSAGE_BYTES},",
        f"  tl_flit_bytes = {TL_FLIT_BYTES}, half_bytes = {HALF_FLIT_BYTES}, "
        f"sector_bytes = {tlf.SECTOR_BYTES}, sectors_per_half = {SECTORS_PER_HALF},",
        f"  seq_max = {SEQ_MAX}, replay_memory = 256,",
        "  op = {" + ", ".join(f"{op.name.lower()} = {op.value}" for op in dlf.FlitOp) + "},",
        "  ftype = {" + ", ".join(f"{t.name.lower()} = {t.value}" for t in tlf.FType) + "},",
        f"  status_okay = {Status.OKAY.value},",
        "  segment_lengths = {" + ", ".join(map(str, SEGMENT_LENGTHS)) + "},",
        "  segment_offsets = {" + ", ".join(f"{{{h}, {b}}}" for h, b in SEGMENT_OFFSETS) + "},",
        "  record_kinds = " + _lua_enum(RECORD_KINDS) + ",",
        "  directions = " + _lua_enum(DIRECTIONS) + ",",
        "}",
        "",
        "-- Formats: one ProtoField per declared field (filter name, mask, enum, description).",
    ]
    for fmt in FORMATS:
        out += _field_lines(fmt)
    out += [
        "",
        "-- Dispatch tables.",
        _table("local MSG_FORMATS", (
            (fmt.field("mclass").default * 8 + mtype, f"FMT[{_lua_str(fmt.name)}]")
            for fmt in dlf.ALL_FORMATS
            if fmt.name.startswith("dl_msg_")
            # every type of the vendor class is the vendor's: all eight use its layout
            for mtype in (range(8) if fmt is dlf.VENDOR_MESSAGE
                          else (fmt.field("mtype").default,)))),
        _table("local TL_FORMATS", ((int(ft), f"FMT[{_lua_str(fmt.name)}]")
                                    for ft, fmt in tlf.FORMATS.items())),
        _table("local TL_SECTORS", ((int(ft), str(n)) for ft, n in tlf.SECTORS.items())),
        "-- Known commands -> data half-flits before the beats (-1: no data).",
        _table("local CMD_DATA", (
            (cmd, str(request_data_halves(cmd, 0) - 2 if request_has_data(cmd) else -1))
            for cmd in sorted(tlf.COMMANDS))),
        "",
    ]
    return "\n".join(out) + "\n"


def generate_plugin() -> str:
    """The full text of ``ualink.lua``: generated declarations, then ``core.lua``."""
    return _generated_part() + "\n" + _CORE.read_text(encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    """Rewrite the committed plugin (or the path given as the only argument)."""
    args = sys.argv[1:] if argv is None else argv
    path = Path(args[0]) if args else plugin_path()
    path.write_text(generate_plugin(), encoding="utf-8")
    print(path)
    return 0


__all__ = ["FORMATS", "FORMAT_PREFIX", "filter_name", "generate_plugin", "main"]

if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
