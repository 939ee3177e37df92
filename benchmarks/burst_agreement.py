"""The large-pod run modes against the plain run (``specs/fast.md`` rules P5, P6).

Each case runs on the fast fidelity twice, on the same pod: piece by piece (the plain,
validated run; for a symmetric algorithm on rank 0 alone, which equals every rank, rule
P5) and in the bursts :func:`~ualink_ref.fast.collective.auto_config` gives a large run
(:func:`~ualink_ref.fast.collective.large_config`). It prints one Markdown row per case:
both times, the error of the burst run and both CPU times (their ratio is the speed-up).
Usage: ``python benchmarks/burst_agreement.py [--quick] [--burst N] [--share X]
[--within-limit yes|no] [--planes P] [--max-outstanding N]``: ``--burst`` runs every
case in bursts of N instead of ``large_burst``'s, ``--share`` admits a batch at that
share of room instead of ``BURST_ADMIT_SHARE``'s, ``--within-limit`` keeps every case's
batches within the in-flight limit or lets every case's go whole instead of
``WITHIN_LIMIT``'s choice (rule P6), ``--planes`` and ``--max-outstanding`` change the
pod (4 and 256 by default), to re-measure the choices specs/fast.md states.
"""

from __future__ import annotations

import argparse
import dataclasses
import time

from ualink_ref.collectives.algorithms import TimingOnly, schedule
from ualink_ref.fast.collective import (
    BURST_ADMIT_SHARE,
    SYMMETRIC,
    FastConfig,
    large_config,
    run_fast_collective,
)
from ualink_ref.sim.fabric import FabricConfig

#: (operation, algorithm, accelerators, bytes): 4 planes of x4 links, 256 in flight.
CASES: tuple[tuple[str, str, int, int], ...] = (
    ("all-reduce", "ring", 16, 1 << 22), ("all-reduce", "ring", 64, 1 << 24),
    ("all-reduce", "ring", 1024, 1 << 26), ("all-reduce", "in-network", 1023, 1 << 26),
    ("all-reduce", "two-shot", 64, 1 << 22), ("all-reduce", "one-shot", 16, 1 << 22),
    ("reduce-scatter", "ring", 16, 1 << 22), ("reduce-scatter", "ring", 64, 1 << 24),
    ("reduce-scatter", "ring", 256, 1 << 24), ("reduce-scatter", "ring", 1024, 1 << 26),
    ("all-gather", "ring", 64, 1 << 24),
    ("broadcast", "ring", 16, 1 << 22), ("all-to-all", "direct", 16, 1 << 22),
    ("all-to-all", "direct", 64, 1 << 24), ("all-to-all", "direct", 1024, 1 << 26),
    ("moe", "direct", 16, 1 << 22))
QUICK = (("all-reduce", "ring", 16, 1 << 22), ("all-reduce", "ring", 64, 1 << 24),
         ("all-to-all", "direct", 16, 1 << 22))


def row(op: str, algo: str, ranks: int, size: int, burst: int | None = None,
        share: float = BURST_ADMIT_SHARE, within_limit: bool | None = None,
        planes: int = 4, max_outstanding: int = 256) -> str:
    """One case's Markdown row (``burst``, ``within_limit`` None: ``large_config``'s)."""
    pod = FabricConfig(accelerators=ranks, planes=planes, lanes=4,
                       max_outstanding=max_outstanding)
    symmetric = (op, algo) in SYMMETRIC
    plan = schedule(op, algo, ranks, size, timing=TimingOnly((0,) if symmetric else None))
    started = time.process_time()
    plain = run_fast_collective(plan, pod, FastConfig(symmetric=symmetric))
    plain_cpu = time.process_time() - started
    config = large_config(op, algo, symmetric=symmetric)
    config = dataclasses.replace(
        config, burst=config.burst if burst is None else burst, admit_share=share,
        within_limit=config.within_limit if within_limit is None else within_limit)
    started = time.process_time()
    bursts = run_fast_collective(plan, pod, config)
    burst_cpu = time.process_time() - started
    mode = f"{config.burst}{' within' if config.within_limit else ''}"
    return (f"| {op} {algo} {ranks} x {size >> 20} MiB | {mode} | {plain.time_us:.1f} | "
            f"{bursts.time_us:.1f} | {100 * (bursts.time_us / plain.time_us - 1):+.1f} % | "
            f"{plain_cpu:.1f} / {burst_cpu:.1f} |")


def main() -> None:
    """Print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="three cases only")
    parser.add_argument("--burst", type=int, help="bursts of N for every case")
    parser.add_argument("--share", type=float, default=BURST_ADMIT_SHARE,
                        help=f"rule P6's admit share (default {BURST_ADMIT_SHARE})")
    parser.add_argument("--within-limit", choices=("yes", "no"),
                        help="batches within the in-flight limit for every case (yes) or "
                        "none (no); default: WITHIN_LIMIT's algorithms")
    parser.add_argument("--planes", type=int, default=4)
    parser.add_argument("--max-outstanding", type=int, default=256)
    args = parser.parse_args()
    within = None if args.within_limit is None else args.within_limit == "yes"
    print("| case | burst | plain (µs) | bursts (µs) | error | CPU plain / bursts (s) |")
    print("|---|---:|---:|---:|---:|---:|")
    for case in QUICK if args.quick else CASES:
        print(row(*case, burst=args.burst, share=args.share, within_limit=within,
                  planes=args.planes, max_outstanding=args.max_outstanding), flush=True)


if __name__ == "__main__":
    main()
