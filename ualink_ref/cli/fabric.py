"""``ualink-ref fabric``: run a pod of accelerators behind a switch (or planes of them)."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from ualink_ref.capture.format import write_capture
from ualink_ref.capture.run import Recorder, fabric_directions
from ualink_ref.cli.commands import add_command
from ualink_ref.cli.options import USAGE, add_progress_option, fail, progress_bar
from ualink_ref.cli.options import int_range as _int_at_least
from ualink_ref.sim.fabric import FLOW_CONTROLS, LANE_COUNTS, Fabric, FabricConfig
from ualink_ref.sim.fabric_report import make_report, zero_load_load64
from ualink_ref.sim.workloads import MAX_TRANSFER_BYTES, MIXES, PATTERNS, fabric_workload
from ualink_ref.sizes import FEC_MODES

#: The subcommand's ``--help`` description.
DESCRIPTION = (
    "Run a seeded workload among N accelerators through one UALink switch (or P parallel "
    "switch planes) with CBFC or PFC flow control; print the report (status, throughput per "
    "port, latency percentiles split static/dynamic, stalls, pauses, buffers, memory check). "
    "Exit status 1 unless every op completed once with OKAY and memories match the model."
)


def transfer_size(text: str) -> int:
    """``--size``: a transfer of 4 bytes to 1 MiB, a multiple of 4 (rule W5)."""
    value = _int_at_least(4, MAX_TRANSFER_BYTES)(text)
    if value % 4:
        raise argparse.ArgumentTypeError(f"must be a multiple of 4, got {value}")
    return value


def config_from(args: argparse.Namespace) -> FabricConfig:
    """The :class:`FabricConfig` the parsed options describe."""
    return FabricConfig(accelerators=args.accelerators, planes=args.planes, lanes=args.lanes,
                        fec=args.fec,
                        ber=args.ber, cable_m=args.cable_m, switch_ns=args.switch_ns,
                        flow_control=args.flow_control, batch=args.batch,
                        max_outstanding=args.max_outstanding, seed=args.seed)


def _cmd_fabric(args: argparse.Namespace) -> int:
    config = config_from(args)
    if args.zero_load:
        print(zero_load_load64(config).format())
        return 0
    if args.mix is not None and args.size is None:
        return fail("fabric", "--mix picks the kinds of a fixed-size workload: it needs --size",
                    USAGE)
    kinds = MIXES[args.mix or "mixed"] if args.size else ("read", "write", "writefull", "atomic")
    workload = fabric_workload(args.pattern, args.ops, args.accelerators, args.seed,
                               load=args.load, size=args.size, kinds=kinds, target=args.target)
    fabric = Fabric(config)
    recorder = None
    if args.capture:
        recorder = Recorder(args.fec, directions=fabric_directions(args.accelerators,
                                                                   args.planes))
        fabric.network.add_tap(recorder)
    bar = progress_bar(args.ops, not args.no_progress)
    try:
        run = fabric.run(workload, bar.update if bar is not None else None)
    finally:
        if bar is not None:
            bar.close()
    report = make_report(fabric, run, pattern=args.pattern, load=args.load)
    if recorder is not None:
        write_capture(args.capture, recorder.records)
        print(f"wrote {len(recorder.records)} records to {args.capture}", file=sys.stderr)
    if args.json:
        print(json.dumps(report.as_dict(), indent=1, sort_keys=True))
    else:
        print(report.format())
    return 0 if report.ok else 1


def add_pod_options(p: argparse.ArgumentParser) -> None:
    """The pod options ``fabric`` and ``sweep`` share."""
    p.add_argument("--planes", type=_int_at_least(1), default=1, help="parallel switch planes")
    p.add_argument("--lanes", type=int, choices=LANE_COUNTS, default=1,
                   help="lanes per link (x1, x2, x4: a slot is 25.6 ns / lanes)")
    p.add_argument("--fec", choices=FEC_MODES, default="kp4", help="FEC mode")
    p.add_argument("--ber", type=float, default=0.0, help="pre-FEC bit error ratio, every link")
    p.add_argument("--cable-m", type=float, default=3.0, help="cable length, metres (5 ns/m)")
    p.add_argument("--switch-ns", type=float, default=200.0,
                   help="switch port-to-port latency, ns (default 200)")
    p.add_argument("--batch", type=_int_at_least(1), default=1, help="flit slots per step")
    p.add_argument("--max-outstanding", type=_int_at_least(1), default=64,
                   help="ops in flight per accelerator")


def register(sub: Any) -> None:
    """Add the ``fabric`` subcommand."""
    p = add_command(sub, "fabric", DESCRIPTION)
    p.add_argument("--accelerators", type=_int_at_least(2), default=16,
                   help="accelerators in the pod (2..1024; IDs 0..N-1)")
    p.add_argument("--pattern", choices=PATTERNS, default="uniform", help="traffic pattern")
    p.add_argument("--load", type=float, default=None,
                   help="offered load, fraction of one link's data rate (default: closed loop)")
    p.add_argument("--flow-control", choices=FLOW_CONTROLS, default="cbfc",
                   help="credit-based (cbfc) or priority pause (pfc)")
    p.add_argument("--ops", type=_int_at_least(0), default=2000, help="operations")
    p.add_argument("--size", type=transfer_size, default=None,
                   help="every transfer a read or WriteFull of this many bytes, split at 256 "
                        f"(4..{MAX_TRANSFER_BYTES}, a multiple of 4; default: mixed shapes)")
    p.add_argument("--mix", choices=tuple(MIXES), default=None,
                   help="with --size: reads and writes, reads only or writes only")
    p.add_argument("--target", type=int, default=0, help="incast / hotspot destination")
    p.add_argument("--seed", type=int, default=0, help="seed for workload and channels")
    add_pod_options(p)
    p.add_argument("--capture", metavar="FILE",
                   help="write every port's DL flits as a pcap (pseudo-header port = link)")
    p.add_argument("--zero-load", action="store_true",
                   help="print the zero-load 64 B Load latency with its decomposition")
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    add_progress_option(p)
    p.set_defaults(func=_cmd_fabric)


__all__ = ["add_pod_options", "config_from", "register", "transfer_size"]
