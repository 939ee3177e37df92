"""What a pod run measured: status, throughput, latency (static + dynamic), stalls, buffers.

Rules (``specs/fabric.md``, "Report"):

R1. Every op must complete exactly once (a second completion raises); the
    report counts statuses and checks results and final memories against the
    sequential model (:func:`ualink_ref.sim.model.model_step`) of each
    destination, ops applied in workload order (rule W3 makes that exact).
R2. Latency in ns = slots x the pod's slot (``FabricConfig.slot_ns``, ``SLOT_NS`` / lanes).
    Its *static* part is the zero-load
    latency of the same op shape on the same pod, measured by running that op
    alone on a 2-accelerator pod with the same configuration and no errors,
    issued once the link start-up credit grants have arrived
    (so it includes serialization, FEC, cable, switch and the model's
    TL/DL packing); *dynamic* = total - static (queueing, credit or pause
    waits, replays), floored at 0.
R3. Throughput of a port: TL data half-flits the switch sends to (egress) or
    receives from (ingress) that accelerator, x 32 bytes, summed over the
    planes, over the run's slots, as a fraction of one link's data rate
    (``DL_PAYLOAD_BYTES`` per slot; with P planes a port carries up to P) and
    in Gb/s. ``to_acc_active_fraction`` is the same bytes in the same unit over
    the port's active window: the slots from the first to the last data any
    plane's switch sent that accelerator. The window lies inside the run, so
    active >= overall; a port's share is the sum of its planes' shares
    (``to_acc_plane_fractions``), and the pod's total Gb/s the sum of its ports'.
R4. Jitter = p99 - p50 of the total latency (ns), and its standard deviation.
R5. Offered and measured load (runs with a load): the workload's bytes on each
    op's busier direction (rule W4's own measure) over the run's slots, per
    load-bearing link (every source; incast: the target's link), as a fraction
    of one link's data rate is the *measured* load; over the slots up to the
    last op's offer it is the *applied* load. Below ``REACHED`` (0.9) of the
    offered load :attr:`FabricReport.load_warning` explains it: the run is
    **too short** when at most ``DRAIN_LATENCIES`` (2) zero-load latencies
    followed the last offer (the pod kept up: the shortfall is the sources'
    Poisson arrivals ending at different times, and the drain); with a longer
    tail the pod did not carry the load (a backlog: saturation).
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import asdict, dataclass, field, replace
from fractions import Fraction
from typing import TYPE_CHECKING, Any

from ualink_ref.sim import latency as L
from ualink_ref.sim.fabric import Fabric, FabricConfig, FabricRun
from ualink_ref.sim.model import memory_mismatches, model_step
from ualink_ref.sim.workloads import FabricOp, Op, op_link_bytes
from ualink_ref.sizes import DL_PAYLOAD_BYTES, SLOT_NS, WIRE_BYTES_PER_FLIT
from ualink_ref.tl import Status

if TYPE_CHECKING:
    from ualink_ref.node.switch import SwitchPortStats


@dataclass(frozen=True)
class PortThroughput:
    """One accelerator's port (summed over planes): data into and out of the switch, as
    fractions of one link's data rate and in Gb/s (rule R3)."""

    acc: int
    to_acc_fraction: float
    from_acc_fraction: float
    to_acc_gbps: float
    from_acc_gbps: float
    to_acc_active_fraction: float
    #: This port's share on each plane (they sum to ``to_acc_fraction``: R3).
    to_acc_plane_fractions: tuple[float, ...] = ()


#: A run reaches its offered load when it measures at least this fraction of it (R5;
#: project choice: figures within 10 % of the steady state are read as at that load).
REACHED = 0.9
#: A drain after the last offer longer than this many zero-load latencies is backlog: the
#: pod did not carry the load, rather than the run being too short (R5, project choice).
DRAIN_LATENCIES = 2


@dataclass(frozen=True)
class FabricReport:
    """A pod run's report (rules R1-R5); times in ns unless named ``slots``."""

    accelerators: int
    planes: int
    lanes: int
    pattern: str
    load: float | None
    flow_control: str
    fec: str
    ber: float
    seed: int
    ops: int
    ops_completed: int
    status: dict[str, int]
    data_mismatches: int
    leaks: list[str]
    slots: float
    bit_errors_injected: int
    replays: int
    latency_p50_ns: float
    latency_p99_ns: float
    latency_p999_ns: float
    latency_max_ns: float
    latency_mean_ns: float
    jitter_ns: float
    latency_std_ns: float
    static_mean_ns: float
    dynamic_mean_ns: float
    dynamic_p99_ns: float
    throughput_total_gbps: float
    ports: list[PortThroughput]
    endpoint_credit_stalls: int
    switch_credit_stalls: int
    pauses: int
    pause_ns: float
    peak_buffers: int
    headroom_exceeded: int
    #: R5: accelerators that issued ops, links the load applies to (incast: 1, the
    #: target's; else every source's), the slot of the last op's offer, the largest
    #: zero-load latency of the run's op shapes (slots), and the applied and measured
    #: loads (None without a load).
    sources: int = 0
    load_links: int = 0
    last_offer_slot: float = 0.0
    zero_load_slots: float = 0.0
    applied_load: float | None = None
    measured_load: float | None = None
    #: Dead links (``Fabric.faulted_links``, H6, H7): ``(plane, accelerator, why)``.
    faulted_links: tuple[tuple[int, int, str], ...] = ()
    #: The switches' bad-input and fault counters (H1-H7) summed over every port, only
    #: those not zero: what a hostile or dead peer cost.
    hostile: dict[str, int] = field(default_factory=dict)

    @property
    def load_warning(self) -> str | None:
        """Why the run did not reach its offered load (rule R5), or None if it did."""
        if self.load is None or self.measured_load is None or self.applied_load is None:
            return None
        if self.measured_load >= REACHED * self.load:
            return None
        per_source = self.ops / max(self.sources, 1)
        into = " into the target's link" if self.load_links == 1 else ""
        figures = (f"measured load {self.measured_load:.2f} beside offered {self.load:g} "
                   f"({self.ops} ops from {self.sources} sources{into}, {per_source:,.0f} "
                   f"each; the last offered at slot {self.last_offer_slot:.0f} of "
                   f"{self.slots:.0f})")
        drain = self.slots - self.last_offer_slot
        why = (f"the sources' Poisson arrivals applied {self.applied_load:.2f} up to the last "
               f"offer, and {drain:.0f} slots followed it (zero-load latency "
               f"{self.zero_load_slots:.0f})")
        if drain <= DRAIN_LATENCIES * self.zero_load_slots:  # the pod kept up with the offers
            return f"run too short to reach its offered load: {figures}: {why}: use more --ops"
        return (f"the pod did not carry its offered load: {figures}: {why}, a backlog: the "
                "pod is saturated at this load")

    @property
    def ok(self) -> bool:
        """Every op exactly once OKAY, memories equal the model, no leaks."""
        return (self.ops_completed == self.ops == self.status.get("OKAY", 0)
                and self.data_mismatches == 0 and not self.leaks)

    def as_dict(self) -> dict[str, Any]:
        """The report as a JSON-ready dict."""
        d = asdict(self)
        d["ok"] = self.ok
        d["load_warning"] = self.load_warning
        return d

    def format(self) -> str:
        """Human-readable rendering (what ``ualink-ref fabric`` prints)."""
        ports = sorted(self.ports, key=lambda p: p.to_acc_fraction, reverse=True)
        top = ", ".join(f"{p.acc}:{p.to_acc_fraction:.0%} (active {p.to_acc_active_fraction:.0%})"
                        for p in ports[:3])
        unit = "of one link's data rate" + (
            f"; {self.planes} planes carry up to {self.planes * 100}%" if self.planes > 1 else "")
        src = [p.from_acc_fraction for p in self.ports if p.from_acc_fraction > 0]
        load = ""
        if self.load is not None and self.measured_load is not None:
            per = "into the target's link" if self.load_links == 1 else "per source"
            load = (f"load: offered {self.load:g}, measured {self.measured_load:.2f} {per} "
                    "(rule R5)" + ("  [below offered: see warning]" if self.load_warning
                                   else ""))
        lines = [
            f"pod: {self.accelerators} accelerators, {self.planes} plane(s), {self.pattern} "
            f"load {self.load if self.load is not None else 'closed-loop'}, "
            f"{self.flow_control}, fec {self.fec}, BER {self.ber:g}, seed {self.seed}",
            f"ops: {self.ops_completed}/{self.ops} completed, status {self.status}, "
            f"{self.data_mismatches} data mismatch(es), leaks: {len(self.leaks)}",
            f"slots: {self.slots:.0f} ({self.slots * SLOT_NS / self.lanes / 1000:.1f} us)  "
            f"bit errors: {self.bit_errors_injected}  replays: {self.replays}",
            f"latency ns: p50 {self.latency_p50_ns:.0f}  p99 {self.latency_p99_ns:.0f}  "
            f"p99.9 {self.latency_p999_ns:.0f}  max {self.latency_max_ns:.0f}  "
            f"(jitter p99-p50 {self.jitter_ns:.0f}, std {self.latency_std_ns:.0f})",
            f"  static mean {self.static_mean_ns:.0f}  dynamic mean {self.dynamic_mean_ns:.0f}"
            f"  dynamic p99 {self.dynamic_p99_ns:.0f}",
            *([load] if load else []),
            f"throughput total {self.throughput_total_gbps:.1f} Gb/s; busiest ports "
            f"(data to accelerator, {unit}): {top}",
            f"  sources (data into the switch): min {min(src, default=0):.0%} "
            f"max {max(src, default=0):.0%}",
            f"credit stalls: endpoints {self.endpoint_credit_stalls}, switch egress "
            f"{self.switch_credit_stalls}; pauses {self.pauses} ({self.pause_ns:.0f} ns); "
            f"peak buffers {self.peak_buffers}  PFC headroom exceeded {self.headroom_exceeded}",
        ]
        if self.faulted_links:
            lines.append("faulted links (plane:accelerator): " + ", ".join(
                f"{p}:{a} ({why})" for p, a, why in self.faulted_links))
        if self.hostile:
            lines.append("switch H-rule counters: " + ", ".join(
                f"{name} {count}" for name, count in self.hostile.items()))
        return "\n".join(lines)


def _shape(op: Op) -> tuple[Any, ...]:
    return (op.kind, -(-op.nbytes // 64), op.byte_enable is not None, op.fetch, op.size)


_STATIC_CACHE: dict[tuple[Any, ...], float] = {}


def static_slots(config: FabricConfig, op: Op) -> float:
    """Zero-load latency (slots) of ``op``'s shape on a pod like ``config`` (rule R2)."""
    base = replace(config, accelerators=2, planes=1, ber=0.0, seed=0, max_slots=None,
                   links_down=())
    key = (base, _shape(op))
    cached = _STATIC_CACHE.get(key)
    if cached is None:
        fabric = Fabric(base)
        # Issued on a warm link: after the initial credit grants have crossed both links
        # (each end grants at slot 0; they arrive 1 + link slots later, a step at a time),
        # so the figure holds no link start-up wait.
        warm = 2 * (base.link_slots + base.batch) + 2
        run = fabric.run([FabricOp(0, 1, replace(op, addr=0x1000 + (op.addr & 0xFF)), warm)])
        cached = _STATIC_CACHE[key] = run.done_at[0] - run.issued_at[0]
    return cached


def percentile(values: list[float], q: float) -> float:
    """The nearest-rank ``q`` percentile of ``values`` (sorted ascending): the
    ceil(q x n)-th smallest, 0.0 for no values (specs/fabric.md R4)."""
    if not values:
        return 0.0
    return values[min(len(values) - 1, max(0, math.ceil(q * len(values)) - 1))]


def check(fabric: Fabric, run: FabricRun) -> int:
    """Results and final-memory bytes that differ from the sequential model (rule R1)."""
    models: dict[int, dict[int, bytearray]] = {}  # sim's page model
    bad = 0
    for index, fop in enumerate(run.workload):
        mem = models.setdefault(fop.dst, {})
        target = fabric.memories[fop.dst]
        got = run.results[index]
        if target.is_mapped(fop.op.addr, fop.op.nbytes):
            want: tuple[Status, bytes | None] = (Status.OKAY, model_step(mem, fop.op))
        else:
            want = (Status.DECODE_ERROR, None)
        if got is None or (got.status, got.data) != want:
            bad += 1
    for acc, memory in enumerate(fabric.memories):
        bad += memory_mismatches(memory, models.get(acc, {}))
    return bad


def make_report(fabric: Fabric, run: FabricRun, *, pattern: str = "custom",
                load: float | None = None) -> FabricReport:
    """The :class:`FabricReport` of ``run`` on ``fabric`` (after :meth:`Fabric.run`)."""
    cfg = fabric.config
    totals: list[float] = []
    statics: list[float] = []
    dynamics: list[float] = []
    for index, fop in enumerate(run.workload):
        if run.results[index] is None:
            continue
        total = (run.done_at[index] - run.issued_at[index]) * cfg.slot_ns
        static = static_slots(cfg, fop.op) * cfg.slot_ns
        totals.append(total)
        statics.append(static)
        dynamics.append(max(0.0, total - static))
    totals.sort()
    dyn_sorted = sorted(dynamics)
    mean = sum(totals) / len(totals) if totals else 0.0
    std = math.sqrt(sum((t - mean) ** 2 for t in totals) / len(totals)) if totals else 0.0
    slots = max(run.slots, 1)
    n = cfg.accelerators
    to_acc = [0] * n
    from_acc = [0] * n
    switch_stalls = pauses = peak = overrun = 0
    pause_slots = 0.0
    hostile = dict.fromkeys(HOSTILE_COUNTERS, 0)
    # One copy of every port's stats per switch: ``sw.stats`` copies them all, so reading
    # it per port would make the report O(ports^2).
    stats = [sw.stats for sw in fabric.switches]
    for plane_stats in stats:
        for acc, st in enumerate(plane_stats):
            to_acc[acc] += st.data_halves_out
            from_acc[acc] += st.data_halves_in
            switch_stalls += st.egress_credit_stalls
            pauses += st.pauses
            pause_slots += st.pause_slots
            overrun += st.headroom_exceeded
            peak = max(peak, st.peak_data_buffers + st.peak_cmd_buffers)
            for name in HOSTILE_COUNTERS:
                hostile[name] += getattr(st, name)
    capacity = slots * DL_PAYLOAD_BYTES
    gbps = 8 / (slots * cfg.slot_ns)
    ports = [PortThroughput(a, 32 * to_acc[a] / capacity, 32 * from_acc[a] / capacity,
                            32 * to_acc[a] * gbps, 32 * from_acc[a] * gbps,
                            _active_fraction([st[a] for st in stats]),
                            tuple(32 * st[a].data_halves_out / capacity for st in stats))
             for a in range(n)]
    sources = len({fop.src for fop in run.workload})
    links = 1 if pattern == "incast" else sources
    last_offer, zero_load, applied, measured = _load_figures(run, cfg, links, load)
    status = Counter(r.status.name for r in run.results if r is not None)
    replays = sum(ep.replays for eps in fabric.endpoints for ep in eps)
    replays += sum(port.replays for sw in fabric.switches for port in sw.ports)
    return FabricReport(
        accelerators=n, planes=cfg.planes, lanes=cfg.lanes, pattern=pattern, load=load,
        flow_control=cfg.flow_control, fec=cfg.fec, ber=cfg.ber, seed=cfg.seed,
        ops=len(run.workload), ops_completed=sum(r is not None for r in run.results),
        status=dict(sorted(status.items())), data_mismatches=check(fabric, run),
        leaks=fabric.leaks(), slots=run.slots, bit_errors_injected=fabric.bit_errors,
        replays=replays,
        latency_p50_ns=percentile(totals, 0.5), latency_p99_ns=percentile(totals, 0.99),
        latency_p999_ns=percentile(totals, 0.999), latency_max_ns=totals[-1] if totals else 0.0,
        latency_mean_ns=mean, jitter_ns=percentile(totals, 0.99) - percentile(totals, 0.5),
        latency_std_ns=std,
        static_mean_ns=sum(statics) / len(statics) if statics else 0.0,
        dynamic_mean_ns=sum(dynamics) / len(dynamics) if dynamics else 0.0,
        dynamic_p99_ns=percentile(dyn_sorted, 0.99),
        throughput_total_gbps=32 * sum(to_acc) * gbps,
        ports=ports,
        endpoint_credit_stalls=sum(ep.counters.credit_stalls
                                   for eps in fabric.endpoints for ep in eps),
        switch_credit_stalls=switch_stalls, pauses=pauses, pause_ns=pause_slots * cfg.slot_ns,
        peak_buffers=peak, headroom_exceeded=overrun,
        sources=sources, load_links=links, last_offer_slot=last_offer, zero_load_slots=zero_load,
        applied_load=applied, measured_load=measured,
        faulted_links=tuple((p, a, why) for (p, a), why in sorted(fabric.faulted_links().items())),
        hostile={name: count for name, count in hostile.items() if count},
    )


#: The per-port counters of the switch's rules on bad input and dead ports
#: (specs/fabric.md H1-H7) the report sums (``SwitchPortStats`` field names).
HOSTILE_COUNTERS = ("credit_overruns", "grants_rejected", "bad_fields", "spoofed",
                    "misrouted_responses", "stray_responses", "replies_dropped",
                    "to_faulted_dropped", "fault_answers", "flits_ignored")


def _active_fraction(planes: list[SwitchPortStats]) -> float:
    """Data sent to an accelerator (``planes``: its port's stats on each plane's switch)
    over its active window, the slots from the first to the last data any plane sent it,
    as a fraction of one link's data rate (rule R3: the same unit as the overall share,
    over a window inside the run, so never below it)."""
    sent = [st for st in planes if st.first_data_out >= 0]
    if not sent:
        return 0.0
    window = max(st.last_data_out for st in sent) - min(st.first_data_out for st in sent) + 1
    halves = sum(st.data_halves_out for st in sent)
    return 32 * halves / (window * DL_PAYLOAD_BYTES)


def _load_figures(run: FabricRun, cfg: FabricConfig, links: int, load: float | None,
                  ) -> tuple[float, float, float | None, float | None]:
    """Rule R5 over ``links`` load-bearing links: (last offer slot, largest zero-load
    latency in slots, applied load, measured load); the loads are None without a load."""
    if not run.workload:
        return 0.0, 0.0, None, None
    last_offer = max(fop.at for fop in run.workload)
    zero_load = max(static_slots(cfg, fop.op) for fop in run.workload)
    if load is None:
        return last_offer, zero_load, None, None
    offered_bytes = sum(op_link_bytes(fop.op) for fop in run.workload)
    per_slot = links * DL_PAYLOAD_BYTES
    applied = offered_bytes / (max(last_offer, 1.0) * per_slot)
    measured = offered_bytes / (max(run.slots, 1.0) * per_slot)
    return last_offer, zero_load, applied, measured


def run_fabric(config: FabricConfig, workload: tuple[FabricOp, ...], *, pattern: str = "custom",
               load: float | None = None, progress: Any = None,
               fabric: Fabric | None = None) -> FabricReport:
    """Build the pod (unless given), run ``workload``, and report."""
    fabric = fabric or Fabric(config)
    run = fabric.run(workload, progress)
    return make_report(fabric, run, pattern=pattern, load=load)




@dataclass(frozen=True)
class ZeroLoad:
    """Zero-load latency of one 64-byte Load through one switch (ns)."""

    simulated_ns: float
    model: dict[str, float]
    lanes: int
    cable_m: float
    switch_ns: float
    budget_ns: float
    roce_reported_ns: float

    def format(self) -> str:
        """One block of text: the figure, its decomposition, the two references."""
        m = self.model
        parts = "  ".join(f"{k} {v:.1f}" for k, v in m.items() if k != "total" and v)
        return "\n".join([
            f"zero-load 64 B Load via 1 switch, {self.cable_m:g} m cables, x{self.lanes} link, "
            f"switch {self.switch_ns:g} ns:",
            f"  simulated round trip: {self.simulated_ns:.1f} ns",
            f"  static model: {m['total']:.1f} ns = {parts}",
            f"  model pipeline (TL/DL packing, slot quantization): "
            f"{self.simulated_ns - m['total']:.1f} ns",
            f"  budget: < {self.budget_ns:.0f} ns (scale-up reviews); RoCEv2 reported "
            f"> {self.roce_reported_ns:.0f} ns",
        ])


def zero_load_load64(config: FabricConfig | None = None) -> ZeroLoad:
    """Simulate one 64-byte Load alone on the pod ``config`` (default: 3 m, 200 ns switch)
    and decompose it with the static model of :mod:`ualink_ref.sim.latency` (one 680-byte
    wire flit each way, on the pod's x1 / x2 / x4 link)."""
    cfg = config or FabricConfig()
    sim_ns = static_slots(cfg, Op("a", "read", 0, length=64)) * cfg.slot_ns
    link = L.Link(lanes=cfg.lanes, codeword_bits=L.LL_CODEWORD_BITS if cfg.fec == "ll"
                  else L.KP4_CODEWORD_BITS, fec_decode_ns=Fraction(cfg.fec_decode_ns),
                  cable_m=Fraction(cfg.cable_m))
    proto = L.Protocol("ualink", Fraction(cfg.switch_ns))
    wire = WIRE_BYTES_PER_FLIT[cfg.fec]
    bd = L.round_trip(wire, wire, link, proto, hops=1)
    return ZeroLoad(sim_ns, bd.as_dict(), cfg.lanes, cfg.cable_m, cfg.switch_ns,
                    L.SCALE_UP_BUDGET_NS, L.ROCE_REPORTED_NS)


__all__ = ["DRAIN_LATENCIES", "REACHED", "FabricReport", "PortThroughput", "ZeroLoad", "check",
           "make_report", "percentile", "run_fabric", "static_slots", "zero_load_load64"]
