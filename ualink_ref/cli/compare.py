"""``ualink-ref compare``: RoCEv2 vs ualink_ref wire efficiency, op by op and size by size."""

from __future__ import annotations

import argparse
import sys
import textwrap
from pathlib import Path
from typing import Any

from ualink_ref.cli.commands import add_command
from ualink_ref.cli.options import fail, float_range, int_range, plot_path
from ualink_ref.compare import fabric_latency as FL
from ualink_ref.compare import four as F
from ualink_ref.compare import report as R
from ualink_ref.compare.mapping import PMTUS
from ualink_ref.compare.plot import plot_report
from ualink_ref.sim.fabric import FLOW_CONTROLS
from ualink_ref.sim.workloads import PATTERNS

#: The subcommand's ``--help`` description.
DESCRIPTION = (
    "Encode the same operations as RoCEv2 frames (built with Scapy) and through the "
    "ualink_ref stack (measured by running it), and print the bytes each way, the "
    "efficiency (useful payload / bytes) of both, and their ratio; then a mixed "
    "workload as one headline figure and the literature figures. Byte counts are "
    "on the wire after FEC (--level wire, default) or at the MAC (--level mac); "
    "the output says which. See specs/rocev2-comparison.md."
)


#: Default of ``--repeat``: the figures in specs/ and docs/compare.md are for it.
DEFAULT_REPEAT = 64
#: Width of ``--narrow`` output, columns.
NARROW = 100


def _fit(text: str, width: int) -> str:
    """Wrap every line longer than ``width`` (prose), keeping its indent plus two spaces."""
    out = []
    for line in text.split("\n"):
        if len(line) <= width:
            out.append(line)
            continue
        indent = " " * (len(line) - len(line.lstrip()))
        out.append(textwrap.fill(line.strip(), width, initial_indent=indent,
                                 subsequent_indent=indent + "  ", break_on_hyphens=False))
    return "\n".join(out)


def _csv(rep: Any, rows: Any, level: str) -> str:
    """The RoCEv2/ualink CSV with the SUE/UET columns appended to every row."""
    import csv
    import io


    base = list(csv.DictReader(io.StringIO(R.render_csv(rep, level))))
    extra = F.as_json(rows, {}, [])["rows"]
    out = io.StringIO()
    merged = [{**b, **{k: v for k, v in e.items() if k.startswith(("sue", "uet"))}}
              for b, e in zip(base, extra, strict=True)]
    writer = csv.DictWriter(out, fieldnames=list(merged[0]), lineterminator="\n")
    writer.writeheader()
    writer.writerows(merged)
    return out.getvalue()


def _cmd_compare(args: argparse.Namespace) -> int:
    try:  # the frames are built with Scapy, an optional extra
        from ualink_ref.scapy import roce as scapy_roce
        from ualink_ref.scapy import scaleup as scapy_scaleup
    except ModuleNotFoundError as exc:
        if (exc.name or "").split(".")[0] != "scapy":
            raise  # a real import bug must not pass for a missing extra
        return fail("compare", "the frames are built with Scapy, which is not installed: "
                               "pip install 'ualink_ref[scapy]'")
    rep = R.build_report(scapy_roce.count_mapping, pmtu=args.pmtu, ip=args.ip, fec=args.fec,
                         repeat=args.repeat, seed=args.seed)

    if args.repeat != DEFAULT_REPEAT:  # the per-row ualink figures depend on it: say so
        note = (f"note: --repeat {args.repeat}: each row's ualink bytes are per-op averages over "
                f"{args.repeat} streamed ops, so they differ from the default "
                f"({DEFAULT_REPEAT}): a DL flit carrying few ops and the acks weigh more per op "
                "when N is small, less when large. The mixed-workload headline does not "
                "depend on --repeat.")
        print(_fit(note, NARROW), file=sys.stderr)
    rows = F.four_rows(rep, scapy_scaleup.count_op)
    head = F.four_headline(rep, scapy_scaleup.count_op, seed=args.seed)
    lat = F.latency_rows(rows, fec=args.fec, cable_m=args.cable_m, hops=args.hops)
    measured = FL.measure(fec=args.fec, cable_m=args.cable_m, loaded=args.loaded,
                          load=args.load, accelerators=args.loaded_accelerators,
                          pattern=args.pattern, ops=args.loaded_ops,
                          flow_control=args.flow_control, seed=args.seed)
    if args.json:
        import json

        doc = json.loads(R.render_json(rep, args.level))
        doc["four_protocols"] = F.as_json(rows, head, lat)
        doc["four_protocols"]["ualink_fabric_latency"] = FL.as_json(measured)
        sys.stdout.write(json.dumps(doc, indent=2) + "\n")
    elif args.csv:
        sys.stdout.write(_csv(rep, rows, args.level))
    else:
        text = (R.render_text(rep, args.level, breakdown=args.breakdown, narrow=args.narrow)
                + F.render_text(rep, rows, head, lat, args.level) + FL.render_text(measured))
        sys.stdout.write(_fit(text, NARROW) if args.narrow else text)
    if args.plot:
        try:
            plot_report(rep, Path(args.plot), args.level, rows=rows, latency=lat)
        except ImportError:
            return fail("compare", "--plot needs matplotlib: pip install 'ualink_ref[plot]'")
        except OSError as exc:  # e.g. a directory that does not exist
            return fail("compare", f"cannot write {args.plot}: {exc.strerror or exc}")
        print(f"wrote {args.plot}", file=sys.stderr)
    return 0


def register(sub: Any) -> None:
    """Add the ``compare`` subcommand."""
    p = add_command(sub, "compare", DESCRIPTION)
    p.add_argument("--pmtu", type=int, default=1024, choices=PMTUS,
                   help="RoCEv2 path MTU (default 1024)")
    p.add_argument("--ip", choices=("ipv4", "ipv6"), default="ipv4",
                   help="RoCEv2 network header (default ipv4)")
    p.add_argument("--level", choices=("wire", "mac"), default="wire",
                   help="accounting level of the byte columns (default: wire, after FEC)")
    p.add_argument("--fec", choices=("kp4", "ll"), default="kp4",
                   help="ualink FEC mode for the wire level (default kp4 = RS(544,514))")
    p.add_argument("--repeat", type=int_range(1, 100_000), default=DEFAULT_REPEAT, metavar="N",
                   help="operations streamed through the ualink stack per row (default "
                        f"{DEFAULT_REPEAT}); the rows' ualink figures depend on it (a note "
                        "says so when it is not the default), the mixed headline does not")
    p.add_argument("--cable-m", type=float_range(0.0, 100_000.0), default=2.0, metavar="M",
                   help="cable length per link for the latency table (default 2 m, 5 ns/m)")
    p.add_argument("--hops", type=int, default=1, choices=range(0, 8), metavar="N",
                   help="switches between the endpoints in the latency table (default 1)")
    p.add_argument("--seed", type=int_range(0), default=0,
                   help="seed of the mixed workload's order (and of the --loaded run)")
    p.add_argument("--loaded", action="store_true",
                   help="also measure loaded ualink p50/p99 on a small fabric run per op "
                        "(64 B Loads, then Stores; the zero-load figure is always measured)")
    p.add_argument("--load", type=float_range(0, 4, above=True), default=0.5, metavar="F",
                   help="--loaded: offered load per source, fraction of a link (default 0.5)")
    p.add_argument("--loaded-accelerators", type=int_range(2, 1024), default=8, metavar="N",
                   help="--loaded: accelerators in the pod (default 8)")
    p.add_argument("--loaded-ops", type=int_range(1), default=1000, metavar="N",
                   help="--loaded: ops per run (default 1000)")
    p.add_argument("--pattern", choices=PATTERNS, default="uniform",
                   help="--loaded: traffic pattern (default uniform)")
    p.add_argument("--flow-control", choices=FLOW_CONTROLS, default="cbfc",
                   help="--loaded: cbfc (default) or pfc")
    fmt = p.add_mutually_exclusive_group()
    fmt.add_argument("--csv", action="store_true", help="print CSV instead of a table")
    fmt.add_argument("--json", action="store_true", help="print JSON instead of a table")
    p.add_argument("--narrow", action="store_true",
                   help=f"fit the text in {NARROW} columns (busy columns left out, round trips "
                        "and RoCEv2 mapping under each row, long lines wrapped)")
    p.add_argument("--breakdown", action="store_true",
                   help="after each row, the ualink TL flits dissected field by field")
    p.add_argument("--plot", metavar="FILE", type=plot_path,
                   help="also draw efficiency vs payload size, atomics and latency (needs "
                        "matplotlib) as PNG (300 dpi), SVG or PDF, as FILE's extension says")
    p.set_defaults(func=_cmd_compare)
