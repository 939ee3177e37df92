"""``ualink-ref compare``: RoCEv2 vs ualink_ref wire efficiency, op by op and size by size."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from ualink_ref.cli.commands import add_command
from ualink_ref.compare import four as F
from ualink_ref.compare import report as R
from ualink_ref.compare.mapping import PMTUS
from ualink_ref.compare.plot import plot_report

#: The subcommand's ``--help`` description.
DESCRIPTION = (
    "Encode the same operations as RoCEv2 frames (built with Scapy) and through the "
    "ualink_ref stack (measured by running it), and print the bytes each way, the "
    "efficiency (useful payload / bytes) of both, and their ratio; then a mixed "
    "workload as one headline figure and the literature figures. Byte counts are "
    "on the wire after FEC (--level wire, default) or at the MAC (--level mac); "
    "the output says which. See specs/rocev2-comparison.md."
)


def _positive(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError("must be at least 1")
    return value


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
    try:
        rep = R.build_report(pmtu=args.pmtu, ip=args.ip, fec=args.fec, repeat=args.repeat,
                             seed=args.seed)
    except RuntimeError as exc:  # Scapy missing: say how to get it
        print(f"ualink-ref compare: {exc}", file=sys.stderr)
        return 2

    rows = F.four_rows(rep)
    head = F.four_headline(rep, seed=args.seed)
    lat = F.latency_rows(rows, fec=args.fec, cable_m=args.cable_m, hops=args.hops)
    if args.json:
        import json

        doc = json.loads(R.render_json(rep, args.level))
        doc["four_protocols"] = F.as_json(rows, head, lat)
        sys.stdout.write(json.dumps(doc, indent=2) + "\n")
    elif args.csv:
        sys.stdout.write(_csv(rep, rows, args.level))
    else:
        sys.stdout.write(R.render_text(rep, args.level, breakdown=args.breakdown))
        sys.stdout.write(F.render_text(rep, rows, head, lat, args.level))
    if args.plot:
        try:
            plot_report(rep, Path(args.plot), args.level, rows=rows, latency=lat)
        except ImportError:
            print("ualink-ref compare: --plot needs matplotlib: pip install 'ualink_ref[plot]'",
                  file=sys.stderr)
            return 2
        except OSError as exc:  # e.g. a directory that does not exist
            print(f"ualink-ref compare: cannot write {args.plot}: {exc.strerror or exc}",
                  file=sys.stderr)
            return 2
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
    p.add_argument("--repeat", type=_positive, default=64, metavar="N",
                   help="operations streamed through the ualink stack per row (default 64)")
    p.add_argument("--cable-m", type=float, default=2.0, metavar="M",
                   help="cable length per link for the latency table (default 2 m, 5 ns/m)")
    p.add_argument("--hops", type=int, default=1, choices=range(0, 8), metavar="N",
                   help="switches between the endpoints in the latency table (default 1)")
    p.add_argument("--seed", type=int, default=0, help="seed of the mixed workload's order")
    fmt = p.add_mutually_exclusive_group()
    fmt.add_argument("--csv", action="store_true", help="print CSV instead of a table")
    fmt.add_argument("--json", action="store_true", help="print JSON instead of a table")
    p.add_argument("--breakdown", action="store_true",
                   help="after each row, the ualink TL flits dissected field by field")
    p.add_argument("--plot", metavar="FILE.png",
                   help="also draw efficiency vs payload size (needs matplotlib)")
    p.set_defaults(func=_cmd_compare)
