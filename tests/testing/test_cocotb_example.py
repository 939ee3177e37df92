"""The worked cocotb example (examples/cocotb_crc): good RTL passes, seeded bug is caught,
the documented command works from the repository root with no arguments and writes only
under its output folder, and a missing tool is one line saying what to install.

The simulations need Icarus Verilog and cocotb and skip with a reason otherwise
(.ci/run installs iverilog); the missing-tool tests run everywhere.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "cocotb_crc"
CASES = 200  # fuzz budget for the RTL (run.py's default)



def _missing_tool() -> str | None:
    if importlib.util.find_spec("hypothesis") is None:
        return "Hypothesis not installed (pip install 'ualink_ref[cocotb]')"
    if shutil.which("iverilog") is None:
        return "Icarus Verilog (iverilog) not installed"
    if importlib.util.find_spec("cocotb") is None:
        return "cocotb not installed (pip install 'ualink_ref[cocotb]')"
    return None


MISSING = _missing_tool()
needs_tools = pytest.mark.skipif(MISSING is not None, reason=MISSING or "")


def _run(out: Path, broken: bool) -> tuple[int, int]:
    sys.path.insert(0, str(EXAMPLE))
    try:
        from run import run  # type: ignore[import-not-found]
    finally:
        sys.path.remove(str(EXAMPLE))
    return run(out, broken=broken, cases=CASES, seed=0)  # type: ignore[no-any-return]


def _tree(top: Path) -> dict[str, tuple[int, int]]:
    """Every file under ``top``: relative path -> (size, mtime in ns)."""
    return {str(p.relative_to(top)): (p.stat().st_size, p.stat().st_mtime_ns)
            for p in top.rglob("*") if p.is_file()}


def _env(path: str | None = None) -> dict[str, str]:
    env = dict(os.environ)
    # the worktree's ualink_ref, wherever the script runs from
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), *filter(None, [env.get("PYTHONPATH")])])
    if path is not None:
        env["PATH"] = path
    return env


@pytest.mark.slow
@needs_tools
def test_no_argument_run_from_the_repository_root(tmp_path: Path) -> None:
    """`python examples/cocotb_crc/run.py` in a copy of the repository layout: passes, prints
    no warning flood, and every file it writes is under ./cocotb-out."""
    repo = tmp_path / "repo"
    shutil.copytree(EXAMPLE, repo / "examples" / "cocotb_crc",
                    ignore=shutil.ignore_patterns("__pycache__", ".hypothesis", "cocotb-out"))
    before = _tree(repo)
    done = subprocess.run([sys.executable, "examples/cocotb_crc/run.py"], cwd=repo,
                          env=_env(), capture_output=True, text=True)
    output = done.stdout + done.stderr
    assert done.returncode == 0, output[-3000:]
    assert done.stdout.rstrip().endswith(
        f"2 test(s), 0 failed; files in {repo / 'cocotb-out'}"), output[-2000:]
    assert "Warning" not in output and "Traceback" not in output, output[-3000:]
    after = _tree(repo)
    changed = {p for p in after if before.get(p) != after[p]} | (set(before) - set(after))
    assert changed and all(p.startswith("cocotb-out/") for p in changed), sorted(
        p for p in changed if not p.startswith("cocotb-out/"))
    summary = json.loads((repo / "cocotb-out" / "difftest" / "summary.json").read_text())
    assert summary["ok"] and summary["cases"] == CASES
    assert {"accept", "CrcError", "ReservedBitsError", "FieldRangeError"} <= set(
        summary["by_verdict"])


@needs_tools
def test_broken_rtl_is_caught_and_shrunk_to_one_field(tmp_path: Path) -> None:
    tests, failed = _run(tmp_path, broken=True)
    assert (tests, failed) == (2, 2)  # the fuzzer and the exported vectors both catch it
    summary = json.loads((tmp_path / "difftest" / "summary.json").read_text())
    assert not summary["ok"]
    [difference] = summary["differences"]  # one field
    assert difference.startswith("ack_req_seq:")
    doc = json.loads(Path(summary["reproducer"]).read_text())
    [case] = doc["cases"]
    assert [d["field"] for d in case["difftest"]["differences"]] == ["ack_req_seq"]
    assert case["kind"] == "flit_decode"  # replayable and `vectors verify`-compatible


def _script_without(tmp_path: Path, *, block_cocotb: bool, path: str | None
                    ) -> subprocess.CompletedProcess[str]:
    # `sys.modules[name] = None` makes `import name` fail as if it were not installed.
    block = "import sys; sys.modules['cocotb'] = sys.modules['cocotb_tools'] = None; " if (
        block_cocotb) else "import sys; "
    code = (block + f"sys.argv = ['run.py', '--out', {str(tmp_path / 'out')!r}]; "
            f"import runpy; runpy.run_path({str(EXAMPLE / 'run.py')!r}, run_name='__main__')")
    return subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=_env(path),
                          capture_output=True, text=True)


def test_without_icarus_one_line_says_what_to_install(tmp_path: Path) -> None:
    empty = tmp_path / "bin"
    empty.mkdir()
    done = _script_without(tmp_path, block_cocotb=False, path=str(empty))
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.count("\n") == 1 and done.stderr.startswith("run.py: needs "), done.stderr
    assert "Icarus Verilog (e.g. apt-get install iverilog)" in done.stderr
    assert not (tmp_path / "out").exists()


def test_without_cocotb_one_line_says_what_to_install(tmp_path: Path) -> None:
    done = _script_without(tmp_path, block_cocotb=True, path=None)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.count("\n") == 1, done.stderr
    assert "pip install 'ualink_ref[cocotb]' (missing: cocotb)" in done.stderr, done.stderr
    assert not (tmp_path / "out").exists()
