"""The completer's responses: one per request, or a read answered in several pieces.

Rules (``specs/tl.md``, "Split responses" S1-S3 and "Poison" P3, give provenance):

* A response piece answers beats ``offset .. offset + len`` of the request's data
  (``len`` = beats - 1); ``last`` = 1 marks the piece sent last for the tag.
* Only a Read of two or more beats is ever split. How is configured per
  :class:`~ualink_ref.tl.transaction.TransactionLayer` (``split=``):
  ``"never"`` one response; ``"always"`` one piece per beat, in beat order;
  ``"random"`` seeded random cuts between beats, the pieces sent in a seeded
  random order (the ``last`` piece is whichever goes last).
* Poisoned beats (rule P3) are cut out of any read whose beats are not all
  poisoned, whatever the mode: each run of poisoned beats is one DATA_ERROR piece
  without data (a response carries data only when OKAY — the framing rule), each
  run of clean beats one or more OKAY pieces with their data.
"""

from __future__ import annotations

import random
from itertools import pairwise
from typing import Literal

from ualink_ref.tl.upli import Status

#: How the memory target answers a multi-beat Read (rule S2).
SplitMode = Literal["never", "always", "random"]
SPLIT_MODES: tuple[SplitMode, ...] = ("never", "always", "random")


def check_split(split: object) -> SplitMode:
    """``split`` when it names a mode; else ``ValueError`` (a caller's argument)."""
    if split not in SPLIT_MODES:
        raise ValueError(f"split must be one of {SPLIT_MODES}, got {split!r}")
    return split


class Rsp:
    """A queued response or response piece (completer side)."""

    __slots__ = ("beats", "dst", "halves", "last", "len_field", "offset", "rd_wr", "src",
                 "stalled", "status", "tag", "vc")

    def __init__(
        self, tag: int, vc: int, status: int, rd_wr: int, src: int, dst: int, halves: list[bytes],
        beats: int, len_field: int = 0, offset: int = 0, last: int = 1,
    ) -> None:
        self.src = src  # the request's dst_acc: who answers
        self.tag = tag
        self.vc = vc
        self.status = status
        self.rd_wr = rd_wr
        self.dst = dst
        self.halves = halves
        self.beats = beats  # data beats carried (what the response-data credits pay for)
        self.len_field = len_field  # beats answered - 1 (data beats, or a no-data error's span)
        self.offset = offset
        self.last = last
        self.stalled = False


def pieces(
    tag: int, vc: int, rd_wr: int, src: int, dst: int, halves: list[bytes], beats: int,
    poisoned: int, split: SplitMode, rng: random.Random,
) -> list[Rsp]:
    """The pieces, in sending order, of an OKAY read answer of ``beats`` (>= 2) beats
    whose beats in mask ``poisoned`` (not all of them) are poisoned (rules S2, P3)."""
    cuts = [0]
    for i in range(1, beats):
        bad_change = (poisoned >> i & 1) != (poisoned >> (i - 1) & 1)
        if bad_change or split == "always" or (split == "random" and rng.random() < 0.5):
            cuts.append(i)
    cuts.append(beats)
    runs = list(pairwise(cuts))
    if split == "random":
        rng.shuffle(runs)
    out = []
    for start, end in runs:
        count = end - start
        if poisoned >> start & 1:
            out.append(Rsp(tag, vc, Status.DATA_ERROR, rd_wr, src, dst, [], 0, count - 1,
                           start, 0))
        else:
            out.append(Rsp(tag, vc, Status.OKAY, rd_wr, src, dst, halves[2 * start : 2 * end],
                           count, count - 1, start, 0))
    out[-1].last = 1
    return out


__all__ = ["SPLIT_MODES", "Rsp", "SplitMode", "check_split", "pieces"]
