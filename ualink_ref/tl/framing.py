"""The one half-flit framing walk: which half-flits are control, which are data, and whose.

The rules are ``specs/tl.md``, "Telling control from data half-flits", numbered
there 1-3 and cited below as framing rules 1-3 (the half-flits are read in order as
one stream; each data-carrying field is followed, in field order, by its data
half-flits — :func:`data_halves` says how many, from the field alone — after which
the next half-flit is control again; so the only state kept between TL flits is how
many are owed). Padding is the same section's "Field placement".

:class:`TLDeframer` applies these rules to a stream and hands each field back
twice: when it is read (``started``, so a receiver can account for it at
once) and when its data is complete (``done``), in field order. The TL engine,
the dissector (:func:`ualink_ref.tl.flit.dissect`) and the Scapy view all use
it, so the rule lives here only.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from ualink_ref.errors import FieldRangeError, TruncatedError
from ualink_ref.sizes import TL_FLIT_BYTES, TL_HALF_BYTES
from ualink_ref.tl.codec import (
    CompressedRequest,
    CompressedResponseData,
    Request,
    Response,
    TLField,
    decode_control_half,
)
from ualink_ref.tl.upli import Command, Status, is_known, request_data_halves

_REQUESTS = (Request, CompressedRequest)

#: Data half-flits of every (known command, numbeats) a request can carry on the wire
#: (numbeats is 2 bits): framing rule 2 read from ``request_data_halves`` once, not per field.
_REQUEST_HALVES: dict[tuple[int, int], int] = {
    (int(cmd), beats): request_data_halves(cmd, beats) for cmd in Command for beats in range(4)
}


def _request_halves(value: Request | CompressedRequest) -> int:
    need = _REQUEST_HALVES.get((value.cmd, value.numbeats))
    if need is None:  # an unknown command, or numbeats past 2 bits (a value built by hand)
        if not is_known(value.cmd):
            raise FieldRangeError("cmd", value.cmd, "unknown command: data length unknown")
        need = request_data_halves(value.cmd, value.numbeats)
    return need


def _response_halves(value: Response) -> int:
    return 2 * (value.len + 1) if value.rd_wr == 0 and value.status == Status.OKAY else 0


def _response_data_halves(value: CompressedResponseData) -> int:
    return 2 * (value.len + 1)


#: Rule 3 by field class, for the walk (which only sees the codec's own classes).
_HALVES_OF: dict[type, Callable[[Any], int]] = {
    Request: _request_halves,
    CompressedRequest: _request_halves,
    Response: _response_halves,
    CompressedResponseData: _response_data_halves,
}


def data_halves(value: TLField) -> int:
    """Data half-flits that follow control field ``value`` (framing rule 2).

    A request: a Write's byte-enable half-flit, then 2 per beat for every
    command that carries data; a response: 2 per beat when it is read-type
    (``rd_wr`` = 0) with status OKAY, or is a compressed response with data.
    Raises :class:`~ualink_ref.errors.FieldRangeError` for an unknown command
    (its data length is unknown, so the stream cannot be framed).
    """
    if isinstance(value, _REQUESTS):
        return _request_halves(value)
    if isinstance(value, Response):
        return _response_halves(value)
    if isinstance(value, CompressedResponseData):
        return _response_data_halves(value)
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


#: What :meth:`TLDeframer.feed_half` returns for "nothing": shared, never mutated.
_NOTHING: tuple[PendingField, ...] = ()


class TLDeframer:
    """Walks a TL half-flit stream (framing rules 1-3); see the module docstring.

    From link start ``owed`` is 0; a walk that starts mid-stream (a dissector
    given one flit) passes the data half-flits still owed from before, which
    are then taken by a field-less :class:`PendingField`.
    """

    def __init__(self, owed: int = 0) -> None:
        # Fields read and not yet handed back as done, in order; ``_owing`` is the
        # sub-sequence still owed data, so its head takes the next data half-flit
        # (framing rule 2) and everything in front of that head in ``_waiting`` is complete.
        self._waiting: deque[PendingField] = deque()
        self._owing: deque[PendingField] = deque()
        self._owed = owed  # data half-flits owed, over every waiting field
        if owed:
            self._waiting.append(PendingField(-1, None, owed))
            self._owing.append(self._waiting[0])

    @property
    def pending(self) -> int:
        """Data half-flits still owed before the next control half-flit."""
        return self._owed

    def next_is_data(self) -> bool:
        """True when the next half-flit is a data half-flit."""
        return self._owed > 0

    def feed_half(
        self, half: bytes | bytearray | memoryview
    ) -> tuple[Sequence[PendingField], Sequence[PendingField]]:
        """Take the next half-flit; return ``(fields read from it, fields now complete)``.

        A data half-flit goes to the first field still owed data. Raises
        :class:`~ualink_ref.errors.DecodeError` for a control half-flit that
        cannot be decoded; the walk's state is then unchanged. The sequences
        returned are the caller's to read, not to change.
        """
        if type(half) is not bytes:
            half = byte_string(half, "TL half-flit", TL_HALF_BYTES)
        owing = self._owing
        if owing:
            filling = owing[0]
            data = filling.data
            data.append(half)
            self._owed -= 1
            if len(data) < filling.need:
                return _NOTHING, _NOTHING
            owing.popleft()
            return _NOTHING, self._hand_back()
        # A control half-flit: nothing is owed, so every earlier field is done and
        # ``_waiting`` is empty; the new fields are done up to the first owed data.
        started: list[PendingField] = []
        owed = 0
        halves_of = _HALVES_OF
        for sector, value in decode_control_half(half):
            rule = halves_of.get(type(value))
            need = rule(value) if rule is not None else 0  # may raise: nothing changed yet
            started.append(PendingField(sector, value, need))
            owed += need
        if not owed:
            return started, started
        self._owed = owed
        done = []
        for pending in started:
            if pending.need:
                owing.append(pending)
            elif owing:
                pass  # complete, but behind a field still owed data: waits in order
            else:
                done.append(pending)
                continue
            self._waiting.append(pending)
        return started, done

    def feed_data_flit(self, first: bytes, second: bytes) -> Sequence[PendingField] | None:
        """Both half-flits of a TL flit at once when both are data (two or more owed):
        return the fields now complete, in order, as two :meth:`feed_half` calls would;
        ``None``, with nothing taken, when a control half-flit is among them.

        The common case inside a run of writes, taken in one step: both halves fill
        the same field.
        """
        if self._owed < 2:
            return None
        owing = self._owing
        filling = owing[0]
        data = filling.data
        if filling.need - len(data) < 2:  # the halves go to two fields: one at a time
            done = list(self.feed_half(first)[1])
            done.extend(self.feed_half(second)[1])
            return done
        data.append(first)
        data.append(second)
        self._owed -= 2
        if len(data) < filling.need:
            return _NOTHING
        owing.popleft()
        return self._hand_back()

    def _hand_back(self) -> list[PendingField]:
        """The field at the head of ``_owing`` has just completed: pop, in order, every
        waiting field in front of the next one still owed data."""
        done = []
        waiting = self._waiting
        head = self._owing[0] if self._owing else None
        while waiting and waiting[0] is not head:
            done.append(waiting.popleft())
        return done


def byte_string(data: object, what: str, size: int) -> bytes:
    """A byte buffer (``bytes``, ``bytearray``, a ``memoryview`` or array of single
    bytes) as ``bytes``; anything else is a :class:`TruncatedError` naming ``what``
    and its ``size`` (only ``UALinkError`` escapes a decoder), never a ``TypeError``."""
    if isinstance(data, bytes | bytearray):
        return bytes(data)
    try:
        view = memoryview(data)  # type: ignore[arg-type]
    except (TypeError, ValueError):  # not a buffer; a released memoryview
        raise TruncatedError(what, size, -1) from None
    if view.itemsize != 1:  # an array of wider items is not a byte string
        raise TruncatedError(f"{what} (bytes)", size, -1)
    return view.tobytes()


def pad_control_half(parts: list[bytes], room: int) -> bytes | None:
    """A control half-flit from the packed fields in ``parts`` with ``room`` sectors
    left, the rest NOP padding ("Field placement"); ``None`` when there is no field to send.
    The padding is appended to ``parts`` (the caller's list, built for this half)."""
    if not parts:
        return None
    if room:
        parts.append(bytes(4 * room))
    return b"".join(parts)


def split_flit(flit: bytes) -> tuple[bytes, bytes]:
    """The two half-flits of one 64-byte TL flit (length checked by the caller)."""
    return flit[:TL_HALF_BYTES], flit[TL_HALF_BYTES:TL_FLIT_BYTES]


__all__ = ["PendingField", "TLDeframer", "byte_string", "data_halves", "pad_control_half",
           "split_flit"]
