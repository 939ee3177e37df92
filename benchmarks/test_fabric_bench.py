"""Fabric cost as the pod grows: simulated port-slots per second of wall time.

Run: ``python -m pytest benchmarks/test_fabric_bench.py --benchmark-enable -s``.
One uniform random run per pod size (16, 32, 64 accelerators; the 64-accelerator
run is the issue's 20,000 ops), offered load 0.5 (issue 25), KP4, no errors, one
switch. A *port-slot* is one harness port (accelerator or switch port) simulated for
one flit slot, so port-slots/s = 2 x N x slots / wall seconds — the figure that shows the cost per
port as N grows. Also printed: the zero-load 64-byte Load through one switch
over 3 m cables with its decomposition, next to the 1 us budget and RoCEv2.
"""

from __future__ import annotations

import time

import pytest

from ualink_ref.sim.fabric import Fabric, FabricConfig
from ualink_ref.sim.fabric_report import make_report, zero_load_load64
from ualink_ref.sim.workloads import fabric_workload

OPS = {16: 5_000, 32: 10_000, 64: 20_000}
#: Offered load per source, a fraction of one link's data rate (issue 25's figure).
LOAD = 0.5
FIGURES: dict[int, tuple[float, float, float, bool]] = {}


@pytest.mark.parametrize("n", sorted(OPS))
def test_fabric_port_slots_per_second(benchmark, n: int) -> None:
    def job() -> None:
        fabric = Fabric(FabricConfig(accelerators=n, seed=1))
        work = fabric_workload("uniform", OPS[n], n, seed=1, load=LOAD)
        start = time.perf_counter()
        run = fabric.run(work)
        wall = time.perf_counter() - start
        report = make_report(fabric, run, pattern="uniform")
        FIGURES[n] = (2 * n * run.slots / wall, run.slots, wall, report.ok)
        assert report.ok

    benchmark.pedantic(job, rounds=1, iterations=1)
    rate, slots, wall, ok = FIGURES[n]
    benchmark.extra_info.update(port_slots_per_s=rate, slots=slots, wall_s=wall)
    print(f"\n{n} accelerators, {OPS[n]} uniform ops at load {LOAD}: {slots:.0f} slots in "
          f"{wall:.1f} s = {rate:,.0f} port-slots/s (ok {ok})")


def test_zero_load_latency_printed() -> None:
    print("\n" + zero_load_load64().format())
