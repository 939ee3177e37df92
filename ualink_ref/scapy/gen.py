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
from ualink_ref.errors import EncodeError
from ualink_ref.tl.fields import ALL_FORMATS as _TL_FORMATS
from ualink_ref.tl.fields import BYTE_ADDRESS_LOW_BITS

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

#: TL fields that hold a byte address without its low bits, ``(format name, field) ->
#: low bits left out``: ``tl_request.addr`` holds address bits 56..2,
#: ``tl_compressed_request.addr_lo`` bits 23..2 (``ualink_ref.tl.fields``). Keyed on
#: the format: an ``addr`` of another protocol (SUE's) is a plain byte address.
WORD_ADDRESS_FIELDS: dict[tuple[str, str], int] = {
    (fmt.name, name): low for fmt in _TL_FORMATS
    for name, low in BYTE_ADDRESS_LOW_BITS.items() if name in fmt.field_names
}

#: The byte-address alias of each word-address field (project choice, ``specs/capture.md``
#: "Byte addresses"): ``TlRequest(byte_addr=0x4000)`` is ``TlRequest(addr=0x1000)``;
#: ``pkt.byte_addr`` reads and sets ``addr << 2``. The field itself stays bit-exact.
BYTE_ADDRESS_ALIASES: dict[str, str] = {"addr": "byte_addr", "addr_lo": "byte_addr_lo"}


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
    """A bit field holding a byte address without its low bits (``addr`` = address >> 2),
    shown with the byte address under its alias: ``0x400 (byte_addr=0x1000)``."""

    __slots__ = ["alias", "low_bits"]  # Scapy fields use slots

    def __init__(self, name: str, default: Any, size: int, low_bits: int) -> None:
        super().__init__(name, default, size)
        self.alias = BYTE_ADDRESS_ALIASES[name]
        self.low_bits = low_bits

    def i2repr(self, pkt: Packet | None, x: Any) -> str:
        """``0x400 (byte_addr=0x1000)``: the stored value (what ``addr=`` takes), then the
        byte address (what ``byte_addr=`` takes)."""
        if not isinstance(x, int):
            return repr(x)
        return f"{x:#x} ({self.alias}={x << self.low_bits:#x})"

    def word_of(self, byte_address: Any) -> int:
        """The field value of ``byte_address``; :class:`~ualink_ref.errors.EncodeError`
        unless it is an int, a multiple of ``2**low_bits``, that fits the field."""
        step = 1 << self.low_bits
        if (isinstance(byte_address, bool) or not isinstance(byte_address, int)
                or not 0 <= byte_address < step << self.size or byte_address % step):
            raise EncodeError(
                f"{self.alias} = {byte_address!r:.40}: a byte address is an int, a multiple "
                f"of {step}, below {step << self.size:#x} ({self.name} holds it >> "
                f"{self.low_bits})", field=self.alias)
        return byte_address >> self.low_bits


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
        elif (fmt.name, f.name) in WORD_ADDRESS_FIELDS:
            fields.append(WordAddressField(name, default, f.width,
                                           WORD_ADDRESS_FIELDS[fmt.name, f.name]))
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


def _byte_address_property(field: WordAddressField) -> property:
    """``pkt.<alias>``: the byte address of word-address ``field``, read and set."""

    def get(self: Packet) -> Any:
        value = self.getfieldval(field.name)
        # a volatile value (fuzz()) or None is passed on as it is
        return value << field.low_bits if isinstance(value, int) else value

    def set_(self: Packet, byte_address: Any) -> None:
        self.setfieldval(field.name, field.word_of(byte_address))

    return property(get, set_, doc=f"Byte address: ``{field.name} << {field.low_bits}`` "
                                   f"(set: a multiple of {1 << field.low_bits}).")


def _aliasing_init(aliases: dict[str, WordAddressField]) -> Any:
    """An ``__init__`` that takes each byte-address alias as a constructor argument."""

    def __init__(self: Packet, _pkt: bytes = b"", *args: Any, **fields: Any) -> None:
        for alias, field in aliases.items():
            if alias in fields:
                if field.name in fields:
                    raise EncodeError(f"give {field.name}= or {alias}=, not both", field=alias)
                fields[field.name] = field.word_of(fields.pop(alias))
        Packet.__init__(self, _pkt, *args, **fields)

    return __init__


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
    unless ``attrs`` gives one. A layer with a word-address field
    (:data:`WORD_ADDRESS_FIELDS`) also takes its byte-address alias
    (:data:`BYTE_ADDRESS_ALIASES`) as a constructor argument and attribute.
    """
    fields_desc = scapy_fields(fmt, computed) + list(extra_fields or [])
    namespace: dict[str, Any] = {
        "name": display_name or fmt.name,
        "fields_desc": fields_desc,
        "mysummary": _summary_of(fmt, display_name or fmt.name),
        "__doc__": fmt.description or f"Scapy view of the {fmt.name} format.",
        "__module__": _PUBLIC_MODULE,
    }
    aliases = {f.alias: f for f in fields_desc if isinstance(f, WordAddressField)}
    if aliases:  # byte addresses as users write them (BYTE_ADDRESS_ALIASES)
        namespace["__init__"] = _aliasing_init(aliases)
        namespace.update({alias: _byte_address_property(f) for alias, f in aliases.items()})
    namespace.update(attrs or {})
    return type(class_name or _class_name(fmt.name), (Packet,), namespace)


__all__ = [
    "BYTE_ADDRESS_ALIASES",
    "SCAPY_RENAMES",
    "WORD_ADDRESS_FIELDS",
    "ExactLenField",
    "WordAddressField",
    "packet_class",
    "scapy_fields",
    "scapy_name",
]
