"""What one memory operation costs on a pod's links, measured on the exact pod itself.

The fast fidelity never types a frame size or a latency again (``specs/fast.md`` rules
Q1-Q4): for a pod configuration it runs the exact engine (:mod:`ualink_ref.sim.fabric`)
on a two-accelerator pod with the same links, FEC, cable, switch latency and flow
control, and reads off, for each operation shape (kind x beats):

* Q1, **what an accelerator sends**: TL flits per operation, counted over the middle
  third of streams of :data:`STREAM_OPS` operations back to back: the part that carries
  the data from two flows out of (writes) or into (reads) one accelerator, which then
  saturate its uplink; the other part as what the same stream both ways at once adds
  to one way. An accelerator's DL packs TL flits back to back into the DL flits'
  payload (``DL_PAYLOAD_BYTES / TL_FLIT_BYTES`` of them a slot,
  :data:`TL_FLITS_PER_SLOT`), so these are its uplink slots;
* Q2, **what a switch port sends**: DL flits per operation an accelerator received in
  the one-way stream, where the switch's egress is the bottleneck (its downlink slots:
  the switch's own packing and credit loop are in them), the other part again as what
  the two-way stream adds;
* Q3, **zero-load latency** of each shape (:func:`ualink_ref.sim.fabric_report.static_slots`,
  rule R2: one operation alone on a warm link), and of a multicast store and a
  reduce-load of each size to a group of both accelerators (switch rule S9: the
  switch's engine answers those, on a different path through the switch);
* Q5, **interpolation** (project choice: a request's data half-flits grow by two a beat,
  so its costs grow about linearly; measuring every size would double the calibration's
  time): the 1-beat and 4-beat shapes are measured, 2 and 3 beats interpolated;
* Q4, **one-way latency**: slots from a write's or an atomic's issue until its target's
  memory holds it (alone on a warm link); a read's request is taken to reach its
  target as fast as an atomic's (both are a request field that waits for nothing).

The figures depend on the link only, not on the pod's size, so one calibration serves
every pod with the same link (cached per configuration).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import lru_cache

from ualink_ref.collectives.algorithms import GROUP
from ualink_ref.errors import LinkStalledError
from ualink_ref.node.config import MulticastGroup
from ualink_ref.node.endpoint import EndpointCounters
from ualink_ref.node.multicast import REDUCE_CODES
from ualink_ref.sim.fabric import Fabric, FabricConfig
from ualink_ref.sim.fabric_report import static_slots
from ualink_ref.sim.workloads import FabricOp, Op
from ualink_ref.sizes import DL_PAYLOAD_BYTES, MAX_REQUEST_BYTES, TL_FLIT_BYTES
from ualink_ref.tl import AtomicOp

#: Operations in a calibration stream (project choice: long enough that the start-up
#: and the tail are outside the middle third that is counted, short enough to take
#: a few tenths of a second).
STREAM_OPS = 240
#: Operation kinds the fast fidelity prices: data moves as writes and reads, flags as
#: 8-byte AtomicNR ADDs (specs/collectives.md C2).
KINDS = ("write", "read", "atomic")
#: Beats (64 bytes each) of a request: 1..4 (a request carries at most 256 bytes).
BEATS = tuple(range(1, MAX_REQUEST_BYTES // 64 + 1))
#: The beats measured (rule Q5); the others are interpolated between them.
MEASURED_BEATS = (BEATS[0], BEATS[-1])
#: TL flits an accelerator's DL flit carries, back to back (rule Q1).
TL_FLITS_PER_SLOT = DL_PAYLOAD_BYTES / TL_FLIT_BYTES


@dataclass(frozen=True)
class OpShape:
    """Link slots and latencies of one operation shape (rules Q1-Q4)."""

    #: Slots its request takes on the requester's uplink and on the target's downlink.
    request_up: float
    request_down: float
    #: Slots its response takes on the target's uplink and on the requester's downlink.
    response_up: float
    response_down: float
    #: Zero-load latency, issue to completion (Q3), and issue to the target acting (Q4).
    latency_slots: float
    one_way_slots: float


@dataclass(frozen=True)
class LinkCalibration:
    """Every :class:`OpShape` of one pod link, keyed ``(kind, beats)`` (atomics: 1 beat)."""

    shapes: dict[tuple[str, int], OpShape]
    #: Zero-load latency (slots) of a group write / reduce-load, keyed like ``shapes`` (Q3).
    group_latency: dict[tuple[str, int], float]
    #: One-way latency of the link (cable + FEC decode) and of the switch, in slots (F3).
    link_slots: int
    switch_slots: int

    def shape(self, kind: str, nbytes: int) -> OpShape:
        """The shape of a ``kind`` operation moving ``nbytes`` (one request)."""
        return self.shapes[(kind, beats_of(kind, nbytes))]


def beats_of(kind: str, nbytes: int) -> int:
    """The beats a request of ``nbytes`` carries (an atomic: one)."""
    return 1 if kind == "atomic" else max(1, -(-nbytes // 64))


def _op(kind: str, beats: int, addr: int) -> Op:
    """A representative operation of the shape: region-aligned, ``beats`` x 64 bytes."""
    if kind == "write":
        return Op("a", "write", addr, data=bytes(range(64)) * beats)
    if kind == "read":
        return Op("a", "read", addr, length=64 * beats)
    return Op("a", "atomic", addr, atomic_op=AtomicOp.ADD, operand=1, size=8, fetch=False)


def link_base(config: FabricConfig) -> FabricConfig:
    """The two-accelerator pod with ``config``'s links: what the figures depend on
    (rule Q1), so pods of every size with the same links share one cached calibration."""
    return replace(config, accelerators=2, planes=1, ber=0.0, seed=0, max_slots=None,  # Q1
                   links_down=(), multicast=(), max_outstanding=STREAM_OPS)


def _warm(fabric: Fabric, base: FabricConfig) -> float:
    """Step ``fabric`` past its links' start-up credit grants (a warm link, rule R2)."""
    while fabric.network.now < 2 * (base.link_slots + base.batch) + 2:
        fabric.step()
    return fabric.network.now


@dataclass(frozen=True)
class _Window:
    """Per operation (of one direction) over a stream's middle third: TL flits each
    accelerator sent, DL flits each received."""

    sent: tuple[float, ...]
    received: tuple[float, ...]


def _stream(base: FabricConfig, kind: str, beats: int, flows: tuple[tuple[int, int], ...]
            ) -> _Window:
    """Rules Q1, Q2: :data:`STREAM_OPS` operations back to back on each ``(source,
    target)`` flow at once, counted over the middle third (per operation of one flow)."""
    fabric = Fabric(replace(base, accelerators=max(max(f) for f in flows) + 1))
    warm = 2 * (base.link_slots + base.batch) + 2
    ops = [FabricOp(src, dst, _op(kind, beats, 0x1000 + 256 * i), warm)
           for i in range(STREAM_OPS) for src, dst in flows]
    ends = fabric.endpoints[0]
    marks: list[tuple[int, list[EndpointCounters]]] = []
    done = [0]

    def progress(count: int) -> None:
        done[0] += count
        if len(marks) < 2 and done[0] >= len(ops) * (len(marks) + 1) // 3:
            marks.append((done[0], [end.counters for end in ends]))

    fabric.run(ops, progress)
    (done0, before), (done1, after) = marks
    per = (done1 - done0) / len(flows)
    return _Window(tuple((a.tl_flits_sent - b.tl_flits_sent) / per
                         for a, b in zip(after, before, strict=True)),
                   tuple((a.flits_received - b.flits_received) / per
                         for a, b in zip(after, before, strict=True)))


def _one_way(base: FabricConfig, kind: str, beats: int) -> float:
    """Rule Q4: slots from issue until accelerator 1's memory holds what 0 wrote / added."""
    fabric = Fabric(base)
    start = _warm(fabric, base)
    endpoint, memory = fabric.endpoints[0][0], fabric.memories[1]
    if kind == "write":
        endpoint.write(1, 0x1000, b"\x01" * (64 * beats))
    else:
        endpoint.atomic(1, 0x1000, AtomicOp.ADD, 1, None, 8, False)
    net = fabric.network
    while net.now - start < 100_000:
        now = net.now
        fabric.step()
        if memory.is_mapped(0x1000, 1) and memory.peek(0x1000, 1) == b"\x01":
            return net.edge_of(now) - start
    raise LinkStalledError(net.now, "calibration: a request never reached its target")


def _group_latency(base: FabricConfig, kind: str, beats: int) -> float:
    """Rule Q3 for a group operation: issued alone on a warm two-accelerator pod whose
    switch holds the group {0, 1}; slots from issue to completion."""
    fabric = Fabric(replace(base, multicast=(MulticastGroup(GROUP, (0, 1)),)))
    net = fabric.network
    start = _warm(fabric, base)
    endpoint = fabric.endpoints[0][0]
    if kind == "write":
        endpoint.write(GROUP, 0x1000, bytes(64 * beats))
    else:
        endpoint.read(GROUP, 0x1000, 64 * beats, metadata=next(iter(REDUCE_CODES)))
    while net.now - start < 100_000:
        now = net.now
        if fabric.step():
            return net.edge_of(now) - start
    raise LinkStalledError(net.now, "calibration: a group operation never completed")


#: The streams of rules Q1, Q2 (project choice): one way, both ways, and two flows into
#: or out of accelerator 1, so that an accelerator's uplink, not the switch, is the
#: bottleneck (the switch's egress is the slower of the two for a single flow).
ONE_WAY = ((0, 1),)
BOTH_WAYS = ((0, 1), (1, 0))
FAN_OUT = ((1, 0), (1, 2))
FAN_IN = ((0, 1), (2, 1))


def _shape(base: FabricConfig, kind: str, beats: int, one_way: float) -> OpShape:
    """Rules Q1-Q3 for one shape: the part that carries the data from a stream that
    saturates it, the other part as what the two-way stream adds."""
    one = _stream(base, kind, beats, ONE_WAY)
    both = _stream(base, kind, beats, BOTH_WAYS)
    if kind == "read":  # the data is the response's: accelerator 1 answers two readers
        fan = _stream(base, kind, beats, FAN_IN)  # accelerator 1 answers both flows
        resp_up, resp_down = fan.sent[1] / len(FAN_IN), one.received[0]
        req_up = both.sent[0] - one.sent[1]
        req_down = both.received[0] - resp_down
    else:  # the data is the request's: accelerator 1 writes to two targets
        fan = _stream(base, kind, beats, FAN_OUT)  # accelerator 1 sends both flows
        req_up, req_down = fan.sent[1] / len(FAN_OUT), one.received[1]
        resp_up = both.sent[0] - one.sent[0]
        resp_down = both.received[0] - req_down
    return OpShape(max(req_up, 0.0) / TL_FLITS_PER_SLOT, max(req_down, 0.0),
                   max(resp_up, 0.0) / TL_FLITS_PER_SLOT, max(resp_down, 0.0),
                   static_slots(base, _op(kind, beats, 0x1000)), one_way)


def _between(low: OpShape, high: OpShape, share: float) -> OpShape:
    """Rule Q5: the shape ``share`` of the way from ``low`` to ``high``."""
    def mix(a: float, b: float) -> float:
        return a + (b - a) * share
    return OpShape(mix(low.request_up, high.request_up), mix(low.request_down, high.request_down),
                   mix(low.response_up, high.response_up),
                   mix(low.response_down, high.response_down),
                   mix(low.latency_slots, high.latency_slots),
                   mix(low.one_way_slots, high.one_way_slots))


def calibrate(config: FabricConfig) -> LinkCalibration:
    """Rules Q1-Q5 for the links of ``config``, cached per link configuration (pods that
    differ only in size, planes, seed or in-flight limit share one calibration)."""
    return _calibrate_links(link_base(config))


@lru_cache(maxsize=64)
def _calibrate_links(base: FabricConfig) -> LinkCalibration:
    atomic_one_way = _one_way(base, "atomic", 1)
    shapes = {("atomic", 1): _shape(base, "atomic", 1, atomic_one_way)}
    group: dict[tuple[str, int], float] = {}
    low, high = MEASURED_BEATS
    for kind in ("write", "read"):
        for beats in MEASURED_BEATS:
            one_way = _one_way(base, kind, beats) if kind == "write" else atomic_one_way
            shapes[(kind, beats)] = _shape(base, kind, beats, one_way)
            group[(kind, beats)] = _group_latency(base, kind, beats)
        for beats in BEATS[1:-1]:
            share = (beats - low) / (high - low)
            shapes[(kind, beats)] = _between(shapes[(kind, low)], shapes[(kind, high)], share)
            group[(kind, beats)] = group[(kind, low)] + (group[(kind, high)]
                                                         - group[(kind, low)]) * share
    return LinkCalibration(shapes, group, base.link_slots, base.switch_slots)


__all__ = ["BEATS", "KINDS", "MEASURED_BEATS", "STREAM_OPS", "TL_FLITS_PER_SLOT",
           "LinkCalibration", "OpShape", "beats_of", "calibrate", "link_base"]
