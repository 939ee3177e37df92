"""The transmit half of a :class:`~ualink_ref.dl.datalink.DataLink` (mixed into it).

:class:`Transmitter` builds the flits this end sends — new data flits packed
from the TL byte queue, replayed flits, ack-only and replay-request flits —
and acts on the acks and replay requests the peer sends back: it keeps the
replay buffer and the replay timer's deadline. The rules it follows are rules
1-4 and 6-10 of :mod:`ualink_ref.dl.datalink` (``specs/dl.md``); the receive half
and the public surface are in that module.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass

from ualink_ref.dl import events as ev
from ualink_ref.dl.flit import (
    NO_MESSAGES,
    SEGMENTS,
    SEQ_MAX,
    TL_FLIT_BYTES,
    capacity,
    encode_fields,
)
from ualink_ref.dl.formats import FlitOp

#: A fresh flit may use the implicit-sequence header only this close to the acked point.
IMPLICIT_REACH = 7

# Enum members read once: on Python 3.11 ``Enum.MEMBER`` costs several times a global.
_ACK, _REPLAY, _REPLAY_REQUEST, _EXPLICIT = (FlitOp.ACK, FlitOp.REPLAY, FlitOp.REPLAY_REQUEST,
                                             FlitOp.EXPLICIT)
_NO_MESSAGES = NO_MESSAGES  # the flit codec's own tuple: its fast paths test identity


def seq_of(abs_seq: int) -> int:
    """Wire sequence number (1..511) of an unbounded flit count (0, 1, 2, ...)."""
    return abs_seq % SEQ_MAX + 1


@dataclass
class DLCounters:
    """Running totals of one :class:`DataLink` (a copy is returned by ``counters``)."""

    flits_sent: int = 0
    data_flits_sent: int = 0
    explicit_flits_sent: int = 0
    flits_replayed: int = 0
    command_flits_sent: int = 0
    acks_sent: int = 0
    replay_requests_sent: int = 0
    tl_flits_sent: int = 0
    messages_sent: int = 0
    flits_received: int = 0
    data_flits_accepted: int = 0
    crc_errors: int = 0
    malformed: int = 0
    sequence_errors: int = 0
    duplicates: int = 0
    acks_received: int = 0
    stale_acks: int = 0
    replay_requests_received: int = 0
    replays: int = 0
    timeouts: int = 0
    retrains: int = 0
    tl_flits_delivered: int = 0
    messages_received: int = 0


@dataclass
class SentFlit:
    """An unacknowledged data flit kept for replay (its content never changes)."""

    tl: bytes
    first_tl_start: int
    messages: tuple[int | None, ...]


class Transmitter:
    """Flits out, acks and replay requests in (rules 1-4, 6-10); state lives in
    :class:`~ualink_ref.dl.datalink.DataLink`, which sets every attribute below."""

    replay_timeout: float
    max_replays: int
    explicit_interval: int
    ack_interval: int
    ack_delay: float
    _counters: DLCounters
    _txq: bytearray
    _tx_phase: int
    _msgq: deque[int]
    _ctlq: deque[int]
    _rmsgq: deque[int]
    _buffer: deque[SentFlit]
    _acked: int
    _next_fresh: int
    _replay_at: int | None
    _replay_first: bool
    _since_explicit: int
    _deadline: float | None
    _futile_replays: int
    _pace_gap: float
    _pace_next: float | None
    _expected: int
    _ack_pending: bool
    _rx_since_ack: int
    _unacked_since: float | None
    _dup_ack_owed: bool
    _rr_owed: bool

    # -- transmit helpers ----------------------------------------------------------

    def _ack_value(self) -> int:
        return 0 if self._expected == 0 else seq_of(self._expected - 1)

    def _ack_due(self, now: float) -> bool:
        """Must an owed ack go out in this slot, even as an ack-only flit? (rule 8)"""
        return (self._dup_ack_owed or self._rx_since_ack >= self.ack_interval
                or (self._unacked_since is not None
                    and now - self._unacked_since >= self.ack_delay))

    def _acked_now(self) -> None:
        """An ack (or replay request) is going out: it settles every ack owed."""
        self._ack_pending = False
        self._rx_since_ack = 0
        self._unacked_since = None
        self._dup_ack_owed = False

    def _implicit_ok(self) -> bool:
        return (self._next_fresh - self._acked < IMPLICIT_REACH
                and self._since_explicit < self.explicit_interval - 1)

    def _take_messages(self, room: int, data: bool = False) -> tuple[int | None, ...]:
        if not (self._ctlq or self._msgq or (data and self._rmsgq)):
            return _NO_MESSAGES  # the common case, and the encoder's fast key
        taken: list[int | None] = []
        for queue in (self._ctlq, self._msgq, self._rmsgq) if data else (self._ctlq,
                                                                          self._msgq):
            while queue and len(taken) < room:
                taken.append(queue.popleft())
        self._counters.messages_sent += len(taken)
        return tuple(taken + [None] * (SEGMENTS - len(taken)))

    def _command(self, op: FlitOp, value: int, now: float) -> bytes:
        """An ack-only / replay-request flit (no TL bytes, no sequence number)."""
        messages = self._take_messages(SEGMENTS)
        if op is _REPLAY_REQUEST:
            self._rr_owed = False
            self._counters.replay_requests_sent += 1
        else:
            self._counters.acks_sent += 1
        self._acked_now()
        self._counters.command_flits_sent += 1
        return self._out(op, 0, value, 0, b"", 0, messages)

    def _fresh(self, implicit: bool, now: float) -> bytes:
        messages = self._take_messages(SEGMENTS, data=True)
        if self._pace_gap:
            self._pace_next = now + self._pace_gap
        n = min(len(self._txq), capacity(messages))
        tl = bytes(self._txq[:n])
        del self._txq[:n]
        first = (-self._tx_phase) % TL_FLIT_BYTES
        self._counters.tl_flits_sent += (self._tx_phase + n) // TL_FLIT_BYTES
        self._tx_phase = (self._tx_phase + n) % TL_FLIT_BYTES
        entry = SentFlit(tl, first, messages)
        abs_seq = self._next_fresh
        self._buffer.append(entry)
        self._next_fresh += 1
        if implicit:
            wire = self._out(_ACK, 0, self._ack_value(), seq_of(abs_seq) & 7, tl, first,
                             messages)
            self._since_explicit += 1
            self._counters.acks_sent += 1
            self._acked_now()
        else:
            wire = self._out(_EXPLICIT, seq_of(abs_seq), 0, 0, tl, first, messages)
            self._since_explicit = 0
            self._counters.explicit_flits_sent += 1
        self._counters.data_flits_sent += 1
        if self._deadline is None or abs_seq == self._acked:
            self._deadline = now + self.replay_timeout
        return wire

    def _replayed(self, now: float) -> bytes:
        assert self._replay_at is not None
        abs_seq = self._replay_at
        entry = self._buffer[abs_seq - self._acked]
        op = _REPLAY if self._replay_first else _EXPLICIT
        self._replay_first = False
        wire = self._out(op, seq_of(abs_seq), 0, 0, entry.tl, entry.first_tl_start,
                         entry.messages)
        self._replay_at = abs_seq + 1 if abs_seq + 1 < self._next_fresh else None
        self._since_explicit = 0
        self._counters.flits_replayed += 1
        self._counters.explicit_flits_sent += 1
        if abs_seq == self._acked:
            self._deadline = now + self.replay_timeout
        return wire

    def _out(self, op: FlitOp, flit_seq: int, ack_req_seq: int, flit_seq_lo: int, tl: bytes,
             first_tl_start: int, messages: tuple[int | None, ...]) -> bytes:
        """Encode a flit built from this end's own state, without re-checking it: sequence
        numbers come from ``seq_of`` (1..511) or are 0 as the op requires, ``tl`` is cut
        from the queue at most ``capacity(messages)`` long and ends at a TL-flit boundary
        unless full (rule 7), ``first_tl_start`` is the stream phase, and message words
        are :meth:`DLMessage.encode` values (32 bits). The tests that send through the
        public ``DLFlit`` constructor (which checks all of it) hold the two equal."""
        self._counters.flits_sent += 1
        return encode_fields(op, flit_seq, ack_req_seq, flit_seq_lo, tl, first_tl_start,
                             messages)

    # -- acks, requests, replay ------------------------------------------------------

    def _advance(self, new_acked: int, now: float) -> None:
        """Acknowledge every flit before ``new_acked`` (absolute)."""
        for _ in range(new_acked - self._acked):
            self._buffer.popleft()
        self._acked = new_acked
        self._futile_replays = 0
        if self._replay_at is not None and self._replay_at < new_acked:
            self._replay_at = new_acked if new_acked < self._next_fresh else None
        self._deadline = now + self.replay_timeout if self._buffer else None

    def _on_ack(self, value: int, now: float) -> None:
        if value == 0:
            return
        self._counters.acks_received += 1
        d = (value - seq_of(self._acked)) % SEQ_MAX  # 510: the flit just before _acked
        if d < self._next_fresh - self._acked:
            self._advance(self._acked + d + 1, now)
        elif d != SEQ_MAX - 1:
            self._counters.stale_acks += 1

    def _on_replay_request(self, value: int, now: float, events: list[ev.DLEvent]) -> None:
        self._counters.replay_requests_received += 1
        d = (value - seq_of(self._acked)) % SEQ_MAX
        if d > self._next_fresh - self._acked:
            self._counters.stale_acks += 1
            return
        if d:
            self._advance(self._acked + d, now)
        if self._buffer:
            self._start_replay(self._acked, "request", now, events)

    def _start_replay(self, from_abs: int, reason: str, now: float,
                      events: list[ev.DLEvent]) -> None:
        self._replay_at = from_abs
        self._replay_first = True
        self._deadline = now + self.replay_timeout
        self._counters.replays += 1
        self._futile_replays += 1
        events.append(ev.ReplayStarted(seq_of(from_abs), self._next_fresh - from_abs, reason))
        if self._futile_replays >= self.max_replays:
            self._counters.retrains += 1
            events.append(ev.RetrainNeeded(self._futile_replays))
            self._futile_replays = 0


__all__ = ["IMPLICIT_REACH", "DLCounters", "SentFlit", "Transmitter", "seq_of"]
