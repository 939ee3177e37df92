"""One end of a DL link: a transmitter and a receiver, wired together (sans-IO).

:class:`DataLink` is the public surface. It owns a
:class:`~ualink_ref.dl.transmit.Transmitter` (flits out, the peer's acks and
replay requests in) and a :class:`~ualink_ref.dl.receive.Receiver` (flits in,
what is owed to the peer out), each of which owns its own state. The data link
passes the receiver's verdicts to the transmitter as method calls: an ack
value for the flit being built, "a replay request is owed", "an ack is due".

The rules are stated once, with their provenance, in specs/dl.md section 6
(rules 1-11); docstrings here cite them by number.
"""

from __future__ import annotations

import numbers
import sys
from collections.abc import Iterable

from ualink_ref.dl import events as ev
from ualink_ref.dl.config import DLConfig
from ualink_ref.dl.flit import DLFlit
from ualink_ref.dl.formats import FlitOp
from ualink_ref.dl.messages import DLMessage
from ualink_ref.dl.receive import Receiver
from ualink_ref.dl.transmit import DLCounters, Transmitter
from ualink_ref.errors import CrcError, DecodeError, EncodeError
from ualink_ref.sizes import TL_FLIT_BYTES

#: The largest float as an int: an int is compared with it as ints, so a huge int is
#: refused with EncodeError rather than converted (float() would overflow).
_FLOAT_MAX_INT = int(sys.float_info.max)


def check_time(now: object) -> float:
    """``now`` as a float if it is a real number that a float holds (specs/dl.md rule 6):
    a bool, NaN, a number past the float range or a non-number is an
    :class:`EncodeError`. The check itself, so it takes any value a caller may pass."""
    if type(now) is float and now == now:
        return now  # the common case, without the ABC check
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


class DataLink:
    """One end of a DL link. Feed it TL flits and received DL flits; poll it every slot.

    * ``send(tl_flits)`` queues 64-byte TL flits (no limit: watch ``tx_backlog``).
    * ``poll(now)`` returns the 640 bytes to transmit in this flit slot, or ``None``
      (rule 7).
    * ``receive(flit, now)`` takes 640 received bytes and returns events, among them
      :class:`TLFlitDelivered` in order, exactly once. Pass on every flit the PHY
      delivers, corrupted or not: a flit that vanishes is recovered too, but later.
    * ``next_timer()`` / ``handle_timer(now)`` run the replay timer (rule 6).

    ``config`` (a :class:`~ualink_ref.dl.config.DLConfig`) holds the options; the
    engine reads it once, here. ``now`` is any monotonic number in the caller's unit
    (rule 6); ``replay_timeout`` must exceed the round trip plus the peer's
    ``ack_delay`` (rule 8), or replays start before acks can arrive.
    """

    def __init__(self, config: DLConfig = DLConfig()) -> None:  # noqa: B008  (frozen)
        if not isinstance(config, DLConfig):
            raise TypeError(f"DataLink takes a DLConfig, got {type(config).__name__}")
        self._config = config
        self._tx = Transmitter(config)
        self._rx = Receiver(config)

    # -- public surface ----------------------------------------------------------

    @property
    def config(self) -> DLConfig:
        """The options this end was built with (frozen)."""
        return self._config

    @property
    def counters(self) -> DLCounters:
        """A snapshot of the running totals (transmit and receive halves together)."""
        return self._tx.counters.plus(self._rx.counters)

    @property
    def tx_backlog(self) -> int:
        """TL flits queued by ``send`` and not yet completely packed into DL flits.

        A TL flit whose first bytes went out in one DL flit and whose rest waits
        for the next counts as queued. Upper layers hold back while this is high.
        """
        return self._tx.backlog

    @property
    def in_flight(self) -> int:
        """Data flits sent and not yet acknowledged (never more than the window, rule 2)."""
        return self._tx.in_flight

    @property
    def acked(self) -> int:
        """Data flits acknowledged by the peer so far (an unbounded count, never wire
        values): it grows exactly when an ack or replay request advances (rule 3)."""
        return self._tx.acked

    @property
    def accepted(self) -> int:
        """Data flits accepted in order from the peer so far (an unbounded count)."""
        return self._rx.accepted

    @property
    def next_seq(self) -> int:
        """Wire sequence number (1..511) the next new data flit will carry (rule 1)."""
        return self._tx.next_seq

    @property
    def replaying(self) -> bool:
        """True while replayed flits are still to be sent (rule 3)."""
        return self._tx.replaying

    @property
    def idle(self) -> bool:
        """True when nothing is queued, unacknowledged, or owed to the peer (ack, request)."""
        rx = self._rx
        return self._tx.idle and not (rx.owes_ack or rx.owes_request)

    @property
    def control_only(self) -> bool:
        """True when only control messages are waiting (the next flit is control only)."""
        rx = self._rx
        return self._tx.control_only and not (rx.owes_ack or rx.owes_request)

    @property
    def reliable_pending(self) -> int:
        """Reliable messages (rule 9) waiting for a new data flit to carry them."""
        return self._tx.reliable_pending

    @property
    def tx_rate(self) -> int:
        """The pacing rate in force (rule 10): (rate + 1)/256 of full rate; 255 = unpaced."""
        return self._tx.tx_rate

    def send(self, tl_flits: Iterable[bytes]) -> None:
        """Queue 64-byte TL flits for transmission, in order (all or none on a bad one)."""
        if isinstance(tl_flits, bytes | bytearray | memoryview | str):
            raise EncodeError("send takes an iterable of 64-byte TL flits, not one bytes object")
        try:
            batch = list(tl_flits)
        except TypeError:
            raise EncodeError(f"send takes an iterable of TL flits, got {tl_flits!r:.40}") from None
        for tl in batch:  # a caller may pass anything at run time: each item is checked
            if not isinstance(tl, bytes | bytearray | memoryview) or len(tl) != TL_FLIT_BYTES:
                raise EncodeError(f"TL flits are {TL_FLIT_BYTES} bytes, got {tl!r:.40}")
        self._tx.queue_tl(b"".join(batch))

    def send_message(self, message: DLMessage, *, reliable: bool = False,
                     control: bool = False) -> None:
        """Queue a DL message (rule 9).

        By default it rides in the next flit built (best effort without data).
        ``reliable`` messages ride only in new data flits, so replay delivers
        them exactly once and in order (the caller supplies data to carry them,
        see ``reliable_pending``); ``control`` ones force a command flit out at
        the next poll, even while data waits or the link trains.
        """
        self._tx.queue_message(message.encode(), reliable=reliable, control=control)

    def set_tx_rate(self, rate: int, now: float | None = None) -> None:
        """Pace new data flits to (rate + 1)/256 of full rate (rule 10); 255 lifts it."""
        if not isinstance(rate, int) or not 0 <= rate <= 255:  # a bool is its int
            raise EncodeError(f"TL rate is 0..255, got {rate!r}", field="rate")
        self._tx.set_rate(rate)

    def poll_control(self, now: float) -> bytes | None:
        """Only a command flit with queued control messages, or ``None`` (rule 11:
        what a training link sends)."""
        check_time(now)
        if not self._tx.has_control:
            return None
        return self._ack_only()

    def retrained(self, now: float) -> list[ev.DLEvent]:
        """The link has retrained (rule 11): replay everything unacknowledged from the
        acknowledged point, and ask the peer to replay from the expected one."""
        now = check_time(now)
        self._rx.retrained()
        return self._tx.retrained(now)

    def discard(self) -> None:
        """The link is in fault (rule 11): drop everything queued, unacknowledged or
        owed; the DL is idle from now on."""
        self._tx.discard()
        self._rx.discard()

    def next_timer(self) -> float | None:
        """When ``handle_timer`` must next be called, or ``None`` (rule 6)."""
        return self._tx.deadline

    def handle_timer(self, now: float) -> list[ev.DLEvent]:
        """Run the replay timer: if it has expired, replay everything unacknowledged
        (rule 6)."""
        return self._tx.timeout(check_time(now))

    def poll(self, now: float) -> bytes | None:
        """The DL flit to transmit in this slot (640 bytes), or ``None`` (rule 7's
        priority order)."""
        now = check_time(now)
        tx, rx = self._tx, self._rx
        if rx.owes_request:
            value = rx.request_value
            rx.request_sent()
            return tx.command(FlitOp.REPLAY_REQUEST, value)
        if tx.has_control:
            return self._ack_only()
        fresh = tx.fresh_ready(now)
        carries_ack = fresh and tx.implicit_ok()
        if rx.owes_ack and not carries_ack and rx.ack_due(now):
            return self._ack_only()
        if tx.replaying:
            return tx.replayed(now)
        if fresh:
            if not carries_ack:
                return tx.fresh(None, now)
            value = rx.ack_value
            rx.ack_sent()
            return tx.fresh(value, now)
        if rx.owes_ack or tx.has_messages:
            return self._ack_only()
        return None

    def receive(self, flit: bytes | bytearray | memoryview, now: float) -> list[ev.DLEvent]:
        """Process one received flit; return what happened (rules 3-5): the peer's ack
        or replay request goes to the transmitter, the rest to the receiver."""
        now = check_time(now)
        try:
            f = DLFlit.decode(flit)
        except CrcError as exc:
            return self._rx.on_bad_flit(ev.CrcErrorDetected(exc.expected, exc.actual))
        except DecodeError as exc:
            return self._rx.on_bad_flit(ev.MalformedFlit(str(exc)))
        events: list[ev.DLEvent] = []
        if f.op is FlitOp.ACK:
            self._tx.on_ack(f.ack_req_seq, now)
        elif f.op is FlitOp.REPLAY_REQUEST:
            events.extend(self._tx.on_replay_request(f.ack_req_seq, now))
        self._rx.on_flit(f, now, events)
        return events

    def _ack_only(self) -> bytes:
        """An ack-only flit (it also carries queued messages): it settles the ack owed."""
        value = self._rx.ack_value
        self._rx.ack_sent()
        return self._tx.command(FlitOp.ACK, value)


__all__ = ["DataLink", "check_time"]
