"""The transmit half of a :class:`~ualink_ref.dl.datalink.DataLink`: flits out, acks in.

:class:`Transmitter` owns everything this end sends: the TL byte queue, the
DL message queues, the replay buffer, the replay cursor and timer, and the
pacing gap. It builds new data flits, replayed flits and command flits
(ack-only, replay request), and acts on the acks and replay requests the peer
sends back. It knows nothing of the receive side: the
:class:`~ualink_ref.dl.datalink.DataLink` that owns it passes in the ack value
a flit carries, and hands it the peer's acks and requests as method calls.
The rules are specs/dl.md section 6, rules 1-4, 6, 7 and 9-11.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, fields

from ualink_ref.dl import events as ev
from ualink_ref.dl.config import DLConfig
from ualink_ref.dl.flit import NO_MESSAGES, SEGMENTS, capacity, encode_fields
from ualink_ref.dl.formats import FlitOp
from ualink_ref.sizes import SEQ_MAX, TL_FLIT_BYTES

#: A fresh flit may use the implicit-sequence header only this close to the acked point
#: (specs/dl.md rule 4 and "Why 3 bits are enough").
IMPLICIT_REACH = 7


def seq_of(abs_seq: int) -> int:
    """Wire sequence number (1..511) of an unbounded flit count (0, 1, 2, ...) (rule 1)."""
    return abs_seq % SEQ_MAX + 1


@dataclass
class DLCounters:
    """Running totals of one :class:`DataLink` (a copy is returned by ``counters``).

    The transmitter counts the fields about flits sent and acks received, the
    receiver those about flits received; :meth:`plus` adds two sets up.
    """

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

    def plus(self, other: DLCounters) -> DLCounters:
        """A new set of counters, each the sum of this one's and ``other``'s."""
        return DLCounters(**{f.name: getattr(self, f.name) + getattr(other, f.name)
                             for f in fields(self)})


@dataclass(frozen=True, slots=True)
class SentFlit:
    """An unacknowledged data flit kept for replay (its content never changes)."""

    tl: bytes
    first_tl_start: int
    messages: tuple[int | None, ...]


class Transmitter:
    """Flits out, acks and replay requests in (specs/dl.md rules 1-4, 6, 7, 9-11).

    Every attribute is private and changed only by the methods below; the
    :class:`~ualink_ref.dl.datalink.DataLink` decides, slot by slot, which of
    them to call (rule 7's priority order).
    """

    def __init__(self, config: DLConfig) -> None:
        self._window = config.window
        self._replay_timeout = config.replay_timeout
        self._max_replays = config.max_replays
        self._explicit_interval = config.explicit_interval
        self._counters = DLCounters()
        self._txq = bytearray()  # TL bytes queued, not yet packed
        self._tx_phase = 0  # bytes of the current TL flit already packed (0..63)
        self._msgq: deque[int] = deque()  # plain messages: the next flit built (rule 9)
        self._ctlq: deque[int] = deque()  # control messages: a command flit now (rule 9)
        self._rmsgq: deque[int] = deque()  # reliable messages: new data flits only (rule 9)
        self._buffer: deque[SentFlit] = deque()  # unacknowledged, oldest first
        self._acked = 0  # absolute number of the oldest unacknowledged flit
        self._next_fresh = 0  # absolute number of the next new flit
        self._replay_at: int | None = None  # replay cursor (rule 3)
        self._replay_first = False  # the next replayed flit opens a run: op REPLAY (rule 4)
        self._since_explicit = 0  # implicit flits since the last explicit one (rule 4)
        self._deadline: float | None = None  # the replay timer (rule 6)
        self._futile_replays = 0  # replays since an ack last advanced (rule 6)
        self._pace_gap = 0.0  # slots between new data flits, 0: unpaced (rule 10)
        self._pace_next: float | None = None

    # -- what the owner reads ------------------------------------------------------

    @property
    def counters(self) -> DLCounters:
        """This half's running totals (a copy)."""
        return DLCounters(**{f.name: getattr(self._counters, f.name)
                             for f in fields(self._counters)})

    @property
    def backlog(self) -> int:
        """TL flits queued and not yet completely packed (a split one counts)."""
        return -(-len(self._txq) // TL_FLIT_BYTES)

    @property
    def in_flight(self) -> int:
        """Data flits sent and not yet acknowledged (at most the window, rule 2)."""
        return self._next_fresh - self._acked

    @property
    def acked(self) -> int:
        """Data flits acknowledged by the peer so far (an unbounded count, rule 3)."""
        return self._acked

    @property
    def next_seq(self) -> int:
        """Wire sequence number the next new data flit will carry (rule 1)."""
        return seq_of(self._next_fresh)

    @property
    def replaying(self) -> bool:
        """True while replayed flits are still to be sent (rule 3)."""
        return self._replay_at is not None

    @property
    def has_control(self) -> bool:
        """True when a control message waits: it forces a command flit (rule 9)."""
        return bool(self._ctlq)

    @property
    def has_messages(self) -> bool:
        """True when a plain message waits for the next flit built (rule 9)."""
        return bool(self._msgq)

    @property
    def reliable_pending(self) -> int:
        """Reliable messages waiting for a new data flit to carry them (rule 9)."""
        return len(self._rmsgq)

    @property
    def idle(self) -> bool:
        """True when nothing is queued, unacknowledged or being replayed."""
        return not (self._txq or self._msgq or self._buffer or self._replay_at is not None
                    or self._ctlq or self._rmsgq)

    @property
    def control_only(self) -> bool:
        """True when control messages, and nothing else of this half's, wait (rule 9)."""
        return bool(self._ctlq) and not (self._txq or self._msgq or self._buffer
                                         or self._replay_at is not None or self._rmsgq)

    @property
    def tx_rate(self) -> int:
        """The pacing rate in force (rule 10): (rate + 1)/256 of full rate; 255 = unpaced."""
        return 255 if not self._pace_gap else round(256 / self._pace_gap) - 1

    @property
    def deadline(self) -> float | None:
        """When the replay timer expires (rule 6), or ``None`` while it is stopped."""
        return self._deadline

    def fresh_ready(self, now: float) -> bool:
        """May a new data flit leave in this slot? TL bytes queued, room in the window
        (rule 2), no replay under way (rule 3), and the pacing gap passed (rule 10)."""
        if not self._txq or self._next_fresh - self._acked >= self._window:
            return False
        if self._replay_at is not None:
            return False
        return self._pace_next is None or now >= self._pace_next

    def implicit_ok(self) -> bool:
        """May the next new data flit take the implicit-sequence form? (rule 4)"""
        return (self._next_fresh - self._acked < IMPLICIT_REACH
                and self._since_explicit < self._explicit_interval - 1)

    # -- queueing --------------------------------------------------------------------

    def queue_tl(self, data: bytes) -> None:
        """Append whole TL flits (already checked by the owner) to the TL byte queue."""
        self._txq += data

    def queue_message(self, word: int, *, reliable: bool, control: bool) -> None:
        """Queue an encoded DL message word on its path (rule 9)."""
        if reliable:
            self._rmsgq.append(word)
        elif control:
            self._ctlq.append(word)
        else:
            self._msgq.append(word)

    def set_rate(self, rate: int) -> None:
        """Pace new data flits to (rate + 1)/256 of full rate (rule 10; rate checked)."""
        self._pace_gap = 0.0 if rate == 255 else 256 / (rate + 1)
        if not self._pace_gap:
            self._pace_next = None

    # -- building flits --------------------------------------------------------------

    def command(self, op: FlitOp, value: int) -> bytes:
        """An ack-only or replay-request flit naming ``value`` (no TL bytes, no sequence
        number, rule 1), carrying any control and plain messages (rule 9)."""
        messages = self._take_messages(data=False)
        if op is FlitOp.REPLAY_REQUEST:
            self._counters.replay_requests_sent += 1
        else:
            self._counters.acks_sent += 1
        self._counters.command_flits_sent += 1
        return self._out(op, 0, value, 0, b"", 0, messages)

    def fresh(self, ack_value: int | None, now: float) -> bytes:
        """A new data flit with every queued TL byte that fits (rule 7): implicit,
        piggy-backing ``ack_value``, or explicit when ``ack_value`` is ``None`` (rule 4)."""
        messages = self._take_messages(data=True)
        if self._pace_gap:
            self._pace_next = now + self._pace_gap
        n = min(len(self._txq), capacity(messages))
        tl = bytes(self._txq[:n])
        del self._txq[:n]
        first = (-self._tx_phase) % TL_FLIT_BYTES
        self._counters.tl_flits_sent += (self._tx_phase + n) // TL_FLIT_BYTES
        self._tx_phase = (self._tx_phase + n) % TL_FLIT_BYTES
        abs_seq = self._next_fresh
        self._buffer.append(SentFlit(tl, first, messages))
        self._next_fresh += 1
        if ack_value is not None:
            wire = self._out(FlitOp.ACK, 0, ack_value, seq_of(abs_seq) & 7, tl, first,
                             messages)
            self._since_explicit += 1
            self._counters.acks_sent += 1
        else:
            wire = self._out(FlitOp.EXPLICIT, seq_of(abs_seq), 0, 0, tl, first, messages)
            self._since_explicit = 0
            self._counters.explicit_flits_sent += 1
        self._counters.data_flits_sent += 1
        if self._deadline is None or abs_seq == self._acked:
            self._deadline = now + self._replay_timeout
        return wire

    def replayed(self, now: float) -> bytes:
        """The next replayed flit, explicit; the first of a run has op REPLAY (rules 3, 4)."""
        if self._replay_at is None:
            raise RuntimeError("replayed() called with no replay under way")
        abs_seq = self._replay_at
        entry = self._buffer[abs_seq - self._acked]
        op = FlitOp.REPLAY if self._replay_first else FlitOp.EXPLICIT
        self._replay_first = False
        wire = self._out(op, seq_of(abs_seq), 0, 0, entry.tl, entry.first_tl_start,
                         entry.messages)
        self._replay_at = abs_seq + 1 if abs_seq + 1 < self._next_fresh else None
        self._since_explicit = 0
        self._counters.flits_replayed += 1
        self._counters.explicit_flits_sent += 1
        if abs_seq == self._acked:
            self._deadline = now + self._replay_timeout
        return wire

    def _take_messages(self, *, data: bool) -> tuple[int | None, ...]:
        """Up to five message words for the flit being built: control first, then
        plain, then (data flits only) reliable ones (rule 9)."""
        if not (self._ctlq or self._msgq or (data and self._rmsgq)):
            return NO_MESSAGES  # ``capacity`` and the encoder test this tuple's identity
        taken: list[int | None] = []
        queues = (self._ctlq, self._msgq, self._rmsgq) if data else (self._ctlq, self._msgq)
        for queue in queues:
            while queue and len(taken) < SEGMENTS:
                taken.append(queue.popleft())
        self._counters.messages_sent += len(taken)
        return tuple(taken + [None] * (SEGMENTS - len(taken)))

    def _out(self, op: FlitOp, flit_seq: int, ack_req_seq: int, flit_seq_lo: int, tl: bytes,
             first_tl_start: int, messages: tuple[int | None, ...]) -> bytes:
        """Encode a flit built from this half's own state, without re-checking it:
        sequence numbers come from ``seq_of`` or are 0 as the op requires, ``tl`` is cut
        from the queue at most ``capacity(messages)`` long and ends at a TL-flit
        boundary unless full (rule 7), ``first_tl_start`` is the stream phase, and
        message words are :meth:`DLMessage.encode` values. The tests that send through
        the public ``DLFlit`` constructor (which checks all of it) hold the two equal."""
        self._counters.flits_sent += 1
        return encode_fields(op, flit_seq, ack_req_seq, flit_seq_lo, tl, first_tl_start,
                             messages)

    # -- the peer's acks and requests, the timer (rules 3, 6) ------------------------

    def on_ack(self, value: int, now: float) -> None:
        """The peer acknowledged every flit up to wire number ``value`` (rule 3);
        0 (none yet) and stale or duplicate values change nothing."""
        if value == 0:
            return
        self._counters.acks_received += 1
        d = (value - seq_of(self._acked)) % SEQ_MAX  # 510: the flit just before _acked
        if d < self._next_fresh - self._acked:
            self._advance(self._acked + d + 1, now)
        elif d != SEQ_MAX - 1:
            self._counters.stale_acks += 1

    def on_replay_request(self, value: int, now: float) -> list[ev.DLEvent]:
        """The peer expects wire number ``value`` next: acknowledge what lies before it,
        replay the rest (rule 3)."""
        self._counters.replay_requests_received += 1
        d = (value - seq_of(self._acked)) % SEQ_MAX
        if d > self._next_fresh - self._acked:
            self._counters.stale_acks += 1
            return []
        if d:
            self._advance(self._acked + d, now)
        if not self._buffer:
            return []
        return self._start_replay("request", now)

    def timeout(self, now: float) -> list[ev.DLEvent]:
        """Run the replay timer (rule 6): if it has expired, replay everything
        unacknowledged; with nothing unacknowledged it stops."""
        if self._deadline is None or now < self._deadline:
            return []
        if not self._buffer:
            self._deadline = None
            return []
        self._counters.timeouts += 1
        return self._start_replay("timeout", now)

    def retrained(self, now: float) -> list[ev.DLEvent]:
        """The link retrained (rule 11): replay from the acknowledged point; that replay
        is the retrain's own, so it does not count as futile (rule 6)."""
        self._futile_replays = 0
        if not self._buffer:
            self._deadline = None
            return []
        self._futile_replays = -1
        return self._start_replay("retrain", now)

    def discard(self) -> None:
        """The link is in fault (rule 11): drop everything queued or unacknowledged."""
        self._txq.clear()
        self._tx_phase = 0
        self._msgq.clear()
        self._ctlq.clear()
        self._rmsgq.clear()
        self._buffer.clear()
        self._next_fresh = self._acked
        self._replay_at = None
        self._deadline = None

    def _advance(self, new_acked: int, now: float) -> None:
        """Acknowledge every flit before ``new_acked`` (absolute); progress resets the
        futile-replay count and restarts the timer (rule 6)."""
        for _ in range(new_acked - self._acked):
            self._buffer.popleft()
        self._acked = new_acked
        self._futile_replays = 0
        if self._replay_at is not None and self._replay_at < new_acked:
            self._replay_at = new_acked if new_acked < self._next_fresh else None
        self._deadline = now + self._replay_timeout if self._buffer else None

    def _start_replay(self, reason: str, now: float) -> list[ev.DLEvent]:
        """Replay every unacknowledged flit from the acknowledged point (rules 3, 6)."""
        from_abs = self._acked
        self._replay_at = from_abs
        self._replay_first = True
        self._deadline = now + self._replay_timeout
        self._counters.replays += 1
        self._futile_replays += 1
        events: list[ev.DLEvent] = [
            ev.ReplayStarted(seq_of(from_abs), self._next_fresh - from_abs, reason)]
        if self._futile_replays >= self._max_replays:
            self._counters.retrains += 1
            events.append(ev.RetrainNeeded(self._futile_replays))
            self._futile_replays = 0
        return events


__all__ = ["IMPLICIT_REACH", "DLCounters", "SentFlit", "Transmitter", "seq_of"]
