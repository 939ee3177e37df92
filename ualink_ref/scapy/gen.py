"""The generator behind every ualink_ref Scapy layer: BitFormat -> Scapy Packet.

Kept apart from :mod:`ualink_ref.scapy_layers` so that each per-layer module
(``scapy_dl``, ``scapy_tl``, ``scapy_roce``) can be imported on its own, in
any order, without a circular import; ``scapy_layers`` re-exports these names.
Imports Scapy (GPL-2.0-only).
"""

from __future__ import annotations

from typing import Any

from scapy.fields import BitEnumField, BitField
from scapy.packet import Packet

from ualink_ref.bitfields import BitFormat

#: Module named in the generated classes (where users find them).
_PUBLIC_MODULE = "ualink_ref.scapy_layers"


def scapy_name(field_name: str) -> str:
    """The Scapy field name of a declared field.

    A declared name that is also an attribute of Scapy's ``Packet`` (such as
    ``payload``, ``direction`` or ``command``) would shadow it, so it gets a
    trailing underscore (``payload_``); every other name is unchanged.
    """
    return field_name + "_" if hasattr(Packet, field_name) else field_name


def scapy_fields(fmt: BitFormat) -> list[Any]:
    """Scapy field objects for every field of ``fmt``, MSB first."""
    fields: list[Any] = []
    for f in fmt.fields:
        name = scapy_name(f.name)
        if f.enum:
            fields.append(BitEnumField(name, f.default, f.width, dict(f.enum)))
        else:
            fields.append(BitField(name, f.default, f.width))
    return fields


def _class_name(fmt_name: str) -> str:
    return "".join(part[:1].upper() + part[1:] for part in fmt_name.replace("-", "_").split("_"))


def packet_class(
    fmt: BitFormat,
    *,
    class_name: str | None = None,
    display_name: str | None = None,
    extra_fields: list[Any] | None = None,
    attrs: dict[str, Any] | None = None,
) -> type[Packet]:
    """Build a Scapy ``Packet`` subclass whose fields are exactly ``fmt``'s.

    ``extra_fields`` are appended after the declared ones (e.g. a payload
    length or a CRC field computed by the caller); ``attrs`` adds methods such
    as ``guess_payload_class`` or ``post_build``.
    """
    namespace: dict[str, Any] = {
        "name": display_name or fmt.name,
        "fields_desc": scapy_fields(fmt) + list(extra_fields or []),
        "__doc__": fmt.description or f"Scapy view of the {fmt.name} format.",
        "__module__": _PUBLIC_MODULE,
    }
    namespace.update(attrs or {})
    return type(class_name or _class_name(fmt.name), (Packet,), namespace)


__all__ = ["packet_class", "scapy_fields", "scapy_name"]
