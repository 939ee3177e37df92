"""``ualink-ref capture``: write a capture (pcap / pcapng) of a run (specs/capture.md)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from ualink_ref.capture.format import write_capture
from ualink_ref.capture.run import (
    SCENARIOS,
    CaptureLink,
    capture_simulation,
)
from ualink_ref.cli import faults
from ualink_ref.cli.commands import add_command
from ualink_ref.cli.options import USAGE, add_run_options, fail, progress_bar, resolve
from ualink_ref.cli.simulate import add_tl_arguments, sim_config
from ualink_ref.errors import CaptureIncomplete, UALinkError
from ualink_ref.sim.faults import FaultPlan
from ualink_ref.sim.workloads import random_workload

#: The subcommand's ``--help`` description.
DESCRIPTION = (
    "Run a workload between endpoints A and B (the simulator of `ualink-ref simulate`, "
    "same options and checks) and write every DL flit each receiver gets to a pcap / "
    "pcapng (link type 147, specs/capture.md), both directions merged in time order. "
    "Or --scenario NAME: a scripted scenario with its own link settings (no run options "
    "then). Deterministic: the same arguments give the same bytes."
)


def _cmd_capture(args: argparse.Namespace) -> int:
    given = resolve(args)
    status = 0
    try:  # a plan that cannot run (stop-tag without --timeout) is refused before running
        plan = FaultPlan.parse(args.faults, args.seed) if args.faults else None
        if plan is not None and not args.scenario:
            plan.checked_stop_tags(args.timeout)
        config = None if args.scenario else sim_config(args)
    except UALinkError as exc:
        return fail("capture", str(exc), 2)
    if args.scenario:  # scripted faults: the capture harness, with the scenario's settings
        given |= {name for name, default in (("split", "never"), ("timeout", None))
                  if getattr(args, name) != default}
        if given:
            flags = ", ".join(f"--{name.replace('_', '-')}" for name in sorted(given))
            return fail("capture", f"--scenario {args.scenario} sets its own workload and "
                                   f"link; drop {flags}", USAGE)
        scenario = SCENARIOS[args.scenario]
        settings = dict(scenario.settings)
        if args.raw_codewords:  # only adds: a scenario that records them keeps doing so
            settings["raw_codewords"] = True
        if args.faults:
            settings["faults"] = "; ".join(p for p in (str(settings.get("faults") or ""),
                                                       args.faults) if p)
        try:
            link = CaptureLink(**settings)  # type: ignore[arg-type]
        except UALinkError as exc:  # e.g. a stop-tag added to a scenario without a timeout
            return fail("capture", str(exc), 2)
        if scenario.prepare is not None:
            scenario.prepare(link)
        result = link.run(scenario.ops())
        records = result.records
        done = sum(len(c) for c in result.completions.values())
        summary = (f"{done} ops completed in {result.slots} flit slots, "
                   f"{result.crc_errors} CRC errors, {result.replays} replays")
    else:  # the simulator of `ualink-ref simulate`, same options
        workload = random_workload(args.ops, args.seed, span=args.span)
        bar = progress_bar(args.ops, not args.no_progress)
        try:
            records, report = capture_simulation(
                workload, config, raw_codewords=args.raw_codewords,
                faults=faults.channels(args), fault_plan=plan,
                progress=bar.update if bar is not None else None)
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
        finally:
            if bar is not None:
                bar.close()
    try:
        size = write_capture(Path(args.out), records)
    except OSError as exc:
        return fail("capture", f"cannot write {args.out}: {exc.strerror or exc}")
    line = f"wrote {len(records)} records ({size} bytes) to {args.out}: {summary}"
    if status:
        return fail("capture", line, status)
    print(line)
    return status


def register(sub: Any) -> None:
    """Add the ``capture`` subcommand."""
    c = add_command(sub, "capture", DESCRIPTION)
    c.add_argument("--out", required=True, metavar="FILE",
                   help="capture file to write (.pcapng for pcapng, else pcap)")
    c.add_argument("--scenario", choices=sorted(SCENARIOS),
                   help="a scripted scenario (specs/capture.md) instead of a random workload; "
                        "it sets its own workload and link, so the run options are refused")
    add_run_options(c, ops_default=40)
    faults.add_arguments(c)
    c.add_argument("--faults", metavar="PLAN",
                   help="fault plan, e.g. 'down 200 400; corrupt ab 12; drop-ack ba 300' "
                        "(specs/dl.md section 9; seeded by --seed)")
    add_tl_arguments(c)
    c.add_argument("--raw-codewords", action="store_true",
                   help="also record the wire bytes before FEC decoding (fec_codewords)")
    c.set_defaults(func=_cmd_capture)
