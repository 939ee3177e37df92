"""RoCEv2 header sizes and PHY coding overheads, each with its source.

This module is Scapy-free: it is the table the comparison reasons with, and
the Scapy frames built by :mod:`ualink_ref.scapy.roce` are checked against
it (a test builds every packet of every mapped operation and compares the
byte count with :func:`frame_bytes`).

The three InfiniBand extended transport headers that ``scapy.contrib.roce``
lacks (RETH, AtomicETH, AtomicAckETH) are declared here as
:class:`~ualink_ref.bitfields.BitFormat` s — the one declaration from which
the Scapy layers are generated and the sizes below are taken.

Accounting levels (see ``specs/rocev2-comparison.md``):

* ``frame`` — Ethernet destination address to FCS, padded to the 64-byte
  minimum frame (what a MAC counts as the frame);
* ``mac`` — the frame plus preamble/SFD and the inter-frame gap: the line
  time the frame occupies at the MAC service interface;
* ``wire`` — ``mac`` after 64b/66b → 256b/257b transcoding and RS(544,514)
  FEC, i.e. the bits that actually cross the lane.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from types import MappingProxyType

from ualink_ref.bitfields import BitFormat, Field

_IBA = "public: InfiniBand Architecture Specification Vol. 1 (IBTA), §9.3 extended headers"

RETH = BitFormat(
    "reth",
    [
        Field("va", 64, "Virtual address of the first byte of the remote buffer", _IBA),
        Field("rkey", 32, "Remote key authorising access to the buffer", _IBA),
        Field("dma_len", 32, "Length of the whole RDMA message in bytes", _IBA),
    ],
    description=(
        "RDMA Extended Transport Header: in RDMA WRITE FIRST/ONLY and RDMA READ "
        "REQUEST packets, right after the BTH."
    ),
    provenance=_IBA,
)

ATOMIC_ETH = BitFormat(
    "atomic_eth",
    [
        Field("va", 64, "Virtual address of the 8-byte aligned remote operand", _IBA),
        Field("rkey", 32, "Remote key authorising access", _IBA),
        Field("swap_add", 64, "Swap value (COMPARE_SWAP) or addend (FETCH_ADD)", _IBA),
        Field("compare", 64, "Compare value (COMPARE_SWAP; ignored by FETCH_ADD)", _IBA),
    ],
    description="Atomic Extended Transport Header: in COMPARE_SWAP and FETCH_ADD requests.",
    provenance=_IBA,
)

ATOMIC_ACK_ETH = BitFormat(
    "atomic_ack_eth",
    [Field("orig_data", 64, "The remote operand's value before the atomic operation", _IBA)],
    description="Atomic Acknowledge Extended Transport Header: after the AETH of an ATOMIC ACK.",
    provenance=_IBA,
)

#: Every BitFormat this module declares (for specs and Scapy generation).
FORMATS: tuple[BitFormat, ...] = (RETH, ATOMIC_ETH, ATOMIC_ACK_ETH)


@dataclass(frozen=True)
class HeaderSize:
    """One entry of the header-size table: a byte count and where it comes from."""

    name: str
    size: int
    meaning: str
    source: str


def _table(*entries: HeaderSize) -> MappingProxyType[str, HeaderSize]:
    return MappingProxyType({e.name: e for e in entries})


#: The header-size table. Keys are the names used by the op mapping.
HEADER_SIZES: MappingProxyType[str, HeaderSize] = _table(
    HeaderSize("preamble_sfd", 8, "preamble (7) + start frame delimiter (1)",
               "IEEE 802.3 clause 3.2.1-3.2.2"),
    HeaderSize("ifg", 12, "minimum inter-frame gap, 96 bit times",
               "IEEE 802.3 clause 4.4.2 (interFrameGap)"),
    HeaderSize("ethernet", 14, "destination + source address + EtherType (no VLAN tag)",
               "IEEE 802.3 clause 3.1.1"),
    HeaderSize("ipv4", 20, "IPv4 header without options", "public: IETF RFC 791"),
    HeaderSize("ipv6", 40, "IPv6 fixed header, no extension headers", "public: IETF RFC 8200"),
    HeaderSize("udp", 8, "UDP header, destination port 4791",
               "public: IETF RFC 768; IBTA Annex A17 (RoCEv2) for port 4791"),
    HeaderSize("bth", 12, "InfiniBand Base Transport Header",
               "public: InfiniBand Architecture Specification Vol. 1, §9.2"),
    HeaderSize("reth", RETH.byte_length, "RDMA Extended Transport Header", _IBA),
    HeaderSize("atomic_eth", ATOMIC_ETH.byte_length, "Atomic Extended Transport Header",
               _IBA),
    HeaderSize("aeth", 4, "ACK Extended Transport Header (syndrome 8 + MSN 24)", _IBA),
    HeaderSize("atomic_ack_eth", ATOMIC_ACK_ETH.byte_length,
               "Atomic Acknowledge Extended Transport Header", _IBA),
    HeaderSize("icrc", 4, "Invariant CRC over the IB transport packet",
               "public: InfiniBand Architecture Specification Vol. 1, §7.8.1; Annex A17"),
    HeaderSize("fcs", 4, "Ethernet frame check sequence (CRC-32)", "IEEE 802.3 clause 3.2.9"),
    HeaderSize("min_frame", 64, "minimum frame, destination address to FCS",
               "IEEE 802.3 clause 4.4.2 (minFrameSize = 512 bits)"),
    HeaderSize("pad_align", 4, "IB payload padded to a multiple of 4 bytes (BTH PadCnt)",
               "public: InfiniBand Architecture Specification Vol. 1, §9.2 (PadCnt)"),
)

#: 64b/66b then 256b/257b transcoding: 257 coded bits per 256 MAC bits.
TRANSCODE = Fraction(257, 256)
#: RS(544,514) "KP4": 544 wire symbols per 514 message symbols (10-bit symbols).
RS_544_514 = Fraction(544, 514)
#: Wire bits per MAC bit for an 802.3 200G/400G/800G PCS+FEC (alignment markers ignored).
#: Exactly 17/16, since 514 = 2 x 257 and 544 = 17 x 32 — the same factor as a 640-byte
#: flit in a 680-byte codeword, so FEC scales both stacks alike.
ETHERNET_WIRE_PER_MAC = TRANSCODE * RS_544_514

PHY_SOURCES: MappingProxyType[str, str] = MappingProxyType({
    "transcode_256b257b": "IEEE 802.3 clauses 91 and 119 (64b/66b -> 256b/257b transcoding)",
    "rs_544_514": "IEEE 802.3 clauses 91 and 119 (RS(544,514) over 10-bit symbols)",
    "alignment_markers": (
        "project choice: ignored (they take a fraction of a per mille of the lane and the "
        "PCS deletes idles to make room for them)"
    ),
})


def size(name: str) -> int:
    """The size in bytes of header ``name`` from :data:`HEADER_SIZES`."""
    return HEADER_SIZES[name].size


def pad_count(payload: int) -> int:
    """BTH PadCnt: bytes added so that the IB payload is a multiple of 4."""
    return -payload % size("pad_align")


def ip_header(ip: str) -> str:
    """The header-table key for ``ip`` ("ipv4" or "ipv6")."""
    if ip not in ("ipv4", "ipv6"):
        raise ValueError(f"ip must be 'ipv4' or 'ipv6', not {ip!r}")
    return ip


def frame_bytes(ext: tuple[str, ...], payload: int, ip: str = "ipv4") -> int:
    """Frame length (destination address .. FCS) of one RoCEv2 packet, by the table.

    ``ext`` names the extension headers after the BTH; ``payload`` is the IB
    payload before padding. The result includes the 4-byte pad alignment,
    ICRC, FCS, and the padding up to the 64-byte minimum frame.
    """
    if payload < 0:
        raise ValueError("payload must be >= 0")
    total = (
        size("ethernet") + size(ip_header(ip)) + size("udp") + size("bth")
        + sum(size(e) for e in ext)
        + payload + pad_count(payload)
        + size("icrc") + size("fcs")
    )
    return max(total, size("min_frame"))


def mac_bytes(frame: int) -> int:
    """Line bytes of one frame at the MAC: the frame plus preamble/SFD and the gap."""
    return frame + size("preamble_sfd") + size("ifg")


def wire_bytes(mac: int | Fraction) -> Fraction:
    """Bytes on the lane after 256b/257b transcoding and RS(544,514) (exact fraction)."""
    return Fraction(mac) * ETHERNET_WIRE_PER_MAC


def markdown_table() -> str:
    """The header-size table and PHY factors as Markdown (embedded in the spec, test-checked)."""
    lines = ["| Header | Bytes | What | Source |", "|---|---:|---|---|"]
    for e in HEADER_SIZES.values():
        lines.append(f"| `{e.name}` | {e.size} | {e.meaning} | {e.source} |")
    lines.append("| 256b/257b transcoding | x 257/256 | 257 coded bits per 256 MAC bits "
                 f"| {PHY_SOURCES['transcode_256b257b']} |")
    lines.append("| RS(544,514) FEC | x 544/514 | 544 wire symbols per 514 message "
                 f"symbols | {PHY_SOURCES['rs_544_514']} |")
    lines.append(f"| alignment markers | x 1 | not counted | {PHY_SOURCES['alignment_markers']} |")
    return "\n".join(lines) + "\n"
