"""``ualink-ref dissect``: read a capture with the project's own decoders (no Scapy).

It streams: each record is read, dissected and printed before the next is read,
so the first lines come at once and ``| head`` stops it early. A packet that is
not a valid record is marked in place, named (file, packet, offset) on stderr and
counted, and reading goes on; the exit status is then 1 (``--strict``: stop at
the first). A file cut short prints every record before the cut, then the error;
one that yields no record at all (not a capture, empty, cut inside its first
record) gives the error line alone: no heading, no empty summary (rule D3).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from typing import IO, Any

from ualink_ref.capture.dissect import DissectedFlit, Dissector
from ualink_ref.capture.format import DIRECTIONS, BadRecord, iter_capture_tolerant
from ualink_ref.capture.listing import (
    FIELDS,
    HEADING,
    Filter,
    Summary,
    as_dict,
    field_text,
    render,
)
from ualink_ref.cli.commands import add_command
from ualink_ref.cli.options import fail, int_range
from ualink_ref.errors import DecodeError, TruncatedError
from ualink_ref.tl.fields import COMMANDS

#: The subcommand's ``--help`` description.
DESCRIPTION = (
    "Dissect a ualink_ref capture (link type 147, see specs/capture.md) with the "
    "project's own decoders: one line per DL flit, -v for every field, then a summary. "
    "Streams (the first lines come at once; FILE may be - for stdin); a bad record is "
    "marked, named on stderr with its file offset and counted, and reading goes on "
    "(exit status 1 at the end; --strict stops at the first). --json writes JSON Lines, "
    "--fields a,b,c tab-separated columns."
)


class _Output:
    """Writes the chosen form (text, JSON Lines or fields) of flits and bad records."""

    def __init__(self, args: argparse.Namespace, name: str, out: IO[str]) -> None:
        self.args, self.name, self.out = args, name, out
        self.shown = 0  # flits written (not counting raw-codeword views)
        self.lines = 0  # flits and bad records written (what -c counts)
        self.records = 0  # packets read from the file (records and bad records)
        #: Whether the text table's heading is due (written once, before its first line).
        self.heading_due = not (args.json or args.fields or args.summary_only)

    def heading(self) -> None:
        """The text table's heading, the first time it is asked for."""
        if self.heading_due:
            self.heading_due = False
            self.out.write(HEADING + "\n")

    def flit(self, f: DissectedFlit) -> None:
        a = self.args
        if a.json:
            self.out.write(json.dumps(as_dict(f)) + "\n")
        elif a.fields:
            self.out.write("\t".join(field_text(v) for v in as_dict(f, a.fields).values()) + "\n")
        elif not a.summary_only:
            self.heading()
            self.out.write(render(f, verbose=a.verbose) + "\n")
        self.shown += not f.fec_only
        self.lines += 1

    def bad(self, bad: BadRecord) -> None:
        where = f"packet {bad.index} at file offset {bad.offset}"
        print(f"ualink-ref dissect: error: {self.name}: {where}: {bad.error}", file=sys.stderr)
        a = self.args
        if a.json:
            self.out.write(json.dumps({"index": bad.index, "offset": bad.offset,
                                       "bad_record": True, "error": bad.error}) + "\n")
        elif not a.fields and not a.summary_only:
            self.heading()
            self.out.write(f"{bad.index:5d}       - BAD RECORD at file offset {bad.offset}: "
                           f"{bad.error}\n")
        self.lines += 1


def _cmd_dissect(args: argparse.Namespace) -> int:
    name = "<stdin>" if args.file == "-" else args.file
    try:
        stream = sys.stdin.buffer if args.file == "-" else open(args.file, "rb")  # noqa: SIM115
    except OSError as exc:
        return fail("dissect", f"cannot read {args.file}: {exc.strerror or exc}", 2)
    flt = Filter(direction=args.direction, seq=args.seq, command=args.command,
                 crc_errors=args.crc_errors, slots=args.slots, port=args.port)
    out = _Output(args, name, sys.stdout)
    summary = Summary()
    text = not (args.json or args.fields)
    status = 0
    try:
        with stream:
            status = _run(args, stream, flt, out, summary)
    except DecodeError as exc:  # the file's framing: nothing after this can be found
        where = "".join(f" ({note})" for note in getattr(exc, "__notes__", ()))
        cut = "file cut short: " if isinstance(exc, TruncatedError) else ""
        sys.stdout.flush()
        status = fail("dissect", f"{name}: {cut}{exc}{where}")
        if not out.records:  # not a capture (or none of it readable): the error alone
            return status
    if text and not args.no_summary:
        if not args.summary_only:
            out.heading()  # a capture with nothing shown still gets its (empty) table
            print()
        print(summary.render(shown=out.shown))
    if summary.bad_records:
        sys.stdout.flush()
        status = fail("dissect", f"{name}: {summary.bad_records} bad record(s) "
                                 + ("(stopped at the first: --strict)" if args.strict
                                    else "marked and skipped"))
    return status


def _run(args: argparse.Namespace, stream: IO[bytes], flt: Filter, out: _Output,
         summary: Summary) -> int:
    """Read, dissect and write until the input ends, ``-c`` is reached or ``--strict`` stops."""
    dissector = Dissector()
    records = iter_capture_tolerant(stream)
    while True:
        item = next(records, None)
        out.records += item is not None
        items = dissector.finish() if item is None else dissector.feed(*item)
        for thing in items:
            if isinstance(thing, BadRecord):
                summary.bad_records += 1
                out.bad(thing)
                if args.strict:
                    return 1
            else:
                summary.add(thing)
                if flt.matches(thing):
                    out.flit(thing)
            if args.count is not None and out.lines >= args.count:
                return 0
        if item is None:
            return 0


def _command(text: str) -> str:
    """A ``--command`` value: a UPLI command name (any case), ``Response``, or ``cmd0xNN``.

    Checked, because a misspelt name would otherwise silently match nothing.
    """
    names = [*COMMANDS.values(), "Response"]
    want = text.lower()
    if want in (n.lower() for n in names) or re.fullmatch(r"cmd0x[0-9a-f]{2}", want):
        return text
    raise argparse.ArgumentTypeError(
        f"unknown command {text!r}; one of {', '.join(names)} (any case), or cmd0xNN"
    )


def _fields(text: str) -> list[str]:
    """``--fields a,b,c``: names of :data:`~ualink_ref.capture.listing.FIELDS`, checked."""
    names = [n.strip() for n in text.split(",") if n.strip()]
    unknown = [n for n in names if n not in FIELDS]
    if unknown or not names:
        raise argparse.ArgumentTypeError(
            f"unknown field(s) {', '.join(unknown) or '(none given)'}; one of {', '.join(FIELDS)}")
    return names


def _slots(text: str) -> tuple[int | None, int | None]:
    """``--slots A:B`` (inclusive; either end may be left out) or ``--slots N``."""
    first, sep, last = text.partition(":")
    try:
        lo = int(first) if first else None
        hi = (int(last) if last else None) if sep else lo
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected A:B, A:, :B or N, got {text!r}") from None
    if (lo is not None and lo < 0) or (hi is not None and hi < 0) or (
            lo is not None and hi is not None and hi < lo):
        raise argparse.ArgumentTypeError(f"expected 0 <= A <= B, got {text!r}")
    return lo, hi


def register(sub: Any) -> None:
    """Add the ``dissect`` subcommand."""
    p = add_command(sub, "dissect", DESCRIPTION)
    p.add_argument("file", metavar="FILE", help="capture file (.pcap or .pcapng), or - for stdin")
    p.add_argument("-v", "--verbose", action="store_true", help="print every field of every flit")
    form = p.add_mutually_exclusive_group()
    form.add_argument("--json", action="store_true",
                      help="one JSON object per flit (JSON Lines); bad records as "
                           '{"bad_record": true, ...}; no summary')
    form.add_argument("--fields", type=_fields, metavar="A,B,C",
                      help="tab-separated columns of these fields per flit (the --json keys: "
                           + ", ".join(FIELDS) + ")")
    p.add_argument("--direction", choices=sorted(DIRECTIONS.values()),
                   help="only flits sent in this direction")
    p.add_argument("--port", type=int_range(0, 255), metavar="N",
                   help="only flits whose sender's port (pseudo-header) is N")
    p.add_argument("--slots", type=_slots, metavar="A:B",
                   help="only flits recorded in slots A to B (inclusive; A: or :B open)")
    p.add_argument("--crc-errors", action="store_true", help="only flits that fail their CRC")
    p.add_argument("--seq", type=int_range(0, 511), metavar="N",
                   help="only DL flits with sequence number N")
    p.add_argument("--command", metavar="CMD", type=_command,
                   help="only flits carrying this UPLI command (e.g. Read, WriteFull, AtomicR)")
    p.add_argument("-c", "--count", type=int_range(1), metavar="N",
                   help="stop after writing N lines (flits or bad records)")
    p.add_argument("--strict", action="store_true",
                   help="stop at the first bad record instead of marking it and going on")
    p.add_argument("--summary-only", action="store_true", help="print only the summary")
    p.add_argument("--no-summary", action="store_true", help="do not print the summary")
    p.set_defaults(func=_cmd_dissect)


__all__ = ["register"]
