"""The ``sweep`` plot: p99 latency and jitter against offered load (matplotlib, optional).

Legibility rules (specs/cli.md rule 8): one colour per series (pattern, flow
control, pod size), shared by its p99 line and its jitter line; a marker shape
per pattern; CBFC drawn solid with filled markers, PFC dashed with hollow ones;
and each series drawn with a larger marker and a wider line than every series
drawn after it, so where series give the same figures (CBFC and PFC often do
below saturation) each one still shows around the ones on top of it; a title
naming the pod; axes with units.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

#: How each flow control is drawn: (line style, filled markers?).
STYLES: dict[str, tuple[str, bool]] = {"cbfc": ("-", True), "pfc": ("--", False)}
#: The marker of each pattern.
MARKERS: dict[str, str] = {"uniform": "o", "permutation": "D", "all-to-all": "^",
                           "incast": "s", "hotspot": "v"}
#: The last series' marker size and line width, and what each earlier series adds to them
#: (so an earlier series shows around every later one where they coincide).
MARKER_SIZE, MARKER_STEP = 4.0, 2.5
LINE_WIDTH, LINE_STEP = 1.0, 0.5
#: The figure's size (inches) and resolution (dots per inch).
FIGSIZE, DPI = (11.0, 4.8), 150


def series_keys(rows: Sequence[dict[str, Any]]) -> list[tuple[str, str, int]]:
    """The plotted series: (pattern, flow control, accelerators), in a fixed order."""
    return sorted({(r["pattern"], r["flow_control"], r["accelerators"]) for r in rows
                   if r["load"] is not None})


def plot_sweep(rows: Sequence[dict[str, Any]], path: Path) -> Any:
    """Draw the sweep's rows to ``path`` (PNG): p99 latency (left) and jitter = p99 - p50
    (right), in ns, against offered load; return the figure's axes (for tests).

    Raises ``ImportError`` when matplotlib is not installed (the ``plot`` extra).
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (p99_ax, jitter_ax) = plt.subplots(1, 2, figsize=FIGSIZE, sharex=True)
    keys = series_keys(rows)
    for index, (pattern, flow, n) in enumerate(keys):
        sel = sorted((r for r in rows if (r["pattern"], r["flow_control"], r["accelerators"])
                      == (pattern, flow, n) and r["load"] is not None),
                     key=lambda r: (r["load"], r["seed"]))
        loads = [r["load"] for r in sel]
        linestyle, filled = STYLES.get(flow, ("-.", True))
        later = len(keys) - 1 - index  # series drawn on top of this one
        colour = f"C{index % 10}"
        style = dict(color=colour, linestyle=linestyle, marker=MARKERS.get(pattern, "P"),
                     markersize=MARKER_SIZE + MARKER_STEP * later,
                     linewidth=LINE_WIDTH + LINE_STEP * later,
                     markerfacecolor=colour if filled else "none", markeredgewidth=1.5)
        label = f"{pattern}, {flow.upper()}, N={n}"
        p99_ax.plot(loads, [r["latency_p99_ns"] for r in sel], label=label, **style)
        jitter_ax.plot(loads, [r["jitter_ns"] for r in sel], label=label, **style)
    for ax, what in ((p99_ax, "p99 latency (ns)"), (jitter_ax, "jitter: p99 - p50 (ns)")):
        ax.set_xlabel("offered load (fraction of one link's data rate)")
        ax.set_ylabel(what)
        ax.grid(True, alpha=0.3)
    p99_ax.set_title("p99 latency against offered load")
    jitter_ax.set_title("jitter against offered load")
    pods = sorted({r["accelerators"] for r in rows})
    seeds = sorted({r["seed"] for r in rows})
    fig.suptitle(f"ualink-ref sweep: {', '.join(str(n) for n in pods)} accelerators, "
                 f"{len(rows)} runs, seed(s) {', '.join(str(s) for s in seeds)}")
    p99_ax.legend(fontsize=8, title="pattern, flow control, pod")
    jitter_ax.legend(fontsize=8, title="pattern, flow control, pod")
    fig.tight_layout()
    fig.savefig(path, dpi=DPI)
    plt.close(fig)
    return (p99_ax, jitter_ax)


__all__ = ["DPI", "FIGSIZE", "LINE_STEP", "LINE_WIDTH", "MARKERS", "MARKER_SIZE", "MARKER_STEP",
           "STYLES", "plot_sweep", "series_keys"]
