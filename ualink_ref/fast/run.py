"""One call from an operation to its fast figures: the schedule, the run mode and the
engine (``specs/fast.md`` rules P1-P5), for the CLI, sweeps and benchmarks."""

from __future__ import annotations

from ualink_ref.collectives.algorithms import TimingOnly, check_schedule, schedule
from ualink_ref.fast.collective import auto_config, run_fast_collective
from ualink_ref.fast.report import FastReport
from ualink_ref.sim.fabric import FabricConfig


def fast_collective(op: str, algo: str, size: int, pod: FabricConfig,
                    reduce_bytes_per_ns: float, dtype: str = "float32",
                    seed: int = 0) -> FastReport:
    """Time ``op`` by ``algo`` of ``size`` bytes on ``pod`` with the fast fidelity, in the
    mode :func:`~ualink_ref.fast.collective.auto_config` picks (rank 0's program only when
    that mode runs one rank)."""
    ranks = pod.accelerators
    algo = check_schedule(op, algo, ranks, size, dtype)
    config = auto_config(op, algo, ranks, size, reduce_bytes_per_ns)
    timing = TimingOnly((0,) if config.symmetric else None)
    plan = schedule(op, algo, ranks, size, dtype, seed=seed, timing=timing)
    return run_fast_collective(plan, pod, config)


__all__ = ["fast_collective"]
