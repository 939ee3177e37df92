"""``ualink-ref vectors``: generate and verify golden vectors (specs/vectors.md)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from ualink_ref.cli.commands import add_action, add_actions
from ualink_ref.cli.options import fail, float_range, int_range
from ualink_ref.errors import VectorFormatError
from ualink_ref.testing import vectors
from ualink_ref.testing.coverage import DEFAULT_THRESHOLD
from ualink_ref.testing.coverage.directory import sample_directory
from ualink_ref.testing.coverage.text import report_lines
from ualink_ref.testing.export import export, model_documents, read_documents

#: The subcommand's ``--help`` description.
DESCRIPTION = "Golden vectors for every layer, as canonical JSON (see specs/vectors.md)."


def _cmd_vectors_generate(args: argparse.Namespace) -> int:
    layers = args.layer or None
    paths = vectors.generate(Path(args.out), layers)
    for path in paths:
        print(path)
    json_files = [p for p in paths if p.suffix == ".json"]
    cases = sum(len(json.loads(p.read_text(encoding="ascii"))["cases"]) for p in json_files)
    artifacts = len(paths) - len(json_files)
    # the same count and words as `vectors verify` (each artifact is one case there too)
    print(f"wrote {cases + artifacts} case(s) in {len(json_files)} vector file(s) "
          f"and {artifacts} artifact(s) to {args.out}")
    return 0


def _cmd_vectors_verify(args: argparse.Namespace) -> int:
    try:
        report = vectors.verify_dir(Path(args.dir))
    except VectorFormatError as exc:  # not a readable directory: invalid input
        return fail("vectors verify", str(exc), 2)
    for error in report.errors:
        print(f"invalid: {error}", file=sys.stderr)
    for mismatch in report.mismatches[: args.max_report]:
        print(mismatch)
    extra = len(report.mismatches) - args.max_report
    if extra > 0:
        print(f"... and {extra} more mismatch(es)")
    print(
        f"checked {report.cases} case(s) in {len(report.files)} vector file(s) "
        f"and {len(report.artifacts)} artifact(s): "
        f"{len(report.mismatches)} mismatch(es)"
        + (f", {len(report.errors)} invalid file(s)" if report.errors else "")
    )
    if report.cases == 0 and not report.errors:
        return fail("vectors verify", f"no vector files found in {args.dir}", 2)
    return report.exit_status


def _cmd_vectors_export(args: argparse.Namespace) -> int:
    try:
        docs = (read_documents(Path(args.source), args.layer) if args.source is not None
                else model_documents(args.layer or None))
        result = export(Path(args.out), args.format, docs)
    except VectorFormatError as exc:  # the user's directory or one of its files
        return fail("vectors export", str(exc), 2)
    except OSError as exc:  # the output directory cannot be written
        return fail("vectors export", f"cannot write {args.out}: {exc.strerror or exc}", 2)
    if not result.paths:
        return fail("vectors export", f"nothing to export from {', '.join(result.skipped)} "
                    "(no byte-string or symbol fields in its kinds)", 2)
    skipped = f"; nothing to export from {', '.join(result.skipped)}" if result.skipped else ""
    print(f"wrote {len(result.paths)} {args.format} file(s) ({result.entries} entries from "
          f"{len(docs) - len(result.skipped)} vector file(s)) to {args.out}{skipped}")
    return 0


def _cmd_vectors_coverage(args: argparse.Namespace) -> int:
    try:
        sample = sample_directory(Path(args.dir))
    except VectorFormatError as exc:  # not a readable directory: invalid input
        return fail("vectors coverage", str(exc), 2)
    for error in sample.errors:
        print(f"invalid: {error}", file=sys.stderr)
    if not sample.files:
        return fail("vectors coverage", f"no vector files found in {args.dir}", 2)
    report = sample.coverage.report(select=args.select, use_waivers=not args.no_waivers)
    if not report.rows:
        return fail("vectors coverage", f"no cover point starts with {args.select!r}", 2)
    lines = report_lines(report)
    if sample.unsampled:  # before the summary line, which stays last
        lines.insert(-1, f"{sample.unsampled} case(s) of kinds without cover points "
                         "(or unreadable)")
    for line in lines:
        print(line)
    if sample.errors:
        return 2  # the sampling is incomplete, whatever it found (as `vectors verify`)
    if report.closure_percent < args.threshold:
        print(f"closure {report.closure_percent:.1f} % is below the threshold "
              f"{args.threshold:g} %")
        return 1
    return 0


def register(sub: Any) -> None:
    """Add the ``vectors`` command (generate / verify / coverage / export)."""

    vsub = add_actions(sub, "vectors", DESCRIPTION)
    gen = add_action(
        vsub, "generate", _cmd_vectors_generate, "write the golden vectors to a directory",
        "Write deterministic, byte-identical golden vectors (one JSON per layer).",
    )
    gen.add_argument("--out", required=True, metavar="DIR", help="directory to write into")
    gen.add_argument(
        "--layer",
        action="append",
        choices=list(vectors.LAYER_MODULES),
        help="only this layer (repeatable; default: all)",
    )
    ver = add_action(
        vsub, "verify", _cmd_vectors_verify, "check a directory of vectors against the model",
        "Re-compute every case of every vector file in DIR with the model and report "
        "each field that differs. Exit status 0: all match; 1: mismatches; 2: invalid "
        "input (a file or artifact unreadable or over a limit, specs/vectors.md) or "
        "nothing found.",
    )
    ver.add_argument("dir", metavar="DIR", help="directory holding <layer>.json files")
    ver.add_argument(
        "--max-report", type=int_range(0), default=50, metavar="N",
        help="print at most N mismatches"
    )
    cov = add_action(
        vsub, "coverage", _cmd_vectors_coverage,
        "functional coverage of a vectors directory: the table and the holes",
        "Sample every case (and named capture) of DIR against the cover points of "
        "specs/coverage.md: every numbered rule, every field's value classes, every error "
        "class, the crosses. Prints one line per point, the holes, the waived bins with "
        "their reasons and the figures. Exit status 0: closure (bins hit or waived) at or "
        "above the threshold; 1: below it; 2: invalid input or nothing found.",
    )
    cov.add_argument("dir", metavar="DIR", help="directory holding <layer>.json files")
    cov.add_argument(
        "--threshold", type=float_range(0.0, 100.0), default=DEFAULT_THRESHOLD, metavar="PCT",
        help=f"lowest closure accepted, percent (default {DEFAULT_THRESHOLD:g})")
    cov.add_argument("--select", default="", metavar="PREFIX",
                     help="only the points whose name starts with PREFIX (e.g. field:, rule:dl.md)")
    cov.add_argument("--no-waivers", action="store_true",
                     help="count waived bins as holes (closure = bins hit)")
    exp = add_action(
        vsub, "export", _cmd_vectors_export,
        "write the vectors as $readmemh (memh) or CSV files for an HDL testbench",
        "Stimulus and expected-response streams (bytes; 10-bit symbols for the FEC "
        "kinds) and an index per vector file (memh layout v2, specs/difftest.md). "
        "Exit status 0: written; 2: invalid input (a vector file unreadable or "
        "malformed, or none found) or the output cannot be written.",
    )
    exp.add_argument("--format", required=True, choices=["memh", "csv"])
    exp.add_argument("--out", required=True, metavar="DIR", help="directory to write into")
    exp.add_argument("--from", dest="source", metavar="DIR",
                     help="export the vector files of DIR (yours included; default: the "
                          "model's golden vectors, the same as the committed vectors/)")
    exp.add_argument("--layer", action="append", choices=list(vectors.LAYER_MODULES),
                     help="only this layer (repeatable; default: all)")
