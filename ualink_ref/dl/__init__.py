"""Data link layer: 640-byte DL flits, CRC-32, DL messages, go-back-N retry (sans-IO).

Public names:

* :class:`DLFlit` — one flit as values; ``encode()`` -> 640 bytes, ``DLFlit.decode``;
* :class:`DataLink` — one end of a link, ``DataLink(DLConfig(...))``: ``send / poll(now) /
  receive(flit, now) / next_timer() / handle_timer(now) / counters / tx_backlog``;
* events: :class:`TLFlitDelivered`, :class:`CrcErrorDetected`, :class:`ReplayStarted`,
  :class:`RetrainNeeded`, :class:`SequenceGap`, :class:`MalformedFlit`,
  :class:`DLMessageReceived`;
* DL messages (:mod:`ualink_ref.dl.messages`) and formats (:mod:`ualink_ref.dl.formats`);
* two DataLinks over a seeded faulty channel: ``ualink_ref.net.link_pair.LinkPair`` and
  ``ualink_ref.net.channels.FaultyChannel`` (on the one harness, above this layer).

The rules are stated once, in ``specs/dl.md`` (sections 6 and 8).
"""

from __future__ import annotations

from ualink_ref.dl.crc import crc32
from ualink_ref.dl.datalink import DataLink
from ualink_ref.dl.events import (
    CrcErrorDetected,
    DLEvent,
    DLMessageReceived,
    MalformedFlit,
    ReplayStarted,
    RetrainNeeded,
    SequenceGap,
    TLFlitDelivered,
)
from ualink_ref.dl.flit import FLIT_BYTES, PAYLOAD_BYTES, SEGMENT_LENGTHS, DLFlit
from ualink_ref.dl.formats import FlitOp, MessageClass
from ualink_ref.dl.messages import (
    ChannelCommand,
    ChannelNegotiation,
    DeviceId,
    DLMessage,
    NoOp,
    PortNumber,
    TLRateNotification,
    UartData,
    UnknownMessage,
    decode_message,
    encode_message,
)
from ualink_ref.dl.transmit import DLCounters, seq_of

__all__ = [
    "FLIT_BYTES",
    "PAYLOAD_BYTES",
    "SEGMENT_LENGTHS",
    "ChannelCommand",
    "ChannelNegotiation",
    "CrcErrorDetected",
    "DLCounters",
    "DLEvent",
    "DLFlit",
    "DLMessage",
    "DLMessageReceived",
    "DataLink",
    "DeviceId",
    "FlitOp",
    "MalformedFlit",
    "MessageClass",
    "NoOp",
    "PortNumber",
    "ReplayStarted",
    "RetrainNeeded",
    "SequenceGap",
    "TLFlitDelivered",
    "TLRateNotification",
    "UartData",
    "UnknownMessage",
    "crc32",
    "decode_message",
    "encode_message",
    "seq_of",
]
