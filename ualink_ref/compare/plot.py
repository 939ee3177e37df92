"""Efficiency vs payload size for both stacks, per direction (matplotlib, optional)."""

from __future__ import annotations

import io
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
        ax.set_ylim(0, 1)
    axes[0].set_ylabel("efficiency (useful payload / bytes)")
    for ax in axes:
        ax.legend(fontsize=7, loc="lower right")
    fig.suptitle(level_text(level), fontsize=8)
    _save(fig, path)


def _plot_four(report: Report, path: Path, level: str, rows: Any, latency: Any) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt


    fig, axes = plt.subplots(1, 3, figsize=(14, 4.2))
    for ax, kind in zip(axes[:2], ("store", "load"), strict=True):
        sel = [r for r in rows if r.op == kind]
        sizes = [r.size for r in sel]
        for stack, label in STACKS:
            ax.plot(sizes, [r.efficiency(stack, level) for r in sel], "o-", label=label)
        ax.set_xscale("log", base=2)
        ax.set_xticks(sizes)
        ax.set_xticklabels([str(s) for s in sizes], rotation=45)
        ax.set_title(f"{kind.title()}: efficiency, both directions (PMTU {report.pmtu})",
                     fontsize=9)
        ax.set_xlabel("payload bytes per operation")
        ax.set_ylim(0, 1)
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=7, loc="lower right")
    axes[0].set_ylabel("useful payload / bytes")
    ax = axes[2]
    if latency:
        labels = [f"{dict(STACKS)[x.stack]}\n{x.op}" for x in latency]
        bottom = [0.0] * len(latency)
        for comp in ("serialization", "fec_accumulation", "fec_decode", "cable", "switch",
                     "processing"):
            vals = [float(getattr(x.breakdown, comp)) for x in latency]
            ax.bar(range(len(latency)), vals, bottom=bottom, label=comp)
            bottom = [b + v for b, v in zip(bottom, vals, strict=True)]
        ax.axhline(1000, color="red", linestyle="--", linewidth=1, label="1 us budget")
        ax.set_xticks(range(len(latency)))
        ax.set_xticklabels(labels, fontsize=6, rotation=90)
        ax.set_ylabel("ns, round trip, zero load")
        ax.set_title("64 B Load / Store latency (1 switch)", fontsize=9)
        ax.legend(fontsize=6)
    fig.suptitle(level_text(level), fontsize=8)
    _save(fig, path)


def _save(fig: Any, path: Path) -> None:
    import matplotlib.pyplot as plt

    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=72)
    plt.close(fig)
    # A 64-colour palette keeps the committed PNG small (matplotlib depends on Pillow).
    from PIL import Image

    buf.seek(0)
    with Image.open(buf) as img:
        img.convert("RGB").quantize(colors=64).save(path, format="PNG", optimize=True)
