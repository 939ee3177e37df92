"""The sans-IO transaction-layer engine: UPLI operations in, 64-byte TL flits out.

A :class:`TransactionLayer` is both an originator (``read`` / ``write`` /
``atomic`` queue requests and later yield :class:`Completion` events) and a
completer (requests from the peer execute on its own :class:`Memory` and are
answered with responses). It never touches I/O or time:

* ``poll(now)`` returns the next TL flit to send, or ``None``;
* ``receive(flit, now)`` takes one TL flit from the peer (in order, exactly
  once — the DL's guarantee) and returns the events it produced.

It is composed of three objects, each owning its state:

* :class:`~ualink_ref.tl.originator.Originator` — issues operations, queues their
  requests and packs them (``specs/tl.md`` rules 1, 2, 5);
* :class:`~ualink_ref.tl.completer.Completer` — serves the peer's requests on the
  memory target and packs the responses (rules 3, 5, 7, 8, 9);
* :class:`~ualink_ref.tl.responses.ResponseTracker` — owns the tags and the
  outstanding operations, completes them from responses and runs the completion
  timer (rules 2, 6, 8, 9, 10);

and of the shared pieces it owns and hands to them: the credit books (rule 4,
:mod:`~ualink_ref.tl.credits`), the framing walk (:mod:`~ualink_ref.tl.framing`)
and the counters. The engine itself fills each control half-flit in the order of
rule 3 and fails the link on an undecodable control half-flit (rule 6, E7). The
rules are stated, with their provenance, in ``specs/tl.md`` ("The engine's rules").
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from ualink_ref.errors import CreditError, DecodeError, EncodeError, TruncatedError
from ualink_ref.sizes import TL_FLIT_BYTES, TL_HALF_BYTES
from ualink_ref.tl.codec import (
    CompressedRequest,
    CompressedResponseData,
    CompressedResponseNoData,
    FlowControl,
    Request,
    Response,
    VcFlowControl,
)
from ualink_ref.tl.completer import Completer, RxRequest
from ualink_ref.tl.config import DEFAULT_TL_CONFIG, TLConfig
from ualink_ref.tl.credits import (
    POOL,
    ReceiverBook,
    ReceiverCredits,
    SenderBook,
    SenderCredits,
)
from ualink_ref.tl.events import (
    Completion,
    FieldRejected,
    LinkFailed,
    TLCounters,
    TLEvent,
)
from ualink_ref.tl.field_code import encode_flow_control, encode_vc_flow_control
from ualink_ref.tl.framing import TLDeframer, byte_string, pad_control_half
from ualink_ref.tl.limits import TLLimits
from ualink_ref.tl.memory import Memory
from ualink_ref.tl.originator import Originator, QueuedRequest
from ualink_ref.tl.responses import ResponseTracker, RxResponse, TagBook, TagState
from ualink_ref.tl.upli import ACC_BITS, AtomicOp, Status

_ZERO_HALF = bytes(TL_HALF_BYTES)
_SECTORS_PER_HALF = 8


@dataclass(frozen=True, slots=True)
class CreditBooks:
    """A snapshot of one TL's credit books (:meth:`TransactionLayer.credit_books`):
    ``sender`` what the peer granted this end, ``receiver`` what this end granted it."""

    sender: SenderBook
    receiver: ReceiverBook


class TransactionLayer:
    """Sans-IO TL engine of accelerator ``acc_id`` serving ``memory`` (a fresh
    :class:`Memory` when ``None``), configured by ``config`` (see the module docstring).
    """

    def __init__(self, acc_id: int, memory: Memory | None = None, *,
                 config: TLConfig = DEFAULT_TL_CONFIG) -> None:
        if not isinstance(config, TLConfig):
            raise TypeError(f"config must be a TLConfig, got {config!r}")
        if not 0 <= acc_id < (1 << ACC_BITS):
            raise EncodeError(f"accelerator ID {acc_id} does not fit in {ACC_BITS} bits")
        self.acc_id = acc_id
        self.config = config
        self._counters = TLCounters()
        self._tx_credits = SenderCredits(config.limits.max_credits)
        self._rx_credits = ReceiverCredits(config.credits)
        self._eager_returns = not config.batch_credit_returns
        self._deframer = TLDeframer()  # the one half-flit framing walk
        self._tx_data: deque[bytes] = deque()  # data half-flits owed after a control half
        self._failed: str | None = None  # why the link failed (rule 6), once it has
        self._now = 0.0
        self._originator = Originator(acc_id, config.compress, self._counters)
        self._completer = Completer(
            acc_id, memory if memory is not None else Memory(), limits=config.limits,
            split=config.split, split_seed=config.split_seed, stop_tags=config.stop_tags,
            compress=config.compress, rx_credits=self._rx_credits, counters=self._counters)
        self._tracker = ResponseTracker(acc_id, config.timeout_slots, self._rx_credits,
                                        self._counters)
        # Who reads each kind of field from the peer (one lookup by the field's class); a
        # reader returns what its owner needs back once the field's data is complete.
        self._readers: dict[type, Callable[[Any, list[TLEvent]], object]] = {
            Request: self._completer.on_request,
            CompressedRequest: self._completer.on_request,
            Response: self._tracker.on_response,
            CompressedResponseData: self._tracker.on_response,
            CompressedResponseNoData: self._tracker.on_response,
            FlowControl: self._credit_return,
            VcFlowControl: self._credit_return,
        }
        # ... and who finishes it, by what its reader returned, once its data is in.
        self._finishers: dict[type, Callable[[Any, list[bytes], list[TLEvent]], None]] = {
            RxRequest: self._completer.serve,
            RxResponse: self._tracker.complete,
        }

    # -- UPLI calls (the originator's; specs/upli.md) -------------------------------

    def read(self, dst: int, addr: int, length: int, *, vc: int = 0, metadata: int = 0) -> int:
        """Queue a Read of ``length`` bytes at ``addr`` of accelerator ``dst``; return the
        operation handle (rule 2). ``EncodeError`` for an illegal access."""
        return self._originator.read(dst=dst, addr=addr, length=length, vc=vc,
                                     metadata=metadata)

    def write(
        self,
        dst: int,
        addr: int,
        data: bytes | bytearray | memoryview,
        byte_enable: int | Sequence[int] | None = None,
        *,
        vc: int = 0,
        metadata: int = 0,
        message: bool = False,
        poison: int = 0,
    ) -> int:
        """Queue a write; return the handle.

        Without ``byte_enable`` this is a WriteFull (0x29); with it a Write
        (0x28) whose byte i is written when bit i of the integer mask (or item
        i of a per-byte sequence of flags) is set. ``message=True`` sends a
        Write Message (0x2A) instead. ``poison`` marks data beats poisoned (bit
        i = beat i, 64 bytes each): the target stores them and poisons the bytes
        it writes from them (rules P2, P4).
        """
        return self._originator.write(dst=dst, addr=addr, data=data, byte_enable=byte_enable,
                                      vc=vc, metadata=metadata, message=message, poison=poison)

    def atomic(
        self,
        dst: int,
        addr: int,
        op: AtomicOp | int | str,
        operand: int,
        compare: int | None = None,
        size: int = 8,
        fetch: bool = True,
        *,
        vc: int = 0,
        metadata: int = 0,
        poison: int = 0,
    ) -> int:
        """Queue an atomic (AtomicR when ``fetch``, else AtomicNR); return the handle.

        ``op`` is an :class:`AtomicOp`, its value or its name; ``operand`` and
        ``compare`` (CAS only) are unsigned or signed integers that fit in
        ``size`` bytes; they travel little-endian. ``poison`` true marks the
        operand poisoned (rule P2): the target then does not execute it (rule P5).
        """
        return self._originator.atomic(dst=dst, addr=addr, op=op, operand=operand,
                                       compare=compare, size=size, fetch=fetch, vc=vc,
                                       metadata=metadata, poison=poison)

    # -- state --------------------------------------------------------------------

    @property
    def memory(self) -> Memory:
        """The memory this end serves to its peer."""
        return self._completer.memory

    @property
    def messages(self) -> list[tuple[int, int, bytes]]:
        """Write Message payloads received, ``(src_acc, addr, data)``, oldest first; the
        caller takes them (rule B3 caps how many are kept)."""
        return self._completer.messages

    @property
    def limits(self) -> TLLimits:
        """The configured bounds (``config.limits``; rules B1-B4)."""
        return self.config.limits

    @property
    def counters(self) -> TLCounters:
        """A snapshot of this TL's running totals."""
        return replace(self._counters)

    @property
    def queued(self) -> int:
        """Requests issued but not yet sent (waiting for tags or credits)."""
        return self._originator.queued

    def queued_requests(self) -> tuple[QueuedRequest, ...]:
        """The requests issued and not yet sent, in issue order (rule 1)."""
        return self._originator.queued_requests()

    @property
    def outstanding(self) -> int:
        """Requests sent and not yet answered."""
        return self._tracker.outstanding

    @property
    def quarantined(self) -> int:
        """Tags kept out of use until their ``last`` piece arrives (rules T4, S7)."""
        return self._tracker.quarantined

    def tag_state(self, tag: int) -> TagState:
        """Where wire tag ``tag`` is: ``"free"``, ``"outstanding"`` or ``"quarantined"``."""
        return self._tracker.tag_state(tag)

    def tag_book(self) -> TagBook:
        """Every wire tag's state, as a frozen snapshot (rule 2)."""
        return self._tracker.tag_book()

    @property
    def timers_armed(self) -> int:
        """Deadlines held by the completion timer, stale ones included (rule T1)."""
        return self._tracker.timers_armed

    @property
    def busy(self) -> bool:
        """True while anything is queued, outstanding, owed as data, or to be answered."""
        return bool(self._originator.queued or self._tracker.outstanding or self._tx_data
                    or self._completer.busy or self._deframer.pending)

    @property
    def rx_data_owed(self) -> int:
        """Data half-flits the peer still owes before its next control half-flit
        (the framing walk's state, ``specs/tl.md`` framing rule 3)."""
        return self._deframer.pending

    @property
    def failed(self) -> str | None:
        """Why the link failed (rule 6), or ``None`` while it has not."""
        return self._failed

    @property
    def responses_queued(self) -> int:
        """Responses waiting for the peer's credits (at most ``limits.max_responses``)."""
        return self._completer.responses_queued

    @property
    def requests_waiting(self) -> int:
        """Received requests waiting for room in the response queue (rule 7)."""
        return self._completer.requests_waiting

    # -- credits ------------------------------------------------------------------

    @property
    def credits_owed(self) -> bool:
        """True while this end owes its peer credit returns (rule 4)."""
        return self._rx_credits.owed_any

    def urge_credit_return(self) -> bool:
        """Send whatever credits are owed with the next control half-flit, even below
        the batching threshold (rule 4; the end of a run, so the books can close).
        Return :attr:`credits_owed`."""
        return self._rx_credits.urge()

    def credit_books(self) -> CreditBooks:
        """Both credit books as a frozen snapshot (an audit: rule 4)."""
        return CreditBooks(self._tx_credits.snapshot(), self._rx_credits.snapshot())

    # -- timers -------------------------------------------------------------------

    def next_timer(self) -> float | None:
        """The earliest completion deadline armed (rule 10), or ``None``."""
        return self._tracker.next_timer()

    def run_timer(self, now: float) -> list[Completion]:
        """End every operation whose deadline is at or before ``now`` with TIMEOUT
        (rule 10, T2); return those completions, oldest deadline first."""
        return self._tracker.run_timer(now)

    # -- flit output --------------------------------------------------------------

    def poll(self, now: float = 0.0) -> bytes | None:
        """The next 64-byte TL flit to send, or ``None`` when there is nothing to send.

        ``now`` (flit slots) is when a request packed now is sent: its completion
        deadline counts from it (rule 10). Timeouts themselves are run by
        :meth:`run_timer` and :meth:`receive`, never by ``poll``.
        """
        self._now = now
        first = self._tx_data.popleft() if self._tx_data else self._control_half()
        if first is None:
            return None
        second = self._tx_data.popleft() if self._tx_data else self._control_half()
        self._counters.flits_sent += 1
        return first + (second if second is not None else _ZERO_HALF)

    def _control_half(self) -> bytes | None:
        """One control half-flit, filled in the order of rule 3, or ``None``."""
        if self._failed is not None:
            return None
        self._completer.serve_waiting()  # rule 7: room may have opened since
        room = _SECTORS_PER_HALF
        parts: list[bytes] = []
        rx = self._rx_credits
        if rx.urgent:
            room -= self._emit_returns(parts, room)
        # Responses first: they free the peer's tags and never wait on our requests.
        room = self._completer.pack_responses(parts, room, self._tx_credits, self._tx_data)
        room = self._originator.pack_requests(parts, room, self._tx_credits, self._tracker,
                                              self._tx_data, self._now)
        if rx.owed_any and room and (parts or rx.urgent or self._eager_returns):
            if not parts:
                self._counters.credit_only_halves += 1
            room -= self._emit_returns(parts, room)
        return pad_control_half(parts, room)

    def _emit_returns(self, parts: list[bytes], room: int) -> int:
        """Pack owed credit returns, one field per source, into at most ``room`` sectors."""
        returns = self._rx_credits.take_returns(room)
        for source, (req_cmd, rsp_cmd, req_data, rsp_data) in returns:
            if source == POOL:
                parts.append(encode_flow_control(req_cmd=req_cmd, rsp_cmd=rsp_cmd,
                                                 req_data=req_data, rsp_data=rsp_data))
            else:
                parts.append(encode_vc_flow_control(vchan=source, req_cmd=req_cmd,
                                                    rsp_cmd=rsp_cmd, req_data=req_data,
                                                    rsp_data=rsp_data))
        self._counters.credit_returns_sent += len(returns)
        return len(returns)

    # -- flit input ---------------------------------------------------------------

    def receive(self, flit: bytes | bytearray | memoryview, now: float = 0.0) -> list[TLEvent]:
        """Take one TL flit from the peer; return the events it produced, in order.

        Events are :class:`Completion` s, :class:`FieldRejected` for each peer
        field that broke a rule, :class:`LateResponse` for a discarded late piece
        and :class:`LinkFailed` once the stream cannot be followed (rule 6).
        Nothing the peer sends raises; only a ``flit`` that is not 64 bytes raises
        :class:`~ualink_ref.errors.TruncatedError`.
        """
        if type(flit) is not bytes:
            flit = byte_string(flit, "TL flit", TL_FLIT_BYTES)
        if len(flit) != TL_FLIT_BYTES:
            raise TruncatedError("TL flit", TL_FLIT_BYTES, len(flit))
        self._counters.flits_received += 1
        if self._failed is not None:
            self._counters.flits_ignored += 1
            return []
        events: list[TLEvent] = []
        if self.config.timeout_slots is not None:  # rule T2: expiry before arrivals
            deadline = self._tracker.next_timer()
            if deadline is not None and deadline <= now:
                events.extend(self._tracker.run_timer(now))
        first, second = flit[:TL_HALF_BYTES], flit[TL_HALF_BYTES:]
        both_data = self._deframer.feed_data_flit(first, second)  # both data: one step
        finishers = self._finishers
        if both_data is not None:
            for pending in both_data:
                if pending.context is not None:
                    finishers[type(pending.context)](pending.context, pending.data, events)
            return events
        readers = self._readers
        for half in (first, second):
            try:
                started, done = self._deframer.feed_half(half)
            except DecodeError as exc:  # rule E7: the framing after this half is lost
                self._fail(f"undecodable control half-flit ({exc})", events)
                break
            for pending in started:  # account for each field as soon as it is read
                reader = readers.get(type(pending.value))
                if reader is not None:  # its owner; what it returns comes back when done
                    pending.context = reader(pending.value, events)
            for pending in done:  # its data is complete: serve a request, end an operation
                if pending.context is not None:
                    finishers[type(pending.context)](pending.context, pending.data, events)
        return events

    def _credit_return(self, value: FlowControl | VcFlowControl, events: list[TLEvent]) -> None:
        """A flow-control field: the peer's returns granted, all classes or none (rule 4)."""
        source = POOL if isinstance(value, FlowControl) else value.vchan
        counts = (value.req_cmd, value.rsp_cmd, value.req_data, value.rsp_data)
        if any(counts):
            try:
                self._tx_credits.grant_all(source, counts)
            except CreditError as exc:  # rule E6 / B4: past the maximum, nothing granted
                self._counters.fields_rejected += 1
                events.append(FieldRejected(value, exc))

    # -- failure ------------------------------------------------------------------

    def _fail(self, reason: str, events: list[TLEvent]) -> None:
        """Rule E7: the peer's stream cannot be followed; end every operation with an error."""
        self._failed = reason
        self._originator.refuse(reason)
        events.append(LinkFailed(reason))
        events.extend(self._end_all(Status.DATA_ERROR, f"LinkFailedError: link failed: {reason}"))

    # -- as the upper layer of a link end (ualink_ref.node.linkend.UpperLayer) ------

    def link_faulted(self) -> list[Completion]:
        """The link under this TL is in fault (called at each poll while it is): every
        queued and outstanding operation completes with ``config.fault_status``, once
        (operations issued later fail at the next poll; specs/dl.md L5)."""
        if self._originator.queued or self._tracker.outstanding:
            return self.fail_outstanding(self.config.fault_status)
        return []

    @property
    def busy_after_fault(self) -> bool:
        """True while operations issued after the fault are still to fail."""
        return bool(self._originator.queued)

    def fail_outstanding(self, status: Status) -> list[Completion]:
        """Complete every queued and outstanding operation with ``status``, once each,
        oldest first, and forget what is owed to or expected from the peer (the link
        under this TL is gone for good: a DL fault)."""
        done = self._end_all(status, None)
        self._deframer = TLDeframer()  # a half-received field will never be finished
        return done

    def _end_all(self, status: Status, error: str | None) -> list[Completion]:
        """Complete every queued and outstanding operation once, oldest first, and drop
        what was owed to the peer; requests waiting for room give their credits back."""
        ops = sorted([*self._tracker.end_all(), *self._originator.drain()],
                     key=lambda op: op.handle)
        self._completer.clear()
        self._tx_data.clear()
        return [Completion(op.handle, status, None, error) for op in ops]


__all__ = ["CreditBooks", "TransactionLayer"]
