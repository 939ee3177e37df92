"""Scapy layers for Scale-Up Ethernet (SUE) frames: AFH, transport header, request address.

The layouts are project layouts of publicly stated sizes (see
:mod:`ualink_ref.compare.sue_uet` and ``specs/comparison.md``), generated from
those BitFormats. Two variants: the full-Ethernet one (Ethernet/IPv4/UDP,
project UDP port 4794) and the AI-forwarding-header one, whose frames start
with :class:`SueAfh` (read them with ``SueAfh(frame_without_fcs)``). Requests
(PUT, GET, ATOMIC) carry a :class:`SueAddr` after the transport header.
This module imports Scapy (GPL-2.0-only) and is loaded on demand.
"""

from __future__ import annotations

from typing import Any

from scapy.layers.inet import UDP
from scapy.packet import Packet, bind_layers

from ualink_ref.compare import sue_uet as M
from ualink_ref.scapy.gen import packet_class

__all__ = ["LAYERS", "SueAddr", "SueAfh", "SueTh"]


def _th_payload(self: Packet, payload: bytes) -> Any:
    # PUT (1), GET (2) and every ATOMIC (0x10 + k) carry the remote address next.
    if self.opcode in (1, 2) or self.opcode >= M.SUE_ATOMIC_BASE:
        return SueAddr
    return Packet.guess_payload_class(self, payload)


SueAfh = packet_class(M.SUE_AFH, class_name="SueAfh", display_name="SUE AFH",
                      attrs={"__module__": __name__})
SueTh = packet_class(M.SUE_TH, class_name="SueTh", display_name="SUE TH",
                     attrs={"__module__": __name__, "guess_payload_class": _th_payload})
SueAddr = packet_class(M.SUE_ADDR, class_name="SueAddr", display_name="SUE address",
                       attrs={"__module__": __name__})

#: format name -> Scapy class, for building and reading back.
LAYERS: dict[str, Any] = {"sue_afh": SueAfh, "sue_th": SueTh, "sue_addr": SueAddr}

bind_layers(UDP, SueTh, dport=M.SUE_UDP_PORT)
bind_layers(SueAfh, SueTh)
