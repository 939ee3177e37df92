"""``ualink-ref sweep``: a grid of fabric runs on local processes or a Dask cluster.

Each grid point (pattern x load x flow control x accelerators x seed) is one
:func:`run_point` call — a pure function of its point, so the same seeds
give the same rows wherever they run. A point carries its pod as a
:class:`~ualink_ref.sim.fabric.FabricConfig` (a frozen dataclass, picklable for
Dask), made from the sweep's base pod with :func:`dataclasses.replace`
(DESIGN.md principle 8: configuration is a value). By default the points run on local
processes (:class:`concurrent.futures.ProcessPoolExecutor`); with
``--scheduler ADDRESS`` they go to a Dask distributed cluster (the optional
``dask`` extra, imported only here, only then). Output: CSV and JSON rows, and
a plot of p99 latency (and its jitter) against load per pattern and flow
control when matplotlib is installed.
"""

from __future__ import annotations

import argparse
import csv
import itertools
import json
import sys
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Protocol, TypeVar, cast

from ualink_ref.cli.collective import byte_size
from ualink_ref.cli.commands import add_command
from ualink_ref.cli.fabric import add_pod_options, transfer_size
from ualink_ref.cli.options import (
    USAGE,
    add_progress_option,
    choice_list,
    config_usage_error,
    fail,
    float_range,
    int_range,
    non_empty,
    op_count,
    output_dir,
    usage_error,
)
from ualink_ref.cli.sweep_plot import plot_sweep as plot_rows
from ualink_ref.collectives.algorithms import (
    ALGORITHMS,
    check_collective,
    check_schedule,
    fit_size,
)
from ualink_ref.collectives.plot import plot_sweep
from ualink_ref.collectives.report import sweep_table
from ualink_ref.collectives.sweep import (
    COLLECTIVE_COLUMNS,
    CollectivePoint,
    collective_grid,
    report_of,
    run_collective_point,
)
from ualink_ref.errors import ConfigError
from ualink_ref.fast.report import fast_sweep_table
from ualink_ref.fast.sweep import FAST_COLUMNS, fast_report_of, run_fast_point
from ualink_ref.sim.fabric import FLOW_CONTROLS, FabricConfig, FlowControlMode
from ualink_ref.sim.fabric_report import run_fabric
from ualink_ref.sim.workloads import PATTERNS, Pattern, fabric_workload

DESCRIPTION = (
    "Run a grid of fabric runs (pattern x load x flow control x accelerators x seed) on local "
    "processes, or on a Dask distributed cluster with --scheduler; write CSV, JSON and a plot "
    "of p99 latency and jitter against load (the plot needs the 'plot' extra, matplotlib: "
    "without it a warning says so). Progress goes to stderr, one line per finished run."
)
#: Columns of a sweep row, in CSV order (``measured_load``: rule R5's measured load beside
#: the offered ``load``, as ``fabric`` prints it).
COLUMNS = ("pattern", "load", "measured_load", "flow_control", "accelerators", "seed", "ops",
           "ok", "latency_p50_ns", "latency_p99_ns", "latency_p999_ns", "latency_max_ns",
           "jitter_ns", "latency_std_ns", "dynamic_p99_ns", "throughput_total_gbps", "pauses",
           "pause_ns", "endpoint_credit_stalls", "peak_buffers")


@dataclass(frozen=True)
class SweepPoint:
    """One point of a fabric sweep: the workload (``pattern``, offered ``load``, ``ops``,
    a fixed transfer ``size`` or None for mixed shapes) on the pod ``config`` (its
    ``accelerators``, ``flow_control`` and ``seed`` are the swept ones; the seed also
    seeds the workload)."""

    pattern: Pattern
    load: float
    ops: int
    size: int | None
    config: FabricConfig

    def describe(self) -> dict[str, Any]:
        """What a progress line and a warning name: the swept values, in grid order."""
        cfg = self.config
        return dict(pattern=self.pattern, load=self.load, flow_control=cfg.flow_control,
                    accelerators=cfg.accelerators, seed=cfg.seed, size=self.size)


def run_point(point: SweepPoint) -> dict[str, Any]:
    """One grid point: build the pod, run its workload, return the row (pure in ``point``):
    the :data:`COLUMNS`, and ``load_warning`` — rule R5's warning when the run did not
    reach its offered load, else None (in the JSON rows; ``sweep`` prints it)."""
    cfg = point.config
    size = point.size
    kinds = ("read", "writefull") if size else ("read", "write", "writefull", "atomic")
    work = fabric_workload(point.pattern, point.ops, cfg.accelerators, cfg.seed,
                           load=point.load, size=size, kinds=kinds)
    report = run_fabric(cfg, work, pattern=point.pattern, load=point.load).as_dict()
    row = {k: _rounded(report.get(k)) for k in COLUMNS}
    row.update(accelerators=cfg.accelerators, seed=cfg.seed, ops=point.ops,
               load_warning=report["load_warning"])
    return row


#: Decimals a sweep row keeps (project choice: 1 ps, 0.001 Gb/s: far below a slot's 6.4 ns
#: or more, and no binary-float tails such as 614.4000000000001 in the CSV).
ROW_DECIMALS = 3


def _rounded(value: Any) -> Any:
    """``value`` rounded to :data:`ROW_DECIMALS` when it is a float (else unchanged)."""
    return round(value, ROW_DECIMALS) if isinstance(value, float) else value


def grid(patterns: list[str], loads: list[float], flow_controls: list[str],
         accelerators: list[int], seeds: list[int], ops: int, pod: FabricConfig,
         size: int | None = None) -> list[SweepPoint]:
    """Every grid point, in a fixed order: ``pod`` with each flow control, pod size and
    seed (``dataclasses.replace``, so each point's configuration is checked as it is
    made: a bad one raises :class:`ConfigError` here, not in a worker)."""
    return [SweepPoint(cast(Pattern, p), ld, ops, size,  # parsed choices (PATTERNS)
                       replace(pod, flow_control=cast(FlowControlMode, fc), accelerators=n,
                               seed=s))
            for p, ld, fc, n, s in itertools.product(patterns, loads, flow_controls,
                                                     accelerators, seeds)]


class GridPoint(Protocol):
    """A sweep's grid point (:class:`SweepPoint`, :class:`CollectivePoint`): a frozen
    value a worker process receives whole."""

    def describe(self) -> dict[str, Any]:
        """The point's swept values, for progress lines."""
        ...


#: A grid point of either sweep.
P = TypeVar("P", bound=GridPoint)

#: What runs one point: a pure function of it, importable by a worker process.
PointRunner = Callable[[P], dict[str, Any]]


#: Told of each finished point: (points done, points in all, the point).
Progress = Callable[[int, int, GridPoint], None]


def run_local(points: Sequence[P], workers: int | None = None,
              func: PointRunner[P] = run_point,  # type: ignore[assignment]
              progress: Progress | None = None) -> list[dict[str, Any]]:
    """Run ``points`` (each by ``func``) on local processes; rows in point order;
    ``progress`` is told of each point as it finishes."""
    if workers == 1:
        rows = []
        for point in points:
            rows.append(func(point))
            if progress is not None:
                progress(len(rows), len(points), point)
        return rows
    with ProcessPoolExecutor(max_workers=workers) as pool:
        futures = {pool.submit(func, point): index for index, point in enumerate(points)}
        done: dict[int, dict[str, Any]] = {}
        for future in as_completed(futures):
            index = futures[future]
            done[index] = future.result()
            if progress is not None:
                progress(len(done), len(points), points[index])
        return [done[i] for i in range(len(points))]


def run_dask(points: Sequence[P], scheduler: Any,
             func: PointRunner[P] = run_point,  # type: ignore[assignment]
             progress: Progress | None = None) -> list[dict[str, Any]]:
    """Run ``points`` (each by ``func``) on a Dask distributed cluster (``scheduler``: an
    address or a ``Client``); rows in point order; ``progress`` told of each finished point."""
    from dask import distributed  # optional extra: only a Dask sweep needs it

    Client: Any = distributed.Client  # untyped library
    client: Any = scheduler if isinstance(scheduler, Client) else Client(scheduler)
    try:
        futures = client.map(func, points, pure=False)
        index_of = {future.key: i for i, future in enumerate(futures)}
        as_done: Any = distributed.as_completed  # untyped library
        for count, future in enumerate(as_done(futures), 1):
            if progress is not None:
                progress(count, len(points), points[index_of[future.key]])
        return list(client.gather(futures))
    finally:
        if client is not scheduler:
            client.close()


def progress_lines(command: str = "sweep") -> Progress:
    """A :data:`Progress` printing one line per finished point on stderr (never stdout,
    which carries the rows)."""

    def show(done: int, total: int, point: GridPoint) -> None:
        what = _named(point)
        print(f"ualink-ref {command}: [{done}/{total}] done: {what}", file=sys.stderr,
              flush=True)

    return show


def _named(point: GridPoint) -> str:
    """A point's swept values as ``name value, ...`` (None left out)."""
    return ", ".join(f"{k} {v}" for k, v in point.describe().items() if v is not None)


#: What ``sweep`` says when it cannot draw its plot (matplotlib missing).
NO_PLOT = ("no plot written: matplotlib is not installed (install the 'plot' extra: "
           "pip install 'ualink_ref[plot]')")


#: Told why the plot was not written (:data:`NO_PLOT`).
Warn = Callable[[str], None]


def write_outputs(rows: list[dict[str, Any]], out: Path, warn: Warn | None = None,
                  ) -> list[Path]:
    """``sweep.csv``, ``sweep.json`` and (with matplotlib) ``sweep.png`` under ``out``;
    the paths written. Without matplotlib ``warn`` is given :data:`NO_PLOT`
    (specs/cli.md rule 8: the CLI prints it)."""
    paths = write_tables(rows, out)
    try:
        plot_rows(rows, out / "sweep.png")
    except ImportError:
        if warn is not None:
            warn(NO_PLOT)
        return paths
    return [*paths, out / "sweep.png"]


def write_tables(rows: list[dict[str, Any]], out: Path) -> list[Path]:
    """``sweep.csv`` (the :data:`COLUMNS`) and ``sweep.json`` (whole rows, with
    ``load_warning``: a sentence, not a CSV figure) under ``out`` (made if missing)."""
    out.mkdir(parents=True, exist_ok=True)
    paths = [out / "sweep.csv", out / "sweep.json"]
    with paths[0].open("w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=COLUMNS, extrasaction="ignore")
        writer.writeheader()
        writer.writerows(rows)
    paths[1].write_text(json.dumps(rows, indent=1, sort_keys=True))
    return paths


def _listed(parse: Callable[[str], Any], what: str) -> Callable[[str], list[Any]]:
    """An argument type: a comma-separated, non-empty list of values read by ``parse``."""

    def parse_list(text: str) -> list[Any]:
        values = [parse(word) for word in text.split(",") if word.strip()]
        if not values:
            raise argparse.ArgumentTypeError(f"expected comma-separated {what}, got {text!r}")
        return values

    return parse_list


_loads = _listed(float_range(0.0, 4.0, above=True), "loads in (0, 4]")
_pods = _listed(int_range(2, 1024), "pod sizes (2..1024)")


def write_collective_outputs(rows: list[dict[str, Any]], out: Path, warn: Warn | None = None,
                             ) -> list[Path]:
    """``collectives.csv``, ``collectives.json`` and (with matplotlib) ``collectives.png``
    (busbw against size) under ``out``; without matplotlib ``warn`` is given :data:`NO_PLOT`.
    Rows of the fast fidelity (they have no ``exact`` column) keep its columns."""
    out.mkdir(parents=True, exist_ok=True)
    paths = [out / "collectives.csv", out / "collectives.json"]
    fast = bool(rows) and "exact" not in rows[0]
    with paths[0].open("w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=FAST_COLUMNS if fast else COLLECTIVE_COLUMNS,
                                extrasaction="ignore")
        writer.writeheader()
        writer.writerows(rows)
    paths[1].write_text(json.dumps(rows, indent=1, sort_keys=True))
    try:
        plot_sweep([fast_report_of(r) if fast else report_of(r)  # type: ignore[misc]
                    for r in rows], out / "collectives.png")
    except ImportError:
        if warn is not None:
            warn(NO_PLOT)
        return paths
    return [*paths, out / "collectives.png"]


def _cmd_collective_sweep(args: argparse.Namespace, pod: FabricConfig) -> int:
    op = args.collective
    algos = args.algos or list(ALGORITHMS[op])
    unknown = [a for a in algos if a not in ALGORITHMS[op]]
    if unknown:
        return usage_error("sweep", f"argument --algos: {unknown[0]!r} is not an algorithm of "
                           f"{op}: one of {','.join(ALGORITHMS[op])}")
    flows = args.flow_controls
    accelerators = args.accelerators
    # Every point is checked here, before any worker runs it: a worker's error would
    # reach this process only as a broken pool. Sizes are rounded as nccl-tests rounds.
    sizes = list(dict.fromkeys(z for n in accelerators for z0 in args.sizes or DEFAULT_SIZES
                               if (z := fit_size(op, n, z0)) is not None))
    if not sizes:
        return fail("sweep", f"no size of --sizes fits {op}", USAGE)
    check = check_collective if args.fidelity == "exact" else check_schedule
    for algo, n, size in itertools.product(algos, accelerators, sizes):
        check(op, algo, n, size, "float32")
    # Every point's pod is checked as the grid makes it (dataclasses.replace).
    points: list[CollectivePoint] = collective_grid(op, algos, sizes, flows, accelerators,
                                                    args.seeds, pod)
    problem = _make_out(args.out)
    if problem is not None:
        return usage_error("sweep", problem)
    progress = None if args.no_progress else progress_lines()
    run_point = run_fast_point if args.fidelity == "fast" else run_collective_point
    if args.scheduler:
        rows = run_dask(points, args.scheduler, run_point, progress)
    else:
        rows = run_local(points, args.workers, run_point, progress)
    _write(write_collective_outputs, rows, Path(args.out))
    if args.fidelity == "fast":
        print(fast_sweep_table([fast_report_of(r) for r in rows]))
        return 0
    print(sweep_table([report_of(r) for r in rows]))
    return 0 if all(r["exact"] for r in rows) else 1


def _positive_size(text: str) -> int:
    """A size of ``--sizes``: bytes (``byte_size``), at least 1."""
    value = byte_size(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be >= 1 byte, got {text!r}")
    return value


_byte_sizes = _listed(_positive_size, "sizes")
_seeds = _listed(int_range(0, 2**32 - 1), "seeds (>= 0)")


#: The option that sets each configuration field a sweep's checks may refuse.
_SWEEP_FLAGS = {"accelerators": "--accelerators", "flow_control": "--flow-controls",
                "seed": "--seeds", "size": "--sizes", "algo": "--algos", "op": "--collective"}


def _warn(message: str) -> None:
    print(f"ualink-ref sweep: warning: {message}", file=sys.stderr)


def _write(write: Callable[[list[dict[str, Any]], Path, Warn | None], list[Path]],
           rows: list[dict[str, Any]], out: Path) -> None:
    """Write the outputs and name each on stdout; without matplotlib one line on stderr
    names the ``plot`` extra (specs/cli.md rule 8)."""
    for path in write(rows, out, _warn):
        print(f"wrote {path}")


#: The grid's defaults when the option is not given (named in each option's help): the
#: options default to None so that one given where it does not apply is refused.
DEFAULT_PATTERNS = ["incast", "uniform"]
DEFAULT_LOADS = [0.2, 0.5, 0.8, 0.95]
DEFAULT_SIZES = [4096, 65536, 1048576]


def _not_applying(args: argparse.Namespace) -> str | None:
    """An option given where it does not apply (specs/cli.md rule 1: never silently
    ignored): ``--sizes`` without ``--collective``; ``--size``, ``--loads``,
    ``--patterns`` with it."""
    if args.collective:
        for flag, value in (("--size", args.size), ("--loads", args.loads),
                            ("--patterns", args.patterns)):
            if value is not None:
                return (f"argument {flag}: applies to a fabric sweep, not a --collective "
                        "one (use --sizes for a collective's sizes)")
    elif args.sizes is not None:
        return "argument --sizes: sets a --collective sweep's sizes: it needs --collective"
    elif args.fidelity != "exact":
        return "argument --fidelity: applies to a --collective sweep: it needs --collective"
    return None


def _make_out(out: str) -> str | None:
    """Make the output directory before the grid runs (so ``--out /proc/x`` fails at
    once, not after the whole grid): None, or what is wrong."""
    try:
        Path(out).mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        return f"argument --out: cannot create directory {out}: {exc.strerror or exc}"
    return None


def base_pod(args: argparse.Namespace) -> FabricConfig:
    """The pod options as one :class:`FabricConfig` (the swept fields — accelerators, flow
    control, seed — are set per point by :func:`grid` / ``collective_grid``)."""
    return FabricConfig(accelerators=args.accelerators[0], planes=args.planes,
                        lanes=args.lanes, fec=args.fec, ber=args.ber, cable_m=args.cable_m,
                        switch_ns=args.switch_ns, batch=args.batch,
                        max_outstanding=args.max_outstanding)


def _cmd_sweep(args: argparse.Namespace) -> int:
    problem = _not_applying(args)
    if problem is not None:
        return usage_error("sweep", problem)
    if args.collective:
        try:
            return _cmd_collective_sweep(args, base_pod(args))
        except ConfigError as exc:
            return config_usage_error("sweep", exc, _SWEEP_FLAGS)
    if args.algos:
        return usage_error("sweep", "argument --algos: picks the algorithms of a --collective "
                           "sweep: it needs --collective")
    try:  # every pod of the grid checked here: a worker's error would come back as a broken pool
        points = grid(args.patterns or DEFAULT_PATTERNS, args.loads or DEFAULT_LOADS,
                      args.flow_controls, args.accelerators, args.seeds, args.ops,
                      base_pod(args), args.size)
    except ConfigError as exc:
        return config_usage_error("sweep", exc, _SWEEP_FLAGS)
    problem = _make_out(args.out)
    if problem is not None:
        return usage_error("sweep", problem)
    progress = None if args.no_progress else progress_lines()
    if args.scheduler:
        rows = run_dask(points, args.scheduler, progress=progress)
    else:
        rows = run_local(points, args.workers, progress=progress)
    _write(write_outputs, rows, Path(args.out))
    for point, row in zip(points, rows, strict=True):
        if row["load_warning"] is not None:  # rule R5, as `fabric` warns: once per point
            _warn(f"{_named(point)}: {row['load_warning']}")
    for r in rows:
        print(f"{r['pattern']:>11} load {r['load']:<5} {r['flow_control']} N={r['accelerators']}"
              f" seed {r['seed']}: p99 {r['latency_p99_ns']:.0f} ns jitter "
              f"{r['jitter_ns']:.0f} ns pauses {r['pauses']} ok {r['ok']}")
    return 0 if all(r["ok"] for r in rows) else 1


def register(sub: Any) -> None:
    """Add the ``sweep`` subcommand (every option checked at parse time, its help naming
    its range and default: specs/cli.md rules 1 and 8)."""
    p = add_command(sub, "sweep", DESCRIPTION)
    p.add_argument("--patterns", type=choice_list(PATTERNS), default=None,
                   metavar="LIST", help=f"comma-separated, from {','.join(PATTERNS)} "
                                        "(default incast,uniform)")
    p.add_argument("--loads", type=_loads, default=None, metavar="LIST",
                   help="comma-separated offered loads, each in (0, 4] "
                        "(default 0.2,0.5,0.8,0.95)")
    p.add_argument("--flow-controls", type=choice_list(FLOW_CONTROLS), default=["cbfc", "pfc"],
                   metavar="LIST",
                   help=f"comma-separated, from {','.join(FLOW_CONTROLS)} (default cbfc,pfc)")
    p.add_argument("--accelerators", type=_pods, default=[16], metavar="LIST",
                   help="comma-separated pod sizes, each 2..1024 (default 16)")
    p.add_argument("--seeds", type=_seeds, default=[0], metavar="LIST",
                   help="comma-separated seeds, each 0..2^32-1 (default 0)")
    p.add_argument("--ops", type=op_count, default=2000, metavar="N",
                   help="operations per run, >= 0 (default 2000)")
    p.add_argument("--size", type=transfer_size, default=None, metavar="BYTES",
                   help="fixed transfer size (reads/WriteFulls, split at 256 bytes): 4..1048576, "
                        "a multiple of 4 (default: mixed shapes)")
    add_pod_options(p)
    p.add_argument("--collective", choices=tuple(ALGORITHMS), default=None,
                   help="sweep this collective instead of fabric loads (busbw against size) "
                        "(default: fabric loads)")
    p.add_argument("--algos", type=choice_list(sorted({a for v in ALGORITHMS.values()
                                                       for a in v})),
                   default=None, metavar="LIST",
                   help="with --collective: comma-separated algorithms, each one of that "
                        "operation's (" + "; ".join(f"{op}: {','.join(a)}"
                                                    for op, a in ALGORITHMS.items())
                        + "; default: all of the operation's)")
    p.add_argument("--sizes", type=_byte_sizes, default=None, metavar="LIST",
                   help="with --collective: comma-separated sizes, each >= 1 byte "
                        "(e.g. 4K,64K,1M; default 4K,64K,1M)")
    p.add_argument("--fidelity", choices=("exact", "fast"), default="exact",
                   help="with --collective: exact (the bit-exact pod, data checked) or fast "
                        "(the timing model validated against it, specs/fast.md) "
                        "(default exact)")
    p.add_argument("--workers", type=int_range(1, 1024), default=None, metavar="N",
                   help="local processes, 1..1024 (default: one per core)")
    p.add_argument("--scheduler", type=non_empty, default=None, metavar="ADDRESS",
                   help="Dask scheduler address (needs the 'dask' extra; default: run locally)")
    p.add_argument("--out", type=output_dir, default="sweep-out", metavar="DIR",
                   help="output directory: sweep.csv, sweep.json and, with the 'plot' extra "
                        "(matplotlib), sweep.png (default sweep-out)")
    add_progress_option(p)
    p.set_defaults(func=_cmd_sweep)


__all__ = ["COLUMNS", "NO_PLOT", "ROW_DECIMALS", "GridPoint", "PointRunner", "Progress",
           "SweepPoint", "Warn", "base_pod", "grid", "progress_lines", "register", "run_dask",
           "run_local", "run_point", "write_collective_outputs", "write_outputs",
           "write_tables"]
