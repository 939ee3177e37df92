"""Cost as the pod grows (issue 25, item 6): wall time, CPU time and peak RSS of both fidelities.

Usage: ``python benchmarks/cost_scaling.py [--only exact fast headline] [--timeout S]`` from
the repository root. Every cell runs in a fresh child process (``--cell``), one at a time, so
no cell inflates another's peak memory: the parent reads the child's own peak RSS and CPU time
from ``os.wait4``. Inside the child the wall and CPU time are taken around the run only
(``run``); ``total`` is the child's whole life (interpreter start-up, imports, building the
programs or workload, the run). Nothing is asserted on time (house rule); a cell past its
time-out is stopped and shown as stopped, never estimated in its place.

Baselines in the same run (ratios, not bare times):

* fast vs exact on the cells both fidelities run (same pod, same collective or workload):
  the speed-up of the run;
* each cell's run time against the same row's smallest pod (16 accelerators);
* for an exact cell too slow to run, the estimate from the exact pod's port-slots per second
  measured here on the fabric rows (a port-slot: one accelerator or switch port of one plane
  simulated for one flit slot) times the collective's slots, which the fast fidelity gives.

The fast fidelity's calibration (specs/fast.md Q1-Q5, a short run of the exact pod per link
configuration) is timed once per link configuration in its own child and handed to the
collective cells (``run_fast_collective``'s ``calibration``); a fast fabric cell calibrates in
the child (``run_fast_fabric`` has no such parameter), timed apart from its run.
"""

from __future__ import annotations

import argparse
import json
import os
import pickle
import resource
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

KiB, MiB, GiB = 1 << 10, 1 << 20, 1 << 30
PODS = (16, 64, 256, 1024)
#: Planes and lanes of the issue's headline cells' pod (4 planes, x4 links).
WIDE_PLANES, WIDE_LANES = 4, 4


@dataclass(frozen=True)
class Cell:
    """One measurement: a fidelity, a job (collective or fabric load) and a pod."""

    fidelity: str  # exact | fast | calibrate
    job: str  # collective | fabric | calibrate
    n: int
    op: str = ""
    algo: str = ""
    size: int = 0  # collective bytes (nccl-tests' size); fabric: ops
    wide: bool = False  # 4 planes, x4 links

    @property
    def label(self) -> str:
        pod = f"{self.n}" + (" x4x4p" if self.wide else "")
        if self.job == "fabric":
            return f"uniform load 0.5, {self.size} ops | {pod}"
        if self.job == "calibrate":
            return f"calibration | {'4 planes, x4' if self.wide else '1 plane, x1'}"
        return f"{self.op} {self.algo} {_size(self.size)} | {pod}"


def _size(nbytes: int) -> str:
    for unit, name in ((GiB, "GiB"), (MiB, "MiB"), (KiB, "KiB")):
        if nbytes >= unit and nbytes % unit == 0:
            return f"{nbytes // unit} {name}"
    return f"{nbytes} B"


def _pod(cell: Cell) -> Any:
    from ualink_ref.sim.fabric import FabricConfig
    planes, lanes = (WIDE_PLANES, WIDE_LANES) if cell.wide else (1, 1)
    pod = FabricConfig(accelerators=cell.n, planes=planes, lanes=lanes)
    return pod if cell.job == "fabric" else replace(pod, max_outstanding=256)


def _cpu() -> float:
    use = resource.getrusage(resource.RUSAGE_SELF)
    return use.ru_utime + use.ru_stime


def run_cell(cell: Cell, calibration_file: str | None) -> dict[str, Any]:
    """The child's job: run ``cell`` once; its figures and the run's wall and CPU time."""
    out: dict[str, Any] = {}
    pod = _pod(cell)
    if cell.job == "calibrate":
        from ualink_ref.fast.calibrate import calibrate
        start, cpu = time.perf_counter(), _cpu()
        cal = calibrate(pod)
        out.update(run_s=time.perf_counter() - start, run_cpu_s=_cpu() - cpu)
        assert calibration_file is not None
        Path(calibration_file).write_bytes(pickle.dumps(cal))
        return out
    if cell.job == "fabric":
        from ualink_ref.sim.workloads import fabric_workload
        work = fabric_workload("uniform", cell.size, cell.n, seed=1, load=0.5)
        if cell.fidelity == "exact":
            from ualink_ref.sim.fabric import Fabric
            from ualink_ref.sim.fabric_report import make_report
            fabric = Fabric(pod)
            start, cpu = time.perf_counter(), _cpu()
            run = fabric.run(work)
            out.update(run_s=time.perf_counter() - start, run_cpu_s=_cpu() - cpu)
            report = make_report(fabric, run, pattern="uniform")
            out.update(slots=run.slots, ok=report.ok,
                       port_slots=2 * cell.n * pod.planes * run.slots)
        else:
            from ualink_ref.fast.calibrate import calibrate
            from ualink_ref.fast.fabric import run_fast_fabric
            start = time.perf_counter()
            calibrate(pod)  # cached per configuration: the run below reuses it
            out["calib_s"] = time.perf_counter() - start
            out["calib_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
            start, cpu = time.perf_counter(), _cpu()
            fast = run_fast_fabric(pod, work)
            out.update(run_s=time.perf_counter() - start, run_cpu_s=_cpu() - cpu)
            out.update(slots=fast.slots, untrusted=len(fast.untrusted))
        return out
    if cell.fidelity == "exact":
        from ualink_ref.collectives.algorithms import build
        from ualink_ref.collectives.report import make_report as collective_report
        from ualink_ref.collectives.run import run_collective
        collective = build(cell.op, cell.algo, cell.n, cell.size, "float32", seed=1)
        start, cpu = time.perf_counter(), _cpu()
        crun = run_collective(collective, pod)
        out.update(run_s=time.perf_counter() - start, run_cpu_s=_cpu() - cpu)
        rep = collective_report(crun)
        out.update(slots=crun.slots, time_us=rep.time_us, busbw=rep.busbw_gbps, ok=rep.exact,
                   port_slots=2 * cell.n * pod.planes * crun.slots)
        return out
    from ualink_ref.collectives.algorithms import TimingOnly, schedule
    from ualink_ref.fast.collective import auto_config, run_fast_collective
    assert calibration_file is not None
    calibration = pickle.loads(Path(calibration_file).read_bytes())
    config = auto_config(cell.op, cell.algo, cell.n, cell.size)
    if cell.n <= 64:
        plan = schedule(cell.op, cell.algo, cell.n, cell.size)
    else:
        plan = schedule(cell.op, cell.algo, cell.n, cell.size,
                        timing=TimingOnly((0,) if config.symmetric else None))
    start, cpu = time.perf_counter(), _cpu()
    fast_rep = run_fast_collective(plan, pod, config, calibration)
    out.update(run_s=time.perf_counter() - start, run_cpu_s=_cpu() - cpu)
    out.update(slots=fast_rep.time_us * 1000 / pod.slot_ns, time_us=fast_rep.time_us,
               busbw=fast_rep.busbw_gbps, pieces=fast_rep.operations,
               symmetric=config.symmetric, burst=config.burst)
    return out


def measure(cell: Cell, calibration_file: str | None, timeout: float) -> dict[str, Any]:
    """Run ``cell`` in a fresh child; add its own peak RSS, CPU and total wall time."""
    with tempfile.TemporaryFile("w+") as sink:
        start = time.perf_counter()
        child = subprocess.Popen(
            [sys.executable, __file__, "--cell", json.dumps(cell.__dict__),
             "--calibration", calibration_file or ""], stdout=sink, start_new_session=True)
        stopped = False
        while True:
            pid, status, use = os.wait4(child.pid, os.WNOHANG)
            if pid:
                break
            if time.perf_counter() - start > timeout:
                os.killpg(child.pid, signal.SIGKILL)  # our own child's session only
                stopped = True
                pid, status, use = os.wait4(child.pid, 0)
                break
            time.sleep(0.1)
        total = time.perf_counter() - start
        child.returncode = 0  # reaped by wait4 above
        sink.seek(0)
        text = sink.read().strip().splitlines()
    result: dict[str, Any] = json.loads(text[-1]) if text and not stopped else {}
    result.update(total_s=total, rss_mb=use.ru_maxrss / 1024,
                  cpu_s=use.ru_utime + use.ru_stime, stopped=stopped,
                  failed=not stopped and os.waitstatus_to_exitcode(status) != 0)
    return result


def cells(groups: list[str]) -> list[Cell]:
    """The grid (module docstring); ``groups`` picks exact / fast / headline rows."""
    out: list[Cell] = []
    if "exact" in groups or "fast" in groups:
        out.append(Cell("calibrate", "calibrate", 2))
    if "fast" in groups or "headline" in groups:  # the groups with x4 cells
        out.append(Cell("calibrate", "calibrate", 2, wide=True))
    if "exact" in groups:  # both fidelities, 1 plane x1 (the exact pod's default)
        for n, ops in ((16, 5000), (64, 10000), (256, 4000), (1024, 2000)):
            out += [Cell("exact", "fabric", n, size=ops), Cell("fast", "fabric", n, size=ops)]
        for op, algo in (("all-reduce", "ring"), ("all-to-all", "direct")):
            for n in (16, 64):
                out += [Cell("exact", "collective", n, op, algo, 64 * KiB),
                        Cell("fast", "collective", n, op, algo, 64 * KiB)]
    if "fast" in groups:  # the fast fidelity alone, 4 planes, x4
        for op, algo in (("all-reduce", "ring"), ("all-reduce", "in-network"),
                         ("all-to-all", "direct")):
            for size in (1 * MiB, 64 * MiB):
                for n in PODS:
                    n = 1023 if algo == "in-network" and n == 1024 else n
                    out.append(Cell("fast", "collective", n, op, algo, size, wide=True))
    if "headline" in groups:
        out += [Cell("fast", "collective", 1024, "all-reduce", "ring", GiB, wide=True),
                Cell("fast", "collective", 1023, "all-reduce", "in-network", GiB, wide=True)]
        if "fast" not in groups:  # the third headline cell is a row of the fast group
            out.append(Cell("fast", "collective", 1024, "all-to-all", "direct", 64 * MiB,
                            wide=True))
    return out


def _fmt(value: float | None, digits: int = 1) -> str:
    return "—" if value is None else f"{value:,.{digits}f}"


def main() -> int:
    """Run the grid one cell at a time; print a markdown table and the ratios."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", nargs="+", choices=("exact", "fast", "headline"),
                        default=["exact", "fast", "headline"])
    parser.add_argument("--timeout", type=float, default=240.0,
                        help="stop a cell after this many wall seconds (default 240)")
    parser.add_argument("--headline-timeout", type=float, default=120.0,
                        help="the same for the 1 GiB headline cells (default 120: a cell "
                             "past 60 s has missed the issue's target already)")
    parser.add_argument("--cell", help=argparse.SUPPRESS)
    parser.add_argument("--calibration", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.cell:
        cell = Cell(**json.loads(args.cell))
        print(json.dumps(run_cell(cell, args.calibration or None)), flush=True)
        return 0
    workdir = tempfile.mkdtemp(prefix="cost_scaling_")
    cal_files = {False: os.path.join(workdir, "x1.pkl"), True: os.path.join(workdir, "x4.pkl")}
    print(f"# {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, load average "
          f"{os.getloadavg()[0]:.1f}, {os.cpu_count()} cores; time-out {args.timeout:.0f} s",
          flush=True)
    print("| cell | fidelity | run wall s | run CPU s | total s | peak RSS MB | figures |")
    print("|---|---|---|---|---|---|---|", flush=True)
    results: list[tuple[Cell, dict[str, Any]]] = []
    for cell in cells(args.only):
        limit = args.headline_timeout if cell.size >= GiB else args.timeout
        res = measure(cell, cal_files[cell.wide], limit)
        results.append((cell, res))
        if res["stopped"] or res["failed"]:
            figures = (f"stopped after {limit:.0f} s" if res["stopped"]
                       else "FAILED (child exit != 0)")
            run_wall = run_cpu = None
        else:
            run_wall, run_cpu = res["run_s"], res["run_cpu_s"]
            parts = []
            if "time_us" in res:
                parts.append(f"{res['time_us']:.1f} µs, busbw {res['busbw']:.2f} GB/s")
            if "slots" in res and "time_us" not in res:
                parts.append(f"{res['slots']:,.0f} slots")
            if "port_slots" in res:
                parts.append(f"{res['port_slots'] / res['run_s']:,.0f} port-slots/s")
            if "ok" in res:
                parts.append(f"ok {res['ok']}")
            if "calib_s" in res:
                parts.append(f"+ calibration {res['calib_s']:.1f} s in the child")
            if "symmetric" in res:
                parts.append(f"{res['pieces']:,} pieces"
                             + (f", rank 0 only, bursts of {res['burst']}"
                                if res["symmetric"] else
                                (f", bursts of {res['burst']}" if res["burst"] > 1 else "")))
            figures = "; ".join(parts)
        print(f"| {cell.label} | {cell.fidelity} | {_fmt(run_wall)} | {_fmt(run_cpu)} | "
              f"{_fmt(res['total_s'])} | {_fmt(res['rss_mb'], 0)} | {figures} |", flush=True)
    _ratios(results)
    return 0


def _ratios(results: list[tuple[Cell, dict[str, Any]]]) -> None:
    """The same run's baselines: fast vs exact, each pod vs the row's smallest, and the
    exact pod's estimate for collectives it was not asked to run."""
    done = {c: r for c, r in results if not r["stopped"] and not r["failed"]}
    print("\nfast vs exact (same cell, run CPU time): speed-up")
    for cell, res in done.items():
        if cell.fidelity != "exact":
            continue
        twin = Cell("fast", cell.job, cell.n, cell.op, cell.algo, cell.size, cell.wide)
        if twin in done:
            print(f"  {cell.label}: {res['run_cpu_s'] / done[twin]['run_cpu_s']:,.0f}x")
    rates = {c.n: r["port_slots"] / r["run_cpu_s"] for c, r in done.items()
             if c.fidelity == "exact" and c.job == "fabric"}
    print("\nexact pod port-slots per CPU second (fabric rows): "
          + ", ".join(f"{n}: {rate:,.0f}" for n, rate in sorted(rates.items())))
    print("\nrun CPU time against the row's 16-accelerator cell")
    for cell, res in done.items():
        if cell.n == 16 or cell.fidelity == "calibrate":
            continue
        base = Cell(cell.fidelity, cell.job, 16, cell.op, cell.algo, cell.size, cell.wide)
        if base in done and done[base]["run_cpu_s"] > 0:
            print(f"  {cell.label} [{cell.fidelity}]: "
                  f"{res['run_cpu_s'] / done[base]['run_cpu_s']:,.1f}x")
    print("\nexact pod estimates for the fast-only collective cells "
          "(2 x N x planes x slots / port-slots per CPU second at the nearest measured N)")
    for cell, res in done.items():
        if cell.fidelity != "fast" or cell.job != "collective" or not cell.wide or not rates:
            continue
        near = min(rates, key=lambda n: abs(n - cell.n))
        estimate = 2 * cell.n * WIDE_PLANES * res["slots"] / rates[near]
        print(f"  {cell.label}: {res['slots']:,.0f} slots -> ~{estimate:,.0f} CPU s "
              f"(~{estimate / 3600:,.1f} h)")


if __name__ == "__main__":
    sys.exit(main())
