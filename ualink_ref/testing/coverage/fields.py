"""Field value classes, derived from the format declarations (specs/coverage.md "Fields").

Every field of every declared format (the ones the codecs, the Scapy layers and
the Wireshark dissector are generated from: the capture pseudo-header, every DL
and every TL format) gets one cover point, ``field:<format>.<field>``, whose bins
come from its :class:`~ualink_ref.bitfields.Field` alone:

* a reserved field: ``zero``, ``reserved_nonzero``;
* a field with an enum: one bin per named value, and ``unknown_enum`` when some
  value of the width has no name;
* a 1-bit field: ``zero``, ``one``; any wider field: ``zero``, ``one``, ``max``.

A field that selects the layout is one shared point, not one per layout (in
``dl_explicit_header`` the op is always explicit or replay, so per-layout bins for
the other ops could never be hit): ``field:tl.ftype`` (every TL format's FTYPE),
``field:dl_header.op`` and ``field:dl_header.payload`` (both DL header layouts),
and the DL message's common fields, sampled once per word as ``dl_message``.

Values are read *raw* (:func:`sample_word`: shift and mask, no checks), so a
decode input holding a reserved bit or an unknown code is sampled too — those
are exactly the inputs a decoder must reject.
"""

from __future__ import annotations

from ualink_ref.bitfields import BitFormat, Field
from ualink_ref.capture.format import PSEUDO_HEADER
from ualink_ref.dl import formats as dlf
from ualink_ref.testing.coverage.model import Coverage, CoverPoint
from ualink_ref.tl import fields as tlf

#: The declared formats whose fields are covered: those the Wireshark dissector is
#: generated from (a test checks the two lists agree).
FORMATS: tuple[BitFormat, ...] = (PSEUDO_HEADER, *dlf.ALL_FORMATS, *tlf.ALL_FORMATS)

_DL_HEADERS = (dlf.EXPLICIT_HEADER, dlf.COMMAND_HEADER)
_MESSAGE_COMMON = frozenset(("mtype", "mclass", "rsvd_c", "compressed"))
_MESSAGES = frozenset(f.name for f in dlf.ALL_FORMATS if f.name.startswith("dl_msg_"))
_TL = frozenset(f.name for f in tlf.ALL_FORMATS)

ZERO, ONE, MAX = "zero", "one", "max"
RESERVED_NONZERO, UNKNOWN_ENUM = "reserved_nonzero", "unknown_enum"


def point_name(fmt: BitFormat, name: str) -> str | None:
    """The cover point a field of ``fmt`` is sampled into, or ``None`` when another
    sampling covers it (the message-specific copies of the common message fields)."""
    if fmt.name in _TL and name == "ftype":
        return "field:tl.ftype"
    if fmt in _DL_HEADERS and name in ("op", "payload"):
        return f"field:dl_header.{name}"
    if fmt.name in _MESSAGES and name in _MESSAGE_COMMON:
        return None  # the word is also sampled as dl_message, which has these
    return f"field:{fmt.name}.{name}"


def bins_of(f: Field) -> tuple[str, ...]:
    """The value classes of field ``f`` (module docstring)."""
    if f.reserved:
        return (ZERO, RESERVED_NONZERO)
    if f.enum:
        named = tuple(f.enum[v] for v in sorted(f.enum))
        return named + ((UNKNOWN_ENUM,) if len(f.enum) <= f.max_value else ())
    return (ZERO, ONE) if f.width == 1 else (ZERO, ONE, MAX)


def class_of(f: Field, value: int) -> str:
    """The bin of ``value`` in field ``f`` (``""``: a value in no bin, e.g. 5 of 8 bits)."""
    if f.reserved:
        return RESERVED_NONZERO if value else ZERO
    if f.enum:
        return f.enum.get(value, UNKNOWN_ENUM)
    if value == 0:
        return ZERO
    if value == 1:
        return ONE
    return MAX if value == f.max_value else ""


def field_points() -> list[CoverPoint]:
    """One point per covered field (shared points once), in format order."""
    points: dict[str, CoverPoint] = {}
    for fmt in FORMATS:
        for f in fmt.fields:
            name = point_name(fmt, f.name)
            if name is None or name in points:
                continue
            what = f.description or f.name
            points[name] = CoverPoint(name, "field", bins_of(f), f"{fmt.name}.{f.name}: {what}")
    return list(points.values())


def sample_word(cov: Coverage, fmt: BitFormat, word: int) -> None:
    """Sample every field of ``fmt`` read raw from the integer ``word``."""
    for pos in fmt.positions:
        f = pos.field
        name = point_name(fmt, f.name)
        if name is None:
            continue
        label = class_of(f, (word >> pos.shift) & f.max_value)
        if label:
            cov.hit(name, label)


def sample_bytes(cov: Coverage, fmt: BitFormat, data: bytes) -> bool:
    """Sample ``fmt`` from the first ``byte_length`` bytes of ``data``; False (nothing
    sampled) when ``data`` is shorter."""
    size = fmt.byte_length
    if len(data) < size:
        return False
    sample_word(cov, fmt, int.from_bytes(data[:size], "big"))
    return True


__all__ = ["FORMATS", "bins_of", "class_of", "field_points", "point_name", "sample_bytes",
           "sample_word"]
