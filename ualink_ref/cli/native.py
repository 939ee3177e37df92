"""``ualink-ref native ...``: whether the TL and DL engines run compiled, and building them."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from ualink_ref import _native
from ualink_ref._native import build
from ualink_ref.cli.commands import add_action, add_actions

#: The subcommand's ``--help`` description.
DESCRIPTION = (
    "The optional native build: the TL and DL engines' modules compiled with mypyc, built by "
    "`pip install` when a C compiler is there. The interpreted modules are the "
    "reference and give the same results. UALINK_REF_NO_NATIVE=1 runs them even "
    "when the build is there."
)


def _cmd_status(args: argparse.Namespace) -> int:
    current = _native.status()
    state = "active" if current.active else "inactive"
    print(f"native TL and DL engines: {state} ({current.reason})")
    for name in current.modules:
        print(f"  {name}")
    return 0


def _cmd_build(args: argparse.Namespace) -> int:
    # The folder holding the installed ``ualink_ref`` package: the build goes beside it.
    root = Path(build.__file__).resolve().parents[2]
    try:
        native = build.build(root, verbose=args.verbose)
    # mypyc, setuptools and the C compiler raise their own kinds; mypyc exits on a type error.
    except (Exception, SystemExit) as exc:
        print(f"error: the native build failed: {exc!r}", file=sys.stderr)
        if isinstance(exc, ImportError):
            print("  (it needs mypy, which brings mypyc: pip install mypy)", file=sys.stderr)
        return 1
    print(f"built the native TL and DL engines in {native}; new processes use it")
    return 0


def register(sub: Any) -> None:
    """Add the ``native`` command to the ``ualink-ref`` parser."""
    actions = add_actions(sub, "native", DESCRIPTION)
    add_action(
        actions, "status", _cmd_status,
        "say whether the compiled engines run, and why",
        "Print whether this process would run the compiled engines, the reason "
        "(not built, stale after a source edit, turned off, ...) and its modules.",
    )
    build_parser = add_action(
        actions, "build", _cmd_build,
        "compile the engines with mypyc now (needs mypy and a C compiler)",
        "Compile the engines' modules with mypyc into the installed package "
        "(ualink_ref/_native), replacing any earlier build. Needed after editing "
        "an engine module in an editable install: until then it runs interpreted.",
    )
    build_parser.add_argument("--verbose", action="store_true", help="print mypyc's output")
