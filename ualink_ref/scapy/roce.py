"""Scapy layers for the RoCEv2 extension headers, and real frames for the comparison.

``scapy.contrib.roce`` provides BTH (with the ICRC), AETH and GRH; this module
adds RETH, AtomicETH and AtomicAckETH, generated with
:func:`ualink_ref.scapy_layers.packet_class` from the BitFormats declared in
:mod:`ualink_ref.compare.headers` (no layout is typed twice), and binds them
to BTH by opcode as the InfiniBand opcode table says:

* RETH after RDMA WRITE FIRST / ONLY and RDMA READ REQUEST (RC and UC);
* AtomicETH after COMPARE_SWAP and FETCH_ADD;
* AETH after RDMA READ RESPONSE FIRST / LAST / ONLY (ACKNOWLEDGE is bound by
  Scapy itself);
* AETH + AtomicAckETH after ATOMIC ACKNOWLEDGE (through :class:`AtomicAETH`,
  an AETH subclass that knows an AtomicAckETH follows it).

:func:`build_frame` turns a :class:`~ualink_ref.compare.mapping.RocePacket`
into a full Ethernet frame (payload padded to 4 bytes with BTH PadCnt set, ICRC
computed by Scapy's BTH, 802.3 FCS appended, padded to the 64-byte minimum),
and :func:`count_mapping` counts the bytes of the frames an operation becomes.
This module imports Scapy (GPL-2.0-only) and is loaded only on demand.
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass
from typing import Any

from scapy.contrib.roce import AETH, BTH
from scapy.layers.inet import IP, UDP
from scapy.layers.inet6 import IPv6
from scapy.layers.l2 import Ether
from scapy.packet import Packet, Raw, bind_layers

from ualink_ref.compare import headers as H
from ualink_ref.compare.mapping import RC_OPCODES, RoceMapping, RocePacket
from ualink_ref.scapy.gen import packet_class

__all__ = [
    "RETH",
    "AtomicAETH",
    "AtomicAckETH",
    "AtomicETH",
    "FrameCount",
    "RnicFields",
    "build_frame",
    "count_mapping",
    "frame_bytes",
    "rnic_fields",
]

ROCEV2_UDP_PORT = 4791
_UC = 0x20  # UC opcodes are the RC ones plus 0x20 (IBA opcode table)

RETH = packet_class(H.RETH, class_name="RETH", display_name="RETH",
                    attrs={"__module__": __name__})
AtomicETH = packet_class(H.ATOMIC_ETH, class_name="AtomicETH", display_name="AtomicETH",
                         attrs={"__module__": __name__})
AtomicAckETH = packet_class(H.ATOMIC_ACK_ETH, class_name="AtomicAckETH",
                            display_name="AtomicAckETH", attrs={"__module__": __name__})


class AtomicAETH(AETH):
    """The AETH of an ATOMIC ACKNOWLEDGE: same fields as Scapy's AETH, then AtomicAckETH.

    ``pkt[AETH]`` still finds it (``match_subclass``); the subclass exists only
    because what follows an AETH depends on the BTH opcode, which a plain
    field binding on AETH cannot see.
    """

    name = "AETH"
    match_subclass = True

    def guess_payload_class(self, payload: bytes) -> Any:
        """An ATOMIC ACKNOWLEDGE's AETH is always followed by an AtomicAckETH."""
        return AtomicAckETH

    def mysummary(self) -> str:
        """``AETH syndrome=.. msn=..`` (Scapy's AETH has no summary of its own)."""
        return self.sprintf("AETH syndrome=%syndrome% msn=%msn%")


def _bind() -> None:
    op = {name: value for name, (value, _, _) in RC_OPCODES.items()}
    for name in ("RDMA_WRITE_FIRST", "RDMA_WRITE_ONLY"):
        bind_layers(BTH, RETH, opcode=op[name])
        bind_layers(BTH, RETH, opcode=op[name] + _UC)
    bind_layers(BTH, RETH, opcode=op["RDMA_READ_REQUEST"])
    for name in ("COMPARE_SWAP", "FETCH_ADD"):
        bind_layers(BTH, AtomicETH, opcode=op[name])
    for name in ("RDMA_READ_RESPONSE_FIRST", "RDMA_READ_RESPONSE_LAST",
                 "RDMA_READ_RESPONSE_ONLY"):
        bind_layers(BTH, AETH, opcode=op[name])
    bind_layers(BTH, AtomicAETH, opcode=op["ATOMIC_ACKNOWLEDGE"])


_bind()

_MAC = {"fwd": ("02:00:00:00:00:01", "02:00:00:00:00:02"),
        "rev": ("02:00:00:00:00:02", "02:00:00:00:00:01")}
_IP4 = {"fwd": ("10.0.0.1", "10.0.0.2"), "rev": ("10.0.0.2", "10.0.0.1")}
_IP6 = {"fwd": ("fd00::1", "fd00::2"), "rev": ("fd00::2", "fd00::1")}


#: Remote virtual address of a load/store buffer and of an atomic's 8-byte operand.
#: An emulated atomic's READ and its COMPARE_SWAP both use ``ATOMIC_VA`` (one address).
BUFFER_VA = 0x1000
ATOMIC_VA = 0x2000
#: Destination QP numbers: the responder's QP (requests) and the requester's (responses).
_DQPN = {"fwd": 0x11, "rev": 0x12}


@dataclass(frozen=True)
class RnicFields:
    """The per-packet transport values an RNIC puts in one packet (see :func:`rnic_fields`)."""

    psn: int
    msn: int = 0
    va: int = BUFFER_VA


def _ext_layer(name: str, spec: RocePacket, dma_len: int, fields: RnicFields) -> Packet:
    if name == "reth":
        return RETH(va=fields.va, rkey=0x1234, dma_len=dma_len)
    if name == "atomic_eth":
        return AtomicETH(va=fields.va, rkey=0x1234, swap_add=1, compare=0)
    if name == "aeth":
        cls = AtomicAETH if spec.opcode == "ATOMIC_ACKNOWLEDGE" else AETH
        return cls(syndrome=0, msn=fields.msn)
    if name == "atomic_ack_eth":
        return AtomicAckETH(orig_data=0x0123456789ABCDEF)
    raise ValueError(f"no Scapy layer for extension header {name!r}")


def build_packet(spec: RocePacket, *, ip: str = "ipv4", psn: int = 0,
                 dma_len: int = 0, fields: RnicFields | None = None) -> Packet:
    """The Scapy packet (Ether .. ICRC, no FCS) for one mapped RoCEv2 packet.

    ``fields`` (PSN, MSN, remote address) default to ``psn`` with MSN 1 at
    :data:`BUFFER_VA`; :func:`build_mapping` passes the values an RNIC would use.
    """
    f = fields if fields is not None else RnicFields(psn=psn, msn=1)
    src, dst = _MAC[spec.direction]
    if H.ip_header(ip) == "ipv4":
        s, d = _IP4[spec.direction]
        net: Packet = IP(src=s, dst=d, flags="DF")
    else:
        s, d = _IP6[spec.direction]
        net = IPv6(src=s, dst=d)
    pad = H.pad_count(spec.payload)
    pkt = (Ether(src=src, dst=dst) / net / UDP(sport=49152, dport=ROCEV2_UDP_PORT)
           / BTH(opcode=spec.opcode_value, padcount=pad, dqpn=_DQPN[spec.direction], psn=f.psn,
                 ackreq=int(spec.direction == "fwd")))
    for name in spec.ext:
        pkt = pkt / _ext_layer(name, spec, dma_len, f)
    if spec.payload or pad:
        data = bytes(i & 0xFF for i in range(spec.payload)) + bytes(pad)
        pkt = pkt / Raw(data)
    return pkt


def frame_bytes(pkt: Packet) -> bytes:
    """The whole frame: Scapy's bytes padded to 60, then the 802.3 FCS (CRC-32, LSB first)."""
    raw = bytes(pkt)
    raw += bytes(max(0, H.size("min_frame") - H.size("fcs") - len(raw)))
    return raw + zlib.crc32(raw).to_bytes(4, "little")


def build_frame(spec: RocePacket, *, ip: str = "ipv4", psn: int = 0, dma_len: int = 0,
                fields: RnicFields | None = None) -> bytes:
    """Frame bytes (destination address .. FCS) of one mapped RoCEv2 packet."""
    return frame_bytes(build_packet(spec, ip=ip, psn=psn, dma_len=dma_len, fields=fields))


@dataclass(frozen=True)
class FrameCount:
    """Bytes of the frames an operation becomes, per direction, counted from built frames."""

    frames_fwd: int
    frames_rev: int
    frame_bytes_fwd: int
    frame_bytes_rev: int

    @property
    def mac_bytes_fwd(self) -> int:
        """Forward frames plus preamble/SFD and inter-frame gap each."""
        return self.frame_bytes_fwd + self.frames_fwd * (H.size("preamble_sfd") + H.size("ifg"))

    @property
    def mac_bytes_rev(self) -> int:
        """Reverse frames plus preamble/SFD and inter-frame gap each."""
        return self.frame_bytes_rev + self.frames_rev * (H.size("preamble_sfd") + H.size("ifg"))


_COMPLETES = frozenset({
    "RDMA_WRITE_LAST", "RDMA_WRITE_ONLY", "RDMA_READ_RESPONSE_LAST",
    "RDMA_READ_RESPONSE_ONLY", "COMPARE_SWAP", "FETCH_ADD",
})


def rnic_fields(mapping: RoceMapping) -> list[RnicFields]:
    """PSN, MSN and remote address of every packet of ``mapping``, as an RNIC numbers them.

    One reliable connection (one QP pair); each direction has its own PSN
    space (IBA Vol. 1 §9.7.1): the requester numbers its request packets from
    0, and a READ REQUEST reserves one PSN per response packet it asks for.
    The responder's packets carry request PSNs back: READ responses start at
    the READ REQUEST's PSN and count up; an ACKNOWLEDGE carries the PSN of
    the last request packet it acknowledges (coalesced, one per message); an
    ATOMIC ACKNOWLEDGE carries its atomic request's PSN. The MSN in an AETH
    counts the messages the responder has completed (IBA §9.7.5.1.2): a
    message completes with WRITE LAST/ONLY, READ RESPONSE LAST/ONLY, or an
    atomic, so READ RESPONSE FIRST carries the count before its message.
    An emulated atomic's READ and COMPARE_SWAP target the same address.
    """
    va = ATOMIC_VA if mapping.op.is_atomic else BUFFER_VA
    out: list[RnicFields] = []
    next_psn = 0  # requester's next PSN
    last_req = 0  # PSN of the last request packet sent
    read_psns: list[int] = []  # PSNs reserved by READ REQUESTs, answered in order
    completed = 0  # messages the responder has completed (the MSN)
    for spec in mapping.packets:
        if spec.direction == "fwd":
            last_req = next_psn
            out.append(RnicFields(psn=next_psn, va=va))
            if spec.opcode == "RDMA_READ_REQUEST":
                responses = max(1, -(-_read_length(mapping) // mapping.pmtu))
                read_psns.extend(range(next_psn, next_psn + responses))
                next_psn += responses
            else:
                next_psn += 1
            if spec.opcode in _COMPLETES:  # writes and atomics complete at the responder
                completed += 1
            continue
        if spec.opcode.startswith("RDMA_READ_RESPONSE"):
            psn = read_psns.pop(0)
            if spec.opcode in _COMPLETES:
                completed += 1
        else:  # ACKNOWLEDGE / ATOMIC ACKNOWLEDGE: the last request packet received
            psn = last_req
        out.append(RnicFields(psn=psn, msn=completed, va=va))
    return out


def _read_length(mapping: RoceMapping) -> int:
    return 8 if mapping.op.is_atomic else mapping.op.size


def build_mapping(mapping: RoceMapping, *, ip: str = "ipv4") -> list[tuple[RocePacket, bytes]]:
    """Every packet of ``mapping`` with its built frame, in order (see :func:`rnic_fields`)."""
    dma_len = _read_length(mapping)
    return [(spec, build_frame(spec, ip=ip, dma_len=dma_len, fields=f))
            for spec, f in zip(mapping.packets, rnic_fields(mapping), strict=True)]


def count_mapping(mapping: RoceMapping, *, ip: str = "ipv4") -> FrameCount:
    """Count the bytes of the frames built for ``mapping``, per direction."""
    counts = {"fwd": [0, 0], "rev": [0, 0]}
    for spec, frame in build_mapping(mapping, ip=ip):
        counts[spec.direction][0] += 1
        counts[spec.direction][1] += len(frame)
    return FrameCount(counts["fwd"][0], counts["rev"][0], counts["fwd"][1], counts["rev"][1])
