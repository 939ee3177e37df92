"""Why the reduce-scatter ring ran fast in whole batches of bursts: its figures beside
the all-gather ring's, on the exact pod and the fast fidelity (specs/fast.md, rule P6
and the burst table's note).

Usage: ``python benchmarks/burst_rhythm.py [--ranks N] [--size BYTES] [--burst B]
[--share X] [--every-rank] [--within-limit yes|no]`` from the repository root (default 8 ranks,
1 MiB, whole batches of bursts of 2 at the default admit share; 4 planes of x4 links,
``max_outstanding`` 256, as the burst table; rank 0 alone, rule P5, unless
``--every-rank``; batches within the in-flight limit with ``--within-limit yes``; about 20
s, the exact runs most of it).

Per ring it prints the completion time on the exact pod, piece by piece and in bursts,
and for rank 0 in both fast runs: the mean count it held in flight (time-weighted over
the times it acted), the wake-ups at which it issued, the sizes of its batches of 16
pieces or more after the first (the pieces it issued at one wake-up), and the mean wait
of a request piece at the uplinks and the downlinks: from its burst's arrival at the
queue to the start of its burst's service there (a burst's later pieces also wait for
its earlier ones, which this leaves out: up to half a burst's service).
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any

from ualink_ref.collectives.algorithms import TimingOnly, build, schedule
from ualink_ref.collectives.report import make_report
from ualink_ref.collectives.run import run_collective
from ualink_ref.fast.collective import BURST_ADMIT_SHARE, FastCollective, FastConfig
from ualink_ref.fast.engine import REQUEST, LinkQueue
from ualink_ref.sim.fabric import FabricConfig


class _Watch:
    """Rank 0's issuing and in-flight count, and request waits per queue direction, read
    by wrapping one run's methods (the wrappers only read state: the run is unchanged)."""

    def __init__(self, run: FastCollective) -> None:
        self.samples: list[tuple[float, int]] = []
        self.wakeups = 0
        self.batches: list[int] = []
        self.waits: dict[str, list[float]] = {"up": [0.0, 0.0], "down": [0.0, 0.0]}
        # by id, holding the packet so that its id is not reused while it is listed
        arrived: dict[int, tuple[float, Any]] = {}
        engine = run.engine
        program: Callable[[Any, float], None] = run._run_program
        enqueue: Callable[[LinkQueue, Any], None] = engine._enqueue
        serve: Callable[[LinkQueue, Any], None] = engine._serve

        def watched_program(rank: Any, now: float) -> None:
            before = run.operations
            program(rank, now)
            if rank.index == 0:
                self.samples.append((now, rank.outstanding))
                if run.operations > before:
                    self.wakeups += 1
                    self.batches.append(run.operations - before)

        def watched_enqueue(queue: LinkQueue, packet: Any) -> None:
            if packet.klass == REQUEST:  # E8 may enqueue it again: the first arrival counts
                arrived.setdefault(id(packet), (engine.now, packet))
            enqueue(queue, packet)

        def watched_serve(queue: LinkQueue, packet: Any) -> None:
            if packet.klass == REQUEST:
                came = arrived.pop(id(packet))[0]
                total = self.waits[queue.name.rsplit(".", 1)[1]]
                total[0] += (max(engine.now, queue.free_at) - came) * packet.op.pieces
                total[1] += packet.op.pieces
            serve(queue, packet)

        run._run_program = watched_program  # type: ignore[method-assign]
        engine._enqueue = watched_enqueue  # type: ignore[method-assign]
        engine._serve = watched_serve  # type: ignore[method-assign]

    def in_flight(self) -> float:
        """Rank 0's time-weighted mean count in flight."""
        if len(self.samples) < 2:
            return 0.0
        pairs = zip(self.samples, self.samples[1:], strict=False)
        weighted = sum(count * (later - at) for (at, count), (later, _) in pairs)
        span = self.samples[-1][0] - self.samples[0][0]
        return weighted / span if span > 0 else 0.0

    def large_batches(self) -> str:
        """The smallest and largest batch of 16 pieces or more after the first, and how
        many there were."""
        large = [size for size in self.batches[1:] if size >= 16]
        return f"{min(large)}-{max(large)} ({len(large)})" if large else "none"

    def wait(self, direction: str) -> float:
        """Mean slots a request piece waited at the ``direction`` queues."""
        total, pieces = self.waits[direction]
        return total / pieces if pieces else 0.0


def main() -> int:
    """Print the two rings' figures."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--ranks", type=int, default=8)
    parser.add_argument("--size", type=int, default=1 << 20)
    parser.add_argument("--burst", type=int, default=2)
    parser.add_argument("--share", type=float, default=BURST_ADMIT_SHARE,
                        help="the bursts' admit share (rule P6)")
    parser.add_argument("--every-rank", action="store_true",
                        help="run every rank, not rank 0 alone (rule P5)")
    parser.add_argument("--within-limit", choices=("yes", "no"), default="no",
                        help="keep the batches within the in-flight limit (rule P6; "
                        "default no: whole batches)")
    args = parser.parse_args()
    pod = FabricConfig(accelerators=args.ranks, planes=4, lanes=4, max_outstanding=256)
    symmetric = not args.every_rank
    within = args.within_limit == "yes"
    batches = "within the limit" if within else "whole"
    print(f"{args.ranks} ranks x {args.size} B, 4 planes of x4, bursts of {args.burst} "
          f"at admit share {args.share}, batches {batches}, "
          f"{'rank 0 alone' if symmetric else 'every rank'}")
    print("| ring | exact (µs) | plain (µs) | bursts (µs) | in flight | issuing wake-ups "
          "| batches >= 16 | uplink wait | downlink wait |")
    print("|---|---:|---:|---:|---|---|---|---|---|")
    for op in ("reduce-scatter", "all-gather"):
        exact = make_report(run_collective(build(op, "ring", args.ranks, args.size), pod))
        plan = schedule(op, "ring", args.ranks, args.size,
                        timing=TimingOnly((0,) if symmetric else None))
        figures = []
        for config in (FastConfig(symmetric=symmetric),
                       FastConfig(burst=args.burst, symmetric=symmetric,
                                  admit_share=args.share, within_limit=within)):
            run = FastCollective(plan, pod, config)
            watch = _Watch(run)
            figures.append((run.run().time_us, watch))
        (plain, slow), (bursts, quick) = figures
        off = [100 * (fast / exact.time_us - 1) for fast in (plain, bursts)]
        print(f"| {op} | {exact.time_us:.2f} | {plain:.2f} ({off[0]:+.1f} %) "
              f"| {bursts:.2f} ({off[1]:+.1f} %, {100 * (bursts / plain - 1):+.1f} % "
              f"on plain) | {slow.in_flight():.0f} / {quick.in_flight():.0f} "
              f"| {slow.wakeups} / {quick.wakeups} "
              f"| {slow.large_batches()} / {quick.large_batches()} "
              f"| {slow.wait('up'):.1f} / {quick.wait('up'):.1f} "
              f"| {slow.wait('down'):.1f} / {quick.wait('down'):.1f} |")
    print("(pairs: plain / bursts)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
