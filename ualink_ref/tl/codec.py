"""Typed TL control fields: one value class per layout, packed with the layout's own shifts.

Each class below is the value of one :class:`~ualink_ref.bitfields.BitFormat`
of :mod:`ualink_ref.tl.fields`: its attributes are that format's fields, in
order, without ``ftype`` (the class *is* the FTYPE). Nothing is typed twice:
every shift and mask is read from the declaration when this module loads, and
``tests/tl/test_tl_codec.py`` checks each class's attribute list against its
format and both paths (``BitFormat.pack`` / ``unpack`` and these) bit for bit.

Pack any of them with :func:`pack_field`. Address fields hold **byte**
addresses: the wire carries bits 56..2 (``addr``) or 23..2 (``addr_lo``), so
packing drops the two low bits (which must be zero) and unpacking puts them
back as zeros.

These are ``NamedTuple`` s: immutable and typed; build them with keywords
(``Request(cmd=..., tag=..., ...)``) so that no two fields can be swapped silently.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import NamedTuple, TypeVar

from ualink_ref.bitfields import BitFormat
from ualink_ref.errors import DecodeError, EncodeError, FieldRangeError, TruncatedError
from ualink_ref.sizes import TL_HALF_BYTES
from ualink_ref.tl import field_code
from ualink_ref.tl import fields as F
from ualink_ref.tl.fields import SECTOR_BYTES, FType

_F = TypeVar("_F", bound=Callable[..., object])

#: Bytes-like types as a tuple: ``isinstance(x, a | b)`` builds a union object per call.
_BYTES_LIKE = (bytes, bytearray, memoryview)

#: Address bits a compressed request carries (``addr_lo``: bits 23..2, plus 1..0 = 0); an
#: address-cache way supplies the bits above.
ADDR_LO_BITS = F.COMPRESSED_REQUEST.field("addr_lo").width + 2


class FlowControl(NamedTuple):
    """FTYPE 0: shared-pool credit returns (all zero: a NOP sector)."""

    req_cmd: int = 0
    rsp_cmd: int = 0
    req_data: int = 0
    rsp_data: int = 0


class Request(NamedTuple):
    """FTYPE 1: an uncompressed request; ``addr`` is the byte address."""

    cmd: int
    vchan: int
    asi: int
    tag: int
    pool: int
    attr: int
    len: int
    metadata: int
    addr: int
    src_acc: int
    dst_acc: int
    cload: int
    cway: int
    numbeats: int


class Response(NamedTuple):
    """FTYPE 2: an uncompressed response."""

    vchan: int
    tag: int
    pool: int
    len: int
    offset: int
    status: int
    rd_wr: int
    last: int
    src_acc: int
    dst_acc: int
    spare: int = 0


class CompressedRequest(NamedTuple):
    """FTYPE 3: a compressed request; ``addr_lo`` is address bits 23..0 (1..0 zero)."""

    cmd: int
    vchan: int
    tag: int
    pool: int
    attr: int
    len: int
    cway: int
    numbeats: int
    addr_lo: int


class _CompressedResponse(NamedTuple):
    """The layout FTYPEs 4 and 5 share; each is its own subclass, so a field's type says which
    it is (they are siblings: neither is an instance of the other)."""

    vchan: int
    tag: int
    pool: int
    len: int
    offset: int = 0
    last: int = 1
    spare: int = 0


class CompressedResponseData(_CompressedResponse):
    """FTYPE 4: a compressed OKAY response with data."""

    __slots__ = ()


class CompressedResponseNoData(_CompressedResponse):
    """FTYPE 5: a compressed OKAY response without data (same layout as FTYPE 4)."""

    __slots__ = ()


class VcFlowControl(NamedTuple):
    """FTYPE 6: credit returns for one virtual channel."""

    vchan: int
    req_cmd: int = 0
    rsp_cmd: int = 0
    req_data: int = 0
    rsp_data: int = 0


#: Any typed control field.
TLField = (FlowControl | Request | Response | CompressedRequest | CompressedResponseData
           | CompressedResponseNoData | VcFlowControl)
AnyResponse = Response | CompressedResponseData | CompressedResponseNoData

#: FTYPE -> value class, and value class -> FTYPE.
CLASSES: dict[FType, type[TLField]] = {
    FType.FLOW_CONTROL: FlowControl,
    FType.REQUEST: Request,
    FType.RESPONSE: Response,
    FType.COMPRESSED_REQUEST: CompressedRequest,
    FType.COMPRESSED_RESPONSE_DATA: CompressedResponseData,
    FType.COMPRESSED_RESPONSE_NODATA: CompressedResponseNoData,
    FType.VC_FLOW_CONTROL: VcFlowControl,
}
FTYPE_OF: dict[type[TLField], FType] = {cls: ftype for ftype, cls in CLASSES.items()}


class _Layout(NamedTuple):
    """What the codec reads of one declaration besides the generated functions."""

    nbytes: int
    spec: tuple[tuple[str, int, int, int], ...]  # (name, shift, mask, low bits dropped)


def _layout(fmt: BitFormat, cls: type[TLField]) -> _Layout:
    names = [f.name for f in fmt.fields if f.name != "ftype"]
    if list(cls._fields) != names:  # the class must mirror its declaration exactly
        raise AssertionError(f"{cls.__name__} fields {cls._fields} != {fmt.name} {names}")
    low_bits = F.BYTE_ADDRESS_LOW_BITS
    return _Layout(nbytes=fmt.byte_length, spec=tuple(
        (n, fmt.position(n).shift, fmt.field(n).max_value, low_bits.get(n, 0)) for n in names))


_LAYOUTS: dict[type[TLField], _Layout] = {
    cls: _layout(F.FORMATS[ft], cls) for ft, cls in CLASSES.items()
}
#: FTYPE (0..15) -> (value class, layout) or ``None`` for an unknown FTYPE.
_KNOWN = {int(ftype) for ftype in CLASSES}
_BY_FTYPE: tuple[tuple[type[TLField], _Layout] | None, ...] = tuple(
    (CLASSES[FType(ft)], _LAYOUTS[CLASSES[FType(ft)]]) if ft in _KNOWN else None
    for ft in range(16)
)
#: Sectors a field of each FTYPE occupies (0: unknown FTYPE).
SECTORS_OF: tuple[int, ...] = tuple(
    (entry[1].nbytes // SECTOR_BYTES) if entry else 0 for entry in _BY_FTYPE
)


#: Per class, the generated encode and unpack functions of its layout (tl/field_code.py;
#: ``None`` only while that module is being regenerated for a new layout).
_ENCODE: dict[type[TLField], Callable[..., bytes] | None] = {
    cls: field_code.ENCODE_BY_FTYPE.get(int(ftype)) for ftype, cls in CLASSES.items()}
_UNPACK: dict[type[TLField], Callable[[int], tuple[int, ...]] | None] = {
    cls: field_code.UNPACK_BY_FTYPE.get(int(ftype)) for ftype, cls in CLASSES.items()}
#: FTYPE -> (its value class's ``_make``, its generated unpack function), or ``None`` for
#: an unknown FTYPE (or one whose code is being regenerated): a received field is read
#: in these two calls, the receive path's per-field cost.
_READ_BY_FTYPE: tuple[tuple[Callable[[Iterable[int]], TLField],
                            Callable[[int], tuple[int, ...]]] | None, ...] = tuple(
    (entry[0]._make, unpack) if entry is not None and (unpack := _UNPACK[entry[0]]) else None
    for entry in _BY_FTYPE)


def pack_field(value: TLField) -> bytes:
    """The bytes of any typed field (its class names its FTYPE); :class:`EncodeError`
    naming the field of a value that does not fit or is not an integer.

    Each field value is checked against its declared width, then shifted into place,
    by the layout's function generated from the declaration (:mod:`~ualink_ref.tl.field_code`).
    """
    if type(value) not in _ENCODE:
        raise EncodeError(f"{type(value).__name__} is not a TL field class")
    return _coder(_ENCODE, type(value))(**value._asdict())


def _coder(table: Mapping[type[TLField], _F | None], cls: type[TLField]) -> _F:
    """``cls``'s generated function from ``table``; a clear error while tl/field_code.py
    lags a layout added to tl/fields.py (run ``python -m ualink_ref.tl.field_code_gen``)."""
    coder = table[cls]
    if coder is None:
        raise AssertionError(f"tl/field_code.py has no code for {cls.__name__}: "
                             "run python -m ualink_ref.tl.field_code_gen")
    return coder


def _unpack(cls: type[TLField], word: int) -> TLField:
    """The ``cls`` value whose bits are ``word`` (byte addresses put back at byte scale)."""
    return cls._make(_coder(_UNPACK, cls)(word))


def unpack_word(ftype: int, word: int) -> TLField:
    """The typed value of a field of type ``ftype`` whose bits are ``word`` (no checks
    but the FTYPE: an unknown one is a :class:`FieldRangeError`)."""
    entry = _BY_FTYPE[ftype] if 0 <= ftype < 16 else None
    if entry is None:
        raise FieldRangeError("ftype", ftype, "unknown TL field type")
    return _unpack(entry[0], word)


def unpack_field(data: bytes | bytearray | memoryview) -> TLField:
    """Decode one whole control field (its length must match its FTYPE)."""
    if not isinstance(data, _BYTES_LIKE) or len(data) < SECTOR_BYTES:
        size = len(data) if isinstance(data, _BYTES_LIKE) else -1
        raise TruncatedError("TL field", SECTOR_BYTES, size)
    ftype = data[0] >> 4
    sectors = SECTORS_OF[ftype]
    if not sectors:
        raise FieldRangeError("ftype", ftype, "unknown TL field type")
    if len(data) != sectors * SECTOR_BYTES:
        raise TruncatedError(F.FORMATS[ftype].name, sectors * SECTOR_BYTES, len(data))
    return unpack_word(ftype, int.from_bytes(data, "big"))


#: A half-flit read as one 256-bit integer: masks keeping sectors s..7, the shift of the
#: FTYPE of a field starting at sector s, and the shift of a field ending before sector e.
_HALF_BITS = 8 * TL_HALF_BYTES
_REST_MASK = tuple((1 << (_HALF_BITS - 32 * s)) - 1 for s in range(8))
_FTYPE_SHIFT = tuple(_HALF_BITS - 32 * s - 4 for s in range(8))
_END_SHIFT = tuple(_HALF_BITS - 32 * e for e in range(9))


def decode_control_half(half: bytes | bytearray | memoryview) -> list[tuple[int, TLField]]:
    """``(sector, field)`` for every field of one control half-flit, stopping at the
    all-zero rest (NOP padding: only sectors that hold something are returned).

    Raises :class:`~ualink_ref.errors.DecodeError` for an unknown FTYPE or a field
    that straddles the half-flit (the walk is :func:`control_words`).
    """
    out: list[tuple[int, TLField]] = []
    sector = 0
    for ftype, bits in control_words(half):  # it checked every FTYPE
        reader = _READ_BY_FTYPE[ftype]
        value = reader[0](reader[1](bits)) if reader is not None else unpack_word(ftype, bits)
        out.append((sector, value))
        sector += SECTORS_OF[ftype]
    return out


def control_words(half: bytes | bytearray | memoryview) -> list[tuple[int, int]]:
    """``(ftype, bits)`` for every field of one control half-flit, in order: the walk of
    :func:`decode_control_half` (same stop at NOP padding, same errors) without building
    the typed values, for a reader that needs a few bits of each field only (the
    dissector's framing). ``unpack_word(ftype, bits)`` is the field's typed value.
    """
    if not isinstance(half, _BYTES_LIKE) or len(half) != TL_HALF_BYTES:
        size = len(half) if isinstance(half, _BYTES_LIKE) else -1
        raise TruncatedError("TL control half-flit", TL_HALF_BYTES, size)
    # One 256-bit integer: field k's bits are a shift away, "the rest is NOP" one test.
    rest_all = int.from_bytes(half, "big")
    out: list[tuple[int, int]] = []
    sector = 0
    while sector < 8:
        rest = rest_all & _REST_MASK[sector]
        if not rest:
            break
        ftype = rest >> _FTYPE_SHIFT[sector]
        size = SECTORS_OF[ftype]
        if not size:
            raise FieldRangeError("ftype", ftype, f"unknown TL field type at sector {sector}")
        end = sector + size
        if end > 8:
            raise DecodeError(f"TL field type {ftype} at sector {sector} straddles the half-flit")
        out.append((ftype, rest >> _END_SHIFT[end]))
        sector = end
    return out


def as_dict(value: TLField) -> dict[str, int]:
    """The field's values as the readable codec names them (``ftype`` included, addresses
    in the wire's 4-byte units), i.e. what ``BitFormat.unpack`` returns."""
    layout = _LAYOUTS[type(value)]
    out = {"ftype": int(FTYPE_OF[type(value)])}
    for v, (name, _shift, _mask, low) in zip(value, layout.spec, strict=True):
        out[name] = v >> low
    return out


def from_dict(ftype: int, values: Mapping[str, int]) -> TLField:
    """The typed value of a field given as the readable codec's dict (the inverse of
    :func:`as_dict`; ``ftype`` in ``values`` is ignored, missing fields are zero)."""
    entry = _BY_FTYPE[ftype] if 0 <= ftype < 16 else None
    if entry is None:
        raise FieldRangeError("ftype", ftype, "unknown TL field type")
    cls, layout = entry
    return cls._make([values.get(name, 0) << low for name, _s, _m, low in layout.spec])


def format_of(value: TLField) -> BitFormat:
    """The declaration ``value`` is an instance of."""
    return F.FORMATS[FTYPE_OF[type(value)]]


__all__ = [
    "ADDR_LO_BITS",
    "CLASSES",
    "FTYPE_OF",
    "SECTORS_OF",
    "AnyResponse",
    "CompressedRequest",
    "CompressedResponseData",
    "CompressedResponseNoData",
    "FlowControl",
    "Request",
    "Response",
    "TLField",
    "VcFlowControl",
    "as_dict",
    "control_words",
    "decode_control_half",
    "format_of",
    "from_dict",
    "pack_field",
    "unpack_field",
    "unpack_word",
]
