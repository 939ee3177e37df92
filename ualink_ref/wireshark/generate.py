"""Generate the Wireshark Lua plugin ``ualink.lua`` from the BitFormat declarations.

Every header layout of the capture, DL and TL is declared once
(:mod:`ualink_ref.capture.format`, :mod:`ualink_ref.dl.formats`,
:mod:`ualink_ref.tl.fields`). This module turns each declared field into a
Wireshark ``ProtoField``: its display-filter name (``<prefix>.<field>``, prefixes in
:data:`FORMAT_PREFIX`), a label, a bit mask over the smallest byte window that holds
it, the enum names as a value string, and the description as the blurb. The tables
the hand-written dissector walks (field lists per format, DL message and TL FTYPE
dispatch, which commands carry data, sizes and offsets) are generated too, so no
layout or constant is typed twice.

The plugin is one file, so users copy one file: the generated declarations stand
in ``ualink.lua`` between the lines :data:`BEGIN_MARKER` and :data:`END_MARKER`, the
hand-written dissector around them. ``python -m ualink_ref.wireshark.generate``
rewrites that section in place (:func:`generate_plugin`) and keeps every other line.
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
from ualink_ref.dl.flit import FLIT_BYTES, HEADER_BYTES, MESSAGE_BYTES, SEGMENT_LENGTHS
from ualink_ref.dl.segments import SEGMENT_OFFSETS
from ualink_ref.errors import DecodeError
from ualink_ref.sizes import MAX_WINDOW, SEQ_MAX, TL_FLIT_BYTES
from ualink_ref.tl import fields as tlf
from ualink_ref.tl.codec import ADDR_LO_BITS
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

_REQUESTS = (tlf.REQUEST, tlf.COMPRESSED_REQUEST)
_RESPONSES = (tlf.RESPONSE, tlf.COMPRESSED_RESPONSE_DATA, tlf.COMPRESSED_RESPONSE_NODATA)

#: One display filter per concept across the compressed and uncompressed forms (project
#: choice, ``specs/wireshark.md`` "One field per concept"): ``ualink.tl.<name>`` is added,
#: hidden, beside the field of that name of each of these formats (the form's own
#: ``ualink.tl.req.cmd`` / ``ualink.tl.creq.cmd`` stay), so one filter finds a request or
#: response whichever form the sender chose. ``len`` is left out: it counts 4-byte words
#: in a request and 64-byte beats in a response, two concepts under one name.
COMMON_FIELDS: Mapping[str, tuple[BitFormat, ...]] = {
    "cmd": _REQUESTS,
    "attr": _REQUESTS,
    "numbeats": _REQUESTS,
    "tag": _REQUESTS + _RESPONSES,
    "vchan": _REQUESTS + _RESPONSES,
    "pool": _REQUESTS + _RESPONSES,
    "offset": _RESPONSES,
    "last": _RESPONSES,
    "status": _RESPONSES,
}
#: Common fields a form implies without carrying them (format name -> field -> value):
#: a compressed response is OKAY (``ualink_ref.tl.fields``: "Implies status OKAY").
IMPLIED_FIELDS: Mapping[str, Mapping[str, int]] = {
    tlf.COMPRESSED_RESPONSE_DATA.name: {"status": Status.OKAY.value},
    tlf.COMPRESSED_RESPONSE_NODATA.name: {"status": Status.OKAY.value},
}
#: The byte address of a request in either form (hand-written in the plugin: a compressed
#: request's upper bits come from the address-cache way an earlier request loaded).
ADDRESS_FILTER = "ualink.tl.addr"

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

#: The line that opens the generated section of ``ualink.lua`` (the whole line).
BEGIN_MARKER = "-- BEGIN GENERATED by `python -m ualink_ref.wireshark.generate` --"
#: The line that closes it.
END_MARKER = "-- END GENERATED --"


def filter_name(fmt: BitFormat, field: str) -> str:
    """The display-filter name of ``fmt``'s field ``field`` (``ualink.tl.req.cmd``)."""
    prefix = FORMAT_PREFIX[fmt.name]
    if field in _MSG_COMMON and prefix.startswith("ualink.dl.msg"):
        prefix = "ualink.dl.msg"
    if field in _TL_COMMON and prefix.startswith("ualink.tl."):
        prefix = "ualink.tl"
    return f"{prefix}.{field}"


def common_filter_name(field: str) -> str:
    """The display-filter name of common field ``field`` (``ualink.tl.cmd``)."""
    return f"ualink.tl.{field}"


def _common_protofield(name: str) -> str:
    """The ``ProtoField`` of common field ``name``: as wide as its widest form, no mask
    (the plugin gives the value), the enum and text of the form that declares it."""
    holders = [fmt for fmt in COMMON_FIELDS[name] if name in fmt.field_names]
    widest = max(fmt.field(name).width for fmt in holders)
    ftype = next(t for n, t in sorted(_TYPES.items()) if 8 * n >= widest)
    declared = holders[0].field(name)
    base = "base.HEX" if name in _HEX_FIELDS and not declared.enum else "base.DEC"
    enum = _lua_enum(declared.enum) if declared.enum else "nil"
    forms = list(dict.fromkeys(filter_name(fmt, name) for fmt in holders))
    implied = [fmt.name for fmt in COMMON_FIELDS[name] if name in IMPLIED_FIELDS.get(fmt.name, {})]
    blurb = f"{declared.description}; every form: {', '.join(forms)}" + (
        f" (implied by {', '.join(implied)})" if implied else "")
    return (f"ProtoField.{ftype}({_lua_str(common_filter_name(name))}, {_lua_str(name)}, "
            f"{base}, {enum}, nil, {_lua_str(blurb)})")


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


def _declare(field: str, shared: dict[str, str], declared: list[str]) -> str:
    """The ``PF[n]`` of ProtoField text ``field``, added to ``declared`` on first use."""
    ref = shared.get(field)
    if ref is None:
        ref = shared[field] = f"PF[{len(shared) + 1}]"
        declared.append(f"{ref} = pf({field})")
    return ref


def _common_of(fmt: BitFormat) -> frozenset[str]:
    """The common fields (:data:`COMMON_FIELDS`) ``fmt`` holds or implies."""
    return frozenset(name for name, fmts in COMMON_FIELDS.items() if fmt in fmts)


def _field_lines(fmt: BitFormat, shared: dict[str, str]) -> list[str]:
    """The ``FMT`` table of ``fmt``, preceded by the ``PF`` entries of its ProtoFields not
    declared yet: a field that several formats share (same filter name, mask, enum and
    description: a message's class and type, a TL field's ftype; a common field,
    :data:`COMMON_FIELDS`) is registered once. A field with a common field names its
    ProtoField as ``also``; values a form implies are listed in ``implied``."""
    declared: list[str] = []
    common = _common_of(fmt)
    implied = [f"{{ pf = {_declare(_common_protofield(name), shared, declared)}, "
               f"value = {value} }}"
               for name, value in IMPLIED_FIELDS.get(fmt.name, {}).items() if name in common]
    lines = [f"FMT[{_lua_str(fmt.name)}] = {{ name = {_lua_str(fmt.name)}, "
             f"bytes = {fmt.bit_length // 8}, "
             f"check_reserved = {str(fmt.check_reserved).lower()}, "
             f"implied = {{{', '.join(implied)}}}, fields = {{"]
    for pos in fmt.positions:
        f = pos.field
        off, length, bit, mask = _window(fmt, pos)
        ftype = _TYPES.get(length, "uint64")
        base = "base.HEX" if f.name in _HEX_FIELDS and not f.enum else "base.DEC"
        enum = _lua_enum(f.enum) if f.enum else "nil"
        blurb = f.description + (" (reserved: zero)" if f.reserved else "")
        mask_text = f"0x{mask:x}" if mask is not None else "nil"
        abbrev = filter_name(fmt, f.name)
        field = (f"ProtoField.{ftype}({_lua_str(abbrev)}, {_lua_str(f.name)}, {base}, "
                 f"{enum}, {mask_text}, {_lua_str(blurb)})")
        ref = _declare(field, shared, declared)
        also = (f", also = {_declare(_common_protofield(f.name), shared, declared)}"
                if f.name in common else "")
        lines.append(
            f"  {{ name = {_lua_str(f.name)}, off = {off}, len = {length}, bit = {bit}, "
            f"width = {f.width}, reserved = {str(f.reserved).lower()}, "
            f"strict = {str(f.strict_enum).lower()}, enum = {enum}, "
            f"wide = {str(mask is None).lower()}, pf = {ref}{also} }},"
        )
    lines.append("} }")
    return declared + lines


def _addr_hi() -> str:
    """Where a request's address bits above ``addr_lo`` (what ``cload`` stores in an
    address-cache way) sit: a window ``str_field`` reads exactly (below 2**53)."""
    pos = tlf.REQUEST.position("addr")
    width = pos.field.width - (ADDR_LO_BITS - tlf.BYTE_ADDRESS_LOW_BITS["addr"])
    first, last = pos.offset // 8, (pos.offset + width - 1) // 8
    if 8 * (last - first + 1) > 53:  # pragma: no cover - a layout change would need UInt64
        raise DecodeError("addr_hi does not fit a Lua number")
    return (f"{{ off = {first}, len = {last - first + 1}, bit = {pos.offset - 8 * first}, "
            f"width = {width} }}")


def _table(name: str, items: Iterable[tuple[int, str]]) -> str:
    return f"{name} = {{" + ", ".join(f"[{k}] = {v}" for k, v in items) + "}"


def generate_section() -> str:
    """The generated declarations: the text between the marker lines of ``ualink.lua``.

    It uses ``pf`` and ``FMT``, which the hand-written head of the plugin defines.
    """
    out = [
        "-- Constants (from ualink_ref.capture.format, ualink_ref.dl.flit, ualink_ref.tl).",
        "local C = {",
        f"  linktype = {LINKTYPE_USER0}, magic = {CAPTURE_MAGIC}, "
        f"pseudo_header_bytes = {PSEUDO_HEADER_BYTES},",
        f"  flit_bytes = {FLIT_BYTES}, header_bytes = {HEADER_BYTES}, "
        f"crc_coverage = {CRC_COVERAGE}, message_bytes = {MESSAGE_BYTES},",
        f"  tl_flit_bytes = {TL_FLIT_BYTES}, half_bytes = {HALF_FLIT_BYTES}, "
        f"sector_bytes = {tlf.SECTOR_BYTES}, sectors_per_half = {SECTORS_PER_HALF},",
        f"  seq_max = {SEQ_MAX}, replay_memory = {MAX_WINDOW},",
        f"  addr_lo_bits = {ADDR_LO_BITS}, addr_hi = {_addr_hi()},",
        "  op = {" + ", ".join(f"{op.name.lower()} = {op.value}" for op in dlf.FlitOp) + "},",
        "  ftype = {" + ", ".join(f"{t.name.lower()} = {t.value}" for t in tlf.FType) + "},",
        f"  status_okay = {Status.OKAY.value},",
        "  segment_lengths = {" + ", ".join(map(str, SEGMENT_LENGTHS)) + "},",
        "  segment_offsets = {" + ", ".join(f"{{{h}, {b}}}" for h, b in SEGMENT_OFFSETS) + "},",
        "  record_kinds = " + _lua_enum(RECORD_KINDS) + ",",
        "  directions = " + _lua_enum(DIRECTIONS) + ",",
        "}",
        "",
        "-- Formats: one ProtoField per distinct declared field (filter name, mask, enum,",
        "-- description), in PF; each format's table names its fields' ProtoFields.",
        "local PF = {}",
    ]
    shared: dict[str, str] = {}
    for fmt in FORMATS:
        out += _field_lines(fmt, shared)
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
    ]
    return "\n".join(out) + "\n"


def split_plugin(text: str) -> tuple[str, str, str]:
    """``text`` cut at its marker lines: (head up to and with :data:`BEGIN_MARKER`,
    the generated section, the rest from :data:`END_MARKER` on).

    Raises :class:`~ualink_ref.errors.DecodeError` unless each marker stands exactly
    once, as a whole line, the begin marker first.
    """
    lines = text.splitlines(keepends=True)
    found = {marker: [i for i, line in enumerate(lines) if line.rstrip("\r\n") == marker]
             for marker in (BEGIN_MARKER, END_MARKER)}
    for marker, where in found.items():
        if len(where) != 1:
            raise DecodeError(f"{PLUGIN_NAME}: the line {marker!r} must stand exactly once "
                              f"(found {len(where)} times)")
    begin, end = found[BEGIN_MARKER][0], found[END_MARKER][0]
    if end < begin:
        raise DecodeError(f"{PLUGIN_NAME}: {END_MARKER!r} stands before {BEGIN_MARKER!r}")
    return ("".join(lines[:begin + 1]), "".join(lines[begin + 1:end]), "".join(lines[end:]))


def generate_plugin(text: str | None = None) -> str:
    """``text`` (default: the committed ``ualink.lua``) with its generated section
    replaced by a fresh :func:`generate_section`; every other line kept as it is."""
    if text is None:
        text = plugin_path().read_text(encoding="utf-8")
    head, _, tail = split_plugin(text)
    return head + generate_section() + tail


def main(argv: list[str] | None = None) -> int:
    """Rewrite the generated section of the committed plugin in place; or, given a path
    as the only argument, write the whole committed plugin there, refreshed (whatever
    that file held: an older copy, with or without markers, is replaced, so its two
    parts always come from this version)."""
    args = sys.argv[1:] if argv is None else argv
    path = Path(args[0]) if args else plugin_path()
    path.write_text(generate_plugin(), encoding="utf-8")
    print(path)
    return 0


__all__ = ["ADDRESS_FILTER", "BEGIN_MARKER", "COMMON_FIELDS", "END_MARKER", "FORMATS",
           "FORMAT_PREFIX", "IMPLIED_FIELDS", "common_filter_name", "filter_name",
           "generate_plugin", "generate_section", "main", "split_plugin"]

if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
