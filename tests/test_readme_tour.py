"""The README and its tour (docs/tour.md) show real commands with their real output,
and the tour's code runs.

This keeps the documentation honest; it is not a correctness test of the
model (those live beside each layer).
"""

from __future__ import annotations

import os
import re
import shlex
import stat
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _tour() -> str:
    return (ROOT / "docs" / "tour.md").read_text()


def _console_texts() -> list[tuple[str, str]]:
    """Where console blocks are checked, and the folder each runs in: the README's short
    examples (read-only, from the repository's top folder, as the README says) and the
    tour (in a fresh folder: its commands write files)."""
    return [("README.md", (ROOT / "README.md").read_text()), ("docs/tour.md", _tour())]


def _matches(expected: list[str], actual: list[str]) -> bool:
    """Line-by-line equality; a line '...' stands for any run of lines."""
    if "..." not in expected:
        return expected == actual
    cut = expected.index("...")
    head, tail = expected[:cut], expected[cut + 1:]
    return actual[: len(head)] == head and (not tail or actual[-len(tail):] == tail)


def _console_blocks() -> list[tuple[str, list[tuple[str, list[str]]]]]:
    blocks = []
    for name, text in _console_texts():
        for body in re.findall(r"```console\n(.*?)```", text, re.S):
            steps: list[tuple[str, list[str]]] = []
            for line in body.splitlines():
                if line.startswith("$ "):
                    steps.append((line[2:], []))
                else:
                    steps[-1][1].append(line)
            blocks.append((name, steps))
    return blocks


@pytest.mark.parametrize("source,block", _console_blocks(),
                         ids=lambda v: v if isinstance(v, str) else v[0][0][:40])
def test_tour_console_block_is_real(source: str, block: list[tuple[str, list[str]]],
                                    tmp_path: Path) -> None:
    shim = tmp_path / "bin" / "ualink-ref"
    shim.parent.mkdir()
    shim.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m ualink_ref.cli "$@"\n')
    shim.chmod(shim.stat().st_mode | stat.S_IEXEC)
    env = dict(os.environ, PATH=f"{shim.parent}:{os.environ['PATH']}", PYTHONPATH=str(ROOT))
    for command, expected in block:
        cwd = ROOT if source == "README.md" else tmp_path
        result = subprocess.run(["bash", "-c", command], cwd=cwd, env=env,
                                capture_output=True, text=True, check=False)
        assert result.returncode == 0, result.stderr
        assert _matches(expected, result.stdout.splitlines()), (command, result.stdout)


def test_tour_fuzzing_example_runs() -> None:
    code = re.search(r"```python\n(.*?)```", _tour(), re.S)
    assert code is not None
    namespace: dict[str, object] = {}
    # Not named after the file: tools that read a function's source (inspect) would
    # tokenize the Markdown after the block as Python.
    exec(compile(code.group(1), "<docs/tour.md python example>", "exec"), namespace)
    test = namespace["test_crc_catches_three_bit_errors"]
    assert callable(test)
    test()  # Hypothesis runs the property; a missed bit error would raise here


def test_error_paths_example_is_real() -> None:
    """The TL error-path example (split, poison, timeout; docs/layers.md) prints what it shows."""
    text = (ROOT / "docs" / "layers.md").read_text()
    body = re.search(r"```\n\$ (ualink-ref simulate [^\n]*--split[^\n]*)\n(.*?)```", text, re.S)
    assert body is not None, "docs/layers.md lost its error-path example"
    command, expected = body.group(1), body.group(2).splitlines()
    args = [*shlex.split(command)[1:], "--no-progress"]
    result = subprocess.run([sys.executable, "-m", "ualink_ref.cli", *args], cwd=ROOT,
                            capture_output=True, text=True, check=False,
                            env=dict(os.environ, PYTHONPATH=str(ROOT)))
    assert result.returncode == 1, result.stderr  # not every op is OKAY: exit 1, as stated
    assert _matches(expected, result.stdout.splitlines()), result.stdout
