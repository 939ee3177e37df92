"""Review findings on difftest's target handling and CLI (issue 27): each test failed before its fix."""

from __future__ import annotations

import sys

import pytest

from ualink_ref.errors import TargetCrashed
from ualink_ref.testing.difftest import SubprocessTarget

ECHO_TWICE_THEN_EXIT = ("import sys\nfor n, line in enumerate(sys.stdin):\n"
                        "    if n == 2:\n        sys.exit(5)\n    print('ERR', flush=True)\n")


def script(code: str) -> list[str]:
    return [sys.executable, "-c", code]


def test_a_discarded_process_has_answered_nothing() -> None:
    with SubprocessTarget(script(ECHO_TWICE_THEN_EXIT), timeout=10) as target:
        assert [target.exchange("00") for _ in range(2)] == ["ERR", "ERR"]
        assert target.answered == 2
        with pytest.raises(TargetCrashed, match="after answering 2 line"):
            target.exchange("00")
        # No process runs now; the next input goes to a fresh one, which has answered nothing.
        assert target.answered == 0
        target.restart()
        assert target.answered == 0
