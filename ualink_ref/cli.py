"""The ``ualink-ref`` command line: a thin adapter over the sans-IO library.

Each subcommand lives with the layer it belongs to; a module listed in
:data:`COMMAND_MODULES` exposes ``register(subparsers)`` which adds its
parser(s) and sets ``func`` (taking the parsed namespace, returning an exit
code). Modules are imported only when the command line is built, so
``import ualink_ref`` stays cheap.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ualink_ref import __version__
from ualink_ref.errors import UALinkError

#: Modules that contribute subcommands, in the order they appear in ``--help``.
COMMAND_MODULES: tuple[str, ...] = (
    "ualink_ref.phy.cli",
    "ualink_ref.dl.cli",
    "ualink_ref.sim_cli",
    "ualink_ref.compare.cli",
    "ualink_ref.capture_cli",
    "ualink_ref.wireshark_cli",
)

SubParsers = Any  # argparse's _SubParsersAction is private; keep the alias honest


def _cmd_vectors_generate(args: argparse.Namespace) -> int:
    from ualink_ref import vectors

    layers = args.layer or None
    paths = vectors.generate(Path(args.out), layers)
    for path in paths:
        print(path)
    print(f"wrote {len(paths)} file(s) to {args.out}")
    return 0


def _cmd_vectors_verify(args: argparse.Namespace) -> int:
    from ualink_ref import vectors

    report = vectors.verify_dir(Path(args.dir))
    for mismatch in report.mismatches[: args.max_report]:
        print(mismatch)
    extra = len(report.mismatches) - args.max_report
    if extra > 0:
        print(f"... and {extra} more mismatch(es)")
    print(
        f"checked {report.cases} case(s) in {len(report.files)} file(s): "
        f"{len(report.mismatches)} mismatch(es)"
    )
    if report.cases == 0:
        print(f"no vector files found in {args.dir}", file=sys.stderr)
        return 2
    return 0 if report.ok else 1


def _register_vectors(sub: SubParsers) -> None:
    from ualink_ref.vectors import LAYER_MODULES

    vec = sub.add_parser(
        "vectors",
        help="generate or verify golden test vectors",
        description="Golden vectors for every layer, as canonical JSON (see specs/vectors.md).",
    )
    vsub = vec.add_subparsers(dest="vectors_command", required=True, metavar="ACTION")
    gen = vsub.add_parser(
        "generate",
        help="write the golden vectors to a directory",
        description="Write deterministic, byte-identical golden vectors (one JSON per layer).",
    )
    gen.add_argument("--out", required=True, metavar="DIR", help="directory to write into")
    gen.add_argument(
        "--layer",
        action="append",
        choices=list(LAYER_MODULES),
        help="only this layer (repeatable; default: all)",
    )
    gen.set_defaults(func=_cmd_vectors_generate)
    ver = vsub.add_parser(
        "verify",
        help="check a directory of vectors against the model",
        description=(
            "Re-compute every case of every vector file in DIR with the model and report "
            "each field that differs. Exit status 0: all match; 1: mismatches; 2: nothing found."
        ),
    )
    ver.add_argument("dir", metavar="DIR", help="directory holding <layer>.json files")
    ver.add_argument(
        "--max-report", type=int, default=50, metavar="N", help="print at most N mismatches"
    )
    ver.set_defaults(func=_cmd_vectors_verify)


def build_parser() -> argparse.ArgumentParser:
    """Build the full ``ualink-ref`` argument parser."""
    parser = argparse.ArgumentParser(
        prog="ualink-ref",
        description=(
            "Reference model of a UALink-style scale-up interconnect: golden vectors, "
            "FEC tables, link simulation, captures and dissection."
        ),
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    _register_vectors(sub)
    for name in COMMAND_MODULES:
        importlib.import_module(name).register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``ualink-ref`` console script."""
    parser = build_parser()
    args = parser.parse_args(argv)
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


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
