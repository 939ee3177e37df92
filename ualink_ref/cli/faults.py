"""Fault options shared by ``ualink-ref simulate`` and ``ualink-ref capture``.

``--outage S1:S2[:DIR]`` (repeatable) takes a direction (``ab``, ``ba``, or
both when ``DIR`` is left out) down from flit slot S1 up to S2;
``--dead DIR[:S1]`` takes one direction down for good (from slot S1, default
0); ``--stall-slots K`` sets the watchdog. The channels are
:class:`~ualink_ref.net.channels.Outage` (specs/README.md, "Faults").
"""

from __future__ import annotations

import argparse

from ualink_ref.net.channels import Outage
from ualink_ref.net.harness import Channel

DIRECTIONS = ("ab", "ba")


def _slot(text: str) -> int:
    value = int(text)
    if value < 0:
        raise ValueError(text)
    return value


def outage(text: str) -> tuple[int, int, tuple[str, ...]]:
    """Parse ``S1:S2[:DIR]``."""
    parts = text.split(":")
    try:
        if len(parts) not in (2, 3):
            raise ValueError(text)
        start, end = _slot(parts[0]), _slot(parts[1])
        dirs = (parts[2],) if len(parts) == 3 else DIRECTIONS
        if end <= start or any(d not in DIRECTIONS for d in dirs):
            raise ValueError(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected S1:S2[:ab|ba] with 0 <= S1 < S2 (flit slots), got {text!r}") from None
    return start, end, dirs


def dead(text: str) -> tuple[str, int]:
    """Parse ``DIR[:S1]``."""
    direction, _, start = text.partition(":")
    try:
        if direction not in DIRECTIONS:
            raise ValueError(text)
        return direction, _slot(start) if start else 0
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected ab or ba, optionally :S1 (the slot it dies), got {text!r}") from None


def stall_slots(text: str) -> int:
    """Parse a positive slot count."""
    try:
        value = int(text)
        if value < 1:
            raise ValueError(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a slot count >= 1, got {text!r}") from None
    return value


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add ``--outage``, ``--dead`` and ``--stall-slots`` to ``parser``."""
    parser.add_argument("--outage", type=outage, action="append", default=[],
                        metavar="S1:S2[:DIR]",
                        help="link down (flits arrive as noise) from flit slot S1 up to S2, "
                             "both directions or only DIR (ab / ba); repeatable")
    parser.add_argument("--dead", type=dead, action="append", default=[], metavar="DIR[:S1]",
                        help="direction DIR (ab / ba) down for good from slot S1 (default 0)")
    parser.add_argument("--stall-slots", type=stall_slots, metavar="K",
                        help="report a stalled link after K slots without progress (no op "
                             "completed, no DL ack or accepted flit); default 16 replay "
                             "timeouts")


def channels(args: argparse.Namespace) -> dict[str, list[Channel]]:
    """The fault channels per direction that ``--outage`` and ``--dead`` ask for (the
    ``faults`` of :class:`~ualink_ref.sim.link_run.Simulation`)."""
    faults: dict[str, list[Channel]] = {d: [] for d in DIRECTIONS}
    seed = int(args.seed)
    for n, (start, end, dirs) in enumerate(args.outage):
        for d in dirs:
            faults[d].append(Outage(start, end, seed=seed * 1000 + n))
    for n, (direction, start) in enumerate(args.dead):
        faults[direction].append(Outage(start, None, seed=seed * 1000 + 500 + n))
    return {d: c for d, c in faults.items() if c}


__all__ = ["add_arguments", "channels", "dead", "outage", "stall_slots"]
