"""``ualink-ref difftest``: differential fuzzing of another implementation (specs/difftest.md).

``ualink-ref difftest --layer dl --target "COMMAND"`` runs COMMAND as a
subprocess speaking the line protocol, hunts for a disagreement with the
model, shrinks the first one, prints its field-level difference and writes a
reproducer (golden-vector layout) into ``--out``. ``ualink-ref difftest replay
FILE --target "COMMAND"`` re-runs a reproducer. Exit status: 0 agree,
1 disagreement (or a target that broke the protocol).
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from ualink_ref.cli.commands import add_command
from ualink_ref.testing.difftest import CODECS, SubprocessTarget, difftest, replay, write_reproducer

SubParsers = Any


def _cmd_run(args: argparse.Namespace) -> int:

    if args.list or not args.layer or not args.target:
        for name, codec in CODECS.items():
            print(f"{name:16} {'json' if codec.json_input else 'hex ':4} in  {codec.summary}")
        if not args.list:
            print("difftest: --layer and --target are required (see --help)")
            return 2
        return 0
    with SubprocessTarget(args.target, timeout=args.timeout) as target:
        result = difftest(args.layer, target, seed=args.seed, max_cases=args.max_cases,
                          max_seconds=args.max_seconds)
    print(result.summary())
    if result.failure is None:
        return 0
    path = write_reproducer(Path(args.out), args.layer, result.failure, args.seed)
    print(f"reproducer: {path}")
    return 1


def _cmd_replay(args: argparse.Namespace) -> int:

    bad = 0
    with SubprocessTarget(args.target, timeout=args.timeout) as target:
        for case_id, diffs in replay(Path(args.file), target):
            print(f"{case_id}: {'agree' if not diffs else 'DISAGREE'}")
            for d in diffs:
                print(f"  differs: {d}")
            bad += bool(diffs)
    return 1 if bad else 0


def register(sub: SubParsers) -> None:
    """Add the ``difftest`` command (and its ``replay`` action)."""
    parser = add_command(sub, "difftest", __doc__.split("\n\n")[1] if __doc__ else "")
    parser.add_argument("--layer", metavar="CODEC",
                        help="codec to test (dl, dl-encode, dl-header, dl-message, "
                             "phy-kp4-encode, ..., capture; --list shows all)")
    parser.add_argument("--target", metavar="COMMAND",
                        help="the implementation: a command speaking the line protocol")
    parser.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    parser.add_argument("--max-cases", type=int, default=1000, metavar="N",
                        help="inputs to try (default 1000)")
    parser.add_argument("--max-seconds", type=float, default=None, metavar="S",
                        help="stop generating after S seconds (a failure is still shrunk)")
    parser.add_argument("--out", default="difftest-out", metavar="DIR",
                        help="where to write a reproducer (default ./difftest-out)")
    parser.add_argument("--timeout", type=float, default=60.0, metavar="S",
                        help="seconds to wait for each response line (default 60)")
    parser.add_argument("--list", action="store_true", help="list the codecs and exit")
    parser.set_defaults(func=_cmd_run)
    actions = parser.add_subparsers(dest="difftest_action", metavar="ACTION")
    rep = actions.add_parser("replay", help="re-run a reproducer file against a target",
                             description="Replay every case of a difftest reproducer.")
    rep.add_argument("file", metavar="FILE", help="reproducer written by difftest")
    rep.add_argument("--target", required=True, metavar="COMMAND")
    rep.add_argument("--timeout", type=float, default=60.0, metavar="S")
    rep.set_defaults(func=_cmd_replay)


__all__ = ["register"]
