"""Every Python block of the README and of the pages in docs/ runs as shown, pasted into
a fresh interpreter started in the repository's top folder (other tests check what some
of them print)."""

from __future__ import annotations

import re
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


#: The README and the guide pages that took over its examples.
DOCUMENTS = [ROOT / "README.md", ROOT / "specs" / "README.md",
             *sorted((ROOT / "docs").glob("*.md"))]


def _python_blocks() -> list[tuple[str, str]]:
    blocks = []
    for path in DOCUMENTS:
        text = path.read_text()
        for match in re.finditer(r"^( *)```python\n(.*?)^\1```", text, re.S | re.M):
            line = text.count("\n", 0, match.start()) + 1
            where = f"{path.relative_to(ROOT)}:{line}"
            blocks.append((where, textwrap.dedent(match.group(2))))
    return blocks


def test_readme_has_python_blocks() -> None:
    assert len(_python_blocks()) >= 6  # fuzzing, PHY, DL, TL, Scapy, difftest (now in docs/)


@pytest.mark.parametrize("where,code", _python_blocks(),
                         ids=lambda v: v if ".md:" in v else "")
def test_readme_python_block_runs(where: str, code: str, monkeypatch: pytest.MonkeyPatch,
                                  capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(ROOT)
    namespace: dict[str, object] = {"__name__": "readme"}
    exec(compile(code, where, "exec"), namespace)  # raises if it does not run
