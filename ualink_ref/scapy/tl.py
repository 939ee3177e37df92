"""Scapy layers of the transaction layer, generated from ``ualink_ref.tl.fields``.

Every TL control field type gets a layer from :func:`packet_class` (no layout
is typed here). A control half-flit is a list of those fields, chosen sector
by sector from the FTYPE nibble; a data half-flit is 32 raw bytes; a TL flit
is two half-flits, control or data by the rules of ``ualink_ref.tl.flit``
(the data half-flits a control half-flit announces follow it). The UPLI
request / response views put a request or response field together with the
data half-flits that belong to it.

Imports Scapy (GPL-2.0-only): use it through ``ualink_ref.scapy_layers``.
"""

from __future__ import annotations

import contextlib
from typing import Any

from scapy.fields import PacketListField, StrFixedLenField
from scapy.packet import Packet

from ualink_ref.errors import DecodeError
from ualink_ref.scapy.gen import ExactLenField, packet_class
from ualink_ref.sizes import TL_FLIT_BYTES
from ualink_ref.tl.codec import decode_control_half, unpack_word
from ualink_ref.tl.fields import FORMATS, REQUEST, RESPONSE, SECTOR_BYTES, SECTORS, FType
from ualink_ref.tl.flit import HALF_FLIT_BYTES, SECTORS_PER_HALF, data_halves_of
from ualink_ref.tl.framing import data_halves


def _no_payload(self: Packet, s: bytes) -> tuple[bytes, bytes]:
    """A field layer is followed by the next field, not by a payload."""
    return b"", s


#: One Scapy layer per TL control field type, keyed by FTYPE.
TL_FIELD_LAYERS: dict[int, type[Packet]] = {
    int(ftype): packet_class(fmt, attrs={"extract_padding": _no_payload})
    for ftype, fmt in FORMATS.items()
}
# Each also under the class name its repr shows (``<TlRequest ...>``), so the name a user
# reads can be imported (from ``ualink_ref.scapy_layers``) and instances pickle.
TlFlowControl = TL_FIELD_LAYERS[FType.FLOW_CONTROL]
TlRequest = TL_FIELD_LAYERS[FType.REQUEST]
TlResponse = TL_FIELD_LAYERS[FType.RESPONSE]
TlCompressedRequest = TL_FIELD_LAYERS[FType.COMPRESSED_REQUEST]
TlCompressedResponseWithData = TL_FIELD_LAYERS[FType.COMPRESSED_RESPONSE_DATA]
TlCompressedResponseNoData = TL_FIELD_LAYERS[FType.COMPRESSED_RESPONSE_NODATA]
TlVcFlowControl = TL_FIELD_LAYERS[FType.VC_FLOW_CONTROL]


def _values(field: Packet) -> dict[str, int]:
    return {f.name: field.getfieldval(f.name) for f in field.fields_desc}


def _field_data_halves(field: Packet) -> int:
    """Data half-flits that the field announces (0 for an unknown command or sector)."""
    if "ftype" not in getattr(field, "fieldtype", {}):  # TLUnknownSector, Raw
        return 0
    ftype = field.getfieldval("ftype")
    fmt = FORMATS.get(ftype)
    if fmt is None or any(f.name not in field.fieldtype for f in fmt.fields):
        return 0  # an FTYPE set (or fuzzed) to another layout's value: no data rule applies
    try:
        return data_halves_of(ftype, _values(field))
    except DecodeError:  # unknown command: the dissector shows it, the data length is unknown
        return 0


def _next_field(
    pkt: Packet, lst: list[Any], cur: Packet | None, remain: bytes
) -> type[Packet] | None:
    if not remain:
        return None
    ftype = remain[0] >> 4
    if ftype not in TL_FIELD_LAYERS or SECTORS[ftype] * SECTOR_BYTES > len(remain):
        return TLUnknownSector  # unknown type, or a field that would straddle the half-flit
    return TL_FIELD_LAYERS[ftype]


def _pad(data: bytes, size: int) -> bytes:
    """``data`` zero-padded to ``size`` bytes (zero sectors are NOPs); longer is kept."""
    return data + bytes(max(0, size - len(data)))


class TLUnknownSector(Packet):
    """A sector whose FTYPE is not modelled: shown raw, 4 bytes."""

    name = "TL unknown sector"
    fields_desc = [StrFixedLenField("raw", b"\0" * 4, 4)]  # noqa: RUF012

    def extract_padding(self, s: bytes) -> tuple[bytes, bytes]:
        """Followed by the next sector."""
        return b"", s

    def mysummary(self) -> str:
        """``TL unknown sector ftype=N``."""
        raw = self.getfieldval("raw") or b"\0"
        return f"TL unknown sector ftype={raw[0] >> 4}"


def _field_summary(field: Packet) -> str:
    """A control field for a half-flit's summary (``""`` for a NOP sector)."""
    if not isinstance(field, Packet) or "ftype" not in getattr(field, "fieldtype", {}):
        return field.summary() if isinstance(field, Packet) else ""
    values = _values(field)
    if values.get("ftype") == FType.FLOW_CONTROL and not any(
            v for k, v in values.items() if k != "ftype"):
        return ""
    return str(field.mysummary())


class TLControlHalf(Packet):
    """A 32-byte control half-flit: its control fields in sector order (NOPs included).

    Built with fewer than 8 sectors of fields it is padded with zero (NOP) sectors;
    the default is 8 NOP flow-control fields, so ``fuzz()`` randomises each sector.
    """

    name = "TL control half-flit"
    fields_desc = [  # noqa: RUF012
        PacketListField("ctrl_fields",
                        [TL_FIELD_LAYERS[FType.FLOW_CONTROL]() for _ in range(SECTORS_PER_HALF)],
                        next_cls_cb=_next_field, max_count=8,
                        length_from=lambda pkt: HALF_FLIT_BYTES),
    ]

    def extract_padding(self, s: bytes) -> tuple[bytes, bytes]:
        """The next half-flit follows."""
        return b"", s

    def post_build(self, pkt: bytes, pay: bytes) -> bytes:
        """Pad to 32 bytes with NOP sectors."""
        return _pad(pkt, HALF_FLIT_BYTES) + pay

    def data_halves(self) -> int:
        """Data half-flits announced by this half-flit's fields."""
        return sum(_field_data_halves(f) for f in self.getfieldval("ctrl_fields"))

    def mysummary(self) -> str:
        """``TL control half: <fields>`` (NOP sectors left out)."""
        shown = [t for t in (_field_summary(f) for f in self.getfieldval("ctrl_fields")) if t]
        return "TL control half: " + ("; ".join(shown) or "NOP")


class TLDataHalf(Packet):
    """A 32-byte data half-flit (payload bytes or byte enables)."""

    name = "TL data half-flit"
    fields_desc = [StrFixedLenField("data", b"\0" * HALF_FLIT_BYTES, HALF_FLIT_BYTES)]  # noqa: RUF012

    def extract_padding(self, s: bytes) -> tuple[bytes, bytes]:
        """The next half-flit follows."""
        return b"", s

    def mysummary(self) -> str:
        """``TL data half <first bytes>``."""
        data = bytes(self.getfieldval("data") or b"")
        return f"TL data half {data[:8].hex()}{'...' if len(data) > 8 else ''}"


def _next_half(
    pkt: Packet, lst: list[Any], cur: Packet | None, remain: bytes
) -> type[Packet] | None:
    if len(lst) >= 2 or not remain:
        return None
    pending = getattr(pkt, "pending_before", 0)
    for half in [*lst, cur] if cur is not None else lst:
        pending = half.data_halves() if isinstance(half, TLControlHalf) else max(0, pending - 1)
    return TLDataHalf if pending else TLControlHalf


class TLFlit(Packet):
    """A 64-byte TL flit: two half-flits.

    Dissected standalone, the flit starts with a control half-flit; set the
    class attribute-like instance field ``pending_before`` (via
    :func:`tl_flit`) when the flit continues data owed by an earlier flit.
    """

    name = "TL flit"
    fields_desc = [  # noqa: RUF012
        PacketListField("halves", [TLControlHalf(), TLControlHalf()], next_cls_cb=_next_half,
                        max_count=2, length_from=lambda pkt: TL_FLIT_BYTES),
    ]
    pending_before = 0

    def post_build(self, pkt: bytes, pay: bytes) -> bytes:
        """Pad to 64 bytes (a missing half is a NOP control half-flit)."""
        return _pad(pkt, TL_FLIT_BYTES) + pay

    def mysummary(self) -> str:
        """``TL flit [<half 0>] [<half 1>]``: the nested half-flits' summaries."""
        return "TL flit " + " ".join(f"[{h.mysummary()}]"
                                     for h in self.getfieldval("halves"))

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickled as ``tl_flit(bytes, pending_before)``: a flit that continues owed data
        is of a class made at run time (:func:`tl_flit`), which pickle cannot name."""
        _rebuild, args, *state = super().__reduce__()
        return (tl_flit, (*args, self.pending_before), *state)


#: ``TLFlit`` subclasses by ``pending_before`` (a class per value, made once: Scapy
#: prepares every new layer class on first use, which costs more than the dissection).
_CONTINUING: dict[int, type[TLFlit]] = {}


def tl_flit(data: bytes, pending: int = 0) -> TLFlit:
    """Dissect a TL flit into Scapy layers, given the data half-flits owed before it."""
    cls = TLFlit
    if pending:
        # named TLFlit in reprs, as the class users import; placed with it
        cls = _CONTINUING.get(pending) or _CONTINUING.setdefault(pending, type(
            "TLFlit", (TLFlit,), {"pending_before": pending, "__module__": TLFlit.__module__}))
    packet: TLFlit = cls(data)
    return packet


def control_half_data_halves(half: bytes) -> int:
    """What ``TLControlHalf(half).data_halves()`` returns, read from the bytes alone.

    The layer's own walk: sector by sector, a field of a known FTYPE that fits in
    what is left of the half-flit, else a 4-byte unknown sector (no data); a
    field's data half-flits by :func:`ualink_ref.tl.framing.data_halves`, 0 for
    an unknown command. Used where the count is needed without building layers.
    """
    # The usual half-flit decodes whole with the codec (fields, then an all-zero rest of
    # NOP sectors that owe nothing): the same count, without the sector-by-sector walk.
    with contextlib.suppress(DecodeError):
        return sum(data_halves(value) for _sector, value in decode_control_half(half))
    total = pos = 0
    end = len(half)
    while pos < end:
        ftype = half[pos] >> 4
        size = SECTORS[ftype] * SECTOR_BYTES if ftype in TL_FIELD_LAYERS else 0
        if not size or pos + size > end:
            pos += SECTOR_BYTES  # TLUnknownSector
            continue
        # an unknown command's data length is unknown: 0, as in the layer
        with contextlib.suppress(DecodeError):
            total += data_halves(unpack_word(ftype, int.from_bytes(half[pos:pos + size], "big")))
        pos += size
    return total


def pending_after(data: bytes, pending: int = 0) -> int:
    """Data half-flits owed after the 64-byte TL flit ``data`` by the rules of
    :class:`TLFlit` (``tl_flit(data, pending)``), without building its layers."""
    for k in range(0, TL_FLIT_BYTES, HALF_FLIT_BYTES):
        pending = pending - 1 if pending else control_half_data_halves(
            data[k:k + HALF_FLIT_BYTES])
    return pending


def _upli_data_length(pkt: Packet) -> int:
    return HALF_FLIT_BYTES * _field_data_halves(pkt)


#: UPLI request view: an uncompressed request field with the data half-flits it carries
#: (byte enables then beats for a Write; beats for WriteFull / atomics).
UPLIRequest = packet_class(
    REQUEST,
    class_name="UPLIRequest",
    display_name="UPLI request",
    extra_fields=[ExactLenField("data", b"", length_from=_upli_data_length)],
)

#: UPLI response view: an uncompressed response field with its data beats.
UPLIResponse = packet_class(
    RESPONSE,
    class_name="UPLIResponse",
    display_name="UPLI response",
    extra_fields=[ExactLenField("data", b"", length_from=_upli_data_length)],
)

__all__ = [
    "TL_FIELD_LAYERS",
    "TLControlHalf",
    "TLDataHalf",
    "TLFlit",
    "TLUnknownSector",
    "TlCompressedRequest",
    "TlCompressedResponseNoData",
    "TlCompressedResponseWithData",
    "TlFlowControl",
    "TlRequest",
    "TlResponse",
    "TlVcFlowControl",
    "UPLIRequest",
    "UPLIResponse",
    "control_half_data_halves",
    "pending_after",
    "tl_flit",
]
