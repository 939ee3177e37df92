"""Efficiency vs payload size for both stacks, per direction (matplotlib, optional)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ualink_ref.compare.four import STACKS
from ualink_ref.compare.report import Report, level_text


def plot_report(report: Report, path: Path, level: str = "wire", rows: Any = None,
                latency: Any = None) -> None:
    """Draw Store (fwd) and Load (rev) efficiency vs size to ``path``.

    With ``rows`` (four-protocol rows) one line per protocol, both directions;
    with ``latency`` a third panel of the zero-load 64-byte latencies, stacked
    by component.
    """
    if rows is not None:
        _plot_four(report, path, level, rows, latency)
        return
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(10, 4.2), sharey=True)
    panels = (("store", "fwd", "Store: requester -> target"),
              ("load", "rev", "Load: target -> requester"))
    for ax, (kind, direction, title) in zip(axes, panels, strict=True):
        rows = [r for r in report.rows if r.op == kind]
        sizes = [r.size for r in rows]
        for stack, label, style, color in (
            ("roce", f"RoCEv2 (PMTU {report.pmtu})", "o--", "tab:blue"),
            ("ualink", "ualink_ref", "s-", "tab:green"),
        ):
            ax.plot(sizes, [r.efficiency(stack, level, direction) for r in rows], style,
                    color=color, label=f"{label}, data direction ({direction})")
            ax.plot(sizes, [r.efficiency(stack, level) for r in rows], style, color=color,
                    alpha=0.35, label=f"{label}, both directions")
        ax.set_xscale("log", base=2)
        ax.set_xticks(sizes)
        ax.set_xticklabels([str(s) for s in sizes], rotation=45)
        ax.set_title(title, fontsize=10)
        ax.set_xlabel("payload bytes per operation")
        ax.grid(True, alpha=0.3)
        _percent_axis(ax)
    axes[0].set_ylabel("efficiency (useful payload / bytes)")
    for ax in axes:
        ax.legend(fontsize=8, loc="lower right")
    fig.suptitle(level_text(level), fontsize=8)
    _save(fig, path)


#: File formats ``--plot`` writes, by file-name extension (what the extension names).
FORMATS = {".png": "png", ".svg": "svg", ".pdf": "pdf"}
#: Resolution of PNG output, dots per inch (print resolution; SVG and PDF are vector).
PRINT_DPI = 300


def _percent_axis(ax: Any) -> None:
    from matplotlib.ticker import PercentFormatter

    ax.set_ylim(0, 1)
    ax.yaxis.set_major_formatter(PercentFormatter(1.0, decimals=0))


def _plot_four(report: Report, path: Path, level: str, rows: Any, latency: Any) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, grid = plt.subplots(2, 2, figsize=(13, 9))
    axes = grid.ravel()
    for ax, kind in zip(axes[:2], ("store", "load"), strict=True):
        sel = [r for r in rows if r.op == kind]
        sizes = [r.size for r in sel]
        for stack, label in STACKS:
            ax.plot(sizes, [r.efficiency(stack, level) for r in sel], "o-", label=label)
        ax.set_xscale("log", base=2)
        ax.set_xticks(sizes)
        ax.set_xticklabels([str(s) for s in sizes], rotation=45)
        ax.set_title(f"{kind.title()}: efficiency vs payload size, both directions", fontsize=11)
        ax.set_xlabel("payload bytes per operation")
        _percent_axis(ax)
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=9, loc="lower right")
        ax.set_ylabel("efficiency (useful payload / bytes)")
    _plot_atomics(axes[2], rows, level)
    ax = axes[3]
    if latency:
        labels = [f"{dict(STACKS)[x.stack]}\n{x.op}" for x in latency]
        bottom = [0.0] * len(latency)
        for comp in ("serialization", "fec_accumulation", "fec_decode", "cable", "switch",
                     "processing"):
            vals = [float(getattr(x.breakdown, comp)) for x in latency]
            ax.bar(range(len(latency)), vals, bottom=bottom, label=comp.replace("_", " "))
            bottom = [b + v for b, v in zip(bottom, vals, strict=True)]
        ax.axhline(1000, color="red", linestyle="--", linewidth=1, label="1 us budget")
        ax.set_xticks(range(len(latency)))
        ax.set_xticklabels(labels, fontsize=8, rotation=90)
        ax.set_ylabel("ns, round trip, zero load")
        ax.set_title("64 B Load / Store latency (1 switch)", fontsize=11)
        ax.legend(fontsize=8)
    else:
        ax.set_visible(False)
    fig.suptitle(f"UALink vs RoCEv2, SUE and UET: how much of the link carries data "
                 f"(RoCEv2 PMTU {report.pmtu})", fontsize=14, fontweight="bold")
    fig.text(0.5, 0.935, level_text(level), ha="center", fontsize=9)
    fig.tight_layout(rect=(0, 0, 1, 0.93))
    _save(fig, path, tight=False)


def _plot_atomics(ax: Any, rows: Any, level: str) -> None:
    """Grouped bars: every atomic op with an 8-byte operand, one bar per protocol."""
    sel = [r for r in rows if r.op.startswith("atomic") and r.size == 8]
    width = 0.8 / len(STACKS)
    for k, (stack, label) in enumerate(STACKS):
        ax.bar([i + (k - (len(STACKS) - 1) / 2) * width for i in range(len(sel))],
               [r.efficiency(stack, level) for r in sel], width, label=label)
    ax.set_xticks(range(len(sel)))
    ax.set_xticklabels([r.op.removeprefix("atomic-") for r in sel], rotation=45)
    ax.set_title("Atomics, 8-byte operand: efficiency, both directions", fontsize=11)
    ax.set_xlabel("atomic operation")
    ax.set_ylabel("efficiency (useful payload / bytes)")
    top = max((r.efficiency(s, level) for r in sel for s, _ in STACKS), default=0.1)
    from matplotlib.ticker import PercentFormatter

    ax.set_ylim(0, min(1.0, top * 1.3))
    ax.yaxis.set_major_formatter(PercentFormatter(1.0, decimals=0))
    ax.grid(True, axis="y", alpha=0.3)
    ax.legend(fontsize=9, ncols=len(STACKS), loc="upper center")


def _save(fig: Any, path: Path, tight: bool = True) -> None:
    """Write ``fig`` in the format ``path``'s extension names (PNG at print resolution)."""
    import matplotlib.pyplot as plt

    fmt = FORMATS.get(Path(path).suffix.lower())
    if fmt is None:
        plt.close(fig)
        raise ValueError(f"plot file must end in one of {', '.join(FORMATS)}: {path}")
    if tight:
        fig.tight_layout()
    try:
        # SVG keeps its text as text (searchable, editable) instead of outlines.
        with plt.rc_context({"svg.fonttype": "none"}):
            fig.savefig(path, format=fmt, dpi=PRINT_DPI)
    finally:
        plt.close(fig)
