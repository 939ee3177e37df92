"""Print what each fuzz harness reached in the CI fuzz run (tests/testing/test_fuzz_run.py)."""

from __future__ import annotations

import sys
from typing import Any


def pytest_terminal_summary(terminalreporter: Any) -> None:
    """One line per harness that ran, after the tests."""
    module = sys.modules.get("test_fuzz_run") or sys.modules.get("tests.testing.test_fuzz_run")
    reached = getattr(module, "REACHED", None)
    if reached:
        terminalreporter.write_sep("-", "fuzz harnesses (coverage reached)")
        for name, text in sorted(reached.items()):
            terminalreporter.write_line(f"{name}: {text}")
