"""The originator's reassembly of split responses (``specs/tl.md`` rules S4-S7).

A read's answer may come in pieces. Each piece names the beats it answers
(``offset`` .. ``offset + len``); OKAY pieces carry those beats' data, a
DATA_ERROR piece marks them poisoned (rule P3), any other status ends the read
with that status. :func:`add_piece` checks each piece against what has arrived
for the tag — range, overlap, coverage when ``last`` = 1, no full coverage
without ``last`` — and :func:`completion` builds the one completion once the
piece with ``last`` = 1 has completed the coverage.
"""

from __future__ import annotations

from ualink_ref.errors import ProtocolError, ResponseMismatchError
from ualink_ref.tl.events import Completion
from ualink_ref.tl.upli import Status

_EMPTY_BEAT = bytes(64)


class Partial:
    """What has arrived so far for one tag answered in pieces."""

    __slots__ = ("beats", "got", "poisoned", "status")

    def __init__(self, n: int) -> None:
        self.got = 0  # mask of the beats answered so far
        self.poisoned = 0  # mask of the beats answered DATA_ERROR
        self.status = 0  # the first status other than OKAY / DATA_ERROR, if any
        self.beats: list[bytes] = [_EMPTY_BEAT] * n


def add_piece(
    partial: Partial, tag: int, offset: int, last: int, status: int, carried: int, span: int,
    n: int, halves: list[bytes],
) -> ProtocolError | None:
    """Take one piece (rules S4-S6); return the rule it breaks, or ``None``.

    ``offset`` / ``last`` are the piece's fields, ``carried`` the data beats it
    carried, ``span`` the beats it answers (``len`` + 1), ``n`` the beats of the
    request's answer.
    """
    if not n:  # S5: a write-type answer has no beats to split
        return ResponseMismatchError(tag, "offset/last of a write-type response",
                                     (offset, last), (0, 1))
    if status == Status.OKAY:
        count = carried
        if not count:  # an OKAY piece of a read carries the beats it answers
            return ResponseMismatchError(tag, "beats", 0, "1 or more")
    else:
        count = span
    if offset + count > n:  # S4: range
        return ResponseMismatchError(tag, "last beat", offset + count - 1, f"0..{n - 1}")
    mask = ((1 << count) - 1) << offset
    if partial.got & mask:  # S4: overlap
        return ResponseMismatchError(tag, "beats answered twice", f"{partial.got & mask:#x}",
                                     "none")
    full = (1 << n) - 1
    covered = partial.got | mask
    if last and covered != full:  # S6: the last piece leaves a gap
        return ResponseMismatchError(tag, "beats missing at last", f"{full & ~covered:#x}",
                                     "none")
    if not last and covered == full:  # S6: every beat answered, yet not marked last
        return ResponseMismatchError(tag, "last", 0, 1)
    partial.got = covered
    if status == Status.OKAY:
        for i in range(count):
            partial.beats[offset + i] = halves[2 * i] + halves[2 * i + 1]
    elif status == Status.DATA_ERROR:
        partial.poisoned |= mask
    elif not partial.status:
        partial.status = status
    return None


def completion(handle: int, nbytes: int, partial: Partial) -> Completion:
    """The one completion of a read whose pieces have all arrived (rule S7, P3)."""
    if partial.status:
        return Completion(handle, Status(partial.status), None)
    data = b"".join(partial.beats)[:nbytes]
    if partial.poisoned:
        every = partial.poisoned == (1 << len(partial.beats)) - 1
        return Completion(handle, Status.DATA_ERROR, None if every else data,
                          poisoned=partial.poisoned)
    return Completion(handle, Status.OKAY, data)


__all__ = ["Partial", "add_piece", "completion"]
