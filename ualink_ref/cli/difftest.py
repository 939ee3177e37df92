"""``ualink-ref difftest``: differential fuzzing of another implementation (specs/difftest.md).

``ualink-ref difftest --layer dl --target "COMMAND"`` runs COMMAND as a
subprocess speaking the line protocol, hunts for a disagreement with the
model, shrinks the first one, prints its field-level difference and writes a
reproducer (golden-vector layout) into ``--out``. A target that crashes,
hangs or breaks the protocol is reported the same way, with the input that
caused it. ``ualink-ref difftest replay FILE --target "COMMAND"`` re-runs a
reproducer. Exit status: 0 agree, 1 disagreement, 2 usage error (a target
command that cannot be started included), 3 the target crashed, hung or
broke the line protocol.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import Any

from ualink_ref.cli.commands import add_command
from ualink_ref.cli.options import USAGE, fail, float_range, int_range
from ualink_ref.errors import ConfigError, UALinkError
from ualink_ref.testing.difftest import (
    CODECS,
    SubprocessTarget,
    difftest,
    write_reproducer,
)
from ualink_ref.testing.difftest.api import DISAGREEMENT, MAX_RESTARTS
from ualink_ref.testing.difftest.lengths import list_lines
from ualink_ref.testing.difftest.reproducer import read_reproducer, replay_cases
from ualink_ref.testing.difftest.subprocess_target import DEFAULT_TIMEOUT, split_command

SubParsers = Any
#: Exit status of each outcome (specs/difftest.md, "Exit status"); 2 is a usage error.
AGREE, DISAGREE, TARGET_FAULT = 0, 1, 3
#: A positive number of seconds (up to a day).
_seconds = float_range(0.0, 86_400.0, above=True)


def _command(text: str) -> str:
    """An argument type: a target command that splits into words (checked at parse time)."""
    try:
        split_command(text)
    except ConfigError as exc:
        raise argparse.ArgumentTypeError(str(exc).removeprefix("target: ")) from None
    return text


def _start(args: argparse.Namespace, command: str = "difftest") -> SubprocessTarget | int:
    """The target, started; or the exit status of its one-line usage error."""
    try:
        return SubprocessTarget(args.target, timeout=args.timeout,
                                startup_timeout=args.startup_timeout)
    except ConfigError as exc:
        return fail(command, f"--{exc}", USAGE)


def _out_dir(text: str) -> Path | int:
    """``--out``, created if missing and checked writable before the hunt starts (so a bad
    folder costs no run); or the exit status of its one-line usage error."""
    out = Path(text)
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:  # a file in the way (FileExistsError, NotADirectoryError), no rights
        return fail("difftest", f"--out {text}: cannot create the folder: "
                    f"{exc.strerror or exc}", USAGE)
    if not os.access(out, os.W_OK | os.X_OK):
        return fail("difftest", f"--out {text}: folder is not writable", USAGE)
    return out


def _needs_hypothesis() -> int | None:
    """The exit status of a one-line error when Hypothesis is missing (a broken install)."""
    try:
        import hypothesis  # noqa: F401  (only to see that it is there)
    except ImportError:
        return fail("difftest", "needs the hypothesis package, a dependency of ualink_ref: "
                    "pip install hypothesis")
    return None


def _cmd_run(args: argparse.Namespace) -> int:

    if args.list:
        width = max(map(len, CODECS))  # the names in one column, however long
        for name, codec in CODECS.items():
            print(f"{name:{width}} {'json' if codec.json_input else 'hex ':4} in  {codec.summary}")
            for line in list_lines(name):
                print(f"{'':{width + 5}}  {line}")
        return AGREE
    for option in ("layer", "target"):
        if not getattr(args, option):
            return fail("difftest", f"--{option} is required (--list shows the codecs; "
                        "see --help)", USAGE)
    missing = _needs_hypothesis()
    if missing is not None:
        return missing
    out = _out_dir(args.out)
    if isinstance(out, int):
        return out
    target = _start(args)
    if isinstance(target, int):
        return target
    with target:
        result = difftest(args.layer, target, seed=args.seed, max_cases=args.max_cases,
                          max_seconds=args.max_seconds, max_restarts=args.max_restarts)
    print(result.summary())
    if result.failure is None:
        return AGREE
    path = write_reproducer(out, args.layer, result.failure, args.seed)
    print(f"reproducer: {path}")
    return DISAGREE if result.failure.kind == DISAGREEMENT else TARGET_FAULT


def _cmd_replay(args: argparse.Namespace) -> int:

    path = Path(args.file)
    if not path.exists():
        return fail("difftest replay", f"{args.file}: no such file", USAGE)
    if not path.is_file():
        return fail("difftest replay", f"{args.file}: not a file", USAGE)
    try:  # parsed before the target starts: a bad file costs no start-up
        cases = read_reproducer(path)
    except OSError as exc:  # no permission to read it
        return fail("difftest replay", f"{args.file}: cannot read: {exc.strerror or exc}", USAGE)
    except UALinkError as exc:  # not a reproducer
        return fail("difftest replay", str(exc))
    target = _start(args, "difftest replay")
    if isinstance(target, int):
        return target
    status = AGREE
    with target:
        for item in replay_cases(cases, target):
            if item.fault is not None:
                print(f"{item.case_id}: {type(item.fault).__name__}: {item.fault}")
                status = TARGET_FAULT
                continue
            print(f"{item.case_id}: {'agree' if item.agrees else 'DISAGREE'}")
            for d in item.differences:
                print(f"  differs: {d}")
            if not item.agrees and status == AGREE:
                status = DISAGREE
    return status


def register(sub: SubParsers) -> None:
    """Add the ``difftest`` command (and its ``replay`` action)."""
    parser = add_command(sub, "difftest", __doc__.split("\n\n")[1] if __doc__ else "")
    parser.add_argument("--layer", metavar="CODEC", choices=sorted(CODECS),
                        help="codec to test (dl, dl-encode, dl-header, dl-message, "
                             "phy-kp4-encode, ..., capture; --list shows all)")
    parser.add_argument("--target", metavar="COMMAND", type=_command,
                        help="the implementation: a command speaking the line protocol")
    parser.add_argument("--seed", type=int_range(0), default=0, help="random seed (default 0)")
    parser.add_argument("--max-cases", type=int_range(1), default=1000, metavar="N",
                        help="inputs to try (default 1000)")
    parser.add_argument("--max-seconds", type=_seconds, default=None, metavar="S",
                        help="stop generating after S seconds (a failure is still shrunk)")
    parser.add_argument("--out", default="difftest-out", metavar="DIR",
                        help="where to write a reproducer (default ./difftest-out)")
    parser.add_argument("--timeout", type=_seconds, default=DEFAULT_TIMEOUT, metavar="S",
                        help="seconds to wait for each response line; a target that takes "
                             f"longer is hung and killed (default {DEFAULT_TIMEOUT:g})")
    parser.add_argument("--startup-timeout", type=_seconds, default=None, metavar="S",
                        help="seconds for the first line of each target process, start-up "
                             "included (default: --timeout)")
    parser.add_argument("--max-restarts", type=int_range(0, 100_000), default=MAX_RESTARTS,
                        metavar="N", help="restarts of a target that crashed allowed while "
                        f"confirming and shrinking its fault (default {MAX_RESTARTS})")
    parser.add_argument("--list", action="store_true",
                        help="list the codecs and their length rules, and exit")
    parser.set_defaults(func=_cmd_run)
    actions = parser.add_subparsers(dest="difftest_action", metavar="ACTION")
    rep = actions.add_parser("replay", help="re-run a reproducer file against a target",
                             description="Replay every case of a difftest reproducer. Exit "
                             "status: 0 agree, 1 disagreement, 2 usage error, 3 target fault.")
    rep.add_argument("file", metavar="FILE", help="reproducer written by difftest")
    rep.add_argument("--target", required=True, metavar="COMMAND", type=_command)
    rep.add_argument("--timeout", type=_seconds, default=DEFAULT_TIMEOUT, metavar="S",
                     help=f"seconds to wait for each response line (default {DEFAULT_TIMEOUT:g})")
    rep.add_argument("--startup-timeout", type=_seconds, default=None, metavar="S",
                     help="seconds for the first line of each target process (default: --timeout)")
    rep.set_defaults(func=_cmd_replay)


__all__ = ["AGREE", "DISAGREE", "TARGET_FAULT", "register"]
