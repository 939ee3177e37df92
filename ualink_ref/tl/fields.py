"""TL control fields: every layout declared once as a :class:`BitFormat`.

A TL control half-flit holds 8 sectors of 4 bytes; a control field occupies
one, two or four whole sectors and starts with a 4-bit FTYPE that says which
field it is (and therefore how many sectors it takes). The widths of FTYPE 0,
1 and 2 are the publicly reported UALink 200G 1.0 shapes; FTYPE 3, 4, 5 (the
compressed forms) and 6 (per-VC flow control) are filled in by this project —
see ``specs/tl.md`` for the model and the reasons.

The codecs here are the slow, readable path (``BitFormat.pack`` / ``unpack``,
dicts of field values). The engine in :mod:`ualink_ref.tl.transaction` packs
with shifts taken from these same declarations (:func:`shift_of`), so nothing
is typed twice.
"""

from __future__ import annotations

from collections.abc import Mapping
from enum import IntEnum

from ualink_ref.bitfields import BitFormat, Field
from ualink_ref.errors import EncodeError, FieldRangeError, TruncatedError

THIRD_PARTY = "public third-party model: rosslwheeler/ualink_private"
PUB = f"{THIRD_PARTY}, citing spec table 5-29 (field width and order)"
PUB_RSP = f"{THIRD_PARTY}, citing spec table 5-30 (field width and order)"
PUB_FC = f"{THIRD_PARTY}, citing spec table 5-38 (field width and order)"
SAME = "project choice: same meaning as the uncompressed field"
VCFC = "project choice: as FTYPE 0, for one VC (FTYPE 0 has no VC number)"
CMPR = "project choice: compressed layout (only its size is public)"
SECTOR_BYTES = 4  # public: a half-flit is 8 sectors of 4 bytes


class FType(IntEnum):
    """The 4-bit field type that opens every control field."""

    FLOW_CONTROL = 0  # also NOP when every credit count is zero
    REQUEST = 1
    RESPONSE = 2
    COMPRESSED_REQUEST = 3
    COMPRESSED_RESPONSE_DATA = 4
    COMPRESSED_RESPONSE_NODATA = 5
    VC_FLOW_CONTROL = 6


FTYPE_NAMES: dict[int, str] = {int(t): t.name for t in FType}

COMMANDS: dict[int, str] = {
    0x03: "Read",
    0x28: "Write",
    0x29: "WriteFull",
    0x2A: "WriteMessage",
    0x30: "AtomicR",
    0x32: "AtomicNR",
}

STATUS_NAMES: dict[int, str] = {
    0: "OKAY",
    1: "UNSUPPORTED_REQUEST",
    2: "DECODE_ERROR",
    3: "DATA_ERROR",
}


FTYPE_PROV = (
    f"{THIRD_PARTY}, citing spec tables 5-29 to 5-38: 4-bit FTYPE opens every "
    "field, values 0-5; project choice: 4 = with data, "
    "5 = without, 6 = per-VC flow control"
)


def _ftype(value: FType, provenance: str = FTYPE_PROV) -> Field:
    return Field(
        "ftype",
        4,
        "field type: selects the layout and the number of sectors",
        provenance,
        enum=FTYPE_NAMES,
        default=int(value),
    )


FLOW_CONTROL = BitFormat(
    "tl_flow_control",
    [
        _ftype(FType.FLOW_CONTROL),
        Field("req_cmd", 6, "request-command credits returned (shared pool)", PUB_FC),
        Field("rsp_cmd", 6, "response-command credits returned (shared pool)", PUB_FC),
        Field("req_data", 8, "request-data credits returned, 64-byte buffers (shared pool)",
              PUB_FC),
        Field("rsp_data", 8, "response-data credits returned, 64-byte buffers (shared pool)",
              PUB_FC),
    ],
    description=(
        "Flow control / NOP (1 sector). Returns shared-pool credits as increments; all "
        "zero is a NOP, which is also how unused sectors are padded."
    ),
    provenance=PUB_FC,
)

VC_FLOW_CONTROL = BitFormat(
    "tl_vc_flow_control",
    [
        _ftype(FType.VC_FLOW_CONTROL,
               f"{THIRD_PARTY}, citing spec table 5-38: 4-bit FTYPE; "
               "project choice: value 6"),
        Field("vchan", 2, "virtual channel whose credits are returned", VCFC),
        Field("req_cmd", 5, "request-command credits returned to vchan", VCFC),
        Field("rsp_cmd", 5, "response-command credits returned to vchan", VCFC),
        Field("req_data", 8, "request-data credits returned to vchan", VCFC),
        Field("rsp_data", 8, "response-data credits returned to vchan", VCFC),
    ],
    description=(
        "Per-virtual-channel flow control (1 sector). Project choice: the public FTYPE 0 "
        "field has no VC number, so per-VC returns use a free FTYPE."
    ),
    provenance=VCFC,
)

REQUEST = BitFormat(
    "tl_request",
    [
        _ftype(FType.REQUEST),
        Field("cmd", 6, "UPLI command; cmd[5:4] 00 read, 10 write, 11 atomic", PUB, enum=COMMANDS),
        Field("vchan", 2, "virtual channel 0..3", PUB),
        Field("asi", 2, "address space identifier; 0 = memory", PUB),
        Field("tag", 11, "originator tag, matched by the response", PUB),
        Field("pool", 1, "1: credits taken from the shared pool, 0: from vchan's", PUB),
        Field("attr", 8, "attributes; atomics: [7:4] op, [3:0] zero (project choice)", PUB),
        Field("len", 6, "number of 4-byte words minus one (operand words for atomics)", PUB),
        Field("metadata", 8, "opaque, carried to the target unchanged", PUB),
        Field("addr", 55, "address bits 56..2 (4-byte granularity)", PUB),
        Field("src_acc", 10, "source accelerator ID", PUB),
        Field("dst_acc", 10, "destination accelerator ID", PUB),
        Field("cload", 1, "1: also load this request into address-cache way cway", PUB),
        Field("cway", 2, "address-cache way to load (with cload)", PUB),
        Field("numbeats", 2, "64-byte data beats carried minus one (0 without data)", PUB),
    ],
    description="Uncompressed request (4 sectors).",
    provenance=PUB,
)

RESPONSE = BitFormat(
    "tl_response",
    [
        _ftype(FType.RESPONSE),
        Field("vchan", 2, "virtual channel of the request", PUB_RSP),
        Field("tag", 11, "tag of the request being answered", PUB_RSP),
        Field("pool", 1, "1: credits taken from the shared pool, 0: from vchan's", PUB_RSP),
        Field("len", 2, "64-byte data beats carried minus one (0 without data)", PUB_RSP),
        Field("offset", 2, "index of the first beat within the request's data", PUB_RSP),
        Field("status", 4, "completion status", PUB_RSP, enum=STATUS_NAMES),
        Field("rd_wr", 1, "0: read-type (data returned when OKAY), 1: write-type", PUB_RSP),
        Field("last", 1, "1: final response for this tag", PUB_RSP),
        Field("src_acc", 10, "responder (the request's dst_acc)", PUB_RSP),
        Field("dst_acc", 10, "originator (the request's src_acc)", PUB_RSP),
        Field("spare", 16, "spare", PUB_RSP, reserved=True),
    ],
    description="Uncompressed response (2 sectors).",
    provenance=PUB_RSP,
)

COMPRESSED_REQUEST = BitFormat(
    "tl_compressed_request",
    [
        _ftype(FType.COMPRESSED_REQUEST),
        Field("cmd", 6, "UPLI command", SAME, enum=COMMANDS),
        Field("vchan", 2, "virtual channel 0..3", SAME),
        Field("tag", 11, "originator tag", SAME),
        Field("pool", 1, "shared-pool credit flag", SAME),
        Field("attr", 8, "attributes (as uncompressed)", SAME),
        Field("len", 6, "words minus one (as uncompressed)", SAME),
        Field("cway", 2, "address-cache way supplying asi, src/dst, metadata, addr[56:24]",
              CMPR),
        Field("numbeats", 2, "data beats minus one (as uncompressed)", SAME),
        Field("addr_lo", 22, "address bits 23..2 (the way holds bits 56..24)", CMPR),
    ],
    description=(
        "Compressed request (2 sectors; size public, layout a project choice). The rest of "
        "the request comes from an address-cache way loaded by an earlier uncompressed "
        "request with cload=1."
    ),
    provenance=(f"{THIRD_PARTY}, citing spec table 5-31: size 2 sectors; "
                "project choice: layout"),
)


def _compressed_response(ftype: FType, what: str) -> BitFormat:
    return BitFormat(
        f"tl_compressed_response_{what}",
        [
            _ftype(ftype),
            Field("vchan", 2, "virtual channel of the request", SAME),
            Field("tag", 11, "tag of the request being answered", SAME),
            Field("pool", 1, "shared-pool credit flag", SAME),
            Field("len", 2, "data beats minus one (0 without data)", SAME),
            Field("offset", 2, "first beat index", SAME),
            Field("last", 1, "final response for this tag", SAME),
            Field("spare", 9, "spare", CMPR, reserved=True),
        ],
        description=(
            f"Compressed response {what.replace('_', ' ')} (1 sector; size public, layout a "
            "project choice). Implies status OKAY; src/dst come from the tag's request."
        ),
        provenance=(f"{THIRD_PARTY}, citing spec tables 5-34 and 5-36: size 1 "
                    "sector; project choice: layout"),
    )


COMPRESSED_RESPONSE_DATA = _compressed_response(FType.COMPRESSED_RESPONSE_DATA, "with_data")
COMPRESSED_RESPONSE_NODATA = _compressed_response(FType.COMPRESSED_RESPONSE_NODATA, "no_data")

#: FTYPE -> layout.
#: Fields that hold byte addresses, and the low bits of them the wire leaves out
#: (``addr`` carries bits 56..2, ``addr_lo`` bits 23..2; both low bits are zero).
BYTE_ADDRESS_LOW_BITS: dict[str, int] = {"addr": 2, "addr_lo": 2}

def misfit(layout: str, fields: tuple[tuple[str, object, int, int], ...]) -> EncodeError:
    """The error naming the first of ``fields`` — ``(name, value, largest, low bits that
    must be zero)`` — whose value does not fit (the generated encoders' refusal)."""
    for name, value, largest, low in fields:
        if (not isinstance(value, int) or not 0 <= value <= largest
                or value & ((1 << low) - 1)):
            return EncodeError(f"{layout}.{name} = {value!r} does not fit", field=name)
    return EncodeError(f"{layout} does not fit its layout")


FORMATS: dict[int, BitFormat] = {
    FType.FLOW_CONTROL: FLOW_CONTROL,
    FType.REQUEST: REQUEST,
    FType.RESPONSE: RESPONSE,
    FType.COMPRESSED_REQUEST: COMPRESSED_REQUEST,
    FType.COMPRESSED_RESPONSE_DATA: COMPRESSED_RESPONSE_DATA,
    FType.COMPRESSED_RESPONSE_NODATA: COMPRESSED_RESPONSE_NODATA,
    FType.VC_FLOW_CONTROL: VC_FLOW_CONTROL,
}

#: FTYPE -> number of 4-byte sectors the field occupies.
SECTORS: dict[int, int] = {ft: fmt.byte_length // SECTOR_BYTES for ft, fmt in FORMATS.items()}

ALL_FORMATS: tuple[BitFormat, ...] = tuple(FORMATS.values())


def shift_of(fmt: BitFormat, name: str) -> int:
    """Bit position of field ``name``'s LSB in ``fmt``'s integer (for fast packing)."""
    return fmt.position(name).shift


def _byte_string(data: object, what: str) -> bytes | bytearray | memoryview:
    """``data`` when it is a buffer of single bytes; else :class:`TruncatedError`
    (a public decoder raises only ``UALinkError``, whatever it is given)."""
    if isinstance(data, bytes | bytearray):
        return data
    try:
        view = memoryview(data)  # type: ignore[arg-type]
    except TypeError:
        raise TruncatedError(what, SECTOR_BYTES, -1) from None
    if view.itemsize != 1 or view.ndim != 1:
        raise TruncatedError(f"{what} (bytes)", SECTOR_BYTES, -1)
    return view.cast("B")


def field_sectors(first_sector: bytes | bytearray | memoryview) -> int:
    """Sectors taken by the field whose first sector is given (reads only FTYPE)."""
    first_sector = _byte_string(first_sector, "tl field")
    if len(first_sector) < 1:
        raise TruncatedError("tl field", SECTOR_BYTES, len(first_sector))
    ftype = first_sector[0] >> 4
    sectors = SECTORS.get(ftype)
    if sectors is None:
        raise FieldRangeError("ftype", ftype, "unknown TL field type")
    return sectors


def encode_field(ftype: int, values: Mapping[str, int]) -> bytes:
    """Pack one control field of type ``ftype`` (FTYPE is filled in)."""
    fmt = FORMATS.get(ftype)
    if fmt is None:
        raise FieldRangeError("ftype", ftype, "unknown TL field type")
    merged = dict(values)
    merged["ftype"] = int(ftype)
    return fmt.pack(merged)


def decode_field(data: bytes | bytearray | memoryview) -> tuple[BitFormat, dict[str, int]]:
    """Decode one whole control field (its length must match its FTYPE)."""
    data = _byte_string(data, "tl field")
    if len(data) < SECTOR_BYTES:
        raise TruncatedError("tl field", SECTOR_BYTES, len(data))
    sectors = field_sectors(data)
    fmt = FORMATS[data[0] >> 4]
    if len(data) != sectors * SECTOR_BYTES:
        raise TruncatedError(fmt.name, sectors * SECTOR_BYTES, len(data))
    return fmt, fmt.unpack(data)


__all__ = [
    "ALL_FORMATS",
    "COMMANDS",
    "COMPRESSED_REQUEST",
    "COMPRESSED_RESPONSE_DATA",
    "COMPRESSED_RESPONSE_NODATA",
    "FLOW_CONTROL",
    "FORMATS",
    "FTYPE_NAMES",
    "REQUEST",
    "RESPONSE",
    "SECTORS",
    "SECTOR_BYTES",
    "STATUS_NAMES",
    "VC_FLOW_CONTROL",
    "FType",
    "decode_field",
    "encode_field",
    "field_sectors",
    "shift_of",
]
