"""Timing shared by the benchmark scripts: each side of a ratio timed in the same run."""

from __future__ import annotations

import statistics
from collections.abc import Callable


def interleaved(
    jobs: dict[str, Callable[[], float]], rounds: int, stat: str = "median"
) -> dict[str, float]:
    """``stat`` ("median" or "min") over ``rounds`` of each timing, rounds interleaved across jobs.

    The minimum is the less load-sensitive figure on a shared machine (each side's
    least-disturbed round); the median is the default.
    """
    samples: dict[str, list[float]] = {name: [] for name in jobs}
    for _ in range(rounds):
        for name, timing in jobs.items():
            samples[name].append(timing())
    pick = min if stat == "min" else statistics.median
    return {name: pick(values) for name, values in samples.items()}
