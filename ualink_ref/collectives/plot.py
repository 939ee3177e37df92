"""busbw against size, one line per algorithm and flow control (matplotlib, optional)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from ualink_ref.collectives.report import CollectiveReport


def plot_sweep(reports: Sequence[CollectiveReport], path: Path) -> None:
    """Draw busbw (GB/s) against size (bytes, log x) to ``path``: one line per
    (algorithm, flow control), with one link's TL payload rate for scale."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(8, 4.8))
    lines: dict[tuple[str, str], list[CollectiveReport]] = {}
    for rep in reports:
        lines.setdefault((rep.algo, rep.flow_control), []).append(rep)
    colours = {algo: f"C{i}" for i, algo in enumerate(dict.fromkeys(a for a, _ in lines))}
    for (algo, flow), reps in lines.items():  # colour: the algorithm; line: flow control
        reps = sorted(reps, key=lambda r: r.size)
        ax.plot([r.size for r in reps], [r.busbw_gbps for r in reps],
                "o-" if flow == "cbfc" else "s--", color=colours[algo],
                label=f"{algo}, {flow.upper()}")
    first = reports[0]
    ax.axhline(first.link_payload_gbps, color="grey", linestyle=":",
               label=f"one link's TL payload rate ({first.link_payload_gbps:.1f} GB/s)")
    ax.set_xscale("log", base=2)
    ax.set_xlabel("size (bytes)")
    ax.set_ylabel("bus bandwidth (GB/s, nccl-tests' busbw)")
    ax.set_title(f"{first.op} on {first.ranks} accelerators, {first.planes} plane(s), "
                 f"x{first.lanes} links ({first.dtype}, {first.fidelity})")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)


__all__ = ["plot_sweep"]
