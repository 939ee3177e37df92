"""Soak run (not a CI test): a long two-endpoint simulation through changing faults.

    python benchmarks/soak.py [--ops N] [--seed S]

Both directions go through phases of a few thousand flit slots each — clean, random
bit errors at 1e-5, 1e-4 and 3e-4 (KP4 corrects most, the rest are CRC errors and
replays), long error bursts (2,000-20,000 bits, spanning chunks), and outages of
4 to 400 slots — cycling until the workload is done; at the default 120,000 ops the
DL sequence numbers wrap dozens of times in each direction. Every op must complete
exactly once with the right data (the run's own check against a sequential model).
Memory (the process's resident set, from /proc) is sampled every 5,000 completions.
Prints ops completed, data mismatches, stalls (watchdog trips, and the longest time
without progress), sequence wraps, replays, peak memory and its growth.
"""

from __future__ import annotations

import argparse
import os
import resource
import time
from dataclasses import dataclass, field

from ualink_ref.errors import LinkStalledError
from ualink_ref.net.channels import ErrorBursts, Outage, RandomBitErrors
from ualink_ref.net.harness import Channel
from ualink_ref.sim.config import SimConfig
from ualink_ref.sim.link_run import Simulation
from ualink_ref.sim.workloads import random_workload
from ualink_ref.sizes import SEQ_MAX

PHASE_SLOTS = 1000


def _rss_mib() -> float:
    try:
        with open("/proc/self/statm") as f:
            pages = int(f.read().split()[1])
        return pages * os.sysconf("SC_PAGE_SIZE") / 2**20
    except OSError:  # not Linux: the peak so far instead
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


@dataclass
class Phases:
    """A channel that changes with time: phase ``k`` (slots ``k * PHASE_SLOTS`` on) uses
    ``channels[k % len(channels)]`` (``None``: clean)."""

    channels: list[Channel | None]
    used: dict[int, int] = field(default_factory=dict)

    def transmit(self, wire: bytes, first_flit: int, flits: int, now: float = 0
                 ) -> bytes | None:
        """``wire`` through the channel of the phase ``now`` falls in."""
        k = int(now // PHASE_SLOTS) % len(self.channels)
        self.used[k] = self.used.get(k, 0) + flits
        channel = self.channels[k]
        return wire if channel is None else channel.transmit(wire, first_flit, flits, now)


def _phases(seed: int, cycle: int) -> list[Channel | None]:
    """One cycle of phases; outages are placed inside their phase of cycle ``cycle``."""
    base = cycle * 10 * PHASE_SLOTS
    return [
        None,
        RandomBitErrors(1e-5, seed + 1),
        RandomBitErrors(1e-4, seed + 2),
        ErrorBursts(2000, 2e-6, seed + 3),
        Outage(base + 4 * PHASE_SLOTS + 500, base + 4 * PHASE_SLOTS + 504, seed + 4),
        RandomBitErrors(3e-4, seed + 5),
        ErrorBursts(20_000, 5e-7, seed + 6, density=0.3),
        Outage(base + 7 * PHASE_SLOTS + 100, base + 7 * PHASE_SLOTS + 500, seed + 7),
        None,
        RandomBitErrors(1e-4, seed + 9),
    ]


def main() -> int:
    """Run the soak and print its figures; exit 1 on any failure."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ops", type=int, default=120_000)
    parser.add_argument("--seed", type=int, default=15)
    args = parser.parse_args()
    # Outages are absolute slot windows, so each cycle's get their own channels: build
    # enough cycles for any run (a cycle is 10,000 slots; 10 cover about 300,000 ops).
    cycles = [_phases(args.seed * 100 + 10 * d, c) for d in range(2) for c in range(10)]
    channels = {}
    for d, name in enumerate(("ab", "ba")):
        flat: list[Channel | None] = []
        for c in range(10):
            flat += cycles[d * 10 + c]
        channels[name] = Phases(flat)
    sim = Simulation(random_workload(args.ops, args.seed),
                     SimConfig(seed=args.seed), channels=channels)
    samples: list[tuple[int, float]] = [(0, _rss_mib())]
    done = 0

    def progress(n: int) -> None:
        nonlocal done
        before, done = done, done + n
        if done // 5000 != before // 5000:
            samples.append((done, _rss_mib()))

    start = time.perf_counter()
    stalls = 0
    try:
        report = sim.run(progress)
    except LinkStalledError as exc:
        stalls = 1
        print(f"STALLED: {exc}")
        report = sim.report()
    wall = time.perf_counter() - start
    print(f"ops: {report.ops_completed}/{report.ops} completed, {report.ops_okay} OKAY, "
          f"data mismatches: {report.data_mismatches}")
    print(f"slots: {report.slots}  wall: {wall:.1f} s  sequence wraps: a->b "
          f"{sim.b.dl.accepted // SEQ_MAX}, b->a {sim.a.dl.accepted // SEQ_MAX}")
    print(f"faults seen: uncorrectable flits "
          f"{report.fec_uncorrectable_flits}, CRC errors {report.crc_errors}, replays "
          f"{report.replays} ({report.replayed_flits} flits), retrains needed "
          f"{report.retrains_needed}")
    print(f"stalls: {stalls} watchdog trip(s) (stall_slots {sim.stall_slots}); longest time "
          f"without progress {sim.longest_quiet} slots")
    injected = garbled = 0
    for phases in channels.values():
        for channel in phases.channels:
            if isinstance(channel, RandomBitErrors | ErrorBursts):
                injected += channel.errors
            elif isinstance(channel, Outage):
                garbled += channel.garbled
    print(f"injected: {injected} bit errors, {garbled} flits garbled by outages")
    peak = max(m for _, m in samples)
    print("memory (RSS, MiB) at ops completed: "
          + ", ".join(f"{n}: {m:.0f}" for n, m in samples[:: max(1, len(samples) // 8)]))
    print(f"peak memory {peak:.0f} MiB; growth from 5,000 ops to the end "
          f"{samples[-1][1] - samples[min(1, len(samples) - 1)][1]:+.1f} MiB")
    ok = stalls == 0 and report.ops_okay == report.ops and report.data_mismatches == 0
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
