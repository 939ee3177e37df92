"""Every Python block of the README runs as shown, pasted into a fresh interpreter
started in the repository's top folder (other tests check what some of them print)."""

from __future__ import annotations

import re
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _python_blocks() -> list[tuple[int, str]]:
    text = (ROOT / "README.md").read_text()
    blocks = []
    for match in re.finditer(r"^( *)```python\n(.*?)^\1```", text, re.S | re.M):
        line = text.count("\n", 0, match.start()) + 1
        blocks.append((line, textwrap.dedent(match.group(2))))
    return blocks


def test_readme_has_python_blocks() -> None:
    assert len(_python_blocks()) >= 6  # fuzzing, PHY, DL, TL, Scapy, difftest


@pytest.mark.parametrize("line,code", _python_blocks(), ids=lambda v: f"line{v}"
                         if isinstance(v, int) else "")
def test_readme_python_block_runs(line: int, code: str, monkeypatch: pytest.MonkeyPatch,
                                  capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(ROOT)
    namespace: dict[str, object] = {"__name__": "readme"}
    exec(compile(code, f"README.md:{line}", "exec"), namespace)  # raises if it does not run
