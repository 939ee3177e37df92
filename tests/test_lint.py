"""ruff and mypy stay clean with the configuration in pyproject.toml."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _run(tool: str, *args: str) -> subprocess.CompletedProcess[str]:
    exe = Path(sys.executable).parent / tool
    cmd = str(exe) if exe.exists() else shutil.which(tool)
    if cmd is None:
        pytest.skip(f"{tool} is not installed (install the 'test' extra)")
    return subprocess.run([cmd, *args], cwd=ROOT, capture_output=True, text=True, check=False)


def test_ruff_clean() -> None:
    result = _run("ruff", "check", ".")
    assert result.returncode == 0, result.stdout + result.stderr


def test_mypy_clean() -> None:
    result = _run("mypy")
    assert result.returncode == 0, result.stdout + result.stderr
