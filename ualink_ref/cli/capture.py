"""``ualink-ref capture``: write a capture (pcap / pcapng) of a run (specs/capture.md)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from ualink_ref.capture.format import write_capture
from ualink_ref.capture.run import (
    SCENARIOS,
    CaptureLink,
    capture_simulation,
)
from ualink_ref.cli.commands import add_command
from ualink_ref.errors import CaptureIncomplete
from ualink_ref.stack.faults import FaultPlan
from ualink_ref.stack.sim import Burst, random_workload

#: The subcommand's ``--help`` description.
DESCRIPTION = (
    "Run a workload between endpoints A and B (the simulator of `ualink-ref simulate`, "
    "same options) and write every DL flit each receiver gets to a pcap / pcapng "
    "(link type 147, specs/capture.md). Deterministic: the same arguments give the "
    "same bytes."
)


def _burst(text: str) -> tuple[int, float]:
    try:
        length, rate = text.split(":")
        return int(length), float(rate)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected LEN:RATE, got {text!r}") from None


def _cmd_capture(args: argparse.Namespace) -> int:
    status = 0
    if args.scenario:  # scripted faults: the capture harness
        scenario = SCENARIOS[args.scenario]
        settings = dict(scenario.settings)
        settings["raw_codewords"] = args.raw_codewords
        if args.faults:
            settings["faults"] = "; ".join(p for p in (str(settings.get("faults") or ""),
                                                       args.faults) if p)
        link = CaptureLink(**settings)  # type: ignore[arg-type]
        if scenario.prepare is not None:
            scenario.prepare(link)
        result = link.run(scenario.ops())
        records = result.records
        done = sum(len(c) for c in result.completions.values())
        summary = (f"{done} ops completed in {result.slots} flit slots, "
                   f"{result.crc_errors} CRC errors, {result.replays} replays")
    else:  # the simulator of `ualink-ref simulate`, same options
        burst = Burst(args.burst[0], args.burst[1]) if args.burst else None
        workload = random_workload(args.ops, args.seed, span=args.span)
        try:
            records, report = capture_simulation(
                workload, fec=args.fec, ber=args.ber, burst=burst, seed=args.seed,
                raw_codewords=args.raw_codewords, latency=args.latency, batch=args.batch,
                max_outstanding=args.max_outstanding,
                faults=FaultPlan.parse(args.faults, args.seed) if args.faults else None)
        except CaptureIncomplete as exc:  # still write what the link carried: worth reading
            records, summary, status = exc.records, f"INCOMPLETE: {exc}", 1
        else:
            summary = (f"{report.ops_completed} ops completed in {report.slots} flit slots, "
                       f"{report.crc_errors} CRC errors, {report.replays} replays")
            if report.link_fault is not None:  # written, but the link gave up: say why
                failed = report.ops_failed_by_fault
                summary += (f"; LINK FAULT: {report.link_fault}; {failed} op(s) completed "
                            "with an error status")
                status = 1
    try:
        size = write_capture(Path(args.out), records)
    except OSError as exc:
        print(f"ualink-ref capture: cannot write {args.out}: {exc.strerror or exc}",
              file=sys.stderr)
        return 2
    print(f"wrote {len(records)} records ({size} bytes) to {args.out}: {summary}",
          file=sys.stderr if status else sys.stdout)
    return status


def register(sub: Any) -> None:
    """Add the ``capture`` subcommand."""
    c = add_command(sub, "capture", DESCRIPTION)
    c.add_argument("--out", required=True, metavar="FILE",
                   help="capture file to write (.pcapng for pcapng, else pcap)")
    c.add_argument("--scenario", choices=sorted(SCENARIOS),
                   help="a scripted scenario (specs/capture.md) instead of a random workload; "
                        "the workload and link options below are then ignored")
    c.add_argument("--ops", type=int, default=40, metavar="N",
                   help="random workload: N operations from both ends (default 40)")
    c.add_argument("--fec", choices=["kp4", "ll", "none"], default="kp4",
                   help="FEC mode (default kp4)")
    c.add_argument("--ber", type=float, default=0.0, help="pre-FEC bit-error rate (default 0)")
    c.add_argument("--burst", type=_burst, metavar="LEN:RATE",
                   help="error bursts of LEN bits starting at each bit with probability RATE")
    c.add_argument("--seed", type=int, default=0, help="seed of workload and channel")
    c.add_argument("--span", type=int, default=1 << 16, help="address span of the workload")
    c.add_argument("--latency", type=int, default=8, help="one-way wire latency, flit slots")
    c.add_argument("--batch", type=int, default=8, help="flit slots simulated per step")
    c.add_argument("--max-outstanding", type=int, default=64,
                   help="ops in flight per side (default 64)")
    c.add_argument("--faults", metavar="PLAN",
                   help="fault plan, e.g. 'down 200 400; corrupt ab 12; drop-ack ba 300' "
                        "(specs/dl.md section 9; seeded by --seed)")
    c.add_argument("--raw-codewords", action="store_true",
                   help="also record the wire bytes before FEC decoding (fec_codewords)")
    c.set_defaults(func=_cmd_capture)
