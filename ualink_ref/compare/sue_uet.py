"""Scale-Up Ethernet (SUE) and Ultra Ethernet Transport (UET): header formats and op mapping.

Scapy-free: the one declaration of each header (a :class:`BitFormat`), the
table of sizes with sources, and how each memory operation becomes packets.
:mod:`ualink_ref.scapy.sue` / :mod:`ualink_ref.scapy.uet` generate Scapy layers
from these formats, build every frame as bytes and read it back.

* **UET** (Ultra Ethernet 1.0) over UDP port 4793: PDS RUD request / ACK
  headers (12 bytes each) and SES headers (standard request 44, atomic
  extension 4, compare-and-swap extension 36, response 12, response with
  data 20, small response with data 12). Layouts field by field from the
  public UEC 1.0 specification as laid out by public implementations (see
  ``specs/comparison.md``).
* **SUE** (Broadcom Scale-Up Ethernet): publicly only sizes are known — the
  AI forwarding header (AFH) takes the Ethernet+IP+UDP+FCS overhead from 46 to
  10 bytes. The full-Ethernet variant is built as Ethernet + IPv4 + UDP; the
  AFH variant as a 6-byte AFH + FCS (10 bytes). The SUE transport header and
  the AFH field layouts are *project layouts of documented sizes*, marked so
  in the spec and the table.

Every protocol uses the same segment size (``pmtu``) as RoCEv2 so only
headers differ, and one acknowledgement per message (coalesced).
"""

from __future__ import annotations

from dataclasses import dataclass
from types import MappingProxyType

from ualink_ref.bitfields import BitFormat, Field
from ualink_ref.compare.mapping import ATOMIC_KINDS, CompareOp

_UEC = "public: Ultra Ethernet Specification 1.0 (UEC, 2025), PDS/SES chapters"
_SUE_SIZE = ("public size: Broadcom SUE / Tomahawk Ultra, AFH replaces the 46-byte Ethernet "
             "header with 10 bytes; field layout is a project layout")
_SUE_TH = ("project layout: SUE transport header (opcode, VC, go-back-N PSN/ack PSN, length); "
           "SUE's field layout was not available to us, 8 bytes is a documented parameter")


def _f(name: str, bits: int, meaning: str, src: str = _UEC) -> Field:
    return Field(name, bits, meaning, src)


PDS_RUD_REQ = BitFormat("uet_pds_rud_req", [
    _f("type", 5, "PDS packet type: 2 = RUD request"),
    _f("next_hdr", 4, "next header: 3 = SES standard request"),
    _f("rsvd1", 2, "reserved"),
    _f("retrans", 1, "retransmission"),
    _f("ackreq", 1, "ACK requested"),
    _f("syn", 1, "PDC establishment"),
    _f("rsvd2", 2, "reserved"),
    _f("clear_psn_offset", 16, "offset of the clear PSN"),
    _f("psn", 32, "packet sequence number"),
    _f("spdcid", 16, "source PDC id"),
    _f("dpdcid", 16, "destination PDC id"),
], description="UET PDS RUD/ROD request header (12 bytes).", provenance=_UEC)

PDS_ACK = BitFormat("uet_pds_ack", [
    _f("type", 5, "PDS packet type: 7 = ACK"),
    _f("next_hdr", 4, "next header: 4 response, 5 response with data, 6 small"),
    _f("rsvd1", 1, "reserved"),
    _f("ecn", 1, "ECN marked"),
    _f("retrans", 1, "retransmission"),
    _f("probe", 1, "probe"),
    _f("request", 2, "ACK request: none / clear / close"),
    _f("rsvd2", 1, "reserved"),
    _f("ack_psn_offset", 16, "PSN acknowledged, as an offset from cack_psn"),
    _f("cack_psn", 32, "cumulative ACK PSN"),
    _f("spdcid", 16, "source PDC id"),
    _f("dpdcid", 16, "destination PDC id"),
], description="UET PDS ACK header (12 bytes).", provenance=_UEC)

SES_STD = BitFormat("uet_ses_std", [
    _f("rsvd1", 2, "reserved"),
    _f("opcode", 6, "1 WRITE, 2 READ, 4 FETCHING_ATOMIC"),
    _f("version", 2, "SES version"),
    _f("dc", 1, "delivery complete"),
    _f("ie", 1, "initiator error"),
    _f("rel", 1, "relative addressing"),
    _f("hd", 1, "header data present"),
    _f("eom", 1, "end of message"),
    _f("som", 1, "start of message"),
    _f("message_id", 16, "message id"),
    _f("ri_generation", 8, "resource index generation"),
    _f("job_id", 24, "job id"),
    _f("rsvd2", 4, "reserved"),
    _f("pid_on_fep", 12, "process id on the fabric endpoint"),
    _f("rsvd3", 4, "reserved"),
    _f("resource_index", 12, "resource index"),
    _f("buffer_offset", 64, "offset in the target buffer"),
    _f("initiator", 32, "initiator id"),
    _f("memory_key", 64, "memory key / match bits"),
    _f("header_data", 64, "header data (SOM) / payload length + message offset"),
    _f("request_length", 32, "length of the whole request"),
], description="UET SES standard request header (44 bytes).", provenance=_UEC)

SES_ATOMIC = BitFormat("uet_ses_atomic", [
    _f("atomic_code", 8, "AMO: 0 MIN, 1 MAX, 2 SUM, 7 BOR, 8 BAND, 10 BXOR, 12 WRITE"),
    _f("atomic_datatype", 8, "4 INT32, 5 UINT32, 6 INT64, 7 UINT64"),
    _f("semantic_control", 8, "cacheable / coherent / vendor bits"),
    _f("rsvd", 8, "reserved"),
], description="UET SES atomic operation extension header (4 bytes).", provenance=_UEC)

SES_CAS = BitFormat("uet_ses_cas", [
    _f("atomic_code", 8, "AMO: 13 CSWAP"),
    _f("atomic_datatype", 8, "4 INT32, 5 UINT32, 6 INT64, 7 UINT64"),
    _f("semantic_control", 8, "cacheable / coherent / vendor bits"),
    _f("rsvd", 8, "reserved"),
    _f("compare", 128, "compare value (16 bytes, operand in the low bytes)"),
    _f("swap", 128, "swap value (16 bytes)"),
], description="UET SES compare-and-swap extension header (36 bytes).", provenance=_UEC)

SES_RESP = BitFormat("uet_ses_resp", [
    _f("list", 2, "list delivered to"),
    _f("opcode", 6, "1 = response"),
    _f("ver", 2, "version"),
    _f("return_code", 6, "1 = OK"),
    _f("message_id", 16, "message id of the request"),
    _f("ri_generation", 8, "resource index generation"),
    _f("job_id", 24, "job id"),
    _f("modified_length", 32, "bytes modified"),
], description="UET SES response without data (12 bytes).", provenance=_UEC)

SES_RESP_DATA = BitFormat("uet_ses_resp_data", [
    _f("list", 2, "list delivered to"),
    _f("opcode", 6, "2 = response with data"),
    _f("ver", 2, "version"),
    _f("return_code", 6, "1 = OK"),
    _f("message_id", 16, "message id"),
    _f("ri_generation", 8, "resource index generation"),
    _f("job_id", 24, "job id"),
    _f("read_request_message_id", 16, "message id of the READ"),
    _f("rsvd", 4, "reserved"),
    _f("payload_length", 12, "data bytes in this packet"),
    _f("modified_length", 32, "bytes read"),
    _f("message_offset", 32, "offset of this packet's data in the message"),
], description="UET SES response with data (20 bytes).", provenance=_UEC)

SES_RESP_SMALL = BitFormat("uet_ses_resp_small", [
    _f("list", 2, "list delivered to"),
    _f("opcode", 6, "2 = response with data"),
    _f("ver", 2, "version"),
    _f("return_code", 6, "1 = OK"),
    _f("rsvd1", 2, "reserved"),
    _f("payload_length", 14, "data bytes"),
    _f("rsvd2", 8, "reserved"),
    _f("job_id", 24, "job id"),
    _f("original_request_psn", 32, "PSN of the request answered"),
], description="UET SES small response with data (12 bytes).", provenance=_UEC)

SUE_AFH = BitFormat("sue_afh", [
    Field("afh_tag", 8, "marks an AFH frame (project value 0xAF)", _SUE_SIZE),
    Field("vc", 4, "virtual channel", _SUE_SIZE),
    Field("rsvd", 4, "reserved", _SUE_SIZE),
    Field("dst_xpu", 12, "destination XPU (up to 1024 XPUs)", _SUE_SIZE),
    Field("src_xpu", 12, "source XPU", _SUE_SIZE),
    Field("hop", 8, "hop / entropy", _SUE_SIZE),
], description="SUE AI forwarding header: 6 bytes + the 4-byte FCS = 10 bytes.",
    provenance=_SUE_SIZE)

SUE_TH = BitFormat("sue_th", [
    Field("opcode", 8, "1 PUT, 2 GET, 3 GET_RESP, 4 ACK, 0x10+k ATOMIC k, 5 ATOMIC_RESP", _SUE_TH),
    Field("vc", 4, "virtual channel (CBFC class)", _SUE_TH),
    Field("flags", 4, "first / last segment", _SUE_TH),
    Field("psn", 16, "go-back-N sequence number", _SUE_TH),
    Field("ack_psn", 16, "last PSN received in order", _SUE_TH),
    Field("length", 16, "payload bytes", _SUE_TH),
], description="SUE transport header (project layout, 8 bytes).", provenance=_SUE_TH)

SUE_ADDR = BitFormat("sue_addr", [
    Field("addr", 64, "remote address of a PUT / GET / ATOMIC", _SUE_TH),
], description="SUE request address (8 bytes).", provenance=_SUE_TH)

FORMATS: tuple[BitFormat, ...] = (PDS_RUD_REQ, PDS_ACK, SES_STD, SES_ATOMIC, SES_CAS, SES_RESP,
                                  SES_RESP_DATA, SES_RESP_SMALL, SUE_AFH, SUE_TH, SUE_ADDR)
BY_NAME: MappingProxyType[str, BitFormat] = MappingProxyType({f.name: f for f in FORMATS})

UET_UDP_PORT = 4793
#: project choice: SUE's full-Ethernet variant needs a UDP port to be dissected; none is public.
SUE_UDP_PORT = 4794
#: UET AMO codes and datatypes (UEC 1.0 SES).
UET_AMO = MappingProxyType({"smin": 0, "umin": 0, "smax": 1, "umax": 1, "add": 2, "or": 7,
                            "and": 8, "xor": 10, "swap": 12, "cas": 13})
SUE_ATOMIC_BASE = 0x10
#: Largest payload_length of a UET SES response with data (a 12-bit field).
UET_RESP_MAX = (1 << 12) - 1

#: Network header + trailer of each variant, bytes (before the SUE/UET headers and payload).
NETWORK_BYTES = MappingProxyType({
    "eth_ipv4_udp": 14 + 20 + 8 + 4,  # Ethernet, IPv4, UDP, FCS: the public "46 bytes"
    "afh": 6 + 4,  # AFH + FCS: the public "10 bytes"
})
MIN_FRAME = 64  # IEEE 802.3 minFrameSize; SUE reuses the 802.3 MAC (project choice, see spec)


@dataclass(frozen=True)
class Packet:
    """One SUE/UET packet: headers after the network header, with field values, and payload."""

    name: str
    direction: str
    headers: tuple[tuple[str, tuple[tuple[str, int], ...]], ...]
    payload: int = 0

    @property
    def header_bytes(self) -> int:
        """Bytes of the SUE/UET headers (network header not included)."""
        return sum(BY_NAME[h].byte_length for h, _ in self.headers)


@dataclass(frozen=True)
class Mapping:
    """The packets an operation becomes on one protocol variant, and how it was modelled."""

    protocol: str  # "sue-afh", "sue-eth", "uet"
    op: CompareOp
    pmtu: int
    packets: tuple[Packet, ...]
    round_trips: int
    emulated: bool
    note: str

    @property
    def network(self) -> str:
        """The network header variant: ``afh`` or ``eth_ipv4_udp``."""
        return "afh" if self.protocol == "sue-afh" else "eth_ipv4_udp"


def frame_bytes(pkt: Packet, network: str) -> int:
    """Frame length (first header byte .. FCS) by the table, padded to the 64-byte minimum."""
    return max(NETWORK_BYTES[network] + pkt.header_bytes + pkt.payload, MIN_FRAME)


def _segments(n: int, pmtu: int) -> list[tuple[int, int]]:
    out = [(off, min(pmtu, n - off)) for off in range(0, n, pmtu)]
    return out or [(0, 0)]


def _h(name: str, **values: int) -> tuple[str, tuple[tuple[str, int], ...]]:
    return (name, tuple(sorted(values.items())))


# -- SUE ---------------------------------------------------------------------


def _sue(op: CompareOp, pmtu: int, protocol: str) -> Mapping:
    addr = 0x2000 if op.is_atomic else 0x1000
    pkts: list[Packet] = []
    if op.kind == "store":
        segs = _segments(op.size, pmtu)
        for i, (off, n) in enumerate(segs):
            flags = (i == 0) << 1 | (i == len(segs) - 1)
            pkts.append(Packet("PUT", "fwd", (_h("sue_th", opcode=1, flags=flags, psn=i,
                                                  length=n),
                                              _h("sue_addr", addr=addr + off)), n))
        pkts.append(Packet("ACK", "rev", (_h("sue_th", opcode=4, ack_psn=len(segs) - 1),)))
        note = "PUT + ACK"
    elif op.kind == "load":
        pkts.append(Packet("GET", "fwd", (_h("sue_th", opcode=2, flags=3, length=0),
                                          _h("sue_addr", addr=addr))))
        segs = _segments(op.size, pmtu)
        for i, (_, n) in enumerate(segs):
            flags = (i == 0) << 1 | (i == len(segs) - 1)
            pkts.append(Packet("GET_RESP", "rev", (_h("sue_th", opcode=3, flags=flags, psn=i,
                                                       length=n),), n))
        note = "GET + GET_RESP"
    else:

        code = SUE_ATOMIC_BASE + ATOMIC_KINDS.index(op.kind)
        pkts.append(Packet("ATOMIC", "fwd", (_h("sue_th", opcode=code, flags=3,
                                                 length=op.useful_fwd),
                                             _h("sue_addr", addr=addr)), op.useful_fwd))
        pkts.append(Packet("ATOMIC_RESP", "rev", (_h("sue_th", opcode=5, flags=3,
                                                      length=op.size),), op.size))
        note = "ATOMIC + ATOMIC_RESP (native: every kind assumed, SUE lists atomics)"
    return Mapping(protocol, op, pmtu, tuple(pkts), 1, False, note)


# -- UET ---------------------------------------------------------------------

_WRITE, _READ, _FETCHING_ATOMIC = 1, 2, 4
_NH_STD, _NH_RESP, _NH_RESP_DATA, _NH_RESP_SMALL = 3, 4, 5, 6


def _rud(psn: int) -> tuple[str, tuple[tuple[str, int], ...]]:
    return _h("uet_pds_rud_req", type=2, next_hdr=_NH_STD, ackreq=1, psn=psn, spdcid=1,
              dpdcid=2)


def _ack(next_hdr: int, psn: int) -> tuple[str, tuple[tuple[str, int], ...]]:
    return _h("uet_pds_ack", type=7, next_hdr=next_hdr, cack_psn=psn, spdcid=2, dpdcid=1)


def _uet(op: CompareOp, pmtu: int) -> Mapping:
    pkts: list[Packet] = []
    if op.kind == "store":
        segs = _segments(op.size, pmtu)
        for i, (off, n) in enumerate(segs):
            pkts.append(Packet("RUD_REQ/SES_WRITE", "fwd", (
                _rud(i),
                _h("uet_ses_std", opcode=_WRITE, som=int(i == 0), eom=int(i == len(segs) - 1),
                   message_id=1, buffer_offset=0x1000 + off, request_length=op.size)), n))
        pkts.append(Packet("ACK/SES_RESP", "rev", (
            _ack(_NH_RESP, len(segs) - 1),
            _h("uet_ses_resp", opcode=1, return_code=1, message_id=1,
               modified_length=op.size))))
        note = "SES WRITE + PDS ACK carrying the SES response"
    elif op.kind == "load":
        pkts.append(Packet("RUD_REQ/SES_READ", "fwd", (
            _rud(0),
            _h("uet_ses_std", opcode=_READ, som=1, eom=1, message_id=1, buffer_offset=0x1000,
               request_length=op.size))))
        # The response's payload_length is 12 bits: at PMTU 4096 a segment holds 4095 bytes.
        for off, n in _segments(op.size, min(pmtu, UET_RESP_MAX)):
            pkts.append(Packet("ACK/SES_RESP_DATA", "rev", (
                _ack(_NH_RESP_DATA, 0),
                _h("uet_ses_resp_data", opcode=2, return_code=1, message_id=1,
                   read_request_message_id=1, payload_length=n, modified_length=op.size,
                   message_offset=off)), n))
        note = "SES READ + PDS ACKs carrying SES responses with data"
    else:
        signed = op.kind in ("smin", "smax")
        dtype = {4: 4, 8: 6}[op.size] + (0 if signed else 1)
        std = _h("uet_ses_std", opcode=_FETCHING_ATOMIC, som=1, eom=1, message_id=1,
                 buffer_offset=0x2000, request_length=op.size)
        if op.kind == "cas":
            ext = _h("uet_ses_cas", atomic_code=UET_AMO["cas"], atomic_datatype=dtype,
                     compare=0, swap=1)
            pkts.append(Packet("RUD_REQ/SES_FETCHING_ATOMIC", "fwd", (_rud(0), std, ext)))
        else:
            ext = _h("uet_ses_atomic", atomic_code=UET_AMO[op.kind], atomic_datatype=dtype)
            pkts.append(Packet("RUD_REQ/SES_FETCHING_ATOMIC", "fwd", (_rud(0), std, ext),
                               op.size))
        pkts.append(Packet("ACK/SES_RESP_SMALL", "rev", (
            _ack(_NH_RESP_SMALL, 0),
            _h("uet_ses_resp_small", opcode=2, return_code=1, payload_length=op.size,
               original_request_psn=0)), op.size))
        note = "SES FETCHING_ATOMIC (native AMO) + PDS ACK with small response data"
    return Mapping("uet", op, pmtu, tuple(pkts), 1, False, note)


PROTOCOLS: tuple[str, ...] = ("sue-afh", "sue-eth", "uet")


def map_op(op: CompareOp, protocol: str, pmtu: int = 1024) -> Mapping:
    """The packets ``op`` becomes on ``protocol`` ("sue-afh", "sue-eth" or "uet")."""
    if protocol == "uet":
        return _uet(op, pmtu)
    if protocol in ("sue-afh", "sue-eth"):
        return _sue(op, pmtu, protocol)
    raise ValueError(f"protocol must be one of {PROTOCOLS}, not {protocol!r}")


def table_bytes(mapping: Mapping) -> tuple[int, int, int, int]:
    """(frames fwd, frames rev, frame bytes fwd, frame bytes rev) by the size table."""
    out = {"fwd": [0, 0], "rev": [0, 0]}
    for p in mapping.packets:
        out[p.direction][0] += 1
        out[p.direction][1] += frame_bytes(p, mapping.network)
    return out["fwd"][0], out["rev"][0], out["fwd"][1], out["rev"][1]
