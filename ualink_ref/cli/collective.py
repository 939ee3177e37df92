"""``ualink-ref collective``: run a collective on the exact pod and check its data, or time
it on the fast fidelity (``--fidelity fast``, specs/fast.md)."""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path
from typing import Any, cast

from ualink_ref.cli.commands import add_command
from ualink_ref.cli.fabric import add_link_down_option, link_down_problem
from ualink_ref.cli.options import (
    USAGE,
    add_progress_option,
    choice_list,
    config_usage_error,
    fail,
    float_range,
    plot_path,
    progress_bar,
    usage_error,
)
from ualink_ref.cli.options import int_range as _int_at_least
from ualink_ref.collectives.algorithms import (
    ALGORITHMS,
    DTYPES,
    build,
    check_collective,
    check_schedule,
    fit_size,
)
from ualink_ref.collectives.plot import plot_sweep
from ualink_ref.collectives.report import make_report, sweep_table
from ualink_ref.collectives.run import RunConfig, run_collective
from ualink_ref.errors import ConfigError
from ualink_ref.fast.report import fast_sweep_table
from ualink_ref.fast.run import fast_collective
from ualink_ref.sim.fabric import (
    FLOW_CONTROLS,
    LANE_COUNTS,
    FabricConfig,
    FlowControlMode,
)
from ualink_ref.sizes import FEC_MODES

#: The subcommand's ``--help`` description.
DESCRIPTION = (
    "Run a collective (all-reduce, reduce-scatter, all-gather, broadcast, all-to-all, MoE "
    "dispatch+combine) as programs of UALink memory operations on the exact switched pod; "
    "check every rank's output bit for bit against numpy; print time, algbw/busbw "
    "(nccl-tests' definitions), link utilisation and where the time went. Exit status 1 "
    "unless every rank's data is exact."
)
_SUFFIX = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30}


def byte_size(text: str) -> int:
    """``--size``: bytes, with an optional K / M / G (binary) suffix: ``1M`` = 1,048,576."""
    found = re.fullmatch(r"\s*(\d+)\s*([KMG]?)i?B?\s*", text, re.IGNORECASE)
    if found is None:
        raise argparse.ArgumentTypeError(f"expected a size like 4096, 64K or 1M, got {text!r}")
    return int(found.group(1)) * _SUFFIX[found.group(2).upper()]


def _sizes(text: str) -> list[int]:
    """``--sweep LO:HI[:FACTOR]``: sizes from LO to HI multiplying by FACTOR (default 2)."""
    parts = text.split(":")
    if len(parts) not in (2, 3):
        raise argparse.ArgumentTypeError(f"expected LO:HI or LO:HI:FACTOR, got {text!r}")
    low, high = byte_size(parts[0]), byte_size(parts[1])
    factor = int(parts[2]) if len(parts) == 3 and parts[2].isdigit() else 2
    if (len(parts) == 3 and not parts[2].isdigit()) or factor < 2 or low < 1 or high < low:
        raise argparse.ArgumentTypeError(f"expected LO <= HI and a FACTOR >= 2, got {text!r}")
    out = []
    while low <= high:
        out.append(low)
        low *= factor
    return out


def _names(text: str) -> list[str]:
    return [word.strip() for word in text.split(",") if word.strip()]


#: The option that sets each configuration field whose refusal ``collective`` reports.
_FLAGS = {"reduce_bytes_per_ns": "--reduce-rate", "links_down": "--link-down",
          "size": "--size (or --sweep)", "algo": "--algo"}


def _cmd_collective(args: argparse.Namespace) -> int:
    sizes = args.sweep if args.sweep else [args.size]
    if args.sweep:  # rounded as nccl-tests rounds its counts; sizes with no fit dropped
        fitted = [fit_size(args.op, args.accelerators, z, args.dtype) for z in args.sweep]
        sizes = list(dict.fromkeys(z for z in fitted if z is not None))
        if not sizes:
            return fail("collective", f"no size of the sweep fits {args.op} on "
                        f"{args.accelerators} ranks", USAGE)
    algos = _names(args.algo) if args.algo != "all" else list(ALGORITHMS[args.op])
    flows = args.flow_control
    if (len(algos) > 1 or len(flows) > 1) and not args.sweep:
        return fail("collective", "several algorithms or flow controls need --sweep", USAGE)
    if args.plot and not args.sweep:
        return fail("collective", "--plot draws a --sweep", USAGE)
    problem = link_down_problem(args.link_down, args.planes, args.accelerators)
    if problem is not None:
        return usage_error("collective", problem)
    try:
        runs = []
        for flow in flows or ["cbfc"]:
            pod = FabricConfig(accelerators=args.accelerators, planes=args.planes,
                               lanes=args.lanes, fec=args.fec, ber=args.ber,
                               flow_control=cast(FlowControlMode, flow),  # parsed choice
                               max_outstanding=args.max_outstanding, seed=args.seed,
                               links_down=tuple(args.link_down))
            check = check_collective if args.fidelity == "exact" else check_schedule
            for algo in algos or [""]:  # checked now, built one at a time below (memory)
                runs += [(pod, check(args.op, algo, args.accelerators, size, args.dtype),
                          size) for size in sizes]
        run_config = RunConfig(reduce_bytes_per_ns=args.reduce_rate)
    except ConfigError as exc:
        return config_usage_error("collective", exc, _FLAGS)
    if args.fidelity == "fast":
        return _fast(args, runs)
    reports = []
    for pod, algo, size in runs:
        try:
            collective = build(args.op, algo, args.accelerators, size, args.dtype,
                               seed=args.seed)
        except ConfigError as exc:  # what only the routing shows (an MoE hot expert)
            return config_usage_error("collective", exc, _FLAGS)
        bar = progress_bar(collective.ranks, not args.no_progress)
        try:
            run = run_collective(collective, pod, run_config,
                                 bar.update if bar is not None else None)
        finally:
            if bar is not None:
                bar.close()
        reports.append(make_report(run))
    if args.json:
        data: Any = [r.as_dict() for r in reports] if args.sweep else reports[0].as_dict()
        print(json.dumps(data, indent=1, sort_keys=True))
    elif args.sweep:
        print(sweep_table(reports))
    else:
        print(reports[0].format())
    if args.plot:
        try:
            plot_sweep(reports, Path(args.plot))
        except ImportError:
            return fail("collective", "--plot needs matplotlib: pip install 'ualink_ref[plot]'")
        print(f"wrote {args.plot}", file=sys.stderr)
    return 0 if all(r.exact for r in reports) else 1


def _fast(args: argparse.Namespace, runs: list[tuple[FabricConfig, str, int]]) -> int:
    """``--fidelity fast``: time each run on the fast fidelity (specs/fast.md); no data, so
    the exit status is 0 once every run has its figures; what it cannot be trusted on is
    printed as warnings on stderr (rule V3)."""
    if args.link_down:
        return usage_error("collective", "argument --link-down: the fast fidelity models "
                                         "no link faults (use --fidelity exact)")
    reports = []
    for pod, algo, size in runs:
        try:
            reports.append(fast_collective(args.op, algo, size, pod, args.reduce_rate,
                                           args.dtype, args.seed))
        except ConfigError as exc:
            return config_usage_error("collective", exc, _FLAGS)
    if args.json:
        rows = [r.as_dict() for r in reports]
        print(json.dumps(rows if args.sweep else rows[0], indent=1, sort_keys=True))
    elif args.sweep:
        print(fast_sweep_table(reports))
    else:
        print(reports[0].format())
    if args.json or args.sweep:  # the text report prints its own warnings
        for why in dict.fromkeys(w for r in reports for w in r.untrusted):
            print(f"ualink-ref collective: warning: fast fidelity not to be trusted here: "
                  f"{why}", file=sys.stderr)
    if args.plot:
        try:
            plot_sweep(reports, Path(args.plot))  # type: ignore[arg-type]  # same fields
        except ImportError:
            return fail("collective", "--plot needs matplotlib: pip install 'ualink_ref[plot]'")
        print(f"wrote {args.plot}", file=sys.stderr)
    return 0


def register(sub: Any) -> None:
    """Add the ``collective`` subcommand."""
    p = add_command(sub, "collective", DESCRIPTION)
    p.add_argument("--op", choices=tuple(ALGORITHMS), default="all-reduce",
                   help="operation (default all-reduce)")
    p.add_argument("--algo", default="",
                   help="algorithm, one of the --op's, or a comma list / 'all' with --sweep: "
                        + "; ".join(
                       f"{op}: {', '.join(a)}" for op, a in ALGORITHMS.items())
                   + " (default: the first)")
    p.add_argument("--accelerators", type=_int_at_least(2, 1024), default=8, metavar="N",
                   help="ranks, one per accelerator, 2..1024 (default 8)")
    p.add_argument("--size", type=byte_size, default=1 << 20,
                   help="bytes, nccl-tests' size of the operation (e.g. 4096, 64K, 1M), a "
                        "positive multiple of the element size (default 1M)")
    p.add_argument("--sweep", type=_sizes, metavar="LO:HI[:FACTOR]",
                   help="a size sweep from LO to HI bytes, FACTOR >= 2 (default 2), printed as "
                        "an nccl-tests table (default: one --size)")
    p.add_argument("--dtype", choices=tuple(DTYPES), default="float32",
                   help="element type (default float32)")
    p.add_argument("--planes", type=_int_at_least(1, 16), default=1, metavar="P",
                   help="parallel switch planes, 1..16 (default 1)")
    p.add_argument("--lanes", type=int, choices=LANE_COUNTS, default=1,
                   help="lanes per link (default 1)")
    p.add_argument("--flow-control", type=choice_list(FLOW_CONTROLS), default=["cbfc"],
                   metavar="LIST",
                   help=f"credit-based or priority pause: one of {', '.join(FLOW_CONTROLS)}, "
                        "or a comma list with --sweep (default cbfc)")
    p.add_argument("--fec", choices=FEC_MODES, default="kp4", help="FEC mode (default kp4)")
    p.add_argument("--ber", type=float_range(0.0, 0.5), default=0.0,
                   help="pre-FEC bit error ratio of every link, 0..0.5 (default 0)")
    p.add_argument("--max-outstanding", type=_int_at_least(1, 1_000_000), default=256,
                   metavar="N", help="operations in flight per accelerator, 1..1000000 "
                                     "(default 256)")
    p.add_argument("--reduce-rate", type=float_range(0.0, 1e9, above=True),
                   default=RunConfig().reduce_bytes_per_ns, metavar="BYTES_PER_NS",
                   help="local reduction rate, bytes/ns, in (0, 1e9] (default 1000)")
    p.add_argument("--seed", type=_int_at_least(0, 2**32 - 1), default=0,
                   help="seed of data and channels, 0..2^32-1 (default 0)")
    add_link_down_option(p)  # the syntax and parser `fabric --link-down` has (rule F11)
    p.add_argument("--fidelity", choices=("exact", "fast"), default="exact",
                   help="exact: the bit-exact pod, every rank's data checked; fast: the "
                        "timing model validated against it (specs/fast.md), no data, for "
                        "pods and sizes the exact pod cannot run (default exact)")
    p.add_argument("--plot", type=plot_path, metavar="FILE",
                   help="with --sweep: busbw against size, one line per algorithm "
                        "(.png/.svg/.pdf; default: none)")
    p.add_argument("--json", action="store_true", help="print the report as JSON "
                                                        "(default: text)")
    add_progress_option(p)
    p.set_defaults(func=_cmd_collective)


__all__ = ["byte_size", "register"]
