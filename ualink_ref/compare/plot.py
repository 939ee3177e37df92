"""Efficiency vs payload size for both stacks, per direction (matplotlib, optional)."""

from __future__ import annotations

import io
from pathlib import Path

from ualink_ref.compare.report import Report, level_text


def plot_report(report: Report, path: Path, level: str = "wire") -> None:
    """Draw Store (fwd) and Load (rev) efficiency vs size for RoCEv2 and ualink to ``path``."""
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
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=72)
    plt.close(fig)
    # A 64-colour palette keeps the committed PNG small (matplotlib depends on Pillow).
    from PIL import Image

    buf.seek(0)
    with Image.open(buf) as img:
        img.convert("RGB").quantize(colors=64).save(path, format="PNG", optimize=True)
