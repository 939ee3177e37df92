"""``ualink-ref dissect``: read a capture with the project's own decoders (no Scapy)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from ualink_ref.capture.dissect import HEADING, Filter, dissect_records, render, summarize
from ualink_ref.capture.format import DIRECTIONS, read_capture
from ualink_ref.cli.commands import add_command
from ualink_ref.tl.fields import COMMANDS

#: The subcommand's ``--help`` description.
DESCRIPTION = (
    "Dissect a ualink_ref capture (link type 147, see specs/capture.md) with the "
    "project's own decoders: one line per DL flit, -v for every field, then a summary."
)


def _cmd_dissect(args: argparse.Namespace) -> int:
    try:
        records = read_capture(Path(args.file))
    except OSError as exc:
        print(f"ualink-ref dissect: cannot read {args.file}: {exc.strerror or exc}",
              file=sys.stderr)
        return 2
    flt = Filter(direction=args.direction, seq=args.seq, command=args.command)
    flits = dissect_records(records)
    shown = [f for f in flits if flt.matches(f)]
    if not args.summary_only:
        print(HEADING)
        for flit in shown:
            print(render(flit, verbose=args.verbose))
    if not args.no_summary:
        if not args.summary_only:
            print()
        print(summarize(flits, shown=sum(1 for f in shown if not f.fec_only)))
    return 0


def _command(text: str) -> str:
    """A ``--command`` value: a UPLI command name (any case), ``Response``, or ``cmd0xNN``.

    Checked, because a misspelt name would otherwise silently match nothing.
    """
    import re


    names = [*COMMANDS.values(), "Response"]
    want = text.lower()
    if want in (n.lower() for n in names) or re.fullmatch(r"cmd0x[0-9a-f]{2}", want):
        return text
    raise argparse.ArgumentTypeError(
        f"unknown command {text!r}; one of {', '.join(names)} (any case), or cmd0xNN"
    )


def register(sub: Any) -> None:
    """Add the ``dissect`` subcommand."""
    p = add_command(sub, "dissect", DESCRIPTION)
    p.add_argument("file", metavar="FILE", help="capture file (.pcap or .pcapng)")
    p.add_argument("-v", "--verbose", action="store_true", help="print every field of every flit")
    p.add_argument("--direction", choices=sorted(DIRECTIONS.values()),
                   help="only flits sent in this direction")
    p.add_argument("--seq", type=int, metavar="N", help="only DL flits with sequence number N")
    p.add_argument("--command", metavar="CMD", type=_command,
                   help="only flits carrying this UPLI command (e.g. Read, WriteFull, AtomicR)")
    p.add_argument("--summary-only", action="store_true", help="print only the summary")
    p.add_argument("--no-summary", action="store_true", help="do not print the summary")
    p.set_defaults(func=_cmd_dissect)
