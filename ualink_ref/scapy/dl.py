"""Scapy layers of the data link layer, generated from ``ualink_ref.dl.formats``.

* ``DLExplicitHeader`` / ``DLCommandHeader`` — the 3-byte flit header, chosen
  by ``op``;
* ``DLSegment0`` .. ``DLSegment4`` — segment header fields, an optional DL
  message, then the segment's TL bytes and zero fill (``body``);
* one layer per DL message format, chosen by ``mclass`` / ``mtype``
  (``DLMessage`` for unknown words);
* ``UALinkDLFlit`` — the whole 640-byte flit: header, five segments, ``crc``
  (filled in on build when left ``None``) and ``crc_valid``, a zero-width
  field that reports whether the stored CRC matches (computed on dissection),
  and ``tl_flits``, a zero-width, read-only view of the TL flits inside the
  flit (``ualink_ref.scapy.tlview``; computed from the dissected bytes when first
  read, ignored on build).

Every header layout comes from the declarations in ``ualink_ref.dl.formats``
via :func:`~ualink_ref.scapy_layers.packet_class`; nothing is typed here but
the placement of the parts, which is read from ``ualink_ref.dl.flit``.

Imports Scapy (GPL-2.0-only): use it through ``ualink_ref.scapy_layers``.
"""

from __future__ import annotations

from typing import Any

from scapy.fields import (
    ConditionalField,
    Field,
    PacketField,
    XIntField,
)
from scapy.packet import Packet

from ualink_ref.bitfields import BitFormat
from ualink_ref.dl.crc import CRC_COVERAGE, crc32
from ualink_ref.dl.flit import MESSAGE_BYTES, SEGMENT_LENGTHS
from ualink_ref.dl.formats import (
    CHANNEL_NEGOTIATION_MESSAGE,
    COMMAND_HEADER,
    DEVICE_ID_MESSAGE,
    DL_MESSAGE,
    EXPLICIT_HEADER,
    NOOP_MESSAGE,
    PORT_NUMBER_MESSAGE,
    SEGMENT_HEADER,
    TL_RATE_MESSAGE,
    UART_MESSAGE,
    VENDOR_MESSAGE,
    FlitOp,
    MessageClass,
    field_of,
    header_op,
)
from ualink_ref.scapy.gen import ExactLenField, packet_class
from ualink_ref.scapy.tlview import TLSpansField, lazy_spans


def _no_payload(self: Packet, s: bytes) -> tuple[bytes, bytes]:
    """A part of a flit is followed by the next part, not by a payload."""
    return b"", s


_PART = {"extract_padding": _no_payload}


class DefaultPacketField(PacketField):
    """A PacketField that builds its class's defaults when left ``None``.

    A part of a flit is always present on the wire, so an unset part is the
    class's default bytes (all zero: a valid empty part), never nothing.
    """

    def addfield(self, pkt: Packet, s: bytes, val: Any) -> bytes:
        """Build ``val``, or ``cls()`` when it is ``None``."""
        cls: Any = self.cls  # a Packet class (PacketField's annotation is looser)
        return s + bytes(cls() if val is None else val)


class DispatchPacketField(DefaultPacketField):
    """A PacketField whose class is chosen from the bytes themselves."""

    __slots__ = ["choose"]  # Scapy fields use slots

    def __init__(self, name: str, default: Any, choose: Any, fallback: type[Packet]) -> None:
        super().__init__(name, default, fallback)
        self.choose = choose

    def m2i(self, pkt: Packet | None, m: bytes) -> Packet:
        """Dissect ``m`` with the class ``choose(m)`` picks."""
        cls = self.choose(m)
        packet: Packet = cls(m, _parent=pkt)
        return packet


DLExplicitHeader = packet_class(EXPLICIT_HEADER, class_name="DLExplicitHeader", attrs=_PART)
DLCommandHeader = packet_class(COMMAND_HEADER, class_name="DLCommandHeader", attrs=_PART)


def _header_class(m: bytes) -> type[Packet]:
    op = header_op(m) if m else 0
    return DLCommandHeader if op in (FlitOp.ACK, FlitOp.REPLAY_REQUEST) else DLExplicitHeader


#: DL message layers by (mclass, mtype); unknown words use DLMessage.
DLMessage = packet_class(DL_MESSAGE, class_name="DLMessage", attrs=_PART)
DL_MESSAGE_LAYERS: dict[tuple[int, int], type[Packet]] = {
    (fmt.field("mclass").default, fmt.field("mtype").default): packet_class(fmt, attrs=_PART)
    for fmt in (NOOP_MESSAGE, TL_RATE_MESSAGE, DEVICE_ID_MESSAGE, PORT_NUMBER_MESSAGE,
                CHANNEL_NEGOTIATION_MESSAGE, UART_MESSAGE)
}
#: The vendor-defined class: one layer for every type (the type is the vendor's).
DLVendorMessage = packet_class(VENDOR_MESSAGE, attrs=_PART)


def _message_of(fmt: BitFormat) -> type[Packet]:
    """The layer of message format ``fmt`` in :data:`DL_MESSAGE_LAYERS`."""
    return DL_MESSAGE_LAYERS[fmt.field("mclass").default, fmt.field("mtype").default]


# Each message layer also under the class name its repr shows (``<DlMsgTlRate ...>``),
# so the name a user reads can be imported (from ``ualink_ref.scapy_layers``) and pickled.
DlMsgNoop = _message_of(NOOP_MESSAGE)
DlMsgTlRate = _message_of(TL_RATE_MESSAGE)
DlMsgDeviceId = _message_of(DEVICE_ID_MESSAGE)
DlMsgPortNumber = _message_of(PORT_NUMBER_MESSAGE)
DlMsgChannelNegotiation = _message_of(CHANNEL_NEGOTIATION_MESSAGE)
DlMsgUartData = _message_of(UART_MESSAGE)
DlMsgVendor = DLVendorMessage


def message_layer(m: bytes) -> type[Packet]:
    """The DL message layer for a 4-byte message word (``DLMessage`` when unknown)."""
    if len(m) < MESSAGE_BYTES:
        return DLMessage
    word = int.from_bytes(m[:MESSAGE_BYTES], "big")
    # Read the common fields without the codec's checks: a word with reserved bits set
    # must still dissect (as the generic layer), never raise.
    mclass = field_of(DL_MESSAGE, word, "mclass")
    mtype = field_of(DL_MESSAGE, word, "mtype")
    if field_of(DL_MESSAGE, word, "compressed") or field_of(DL_MESSAGE, word, "rsvd_c"):
        return DLMessage
    if mclass == MessageClass.VENDOR:
        return DLVendorMessage
    return DL_MESSAGE_LAYERS.get((mclass, mtype), DLMessage)


def _segment_class(index: int, length: int) -> type[Packet]:
    return packet_class(
        SEGMENT_HEADER,
        class_name=f"DLSegment{index}",
        display_name=f"DL segment {index} ({length} bytes)",
        extra_fields=[
            ConditionalField(
                DispatchPacketField("message", None, message_layer, DLMessage),
                lambda pkt: pkt.getfieldval("msg") == 1,
            ),
            ExactLenField("body", b"",
                          length_from=lambda pkt: length - MESSAGE_BYTES * pkt.getfieldval("msg")),
        ],
        attrs=_PART,
    )


#: One layer per segment (their body lengths differ).
DL_SEGMENT_LAYERS: tuple[type[Packet], ...] = tuple(
    _segment_class(i, n) for i, n in enumerate(SEGMENT_LENGTHS)
)
# ... each also under the class name its repr shows (``<DLSegment0 ...>``).
DLSegment0, DLSegment1, DLSegment2, DLSegment3, DLSegment4 = DL_SEGMENT_LAYERS


class CrcValidField(Field[Any, Any]):
    """Zero-width field: 1 when the dissected flit's stored CRC matches, else 0."""

    def __init__(self, name: str) -> None:
        super().__init__(name, None, fmt="B")

    def addfield(self, pkt: Packet, s: bytes, val: Any) -> bytes:
        """Nothing goes on the wire."""
        return s

    def getfield(self, pkt: Packet, s: bytes) -> tuple[bytes, Any]:
        """Check the CRC of the bytes being dissected."""
        raw = pkt.original
        if not raw or len(raw) < CRC_COVERAGE + 4:
            return s, None
        stored = int.from_bytes(raw[CRC_COVERAGE:CRC_COVERAGE + 4], "big")
        return s, int(crc32(raw[:CRC_COVERAGE]) == stored)

    def i2repr(self, pkt: Packet | None, x: Any) -> str:
        """``valid`` / ``INVALID (computed ...)`` / ``not checked`` for built packets."""
        if x is None:
            return "not checked (built, not dissected)"
        if x:
            return "valid"
        computed = crc32(pkt.original[:CRC_COVERAGE]) if pkt is not None else 0
        return f"INVALID (computed {computed:#010x})"


class UALinkDLFlit(Packet):
    """A 640-byte DL flit: header, five segments, CRC-32 and its validity.

    Built with no arguments it is a valid empty flit (op explicit, no payload,
    every segment zero); ``crc`` left ``None`` is computed over bytes 0..635 and
    segment bodies are padded to their segment's length.
    """

    name = "UALink DL flit"
    fields_desc = [  # noqa: RUF012
        DispatchPacketField("header", DLExplicitHeader(), _header_class, DLExplicitHeader),
        *(DefaultPacketField(f"segment{i}", cls(), cls)
          for i, cls in enumerate(DL_SEGMENT_LAYERS)),
        XIntField("crc", None),
        CrcValidField("crc_valid"),
        TLSpansField("tl_flits"),  # read-only view of the TL bytes (scapy_tlview)
    ]

    def __init__(self, _pkt: bytes = b"", *args: Any, **kwargs: Any) -> None:
        super().__init__(_pkt, *args, **kwargs)
        if not _pkt:
            # Scapy copies packet-valued defaults into ``fields``, where ``fuzz()`` (which
            # replaces defaults) cannot reach them; keep unset parts as this instance's
            # own default copies instead, so fuzz(UALinkDLFlit()) randomises every part.
            # (Scapy shares one default_fields dict per class: copy it first.)
            self.default_fields = dict(self.default_fields)
            for f in self.fields_desc:
                if isinstance(f, DefaultPacketField) and f.name not in kwargs and (
                        f.name in self.fields):
                    self.default_fields[f.name] = self.fields.pop(f.name)

    def post_build(self, pkt: bytes, pay: bytes) -> bytes:
        """Fill in the CRC when it was left ``None``."""
        if self.getfieldval("crc") is None and len(pkt) >= CRC_COVERAGE + 4:
            pkt = pkt[:CRC_COVERAGE] + crc32(pkt[:CRC_COVERAGE]).to_bytes(4, "big") + pkt[
                CRC_COVERAGE + 4:]
        return pkt + pay

    def getfieldval(self, attr: str) -> Any:
        """``tl_flits`` is computed from the dissected bytes on first read."""
        if attr == "tl_flits":
            return lazy_spans(self)
        return super().getfieldval(attr)

    def extract_padding(self, s: bytes) -> tuple[bytes, bytes]:
        """Nothing follows a flit inside a capture record."""
        return b"", s

    def mysummary(self) -> Any:
        """One line for ``pkt.summary()``: op, sequence fields, CRC validity.

        The record layer's summary (direction, slot) is kept in front of it.
        """
        header = self.getfieldval("header")
        parts = [header.sprintf("%op%") if header is not None else "?"]
        if header is not None:
            present = {f.name for f in header.fields_desc}
            for name in ("flit_seq", "ack_req_seq", "flit_seq_lo"):
                if name in present:
                    parts.append(f"{name}={header.getfieldval(name)}")
        valid = self.getfieldval("crc_valid")
        parts.append("crc " + ("(computed on build)" if valid is None else "ok" if valid
                               else "BAD"))
        underlayer = self.underlayer
        keep = [type(underlayer)] if underlayer is not None else []
        return "DL " + " ".join(parts), keep


__all__ = [
    "DL_MESSAGE_LAYERS",
    "DL_SEGMENT_LAYERS",
    "CrcValidField",
    "DLCommandHeader",
    "DLExplicitHeader",
    "DLMessage",
    "DLSegment0",
    "DLSegment1",
    "DLSegment2",
    "DLSegment3",
    "DLSegment4",
    "DLVendorMessage",
    "DefaultPacketField",
    "DispatchPacketField",
    "DlMsgChannelNegotiation",
    "DlMsgDeviceId",
    "DlMsgNoop",
    "DlMsgPortNumber",
    "DlMsgTlRate",
    "DlMsgUartData",
    "DlMsgVendor",
    "UALinkDLFlit",
    "message_layer",
]
