"""``ualink-ref vectors``: generate and verify golden vectors (specs/vectors.md)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from ualink_ref.cli.commands import add_command
from ualink_ref.testing import vectors
from ualink_ref.testing.export import export, model_documents

#: The subcommand's ``--help`` description.
DESCRIPTION = "Golden vectors for every layer, as canonical JSON (see specs/vectors.md)."


def _cmd_vectors_generate(args: argparse.Namespace) -> int:
    layers = args.layer or None
    paths = vectors.generate(Path(args.out), layers)
    for path in paths:
        print(path)
    print(f"wrote {len(paths)} file(s) to {args.out}")
    return 0


def _cmd_vectors_verify(args: argparse.Namespace) -> int:
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


def _cmd_vectors_export(args: argparse.Namespace) -> int:
    paths = export(Path(args.out), args.format, model_documents(args.layer or None))
    print(f"wrote {len(paths)} {args.format} file(s) to {args.out}")
    return 0


def register(sub: Any) -> None:
    """Add the ``vectors`` command (generate / verify)."""

    vec = add_command(sub, "vectors", DESCRIPTION)
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
        choices=list(vectors.LAYER_MODULES),
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
    exp = vsub.add_parser(
        "export",
        help="write the vectors as $readmemh (memh) or CSV files for an HDL testbench",
        description="Stimulus, expected-response and index files per layer (specs/difftest.md).",
    )
    exp.add_argument("--format", required=True, choices=["memh", "csv"])
    exp.add_argument("--out", required=True, metavar="DIR", help="directory to write into")
    exp.add_argument("--layer", action="append", choices=list(vectors.LAYER_MODULES),
                     help="only this layer (repeatable; default: all)")
    exp.set_defaults(func=_cmd_vectors_export)
