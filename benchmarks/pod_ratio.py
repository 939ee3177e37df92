"""Exact-pod speed against an older checkout, both sides in the same run (issue 25, part 1).

Usage: ``python benchmarks/pod_ratio.py --old PATH [--accelerators N] [--ops N]
[--load L] [--rounds R] [--stat min|median]`` from the repository root.

The run is ``benchmarks/test_fabric_bench.py``'s: one uniform random workload
(``fabric_workload("uniform", ops, N, seed=1, load=L)``, default 64 accelerators,
20,000 ops, load 0.5), KP4, no errors, one switch, ``seed=1``. A *port-slot* is one
harness port simulated for one flit slot: port-slots/s = 2 x N x slots / wall seconds of
``Fabric.run`` (building the pod and the workload is not timed; a 50-op warm-up run in
the same process first loads the FEC kernels). Each side runs in its own subprocess,
the old one with ``PYTHONPATH=PATH``; both with ``UALINK_REF_NO_NATIVE=1`` (the old
checkout's compiled engines off: it runs interpreted, as the issue asks) and the
environment otherwise as given (numba, the ``fast`` extra, on both sides when
installed). Rounds alternate old and new; the ratio is new port-slots/s over old of
``--stat`` (``min``, the least-disturbed round, by default) of ``--clock`` (``wall``
by default; ``cpu``: the process's CPU time, less disturbed on a loaded machine).
``--instructions`` counts instead, under valgrind's callgrind, each side's run less its
start-up (the same worker with no ops), numpy FEC on both sides: a figure that does not
move with the machine's load (minutes per side even at 1,000 ops).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent


def _layout() -> tuple[Any, Any, Any, str]:
    """``(Fabric, FabricConfig, fabric_workload, module path)`` of the checkout on the
    path: the current layout (``ualink_ref.sim``) or the one of ccb81c0
    (``ualink_ref.stack``)."""
    try:
        from ualink_ref.sim import fabric, workloads
    except ImportError:
        from ualink_ref.stack import fabric, workloads  # type: ignore[no-redef]
    return fabric.Fabric, fabric.FabricConfig, workloads.fabric_workload, str(fabric.__file__)


def worker(accelerators: int, ops: int, load: float) -> None:
    """Time one pod run in this process; print ``{"wall", "slots", "module"}`` as JSON."""
    fabric_cls, config_cls, fabric_workload, module = _layout()
    fabric_cls(config_cls(accelerators=4, seed=1)).run(
        fabric_workload("uniform", 50, 4, seed=1))  # warm-up: FEC kernels, tables
    fabric = fabric_cls(config_cls(accelerators=accelerators, seed=1))
    work = fabric_workload("uniform", ops, accelerators, seed=1, load=load)
    if not ops:  # the start-up alone (--instructions subtracts it)
        print(json.dumps({"module": module}), flush=True)
        return
    start, cpu = time.perf_counter(), time.process_time()
    run = fabric.run(work)
    wall, cpu = time.perf_counter() - start, time.process_time() - cpu
    okay = sum(1 for r in run.results if r is not None and r.status.name == "OKAY")
    print(json.dumps({"wall": wall, "cpu": cpu, "slots": run.slots, "okay": okay,
                      "module": module}), flush=True)


def instructions(path: Path, args: argparse.Namespace, ops: int) -> int:
    """Instructions (valgrind's callgrind) of one worker run with ``PYTHONPATH=path``,
    numpy FEC on both sides (``UALINK_REF_NO_NUMBA=1``: numba's compiler under valgrind
    takes many minutes)."""
    env = {**os.environ, "PYTHONPATH": str(path), "UALINK_REF_NO_NATIVE": "1",
           "UALINK_REF_NO_NUMBA": "1", "PYTHONHASHSEED": "0"}
    proc = subprocess.run(
        ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", sys.executable,
         __file__, "--worker", "--accelerators", str(args.accelerators), "--ops", str(ops),
         "--load", str(args.load)],
        env=env, check=True, capture_output=True, text=True, cwd=tempfile.gettempdir())
    found = re.search(r"Collected : (\d+)", proc.stderr)
    if found is None:
        raise SystemExit(f"no instruction count in valgrind's output:\n{proc.stderr[-500:]}")
    return int(found.group(1))


def side(path: Path, args: argparse.Namespace) -> dict[str, Any]:
    """One worker run with ``PYTHONPATH=path``."""
    env = {**os.environ, "PYTHONPATH": str(path), "UALINK_REF_NO_NATIVE": "1"}
    out = subprocess.run(
        [sys.executable, __file__, "--worker", "--accelerators", str(args.accelerators),
         "--ops", str(args.ops), "--load", str(args.load)],
        env=env, check=True, capture_output=True, text=True, cwd=tempfile.gettempdir())
    result: dict[str, Any] = json.loads(out.stdout.strip().splitlines()[-1])
    if not str(result["module"]).startswith(str(path.resolve())):
        raise SystemExit(f"worker for {path} imported {result['module']}")
    return result


def main() -> int:
    """Run both sides round by round; print each round and the ratio."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--old", type=Path, help="the old checkout's root (e.g. ccb81c0)")
    parser.add_argument("--accelerators", type=int, default=64)
    parser.add_argument("--ops", type=int, default=20_000)
    parser.add_argument("--load", type=float, default=0.5)
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--stat", choices=("min", "median"), default="min")
    parser.add_argument("--clock", choices=("wall", "cpu"), default="wall",
                        help="time the run's wall time or its process CPU time (less "
                        "disturbed on a loaded machine; say which a figure used)")
    parser.add_argument("--instructions", action="store_true",
                        help="count instructions under valgrind instead of timing (numpy "
                        "FEC on both sides; use a small --ops, e.g. 1000)")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker(args.accelerators, args.ops, args.load)
        return 0
    if args.old is None:
        parser.error("--old PATH is required")
    print(f"{args.accelerators} accelerators, {args.ops} uniform ops, load {args.load}, "
          f"load average {os.getloadavg()[0]:.2f}", flush=True)
    if args.instructions:
        per_op = {}
        for name, path in (("old", args.old), ("new", ROOT)):
            work = instructions(path, args, args.ops) - instructions(path, args, 0)
            per_op[name] = work / args.ops
            print(f"{name}: {per_op[name]:,.0f} instructions per op", flush=True)
        print(f"new/old speed {per_op['old'] / per_op['new']:.2f}x (instructions)")
        return 0
    walls: dict[str, list[float]] = {"old": [], "new": []}
    slots: dict[str, float] = {}
    for r in range(args.rounds):
        for name, path in (("old", args.old), ("new", ROOT)):
            result = side(path, args)
            walls[name].append(result[args.clock])
            slots[name] = result["slots"]
            rate = 2 * args.accelerators * result["slots"] / result[args.clock]
            print(f"round {r + 1} {name}: {result['slots']:.0f} slots, {result['okay']} ops "
                  f"OKAY, {result['wall']:.1f} s wall, {result['cpu']:.1f} s CPU = "
                  f"{rate:,.0f} port-slots/s ({args.clock})", flush=True)
    pick = min if args.stat == "min" else statistics.median
    rates = {name: 2 * args.accelerators * slots[name] / pick(walls[name]) for name in walls}
    print(f"port-slots/s ({args.stat} of {args.rounds}, {args.clock}): old {rates['old']:,.0f}, "
          f"new {rates['new']:,.0f}; new/old {rates['new'] / rates['old']:.2f}x "
          f"(target >= 3x); load average {os.getloadavg()[0]:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
