"""Benchmark helpers: collect speed ratios and print them at the end of the run."""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from typing import Any

#: name -> (ours per item [s], baseline per item [s], ratio); filled by the benchmarks.
#: An item is what the benchmark names: a codeword, a DL flit, a capture record.
RATIOS: dict[str, tuple[float, float, float]] = {}


def median_time(job: Callable[[], Any], rounds: int = 15, *, warm_up: bool = True) -> float:
    """Median wall time of ``rounds`` calls of ``job`` (after one warm-up call, by default).

    Used where a baseline is timed by hand beside a pytest-benchmark fixture, so that
    both sides of a ratio come from the same run.
    """
    if warm_up:
        job()  # tables are built on first use
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        job()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def pytest_terminal_summary(terminalreporter: Any) -> None:
    if not RATIOS:
        return
    terminalreporter.section("speed ratios vs baseline (same run)")
    for name, (ours, base, ratio) in RATIOS.items():
        terminalreporter.write_line(
            f"{name:<34} ours {ours * 1e6:9.2f} us/item   baseline {base * 1e6:10.1f} us/item"
            f"   ratio {ratio:8.3g}x"
        )
