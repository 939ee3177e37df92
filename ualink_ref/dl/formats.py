"""Every DL layout, declared once as a :class:`~ualink_ref.bitfields.BitFormat`.

The codecs (:mod:`ualink_ref.dl.flit`, :mod:`ualink_ref.dl.messages`), the
Scapy layers, the golden vectors and the tables of ``specs/dl.md`` all derive
from these declarations. Provenance strings use the marks of
``specs/README.md``: ``public: ...`` for publicly reported facts about
UALink 200G 1.0, ``project choice: ...`` for our decisions.
"""

from __future__ import annotations

from enum import IntEnum

from ualink_ref.bitfields import BitFormat, Field

#: Where the header layouts come from: no consortium or press document gives them;
#: they are as reproduced in a public third-party model, which cites no spec table for
#: them (specs/README.md, "Provenance marks").
THIRD_PARTY = "public third-party model: rosslwheeler/ualink_private"
PUBLIC = f"{THIRD_PARTY}, no spec table cited (DL flit header layout)"


class FlitOp(IntEnum):
    """The 3-bit ``op`` field of the DL flit header (values: project choice)."""

    EXPLICIT = 0
    REPLAY = 1
    ACK = 2
    REPLAY_REQUEST = 3

    @property
    def is_command(self) -> bool:
        """True for the ops that use the command-flit header layout."""
        return self in _COMMAND_OPS


#: The ops with the command-flit header layout (a set: this runs for every flit).
_COMMAND_OPS = frozenset((FlitOp.ACK, FlitOp.REPLAY_REQUEST))


_OP_ENUM: dict[int, str] = {
    FlitOp.EXPLICIT.value: "explicit",
    FlitOp.REPLAY.value: "replay",
    FlitOp.ACK.value: "ack",
    FlitOp.REPLAY_REQUEST.value: "replay_request",
}
_OP_PROV = (
    f"{PUBLIC} (width, and the four ops); "
    "project choice: code values 0-3 in the order the ops are listed, 4-7 rejected"
)
_PAYLOAD_PROV = (
    f"{PUBLIC} (a payload bit); project choice: 1 exactly when the flit carries TL bytes, "
    "which is also when it consumes a sequence number"
)

EXPLICIT_HEADER = BitFormat(
    "dl_explicit_header",
    [
        Field("op", 3, "Flit op: explicit (data) or replay (first flit of a replay)",
              _OP_PROV, enum=_OP_ENUM, strict_enum=True),
        Field("payload", 1, "1 when the flit carries TL bytes", _PAYLOAD_PROV),
        Field("rsvd_a", 3, "Reserved", PUBLIC, reserved=True),
        Field("flit_seq", 9,
              "Sequence number of this flit, 1..511 (0 when payload = 0)",
              f"{PUBLIC} (9 bits); project choice: 0 marks a flit without payload"),
        Field("rsvd_b", 8, "Reserved", PUBLIC, reserved=True),
    ],
    description=(
        "Explicit-sequence flit header (bytes 0..2), used by ops `explicit` and `replay`: "
        "carries the full 9-bit sequence number and no acknowledgement."
    ),
    provenance=PUBLIC,
)

COMMAND_HEADER = BitFormat(
    "dl_command_header",
    [
        Field("op", 3, "Flit op: ack or replay_request", _OP_PROV,
              enum=_OP_ENUM, strict_enum=True),
        Field("payload", 1, "1 when the flit carries TL bytes", _PAYLOAD_PROV),
        Field("ack_req_seq", 9,
              "ack: last sequence number received in order (0 = none yet); "
              "replay_request: next sequence number expected (1..511)",
              f"{PUBLIC} (9 bits); project choice: meaning of each op and of 0"),
        Field("flit_seq_lo", 3,
              "Low 3 bits of this flit's sequence number when payload = 1 (else 0)",
              f"{PUBLIC} (3 bits); project choice: implicit-sequence check, 0 without payload"),
        Field("rsvd", 8, "Reserved", PUBLIC, reserved=True),
    ],
    description=(
        "Command flit header (bytes 0..2), used by ops `ack` and `replay_request`; "
        "with payload = 1 it piggy-backs an acknowledgement on a data flit whose "
        "sequence number is implicit (the receiver's next expected number, checked "
        "against `flit_seq_lo`)."
    ),
    provenance=PUBLIC,
)

SEGMENT_HEADER = BitFormat(
    "dl_segment_header",
    [
        Field("tl_starts", 2,
              "Number of TL flits (0-2) that begin in this segment's TL bytes",
              f"{THIRD_PARTY}, no spec table cited: two TL-flit indicator bits; "
              "project choice: read together as a "
              "count, so that the end of the TL bytes (start of fill) is known"),
        Field("msg", 1,
              "1 when the segment opens with a 4-byte DL message word",
              f"{THIRD_PARTY}, no spec table cited: message bits exist; "
              "project choice: one flag, one word per segment"),
        Field("tl_offset", 4,
              "Distance in 4-byte words from the start of the segment's TL bytes to the "
              "first TL-flit boundary in it (0-15)",
              "project choice: lets a dissector find TL flit starts without earlier state "
              "(uses the bits the public inventory gives to two 2-bit message fields "
              "and a reserved bit)"),
        Field("alt_sector", 1,
              "DL alternate sector (not modelled; zero)",
              f"{THIRD_PARTY}, no spec table cited: a DL alternate sector bit; "
              "project choice: not modelled, zero",
              reserved=True),
    ],
    description=(
        "Segment header (one byte before each of the five segments). TL bytes in a "
        "segment follow the optional message word; TL flits begin at "
        "`4*tl_offset + 64*i` for `i < tl_starts`; if a further boundary lies inside the "
        "segment, the bytes from it to the end of the segment are zero fill."
    ),
    provenance=f"{THIRD_PARTY}, no spec table cited: 8 bits per segment; "
               "project choice: meaning",
)

# -- DL messages ---------------------------------------------------------------


class MessageClass(IntEnum):
    """The 4-bit ``mclass`` of a DL message (third-party model values, spec table 6-3)."""

    BASIC = 0b0000
    UART = 0b0001
    CONTROL = 0b1000
    VENDOR = 0b1111  # project choice (see VENDOR_MESSAGE)


#: DL message common fields and codes: as in the third-party model, citing spec table 6-3
#: (codes) and one table per message (6-4 .. 6-12), named where each is used.
_MSG_PUBLIC = f"{THIRD_PARTY}, citing spec table 6-3 (message class and type codes)"
_MCLASS_ENUM: dict[int, str] = {MessageClass.BASIC.value: "basic",
                                 MessageClass.UART.value: "uart",
                                 MessageClass.CONTROL.value: "control",
                                 MessageClass.VENDOR.value: "vendor"}


def _msg_prov(table: str) -> str:
    return f"{THIRD_PARTY}, citing spec tables 6-3 and {table} (common field positions)"


def _common(mtype: int, mclass: int, table: str = "") -> list[Field]:
    """The nine low bits every DL message shares, with this message's defaults."""
    prov = _msg_prov(table) if table else _MSG_PUBLIC
    return [
        Field("mtype", 3, "Message type within its class", prov, default=mtype),
        Field("mclass", 4, "Message class", prov, enum=_MCLASS_ENUM, default=mclass),
        Field("rsvd_c", 1, "Reserved",
              "project choice: bit 1 is not named publicly; reserved", reserved=True),
        Field("compressed", 1, "Compressed form (not modelled: 0)",
              f"{prov}; project choice: compressed messages decode as unknown"),
    ]


DL_MESSAGE = BitFormat(
    "dl_message",
    [Field("body", 23, "Type-specific fields", "project choice: 23 bits above the common ones"),
     *_common(0, 0)],
    description="Any DL message word (32 bits, at the start of a segment): common fields.",
    provenance=_MSG_PUBLIC,
)

NOOP_MESSAGE = BitFormat(
    "dl_msg_noop",
    [Field("rsvd", 23, "Reserved", "project choice", reserved=True),
     *_common(0b000, MessageClass.BASIC, "6-7")],
    description="Basic / NoOp (type 000): carries nothing.",
    provenance=_msg_prov("6-7"),
)

TL_RATE_MESSAGE = BitFormat(
    "dl_msg_tl_rate",
    [Field("rate", 8,
           "TL rate the sender of the message can accept: (rate + 1)/256 of full rate",
           "project choice: the encoding of the rate is not public"),
     Field("rsvd", 15, "Reserved", "project choice", reserved=True),
     *_common(0b100, MessageClass.BASIC, "6-4")],
    description="Basic / TL rate notification (type 100).",
    provenance=_msg_prov("6-4"),
)

DEVICE_ID_MESSAGE = BitFormat(
    "dl_msg_device_id",
    [Field("response", 1, "0 = request, 1 = response", "project choice"),
     Field("rsvd", 6, "Reserved", "project choice", reserved=True),
     Field("device_id", 16, "Device identifier (0 in a request)",
           "project choice: 16-bit identifier"),
     *_common(0b101, MessageClass.BASIC, "6-5")],
    description="Basic / Device ID request or response (type 101).",
    provenance=_msg_prov("6-5"),
)

PORT_NUMBER_MESSAGE = BitFormat(
    "dl_msg_port_number",
    [Field("response", 1, "0 = request, 1 = response", "project choice"),
     Field("rsvd", 14, "Reserved", "project choice", reserved=True),
     Field("port", 8, "Port number (0 in a request)", "project choice: 8-bit port number"),
     *_common(0b110, MessageClass.BASIC, "6-6")],
    description="Basic / Port number request or response (type 110).",
    provenance=_msg_prov("6-6"),
)

CHANNEL_NEGOTIATION_MESSAGE = BitFormat(
    "dl_msg_channel_negotiation",
    [Field("command", 2, "What the sender asks or answers",
           "project choice: the negotiation's encoding is not public",
           enum={0: "request_offline", 1: "request_online", 2: "ack", 3: "nak"}),
     Field("rsvd", 21, "Reserved", "project choice", reserved=True),
     *_common(0b100, MessageClass.CONTROL, "6-8")],
    description="Control / channel online-offline negotiation (type 100).",
    provenance=_msg_prov("6-8"),
)

UART_MESSAGE = BitFormat(
    "dl_msg_uart_data",
    [Field("count", 2, "Number of valid data bytes (1-2; 0 = none)",
           "project choice: the UART message encoding is not public"),
     Field("rsvd", 5, "Reserved", "project choice", reserved=True),
     Field("data", 16, "Up to two stream bytes, first byte in bits [24:17]",
           "project choice"),
     *_common(0b000, MessageClass.UART, "6-12")],
    description="UART / stream data (type 000): a management byte stream, two bytes a word.",
    provenance=_msg_prov("6-12"),
)

VENDOR_MESSAGE = BitFormat(
    "dl_msg_vendor",
    [Field("vendor_data", 23, "Vendor-defined content, passed up unchanged",
           "project choice: the vendor message layout is the vendor's"),
     Field("mtype", 3, "Vendor-defined type (any of 0-7)",
           "project choice: every type of the vendor class is the vendor's", default=0),
     Field("mclass", 4, "Message class", _MSG_PUBLIC, enum=_MCLASS_ENUM,
           default=MessageClass.VENDOR),
     Field("rsvd_c", 1, "Reserved",
           "project choice: bit 1 is not named publicly; reserved", reserved=True),
     Field("compressed", 1, "Compressed form (not modelled: 0)",
           f"{_MSG_PUBLIC}; project choice: compressed messages decode as unknown")],
    description=(
        "Vendor-defined message (class 1111, any type): passed up as an event, never acted "
        "on by the DL."),
    provenance=("public: vendor-defined DL messages exist (UALink DL feature summaries); "
                "project choice: class code 1111 and a single-word layout"),
)

def field_of(fmt: BitFormat, word: int, name: str) -> int:
    """Field ``name`` of ``fmt`` read from ``word`` without the codec's checks (dissectors and
    dispatch must read a field of any bytes, never raise)."""
    return int(word >> fmt.position(name).shift & fmt.field(name).max_value)


# Both header layouts open with the same op and payload bits: one reading serves both.
assert all(
    (EXPLICIT_HEADER.position(n).shift, EXPLICIT_HEADER.field(n).width)
    == (COMMAND_HEADER.position(n).shift, COMMAND_HEADER.field(n).width)
    for n in ("op", "payload")
)


def header_op(header: bytes) -> int:
    """The op of a DL flit header (its first 3 bytes), read without checks."""
    return field_of(EXPLICIT_HEADER, int.from_bytes(header[:EXPLICIT_HEADER.byte_length]), "op")


def header_payload(header: bytes) -> bool:
    """The payload bit of a DL flit header, read without checks."""
    word = int.from_bytes(header[:EXPLICIT_HEADER.byte_length])
    return bool(field_of(EXPLICIT_HEADER, word, "payload"))


#: Every DL format, in the order ``specs/dl.md`` renders them.
ALL_FORMATS: tuple[BitFormat, ...] = (
    EXPLICIT_HEADER,
    COMMAND_HEADER,
    SEGMENT_HEADER,
    DL_MESSAGE,
    NOOP_MESSAGE,
    TL_RATE_MESSAGE,
    DEVICE_ID_MESSAGE,
    PORT_NUMBER_MESSAGE,
    CHANNEL_NEGOTIATION_MESSAGE,
    UART_MESSAGE,
    VENDOR_MESSAGE,
)

__all__ = [
    "ALL_FORMATS",
    "CHANNEL_NEGOTIATION_MESSAGE",
    "COMMAND_HEADER",
    "DEVICE_ID_MESSAGE",
    "DL_MESSAGE",
    "EXPLICIT_HEADER",
    "NOOP_MESSAGE",
    "PORT_NUMBER_MESSAGE",
    "PUBLIC",
    "SEGMENT_HEADER",
    "THIRD_PARTY",
    "TL_RATE_MESSAGE",
    "UART_MESSAGE",
    "VENDOR_MESSAGE",
    "FlitOp",
    "MessageClass",
    "field_of",
    "header_op",
    "header_payload",
]
