"""``ualink-ref sweep``: a grid of fabric runs on local processes or a Dask cluster.

Each grid point (pattern x load x flow control x accelerators x seed) is one
:func:`run_point` call — a pure function of its arguments, so the same seeds
give the same rows wherever they run. By default the points run on local
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
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

from ualink_ref.cli.collective import byte_size
from ualink_ref.cli.commands import add_command
from ualink_ref.cli.fabric import add_pod_options, transfer_size
from ualink_ref.cli.options import USAGE, fail, float_range, int_range
from ualink_ref.collectives.algorithms import ALGORITHMS, check_collective, fit_size
from ualink_ref.collectives.plot import plot_sweep
from ualink_ref.collectives.report import sweep_table
from ualink_ref.collectives.sweep import (
    COLLECTIVE_COLUMNS,
    collective_grid,
    report_of,
    run_collective_point,
)
from ualink_ref.errors import ConfigError
from ualink_ref.sim.fabric import FabricConfig
from ualink_ref.sim.fabric_report import run_fabric
from ualink_ref.sim.workloads import PATTERNS, fabric_workload

DESCRIPTION = (
    "Run a grid of fabric runs (pattern x load x flow control x accelerators x seed) on local "
    "processes, or on a Dask distributed cluster with --scheduler; write CSV, JSON and a plot "
    "of p99 latency against load."
)
#: Columns of a sweep row, in CSV order.
COLUMNS = ("pattern", "load", "flow_control", "accelerators", "seed", "ops", "ok",
           "latency_p50_ns", "latency_p99_ns", "latency_p999_ns", "latency_max_ns", "jitter_ns",
           "latency_std_ns", "dynamic_p99_ns", "throughput_total_gbps", "pauses", "pause_ns",
           "endpoint_credit_stalls", "peak_buffers")


def run_point(point: dict[str, Any]) -> dict[str, Any]:
    """One grid point: build the pod, run its workload, return the row (pure in ``point``)."""
    pod = dict(point["pod"])
    n = point["accelerators"]
    cfg = FabricConfig(accelerators=n, flow_control=point["flow_control"], seed=point["seed"],
                       **pod)
    size = point.get("size")
    kinds = ("read", "writefull") if size else ("read", "write", "writefull", "atomic")
    work = fabric_workload(point["pattern"], point["ops"], n, point["seed"],
                           load=point["load"], size=size, kinds=kinds)
    report = run_fabric(cfg, work, pattern=point["pattern"], load=point["load"]).as_dict()
    row = {k: report.get(k) for k in COLUMNS}
    row.update(accelerators=n, seed=point["seed"], ops=point["ops"])
    return row


def grid(patterns: list[str], loads: list[float], flow_controls: list[str],
         accelerators: list[int], seeds: list[int], ops: int, pod: dict[str, Any],
         size: int | None = None) -> list[dict[str, Any]]:
    """Every grid point, in a fixed order."""
    return [dict(pattern=p, load=ld, flow_control=fc, accelerators=n, seed=s, ops=ops,
                 pod=pod, size=size)
            for p, ld, fc, n, s in itertools.product(patterns, loads, flow_controls,
                                                     accelerators, seeds)]


#: What runs one point: a pure function of it, importable by a worker process.
PointRunner = Callable[[dict[str, Any]], dict[str, Any]]


def run_local(points: list[dict[str, Any]], workers: int | None = None,
              func: PointRunner = run_point) -> list[dict[str, Any]]:
    """Run ``points`` (each by ``func``) on local processes; rows in point order."""
    if workers == 1:
        return [func(p) for p in points]
    with ProcessPoolExecutor(max_workers=workers) as pool:
        return list(pool.map(func, points))


def run_dask(points: list[dict[str, Any]], scheduler: Any,
             func: PointRunner = run_point) -> list[dict[str, Any]]:
    """Run ``points`` (each by ``func``) on a Dask distributed cluster (``scheduler``: an
    address or a ``Client``); rows in point order."""
    from dask import distributed  # optional extra: only a Dask sweep needs it

    Client: Any = distributed.Client  # untyped library
    client: Any = scheduler if isinstance(scheduler, Client) else Client(scheduler)
    try:
        futures = client.map(func, points, pure=False)
        return list(client.gather(futures))
    finally:
        if client is not scheduler:
            client.close()


def write_outputs(rows: list[dict[str, Any]], out: Path) -> list[Path]:
    """``sweep.csv``, ``sweep.json`` and (with matplotlib) ``sweep.png`` under ``out``."""
    out.mkdir(parents=True, exist_ok=True)
    paths = [out / "sweep.csv", out / "sweep.json"]
    with paths[0].open("w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=COLUMNS)
        writer.writeheader()
        writer.writerows(rows)
    paths[1].write_text(json.dumps(rows, indent=1, sort_keys=True))
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:  # the plot is optional
        return paths
    fig, ax = plt.subplots(figsize=(7, 4.5))
    keys = sorted({(r["pattern"], r["flow_control"], r["accelerators"]) for r in rows})
    for pattern, fc, n in keys:
        sel = sorted((r for r in rows if (r["pattern"], r["flow_control"], r["accelerators"])
                      == (pattern, fc, n) and r["load"] is not None), key=lambda r: r["load"])
        loads = [r["load"] for r in sel]
        ax.plot(loads, [r["latency_p99_ns"] for r in sel], marker="o",
                label=f"{pattern} {fc} N={n} p99")
        ax.plot(loads, [r["jitter_ns"] for r in sel], linestyle="--",
                label=f"{pattern} {fc} N={n} jitter (p99-p50)")
    ax.set_xlabel("offered load (fraction of link data rate)")
    ax.set_ylabel("ns")
    ax.set_title("fabric latency against load")
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(out / "sweep.png", dpi=120)
    plt.close(fig)
    return [*paths, out / "sweep.png"]


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


def write_collective_outputs(rows: list[dict[str, Any]], out: Path) -> list[Path]:
    """``collectives.csv``, ``collectives.json`` and (with matplotlib) ``collectives.png``
    (busbw against size) under ``out``."""
    out.mkdir(parents=True, exist_ok=True)
    paths = [out / "collectives.csv", out / "collectives.json"]
    with paths[0].open("w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=COLLECTIVE_COLUMNS, extrasaction="ignore")
        writer.writeheader()
        writer.writerows(rows)
    paths[1].write_text(json.dumps(rows, indent=1, sort_keys=True))
    try:
        plot_sweep([report_of(r) for r in rows], out / "collectives.png")
    except ImportError:  # the plot is optional
        return paths
    return [*paths, out / "collectives.png"]


def _cmd_collective_sweep(args: argparse.Namespace, pod: dict[str, Any]) -> int:
    op = args.collective
    algos = args.algos.split(",") if args.algos else list(ALGORITHMS[op])
    flows = args.flow_controls.split(",")
    accelerators = args.accelerators
    # Every point is checked here, before any worker runs it: a worker's error would
    # reach this process only as a broken pool. Sizes are rounded as nccl-tests rounds.
    sizes = list(dict.fromkeys(z for n in accelerators for z0 in args.sizes
                               if (z := fit_size(op, n, z0)) is not None))
    if not sizes:
        return fail("sweep", f"no size of --sizes fits {op}", USAGE)
    for algo, n, size in itertools.product(algos, accelerators, sizes):
        check_collective(op, algo, n, size, "float32")
    for flow, n, seed in itertools.product(flows, accelerators, args.seeds):
        FabricConfig(accelerators=n, flow_control=flow, seed=seed, **pod)  # checks the pod
    points = collective_grid(op, algos, sizes, flows, accelerators, args.seeds, pod)
    if args.scheduler:
        rows = run_dask(points, args.scheduler, run_collective_point)
    else:
        rows = run_local(points, args.workers, run_collective_point)
    for path in write_collective_outputs(rows, Path(args.out)):
        print(f"wrote {path}")
    print(sweep_table([report_of(r) for r in rows]))
    return 0 if all(r["exact"] for r in rows) else 1


_byte_sizes = _listed(byte_size, "sizes")
_seeds = _listed(int_range(0, 2**32 - 1), "seeds (>= 0)")


def _cmd_sweep(args: argparse.Namespace) -> int:
    pod = dict(planes=args.planes, lanes=args.lanes, fec=args.fec, ber=args.ber,
               cable_m=args.cable_m,
               switch_ns=args.switch_ns, batch=args.batch, max_outstanding=args.max_outstanding)
    if args.collective:
        try:
            return _cmd_collective_sweep(args, pod)
        except ConfigError as exc:
            return fail("sweep", str(exc), USAGE)
    points = grid(args.patterns.split(","), args.loads, args.flow_controls.split(","),
                  args.accelerators, args.seeds, args.ops, pod, args.size)
    run = run_dask if args.scheduler else run_local
    rows = run(points, args.scheduler or args.workers)
    for path in write_outputs(rows, Path(args.out)):
        print(f"wrote {path}")
    for r in rows:
        print(f"{r['pattern']:>11} load {r['load']:<5} {r['flow_control']} N={r['accelerators']}"
              f" seed {r['seed']}: p99 {r['latency_p99_ns']:.0f} ns jitter "
              f"{r['jitter_ns']:.0f} ns pauses {r['pauses']} ok {r['ok']}")
    return 0 if all(r["ok"] for r in rows) else 1


def register(sub: Any) -> None:
    """Add the ``sweep`` subcommand."""
    p = add_command(sub, "sweep", DESCRIPTION)
    p.add_argument("--patterns", default="incast,uniform",
                   help=f"comma-separated, from {','.join(PATTERNS)}")
    p.add_argument("--loads", type=_loads, default=[0.2, 0.5, 0.8, 0.95],
                   help="comma-separated loads")
    p.add_argument("--flow-controls", default="cbfc,pfc", help="comma-separated: cbfc,pfc")
    p.add_argument("--accelerators", type=_pods, default=[16], help="comma-separated pod sizes")
    p.add_argument("--seeds", type=_seeds, default=[0], help="comma-separated seeds (>= 0)")
    p.add_argument("--ops", type=int, default=2000, help="operations per run")
    p.add_argument("--size", type=transfer_size, default=None,
                   help="fixed transfer size (reads/WriteFulls, split at 256 bytes)")
    add_pod_options(p)
    p.add_argument("--collective", choices=tuple(ALGORITHMS),
                   help="sweep this collective instead of fabric loads (busbw against size)")
    p.add_argument("--algos", default="", help="with --collective: comma-separated algorithms "
                                                "(default: all of the operation's)")
    p.add_argument("--sizes", type=_byte_sizes, default=[4096, 65536, 1048576],
                   help="with --collective: comma-separated sizes (e.g. 4K,64K,1M)")
    p.add_argument("--workers", type=int_range(1), default=None,
                   help="local processes (default: cores)")
    p.add_argument("--scheduler", metavar="ADDRESS", help="Dask scheduler address")
    p.add_argument("--out", default="sweep-out", help="output directory")
    p.set_defaults(func=_cmd_sweep)


__all__ = ["COLUMNS", "PointRunner", "grid", "register", "run_dask", "run_local", "run_point",
           "write_collective_outputs", "write_outputs"]
