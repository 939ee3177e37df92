"""Protocols side by side at pod scale: what one memory operation costs on UALink, SUE,
UET and RoCEv2 links, as a :class:`~ualink_ref.fast.calibrate.LinkCalibration` the fast
engine runs (``specs/fast-protocols.md``, rules K1-K7).

K1. **Names**: the comparison's stacks (:data:`ualink_ref.compare.four.STACKS`):
    ``roce``, ``sue-afh``, ``sue-eth``, ``uet``, ``ualink``; any other name is a
    :class:`~ualink_ref.errors.ConfigError`.
K2. **UALink is measured**: its calibration is the exact pod's
    (:func:`~ualink_ref.fast.calibrate.calibrate`, rules Q1-Q5).
K3. **Bytes per operation** of the others come from the comparison's frame builders:
    a fast-fidelity ``write`` of ``64 x beats`` bytes is the comparison's Store of that
    size, a ``read`` its Load, an ``atomic`` (the collectives' 8-byte flag add, C2) its
    8-byte atomic ADD; RoCEv2 frames by :func:`ualink_ref.compare.mapping.map_op` and
    :func:`ualink_ref.compare.headers.frame_bytes`, SUE and UET frames by
    :func:`ualink_ref.compare.sue_uet.map_op` and
    :func:`~ualink_ref.compare.sue_uet.table_bytes` (the size tables the Scapy-built
    frames are tested against); each frame plus preamble/SFD and inter-frame gap
    (MAC level), then 256b/257b and RS(544,514) (:func:`ualink_ref.compare.headers.
    wire_bytes`). Requests are the ``fwd`` direction, responses (ACKs, read data, the
    atomic's old value) the ``rev`` direction.
K4. **The slot rule**: a slot is the time the pod's lanes take to carry
    :data:`SLOT_WIRE_BYTES` = 680 wire bytes (one RS(544,514) codeword, ``SLOT_NS /
    lanes``; an 802.3 200G lane uses RS(544,514) too). An Ethernet frame takes its wire
    bytes / 680 slots — equally its MAC bytes / 640, since the PCS and FEC multiply by
    exactly 17/16. An Ethernet switch forwards each frame as it came, so a request takes
    the same slots on the requester's uplink and the target's downlink (likewise the
    response).
K5. **Zero-load latency** of each shape: the static model
    (:func:`ualink_ref.sim.latency.round_trip`, one switch) of the pod's link (lanes,
    cable, FEC decode; RS(544,514)) with the protocol's public switch figure
    (:data:`ualink_ref.compare.four.SWITCH_NS`), plus the exact pod's own pipeline —
    the UALink zero-load latency of the same shape on the same pod (rule R2) minus the
    static model of that UALink link — as endpoint processing, the same for every
    protocol (project choice: no public per-packet figure exists for any of them, so
    only framing, FEC and the switch differ). The one-way latency (rule Q4) is the
    static one way of the request plus half that pipeline.
K6. **Flow control** (:data:`FLOW_CONTROL`): UALink credits (CBFC), the Ethernet
    protocols PFC; recorded, not modelled — the fast engine has neither (rule E6).
K7. **In-network reduction** (switch rule S9) is UALink's only: a collective that uses
    a multicast group on another protocol is a :class:`~ualink_ref.errors.ConfigError`.
"""

from __future__ import annotations

import math
from dataclasses import replace
from fractions import Fraction

from ualink_ref.collectives.algorithms import Schedule
from ualink_ref.compare import headers as H
from ualink_ref.compare import mapping as R
from ualink_ref.compare import sue_uet as M
from ualink_ref.compare.four import STACKS, SWITCH_NS
from ualink_ref.compare.mapping import CompareOp, FwdRev
from ualink_ref.errors import ConfigError
from ualink_ref.fast.calibrate import BEATS, KINDS, LinkCalibration, OpShape, calibrate, link_base
from ualink_ref.fast.collective import FastConfig, run_fast_collective
from ualink_ref.fast.report import FastReport
from ualink_ref.sim import latency as L
from ualink_ref.sim.fabric import FabricConfig, FlowControlMode
from ualink_ref.sim.fabric_report import static_slots
from ualink_ref.sim.workloads import Op
from ualink_ref.sizes import WIRE_BYTES_PER_FLIT
from ualink_ref.tl import AtomicOp

#: Protocol names, in the comparison's column order (rule K1).
PROTOCOLS: tuple[str, ...] = tuple(name for name, _ in STACKS)
#: Their labels for tables.
LABELS: dict[str, str] = dict(STACKS)
#: Wire bytes one slot carries on a 200G lane with RS(544,514) (rule K4).
SLOT_WIRE_BYTES: int = WIRE_BYTES_PER_FLIT["kp4"]
#: Path MTU of the Ethernet framings (the comparison's default; a fast-fidelity request
#: carries at most 256 bytes, so every one is a single frame at any PMTU).
PMTU = 1024
#: The 8-byte atomic that stands for the collectives' flag add (rule K3).
ATOMIC_OP = CompareOp("add", 8)

#: Rule K6: each protocol's link-level flow control, and where that comes from.
FLOW_CONTROL: dict[str, tuple[FlowControlMode, str]] = {
    "ualink": ("cbfc", "UALink 200G 1.0 (public): credit-based flow control per virtual "
                       "channel; modelled bit-exactly by the exact pod (specs/tl.md)"),
    "sue-afh": ("pfc", "IEEE 802.1Qbb priority flow control, the lossless-Ethernet baseline "
                       "(project choice for SUE: its own link-layer options are not modelled)"),
    "sue-eth": ("pfc", "IEEE 802.1Qbb priority flow control (as sue-afh)"),
    "uet": ("pfc", "IEEE 802.1Qbb priority flow control (project choice for UET: its own "
                   "link-layer options are not modelled)"),
    "roce": ("pfc", "IEEE 802.1Qbb priority flow control: RoCEv2's lossless fabric"),
}


def check_protocol(protocol: object) -> str:
    """``protocol`` if it names one of :data:`PROTOCOLS` (rule K1); else a ConfigError."""
    if protocol not in PROTOCOLS:
        raise ConfigError("protocol", f"must be one of {PROTOCOLS}, got {protocol!r}")
    return str(protocol)


def compare_op(kind: str, nbytes: int) -> CompareOp:
    """The comparison's operation for a fast-fidelity ``kind`` of ``nbytes`` (rule K3)."""
    if kind == "write":
        return CompareOp("store", nbytes)
    if kind == "read":
        return CompareOp("load", nbytes)
    if kind == "atomic":
        return ATOMIC_OP
    raise ConfigError("kind", f"must be one of {KINDS}, got {kind!r}")


def _mac(frames: int, frame_bytes: int) -> int:
    """MAC-level bytes of ``frames`` frames of ``frame_bytes`` in all (preamble, gap)."""
    return frame_bytes + frames * (H.size("preamble_sfd") + H.size("ifg"))


def mac_bytes(protocol: str, op: CompareOp) -> FwdRev[int]:
    """MAC-level bytes of ``op`` on an Ethernet ``protocol``, each way (rule K3)."""
    protocol = check_protocol(protocol)
    if protocol == "ualink":
        raise ConfigError("protocol", "ualink's costs are measured on the exact pod (K2)")
    if protocol == "roce":
        mapping = R.map_op(op, PMTU)
        fwd, rev = (sum(H.mac_bytes(H.frame_bytes(p.ext, p.payload))
                        for p in mapping.packets_in(d)) for d in ("fwd", "rev"))
        return FwdRev(fwd, rev)
    frames_fwd, frames_rev, bytes_fwd, bytes_rev = M.table_bytes(M.map_op(op, protocol, PMTU))
    return FwdRev(_mac(frames_fwd, bytes_fwd), _mac(frames_rev, bytes_rev))


def wire_bytes(protocol: str, op: CompareOp) -> FwdRev[Fraction]:
    """Wire bytes (after 256b/257b and RS(544,514)) of ``op`` on ``protocol``, each way."""
    mac = mac_bytes(protocol, op)
    return FwdRev(H.wire_bytes(mac.fwd), H.wire_bytes(mac.rev))


def slots_of(wire: Fraction) -> float:
    """Rule K4: link slots of ``wire`` bytes on the wire."""
    return float(wire / SLOT_WIRE_BYTES)


def _ualink_op(kind: str, beats: int) -> Op:
    """The exact pod's operation of a shape (as the calibration measures it)."""
    if kind == "write":
        return Op("a", "write", 0x1000, data=bytes(64 * beats))
    if kind == "read":
        return Op("a", "read", 0x1000, length=64 * beats)
    return Op("a", "atomic", 0x1000, atomic_op=AtomicOp.ADD, operand=1, size=8, fetch=False)


def _link(pod: FabricConfig, codeword_bits: int = L.KP4_CODEWORD_BITS) -> L.Link:
    """The static model's link of ``pod`` (rule K5)."""
    return L.Link(lanes=pod.lanes, codeword_bits=codeword_bits,
                  fec_decode_ns=Fraction(pod.fec_decode_ns), cable_m=Fraction(pod.cable_m))


def pipeline_ns(pod: FabricConfig, kind: str, beats: int) -> float:
    """Rule K5: the exact pod's zero-load latency of a shape minus the static model of
    the same UALink link (one DL flit each way): its own endpoint pipeline, in ns."""
    flit = WIRE_BYTES_PER_FLIT[pod.fec]
    codeword = L.LL_CODEWORD_BITS if pod.fec == "ll" else L.KP4_CODEWORD_BITS
    static = L.round_trip(flit, flit, _link(pod, codeword),
                          L.Protocol("ualink", Fraction(pod.switch_ns)), hops=1)
    return static_slots(pod, _ualink_op(kind, beats)) * pod.slot_ns - float(static.total)


def _shape(protocol: str, pod: FabricConfig, kind: str, beats: int) -> OpShape:
    """Rules K3-K5 for one shape of an Ethernet protocol."""
    wire = wire_bytes(protocol, compare_op(kind, 64 * beats))
    request, response = slots_of(wire.fwd), slots_of(wire.rev)
    switch = L.Protocol(protocol, SWITCH_NS[protocol][0])
    link = _link(pod)
    pipeline = pipeline_ns(pod, kind, beats)
    rtt = float(L.round_trip(wire.fwd, wire.rev, link, switch, hops=1).total) + pipeline
    out = float(L.one_way(wire.fwd, link, switch, hops=1).total) + pipeline / 2
    return OpShape(request, request, response, response, rtt / pod.slot_ns, out / pod.slot_ns)


def protocol_calibration(protocol: str, pod: FabricConfig) -> LinkCalibration:
    """The link costs of ``protocol`` on a pod like ``pod`` (rules K1-K5): UALink's
    measured on the exact pod, the others' from the comparison's frame builders."""
    protocol = check_protocol(protocol)
    key = link_base(pod)
    if protocol == "ualink":
        return calibrate(key)
    shapes = {(kind, beats): _shape(protocol, key, kind, beats)
              for kind in KINDS for beats in (BEATS if kind != "atomic" else (1,))}
    switch_slots = math.ceil(float(SWITCH_NS[protocol][0]) / key.slot_ns - 1e-9)
    return LinkCalibration(shapes, {}, key.link_slots, switch_slots)


def protocol_pod(protocol: str, pod: FabricConfig) -> FabricConfig:
    """``pod`` with ``protocol``'s flow control (rule K6: recorded in the report; the fast
    engine models neither)."""
    return replace(pod, flow_control=FLOW_CONTROL[check_protocol(protocol)][0])


def run_protocol_collective(protocol: str, plan: Schedule, pod: FabricConfig,
                            config: FastConfig | None = None) -> FastReport:
    """Time ``plan`` on a pod like ``pod`` whose links carry ``protocol`` (rules K1-K7)."""
    protocol = check_protocol(protocol)
    if plan.groups and protocol != "ualink":
        raise ConfigError("protocol", f"{plan.op} ({plan.algo}) reduces in the switch "
                                      f"(switch rule S9): UALink only, not {protocol}")
    return run_fast_collective(plan, protocol_pod(protocol, pod), config,
                               protocol_calibration(protocol, pod))


__all__ = ["ATOMIC_OP", "FLOW_CONTROL", "LABELS", "PMTU", "PROTOCOLS", "SLOT_WIRE_BYTES",
           "check_protocol", "compare_op", "mac_bytes", "pipeline_ns",
           "protocol_calibration", "protocol_pod", "run_protocol_collective", "slots_of",
           "wire_bytes"]
