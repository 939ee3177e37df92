"""Full-stack throughput: two Endpoints (TL + DL + KP4 FEC), no errors, ops per second.

Run: ``python -m pytest benchmarks/test_endpoint_bench.py --benchmark-enable``.
Each benchmark round runs a fresh :class:`~ualink_ref.sim.link_run.Simulation` of
``N_OPS`` 64-byte WriteFulls or 64-byte Reads issued by endpoint a against
endpoint b's memory, in KP4 mode with no channel errors, and counts completed
ops per second of wall time on one core (both endpoints, the FEC encode and
decode of every DL flit, the DL CRC and the TL all run in this process).
Target (issue 4): >= 20,000 ops/s. The baseline in the same run is the
cheapest thing that could stand in for a 64-byte store: ``dict[addr] = data``.
The figures (ops/s, ratio to the baseline) go to ``extra_info`` and are printed.
Each kind runs twice: with the FEC engine chosen as usual (numba when the ``fast``
extra is installed) and on the numpy path (``phy.accel.use_compiled(False)``), so
the stack's own cost and the FEC's share show in the same run.
"""

from __future__ import annotations

import time
from contextlib import nullcontext
from typing import Any

import pytest

from ualink_ref.phy.accel import compiled_available, use_compiled
from ualink_ref.phy.config import PhyConfig
from ualink_ref.sim.config import SimConfig
from ualink_ref.sim.link_run import Simulation
from ualink_ref.sim.workloads import uniform_workload
from ualink_ref.tl import Status

N_OPS = 10_000
FIGURES: dict[str, float] = {}


def _baseline_ops_per_s() -> float:
    payload = bytes(range(64))
    best = float("inf")
    for _ in range(5):
        store: dict[int, bytes] = {}
        start = time.perf_counter()
        for i in range(N_OPS):
            store[i * 256] = payload
        best = min(best, time.perf_counter() - start)
    return N_OPS / best


def _run(kind: str, fec_path: str) -> Simulation:
    sim = Simulation(uniform_workload(N_OPS, kind),
                     SimConfig(phy=PhyConfig(fec="kp4"), max_outstanding=256))
    with use_compiled(False) if fec_path == "numpy" else nullcontext():
        sim.run(verify=False)
    return sim


@pytest.mark.parametrize("fec_path", ["auto", "numpy"])
@pytest.mark.parametrize("kind", ["write", "read"])
def test_full_stack_ops_per_second(benchmark: Any, kind: str, fec_path: str) -> None:
    base = FIGURES.setdefault("baseline", _baseline_ops_per_s())
    sim = benchmark.pedantic(_run, args=(kind, fec_path), rounds=3, iterations=1,
                             warmup_rounds=1)
    assert all(r is not None and r.status == Status.OKAY for r in sim.results)
    if kind == "write":
        assert sim.b.memory.peek((N_OPS - 1) * 256, 64) == bytes(range(64))
    seconds = benchmark.stats.stats.min if benchmark.stats else None
    if seconds:
        ops = N_OPS / seconds
        benchmark.extra_info.update(
            {"ops_per_s": round(ops), "baseline_dict_store_ops_per_s": round(base),
             "ratio_vs_baseline": ops / base, "target_ops_per_s": 20_000,
             "fec_path": fec_path if fec_path == "numpy" or not compiled_available()
             else "numba"}
        )
        print(f"\n64-byte {kind} ({benchmark.extra_info['fec_path']} FEC): {ops:,.0f} ops/s "
              f"full stack (kp4, no errors); dict store baseline {base:,.0f} ops/s; "
              f"ratio {ops / base:.4f}")
