"""``fabric``'s option ranges run cleanly at their maxima (specs/cli.md rule 1): the
link-state timers and the switch's watchdog scale with the round trip
(specs/fabric.md F13, H6), so a long cable or a large batch no longer stalls the pod."""

from __future__ import annotations

import pytest

from ualink_ref.cli import main

SMALL = ["fabric", "--accelerators", "4", "--ops", "20", "--no-progress"]


@pytest.mark.parametrize("options", [
    ["--batch", "128"],          # stalled ("fabric did not drain") before the fix
    ["--cable-m", "1500"],       # likewise
    ["--batch", "4096"],         # the range's maximum
    ["--cable-m", "100000", "--batch", "4096"],  # both maxima together
    ["--cable-m", "5000", "--batch", "200", "--lanes", "4", "--planes", "2"],
])
def test_range_maximum_runs_cleanly(options: list[str],
                                    capsys: pytest.CaptureFixture[str]) -> None:
    code = main([*SMALL, *options])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert "20/20 completed" in out
    assert "leaks: 0" in out


@pytest.mark.slow
def test_cable_maximum_at_batch_one_runs_cleanly(capsys: pytest.CaptureFixture[str]) -> None:
    """10^5 m at batch 1: about 2 minutes (every slot of a 20,000-slot wire simulated)."""
    code = main([*SMALL, "--cable-m", "100000"])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert "20/20 completed" in out
