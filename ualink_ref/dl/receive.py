"""The receive half of a :class:`~ualink_ref.dl.datalink.DataLink`: flits in, verdicts out.

:class:`Receiver` owns everything this end knows of the peer's stream: the
next sequence number expected, the part of a TL flit held across DL flits,
the ack it owes and the replay request it owes. Which flits are taken, and
when a replay request is owed, is the table :data:`RX_TRANSITIONS`,
``(state, input) -> (action, next state)`` (specs/dl.md rules 2, 4, 5 and 11;
a pair not in the table changes nothing). When an ack is due is rule 8.
The receiver never sends: the :class:`~ualink_ref.dl.datalink.DataLink` asks
it what is owed (:attr:`Receiver.owes_request`, :meth:`Receiver.ack_due`) and
tells it when the transmitter has sent it (:meth:`Receiver.request_sent`,
:meth:`Receiver.ack_sent`).
"""

from __future__ import annotations

from dataclasses import fields
from enum import Enum

from ualink_ref.dl import events as ev
from ualink_ref.dl.config import DLConfig
from ualink_ref.dl.flit import NO_MESSAGES, DLFlit
from ualink_ref.dl.formats import FlitOp
from ualink_ref.dl.messages import decode_message
from ualink_ref.dl.transmit import DLCounters, seq_of
from ualink_ref.dl.verdict import Verdict, classify, phase_matches
from ualink_ref.errors import DecodeError
from ualink_ref.sizes import TL_FLIT_BYTES


class RxState(Enum):
    """Where the receiver stands in its error episode (rule 5).

    Two facts: is a gap open (a flit was dropped, the expected one has not
    arrived since), and is a replay request owed (not yet sent)?
    """

    IN_SEQUENCE = "in_sequence"  # no gap, no request owed
    REQUEST_OWED = "request_owed"  # a gap, its replay request not yet sent
    REQUEST_SENT = "request_sent"  # a gap, its request sent: no other until it closes
    CLOSED_REQUEST_OWED = "closed_request_owed"  # the gap closed before its request
    # left; the request still goes out (harmless: it names the expected number)


class RxInput(Enum):
    """What the receive table reacts to."""

    ACCEPTED = "accepted"  # a data flit with the expected number, in TL-stream phase
    DUPLICATE = "duplicate"  # a data flit behind the expected number (rule 2)
    ERROR = "error"  # a flit dropped: CRC, malformed, out of phase, or a gap (rule 5)
    REQUEST_SENT = "request_sent"  # the transmitter sent the owed replay request
    RETRAINED = "retrained"  # the link retrained (rule 11)
    DISCARDED = "discarded"  # the link is in fault (rule 11)


class RxAction(Enum):
    """What a receive transition does besides changing state."""

    NONE = "none"
    DELIVER = "deliver"  # take the flit: advance, owe an ack, deliver its TL flits
    ACK_DUPLICATE = "ack_duplicate"  # owe a prompt ack, once per replay run (rule 5)
    RESUME = "resume"  # after a retrain: a new replay run may owe its duplicate ack
    FORGET = "forget"  # in a fault: owe the peer nothing


_R, _I, _A = RxState, RxInput, RxAction
#: ``(state, input) -> (action, next state)`` of the receive side (rules 2, 4, 5, 11);
#: absent pairs change nothing. An ERROR opens one episode and owes one request; no
#: further request is owed until the expected flit closes it (rule 5).
RX_TRANSITIONS: dict[tuple[RxState, RxInput], tuple[RxAction, RxState]] = {
    (_R.IN_SEQUENCE, _I.ACCEPTED): (_A.DELIVER, _R.IN_SEQUENCE),
    (_R.REQUEST_OWED, _I.ACCEPTED): (_A.DELIVER, _R.CLOSED_REQUEST_OWED),
    (_R.REQUEST_SENT, _I.ACCEPTED): (_A.DELIVER, _R.IN_SEQUENCE),
    (_R.CLOSED_REQUEST_OWED, _I.ACCEPTED): (_A.DELIVER, _R.CLOSED_REQUEST_OWED),
    (_R.IN_SEQUENCE, _I.DUPLICATE): (_A.ACK_DUPLICATE, _R.IN_SEQUENCE),
    (_R.REQUEST_OWED, _I.DUPLICATE): (_A.ACK_DUPLICATE, _R.REQUEST_OWED),
    (_R.REQUEST_SENT, _I.DUPLICATE): (_A.ACK_DUPLICATE, _R.REQUEST_SENT),
    (_R.CLOSED_REQUEST_OWED, _I.DUPLICATE): (_A.ACK_DUPLICATE, _R.CLOSED_REQUEST_OWED),
    (_R.IN_SEQUENCE, _I.ERROR): (_A.NONE, _R.REQUEST_OWED),
    (_R.REQUEST_OWED, _I.ERROR): (_A.NONE, _R.REQUEST_OWED),
    (_R.REQUEST_SENT, _I.ERROR): (_A.NONE, _R.REQUEST_SENT),
    (_R.CLOSED_REQUEST_OWED, _I.ERROR): (_A.NONE, _R.REQUEST_OWED),
    (_R.REQUEST_OWED, _I.REQUEST_SENT): (_A.NONE, _R.REQUEST_SENT),
    (_R.CLOSED_REQUEST_OWED, _I.REQUEST_SENT): (_A.NONE, _R.IN_SEQUENCE),
    (_R.IN_SEQUENCE, _I.RETRAINED): (_A.RESUME, _R.REQUEST_OWED),
    (_R.REQUEST_OWED, _I.RETRAINED): (_A.RESUME, _R.REQUEST_OWED),
    (_R.REQUEST_SENT, _I.RETRAINED): (_A.RESUME, _R.REQUEST_OWED),
    (_R.CLOSED_REQUEST_OWED, _I.RETRAINED): (_A.RESUME, _R.REQUEST_OWED),
    (_R.IN_SEQUENCE, _I.DISCARDED): (_A.FORGET, _R.IN_SEQUENCE),
    (_R.REQUEST_OWED, _I.DISCARDED): (_A.FORGET, _R.REQUEST_SENT),
    (_R.REQUEST_SENT, _I.DISCARDED): (_A.FORGET, _R.REQUEST_SENT),
    (_R.CLOSED_REQUEST_OWED, _I.DISCARDED): (_A.FORGET, _R.IN_SEQUENCE),
}
del _R, _I, _A

#: The states in which a replay request is owed (rule 7 sends it first).
_REQUEST_OWED = frozenset((RxState.REQUEST_OWED, RxState.CLOSED_REQUEST_OWED))
_VERDICT_INPUT = {Verdict.ACCEPT: RxInput.ACCEPTED, Verdict.DUPLICATE: RxInput.DUPLICATE,
                  Verdict.GAP: RxInput.ERROR}


class Receiver:
    """Flits in; what to deliver and what the peer is owed (rules 2, 4, 5, 8, 11).

    Every attribute is private and changed only by the methods below.
    """

    def __init__(self, config: DLConfig) -> None:
        self._ack_interval = config.ack_interval
        self._ack_delay = config.effective_ack_delay
        self._counters = DLCounters()
        self._state = RxState.IN_SEQUENCE
        self._owes_request = False  # the state is one of _REQUEST_OWED (read every poll)
        self._expected = 0  # absolute number of the next flit expected
        self._rx_partial = bytearray()  # bytes of a TL flit begun in an earlier DL flit
        # The ack owed (rule 8): whether one is, and what makes it due.
        self._ack_owed = False
        self._rx_since_ack = 0  # data flits accepted since the last ack left
        self._unacked_since: float | None = None  # when the oldest of them was accepted
        self._dup_ack_owed = False  # a duplicate asks for an ack at once (rule 5)
        self._dup_run_answered = False  # this replay run has had its duplicate ack (rule 5)

    # -- what the owner reads ------------------------------------------------------

    @property
    def state(self) -> RxState:
        """The receive table's state."""
        return self._state

    @property
    def counters(self) -> DLCounters:
        """This half's running totals (a copy)."""
        return DLCounters(**{f.name: getattr(self._counters, f.name)
                             for f in fields(self._counters)})

    @property
    def accepted(self) -> int:
        """Data flits accepted in order so far (an unbounded count)."""
        return self._expected

    @property
    def ack_value(self) -> int:
        """The wire number an ack names: the last accepted in order, 0 for none (rule 3)."""
        return 0 if self._expected == 0 else seq_of(self._expected - 1)

    @property
    def request_value(self) -> int:
        """The wire number a replay request names: the next expected (rule 3)."""
        return seq_of(self._expected)

    @property
    def owes_request(self) -> bool:
        """True while a replay request is owed (rules 5, 7)."""
        return self._owes_request

    @property
    def owes_ack(self) -> bool:
        """True while an ack is owed, due or not (rule 8)."""
        return self._ack_owed

    def ack_due(self, now: float) -> bool:
        """Must the owed ack go out in this slot, even as an ack-only flit? (rule 8)"""
        return (self._dup_ack_owed or self._rx_since_ack >= self._ack_interval
                or (self._unacked_since is not None
                    and now - self._unacked_since >= self._ack_delay))

    # -- what the owner tells it ---------------------------------------------------

    def ack_sent(self) -> None:
        """An ack left (ack-only, piggy-backed or a replay request): it settles every
        ack owed (rule 8)."""
        self._ack_owed = False
        self._rx_since_ack = 0
        self._unacked_since = None
        self._dup_ack_owed = False

    def request_sent(self) -> None:
        """The owed replay request left; it also acknowledges (rules 3, 8)."""
        self._step(RxInput.REQUEST_SENT)
        self.ack_sent()

    def retrained(self) -> None:
        """The link retrained (rule 11): owe the peer a replay request from the expected
        point; the receive position is kept."""
        self._step(RxInput.RETRAINED)

    def discard(self) -> None:
        """The link is in fault (rule 11): owe the peer nothing."""
        self._step(RxInput.DISCARDED)

    # -- flits in --------------------------------------------------------------------

    def on_bad_flit(self, event: ev.CrcErrorDetected | ev.MalformedFlit) -> list[ev.DLEvent]:
        """A flit that failed its CRC or its format: dropped, an error (rule 5)."""
        self._counters.flits_received += 1
        if isinstance(event, ev.CrcErrorDetected):
            self._counters.crc_errors += 1
        else:
            self._counters.malformed += 1
        self._step(RxInput.ERROR)
        return [event]

    def on_flit(self, f: DLFlit, now: float, events: list[ev.DLEvent]) -> None:
        """A flit with a good CRC: judge it (rules 2, 4, 5) and append what happened."""
        self._counters.flits_received += 1
        if not f.tl:  # no sequence number: its messages only (rule 1)
            self._deliver(f, events)
            return
        if f.op is FlitOp.REPLAY:
            self._dup_run_answered = False  # a new replay run: it may owe one ack
        want = seq_of(self._expected)
        verdict, seq = classify(f, want)
        if verdict is Verdict.GAP:
            self._counters.sequence_errors += 1
            events.append(ev.SequenceGap(want, seq))
        elif verdict is Verdict.ACCEPT and not phase_matches(f, len(self._rx_partial)):
            self._counters.malformed += 1
            events.append(ev.MalformedFlit(
                f"TL stream phase: flit says first TL flit at {f.first_tl_start}, "
                f"receiver holds {len(self._rx_partial)} bytes of one"))
            self._step(RxInput.ERROR)
            return
        action = self._step(_VERDICT_INPUT[verdict])
        if action is RxAction.DELIVER:
            self._expected += 1
            self._counters.data_flits_accepted += 1
            self._ack_owed = True
            self._rx_since_ack += 1
            if self._unacked_since is None:
                self._unacked_since = now
            self._deliver(f, events)

    def _step(self, event: RxInput) -> RxAction:
        """Apply one input to the table; do the action's state changes; return it."""
        entry = RX_TRANSITIONS.get((self._state, event))
        if entry is None:
            return RxAction.NONE
        action, new = entry
        if new is not self._state:
            self._state = new
            self._owes_request = new in _REQUEST_OWED
        if action is RxAction.ACK_DUPLICATE:
            self._counters.duplicates += 1
            self._ack_owed = True
            if not self._dup_run_answered:  # one ack per run, not one per duplicate
                self._dup_run_answered = True
                self._dup_ack_owed = True
        elif action is RxAction.RESUME:
            self._dup_run_answered = False
        elif action is RxAction.FORGET:
            # Nothing owed now; the count toward ack_interval is kept (rule 8 counts
            # data flits accepted since the last ack *left*, and none has).
            self._ack_owed = self._dup_ack_owed = False
            self._unacked_since = None
        return action

    def _deliver(self, f: DLFlit, events: list[ev.DLEvent]) -> None:
        """Report a good flit's messages and completed TL flits, in segment order."""
        if f.messages == NO_MESSAGES:  # the common case: one pass over the TL bytes
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
        events.extend([ev.TLFlitDelivered(buf[i:i + TL_FLIT_BYTES])
                       for i in range(0, whole, TL_FLIT_BYTES)])
        self._counters.tl_flits_delivered += whole // TL_FLIT_BYTES
        self._rx_partial = bytearray(buf[whole:])


__all__ = ["RX_TRANSITIONS", "Receiver", "RxAction", "RxInput", "RxState"]
