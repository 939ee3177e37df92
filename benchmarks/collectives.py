"""Collectives on the exact pod: the figures specs/collectives.md quotes.

Usage: ``python benchmarks/collectives.py [--only NAME ...]`` from the repository root.
Each case runs once on the exact (bit-level) pod, checks every rank's data against
numpy, and prints its simulated time, busbw and the wall time the run took. Nothing is
asserted on time; a case whose data is not exact exits 1.

* ``ring-8``: ring all-reduce of 1 MiB on 8 accelerators, x1, error-free, beside one
  link's TL payload rate (196 Gb/s);
* ``in-network-8``: in-network all-reduce of 1 MiB on 8 accelerators (default and 4x
  switch buffers) over ring, beside the public NVLS figure;
* ``latency-8``: all-reduce of 8 B on 8 accelerators, one-shot, two-shot, ring and
  in-network, in µs, beside the 1 µs budget;
* ``ring-64`` / ``moe-64``: a 64-accelerator ring all-reduce of 1 MiB and an MoE
  dispatch + combine of 256 KiB per rank.
"""

from __future__ import annotations

import argparse
import sys
import time

from ualink_ref.collectives.algorithms import build
from ualink_ref.collectives.report import CollectiveReport, make_report
from ualink_ref.collectives.run import run_collective
from ualink_ref.sim.fabric import FabricConfig
from ualink_ref.tl import CreditConfig

MiB = 1 << 20
#: Four times the default switch ingress buffer (sim.fabric.SWITCH_BUFFER's pool).
BIG_BUFFER = CreditConfig(per_vc=(4, 4, 8, 8), pool=(128, 128, 512, 512))


def case(op: str, algo: str, ranks: int, size: int, **pod: object) -> CollectiveReport:
    """Run one collective; print its line; return its report."""
    start = time.perf_counter()
    collective = build(op, algo, ranks, size, "float32", seed=1)
    config = FabricConfig(accelerators=ranks, max_outstanding=256, **pod)  # type: ignore[arg-type]
    report = make_report(run_collective(collective, config))
    wall = time.perf_counter() - start
    extra = " ".join(f"{k}={v}" for k, v in pod.items() if k != "buffer")
    extra += " buffer=4x" if "buffer" in pod else ""
    print(f"{op} {algo} n={ranks} {size} B {extra}: {report.time_us:.3f} us simulated, "
          f"busbw {report.busbw_gbps:.2f} GB/s ({8 * report.busbw_gbps:.1f} Gb/s), "
          f"exact {report.exact}, wall {wall:.1f} s", flush=True)
    if not report.exact:
        raise SystemExit(f"{op} {algo}: data not exact")
    return report


def main() -> int:
    """Run the cases asked for (all by default)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    names = ("ring-8", "in-network-8", "latency-8", "ring-64", "moe-64")
    parser.add_argument("--only", nargs="+", choices=names, default=list(names))
    args = parser.parse_args()
    if "ring-8" in args.only:
        rep = case("all-reduce", "ring", 8, MiB)
        rate = 8 * rep.link_payload_gbps
        print(f"  ring busbw / one link's TL payload rate ({rate:.1f} Gb/s): "
              f"{100 * rep.busbw_gbps / rep.link_payload_gbps:.1f} %")
    if "in-network-8" in args.only:
        ring = case("all-reduce", "ring", 8, MiB)
        for pod in ({}, {"buffer": BIG_BUFFER}):
            inet = case("all-reduce", "in-network", 8, MiB, **pod)
            print(f"  in-network / ring busbw: {inet.busbw_gbps / ring.busbw_gbps:.2f}x "
                  "(public NVLS on 8 H100: ~480 / ~370 GB/s = 1.3x)")
    if "latency-8" in args.only:
        for algo in ("one-shot", "two-shot", "ring", "in-network"):
            rep = case("all-reduce", algo, 8, 8)
            print(f"  8 B all-reduce {algo}: {rep.time_us:.3f} us (budget: < 1 us)")
    if "ring-64" in args.only:
        case("all-reduce", "ring", 64, MiB)
    if "moe-64" in args.only:
        case("moe", "direct", 64, 256 * 1024)
    return 0


if __name__ == "__main__":
    sys.exit(main())
