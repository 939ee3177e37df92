"""Scapy layers for Ultra Ethernet Transport (UET 1.0) PDS and SES headers over UDP port 4793.

Generated with :func:`ualink_ref.scapy.gen.packet_class` from the formats in
:mod:`ualink_ref.compare.sue_uet` (no layout is typed twice) and bound the way
the headers chain: UDP port 4793 -> PDS (RUD request or ACK, by its type
field) -> SES header by the PDS next-header field -> atomic extension by the
AMO code. This module imports Scapy (GPL-2.0-only) and is loaded on demand.
"""

from __future__ import annotations

from typing import Any

from scapy.layers.inet import UDP
from scapy.packet import Packet, bind_layers

from ualink_ref.compare import sue_uet as M
from ualink_ref.scapy.gen import packet_class

__all__ = ["LAYERS", "UetPdsAck", "UetPdsRudReq", "UetSesAtomic", "UetSesCas", "UetSesResp",
           "UetSesRespData", "UetSesRespSmall", "UetSesStd"]


def _cls(fmt: Any, name: str, attrs: dict[str, Any] | None = None) -> Any:
    return packet_class(fmt, class_name=name, display_name=name,
                        attrs={"__module__": __name__, **(attrs or {})})


def _std_payload(self: Packet, payload: bytes) -> Any:
    # A FETCHING_ATOMIC is followed by the CAS extension (AMO 13) or the plain one.
    if self.opcode == 4 and payload:
        return UetSesCas if payload[0] == M.UET_AMO["cas"] else UetSesAtomic
    return Packet.guess_payload_class(self, payload)


UetPdsRudReq = _cls(M.PDS_RUD_REQ, "UetPdsRudReq")
UetPdsAck = _cls(M.PDS_ACK, "UetPdsAck")
UetSesStd = _cls(M.SES_STD, "UetSesStd", {"guess_payload_class": _std_payload})
UetSesAtomic = _cls(M.SES_ATOMIC, "UetSesAtomic")
UetSesCas = _cls(M.SES_CAS, "UetSesCas")
UetSesResp = _cls(M.SES_RESP, "UetSesResp")
UetSesRespData = _cls(M.SES_RESP_DATA, "UetSesRespData")
UetSesRespSmall = _cls(M.SES_RESP_SMALL, "UetSesRespSmall")


class UetPds(Packet):
    """Dispatcher: the PDS header after UDP port 4793 is chosen by its 5-bit type."""

    name = "UET PDS"

    @classmethod
    def dispatch_hook(cls, _pkt: bytes | None = None, *args: Any, **kargs: Any) -> Any:
        """RUD request (type 2) or ACK (type 7)."""
        if _pkt and _pkt[0] >> 3 == 7:
            return UetPdsAck
        return UetPdsRudReq


#: format name -> Scapy class, for building and reading back.
LAYERS: dict[str, Any] = {
    "uet_pds_rud_req": UetPdsRudReq, "uet_pds_ack": UetPdsAck, "uet_ses_std": UetSesStd,
    "uet_ses_atomic": UetSesAtomic, "uet_ses_cas": UetSesCas, "uet_ses_resp": UetSesResp,
    "uet_ses_resp_data": UetSesRespData, "uet_ses_resp_small": UetSesRespSmall,
}

bind_layers(UDP, UetPds, dport=M.UET_UDP_PORT)
bind_layers(UetPdsRudReq, UetSesStd, next_hdr=3)
bind_layers(UetPdsAck, UetSesResp, next_hdr=4)
bind_layers(UetPdsAck, UetSesRespData, next_hdr=5)
bind_layers(UetPdsAck, UetSesRespSmall, next_hdr=6)
