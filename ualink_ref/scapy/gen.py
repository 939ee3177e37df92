"""The generator behind every ualink_ref Scapy layer: BitFormat -> Scapy Packet.

Kept apart from :mod:`ualink_ref.scapy_layers` so that each per-layer module
(``scapy_dl``, ``scapy_tl``, ``scapy_roce``) can be imported on its own, in
any order, without a circular import; ``scapy_layers`` re-exports these names.
Imports Scapy (GPL-2.0-only).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from scapy.fields import BitEnumField, BitField, StrLenField
from scapy.packet import Packet

from ualink_ref.bitfields import BitFormat

#: Module named in the generated classes (where users find them).
_PUBLIC_MODULE = "ualink_ref.scapy_layers"

#: Declared names that are attributes of Scapy's ``Packet`` (``p.direction`` is the
#: packet's sniff direction, ``p.payload`` its next layer), so a field of that name
#: would never be read: the Scapy layers call them this instead. Migration: these
#: fields were ``direction_``, ``payload_`` and ``command_`` before (specs/capture.md).
SCAPY_RENAMES: dict[str, str] = {
    "direction": "link_direction",
    "payload": "has_payload",
    "command": "neg_command",
}

#: Fields that hold a byte address divided by 4 (address bits 56..2, or 23..2):
#: Scapy shows them as the byte address, in hex, like ``ualink-ref dissect``.
WORD_ADDRESS_FIELDS = frozenset({"addr", "addr_lo"})


def scapy_name(field_name: str) -> str:
    """The Scapy field name of a declared field.

    A declared name that is also an attribute of Scapy's ``Packet`` is renamed
    (:data:`SCAPY_RENAMES`; any other clash gets a ``_ul`` suffix); every other name
    is unchanged.
    """
    if field_name in SCAPY_RENAMES:
        return SCAPY_RENAMES[field_name]
    return field_name + "_ul" if hasattr(Packet, field_name) else field_name


class WordAddressField(BitField):
    """A bit field holding a byte address >> 2, shown as the byte address in hex."""

    def i2repr(self, pkt: Packet | None, x: Any) -> str:
        """``0x1000 (field 0x400)``: the byte address, then the stored value."""
        if not isinstance(x, int):
            return repr(x)
        return f"{x << 2:#x} (field {x:#x})"


def scapy_fields(fmt: BitFormat, computed: Iterable[str] = ()) -> list[Any]:
    """Scapy field objects for every field of ``fmt``, MSB first.

    Fields named in ``computed`` default to ``None`` (filled in on build, as Scapy
    does for lengths and checksums).
    """
    fields: list[Any] = []
    computed = frozenset(computed)
    for f in fmt.fields:
        name = scapy_name(f.name)
        default = None if f.name in computed else f.default
        if f.enum:
            fields.append(BitEnumField(name, default, f.width, dict(f.enum)))
        elif f.name in WORD_ADDRESS_FIELDS:
            fields.append(WordAddressField(name, default, f.width))
        else:
            fields.append(BitField(name, default, f.width))
    return fields


class ExactLenField(StrLenField):
    """A byte string whose length is fixed by the packet: padded with zeros or cut on build.

    Segment bodies and UPLI data have the length the structure gives them, so a
    built (or fuzzed) packet always has the right shape; what the bytes say is
    up to the caller.
    """

    def addfield(self, pkt: Packet, s: bytes, val: Any) -> bytes:
        """``val`` zero-padded or truncated to ``length_from(pkt)`` bytes."""
        length_from: Any = self.length_from  # set by StrLenField's constructor
        size = int(length_from(pkt))
        data = bytes(val or b"")[:size]
        return s + data + bytes(size - len(data))


#: Fields a generated layer's summary leaves out (structure, not content).
_SUMMARY_SKIP = frozenset({"ftype", "magic", "version", "header_length", "mclass", "mtype"})


def _summary_of(fmt: BitFormat, label: str) -> Any:
    """A ``mysummary`` for a generated layer: its name and the fields that are set."""
    names = [(f.name, scapy_name(f.name)) for f in fmt.fields
             if not f.reserved and f.name not in _SUMMARY_SKIP]

    def mysummary(self: Packet) -> str:
        parts = []
        for declared, name in names:
            value = self.getfieldval(name)
            if value:
                parts.append(f"{declared}={self.get_field(name).i2repr(self, value)}")
        return " ".join([label, *parts[:8]] + (["..."] if len(parts) > 8 else []))

    return mysummary


def _class_name(fmt_name: str) -> str:
    return "".join(part[:1].upper() + part[1:] for part in fmt_name.replace("-", "_").split("_"))


def packet_class(
    fmt: BitFormat,
    *,
    class_name: str | None = None,
    display_name: str | None = None,
    extra_fields: list[Any] | None = None,
    attrs: dict[str, Any] | None = None,
    computed: Iterable[str] = (),
) -> type[Packet]:
    """Build a Scapy ``Packet`` subclass whose fields are exactly ``fmt``'s.

    ``extra_fields`` are appended after the declared ones (e.g. a payload
    length or a CRC field computed by the caller); ``attrs`` adds methods such
    as ``guess_payload_class`` or ``post_build``; ``computed`` fields default to
    ``None``. Every layer gets a ``mysummary`` naming it and its non-zero fields
    unless ``attrs`` gives one.
    """
    namespace: dict[str, Any] = {
        "name": display_name or fmt.name,
        "fields_desc": scapy_fields(fmt, computed) + list(extra_fields or []),
        "mysummary": _summary_of(fmt, display_name or fmt.name),
        "__doc__": fmt.description or f"Scapy view of the {fmt.name} format.",
        "__module__": _PUBLIC_MODULE,
    }
    namespace.update(attrs or {})
    return type(class_name or _class_name(fmt.name), (Packet,), namespace)


__all__ = [
    "SCAPY_RENAMES",
    "WORD_ADDRESS_FIELDS",
    "ExactLenField",
    "WordAddressField",
    "packet_class",
    "scapy_fields",
    "scapy_name",
]
