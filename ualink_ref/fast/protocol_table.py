"""The protocols table: busbw of all-reduce and all-to-all against size on 64 and 1,024
accelerators, and small-message latency, per protocol (``specs/fast-protocols.md``).

``python -m ualink_ref.fast.protocol_table --out FILE.md --plot FILE.png`` runs it; the
committed table in ``specs/fast-protocols.md`` is its output (the command is printed
in it). Every collective runs rank 0 only (rule P5, exact for these symmetric
algorithms on a pod of identical links: the plain run of every rank gives the same
time) and piece by piece (burst 1) unless a size is at least ``--burst-from``.
"""

from __future__ import annotations

import argparse
import io
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from ualink_ref.collectives.algorithms import TimingOnly, schedule
from ualink_ref.errors import ConfigError
from ualink_ref.fast.calibrate import LinkCalibration
from ualink_ref.fast.collective import FastConfig, large_burst, large_config
from ualink_ref.fast.engine import Engine, Operation
from ualink_ref.fast.protocols import (
    FLOW_CONTROL,
    LABELS,
    check_protocol,
    protocol_calibration,
    run_protocol_collective,
)
from ualink_ref.sim.fabric import FabricConfig
from ualink_ref.tl.credits import CreditConfig

#: A lane's data rate, GB/s (200 Gb/s; a slot carries a 640-byte DL flit per 25.6 ns).
LANE_GBYTES = 25.0


@dataclass(frozen=True)
class Variant:
    """One column of the table: a protocol, and for UALink the switch buffer it has."""

    name: str
    protocol: str
    #: The switch ingress buffer (CBFC credits); ``None``: the pod's default.
    buffer: CreditConfig | None = None

    def __post_init__(self) -> None:
        check_protocol(self.protocol)

    @property
    def label(self) -> str:
        """The column's label."""
        return LABELS[self.protocol] + (" (large buffers)" if self.buffer else "")

    def pod(self, pod: FabricConfig) -> FabricConfig:
        """``pod`` with this variant's buffer."""
        return pod if self.buffer is None else replace(pod, buffer=self.buffer)


#: The variants (project choice): every comparison stack, and UALink a second time with
#: the TL's default credit buffers (CreditConfig()), which cover an x4 link's credit
#: loop — the pod's default switch buffer is sized for an x1 link (specs/fabric.md) and
#: holds an x4 link's switch egress below line rate (see the spec).
VARIANTS: tuple[Variant, ...] = (
    Variant("ualink", "ualink"), Variant("ualink-big", "ualink", CreditConfig()),
    Variant("sue-afh", "sue-afh"), Variant("sue-eth", "sue-eth"), Variant("uet", "uet"),
    Variant("roce", "roce"))
BY_NAME: dict[str, Variant] = {v.name: v for v in VARIANTS}
#: The collectives of the table.
COLLECTIVES: tuple[tuple[str, str], ...] = (("all-reduce", "ring"), ("all-to-all", "direct"))


@dataclass(frozen=True)
class TableConfig:
    """What the table runs."""

    accelerators: tuple[int, ...] = (64, 1024)
    sizes: tuple[int, ...] = tuple(1 << s for s in range(16, 31, 2))  # 64 KiB .. 1 GiB
    variants: tuple[str, ...] = tuple(v.name for v in VARIANTS)
    planes: int = 4
    lanes: int = 4
    max_outstanding: int = 256
    #: Sizes from this one run in bursts (``large_config``, rules P5, P6); below it piece by
    #: piece (project choice: 16 MiB, where a piece-by-piece point takes 25-85 s here).
    burst_from: int = 1 << 24

    def __post_init__(self) -> None:
        for name in self.variants:
            if name not in BY_NAME:
                raise ConfigError("variants", f"each must be one of {tuple(BY_NAME)}, "
                                              f"got {name!r}")
        if not self.sizes or any(s < 4096 for s in self.sizes):
            raise ConfigError("sizes", f"need sizes of at least 4096 bytes, got {self.sizes}")

    def pod(self, accelerators: int) -> FabricConfig:
        """The pod of ``accelerators`` (every variant's links alike)."""
        return FabricConfig(accelerators=accelerators, planes=self.planes, lanes=self.lanes,
                            max_outstanding=self.max_outstanding)


@dataclass(frozen=True)
class Point:
    """One collective run."""

    variant: str
    op: str
    accelerators: int
    size: int
    time_us: float
    busbw_gbps: float
    burst: int
    wall_s: float


@dataclass(frozen=True)
class LatencyRow:
    """Small-message latency of one variant: one operation alone (engine, zero load) and
    a small all-reduce."""

    variant: str
    write_256_ns: float
    read_64_ns: float
    atomic_8_ns: float
    allreduce_us: float
    #: 256-byte write efficiency, data direction: useful / line time (uplink, downlink).
    eff_256_up: float
    eff_256_down: float


@dataclass(frozen=True)
class ProtocolTable:
    """Everything the table shows."""

    config: TableConfig
    points: tuple[Point, ...]
    latency: tuple[LatencyRow, ...]
    wall_s: float

    def point(self, variant: str, op: str, accelerators: int, size: int) -> Point:
        """The run of ``variant``'s ``op`` at ``size`` on ``accelerators``."""
        return next(p for p in self.points if (p.variant, p.op, p.accelerators, p.size)
                    == (variant, op, accelerators, size))


def one_op_ns(calibration: LinkCalibration, pod: FabricConfig, kind: str, nbytes: int) -> float:
    """One operation alone on a warm link through the fast engine (rule E3), in ns."""
    engine = Engine(2, 1, calibration)
    finished: list[float] = []

    def done(op: Operation, at: float) -> None:
        finished.append(at)

    engine.issue(0, 1, 0, kind, nbytes, 0, done)
    engine.run()
    return finished[0] * pod.slot_ns


#: The small all-reduce of the latency table (project choice: one-shot — the
#: latency-bound algorithm — of 8 KiB, on the smallest pod of the table, at most 64).
SMALL_ALLREDUCE = ("all-reduce", "one-shot", 8192)
SMALL_RANKS = 64


def small_ranks(config: TableConfig) -> int:
    """The pod of the small all-reduce: the table's smallest, at most :data:`SMALL_RANKS`."""
    return min(SMALL_RANKS, *config.accelerators)


def latency_row(variant: Variant, config: TableConfig) -> LatencyRow:
    """The small-message figures of ``variant`` (rules K5 and E3)."""
    op, algo, size = SMALL_ALLREDUCE
    ranks = small_ranks(config)
    pod = variant.pod(config.pod(ranks))
    cal = protocol_calibration(variant.protocol, pod)
    plan = schedule(op, algo, ranks, size, timing=TimingOnly((0,)))
    report = run_protocol_collective(variant.protocol, plan, pod, FastConfig(symmetric=True))
    write = cal.shape("write", 256)
    return LatencyRow(variant.name, one_op_ns(cal, pod, "write", 256),
                      one_op_ns(cal, pod, "read", 64), one_op_ns(cal, pod, "atomic", 8),
                      report.time_us, 256 / (write.request_up * 640),
                      256 / (write.request_down * 640))


def run_point(variant: Variant, op: str, algo: str, accelerators: int, size: int,
              config: TableConfig) -> Point:
    """One collective of the table (rank 0 only, rule P5)."""
    pod = variant.pod(config.pod(accelerators))
    run = (large_config(op, algo, symmetric=True) if size >= config.burst_from
           else FastConfig(symmetric=True))
    started = time.perf_counter()
    plan = schedule(op, algo, accelerators, size, timing=TimingOnly((0,)))
    report = run_protocol_collective(variant.protocol, plan, pod, run)
    return Point(variant.name, op, accelerators, size, report.time_us, report.busbw_gbps,
                 run.burst, time.perf_counter() - started)


def build_table(config: TableConfig, progress: Callable[[Point], None] | None = None
                ) -> ProtocolTable:
    """Run every point of ``config`` (and the latency rows)."""
    started = time.perf_counter()
    variants = [BY_NAME[name] for name in config.variants]
    latency = tuple(latency_row(v, config) for v in variants)
    points = []
    for accelerators in config.accelerators:
        for op, algo in COLLECTIVES:
            for size in config.sizes:
                for variant in variants:
                    point = run_point(variant, op, algo, accelerators, size, config)
                    points.append(point)
                    if progress is not None:
                        progress(point)
    return ProtocolTable(config, tuple(points), latency, time.perf_counter() - started)


# -- rendering ---------------------------------------------------------------------------


def size_text(size: int) -> str:
    """``64 KiB``, ``16 MiB``, ``1 GiB``."""
    for unit, shift in (("GiB", 30), ("MiB", 20), ("KiB", 10)):
        if size >= 1 << shift and size % (1 << shift) == 0:
            return f"{size >> shift} {unit}"
    return f"{size} B"


def _us(value: float) -> str:
    """A time in µs, to about three figures."""
    return f"{value:,.0f}" if value >= 100 else f"{value:.3g}"


def render_markdown(table: ProtocolTable, command: str) -> str:
    """The table as Markdown (what specs/fast-protocols.md holds)."""
    cfg = table.config
    variants = [BY_NAME[n] for n in cfg.variants]
    out = io.StringIO()
    w = out.write
    line = cfg.planes * cfg.lanes * LANE_GBYTES
    bursts = ", ".join(f"{large_burst(op, algo)} for the {op} ({algo})"
                       for op, algo in COLLECTIVES)
    w(f"```text\n$ {command}\n```\n\n")
    w(f"Pods of {' and '.join(f'{n:,}' for n in cfg.accelerators)} accelerators, "
      f"{cfg.planes} planes, x{cfg.lanes} links ({line:.0f} GB/s of data per direction per "
      f"accelerator), max_outstanding {cfg.max_outstanding}; fast fidelity, rank 0 only "
      f"(rule P5), piece by piece below {size_text(cfg.burst_from)}, bursts "
      f"from it (rules P5, P6; pieces a plane: {bursts}). Wall time of the whole run: "
      f"{table.wall_s:.0f} s.\n\n")
    for op, algo in COLLECTIVES:
        for n in cfg.accelerators:
            w(f"**{op} ({algo}), {n:,} accelerators: busbw, GB/s** (time in µs below)\n\n")
            w("| size | " + " | ".join(v.label for v in variants) + " |\n")
            w("|---:|" + "---:|" * len(variants) + "\n")
            for size in cfg.sizes:
                pts = [table.point(v.name, op, n, size) for v in variants]
                w(f"| {size_text(size)} | " + " | ".join(
                    f"{p.busbw_gbps:.1f} ({_us(p.time_us)} µs)" for p in pts) + " |\n")
            w("\n")
    w("**Small messages** (zero load; one operation alone through the engine, rule E3; the "
      f"small all-reduce: one-shot, 8 KiB, {small_ranks(cfg)} accelerators)\n\n")
    w("| protocol | flow control | 256 B write, ns | 64 B read, ns | 8 B atomic, ns | "
      "8 KiB all-reduce, µs | 256 B write efficiency, uplink / switch downlink |\n")
    w("|---|---|---:|---:|---:|---:|---|\n")
    for row, v in zip(table.latency, variants, strict=True):
        w(f"| {v.label} | {FLOW_CONTROL[v.protocol][0].upper()} (not modelled) | "
          f"{row.write_256_ns:.0f} | {row.read_64_ns:.0f} | {row.atomic_8_ns:.0f} | "
          f"{row.allreduce_us:.2f} | {100 * row.eff_256_up:.1f} % / "
          f"{100 * row.eff_256_down:.1f} % |\n")
    return out.getvalue()


def plot_table(table: ProtocolTable, path: Path) -> None:
    """busbw against size, one line per protocol, all-reduce and all-to-all panels (solid:
    the largest pod, dashed: the smallest); matplotlib (the ``plot`` extra)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    cfg = table.config
    fig, axes = plt.subplots(1, 2, figsize=(12, 4.8), sharey=True)
    styles = ["-", "--", ":", "-."]
    for ax, (op, algo) in zip(axes, COLLECTIVES, strict=True):
        for i, name in enumerate(cfg.variants):
            variant = BY_NAME[name]
            for j, n in enumerate(sorted(cfg.accelerators, reverse=True)):
                ys = [table.point(name, op, n, s).busbw_gbps for s in cfg.sizes]
                ax.plot(cfg.sizes, ys, styles[j % len(styles)], marker="o", markersize=3,
                        color=f"C{i}", label=f"{variant.label}, {n:,} accelerators")
        ax.set_xscale("log", base=2)
        ax.set_xticks(list(cfg.sizes))
        ax.set_xticklabels([size_text(s) for s in cfg.sizes], rotation=30)
        ax.set_xlabel("size (nccl-tests bytes)")
        ax.set_title(f"{op} ({algo})")
        ax.grid(True, alpha=0.3)
    axes[0].set_ylabel("busbw, GB/s")
    handles, labels = axes[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=3, fontsize=8, frameon=False)
    fig.suptitle(f"Protocols side by side on the fast fidelity: {cfg.planes} planes, "
                 f"x{cfg.lanes} links, 200G lanes", fontsize=11)
    fig.tight_layout(rect=(0, 0.2, 1, 1))
    fig.savefig(path, dpi=150)
    plt.close(fig)


def _sizes(text: str) -> tuple[int, ...]:
    return tuple(int(s) for s in text.split(","))


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m ualink_ref.fast.protocol_table``: run the table, print or write it."""
    parser = argparse.ArgumentParser(prog="python -m ualink_ref.fast.protocol_table",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("--accelerators", type=_sizes, default=TableConfig.accelerators)
    parser.add_argument("--sizes", type=_sizes, default=TableConfig.sizes,
                        help="bytes, comma-separated")
    parser.add_argument("--variants", type=lambda t: tuple(t.split(",")),
                        default=TableConfig.variants)
    parser.add_argument("--burst-from", type=int, default=TableConfig.burst_from)
    parser.add_argument("--max-outstanding", type=int, default=TableConfig.max_outstanding,
                        help="operations each accelerator keeps in flight (rule C1)")
    parser.add_argument("--out", type=Path, help="write the Markdown table here")
    parser.add_argument("--plot", type=Path, help="write the plot (PNG) here")
    args = parser.parse_args(argv)
    try:
        config = TableConfig(accelerators=args.accelerators, sizes=args.sizes,
                             variants=args.variants, burst_from=args.burst_from,
                             max_outstanding=args.max_outstanding)
    except ConfigError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2

    def progress(p: Point) -> None:
        print(f"{p.variant:>10} {p.op:<10} {p.accelerators:>5} {size_text(p.size):>8}: "
              f"busbw {p.busbw_gbps:7.2f} GB/s, {p.time_us:10.1f} us (wall {p.wall_s:.1f} s)",
              file=sys.stderr, flush=True)

    table = build_table(config, progress)
    command = "python -m ualink_ref.fast.protocol_table " + " ".join(
        sys.argv[1:] if argv is None else argv)
    text = render_markdown(table, command.strip())
    if args.out is not None:
        args.out.write_text(text)
    else:
        print(text)
    if args.plot is not None:
        plot_table(table, args.plot)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
