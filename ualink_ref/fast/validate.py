"""The fast fidelity against the exact pod, case by case (``specs/fast.md`` rules V1-V4).

V1. A case is a collective (operation, algorithm, size, accelerators, planes, flow
    control) or an offered fabric load (pattern, load, ops); each runs on both
    fidelities with the same configuration, workload and seed.
V2. The error of a figure is fast / exact - 1: completion time and busbw for a collective
    (busbw is size over time, so its error follows the time's), completion time, p99
    latency and delivered throughput for a fabric load.
V3. Where the fast fidelity says it is not to be trusted (:mod:`ualink_ref.fast.trust`) a
    case may exceed the bound; it is shown with the reason.
V4. The bound: every trusted case within :data:`BOUND` on completion time and busbw; the
    p99 latency of fabric loads is reported beside them, not bounded.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from ualink_ref.collectives.algorithms import build, schedule
from ualink_ref.collectives.report import make_report as collective_report
from ualink_ref.collectives.run import run_collective
from ualink_ref.fast.collective import run_fast_collective
from ualink_ref.fast.fabric import run_fast_fabric
from ualink_ref.sim.fabric import Fabric, FabricConfig
from ualink_ref.sim.fabric_report import make_report as fabric_report
from ualink_ref.sim.workloads import fabric_workload

#: The agreement the issue asks for, on every trusted case (rule V4).
BOUND = 0.05
#: Operations in flight per accelerator in a collective case (the collective CLI's default).
COLLECTIVE_OUTSTANDING = 256


@dataclass(frozen=True)
class Case:
    """One validation case (rule V1): a collective when ``op`` is set, else a fabric load."""

    name: str
    accelerators: int
    op: str = ""
    algo: str = ""
    size: int = 0
    pattern: str = ""
    load: float = 0.0
    ops: int = 0
    transfer: int = 256
    planes: int = 1
    flow_control: str = "cbfc"
    seed: int = 1

    @property
    def pod(self) -> FabricConfig:
        """The pod both fidelities run."""
        outstanding = COLLECTIVE_OUTSTANDING if self.op else FabricConfig().max_outstanding
        return FabricConfig(accelerators=self.accelerators, planes=self.planes,
                            flow_control=self.flow_control,  # type: ignore[arg-type]
                            seed=self.seed, max_outstanding=outstanding)


@dataclass(frozen=True)
class Result:
    """One case's figures on both fidelities (rule V2); p99 and throughput for loads only."""

    case: Case
    exact_time_us: float
    fast_time_us: float
    exact_busbw: float | None
    fast_busbw: float | None
    exact_p99_ns: float | None
    fast_p99_ns: float | None
    untrusted: tuple[str, ...]
    exact_wall_s: float
    fast_wall_s: float

    @staticmethod
    def _error(fast: float | None, exact: float | None) -> float | None:
        return None if fast is None or not exact else fast / exact - 1

    @property
    def time_error(self) -> float:
        """fast / exact - 1 of the completion time."""
        return self.fast_time_us / self.exact_time_us - 1

    @property
    def busbw_error(self) -> float | None:
        """fast / exact - 1 of busbw (collectives)."""
        return self._error(self.fast_busbw, self.exact_busbw)

    @property
    def p99_error(self) -> float | None:
        """fast / exact - 1 of the p99 latency (fabric loads)."""
        return self._error(self.fast_p99_ns, self.exact_p99_ns)

    @property
    def within(self) -> bool:
        """Rule V4 for this case: completion time and busbw (untrusted cases are exempt,
        V3; p99 is reported, not bounded)."""
        errors = [e for e in (self.time_error, self.busbw_error) if e is not None]
        return bool(self.untrusted) or all(abs(e) <= BOUND for e in errors)


def _collective(op: str, algo: str, n: int, size: int, **kw: object) -> Case:
    extra = "".join(f" {k}={v}" for k, v in kw.items())
    return Case(f"{op} {algo} {n} x {size // 1024} KiB{extra}", n, op=op, algo=algo,
                size=size, **kw)  # type: ignore[arg-type]


def _load(pattern: str, n: int, load: float, ops: int, **kw: object) -> Case:
    extra = "".join(f" {k}={v}" for k, v in kw.items())
    return Case(f"{pattern} load {load} {n} acc, {ops} x 256 B{extra}", n, pattern=pattern,
                load=load, ops=ops, **kw)  # type: ignore[arg-type]


KIB = 1024
#: The published grid (specs/fast.md, "Agreement"): collectives x algorithms x sizes x
#: 8 / 16 / 64 accelerators x CBFC / PFC x planes, and offered fabric loads.
GRID: tuple[Case, ...] = (
    _collective("all-reduce", "ring", 8, 256 * KIB),
    _collective("all-reduce", "one-shot", 8, 256 * KIB),
    _collective("all-reduce", "two-shot", 8, 256 * KIB),
    _collective("all-reduce", "in-network", 8, 256 * KIB),
    _collective("reduce-scatter", "ring", 8, 256 * KIB),
    _collective("all-gather", "ring", 8, 256 * KIB),
    _collective("broadcast", "ring", 8, 256 * KIB),
    _collective("all-to-all", "direct", 8, 256 * KIB),
    _collective("moe", "direct", 8, 256 * KIB),
    _collective("all-reduce", "ring", 8, 64 * KIB, flow_control="pfc"),
    _collective("all-reduce", "one-shot", 8, 64 * KIB, flow_control="pfc"),
    _collective("all-reduce", "ring", 8, 1024 * KIB, planes=4),
    _collective("all-to-all", "direct", 8, 256 * KIB, planes=4),
    _collective("all-reduce", "ring", 16, 256 * KIB),
    _collective("all-reduce", "ring", 16, 256 * KIB, flow_control="pfc"),
    _collective("all-reduce", "two-shot", 16, 256 * KIB),
    _collective("all-reduce", "in-network", 16, 256 * KIB),
    _collective("all-to-all", "direct", 16, 256 * KIB),
    _collective("moe", "direct", 16, 64 * KIB),
    _collective("all-reduce", "ring", 64, 256 * KIB),
    _collective("all-reduce", "two-shot", 64, 256 * KIB),
    _collective("all-reduce", "in-network", 64, 256 * KIB),
    _collective("all-to-all", "direct", 64, 256 * KIB),
    _load("uniform", 16, 0.5, 4000),
    _load("uniform", 16, 0.5, 4000, flow_control="pfc"),
    _load("uniform", 64, 0.5, 8000),
    _load("incast", 16, 0.5, 2000),
    _load("incast", 16, 0.9, 2000),
)
#: The cases a test runs on both fidelities (small: seconds each).
QUICK: tuple[Case, ...] = (
    _collective("all-reduce", "ring", 8, 64 * KIB),
    _collective("all-reduce", "two-shot", 8, 64 * KIB),
    _collective("all-to-all", "direct", 8, 64 * KIB, flow_control="pfc"),
    _load("incast", 8, 0.5, 600),
)


def run_case(case: Case) -> Result:
    """Rule V1-V2: one case on both fidelities."""
    pod = case.pod
    if case.op:
        start = time.perf_counter()
        exact = collective_report(run_collective(build(case.op, case.algo, case.accelerators,
                                                       case.size, seed=case.seed), pod))
        middle = time.perf_counter()
        fast = run_fast_collective(schedule(case.op, case.algo, case.accelerators, case.size,
                                            seed=case.seed), pod)
        end = time.perf_counter()
        return Result(case, exact.time_us, fast.time_us, exact.busbw_gbps, fast.busbw_gbps,
                      None, None, fast.untrusted, middle - start, end - middle)
    workload = fabric_workload(case.pattern, case.ops, case.accelerators,  # type: ignore[arg-type]
                               seed=case.seed, load=case.load, size=case.transfer,
                               kinds=("read", "writefull"))
    start = time.perf_counter()
    fabric = Fabric(pod)
    run = fabric.run(workload)
    report = fabric_report(fabric, run, pattern=case.pattern, load=case.load)
    middle = time.perf_counter()
    quick = run_fast_fabric(pod, workload)
    end = time.perf_counter()
    slot_us = pod.slot_ns / 1000
    return Result(case, run.slots * slot_us, quick.slots * slot_us, None, None,
                  report.latency_p99_ns, quick.latency_p99_ns, quick.untrusted,
                  middle - start, end - middle)


def validate(cases: Sequence[Case] = GRID,
             progress: Callable[[Result], None] | None = None) -> list[Result]:
    """Every case of ``cases`` on both fidelities, in order."""
    results = []
    for case in cases:
        result = run_case(replace(case))
        results.append(result)
        if progress is not None:
            progress(result)
    return results


def _percent(error: float | None) -> str:
    return "—" if error is None else f"{100 * error:+.1f} %"


def markdown_table(results: Sequence[Result]) -> str:
    """The agreement table (specs/fast.md): every case, its errors, trust and walls."""
    rows = ["| case | exact time (µs) | fast time (µs) | time | busbw | p99 | trusted | "
            "wall exact / fast (s) |",
            "|---|---:|---:|---:|---:|---:|---|---:|"]
    for r in results:
        trusted = "no: " + "; ".join(r.untrusted) if r.untrusted else "yes"
        rows.append(f"| {r.case.name} | {r.exact_time_us:.3f} | {r.fast_time_us:.3f} | "
                    f"{_percent(r.time_error)} | {_percent(r.busbw_error)} | "
                    f"{_percent(r.p99_error)} | {trusted} | "
                    f"{r.exact_wall_s:.1f} / {r.fast_wall_s:.2f} |")
    return "\n".join(rows)


__all__ = ["BOUND", "COLLECTIVE_OUTSTANDING", "GRID", "QUICK", "Case", "Result",
           "markdown_table", "run_case", "validate"]
