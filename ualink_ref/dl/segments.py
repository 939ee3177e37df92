"""The one segment-header walk: where a DL flit's message words, TL bytes and TL flits are.

Rules (``specs/dl.md``, segment headers; the layout is in :mod:`ualink_ref.dl.flit`):

1. Segment ``k`` is its one-byte header (the ``SEGMENT_HEADER`` declaration)
   followed by its body; a body with ``msg`` set opens with one 4-byte DL
   message word, and the rest of it is *room* for TL bytes.
2. TL-flit boundaries in the room lie at ``4 * tl_offset + 64 * i``; the
   first ``tl_starts`` of them begin TL flits.
3. The first boundary that is not counted (``i = tl_starts``, when it lies in
   the room) is where zero fill begins; with every boundary counted, TL bytes
   run to the end of the room.
4. ``alt_sector`` is reserved (zero).

:func:`walk_segments` applies them to a flit's bytes, strictly (the codec:
any violation, or non-zero fill, raises a :class:`~ualink_ref.errors.DecodeError`)
or leniently (dissectors: never raises, clips what does not fit). Whether the
segments together form one continuous TL stream is the codec's next check.
"""

from __future__ import annotations

from functools import cache
from typing import NamedTuple

from ualink_ref.dl.formats import SEGMENT_HEADER
from ualink_ref.errors import FieldRangeError, ReservedBitsError
from ualink_ref.sizes import (
    DL_HEADER_BYTES,
    DL_MESSAGE_BYTES,
    DL_SEGMENT_LENGTHS,
    TL_FLIT_BYTES,
)


def _offsets() -> tuple[tuple[int, int], ...]:
    out = []
    pos = DL_HEADER_BYTES
    for length in DL_SEGMENT_LENGTHS:
        out.append((pos, pos + 1))
        pos += 1 + length
    return tuple(out)


#: (segment-header byte offset, segment-body byte offset) of every segment.
SEGMENT_OFFSETS: tuple[tuple[int, int], ...] = _offsets()


class Segment(NamedTuple):
    """One segment of a flit, as its header and bytes say (all offsets in the flit)."""

    number: int  # 0..4
    header: int
    message: int | None  # the DL message word, when ``msg`` is set
    begin: int  # offset of the room for TL bytes (after any message word)
    room: int  # bytes of room
    tl_bytes: int  # TL bytes carried: the rest of the room is fill (rule 3)
    tl_offset: int  # words from ``begin`` to the first TL-flit boundary
    tl_starts: int  # TL flits beginning here (clipped to the boundaries, leniently)

    @property
    def starts(self) -> tuple[int, ...]:
        """Offsets where TL flits begin (rule 2)."""
        first = self.begin + 4 * self.tl_offset
        return tuple(first + TL_FLIT_BYTES * i for i in range(self.tl_starts))


@cache
def _table() -> tuple[tuple[int, int, int, int], ...]:
    """(tl_starts, msg, tl_offset, alt_sector) of every header byte, from the declaration."""
    def bits(byte: int, name: str) -> int:
        return byte >> SEGMENT_HEADER.position(name).shift & SEGMENT_HEADER.field(name).max_value

    return tuple((bits(b, "tl_starts"), bits(b, "msg"), bits(b, "tl_offset"),
                  bits(b, "alt_sector")) for b in range(256))


def walk_segments(data: bytes, *, strict: bool = True) -> tuple[Segment, ...]:
    """The five segments of flit bytes ``data`` (rules 1-4); see the module docstring.

    Leniently, a ``data`` too short for a segment ends the walk there.
    """
    table = _table()
    out: list[Segment] = []
    for k, ((hdr_off, body_off), length) in enumerate(
        zip(SEGMENT_OFFSETS, DL_SEGMENT_LENGTHS, strict=True)
    ):
        if not strict and body_off + length > len(data):
            break
        header = data[hdr_off]
        starts, msg, offset, alt = table[header]
        if alt and strict:
            raise ReservedBitsError(f"segment{k}.alt_sector", alt)
        message = None
        begin, room = body_off, length
        if msg:
            message = int.from_bytes(data[begin:begin + DL_MESSAGE_BYTES], "big")
            begin += DL_MESSAGE_BYTES
            room -= DL_MESSAGE_BYTES
        first = 4 * offset  # boundaries at first + 64 i that lie in the room (at most 3)
        bounds = 0 if first >= room else min(3, (room - 1 - first) // TL_FLIT_BYTES + 1)
        if starts > bounds:
            if strict:
                raise FieldRangeError(f"segment{k}.tl_starts", starts,
                                      f"only {bounds} TL-flit boundaries fit")
            starts = bounds
        tl_bytes = first + TL_FLIT_BYTES * starts if starts < bounds else room
        if strict and tl_bytes < room:
            fill = data[begin + tl_bytes:begin + room]
            if fill.count(0) != len(fill):
                raise FieldRangeError(f"segment{k}.fill", next(b for b in fill if b),
                                      "fill bytes must be zero")
        out.append(Segment(k, header, message, begin, room, tl_bytes, offset, starts))
    return tuple(out)


__all__ = ["SEGMENT_OFFSETS", "Segment", "walk_segments"]
