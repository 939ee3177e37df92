"""The ualink column's latencies as the fabric model measures them, beside the static table.

:mod:`ualink_ref.compare.four` prints a *static* zero-load table
(:mod:`ualink_ref.sim.latency`, 4 x 200G lanes). This module adds what the
switched pod (:mod:`ualink_ref.sim.fabric`) measures:

* **zero load** (always, cheap): one 64-byte Load (Read) and one 64-byte Store
  (WriteFull) alone on a 2-accelerator pod through one switch, the simulated
  round trip in ns, next to the static model of the *same* link — one lane, one
  680-byte (KP4) or 672-byte (LL) wire flit per 25.6 ns slot, which is what the
  simulator's slot is — and the difference (the model's TL/DL packing and slot
  quantization);
* **loaded** (on request, a small fabric run per op): p50 / p99 / p99.9 / max
  of 64-byte Loads or Stores among ``accelerators`` under ``pattern`` at
  ``load`` (fraction of one link's data rate per source), each decomposed
  at p99 with the static model's hook :func:`ualink_ref.sim.latency.loaded`:
  static x1 breakdown, the model pipeline as ``processing``, and the queueing
  (p99 minus the simulated zero-load figure), which add up to the measured p99.

Rules and provenance: ``specs/comparison.md`` ("Latency measured on the fabric").
"""

from __future__ import annotations

import io
from dataclasses import dataclass, replace
from fractions import Fraction
from typing import Any

from ualink_ref.sim import latency as L
from ualink_ref.sim.fabric import Fabric, FabricConfig, FlowControlMode
from ualink_ref.sim.fabric_report import make_report, static_slots
from ualink_ref.sim.workloads import Op, Pattern, fabric_workload
from ualink_ref.sizes import SLOT_NS, WIRE_BYTES_PER_FLIT, FecMode

#: The two 64-byte ops the latency table has, as fabric op shapes and workload kinds.
OPS: dict[str, tuple[Op, str]] = {
    "load": (Op("a", "read", 0, length=64), "read"),
    "store": (Op("a", "write", 0, data=bytes(64)), "writefull"),
}


@dataclass(frozen=True)
class MeasuredZeroLoad:
    """One op alone on the pod: simulated round trip and the static model of the same link."""

    op: str
    simulated_ns: float
    static: L.Breakdown

    @property
    def pipeline_ns(self) -> float:
        """Simulated minus static: the model's TL/DL packing and slot quantization."""
        return self.simulated_ns - float(self.static.total)


@dataclass(frozen=True)
class MeasuredLoaded:
    """Latency percentiles of one op kind under load on the pod (ns)."""

    op: str
    ops: int
    ok: bool
    p50_ns: float
    p99_ns: float
    p999_ns: float
    max_ns: float
    static_ns: float
    breakdown_p99: L.Breakdown


@dataclass(frozen=True)
class FabricLatency:
    """What the fabric measured for the ualink column."""

    config: FabricConfig
    zero_load: list[MeasuredZeroLoad]
    loaded: list[MeasuredLoaded]
    pattern: str = ""
    load: float = 0.0
    accelerators: int = 0


def _static_x1(config: FabricConfig) -> L.Breakdown:
    """The static model of the simulated link: one lane, one wire flit each way, one switch."""
    link = L.Link(lanes=1, codeword_bits=L.LL_CODEWORD_BITS if config.fec == "ll"
                  else L.KP4_CODEWORD_BITS, fec_decode_ns=Fraction(config.fec_decode_ns),
                  cable_m=Fraction(config.cable_m))
    wire = WIRE_BYTES_PER_FLIT[config.fec]
    return L.round_trip(wire, wire, link, L.Protocol("ualink", Fraction(config.switch_ns)),
                        hops=1)


def measure(
    *,
    fec: FecMode = "kp4",
    cable_m: float = 2.0,
    switch_ns: float = 200.0,
    loaded: bool = False,
    load: float = 0.5,
    accelerators: int = 8,
    pattern: Pattern = "uniform",
    ops: int = 1000,
    flow_control: FlowControlMode = "cbfc",
    seed: int = 0,
) -> FabricLatency:
    """Zero-load (always) and, with ``loaded``, loaded latencies of 64-byte Load and Store."""
    config = FabricConfig(accelerators=2, fec=fec, cable_m=cable_m, switch_ns=switch_ns,
                          flow_control=flow_control, seed=seed)
    static = _static_x1(config)
    zero = [MeasuredZeroLoad(name, static_slots(config, op) * SLOT_NS, static)
            for name, (op, _) in OPS.items()]
    rows: list[MeasuredLoaded] = []
    if loaded:
        pod = replace(config, accelerators=accelerators)
        for name, (op, kind) in OPS.items():
            work = fabric_workload(pattern, ops, accelerators, seed, load=load, kinds=(kind,),
                                   size=64)
            fabric = Fabric(pod)
            report = make_report(fabric, fabric.run(work), pattern=pattern, load=load)
            zero_ns = static_slots(pod, op) * SLOT_NS
            # The static model's hook: its x1 breakdown, the model pipeline (simulated zero
            # load minus static) as processing, plus the queueing measured at p99 — so the
            # breakdown's total is the measured p99.
            base = replace(static, processing=static.processing
                           + Fraction(zero_ns) - static.total)
            queue = max(0.0, report.latency_p99_ns - zero_ns)
            rows.append(MeasuredLoaded(name, report.ops, report.ok, report.latency_p50_ns,
                                       report.latency_p99_ns, report.latency_p999_ns,
                                       report.latency_max_ns, zero_ns,
                                       L.loaded(base, Fraction(queue))))
    return FabricLatency(config, zero, rows, pattern if loaded else "",
                         load if loaded else 0.0, accelerators if loaded else 0)


def render_text(m: FabricLatency) -> str:
    """The measured block printed under the four-protocol latency table."""
    out = io.StringIO()
    w = out.write
    c = m.config
    w(f"\nUALink measured on the fabric model: 64 B op round trip via 1 switch, "
      f"{c.cable_m:g} m cables,\nswitch {c.switch_ns:g} ns, {c.fec}, x1 link (one "
      f"{WIRE_BYTES_PER_FLIT[c.fec]}-byte wire flit per {SLOT_NS} ns slot), ns:\n")
    w(f"{'op':<7}{'simulated':>10}{'static x1':>10}{'pipeline':>9}  (static x1: serial + FEC "
      f"+ cable + switch)\n")
    for z in m.zero_load:
        w(f"{z.op:<7}{z.simulated_ns:>10.1f}{float(z.static.total):>10.1f}"
          f"{z.pipeline_ns:>9.1f}\n")
    w(f"  budget < {L.SCALE_UP_BUDGET_NS} ns (scale-up reviews); RoCEv2 reported "
      f"> {L.ROCE_REPORTED_NS} ns;\n  the x4 table above serializes 4x faster; pipeline = "
      f"the model's TL/DL packing and slots.\n")
    if m.loaded:
        w(f"Loaded ({m.accelerators} accelerators, {m.pattern}, load {m.load:g} of a link per "
          f"source, {c.flow_control}, seed {c.seed}), ns:\n")
        w(f"{'op':<7}{'ops':>6}{'p50':>7}{'p99':>7}{'p99.9':>7}{'max':>7}{'static':>8}"
          f"{'queue@p99':>10}  ok\n")
        for x in m.loaded:
            w(f"{x.op:<7}{x.ops:>6}{x.p50_ns:>7.0f}{x.p99_ns:>7.0f}{x.p999_ns:>7.0f}"
              f"{x.max_ns:>7.0f}{x.static_ns:>8.1f}{float(x.breakdown_p99.queueing):>10.1f}"
              f"  {x.ok}\n")
    else:
        w("  loaded p50/p99: add --loaded (a small fabric run per op; see --help).\n")
    return out.getvalue()


def as_json(m: FabricLatency) -> dict[str, Any]:
    """The measured latencies as a JSON-ready dict."""
    c = m.config
    return {
        "cable_m": c.cable_m, "switch_ns": c.switch_ns, "fec": c.fec, "lanes": 1,
        "zero_load": [{"op": z.op, "simulated_ns": z.simulated_ns,
                       "static_x1": z.static.as_dict(), "pipeline_ns": z.pipeline_ns}
                      for z in m.zero_load],
        "loaded": None if not m.loaded else {
            "accelerators": m.accelerators, "pattern": m.pattern, "load": m.load,
            "flow_control": c.flow_control, "seed": c.seed,
            "rows": [{"op": x.op, "ops": x.ops, "ok": x.ok, "p50_ns": x.p50_ns,
                      "p99_ns": x.p99_ns, "p999_ns": x.p999_ns, "max_ns": x.max_ns,
                      "static_ns": x.static_ns, "breakdown_p99": x.breakdown_p99.as_dict()}
                     for x in m.loaded]},
    }


__all__ = ["OPS", "FabricLatency", "MeasuredLoaded", "MeasuredZeroLoad", "as_json", "measure",
           "render_text"]
