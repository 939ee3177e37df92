"""The README's capture section shows the real output of its commands."""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

import pytest

from ualink_ref.cli import main

ROOT = Path(__file__).resolve().parent.parent


def _section() -> str:
    text = (ROOT / "README.md").read_text()
    start = text.index("<!-- section: capture -->")
    return text[start:text.index("## Development", start)]


def test_dissect_output_in_readme_is_real(monkeypatch: pytest.MonkeyPatch) -> None:
    block = re.search(r"```console\n\$ ualink-ref dissect (\S+)\n(.*?)```", _section(), re.S)
    assert block is not None
    monkeypatch.chdir(ROOT)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["dissect", block.group(1)]) == 0
    assert out.getvalue() == block.group(2)


def test_scapy_example_in_readme_is_real(monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("scapy")
    code = re.search(r"```python\n(.*?)```\n\n```console\n(.*?)```", _section(), re.S)
    assert code is not None
    monkeypatch.chdir(ROOT)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code.group(1), "README", "exec"), {})
    assert out.getvalue() == code.group(2)
