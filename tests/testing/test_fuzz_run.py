"""A short fuzz run of every harness in fuzz/ (issue 15, item 6), as part of the suite.

With atheris installed (the ``test`` extra installs it where a wheel exists) each
harness runs coverage-guided in a subprocess for a fixed number of inputs and seed,
from a copy of its committed corpus (``fuzz/corpus/<harness>/``) with its dictionary
(``fuzz/dicts/``); without atheris, Hypothesis feeds it random and corpus-derived
inputs. A crash fails the test and leaves the reproducer in ``.fuzz-artifacts/<harness>/``
(its bytes are also in the failure message). The coverage each harness reached
(libFuzzer's ``cov`` / ``ft``) is printed in the terminal summary.
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

ROOT = Path(__file__).resolve().parents[2]
FUZZ = ROOT / "fuzz"
ARTIFACTS = ROOT / ".fuzz-artifacts"
HARNESSES = sorted(p.stem for p in FUZZ.glob("fuzz_*.py"))
#: Inputs per harness in CI (libFuzzer ``-runs``), and a time cap for slow machines.
RUNS = 1500
MAX_SECONDS = 5
HAVE_ATHERIS = importlib.util.find_spec("atheris") is not None
#: harness -> what the run reached; printed by tests/testing/conftest.py.
REACHED: dict[str, str] = {}


def _atheris_run(name: str, tmp_path: Path) -> None:
    corpus = tmp_path / "corpus"
    shutil.copytree(FUZZ / "corpus" / name, corpus)
    crashes = ARTIFACTS / name
    crashes.mkdir(parents=True, exist_ok=True)
    cmd = [sys.executable, str(FUZZ / f"{name}.py"), str(corpus), f"-runs={RUNS}", "-seed=1",
           f"-max_total_time={MAX_SECONDS}", f"-dict={FUZZ / 'dicts' / f'{name}.dict'}",
           "-print_final_stats=1", f"-artifact_prefix={crashes}/", "-close_fd_mask=1"]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=300,
                          check=False)
    log = proc.stderr
    found = sorted(crashes.glob("crash-*")) + sorted(crashes.glob("timeout-*"))
    if proc.returncode != 0 or found:
        detail = "".join(f"\n  reproducer {p} = {p.read_bytes()[:200].hex()}" for p in found)
        pytest.fail(f"fuzz harness {name} failed (exit {proc.returncode}):{detail}\n"
                    + "\n".join(log.splitlines()[-30:]))
    done = [line for line in log.splitlines() if "DONE" in line or "cov:" in line]
    stats = re.search(r"#(\d+)\s+\w+\s+cov: (\d+) ft: (\d+) corp: (\d+)", done[-1] if done else "")
    assert stats, f"no libFuzzer statistics from {name}:\n{log[-2000:]}"
    runs, cov, ft, corp = stats.groups()
    REACHED[name] = f"atheris: {runs} inputs, cov {cov}, ft {ft}, corpus {corp}"


def _hypothesis_run(name: str) -> None:
    sys.path.insert(0, str(FUZZ))
    try:
        with contextlib.suppress(KeyError):
            del sys.modules["atheris"]
        import types

        fake = types.ModuleType("atheris")
        fake.instrument_imports = contextlib.nullcontext  # type: ignore[attr-defined]
        sys.modules["atheris"] = fake
        module = importlib.import_module(name)
    finally:
        sys.path.remove(str(FUZZ))
    seeds = [p.read_bytes() for p in sorted((FUZZ / "corpus" / name).iterdir())]
    tried = 0

    def mutated(data: st.DataObject) -> bytes:
        seed = bytearray(data.draw(st.sampled_from(seeds)))
        for _ in range(data.draw(st.integers(0, 8))):
            if seed:
                seed[data.draw(st.integers(0, len(seed) - 1))] = data.draw(st.integers(0, 255))
        return bytes(seed)

    @settings(max_examples=300, derandomize=True, database=None, deadline=None,
              suppress_health_check=list(HealthCheck))
    @given(st.data())
    def run(data: st.DataObject) -> None:
        nonlocal tried
        blob = data.draw(st.binary(max_size=1400)) if data.draw(st.booleans()) else mutated(data)
        tried += 1
        try:
            module.TestOneInput(blob)
        except Exception:
            ARTIFACTS.mkdir(exist_ok=True)
            (ARTIFACTS / f"{name}-crash").write_bytes(blob)
            raise

    run()
    REACHED[name] = f"hypothesis: {tried} inputs (atheris not installed: no coverage figure)"


@pytest.mark.parametrize("name", HARNESSES)
def test_short_fuzz_run(name: str, tmp_path: Path) -> None:
    if "scapy" in name:
        pytest.importorskip("scapy")
    if HAVE_ATHERIS:
        _atheris_run(name, tmp_path)
    else:
        _hypothesis_run(name)
