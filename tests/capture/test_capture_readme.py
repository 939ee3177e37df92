"""The capture guide (docs/captures.md, once the README's capture section) shows the real
output of its commands."""

from __future__ import annotations

import contextlib
import io
import re
import shutil
from pathlib import Path

import pytest

from ualink_ref.cli import main

ROOT = Path(__file__).resolve().parents[2]


def _section() -> str:
    return (ROOT / "docs" / "captures.md").read_text()


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
        exec(compile(code.group(1), "docs/captures.md", "exec"), {})
    assert out.getvalue() == code.group(2)


def test_vectors_verify_example_in_readme_is_real(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    block = re.search(r"```console\n(\$ ualink-ref vectors verify vectors\n.*?)```",
                      _section(), re.S)
    assert block is not None
    lines = block.group(1).splitlines()
    assert lines[2].startswith("$ rm -rf /tmp/mine && cp -r vectors /tmp/mine && printf '\\377'")
    seek = int(re.search(r"seek=(\d+)", lines[2]).group(1))  # type: ignore[union-attr]
    monkeypatch.chdir(ROOT)

    def run(directory: str) -> str:
        out = io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.suppress(SystemExit):
            main(["vectors", "verify", directory])
        return out.getvalue()

    assert run("vectors") == lines[1] + "\n"
    mine = tmp_path / "mine"
    shutil.copytree(ROOT / "vectors", mine)
    pcap = mine / "captures" / "replay.pcap"
    data = bytearray(pcap.read_bytes())
    data[seek] = 0o377
    pcap.write_bytes(bytes(data))
    assert lines[3] == "$ ualink-ref vectors verify /tmp/mine"
    assert run(str(mine)) == "\n".join(lines[4:]) + "\n"
