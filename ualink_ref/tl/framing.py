"""The one half-flit framing walk: which half-flits are control, which are data, and whose.

Rules (``specs/tl.md``, "Half-flit framing", gives their provenance):

1. A 64-byte TL flit is two 32-byte half-flits, read in order as one stream.
2. A *control* half-flit holds control fields (:mod:`ualink_ref.tl.codec`);
   each field lies wholly inside it; an all-zero rest is NOP padding.
3. Every field that carries data is followed, in field order, by its *data*
   half-flits, right after the control half-flit that holds it —
   :func:`data_halves` says how many, from the field alone.
4. After those, the next half-flit is control again. So the only state a
   receiver keeps between TL flits is how many data half-flits are owed.

:class:`TLDeframer` applies these rules to a stream and hands each field back
twice: when it is read (``started``, so a receiver can account for it at
once) and when its data is complete (``done``), in field order. The TL engine,
the dissector (:func:`ualink_ref.tl.flit.dissect`) and the Scapy view all use
it, so the rule lives here only.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from typing import Any

from ualink_ref.errors import FieldRangeError
from ualink_ref.sizes import TL_FLIT_BYTES, TL_HALF_BYTES
from ualink_ref.tl.codec import (
    CompressedRequest,
    CompressedResponseData,
    Request,
    Response,
    TLField,
    decode_control_half,
)
from ualink_ref.tl.upli import Status, is_known, request_data_halves

_REQUESTS = (Request, CompressedRequest)


def data_halves(value: TLField) -> int:
    """Data half-flits that follow control field ``value`` (rule 3).

    A request: a Write's byte-enable half-flit, then 2 per beat for every
    command that carries data; a response: 2 per beat when it is read-type
    (``rd_wr`` = 0) with status OKAY, or is a compressed response with data.
    Raises :class:`~ualink_ref.errors.FieldRangeError` for an unknown command
    (its data length is unknown, so the stream cannot be framed).
    """
    # isinstance with a constant tuple: this runs for every field the engine reads.
    if isinstance(value, _REQUESTS):
        if not is_known(value.cmd):
            raise FieldRangeError("cmd", value.cmd, "unknown command: data length unknown")
        return request_data_halves(value.cmd, value.numbeats)
    if isinstance(value, Response):
        return 2 * (value.len + 1) if value.rd_wr == 0 and value.status == Status.OKAY else 0
    if isinstance(value, CompressedResponseData):
        return 2 * (value.len + 1)
    return 0


@dataclass(slots=True)
class PendingField:
    """A control field read from the stream, with the data half-flits it has so far.

    ``value`` is ``None`` only for data owed from before the walk began (see
    :class:`TLDeframer`). ``context`` is free for the receiver (the TL engine
    keeps what it worked out when the field was read there).
    """

    sector: int
    value: TLField | None
    need: int
    data: list[bytes] = field(default_factory=list)
    context: Any = None

    @property
    def complete(self) -> bool:
        """True once every data half-flit has arrived."""
        return len(self.data) >= self.need


class TLDeframer:
    """Walks a TL half-flit stream (rules 1-4); see the module docstring.

    From link start ``owed`` is 0; a walk that starts mid-stream (a dissector
    given one flit) passes the data half-flits still owed from before, which
    are then taken by a field-less :class:`PendingField`.
    """

    def __init__(self, owed: int = 0) -> None:
        self._waiting: deque[PendingField] = deque()
        self._owed = owed  # data half-flits owed, over every waiting field
        self._filling: PendingField | None = None  # the first field still owed data
        if owed:
            self._filling = PendingField(-1, None, owed)
            self._waiting.append(self._filling)

    @property
    def pending(self) -> int:
        """Data half-flits still owed before the next control half-flit."""
        return self._owed

    def next_is_data(self) -> bool:
        """True when the next half-flit is a data half-flit."""
        return self._owed > 0

    def feed_half(self, half: bytes) -> tuple[list[PendingField], list[PendingField]]:
        """Take the next half-flit; return ``(fields read from it, fields now complete)``.

        A data half-flit goes to the first field still owed data. Raises
        :class:`~ualink_ref.errors.DecodeError` for a control half-flit that
        cannot be decoded; the walk's state is then unchanged.
        """
        filling = self._filling
        if filling is not None:
            filling.data.append(half)
            self._owed -= 1
            if len(filling.data) < filling.need:
                return [], []
            self._filling = next((p for p in self._waiting if p.need > len(p.data)), None)
            return [], self._pop_complete()
        decoded = decode_control_half(half)
        needs = [data_halves(value) for _, value in decoded]  # may raise: nothing changed yet
        started = [PendingField(sector, value, need)
                   for (sector, value), need in zip(decoded, needs, strict=True)]
        self._waiting.extend(started)
        self._owed = sum(needs)
        if self._owed:
            self._filling = next(p for p in started if p.need)
        return started, self._pop_complete()

    def _pop_complete(self) -> list[PendingField]:
        done: list[PendingField] = []
        waiting = self._waiting
        while waiting and waiting[0].complete:
            done.append(waiting.popleft())
        return done


def split_flit(flit: bytes) -> tuple[bytes, bytes]:
    """The two half-flits of one 64-byte TL flit (length checked by the caller)."""
    return flit[:TL_HALF_BYTES], flit[TL_HALF_BYTES:TL_FLIT_BYTES]


__all__ = ["PendingField", "TLDeframer", "data_halves", "split_flit"]
