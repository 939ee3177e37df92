"""``ualink-ref simulate``: run a seeded random workload between two endpoints."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from typing import Any, TextIO

from ualink_ref.cli.commands import add_command
from ualink_ref.errors import UALinkError
from ualink_ref.stack.faults import FaultPlan
from ualink_ref.stack.sim import Burst, random_workload, simulate

#: The subcommand's ``--help`` description.
DESCRIPTION = (
    "Run a seeded random workload (reads, writes, atomics from both ends) between "
    "two full-stack endpoints over a channel with random bit errors and optional "
    "bursts; print the report. Exit status 1 if any op failed or returned wrong data."
)


def _burst(text: str) -> tuple[int, float]:
    try:
        length, rate = text.split(":")
        return int(length), float(rate)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected LENGTH_BITS:RATE, got {text!r}") from None


def _int_at_least(minimum: int) -> Callable[[str], int]:
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected an integer, got {text!r}") from None
        if value < minimum:
            raise argparse.ArgumentTypeError(f"must be >= {minimum}, got {value}")
        return value

    return parse


class TextProgress:
    """A dependency-free progress line on a terminal (used when tqdm is not installed)."""

    def __init__(self, total: int, stream: TextIO, width: int = 30) -> None:
        self.total, self.stream, self.width = max(total, 1), stream, width
        self.done = 0
        self._shown = -1

    def update(self, count: int) -> None:
        """Advance by ``count`` ops; redraw only when the percentage changes."""
        self.done += count
        percent = 100 * self.done // self.total
        if percent != self._shown:
            self._shown = percent
            filled = self.width * self.done // self.total
            bar = "#" * filled + "." * (self.width - filled)
            self.stream.write(f"\r[{bar}] {self.done}/{self.total} ops ({percent}%)")
            self.stream.flush()

    def close(self) -> None:
        """Erase the progress line."""
        self.stream.write("\r" + " " * (self.width + 40) + "\r")
        self.stream.flush()


def _cmd_simulate(args: argparse.Namespace) -> int:
    burst = Burst(args.burst[0], args.burst[1]) if args.burst else None
    workload = random_workload(args.ops, args.seed, span=args.span)
    try:
        faults = FaultPlan.parse(args.faults, args.seed) if args.faults else None
        if faults is not None:
            faults.channels(lambda: 0, args.fec)  # reject TL-side entries before running
    except UALinkError as exc:
        print(f"ualink-ref simulate: {exc}", file=sys.stderr)
        return 2
    bar: Any = None
    if not args.no_progress and sys.stderr.isatty():
        try:
            from tqdm import tqdm
        except ImportError:  # tqdm is optional: a plain text bar without it
            bar = TextProgress(args.ops, sys.stderr)
        else:
            bar = tqdm(total=args.ops, unit="op", file=sys.stderr, leave=False)
    try:
        report = simulate(
            workload,
            fec=args.fec,
            ber=args.ber,
            burst=burst,
            seed=args.seed,
            latency=args.latency,
            batch=args.batch,
            max_outstanding=args.max_outstanding,
            progress=bar.update if bar is not None else None,
            faults=faults,
            endpoint_options={"retrain_slots": args.retrain_slots,
                              "max_retrains": args.max_retrains},
        )
    finally:
        if bar is not None:
            bar.close()
    if args.json:
        print(json.dumps(report.as_dict(), indent=1, sort_keys=True))
    else:
        print(report.format())
    ok = report.ops_okay == report.ops and report.data_mismatches == 0
    return 0 if ok else 1


def register(sub: Any) -> None:
    """Add the ``simulate`` subcommand."""
    p = add_command(sub, "simulate", DESCRIPTION)
    p.add_argument("--ops", type=_int_at_least(0), default=10_000,
                   help="operations (default 10000)")
    p.add_argument("--fec", choices=("kp4", "ll", "none"), default="kp4", help="FEC mode")
    p.add_argument("--ber", type=float, default=0.0, help="pre-FEC bit error ratio")
    p.add_argument("--burst", type=_burst, metavar="LEN:RATE",
                   help="error bursts of LEN bits starting at each bit with probability RATE")
    p.add_argument("--seed", type=int, default=0, help="seed for workload and channel")
    p.add_argument("--span", type=_int_at_least(256), default=1 << 16,
                   help="address span of the workload, bytes (>= 256)")
    p.add_argument("--latency", type=_int_at_least(0), default=8,
                   help="one-way wire latency, flit slots")
    p.add_argument("--batch", type=_int_at_least(1), default=8,
                   help="flit slots simulated per step")
    p.add_argument("--max-outstanding", type=_int_at_least(1), default=64,
                   help="ops in flight per side (default 64)")
    p.add_argument("--faults", metavar="PLAN",
                   help="fault plan, e.g. 'down 200 400; corrupt ab 12; drop-ack ba 300' "
                        "(specs/dl.md section 9; seeded by --seed)")
    p.add_argument("--retrain-slots", type=_int_at_least(1), default=128,
                   help="duration of one link retrain, flit slots (default 128)")
    p.add_argument("--max-retrains", type=_int_at_least(1), default=3,
                   help="trainings without progress before the link is in fault (default 3)")
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.set_defaults(func=_cmd_simulate)


__all__ = ["register"]
