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
import os
import sys
from collections.abc import Sequence

from ualink_ref import __version__
from ualink_ref.cli.commands import COMMAND_MODULES as COMMAND_MODULES
from ualink_ref.cli.commands import COMMANDS
from ualink_ref.cli.options import FAILURE, INTERRUPTED, Parser
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
    parser = Parser(
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
    """Entry point of the ``ualink-ref`` console script.

    Exit status: 0 success, 1 failure while running, 2 usage error (a bad
    argument, reported by the parser before anything runs), 130 Ctrl-C. Every
    error is one line ``ualink-ref <command>: error: <what>`` on stderr, never a
    traceback (set ``UALINK_REF_TRACEBACK=1`` to see one for an unexpected error).
    """
    words = list(sys.argv[1:] if argv is None else argv)
    command = "ualink-ref"
    try:
        parser = build_parser(words)
        args = parser.parse_args(words)
        command = f"ualink-ref {args.command}"
        code: int = args.func(args)
    except KeyboardInterrupt:  # Ctrl-C: quietly, with the shell's status for SIGINT
        print(file=sys.stderr)
        return INTERRUPTED
    except UALinkError as exc:
        where = "".join(f" ({note})" for note in getattr(exc, "__notes__", ()))
        print(f"{command}: error: {exc}{where}", file=sys.stderr)
        return FAILURE
    except BrokenPipeError:  # e.g. `ualink-ref dissect ... | head`: the reader has gone
        _silence_stdout()
        return 0
    except MemoryError:
        print(f"{command}: error: out of memory (try a smaller run: fewer --ops)",
              file=sys.stderr)
        return FAILURE
    except OSError as exc:  # e.g. --out names a file, or a directory we may not write
        print(f"{command}: error: {exc}", file=sys.stderr)
        return FAILURE
    except Exception as exc:  # a bug: still one line, and how to see the traceback
        if os.environ.get("UALINK_REF_TRACEBACK"):
            raise
        print(f"{command}: error: internal error {type(exc).__name__}: {exc} (a bug: please "
              "report it; UALINK_REF_TRACEBACK=1 shows the traceback)", file=sys.stderr)
        return FAILURE
    return code


def _silence_stdout() -> None:
    """Point stdout at /dev/null so the flush at exit does not report the broken pipe."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):  # stdout without a file descriptor (tests): nothing to do
        pass
