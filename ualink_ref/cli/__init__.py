"""The ``ualink-ref`` command line: a thin adapter over the sans-IO library.

One module per subcommand (``ualink_ref.cli.<module>``), each exposing
``register(subparsers)``, which adds its parser and sets ``func`` (taking the
parsed namespace, returning an exit code). Only the module of the subcommand
being run is imported: ``ualink-ref --help`` lists the commands from
:data:`COMMANDS` alone, so it imports neither numpy nor any layer.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

from ualink_ref import __version__
from ualink_ref.cli.commands import COMMAND_MODULES as COMMAND_MODULES
from ualink_ref.cli.commands import COMMANDS
from ualink_ref.errors import UALinkError


def _chosen(argv: Sequence[str]) -> str | None:
    """The subcommand named on the command line (the first word that is one), if any."""
    for word in argv:
        if word in COMMANDS:
            return word
        if not word.startswith("-"):
            return None
    return None


def build_parser(argv: Sequence[str] | None = None) -> argparse.ArgumentParser:
    """The ``ualink-ref`` parser, with the full options of the subcommand in ``argv``.

    Without ``argv`` every subcommand is registered in full (for documentation
    and tests); with it, only the chosen subcommand's module is imported and
    the others get a placeholder that still shows in ``--help``.
    """
    parser = argparse.ArgumentParser(
        prog="ualink-ref",
        description=(
            "Reference model of a UALink-style scale-up interconnect: golden vectors, "
            "FEC tables, link simulation, captures and dissection."
        ),
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    chosen = None if argv is None else _chosen(argv)
    for name, (module, help_text) in COMMANDS.items():
        if argv is None or name == chosen:
            importlib.import_module(f"ualink_ref.cli.{module}").register(sub)
        else:
            sub.add_parser(name, help=help_text)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``ualink-ref`` console script."""
    words = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser(words)
    args = parser.parse_args(words)
    try:
        code: int = args.func(args)
    except UALinkError as exc:
        where = "".join(f" ({note})" for note in getattr(exc, "__notes__", ()))
        print(f"ualink-ref: error: {exc}{where}", file=sys.stderr)
        return 1
    except BrokenPipeError:  # e.g. `ualink-ref dissect ... | head`
        return 0
    except OSError as exc:  # e.g. --out names a file, or a directory we may not write
        print(f"ualink-ref: error: {exc}", file=sys.stderr)
        return 1
    return code


