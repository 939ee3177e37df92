"""The pod report's figures are consistent by construction (specs/fabric.md R3, R5).

R3: per port, the "active" share (over the port's active window) is never below the
overall share (over the run), in the same unit, whatever the planes; a port's share is the
sum of its planes' shares; the pod's total is the sum of its ports'; every data byte
into the switch leaves it. R5: the measured load is the workload's bytes over the run,
and a run that falls short of its offered load says so, and why.
"""

from __future__ import annotations

import math
from dataclasses import replace

import pytest

from ualink_ref.sim.fabric import Fabric, FabricConfig
from ualink_ref.sim.fabric_report import (
    DRAIN_LATENCIES,
    REACHED,
    FabricReport,
    make_report,
    run_fabric,
    static_slots,
)
from ualink_ref.sim.workloads import fabric_workload, op_link_bytes
from ualink_ref.sizes import DL_PAYLOAD_BYTES


def _share_violations(report: FabricReport) -> list[str]:
    """Every way ``report``'s shares break rule R3 (empty when they hold)."""
    bad = []
    for port in report.ports:
        if port.to_acc_active_fraction < port.to_acc_fraction - 1e-12:
            bad.append(f"port {port.acc}: active {port.to_acc_active_fraction} < overall "
                       f"{port.to_acc_fraction}")
        if len(port.to_acc_plane_fractions) != report.planes or not math.isclose(
                sum(port.to_acc_plane_fractions), port.to_acc_fraction, abs_tol=1e-12):
            bad.append(f"port {port.acc}: planes {port.to_acc_plane_fractions} do not sum to "
                       f"{port.to_acc_fraction}")
        if any(share > 1 + 1e-12 for share in port.to_acc_plane_fractions):
            bad.append(f"port {port.acc}: a plane's link above its data rate")
    if not math.isclose(report.throughput_total_gbps,
                        sum(p.to_acc_gbps for p in report.ports), rel_tol=1e-12):
        bad.append("total Gb/s is not the sum of the ports'")
    if not math.isclose(sum(p.to_acc_fraction for p in report.ports),
                        sum(p.from_acc_fraction for p in report.ports), rel_tol=1e-12):
        bad.append("data into the switch != data out of it")
    return bad


def _report(planes: int, pattern: str = "uniform", load: float | None = 0.8,
            ops: int = 240, accelerators: int = 6, size: int | None = 256) -> FabricReport:
    cfg = FabricConfig(accelerators=accelerators, planes=planes, seed=7)
    kinds = ("read", "writefull") if size else ("read", "write", "writefull", "atomic")
    work = fabric_workload(pattern, ops, accelerators, seed=7, load=load, size=size,
                           kinds=kinds)  # type: ignore[arg-type]
    return run_fabric(cfg, work, pattern=pattern, load=load)


@pytest.mark.parametrize("planes", [1, 2, 4])
@pytest.mark.parametrize("pattern", ["uniform", "incast"])
def test_active_share_at_least_overall_and_shares_sum(planes: int, pattern: str) -> None:
    report = _report(planes, pattern)
    assert report.ok
    assert _share_violations(report) == []
    busiest = max(report.ports, key=lambda p: p.to_acc_fraction)
    assert busiest.to_acc_fraction > 0  # the check ran on real traffic


def test_share_check_catches_an_active_share_that_divides_by_planes() -> None:
    """The bug the issue saw (R3): the active share divided by the planes, so with 4 planes
    it fell below the overall share. Seeded into a real report, the check catches it."""
    report = _report(4)
    buggy = replace(report, ports=[replace(p, to_acc_active_fraction=p.to_acc_active_fraction
                                           / report.planes) for p in report.ports])
    assert any("active" in v for v in _share_violations(buggy))
    summed = replace(report, ports=[replace(p, to_acc_plane_fractions=p.to_acc_plane_fractions[:1])
                                    for p in report.ports])
    assert any("do not sum" in v for v in _share_violations(summed))


def test_one_and_four_planes_report_the_same_unit() -> None:
    """The same workload on 1 and 4 planes: the share is of one link either way, so the
    overall shares agree closely (same bytes, similar run length) instead of differing by 4x
    in one figure and not the other."""
    one, four = _report(1), _report(4)
    for a, b in zip(one.ports, four.ports, strict=True):
        assert a.to_acc_fraction == pytest.approx(b.to_acc_fraction, rel=0.35)
        assert b.to_acc_active_fraction >= b.to_acc_fraction


def test_measured_load_is_the_workloads_bytes_over_the_run() -> None:
    report = _report(1, "uniform", load=0.5, ops=120)
    cfg = FabricConfig(accelerators=6, seed=7)
    work = fabric_workload("uniform", 120, 6, seed=7, load=0.5, size=256,
                           kinds=("read", "writefull"))
    assert cfg.accelerators == report.accelerators
    sources = len({op.src for op in work})
    total = sum(op_link_bytes(op.op) for op in work)
    assert report.sources == report.load_links == sources
    assert report.measured_load == pytest.approx(total / (report.slots * DL_PAYLOAD_BYTES
                                                          * sources))
    assert report.last_offer_slot == max(op.at for op in work)
    assert report.applied_load == pytest.approx(total / (report.last_offer_slot
                                                         * DL_PAYLOAD_BYTES * sources))


def test_short_run_warns_with_measured_beside_offered() -> None:
    report = _report(1, "uniform", load=0.5, ops=60)
    assert report.measured_load is not None and report.measured_load < REACHED * 0.5
    warning = report.load_warning
    assert warning is not None and warning.startswith("run too short")
    assert f"measured load {report.measured_load:.2f} beside offered 0.5" in warning
    assert "load: offered 0.5, measured" in report.format()
    assert report.as_dict()["load_warning"] == warning


def test_incast_load_is_the_target_links() -> None:
    report = _report(1, "incast", load=0.9, ops=240)
    assert report.load_links == 1 and report.sources == 5
    assert "into the target's link" in report.format()


def test_saturated_run_says_the_pod_did_not_carry_it() -> None:
    report = _report(1, "uniform", load=3.0, ops=800, accelerators=4)
    warning = report.load_warning
    assert warning is not None and warning.startswith("the pod did not carry"), warning


def test_no_warning_closed_loop_or_reached() -> None:
    assert _report(1, load=None, ops=60).load_warning is None


def _fake(report: FabricReport, **changes: float) -> FabricReport:
    return replace(report, **changes)  # type: ignore[arg-type]


def test_warning_boundaries() -> None:
    """R5 at its edges: measured exactly REACHED x offered is reached; a drain of exactly
    DRAIN_LATENCIES zero-load latencies is 'too short', one slot more a backlog."""
    base = _report(1, "uniform", load=0.5, ops=60)
    z = base.zero_load_slots
    assert z > 0
    reached = _fake(base, measured_load=REACHED * 0.5, applied_load=0.5)
    assert reached.load_warning is None
    short = _fake(base, measured_load=REACHED * 0.5 - 1e-9, applied_load=0.5,
                  slots=1000.0, last_offer_slot=1000.0 - DRAIN_LATENCIES * z)
    assert (short.load_warning or "").startswith("run too short")
    backlog = _fake(short, last_offer_slot=1000.0 - DRAIN_LATENCIES * z - 1)
    assert (backlog.load_warning or "").startswith("the pod did not carry")


def _nearest_rank(values: list[float], q: float) -> float:
    """The nearest-rank percentile (R4), written out here: the ceil(q x n)-th smallest."""
    ordered = sorted(values)
    return ordered[max(1, math.ceil(q * len(ordered))) - 1]


def test_r2_r4_the_reports_percentiles_are_the_runs_latencies() -> None:
    """Bugs caught: a percentile or the dynamic p99 taken over nothing (0), or over the
    wrong list."""
    cfg = FabricConfig(accelerators=4, seed=3)
    work = fabric_workload("incast", 120, 4, seed=3, load=0.9, size=256,
                           kinds=("read", "writefull"))
    fabric = Fabric(cfg)
    run = fabric.run(work)
    report = make_report(fabric, run, pattern="incast", load=0.9)
    totals = [(done - issued) * cfg.slot_ns
              for done, issued in zip(run.done_at, run.issued_at, strict=True)]
    dynamic = [max(0.0, t - static_slots(cfg, fop.op) * cfg.slot_ns)
               for t, fop in zip(totals, work, strict=True)]
    assert report.ops_completed == len(totals) == 120
    assert (report.latency_p50_ns, report.latency_p99_ns, report.latency_p999_ns,
            report.latency_max_ns) == tuple(_nearest_rank(totals, q)
                                            for q in (0.5, 0.99, 0.999, 1.0))
    assert report.dynamic_p99_ns == _nearest_rank(dynamic, 0.99) > 0  # queueing at 0.9
    assert report.jitter_ns == report.latency_p99_ns - report.latency_p50_ns > 0


def test_run_fabric_reports_progress_per_op() -> None:
    cfg = FabricConfig(accelerators=2)
    work = fabric_workload("uniform", 20, 2, seed=1, load=0.5, size=64,
                           kinds=("read", "writefull"))
    told: list[int] = []
    assert run_fabric(cfg, work, progress=told.append).ops_completed == 20
    assert sum(told) == 20 and all(n > 0 for n in told)


def test_closed_loop_text_has_no_load_line() -> None:
    text = _report(1, load=None, ops=60).format()
    assert [line.split()[0] for line in text.splitlines()] == [
        "pod:", "ops:", "slots:", "latency", "static", "throughput", "sources", "credit"]
    with_load = _report(1, load=0.5, ops=60).format()
    assert [line.split()[0] for line in with_load.splitlines()][5] == "load:"


def test_an_empty_run_formats_with_zero_shares() -> None:
    fabric = Fabric(FabricConfig(accelerators=2))
    report = make_report(fabric, fabric.run(()))
    assert report.ops == 0 and report.latency_p99_ns == 0.0
    assert "  sources (data into the switch): min 0% max 0%" in report.format().splitlines()
