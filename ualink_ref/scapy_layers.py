"""Scapy layers for ualink_ref, generated from the bit-field declarations.

This module (and only the ``scapy_*`` modules beside it) imports Scapy, which
is GPL-2.0-only; install it with the ``scapy`` extra. No layout is typed here:
:func:`packet_class` turns a :class:`~ualink_ref.bitfields.BitFormat` into a
Scapy ``Packet`` subclass with one ``BitField`` (or ``BitEnumField``) per
declared field, in declaration (MSB-first) order — the same order and
bit numbering Scapy uses for ``BitField`` runs.

Importing this module registers pcap link type 147 (``LINKTYPE_USER0``) with
Scapy, so ``rdpcap()`` of a ualink_ref capture dissects every record with no
further setup (see ``specs/capture.md``).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from scapy.config import conf
from scapy.packet import Packet, Raw

from ualink_ref.capture.dissect import dissect_records
from ualink_ref.capture.format import LINKTYPE_USER0, PSEUDO_HEADER, CaptureRecord
from ualink_ref.scapy.gen import packet_class, scapy_fields, scapy_name

# -- capture records (link type 147) -------------------------------------------


def _capture_payload(pkt: Packet, payload: bytes) -> Any:
    """Choose the layer after the pseudo-header from its ``record_kind``."""
    del payload
    return RECORD_LAYERS.get(pkt.getfieldval("record_kind"), Raw)


def _capture_summary(pkt: Packet) -> str:
    """One line for ``pkt.summary()``: record kind, direction and slot."""
    return pkt.sprintf("UALink %record_kind% %link_direction% slot=%slot% fec=%fec_mode%")


_LENGTH = PSEUDO_HEADER.position("payload_length")


def _capture_post_build(pkt: Packet, hdr: bytes, pay: bytes) -> bytes:
    """Fill in ``payload_length`` (bytes after the pseudo-header) when left ``None``."""
    if pkt.getfieldval("payload_length") is None:
        start = _LENGTH.offset // 8
        size = _LENGTH.field.width // 8
        hdr = hdr[:start] + min(len(pay), _LENGTH.field.max_value).to_bytes(size, "big") + hdr[
            start + size:]
    return hdr + pay


#: Scapy view of the capture pseudo-header (``specs/capture.md``).
UALinkCapture = packet_class(
    PSEUDO_HEADER,
    class_name="UALinkCapture",
    display_name="UALink capture record",
    attrs={"guess_payload_class": _capture_payload, "mysummary": _capture_summary,
           "post_build": _capture_post_build},
    computed=("payload_length",),
)

#: record_kind -> layer that dissects the record's data (Raw until a layer is known).
RECORD_LAYERS: dict[int, Any] = {}

conf.l2types.register(LINKTYPE_USER0, UALinkCapture)

# The per-layer modules (they take packet_class from scapy_gen, so each also
# imports on its own).
# Every layer is importable from here under the class name its repr shows.
from ualink_ref.scapy.dl import (  # noqa: E402
    DL_MESSAGE_LAYERS,
    DL_SEGMENT_LAYERS,
    DLCommandHeader,
    DLExplicitHeader,
    DLMessage,
    DlMsgChannelNegotiation,
    DlMsgDeviceId,
    DlMsgNoop,
    DlMsgPortNumber,
    DlMsgTlRate,
    DlMsgUartData,
    DlMsgVendor,
    DLSegment0,
    DLSegment1,
    DLSegment2,
    DLSegment3,
    DLSegment4,
    UALinkDLFlit,
    message_layer,
)
from ualink_ref.scapy.roce import RETH, AtomicAckETH, AtomicAETH, AtomicETH  # noqa: E402
from ualink_ref.scapy.tl import (  # noqa: E402
    TL_FIELD_LAYERS,
    TlCompressedRequest,
    TlCompressedResponseNoData,
    TlCompressedResponseWithData,
    TLControlHalf,
    TLDataHalf,
    TLFlit,
    TlFlowControl,
    TlRequest,
    TlResponse,
    TLUnknownSector,
    TlVcFlowControl,
    UPLIRequest,
    UPLIResponse,
    tl_flit,
)
from ualink_ref.scapy.tlview import DLTLSpan, tl_spans  # noqa: E402

RECORD_LAYERS[0] = UALinkDLFlit  # record_kind dl_flit


# -- TL flits across DL flits ----------------------------------------------------


@dataclass(frozen=True)
class CapturedTLFlit:
    """A TL flit reassembled from a capture, with where it was completed."""

    record: int  # index of the record (packet) whose DL flit completed it
    direction: str
    flit: Packet  # a TLFlit layer

    def fields(self) -> list[Packet]:
        """Every non-NOP control field of the flit (requests, responses, credits)."""
        out = []
        for half in self.flit.getfieldval("halves"):
            if isinstance(half, TLControlHalf):
                out += [f for f in half.getfieldval("ctrl_fields") if any(
                    f.getfieldval(x.name) for x in f.fields_desc if x.name != "ftype"
                ) or f.getfieldval("ftype")]
        return out


def reassemble_tl(packets: Iterable[Packet]) -> list[CapturedTLFlit]:
    """TL flits of a capture (e.g. ``rdpcap()`` output), reassembled across DL flits.

    Follows each direction's DL sequence the way the receiver does (CRC
    failures, duplicates and gaps dropped; see :mod:`ualink_ref.capture.dissect`), so
    every TL flit appears once, in order, as the receiving TL got it.
    """
    records = [CaptureRecord.decode(bytes(p)) for p in packets if isinstance(p, UALinkCapture)]
    out = []
    for f in dissect_records(records):
        for view in f.tl_flits:
            halves = [TLDataHalf(h.raw) if h.kind == "data" else TLControlHalf(h.raw)
                      for h in view.halves]
            out.append(CapturedTLFlit(f.index, f.direction, TLFlit(halves=halves)))
    return out


def list_requests(packets: Iterable[Packet]) -> list[tuple[int, str, Packet]]:
    """Every request field in a capture: ``(record index, direction, field layer)``."""
    return [
        (t.record, t.direction, field)
        for t in reassemble_tl(packets)
        for field in t.fields()
        if field.getfieldval("ftype") in (1, 3)  # uncompressed / compressed request
    ]


__all__ = [
    "DL_MESSAGE_LAYERS",
    "DL_SEGMENT_LAYERS",
    "RECORD_LAYERS",
    "RETH",
    "TL_FIELD_LAYERS",
    "AtomicAETH",
    "AtomicAckETH",
    "AtomicETH",
    "CapturedTLFlit",
    "DLCommandHeader",
    "DLExplicitHeader",
    "DLMessage",
    "DLSegment0",
    "DLSegment1",
    "DLSegment2",
    "DLSegment3",
    "DLSegment4",
    "DLTLSpan",
    "DlMsgChannelNegotiation",
    "DlMsgDeviceId",
    "DlMsgNoop",
    "DlMsgPortNumber",
    "DlMsgTlRate",
    "DlMsgUartData",
    "DlMsgVendor",
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
    "UALinkCapture",
    "UALinkDLFlit",
    "UPLIRequest",
    "UPLIResponse",
    "list_requests",
    "message_layer",
    "packet_class",
    "reassemble_tl",
    "scapy_fields",
    "scapy_name",
    "tl_flit",
    "tl_spans",
]
