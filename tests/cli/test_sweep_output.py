"""``sweep``'s outputs (specs/cli.md rule 8): progress on stderr only, rounded rows, one
line naming the ``plot`` extra when matplotlib is missing, and a legible plot (every
legend entry visible where CBFC and PFC coincide, a series' jitter in its p99 colour,
titles, units)."""

from __future__ import annotations

import csv
import json
import sys
from pathlib import Path
from typing import Any

import pytest

from ualink_ref.cli import main
from ualink_ref.cli import sweep as sweep_cli

matplotlib = pytest.importorskip("matplotlib", reason="the 'plot' extra (matplotlib)")
from matplotlib.colors import to_rgba  # noqa: E402  (after the skip)

from ualink_ref.cli import sweep_plot  # noqa: E402

SMALL = ["sweep", "--patterns", "incast", "--loads", "0.3", "--flow-controls", "cbfc,pfc",
         "--accelerators", "4", "--ops", "40", "--size", "256", "--workers", "1"]


def _rows() -> list[dict[str, Any]]:
    """Rows where CBFC and PFC give identical figures (as below saturation)."""
    rows = []
    for pattern, base in (("incast", 614.4), ("uniform", 640.0)):
        for flow in ("cbfc", "pfc"):
            for load, extra in ((0.2, 0.0), (0.5, 25.6), (0.8, 51.2)):
                rows.append(dict(pattern=pattern, flow_control=flow, accelerators=16, seed=0,
                                 load=load, latency_p99_ns=base + extra, jitter_ns=extra))
    return rows


def _legibility_problems(axes: Any) -> list[str]:
    """What makes the plot illegible: missing titles or units; a legend entry hidden where
    its line coincides with one drawn after it (the later one must have a smaller marker
    and a narrower line, so the earlier shows around it); CBFC and PFC of one pattern
    drawn alike; a series whose jitter colour is not its p99 colour."""
    problems = []
    colours: list[dict[str, Any]] = []
    for ax in axes:
        if not ax.get_title():
            problems.append("an axes without a title")
        if "(ns)" not in ax.get_ylabel() or "load" not in ax.get_xlabel():
            problems.append(f"axis units missing: {ax.get_xlabel()!r} / {ax.get_ylabel()!r}")
        legend = ax.get_legend()
        labels = [t.get_text() for t in legend.get_texts()]
        lines = {line.get_label(): line for line in ax.get_lines()}
        if sorted(labels) != sorted(lines):
            problems.append(f"legend {labels} != lines {sorted(lines)}")
        drawn = ax.get_lines()  # in drawing order: a later line lies on top
        for i, low in enumerate(drawn):
            for high in drawn[i + 1:]:
                same = (list(low.get_xdata()) == list(high.get_xdata())
                        and list(low.get_ydata()) == list(high.get_ydata()))
                if same and not (low.get_markersize() > high.get_markersize()
                                 and low.get_linewidth() > high.get_linewidth()):
                    problems.append(f"{low.get_label()!r} hidden under {high.get_label()!r}")
        for label in labels:  # CBFC and PFC of one series: different line and marker fill
            if ", CBFC," in label and (twin := label.replace(", CBFC,", ", PFC,")) in lines:
                a, b = lines[label], lines[twin]
                if (a.get_linestyle() == b.get_linestyle()
                        or (a.get_markerfacecolor() == "none") == (b.get_markerfacecolor()
                                                                   == "none")):
                    problems.append(f"{label!r} and {twin!r} drawn alike")
        colours.append({label: to_rgba(lines[label].get_color()) for label in labels})
    if len(colours) == 2 and colours[0] != colours[1]:
        problems.append("a series' jitter colour differs from its p99 colour")
    return problems


def test_plot_is_legible(tmp_path: Path) -> None:
    axes = sweep_plot.plot_sweep(_rows(), tmp_path / "sweep.png")
    assert (tmp_path / "sweep.png").stat().st_size > 10_000
    assert _legibility_problems(axes) == []
    labels = [t.get_text() for t in axes[0].get_legend().get_texts()]
    assert labels == ["incast, CBFC, N=16", "incast, PFC, N=16", "uniform, CBFC, N=16",
                      "uniform, PFC, N=16"]


def test_legibility_check_catches_alike_styles_and_mismatched_colours(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Seeded bugs: every series drawn the same size (the issue's hidden legend entries);
    both flow controls drawn alike; jitter lines with their own colour cycle (the issue's
    mismatched colours)."""
    monkeypatch.setattr(sweep_plot, "MARKER_STEP", 0.0)
    monkeypatch.setattr(sweep_plot, "LINE_STEP", 0.0)
    axes = sweep_plot.plot_sweep(_rows(), tmp_path / "a.png")
    assert any("hidden under" in p for p in _legibility_problems(axes))
    monkeypatch.undo()
    monkeypatch.setitem(sweep_plot.STYLES, "pfc", sweep_plot.STYLES["cbfc"])
    axes = sweep_plot.plot_sweep(_rows(), tmp_path / "c.png")
    assert any("drawn alike" in p for p in _legibility_problems(axes))
    monkeypatch.undo()
    axes = sweep_plot.plot_sweep(_rows(), tmp_path / "b.png")
    for line in axes[1].get_lines()[:2]:
        line.set_color("black")
    assert any("colour" in p for p in _legibility_problems(axes))


def test_progress_on_stderr_rows_on_stdout_rounded(tmp_path: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    out_dir = tmp_path / "out"
    assert main([*SMALL, "--out", str(out_dir)]) == 0
    out, err = capsys.readouterr()
    points = [f"pattern incast, load 0.3, flow_control {fc}, accelerators 4, seed 0, size 256"
              for fc in ("cbfc", "pfc")]
    # Progress, then rule R5's warning for each point (40 ops are too short to reach 0.3).
    assert [line.split(": run too short")[0] for line in err.splitlines()] == [
        f"ualink-ref sweep: [1/2] done: {points[0]}", f"ualink-ref sweep: [2/2] done: {points[1]}",
        f"ualink-ref sweep: warning: {points[0]}", f"ualink-ref sweep: warning: {points[1]}"]
    assert "done" not in out and out.startswith(f"wrote {out_dir / 'sweep.csv'}")
    with (out_dir / "sweep.csv").open() as fh:
        for row in csv.DictReader(fh):
            for key, value in row.items():
                if "." in value:
                    assert len(value.split(".")[1]) <= sweep_cli.ROW_DECIMALS, (key, value)
    rows = json.loads((out_dir / "sweep.json").read_text())
    assert rows[0]["latency_p50_ns"] == 614.4  # not 614.4000000000001


def test_no_progress_is_quiet(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main([*SMALL, "--out", str(tmp_path), "--no-progress"]) == 0
    err = capsys.readouterr().err.splitlines()  # no progress; R5's warnings (not progress)
    assert len(err) == 2 and all(": warning: " in line and "done" not in line for line in err)


def test_missing_matplotlib_names_the_plot_extra(tmp_path: Path,
                                                 capsys: pytest.CaptureFixture[str],
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import matplotlib -> ImportError
    assert main([*SMALL, "--out", str(tmp_path), "--no-progress"]) == 0
    out, err = capsys.readouterr()
    assert err.splitlines()[0] == (
        "ualink-ref sweep: warning: no plot written: matplotlib is not installed "
        "(install the 'plot' extra: pip install 'ualink_ref[plot]')")
    assert all("offered load" in line for line in err.splitlines()[1:])  # R5's, per point
    assert "sweep.png" not in out and not (tmp_path / "sweep.png").exists()
    assert (tmp_path / "sweep.csv").exists()
