"""``collective --fidelity fast`` and ``validate-fidelity`` on the command line."""

from __future__ import annotations

import json

import pytest

from ualink_ref.cli import main
from ualink_ref.fast import validate as V


def test_a_fast_collective_prints_the_exact_reports_figures(
        capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["collective", "--fidelity", "fast", "--accelerators", "4", "--size", "64K",
                 "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["op"] == "all-reduce" and report["ranks"] == 4
    assert report["time_us"] > 0 and report["busbw_gbps"] > 0
    assert report["untrusted"] == []


def test_a_fast_run_takes_a_pod_of_1024(capsys: pytest.CaptureFixture[str]) -> None:
    """Past the validated grid it runs, and says it is extrapolating (rule V3d)."""
    assert main(["collective", "--fidelity", "fast", "--accelerators", "1024", "--size",
                 "1M", "--planes", "4", "--lanes", "4"]) == 0
    out = capsys.readouterr().out
    assert "1024 accelerators" in out and "extrapolated" in out


def _exit_status(args: list[str]) -> int:
    try:
        return main(args)
    except SystemExit as exc:  # argparse's own checks exit from inside main
        return int(exc.code or 0)


@pytest.mark.parametrize(("args", "words"), [
    (["collective", "--fidelity", "fast", "--link-down", "0:1:5"], "--link-down"),
    (["collective", "--fidelity", "slow"], "--fidelity"),
    (["validate-fidelity", "--cases", "999"], "--cases"),
    (["validate-fidelity", "--cases", "one"], "--cases"),
])
def test_bad_values_are_one_line_and_exit_2(args: list[str], words: str,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    assert _exit_status(args) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert words in err[-1] and "Traceback" not in "".join(err)


def test_validate_fidelity_lists_the_grid(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["validate-fidelity", "--list"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == len(V.GRID) >= 24
    assert any("incast" in line for line in lines) and any(" 64 x" in line for line in lines)
