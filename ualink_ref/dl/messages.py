"""DL messages: one 32-bit word at the start of a segment.

Every message shares the low nine bits (``mtype`` [8:6], ``mclass`` [5:2],
``compressed`` [0]; public); the upper 23 bits are type-specific (project
choice, see :mod:`ualink_ref.dl.formats`). :func:`decode_message` never
raises on an unknown class or type: it returns :class:`UnknownMessage`, so a
receiver (or a dissector) can pass such words on. A known type with non-zero
reserved bits raises :class:`~ualink_ref.errors.ReservedBitsError`.
"""

from __future__ import annotations

import operator
from dataclasses import dataclass
from enum import IntEnum
from typing import ClassVar

from ualink_ref.bitfields import BitFormat
from ualink_ref.dl.formats import (
    CHANNEL_NEGOTIATION_MESSAGE,
    DEVICE_ID_MESSAGE,
    DL_MESSAGE,
    NOOP_MESSAGE,
    PORT_NUMBER_MESSAGE,
    TL_RATE_MESSAGE,
    UART_MESSAGE,
    VENDOR_MESSAGE,
    MessageClass,
    field_of,
)
from ualink_ref.errors import DecodeError, EncodeError, FieldRangeError

#: Bytes-like types as a tuple: ``isinstance(x, a | b)`` builds a union object per call.
_BYTES_LIKE = (bytes, bytearray, memoryview)


class ChannelCommand(IntEnum):
    """The ``command`` of a channel online/offline negotiation message."""

    REQUEST_OFFLINE = 0
    REQUEST_ONLINE = 1
    ACK = 2
    NAK = 3


@dataclass(frozen=True)
class NoOp:
    """Basic / NoOp: carries nothing."""

    FORMAT: ClassVar[BitFormat] = NOOP_MESSAGE

    def encode(self) -> int:
        """The 32-bit message word."""
        return self.FORMAT.to_int()


@dataclass(frozen=True)
class TLRateNotification:
    """Basic / TL rate notification: the peer may send at (rate + 1)/256 of full rate."""

    rate: int = 255
    FORMAT: ClassVar[BitFormat] = TL_RATE_MESSAGE

    def encode(self) -> int:
        """The 32-bit message word."""
        return self.FORMAT.to_int(rate=self.rate)


@dataclass(frozen=True)
class DeviceId:
    """Basic / Device ID request (``response=False``) or response."""

    response: bool = False
    device_id: int = 0
    FORMAT: ClassVar[BitFormat] = DEVICE_ID_MESSAGE

    def encode(self) -> int:
        """The 32-bit message word."""
        return self.FORMAT.to_int(response=int(self.response), device_id=self.device_id)


@dataclass(frozen=True)
class PortNumber:
    """Basic / Port number request (``response=False``) or response."""

    response: bool = False
    port: int = 0
    FORMAT: ClassVar[BitFormat] = PORT_NUMBER_MESSAGE

    def encode(self) -> int:
        """The 32-bit message word."""
        return self.FORMAT.to_int(response=int(self.response), port=self.port)


@dataclass(frozen=True)
class ChannelNegotiation:
    """Control / channel online-offline negotiation."""

    command: ChannelCommand = ChannelCommand.REQUEST_ONLINE
    FORMAT: ClassVar[BitFormat] = CHANNEL_NEGOTIATION_MESSAGE

    def encode(self) -> int:
        """The 32-bit message word."""
        return self.FORMAT.to_int(command=int(self.command))


@dataclass(frozen=True)
class UartData:
    """UART / stream data: up to two bytes of a management byte stream."""

    data: bytes = b""
    FORMAT: ClassVar[BitFormat] = UART_MESSAGE

    def encode(self) -> int:
        """The 32-bit message word."""
        if not isinstance(self.data, bytes) or len(self.data) > 2:
            raise EncodeError("UartData carries at most two bytes", field="data")
        padded = self.data.ljust(2, b"\0")
        return self.FORMAT.to_int(count=len(self.data), data=int.from_bytes(padded, "big"))


@dataclass(frozen=True)
class VendorMessage:
    """Vendor-defined message (class 1111): ``vtype`` 0-7 and a 23-bit ``payload``,
    passed up unchanged (a receiver never acts on it)."""

    vtype: int = 0
    payload: int = 0
    FORMAT: ClassVar[BitFormat] = VENDOR_MESSAGE

    def encode(self) -> int:
        """The 32-bit message word."""
        return self.FORMAT.to_int(mtype=self.vtype, vendor_data=self.payload)


@dataclass(frozen=True)
class UnknownMessage:
    """A message word whose class / type this model does not know (kept verbatim)."""

    word: int

    def encode(self) -> int:
        """The 32-bit message word (as received)."""
        if isinstance(self.word, bool) or not isinstance(self.word, int) or not (
                0 <= self.word <= 0xFFFFFFFF):
            raise EncodeError("message word does not fit 32 bits", field="word")
        return self.word

    @property
    def mclass(self) -> int:
        """The word's message class."""
        return field_of(DL_MESSAGE, self.word, "mclass")

    @property
    def mtype(self) -> int:
        """The word's message type."""
        return field_of(DL_MESSAGE, self.word, "mtype")


DLMessage = (
    NoOp | TLRateNotification | DeviceId | PortNumber | ChannelNegotiation | UartData
    | VendorMessage | UnknownMessage
)

_MESSAGE_TYPES = (NoOp, TLRateNotification, DeviceId, PortNumber, ChannelNegotiation, UartData,
                  VendorMessage,
                  UnknownMessage)

_KNOWN: dict[tuple[int, int], BitFormat] = {
    (fmt.field("mclass").default, fmt.field("mtype").default): fmt
    for fmt in (NOOP_MESSAGE, TL_RATE_MESSAGE, DEVICE_ID_MESSAGE, PORT_NUMBER_MESSAGE,
                CHANNEL_NEGOTIATION_MESSAGE, UART_MESSAGE)
}


def encode_message(message: DLMessage) -> bytes:
    """The 4 big-endian bytes of ``message``."""
    if not isinstance(message, _MESSAGE_TYPES):
        raise EncodeError(f"not a DL message: {message!r:.40}")
    return message.encode().to_bytes(4, "big")


def decode_message(word: int | bytes | bytearray | memoryview) -> DLMessage:
    """Parse a message word (an int or 4 bytes); unknown class/type -> ``UnknownMessage``.

    Anything that is neither an integer nor 4 bytes raises a ``DecodeError``.
    """
    if isinstance(word, _BYTES_LIKE):
        if len(word) != 4:
            raise FieldRangeError("dl_message", len(word), "a message is 4 bytes")
        value = int.from_bytes(word, "big")
    elif isinstance(word, bool) or not hasattr(type(word), "__index__"):
        # numpy integers are words too; bools, floats, strings and None are not
        raise DecodeError(f"dl_message: expected a 32-bit word or 4 bytes, got {word!r:.40}")
    else:
        try:
            value = operator.index(word)
        except (TypeError, ValueError):  # e.g. a numpy array: has __index__, is no word
            raise DecodeError(
                f"dl_message: expected a 32-bit word or 4 bytes, got {word!r:.40}") from None
    common = DL_MESSAGE.from_int(value)  # FieldRangeError if it does not fit 32 bits
    if common["mclass"] == MessageClass.VENDOR and not common["compressed"]:
        v = VENDOR_MESSAGE.from_int(value)  # ReservedBitsError on a non-zero bit 1
        return VendorMessage(v["mtype"], v["vendor_data"])
    fmt = _KNOWN.get((common["mclass"], common["mtype"]))
    if fmt is None or common["compressed"]:
        return UnknownMessage(value)
    v = fmt.from_int(value)  # ReservedBitsError on non-zero reserved bits
    if fmt is NOOP_MESSAGE:
        return NoOp()
    if fmt is TL_RATE_MESSAGE:
        return TLRateNotification(v["rate"])
    if fmt is DEVICE_ID_MESSAGE:
        return DeviceId(bool(v["response"]), v["device_id"])
    if fmt is PORT_NUMBER_MESSAGE:
        return PortNumber(bool(v["response"]), v["port"])
    if fmt is CHANNEL_NEGOTIATION_MESSAGE:
        return ChannelNegotiation(ChannelCommand(v["command"]))
    count = v["count"]
    if count > 2:
        raise FieldRangeError("dl_msg_uart_data.count", count, "at most 2 bytes")
    raw = v["data"].to_bytes(2, "big")
    if any(raw[count:]):
        raise FieldRangeError("dl_msg_uart_data.data", v["data"], "bytes beyond count not zero")
    return UartData(raw[:count])


__all__ = [
    "ChannelCommand",
    "ChannelNegotiation",
    "DLMessage",
    "DeviceId",
    "NoOp",
    "PortNumber",
    "TLRateNotification",
    "UartData",
    "UnknownMessage",
    "VendorMessage",
    "decode_message",
    "encode_message",
]
