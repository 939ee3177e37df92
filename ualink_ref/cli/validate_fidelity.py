"""``ualink-ref validate-fidelity``: the fast fidelity against the exact pod (specs/fast.md,
rules V1-V4), case by case, as the agreement table prints it."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from ualink_ref.cli.commands import add_command
from ualink_ref.cli.options import fail, usage_error
from ualink_ref.fast import validate as V

#: The subcommand's ``--help`` description.
DESCRIPTION = (
    "Run each case of the agreement grid (collectives x algorithms x sizes x 8/16/64 "
    "accelerators x CBFC/PFC x planes, and offered fabric loads) on the exact pod and on "
    "the fast fidelity; print the error of completion time, busbw and p99 latency per "
    "case and whether the fast fidelity trusts itself there. Exit status 1 if a trusted "
    "case is outside the bound (specs/fast.md V4). The whole grid takes about 30 minutes "
    "of the exact pod on one core; --quick runs four small cases in about a minute."
)


def _cases(text: str) -> list[int]:
    try:
        picked = [int(part) for part in text.split(",") if part]
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected case numbers like 0,3,7, got {text!r}") from None
    if not picked:
        raise argparse.ArgumentTypeError("no case numbers given")
    return picked


def _cmd(args: argparse.Namespace) -> int:
    grid = V.QUICK if args.quick else V.GRID
    if args.list:
        for i, case in enumerate(grid):
            print(f"{i:3}  {case.name}")
        return 0
    if args.cases is not None:
        bad = [i for i in args.cases if not 0 <= i < len(grid)]
        if bad:
            return usage_error("validate-fidelity", f"argument --cases: {bad[0]} is not a "
                               f"case of the grid (0..{len(grid) - 1}; see --list)")
        grid = tuple(grid[i] for i in args.cases)

    def progress(result: Any) -> None:
        if not args.no_progress:
            print(f"  {result.case.name}: time {100 * result.time_error:+.1f} %"
                  f"{'' if result.within else '  OUTSIDE THE BOUND'}", file=sys.stderr)

    results = V.validate(grid, progress)
    table = V.markdown_table(results)
    print(table)
    if args.markdown:
        try:
            Path(args.markdown).write_text(table + "\n")
        except OSError as exc:
            return fail("validate-fidelity", f"cannot write {args.markdown}: {exc.strerror}")
    outside = [r.case.name for r in results if not r.within]
    if outside:
        print(f"ualink-ref validate-fidelity: {len(outside)} trusted case(s) outside "
              f"±{100 * V.BOUND:.0f} %: {', '.join(outside)}", file=sys.stderr)
        return 1
    return 0


def register(sub: Any) -> None:
    """Add the ``validate-fidelity`` subcommand."""
    p = add_command(sub, "validate-fidelity", DESCRIPTION)
    p.add_argument("--quick", action="store_true",
                   help="the four small cases a test runs, not the published grid")
    p.add_argument("--cases", type=_cases, metavar="LIST",
                   help="only these cases of the grid, by number (see --list; default all)")
    p.add_argument("--list", action="store_true", help="list the cases and exit")
    p.add_argument("--markdown", metavar="FILE",
                   help="also write the table to FILE (default: stdout only)")
    p.add_argument("--no-progress", action="store_true",
                   help="no per-case line on stderr (default: shown)")
    p.set_defaults(func=_cmd)


__all__ = ["register"]
