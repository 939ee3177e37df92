"""One end of a DL link: packing, sequence numbers, acks and go-back-N replay (sans-IO).

:class:`DataLink` is the public surface and the receive half; the transmit half
(flits built from the queue, acks and replay requests acted on, the replay
buffer) is :class:`~ualink_ref.dl.transmit.Transmitter`, mixed into it.

Rules (the same text, with provenance, is in ``specs/dl.md``):

1. Sequence numbers are 9 bits, 1..511; 0 is reserved (it means "none") and
   the count wraps from 511 to 1. Only flits that carry TL bytes consume a
   sequence number; ack-only, replay-request and message-only flits do not.
   Internally both ends count with unbounded integers and map them to wire
   values with ``abs % 511 + 1``.
2. At most ``window`` (default and maximum 256) flits are unacknowledged.
   A receiver accepts a data flit only if its sequence number is exactly the
   one it expects, so a stale flit can never be taken for a new one; the
   window keeps "ahead" and "behind" distinguishable for recovery.
3. Acks are cumulative: an ``ack`` header names the last sequence number
   received in order (0: none yet). A ``replay_request`` names the next
   sequence number expected; it also acknowledges everything before it. The
   sender then replays every unacknowledged flit from there, in order,
   before any new data. Stale or duplicate acks and requests change nothing.
4. A data flit either carries its full sequence number (explicit-sequence
   header: ops ``explicit`` and ``replay``) or piggy-backs an ack (command
   header, op ``ack``, payload 1) and carries only the low 3 bits of its
   number, which is implicitly the receiver's next expected one. The sender
   uses the implicit form only for a flit never sent before, with fewer than
   7 flits unacknowledged before it and at most ``explicit_interval - 1``
   implicit flits since the last explicit one; every replayed flit is
   explicit and the first flit of a replay has op ``replay``. Because the
   receiver's expected number lies between the sender's acknowledged point
   and the new flit, within 7 of it, 3 bits identify it exactly — even if
   flits are lost silently.
5. A flit that fails its CRC (or is malformed, or arrives out of sequence)
   is dropped and triggers exactly one replay request; no further request
   is made until the expected flit arrives. Duplicates (behind the expected
   number) are dropped silently and re-acknowledged promptly: a duplicate
   makes an ack due at once (rules 7, 8), and the ack is an ``ack`` header, never
   a replay request. To keep a replay of N duplicates from drawing N acks,
   at most one such ack is owed per replay run: the first duplicate after a
   flit with op ``replay`` (the start of a run) arrives owes one; later
   duplicates of the same run coalesce into it. Project choice: every
   duplicate means the sender has not heard an ack, and a busy receiver
   (replaying or sending explicit data) would otherwise never send one, so
   a replay timer shorter than the round trip would livelock both ends.
6. A replay timer, run from the ``now`` values passed in, recovers lost acks
   and requests: when the oldest unacknowledged flit has been neither
   acknowledged nor retransmitted for ``replay_timeout``, everything
   unacknowledged is replayed. ``max_replays`` consecutive replays without
   an ack advancing report :class:`RetrainNeeded` (then the count restarts);
   any progress resets the count.
7. ``poll`` never waits for more data: a data flit carries every TL byte
   queued, up to its capacity; when fewer are queued, the TL bytes end at a
   TL-flit boundary and the rest of the payload is zero fill. Priority per
   slot: owed replay request; a forced ack-only flit (an ack is due, below,
   and the next flit could not carry one); replayed flits; new data (within
   the window); an ack-only or message-only flit; otherwise nothing
   (``None``).
8. An ack is due (and forced out as an ack-only flit when no data flit can
   carry it) as soon as any of these holds: a duplicate owes one (rule 5);
   ``ack_interval`` data flits were accepted since the last ack went out; or
   the oldest data flit accepted and not yet acknowledged was accepted
   ``ack_delay`` or more before ``now`` (default ``replay_timeout / 4``,
   measured with the ``now`` values passed to ``receive`` and ``poll``).
   Any ack that goes out — ack-only, piggy-backed on an implicit data flit,
   or a replay request — settles everything owed, so at most one ack is owed
   at a time. Project choice: the time rule is what keeps a clean link from
   replaying when this end saturates its direction with explicit data flits
   while the peer's flits arrive too sparsely to reach ``ack_interval``
   before the peer's timer expires; tying it to the timeout (rather than a
   flit count) holds for any round trip, provided both ends use the same
   timeout and it exceeds the round trip plus ``ack_delay`` (with the
   default: more than 4/3 of the round trip). It costs at most one ack-only flit per
   ``ack_delay`` slots in a saturated direction (about 3 % at the default
   128-slot timeout), the same as ``ack_interval`` under two-way load.
9. DL messages travel three ways. Plain ones ride in the next flit built
   (data or command; a lost command flit loses them). ``reliable`` ones ride
   only in new data flits, so go-back-N delivers them exactly once and in
   order (UART stream, TL rate); the layer above supplies a TL flit to carry
   them when it has none (a NOP TL flit). ``control`` ones force a command
   flit at the next poll, after an owed replay request (link-state handshake,
   which must arrive even while data flits are being dropped for a gap).
10. Pacing: after ``set_tx_rate(r)`` (the peer's TL rate notification) new
   data flits leave at least ``256 / (r + 1)`` time units apart; replays,
   acks and requests are not paced (they carry data already admitted or no
   data). ``r = 255`` lifts pacing.
11. Retrain and fault (driven by :mod:`ualink_ref.dl.linkstate`): while the
   link trains only ``poll_control`` is used (control flits) and the replay
   timer does not run; ``retrained`` keeps the replay buffer, sequence
   numbers and receive position, replays from the acknowledged point and
   owes the peer a replay request from the expected point; ``discard``
   empties everything in a fault.
"""

from __future__ import annotations

import numbers
import sys
from collections import deque
from collections.abc import Iterable
from dataclasses import replace

from ualink_ref.dl import events as ev
from ualink_ref.dl.flit import NO_MESSAGES, TL_FLIT_BYTES, DLFlit
from ualink_ref.dl.formats import FlitOp
from ualink_ref.dl.messages import DLMessage, decode_message
from ualink_ref.dl.transmit import IMPLICIT_REACH, DLCounters, SentFlit, Transmitter, seq_of
from ualink_ref.dl.verdict import Verdict, classify, phase_matches
from ualink_ref.errors import CrcError, DecodeError, EncodeError
from ualink_ref.sizes import MAX_WINDOW

#: Bytes-like types as a tuple: ``isinstance(x, a | b)`` builds a union object per call.
_BYTES_LIKE = (bytes, bytearray, memoryview)

# Enum members read once: on Python 3.11 ``Enum.MEMBER`` costs several times a global.
_ACK, _REPLAY, _REPLAY_REQUEST = FlitOp.ACK, FlitOp.REPLAY, FlitOp.REPLAY_REQUEST
_DUPLICATE, _GAP = Verdict.DUPLICATE, Verdict.GAP
_NO_MESSAGES = NO_MESSAGES  # the flit codec's own tuple: its fast paths test identity


# The largest float as an int: compared with an int as ints (the native build would
# compare an int with a float by converting the int, which overflows past this).
_FLOAT_MAX_INT = int(sys.float_info.max)


def check_time(now: object) -> float:
    """``now`` as a float if it is a real number that a float holds (time is passed in,
    rule 6): a bool, NaN, a number past the float range or a non-number is an
    :class:`EncodeError`. The float, in both builds: the native one returns floats
    from a function declared so, whatever it is given."""
    if type(now) is float and now == now:
        return now  # the common cases, without the ABC check
    if type(now) is int and -_FLOAT_MAX_INT <= now <= _FLOAT_MAX_INT:
        return float(now)
    if isinstance(now, bool) or not isinstance(now, numbers.Real):
        raise EncodeError(f"now must be a number (flit slots), got {now!r:.40}")
    try:
        value = float(now)
    except (OverflowError, ValueError, TypeError):
        raise EncodeError(f"now must be a number a float holds, got {now!r:.40}") from None
    if value != value:  # NaN compares false with everything: every deadline would freeze
        raise EncodeError(f"now must be a number (flit slots), got {now!r:.40}")
    return value


#: The time argument of a public entry point: a real number of flit slots. Wider
#: than ``float`` so that the native build hands any value to :func:`check_time`,
#: which refuses a non-number (or a bool, or NaN) with EncodeError in both builds.
Time = float | numbers.Real


class DataLink(Transmitter):
    """One end of a DL link. Feed it TL flits and received DL flits; poll it every slot.

    * ``send(tl_flits)`` queues 64-byte TL flits (no limit: watch ``tx_backlog``).
    * ``poll(now)`` returns the 640 bytes to transmit in this flit slot, or ``None``.
    * ``receive(flit, now)`` takes 640 received bytes and returns events, among them
      :class:`TLFlitDelivered` in order, exactly once. Pass on every flit the PHY
      delivers, corrupted or not: a flit that vanishes is recovered too, but later.
    * ``next_timer()`` / ``handle_timer(now)`` run the replay timer.

    ``now`` is any monotonic number in the caller's unit; ``replay_timeout`` and
    ``ack_delay`` are in the same unit (the defaults assume ``now`` counts flit
    slots). ``replay_timeout`` must exceed the round trip plus the peer's
    ``ack_delay`` (default a quarter of the timeout, so: 4/3 of the round trip),
    or replays start before acks can arrive; a shorter one costs spurious replays,
    never progress (rule 5).
    """

    def __init__(
        self,
        *,
        window: int = MAX_WINDOW,
        replay_timeout: float = 128.0,
        max_replays: int = 4,
        explicit_interval: int = 32,
        ack_interval: int = 32,
        ack_delay: float | None = None,
    ) -> None:
        if not 1 <= window <= MAX_WINDOW:
            raise ValueError(f"window must be 1..{MAX_WINDOW}")
        if not 1 <= explicit_interval <= 32:
            raise ValueError("explicit_interval must be 1..32")
        if ack_delay is None:
            ack_delay = replay_timeout / 4  # rule 8
        if replay_timeout <= 0 or max_replays < 1 or ack_interval < 1 or ack_delay <= 0:
            raise ValueError(
                "replay_timeout, max_replays, ack_interval and ack_delay must be positive")
        self.window = window
        self.replay_timeout = replay_timeout
        self.max_replays = max_replays
        self.explicit_interval = explicit_interval
        self.ack_interval = ack_interval
        self.ack_delay = ack_delay
        self._counters = DLCounters()
        # transmit side
        self._txq = bytearray()  # TL bytes queued, not yet packed
        self._tx_phase = 0  # bytes of the current TL flit already packed (0..63)
        self._msgq: deque[int] = deque()
        self._buffer: deque[SentFlit] = deque()  # unacknowledged, oldest first
        self._acked = 0  # absolute number of the oldest unacknowledged flit
        self._next_fresh = 0  # absolute number of the next new flit
        self._replay_at: int | None = None  # replay cursor
        self._replay_first = False
        self._since_explicit = 0
        self._deadline: float | None = None
        self._futile_replays = 0
        # receive side
        self._expected = 0  # absolute number of the next flit expected
        self._rx_partial = bytearray()
        self._ack_pending = False
        self._rx_since_ack = 0
        self._unacked_since: float | None = None  # acceptance time of oldest unacked flit
        self._dup_ack_owed = False  # a duplicate asks for an ack (rule 5)
        self._dup_run_answered = False  # this replay run has had its duplicate ack
        self._rr_owed = False
        self._rr_outstanding = False
        # DL messages that act (rules 9-10): control flits, reliable messages, pacing
        self._ctlq: deque[int] = deque()  # words that must go out in a command flit
        self._rmsgq: deque[int] = deque()  # words that may ride only in new data flits
        self._pace_gap = 0.0  # slots between new data flits (0: unpaced)
        self._pace_next: float | None = None

    # -- public surface ----------------------------------------------------------

    @property
    def counters(self) -> DLCounters:
        """A snapshot of the running totals."""
        return replace(self._counters)

    @property
    def tx_backlog(self) -> int:
        """TL flits queued by ``send`` and not yet completely packed into DL flits.

        A TL flit whose first bytes went out in one DL flit and whose rest waits
        for the next counts as queued. Upper layers hold back while this is high.
        """
        return -(-len(self._txq) // TL_FLIT_BYTES)

    @property
    def in_flight(self) -> int:
        """Data flits sent and not yet acknowledged (never more than ``window``)."""
        return self._next_fresh - self._acked

    @property
    def acked(self) -> int:
        """Data flits acknowledged by the peer so far (an unbounded count, never wire
        values): it grows exactly when an ack or replay request advances (rule 3)."""
        return self._acked

    @property
    def accepted(self) -> int:
        """Data flits accepted in order from the peer so far (an unbounded count)."""
        return self._expected

    @property
    def next_seq(self) -> int:
        """Wire sequence number (1..511) the next new data flit will carry."""
        return seq_of(self._next_fresh)

    @property
    def replaying(self) -> bool:
        """True while replayed flits are still to be sent."""
        return self._replay_at is not None

    @property
    def idle(self) -> bool:
        """True when nothing is queued, unacknowledged, or owed to the peer (ack, request)."""
        return not (self._txq or self._msgq or self._buffer or self._ack_pending
                    or self._rr_owed or self._replay_at is not None or self._ctlq
                    or self._rmsgq)

    @property
    def control_only(self) -> bool:
        """True when only control messages are waiting (the next flit is control only)."""
        return bool(self._ctlq) and not (self._txq or self._msgq or self._buffer
                                         or self._ack_pending or self._rr_owed
                                         or self._replay_at is not None or self._rmsgq)

    @property
    def reliable_pending(self) -> int:
        """Reliable messages (rule 9) waiting for a new data flit to carry them."""
        return len(self._rmsgq)

    @property
    def tx_rate(self) -> int:
        """The pacing rate in force (rule 10): (rate + 1)/256 of full rate; 255 = unpaced."""
        return 255 if not self._pace_gap else round(256 / self._pace_gap) - 1

    def send(self, tl_flits: Iterable[bytes]) -> None:
        """Queue 64-byte TL flits for transmission, in order (all or none on a bad one)."""
        if isinstance(tl_flits, (*_BYTES_LIKE, str)):
            raise EncodeError("send takes an iterable of 64-byte TL flits, not one bytes object")
        try:
            # Items as objects: the native build would check a list[bytes]'s items as
            # they are read (TypeError); each is checked here instead (EncodeError).
            batch: list[object] = list(tl_flits)
        except TypeError:
            raise EncodeError(f"send takes an iterable of TL flits, got {tl_flits!r:.40}") from None
        for tl in batch:
            if not isinstance(tl, _BYTES_LIKE) or len(tl) != TL_FLIT_BYTES:
                raise EncodeError(f"TL flits are {TL_FLIT_BYTES} bytes, got {tl!r:.40}")
        self._txq += b"".join(batch)  # type: ignore[arg-type]  # all checked above

    def send_message(self, message: DLMessage, *, reliable: bool = False,
                     control: bool = False) -> None:
        """Queue a DL message (rule 9).

        By default it rides in the next flit built (best effort without data).
        ``reliable`` messages ride only in new data flits, so replay delivers
        them exactly once and in order (the caller supplies data to carry them,
        see ``reliable_pending``); ``control`` ones force a command flit out at
        the next poll, even while data waits or the link trains.
        """
        word = message.encode()
        if reliable:
            self._rmsgq.append(word)
        elif control:
            self._ctlq.append(word)
        else:
            self._msgq.append(word)

    def set_tx_rate(self, rate: int, now: float | None = None) -> None:
        """Pace new data flits to (rate + 1)/256 of full rate (rule 10); 255 lifts it."""
        if not isinstance(rate, int) or not 0 <= rate <= 255:  # a bool is its int
            raise EncodeError(f"TL rate is 0..255, got {rate!r}", field="rate")
        self._pace_gap = 0.0 if rate == 255 else 256 / (rate + 1)
        if not self._pace_gap:
            self._pace_next = None

    def poll_control(self, now: Time) -> bytes | None:
        """Only a command flit with queued control messages, or ``None`` (rule 11:
        what a training link sends)."""
        now = check_time(now)
        if not self._ctlq:
            return None
        return self._command(_ACK, self._ack_value(), now)

    def retrained(self, now: Time) -> list[ev.DLEvent]:
        """The link has retrained (rule 11): replay everything unacknowledged from the
        acknowledged point, and ask the peer to replay from the expected one. The
        replay buffer, sequence numbers and receive position are kept, so no TL flit
        is lost or duplicated across a retrain."""
        now = check_time(now)
        events: list[ev.DLEvent] = []
        self._futile_replays = 0
        self._dup_run_answered = False
        self._rr_owed = self._rr_outstanding = True
        if self._buffer:
            self._futile_replays = -1  # this replay is the retrain's, not a futile one
            self._start_replay(self._acked, "retrain", now, events)
        else:
            self._deadline = None
        return events

    def discard(self) -> None:
        """The link is in fault (rule 11): drop everything queued, unacknowledged or
        owed; the DL is idle from now on."""
        self._txq.clear()
        self._tx_phase = 0
        self._msgq.clear()
        self._ctlq.clear()
        self._rmsgq.clear()
        self._buffer.clear()
        self._next_fresh = self._acked
        self._replay_at = None
        self._deadline = None
        self._ack_pending = self._rr_owed = self._dup_ack_owed = False
        self._unacked_since = None

    def next_timer(self) -> float | None:
        """When ``handle_timer`` must next be called, or ``None``."""
        return self._deadline

    def handle_timer(self, now: Time) -> list[ev.DLEvent]:
        """Run the replay timer: if it has expired, replay everything unacknowledged."""
        now = check_time(now)
        if self._deadline is None or now < self._deadline:
            return []
        events: list[ev.DLEvent] = []
        if self._buffer:
            self._counters.timeouts += 1
            self._start_replay(self._acked, "timeout", now, events)
        else:
            self._deadline = None
        return events

    def poll(self, now: Time) -> bytes | None:
        """The DL flit to transmit in this slot (640 bytes), or ``None`` (rule 7)."""
        now = check_time(now)
        if self._rr_owed:
            return self._command(_REPLAY_REQUEST, seq_of(self._expected), now)
        if self._ctlq:
            return self._command(_ACK, self._ack_value(), now)
        fresh = bool(self._txq) and self.in_flight < self.window and self._replay_at is None
        if fresh and self._pace_next is not None and now < self._pace_next:
            fresh = False  # rule 10: paced
        carries_ack = fresh and self._implicit_ok()
        if self._ack_pending and not carries_ack and self._ack_due(now):
            return self._command(_ACK, self._ack_value(), now)
        if self._replay_at is not None:
            return self._replayed(now)
        if fresh:
            return self._fresh(carries_ack, now)
        if self._ack_pending or self._msgq:
            return self._command(_ACK, self._ack_value(), now)
        return None

    def receive(self, flit: bytes | bytearray | memoryview, now: Time) -> list[ev.DLEvent]:
        """Process one received flit; return what happened (rules 3-5)."""
        now = check_time(now)
        self._counters.flits_received += 1
        events: list[ev.DLEvent] = []
        try:
            f = DLFlit.decode(flit)
        except CrcError as exc:
            self._counters.crc_errors += 1
            events.append(ev.CrcErrorDetected(exc.expected, exc.actual))
            self._rx_error()
            return events
        except DecodeError as exc:
            self._counters.malformed += 1
            events.append(ev.MalformedFlit(str(exc)))
            self._rx_error()
            return events
        if f.op is _ACK:
            self._on_ack(f.ack_req_seq, now)
        elif f.op is _REPLAY_REQUEST:
            self._on_replay_request(f.ack_req_seq, now, events)
        if not f.payload:
            self._deliver(f, events)
            return events
        want = seq_of(self._expected)
        if f.op is _REPLAY:
            self._dup_run_answered = False  # a new replay run: it may owe one ack
        verdict, seq = classify(f, want)
        if verdict is _DUPLICATE:
            self._counters.duplicates += 1
            self._ack_pending = True
            if not self._dup_run_answered:  # one ack per run, not one per duplicate
                self._dup_ack_owed = True
                self._dup_run_answered = True
            return events
        if verdict is _GAP:
            self._gap(want, seq, events)
            return events
        if not phase_matches(f, len(self._rx_partial)):
            self._counters.malformed += 1
            events.append(ev.MalformedFlit(
                f"TL stream phase: flit says first TL flit at {f.first_tl_start}, "
                f"receiver holds {len(self._rx_partial)} bytes of one"))
            self._rx_error()
            return events
        self._expected += 1
        self._counters.data_flits_accepted += 1
        self._ack_pending = True
        self._rx_since_ack += 1
        if self._unacked_since is None:
            self._unacked_since = now
        self._rr_outstanding = False
        self._deliver(f, events)
        return events

    # -- receive helpers -------------------------------------------------------------

    def _rx_error(self) -> None:
        if not self._rr_outstanding:
            self._rr_owed = True
            self._rr_outstanding = True

    def _gap(self, want: int, got: int | None, events: list[ev.DLEvent]) -> None:
        self._counters.sequence_errors += 1
        events.append(ev.SequenceGap(want, got))
        self._rx_error()

    def _deliver(self, f: DLFlit, events: list[ev.DLEvent]) -> None:
        """Report a good flit's messages and completed TL flits, in segment order."""
        if f.messages == _NO_MESSAGES:  # common case: one pass over the TL bytes
            if f.tl:
                self._tl_bytes(f.tl, events)
            return
        rel = 0
        for seg, word in zip(f.segments(), f.messages, strict=True):
            if word is not None:
                try:
                    events.append(ev.DLMessageReceived(decode_message(word)))
                    self._counters.messages_received += 1
                except DecodeError as exc:
                    events.append(ev.MalformedFlit(f"DL message {word:#010x}: {exc}"))
            if seg.tl_bytes:
                self._tl_bytes(f.tl[rel:rel + seg.tl_bytes], events)
                rel += seg.tl_bytes

    def _tl_bytes(self, data: bytes, events: list[ev.DLEvent]) -> None:
        """Append received TL stream bytes; report every TL flit they complete."""
        buf = bytes(self._rx_partial) + data if self._rx_partial else data
        whole = len(buf) - len(buf) % TL_FLIT_BYTES
        events.extend(map(ev.TLFlitDelivered, [buf[i:i + TL_FLIT_BYTES]
                                               for i in range(0, whole, TL_FLIT_BYTES)]))
        self._counters.tl_flits_delivered += whole // TL_FLIT_BYTES
        self._rx_partial = bytearray(buf[whole:])


__all__ = ["IMPLICIT_REACH", "MAX_WINDOW", "DLCounters", "DataLink", "check_time", "seq_of"]
