"""Benchmark helpers: collect speed ratios and print them at the end of the run."""

from __future__ import annotations

from typing import Any

#: name -> (ours per codeword [s], baseline per codeword [s], ratio); filled by the benchmarks.
RATIOS: dict[str, tuple[float, float, float]] = {}


def pytest_terminal_summary(terminalreporter: Any) -> None:
    if not RATIOS:
        return
    terminalreporter.section("speed ratios vs baseline (same run)")
    for name, (ours, base, ratio) in RATIOS.items():
        terminalreporter.write_line(
            f"{name:<32} ours {ours * 1e6:9.2f} us/cw   baseline {base * 1e6:10.1f} us/cw"
            f"   ratio {ratio:8.1f}x"
        )
