"""Declarative bit-field formats: the one source of truth for every header layout.

A :class:`BitFormat` is an ordered table of :class:`Field` s, MSB first: the
first field occupies the most significant bits of the big-endian integer read
from the format's bytes. Every other view of a layout is derived from it:


* the codecs call :meth:`BitFormat.pack` / :meth:`BitFormat.unpack`;
* the Scapy layers are generated from :attr:`BitFormat.fields`
  (``ualink_ref.scapy_layers``);
* the tables in ``specs/`` are rendered by :meth:`BitFormat.markdown_table`
  and a test checks that the committed text matches;
* golden vectors name fields by :attr:`Field.name`.

Bit numbering in rendered tables is ``[msb:lsb]`` with bit ``bit_length - 1``
being the first bit of the first field (network order).
"""

from __future__ import annotations

import operator
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType

from ualink_ref.errors import (
    DecodeError,
    EncodeError,
    FieldRangeError,
    ReservedBitsError,
    TruncatedError,
)

#: Bytes-like types as a tuple: ``isinstance(x, a | b)`` builds a union object per call.
_BYTES_LIKE = (bytes, bytearray, memoryview)


@dataclass(frozen=True)
class Field:
    """One named bit field of a :class:`BitFormat`.

    ``provenance`` says where the field comes from: ``"public: <source>"`` for
    a publicly reported fact, ``"IEEE 802.3 ..."`` for a standard, or
    ``"project choice: <reason>"``. ``enum`` names the meaningful values; with
    ``strict_enum`` a decoder rejects any other value. A ``reserved`` field
    must be zero when encoded and, if its format checks reserved bits, when
    decoded.
    """

    name: str
    width: int
    description: str = ""
    provenance: str = ""
    enum: Mapping[int, str] | None = None
    reserved: bool = False
    strict_enum: bool = False
    default: int = 0

    def __post_init__(self) -> None:
        if not self.name.isidentifier():
            raise ValueError(f"field name {self.name!r} is not an identifier")
        if self.width <= 0:
            raise ValueError(f"field {self.name!r}: width must be positive")
        if not 0 <= self.default <= self.max_value:
            raise ValueError(f"field {self.name!r}: default does not fit")
        if self.enum is not None:
            object.__setattr__(self, "enum", MappingProxyType(dict(self.enum)))
            for value in self.enum:
                if not 0 <= value <= self.max_value:
                    raise ValueError(f"field {self.name!r}: enum value {value} does not fit")

    @property
    def max_value(self) -> int:
        """Largest value the field can hold."""
        return (1 << self.width) - 1

    def value_name(self, value: int) -> str | None:
        """The enum name of ``value``, or ``None`` when it has none."""
        return None if self.enum is None else self.enum.get(value)


@dataclass(frozen=True)
class FieldPosition:
    """Where a field sits in its format: ``shift`` is its LSB's distance from bit 0."""

    field: Field
    offset: int  # bits from the first (most significant) bit of the format
    shift: int  # position of the field's LSB in the format's integer value

    @property
    def msb(self) -> int:
        """Bit number of the field's most significant bit (format numbering)."""
        return self.shift + self.field.width - 1

    @property
    def lsb(self) -> int:
        """Bit number of the field's least significant bit (format numbering)."""
        return self.shift


class BitFormat:
    """An ordered, MSB-first table of named bit fields.

    ``check_reserved`` makes :meth:`unpack` reject non-zero reserved fields
    (with :class:`~ualink_ref.errors.ReservedBitsError`); formats whose
    reserved bits are "ignored on receive" set it to ``False``. Instances are
    immutable by convention and compare by name and fields.
    """

    __slots__ = (
        "_bit_length",
        "_by_name",
        "_byte_length",
        "_field_names",
        "_plan",
        "_positions",
        "_reserved_mask",
        "_strict",
        "check_reserved",
        "description",
        "fields",
        "name",
        "provenance",
    )

    def __init__(
        self,
        name: str,
        fields: Iterable[Field],
        *,
        description: str = "",
        provenance: str = "",
        check_reserved: bool = True,
    ) -> None:
        self.fields: tuple[Field, ...] = tuple(fields)
        if not self.fields:
            raise ValueError(f"format {name!r} has no fields")
        names = [f.name for f in self.fields]
        if len(set(names)) != len(names):
            raise ValueError(f"format {name!r} has duplicate field names")
        total = sum(f.width for f in self.fields)
        positions = []
        offset = 0
        for f in self.fields:
            positions.append(FieldPosition(f, offset, total - offset - f.width))
            offset += f.width
        self.name = name
        self.description = description
        self.provenance = provenance
        self.check_reserved = check_reserved
        self._positions: tuple[FieldPosition, ...] = tuple(positions)
        self._by_name: Mapping[str, FieldPosition] = MappingProxyType(
            {p.field.name: p for p in positions}
        )
        # Precomputed once (a format is immutable): the unpack plan (name, shift,
        # mask) per field, the reserved bits as one mask, and the strict-enum
        # fields, so from_int does one shift-and-mask per field and no lookups.
        self._bit_length = total
        self._byte_length = None if total % 8 else total // 8
        self._field_names = tuple(names)
        self._plan: tuple[tuple[str, int, int], ...] = tuple(
            (p.field.name, p.shift, p.field.max_value) for p in positions
        )
        self._reserved_mask = sum(
            p.field.max_value << p.shift for p in positions if p.field.reserved
        )
        self._strict: tuple[tuple[str, int, int, Mapping[int, str]], ...] = tuple(
            (p.field.name, p.shift, p.field.max_value, p.field.enum)
            for p in positions
            if p.field.strict_enum and p.field.enum is not None
        )

    def __repr__(self) -> str:
        return f"BitFormat({self.name!r}, {self.bit_length} bits, {len(self.fields)} fields)"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, BitFormat):
            return NotImplemented
        return (self.name, self.fields) == (other.name, other.fields)

    def __hash__(self) -> int:
        return hash((self.name, self.fields))

    # -- shape -----------------------------------------------------------------

    @property
    def bit_length(self) -> int:
        """Total width of the format in bits."""
        return self._bit_length

    @property
    def byte_length(self) -> int:
        """Width in bytes; only defined when the format is a whole number of bytes."""
        if self._byte_length is None:
            raise ValueError(f"format {self.name!r} is {self._bit_length} bits, not whole bytes")
        return self._byte_length

    @property
    def positions(self) -> tuple[FieldPosition, ...]:
        """Every field with its offset and shift, in declaration order."""
        return self._positions

    @property
    def field_names(self) -> tuple[str, ...]:
        """Field names in declaration (MSB-first) order."""
        return self._field_names

    def position(self, name: str) -> FieldPosition:
        """The position of field ``name`` (``KeyError`` if the format has none)."""
        return self._by_name[name]

    def field(self, name: str) -> Field:
        """The :class:`Field` called ``name``."""
        return self._by_name[name].field

    # -- integer codec ---------------------------------------------------------

    def to_int(self, values: Mapping[str, int] | None = None, /, **kwargs: int) -> int:
        """Pack field values into one integer; missing fields take their default.

        Raises :class:`EncodeError` naming the field for an unknown name, a
        non-integer, a value that does not fit, or a non-zero reserved field.
        """
        merged: dict[str, int] = dict(values or {})
        merged.update(kwargs)
        for key in merged:
            if key not in self._by_name:
                raise EncodeError(f"{self.name}: no field {key!r}", field=key)
        word = 0
        for pos in self._positions:
            f = pos.field
            value = merged.get(f.name, f.default)
            if type(value) is int and 0 <= value <= f.max_value and not (f.reserved and value):
                word |= value << pos.shift  # the common case: a plain int that fits
                continue
            if isinstance(value, bool) or not isinstance(value, int):
                try:
                    value = int(value.__index__())  # numpy integers and IntEnums
                except (AttributeError, TypeError):
                    raise EncodeError(
                        f"{self.name}.{f.name}: expected an integer, got {type(value).__name__}",
                        field=f.name,
                    ) from None
            if value < 0 or value > f.max_value:
                raise EncodeError(
                    f"{self.name}.{f.name}: {value} does not fit in {f.width} bits", field=f.name
                )
            if f.reserved and value:
                raise EncodeError(f"{self.name}.{f.name}: reserved, must be zero", field=f.name)
            word |= value << pos.shift
        return word

    def from_int(self, word: int) -> dict[str, int]:
        """Split an integer into field values, checking reserved bits and strict enums.

        ``word`` must be an integer (anything with ``__index__``); anything else
        raises :class:`~ualink_ref.errors.DecodeError`, like every other bad input.
        """
        try:
            word = operator.index(word)
        except TypeError:
            raise DecodeError(
                f"{self.name}: expected an integer, got {type(word).__name__}"
            ) from None
        if word < 0 or word >> self._bit_length:
            raise FieldRangeError(self.name, word, f"does not fit in {self._bit_length} bits")
        return self.unpack_int(word)

    def _raise_first_violation(self, word: int) -> None:
        """Raise the error for the first field (MSB first) that breaks a decode rule."""
        for pos in self._positions:
            f = pos.field
            value = (word >> pos.shift) & f.max_value
            if f.reserved and value and self.check_reserved:
                raise ReservedBitsError(f"{self.name}.{f.name}", value)
            if f.strict_enum and f.enum is not None and value not in f.enum:
                raise FieldRangeError(f"{self.name}.{f.name}", value, "unknown value")

    # -- byte codec ------------------------------------------------------------

    def pack(self, values: Mapping[str, int] | None = None, /, **kwargs: int) -> bytes:
        """Pack field values into ``byte_length`` big-endian bytes."""
        return self.to_int(values, **kwargs).to_bytes(self.byte_length, "big")

    def unpack_int(self, word: int) -> dict[str, int]:
        """:meth:`from_int` for callers that already hold a checked integer.

        Internal fast path: no type or range check; reserved bits and strict enums
        are still enforced.
        """
        values = {name: (word >> shift) & mask for name, shift, mask in self._plan}
        if (self.check_reserved and word & self._reserved_mask) or (
            self._strict
            and any((word >> shift) & mask not in enum for _, shift, mask, enum in self._strict)
        ):
            self._raise_first_violation(word)
        return values

    def unpack(self, data: bytes | bytearray | memoryview) -> dict[str, int]:
        """Unpack exactly ``byte_length`` bytes into a ``{field: value}`` dict."""
        if not isinstance(data, _BYTES_LIKE):
            raise TruncatedError(self.name, self.byte_length, -1)
        if len(data) != self.byte_length:
            raise TruncatedError(self.name, self.byte_length, len(data))
        return self.unpack_int(int.from_bytes(data, "big"))

    def unpack_from(self, data: bytes | bytearray | memoryview, offset: int = 0) -> dict[str, int]:
        """Unpack the format from ``data`` starting at byte ``offset``."""
        if not isinstance(data, _BYTES_LIKE):
            raise TruncatedError(self.name, self.byte_length, -1)
        if isinstance(offset, bool) or not isinstance(offset, int):
            raise DecodeError(f"{self.name}: offset must be an integer, got {offset!r:.40}")
        end = offset + self.byte_length
        if offset < 0 or end > len(data):
            raise TruncatedError(self.name, self.byte_length, max(0, len(data) - offset))
        return self.unpack_int(int.from_bytes(data[offset:end], "big"))

    # -- description -----------------------------------------------------------

    def describe(self, values: Mapping[str, int]) -> str:
        """A one-line ``name=value`` rendering with enum names, for humans and errors."""
        parts = []
        for f in self.fields:
            if f.reserved and not values.get(f.name):
                continue
            value = values.get(f.name, f.default)
            label = f.value_name(value)
            parts.append(f"{f.name}={label}({value})" if label else f"{f.name}={value:#x}")
        return f"{self.name}[" + " ".join(parts) + "]"

    def markdown_table(self) -> str:
        """Render the format as a Markdown table (bits, field, width, meaning, provenance)."""
        lines = [
            "| Bits | Field | Width | Description | Values | Provenance |",
            "|---|---|---:|---|---|---|",
        ]
        for pos in self._positions:
            f = pos.field
            bits = f"[{pos.msb}]" if f.width == 1 else f"[{pos.msb}:{pos.lsb}]"
            if f.enum:
                values = ", ".join(f"{v} = {n}" for v, n in sorted(f.enum.items()))
            elif f.reserved:
                values = "0"
            else:
                values = ""
            desc = f.description + (" (reserved, zero)" if f.reserved else "")
            lines.append(
                f"| {bits} | `{f.name}` | {f.width} | {_cell(desc)} | {_cell(values)} "
                f"| {_cell(f.provenance)} |"
            )
        return "\n".join(lines) + "\n"


def _cell(text: str) -> str:
    """Escape text for a Markdown table cell."""
    return text.replace("|", "\\|").replace("\n", " ")


def enum_of(*names: str, start: int = 0) -> dict[int, str]:
    """Number ``names`` consecutively from ``start``: a shorthand for simple enums."""
    return {start + i: n for i, n in enumerate(names)}


def formats_markdown(formats: Sequence[BitFormat]) -> str:
    """Render several formats, each under a heading, for a spec file."""
    chunks = []
    for fmt in formats:
        head = f"### `{fmt.name}` ({fmt.bit_length} bits)\n\n"
        desc = f"{fmt.description}\n\n" if fmt.description else ""
        chunks.append(head + desc + fmt.markdown_table())
    return "\n".join(chunks)
