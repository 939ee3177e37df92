"""``ualink-ref fabric``: run a pod of accelerators behind a switch (or planes of them)."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from ualink_ref.capture.format import write_capture
from ualink_ref.capture.run import Recorder, fabric_directions
from ualink_ref.cli.commands import add_command
from ualink_ref.cli.options import (
    add_progress_option,
    config_usage_error,
    float_range,
    op_count,
    output_file,
    progress_bar,
    usage_error,
)
from ualink_ref.cli.options import int_range as _int_at_least
from ualink_ref.errors import ConfigError
from ualink_ref.sim.fabric import (
    FLOW_CONTROLS,
    LANE_COUNTS,
    LINK_DIRECTIONS,
    Fabric,
    FabricConfig,
    LinkDown,
)
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


def link_down_spec(text: str) -> LinkDown:
    """``--link-down PLANE:ACC:SLOT[:UNTIL[:DIRECTION]]`` of ``fabric`` and ``collective``
    (the one parser of that syntax; rule F11's start, end slot and direction): that link
    is dead from SLOT, up to UNTIL (empty or absent: for good), DIRECTION one of
    :data:`LINK_DIRECTIONS`. PLANE and ACC are checked against the pod by
    :func:`link_down_problem` once every option is parsed."""
    parts = text.split(":")
    form = "PLANE:ACC:SLOT[:UNTIL[:DIRECTION]]"
    if not 3 <= len(parts) <= 5 or not all(p.strip().isdigit() for p in parts[:3]):
        raise argparse.ArgumentTypeError(f"expected {form}, got {text!r}")
    until: int | None = None
    if len(parts) >= 4 and parts[3].strip():
        if not parts[3].strip().isdigit() or int(parts[3]) <= int(parts[2]):
            raise argparse.ArgumentTypeError(f"UNTIL must be a slot after SLOT, got {text!r}")
        until = int(parts[3])
    direction = parts[4].strip() if len(parts) == 5 else "both"
    if direction not in LINK_DIRECTIONS:
        raise argparse.ArgumentTypeError(
            f"DIRECTION must be one of {', '.join(LINK_DIRECTIONS)}, got {text!r}")
    return LinkDown(int(parts[0]), int(parts[1]), int(parts[2]), until, direction)


def link_down_problem(downs: list[LinkDown], planes: int, accelerators: int) -> str | None:
    """What is wrong with ``--link-down`` values on a pod of ``planes`` x ``accelerators``
    (a link that is not the pod's), or None (specs/cli.md rule 1)."""
    for down in downs:
        if down.plane >= planes or down.accelerator >= accelerators:
            return (f"argument --link-down: PLANE must be 0..{planes - 1} (--planes) and "
                    f"ACC 0..{accelerators - 1} (--accelerators), got "
                    f"{down.plane}:{down.accelerator}:{down.at:g}")
    return None


def config_from(args: argparse.Namespace) -> FabricConfig:
    """The :class:`FabricConfig` the parsed options describe."""
    return FabricConfig(accelerators=args.accelerators, planes=args.planes, lanes=args.lanes,
                        fec=args.fec,
                        ber=args.ber, cable_m=args.cable_m, switch_ns=args.switch_ns,
                        flow_control=args.flow_control, batch=args.batch,
                        max_outstanding=args.max_outstanding, seed=args.seed,
                        links_down=tuple(getattr(args, "link_down", ())))


def _check(args: argparse.Namespace) -> str | None:
    """What is wrong between options (each alone was checked by its type), or None."""
    if args.target >= args.accelerators:
        return (f"argument --target: must be an accelerator ID 0..{args.accelerators - 1} "
                f"(--accelerators {args.accelerators}), got {args.target}")
    if args.mix is not None and args.size is None:
        return "argument --mix: picks the kinds of a fixed-size workload: it needs --size"
    return link_down_problem(args.link_down, args.planes, args.accelerators)


def _cmd_fabric(args: argparse.Namespace) -> int:
    problem = _check(args)
    if problem is not None:
        return usage_error("fabric", problem)
    try:
        config = config_from(args)
    except ConfigError as exc:  # a combination the types cannot see: still a usage error
        return config_usage_error("fabric", exc)
    if args.zero_load:
        print(zero_load_load64(config).format())
        return 0
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
    if report.load_warning is not None:  # rule R5: the figures are not at the offered load
        print(f"ualink-ref fabric: warning: {report.load_warning}", file=sys.stderr)
    return 0 if report.ok else 1


#: Planes a pod may have (project choice: one switch is built per plane; 16 bounds a typo,
#: not the model).
MAX_PLANES = 16
#: The pod options' ranges (specs/cli.md rule 1): cable and switch bounded so a typo cannot
#: start a run of days (the same cable range as ``compare``).
MAX_CABLE_M, MAX_SWITCH_NS = 100_000.0, 1_000_000.0


def add_pod_options(p: argparse.ArgumentParser) -> None:
    """The pod options ``fabric`` and ``sweep`` share (each checked at parse time, its help
    naming its range and default: specs/cli.md rule 1)."""
    p.add_argument("--planes", type=_int_at_least(1, MAX_PLANES), default=1, metavar="P",
                   help=f"parallel switch planes, 1..{MAX_PLANES} (default 1)")
    p.add_argument("--lanes", type=int, choices=LANE_COUNTS, default=1,
                   help="lanes per link: a slot is 25.6 ns / lanes (default 1)")
    p.add_argument("--fec", choices=FEC_MODES, default="kp4", help="FEC mode (default kp4)")
    p.add_argument("--ber", type=float_range(0.0, 0.5), default=0.0,
                   help="pre-FEC bit error ratio of every link, 0..0.5 (default 0)")
    p.add_argument("--cable-m", type=float_range(0.0, MAX_CABLE_M), default=3.0, metavar="M",
                   help=f"cable length, metres (5 ns/m), 0..{MAX_CABLE_M:g} (default 3)")
    p.add_argument("--switch-ns", type=float_range(0.0, MAX_SWITCH_NS), default=200.0,
                   metavar="NS",
                   help=f"switch port-to-port latency, ns, 0..{MAX_SWITCH_NS:g} (default 200)")
    p.add_argument("--batch", type=_int_at_least(1, 4096), default=1, metavar="SLOTS",
                   help="flit slots simulated per step, 1..4096 (default 1)")
    p.add_argument("--max-outstanding", type=_int_at_least(1, 1_000_000), default=64,
                   metavar="N", help="ops in flight per accelerator, 1..1000000 (default 64)")


def add_link_down_option(p: argparse.ArgumentParser) -> None:
    """``--link-down`` (:func:`link_down_spec`), as ``fabric`` and ``collective`` share it."""
    p.add_argument("--link-down", type=link_down_spec, action="append", default=[],
                   metavar="PLANE:ACC:SLOT[:UNTIL[:DIRECTION]]",
                   help="that link is dead from SLOT up to UNTIL (absent: for good), DIRECTION "
                        f"{'/'.join(LINK_DIRECTIONS)} (default both): PLANE 0..P-1 "
                        "(--planes), ACC 0..N-1 (--accelerators), SLOT >= 0 (repeatable; "
                        "default: none)")


def register(sub: Any) -> None:
    """Add the ``fabric`` subcommand."""
    p = add_command(sub, "fabric", DESCRIPTION)
    p.add_argument("--accelerators", type=_int_at_least(2, 1024), default=16, metavar="N",
                   help="accelerators in the pod (IDs 0..N-1), 2..1024 (default 16)")
    p.add_argument("--pattern", choices=PATTERNS, default="uniform",
                   help="traffic pattern (default uniform)")
    p.add_argument("--load", type=float_range(0.0, 4.0, above=True), default=None,
                   help="offered load, fraction of one link's data rate per source (incast: "
                        "of the target's link), in (0, 4] (default: closed loop, every op "
                        "offered at slot 0)")
    p.add_argument("--flow-control", choices=FLOW_CONTROLS, default="cbfc",
                   help="credit-based (cbfc) or priority pause (pfc) (default cbfc)")
    p.add_argument("--ops", type=op_count, default=2000, metavar="N",
                   help="operations (transfers with --size), >= 0 (default 2000)")
    p.add_argument("--size", type=transfer_size, default=None, metavar="BYTES",
                   help="every transfer a read or WriteFull of this many bytes, split at 256: "
                        f"4..{MAX_TRANSFER_BYTES}, a multiple of 4 (default: mixed shapes)")
    p.add_argument("--mix", choices=tuple(MIXES), default=None,
                   help="with --size: reads and writes, reads only or writes only "
                        "(default mixed)")
    p.add_argument("--target", type=_int_at_least(0, 1023), default=0, metavar="ID",
                   help="incast / hotspot destination, 0..N-1 (default 0)")
    p.add_argument("--seed", type=_int_at_least(0, 2**32 - 1), default=0,
                   help="seed of workload and channels, 0..2^32-1 (default 0)")
    add_pod_options(p)
    add_link_down_option(p)
    p.add_argument("--capture", metavar="FILE", type=output_file, default=None,
                   help="write every port's DL flits as a pcap (pseudo-header port = link), "
                        "in a directory that exists (default: none)")
    p.add_argument("--zero-load", action="store_true",
                   help="print the zero-load 64 B Load latency with its decomposition "
                        "(default: run the workload)")
    p.add_argument("--json", action="store_true",
                   help="print the report as JSON (default: text)")
    add_progress_option(p)
    p.set_defaults(func=_cmd_fabric)


__all__ = ["MAX_CABLE_M", "MAX_PLANES", "MAX_SWITCH_NS", "add_link_down_option",
           "add_pod_options", "config_from", "link_down_problem", "link_down_spec", "register",
           "transfer_size"]
