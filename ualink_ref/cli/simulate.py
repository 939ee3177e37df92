"""``ualink-ref simulate``: run a seeded random workload between two endpoints."""

from __future__ import annotations

import argparse
import json
from typing import Any

from ualink_ref.cli import faults
from ualink_ref.cli.commands import add_command
from ualink_ref.cli.options import (
    TextProgress,
    add_run_options,
    fail,
    int_range,
    progress_bar,
    resolve,
)
from ualink_ref.dl.config import LinkStateConfig
from ualink_ref.errors import UALinkError
from ualink_ref.phy.config import PhyConfig
from ualink_ref.sim.config import Burst, SimConfig
from ualink_ref.sim.faults import FaultPlan
from ualink_ref.sim.link_run import simulate
from ualink_ref.sim.workloads import random_workload
from ualink_ref.tl.completer import SPLIT_MODES
from ualink_ref.tl.config import TLConfig

#: The subcommand's ``--help`` description.
DESCRIPTION = (
    "Run a seeded random workload (reads, writes, atomics from both ends) between "
    "two full-stack endpoints over a channel with random bit errors and optional "
    "bursts, outages or a dead direction; print the report. Exit status 1 if any op "
    "failed or returned wrong data, or the link stalled (no progress for K slots)."
)


def _cmd_simulate(args: argparse.Namespace) -> int:
    resolve(args)
    # Lazy: ops are drawn as the simulation issues them, so the bar moves at once.
    workload = random_workload(args.ops, args.seed, span=args.span)
    try:
        config = sim_config(args, LinkStateConfig(retrain_slots=args.retrain_slots,
                                                  max_retrains=args.max_retrains))
        plan = FaultPlan.parse(args.faults, args.seed) if args.faults else None
        if plan is not None:  # stop-tag without --timeout: refused before running
            plan.checked_stop_tags(args.timeout)
    except UALinkError as exc:
        return fail("simulate", str(exc), 2)
    bar = progress_bar(args.ops, not args.no_progress)
    try:
        report = simulate(workload, config, faults=faults.channels(args), fault_plan=plan,
                          progress=bar.update if bar is not None else None)
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
    add_run_options(p, ops_default=10_000)
    faults.add_arguments(p)
    p.add_argument("--faults", metavar="PLAN",
                   help="fault plan, e.g. 'down 200 400; corrupt ab 12; drop-ack ba 300; "
                        "poison 0x100040; stop-tag 5' (specs/dl.md section 9, specs/tl.md "
                        "T5 and P6; seeded by --seed)")
    p.add_argument("--retrain-slots", type=int_range(1), default=128,
                   help="duration of one link retrain, flit slots (default 128)")
    p.add_argument("--max-retrains", type=int_range(1), default=3,
                   help="trainings without progress before the link is in fault (default 3)")
    add_tl_arguments(p)
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    p.set_defaults(func=_cmd_simulate)


def sim_config(args: argparse.Namespace,
               link_state: LinkStateConfig | None = None) -> SimConfig:
    """The :class:`~ualink_ref.sim.config.SimConfig` the run options ask for (shared by
    ``simulate`` and ``capture``): the replay timeout the link run derives from latency
    and batch, ``--split`` / ``--timeout`` on both TLs."""
    burst = Burst(args.burst[0], args.burst[1]) if args.burst else None
    return SimConfig(phy=PhyConfig(args.fec),
                     link_state=link_state if link_state is not None else LinkStateConfig(),
                     tl=TLConfig(split=args.split, timeout_slots=args.timeout),
                     ber=args.ber, burst=burst, seed=args.seed,
                     latency=args.latency, batch=args.batch,
                     max_outstanding=args.max_outstanding, stall_slots=args.stall_slots)


def add_tl_arguments(p: Any) -> None:
    """``--split`` and ``--timeout`` (the TL error paths, specs/tl.md S2 and T1)."""
    p.add_argument("--split", choices=SPLIT_MODES, default="never",
                   help="how both memory targets answer multi-beat reads: one response "
                        "(never, the default), one piece per beat (always), or seeded random "
                        "pieces in random order (random)")
    p.add_argument("--timeout", type=int_range(1), default=None, metavar="SLOTS",
                   help="completion timeout at both originators, flit slots (default: off); "
                        "needed by a fault plan with stop-tag")


__all__ = ["TextProgress", "add_tl_arguments", "register", "sim_config"]
