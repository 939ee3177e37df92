"""The sans-IO transaction-layer engine: UPLI operations in, 64-byte TL flits out.

A :class:`TransactionLayer` is both an *originator* (``read`` / ``write`` /
``atomic`` queue requests and later yield :class:`Completion` events) and a
*completer* (requests from the peer execute on its own :class:`Memory` and
answer with responses). It never touches I/O or time:

* ``poll(now)`` returns the next TL flit to send, or ``None``;
* ``receive(flit, now)`` takes one TL flit from the peer (in order, exactly
  once — the DL's guarantee) and returns the :class:`Completion` events it
  produced (the stack-wide convention: ``poll`` gives bytes, ``receive``
  gives events).

Rules kept here (``specs/tl.md`` and ``specs/upli.md`` give provenance):

1. Requests leave in the order they were issued (one FIFO; a request that
   lacks a tag or credits blocks those behind it). The completer executes
   them in arrival order. This is stricter than the public ordering rule
   (same source, destination, 256-byte region and VC), so any sequential
   model of the issue order is exact.
2. The handle returned by ``read``/``write``/``atomic`` is a local operation
   number; the 11-bit wire tag is taken from the free pool when the request
   is sent (a caller out of wire tags sees back-pressure, not an error) and
   returned to the pool by the response.
3. Each control half-flit is filled as: urgent credit returns, responses,
   requests, then any other owed credit returns; unused sectors are zero.
   Data half-flits follow their control half-flit in field order.
4. Credits (see :mod:`ualink_ref.tl.credits`): a request or response is
   sent only with credits; received fields are checked against what was
   granted; buffers are freed (and credits owed back) as soon as a field
   is processed. Owed credits ride in leftover sectors of any control
   half-flit; they go *first* (before responses and requests) once some
   class owes at least half its capacity (or enough that the peer could
   otherwise be short of one maximal field), so they are never starved.
   With nothing else to send, ``poll`` returns a credit-only flit
   whenever credits are owed — or, with ``batch_credit_returns=True``,
   only once that threshold is reached (fewer flits, same safety).
5. Compressed fields (``compress=True``): a request whose ASI, destination,
   metadata and address bits 56..24 match an address-cache way is sent as
   a 2-sector compressed request; otherwise it is sent uncompressed with
   ``cload`` set, loading the next way (round robin). OKAY responses are sent
   as 1-sector compressed responses.
6. Errors from the peer (``specs/tl.md``, rules E1-E7): a field that breaks
   a rule is dropped on its own — counted, reported as a
   :class:`FieldRejected` event, credits it consumed returned — and the
   fields around it are processed as usual. A response naming an
   outstanding tag always ends that operation: with its status when it fits
   the request, else with ``DATA_ERROR`` and the reason. Only a control
   half-flit that cannot be decoded (the framing of everything after it is
   lost) fails the link: every queued and outstanding operation completes
   with an error, a :class:`LinkFailed` event is reported, later flits are
   ignored and new operations raise :class:`LinkFailedError`.
7. Bounded resources (``specs/tl.md``, rules B1-B4, :class:`TLLimits`): the
   completer executes a request only while fewer than ``max_responses``
   responses wait for credits (otherwise the request waits, holding its
   request credits); Write Message payloads, memory pages and granted
   credits are capped.
8. Split responses (``specs/tl.md`` rules S1-S7; :mod:`~ualink_ref.tl.completer`,
   :mod:`~ualink_ref.tl.reassembly`): the completer answers a multi-beat Read in
   one response or in pieces (``split=``); the originator reassembles pieces in
   any order, checks range, overlap and coverage, and completes the operation
   once, when the piece marked ``last`` completes the coverage.
9. Poison (rules P1-P5): poisoned read beats travel as DATA_ERROR pieces,
   poisoned write data as ``attr`` bits; completions say which beats were poisoned.
10. Completion timeouts (rules T1-T6, ``timeout_slots=``): an operation whose
    answer has not completed ``timeout_slots`` after its request was sent ends
    with the local status TIMEOUT, once; its tag stays out of use until the
    tag's ``last`` piece arrives; late pieces are discarded and reported.
"""

from __future__ import annotations

import random
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import replace
from typing import Any, NamedTuple

from ualink_ref.errors import (
    AddressCacheError,
    CreditError,
    DecodeError,
    EncodeError,
    TruncatedError,
)
from ualink_ref.sizes import TL_FLIT_BYTES, TL_HALF_BYTES
from ualink_ref.tl.codec import (
    ADDR_LO_BITS,
    CompressedRequest,
    CompressedResponseData,
    CompressedResponseNoData,
    FlowControl,
    Request,
    Response,
    VcFlowControl,
    pack_field,
    packer,
)
from ualink_ref.tl.completer import Rsp as _Rsp
from ualink_ref.tl.completer import SplitMode, check_split, pieces
from ualink_ref.tl.credits import (
    POOL,
    REQ_CMD,
    REQ_DATA,
    RSP_CMD,
    RSP_DATA,
    CreditConfig,
    ReceiverCredits,
    SenderCredits,
    check_config,
)
from ualink_ref.tl.events import (
    Completion,
    FieldRejected,
    LateResponse,
    LinkFailed,
    TLCounters,
    TLEvent,
)
from ualink_ref.tl.framing import TLDeframer, byte_string, pad_control_half
from ualink_ref.tl.limits import TLLimits
from ualink_ref.tl.memory import Memory
from ualink_ref.tl.originator import Op as _Op
from ualink_ref.tl.originator import OriginatorAPI
from ualink_ref.tl.reassembly import Partial
from ualink_ref.tl.responses import ResponseHandling, RxResponse
from ualink_ref.tl.target import execute
from ualink_ref.tl.upli import (
    ACC_BITS,
    NUM_TAGS,
    REQUEST_DATA_CREDITS,
    Status,
    request_data_credits,
)

# Enum members read once: on Python 3.11 ``Enum.MEMBER`` costs several times a global.
_OKAY = Status.OKAY
_REQUEST_CREDITS = REQUEST_DATA_CREDITS
_HALF = TL_HALF_BYTES
_ZERO_HALF = bytes(_HALF)
_ADDR_LO_MASK = (1 << ADDR_LO_BITS) - 1
# The fields this engine sends, packed from their values (no value object built per field).
_PACK_REQ, _PACK_CREQ, _PACK_RSP = packer(Request), packer(CompressedRequest), packer(Response)
_PACK_CRSP_DATA = packer(CompressedResponseData)
_PACK_CRSP_NODATA = packer(CompressedResponseNoData)
_tuple_new = tuple.__new__


class _RxRequest(NamedTuple):
    """A received request, expanded from the address cache, and the credits it holds."""

    request: Request
    source: int  # credit source: a VC, or POOL
    data_credits: int


class TransactionLayer(OriginatorAPI, ResponseHandling):
    """Sans-IO TL engine of accelerator ``acc_id`` (see the module docstring).

    ``split`` (``"never"``, ``"always"``, ``"random"``; ``split_seed`` for the last)
    says how this end's memory target answers multi-beat Reads (rule 8);
    ``timeout_slots`` (``None``: off) is the originator's completion timeout in
    flit slots (rule 10); ``stop_tags`` are wire tags the target never answers
    (a fault to inject: such requests are dropped unexecuted, rule T5).
    """

    def __init__(
        self,
        acc_id: int,
        memory: Memory | None = None,
        *,
        credits: CreditConfig | None = None,
        compress: bool = True,
        batch_credit_returns: bool = False,
        limits: TLLimits | None = None,
        split: SplitMode = "never",
        split_seed: int = 0,
        timeout_slots: float | None = None,
        stop_tags: Iterable[int] = (),
    ) -> None:
        if not 0 <= acc_id < (1 << ACC_BITS):
            raise EncodeError(f"accelerator ID {acc_id} does not fit in {ACC_BITS} bits")
        self.acc_id = acc_id
        self.memory = memory if memory is not None else Memory()
        self.compress = compress
        self.credit_config = credits or CreditConfig()
        check_config(self.credit_config)
        self.limits = limits or TLLimits()
        self._counters = TLCounters()
        self.messages: list[tuple[int, int, bytes]] = []  # Write Message: (src, addr, data)
        self.tx_credits = SenderCredits(self.limits.max_credits)
        self.rx_credits = ReceiverCredits(self.credit_config)
        self._eager_returns = not batch_credit_returns
        self._next_handle = 0
        self._free_tags: deque[int] = deque(range(NUM_TAGS))
        self._req_q: deque[_Op] = deque()
        self._rsp_q: deque[_Rsp] = deque()
        self._outstanding: dict[int, _Op] = {}
        self._events: list[TLEvent] = []  # produced by the receive() in progress
        # Received requests waiting for room in the response queue (rule 7), in order.
        self._rx_waiting: deque[tuple[_RxRequest, list[bytes]]] = deque()
        self._failed: str | None = None  # why the link failed (rule 6), once it has
        self._tx_data: deque[bytes] = deque()
        self._tx_ways: list[tuple[int, int, int, int] | None] = [None] * 4
        # The same ways by key (keys are distinct: a key is loaded only when absent),
        # so a request finds its way with one lookup.
        self._tx_way_of: dict[tuple[int, int, int, int], int] = {}
        self._tx_next_way = 0
        # Address-cache ways as loaded by received requests with cload set.
        self._rx_ways: list[Request | None] = [None] * 4
        # The one half-flit framing walk; fields wait in it for their data.
        self._deframer = TLDeframer()
        # Rule 8: how the target answers multi-beat reads; ``None`` for "never".
        self.split: SplitMode = check_split(split)
        self._split: SplitMode | None = None if split == "never" else split
        self._split_rng = random.Random(split_seed)
        self._partial: dict[int, Partial] = {}  # tag -> pieces so far (originator side)
        # Rule 10: (deadline, handle, tag) per request sent, earliest first; tags of
        # ended operations whose last piece has not come: tag -> (handle, why).
        self.timeout_slots = _check_timeout(timeout_slots)
        self._timers: list[tuple[float, int, int]] = []
        self._ended: dict[int, tuple[int, str]] = {}
        self._now: float = 0.0
        self.stop_tags = frozenset(stop_tags)
        # What a field does when it is read (returning what it needs later, its
        # context), and what that context does once the field's data is complete.
        self._field_handlers: dict[type, Callable[[Any], _RxRequest | RxResponse | None]] = {
            Request: self._rx_request,
            CompressedRequest: self._rx_request,
            Response: self._rx_response,
            CompressedResponseData: self._rx_response,
            CompressedResponseNoData: self._rx_response,
            FlowControl: self._rx_credit_return,
            VcFlowControl: self._rx_credit_return,
        }
        self._complete_handlers: dict[type, Callable[[Any, list[bytes]], None]] = {
            _RxRequest: self._serve,
            RxResponse: self._complete,
        }

    # -- state --------------------------------------------------------------------

    @property
    def counters(self) -> TLCounters:
        """A snapshot of this TL's running totals."""
        return replace(self._counters)

    @property
    def queued(self) -> int:
        """Requests issued but not yet sent (waiting for tags or credits)."""
        return len(self._req_q)

    @property
    def outstanding(self) -> int:
        """Requests sent and not yet answered."""
        return len(self._outstanding)

    @property
    def busy(self) -> bool:
        """True while anything is queued, outstanding, owed as data, or to be answered."""
        return bool(self._req_q or self._outstanding or self._rsp_q or self._tx_data
                    or self._deframer.pending or self._rx_waiting)

    @property
    def failed(self) -> str | None:
        """Why the link failed (rule 6), or ``None`` while it has not."""
        return self._failed

    @property
    def responses_queued(self) -> int:
        """Responses waiting for the peer's credits (at most ``limits.max_responses``)."""
        return len(self._rsp_q)

    @property
    def requests_waiting(self) -> int:
        """Received requests waiting for room in the response queue (rule 7)."""
        return len(self._rx_waiting)

    # -- flit output --------------------------------------------------------------

    def poll(self, now: float = 0.0) -> bytes | None:
        """The next 64-byte TL flit to send, or ``None`` when there is nothing to send.

        ``now`` (flit slots) is when a request packed now is sent: its completion
        deadline (``timeout_slots``, rule 10) counts from it. Timeouts themselves are
        run by :meth:`run_timer` and :meth:`receive`, never by ``poll``.
        """
        self._now = now
        first = self._tx_data.popleft() if self._tx_data else self._control_half()
        if first is None:
            return None
        second = self._tx_data.popleft() if self._tx_data else self._control_half()
        self._counters.flits_sent += 1
        return first + (second if second is not None else _ZERO_HALF)

    def _control_half(self) -> bytes | None:
        if self._failed is not None:
            return None
        if self._rx_waiting:
            self._serve_waiting()
        room = 8
        parts: list[bytes] = []
        rx = self.rx_credits
        counters = self._counters
        if rx.urgent:
            room -= self._emit_returns(parts, room)
        # Responses first: they free the peer's tags and never wait on our requests.
        rsp_q = self._rsp_q
        tx = self.tx_credits
        while rsp_q and room:
            rsp = rsp_q[0]
            compressed = self.compress and rsp.status == 0
            size = 1 if compressed else 2
            if size > room:
                break
            source = tx.take(rsp.vc, RSP_CMD, RSP_DATA, rsp.beats)
            if source < 0:
                if not rsp.stalled:
                    rsp.stalled = True
                    counters.credit_stalls += 1
                break
            rsp_q.popleft()
            pool = 1 if source == POOL else 0
            len_field = rsp.len_field
            if compressed:
                pack = _PACK_CRSP_DATA if rsp.beats else _PACK_CRSP_NODATA
                parts.append(pack(rsp.vc, rsp.tag, pool, len_field, rsp.offset, rsp.last))
                counters.compressed_responses += 1
            else:
                parts.append(_PACK_RSP(rsp.vc, rsp.tag, pool, len_field, rsp.offset,
                                       rsp.status, rsp.rd_wr, rsp.last, rsp.src, rsp.dst))
            room -= size
            counters.responses_sent += 1
            if rsp.halves:
                self._tx_data.extend(rsp.halves)
        req_q = self._req_q
        while req_q and room >= 2:
            op = req_q[0]
            way = -1
            key = (0, op.dst, op.metadata, op.addr >> ADDR_LO_BITS)
            if self.compress:
                way = self._tx_way_of.get(key, -1)
            size = 2 if way >= 0 else 4
            if size > room:
                break
            if not self._free_tags:
                if not op.stalled:
                    op.stalled = True
                    counters.tag_stalls += 1
                break
            source = tx.take(op.vc, REQ_CMD, REQ_DATA, op.data_credits)
            if source < 0:
                if not op.stalled:
                    op.stalled = True
                    counters.credit_stalls += 1
                break
            req_q.popleft()
            tag = self._free_tags.popleft()
            self._outstanding[tag] = op
            if self.timeout_slots is not None:  # rule T1: the one per-op cost, a push
                self._arm_timer(self._now + self.timeout_slots, op.handle, tag)
            pool = 1 if source == POOL else 0
            if way >= 0:
                parts.append(_PACK_CREQ(op.cmd, op.vc, tag, pool, op.attr, op.len_field, way,
                                        op.numbeats, op.addr & _ADDR_LO_MASK))
                counters.compressed_requests += 1
            else:
                cload = 0
                cway = 0
                if self.compress:
                    cload = 1
                    cway = self._tx_next_way
                    self._load_tx_way(cway, key)
                    self._tx_next_way = (cway + 1) & 3
                parts.append(_PACK_REQ(op.cmd, op.vc, 0, tag, pool, op.attr, op.len_field,
                                       op.metadata, op.addr, self.acc_id, op.dst, cload, cway,
                                       op.numbeats))
            room -= size
            counters.requests_sent += 1
            if op.halves:
                self._tx_data.extend(op.halves)
                op.halves = []  # the data is in flight; keep only what completion needs
        if rx.owed_any and room and (parts or rx.urgent or self._eager_returns):
            if not parts:
                counters.credit_only_halves += 1
            room -= self._emit_returns(parts, room)
        return pad_control_half(parts, room)

    def _load_tx_way(self, way: int, key: tuple[int, int, int, int]) -> None:
        """Rule 5: ``key`` replaces whatever address-cache way ``way`` held."""
        old = self._tx_ways[way]
        if old is not None:
            del self._tx_way_of[old]
        self._tx_ways[way] = key
        self._tx_way_of[key] = way

    def _emit_returns(self, parts: list[bytes], room: int) -> int:
        returns = self.rx_credits.take_returns(room)
        for source, counts in returns:
            value = FlowControl(*counts) if source == POOL else VcFlowControl(source, *counts)
            parts.append(pack_field(value))
        self._counters.credit_returns_sent += len(returns)
        return len(returns)

    # -- flit input ---------------------------------------------------------------

    def receive(self, flit: bytes | bytearray | memoryview, now: float = 0.0) -> list[TLEvent]:
        """Take one TL flit from the peer; return the events it produced, in order.

        Events are :class:`Completion` s, :class:`FieldRejected` for each peer
        field that broke a rule (rule 6) and :class:`LinkFailed` once the stream
        cannot be followed. Nothing the peer sends raises; only a ``flit`` that is
        not 64 bytes raises :class:`~ualink_ref.errors.TruncatedError`.
        """
        if type(flit) is not bytes:
            flit = byte_string(flit, "TL flit", TL_FLIT_BYTES)
        if len(flit) != TL_FLIT_BYTES:
            raise TruncatedError("TL flit", TL_FLIT_BYTES, len(flit))
        self._counters.flits_received += 1
        if self._failed is not None:
            self._counters.flits_ignored += 1
            return []
        if self._timers and self._timers[0][0] <= now:  # rule T2: expiry before arrivals
            self._events.extend(self.run_timer(now))
        deframer = self._deframer
        # Dispatch by exact type (one dict lookup, not isinstance chains): the walk only
        # yields the codec's own classes, or ``None`` for data owed from before it.
        on_complete = self._complete_handlers
        first, second = flit[:_HALF], flit[_HALF:]
        both_data = deframer.feed_data_flit(first, second)  # both halves data: one step
        for pending in both_data or ():
            context = pending.context
            if context is not None:
                on_complete[type(context)](context, pending.data)
        feed = deframer.feed_half
        on_field = self._field_handlers
        for half in (first, second) if both_data is None else ():
            try:
                started, done = feed(half)
            except DecodeError as exc:  # rule E7: the framing after this half is lost
                self._fail(f"undecodable control half-flit ({exc})")
                break
            for pending in started:  # account for each field as soon as it is read
                handler = on_field.get(type(pending.value))
                if handler is not None:
                    pending.context = handler(pending.value)
            for pending in done:  # its data is complete: serve a request, end an operation
                context = pending.context
                if context is not None:
                    on_complete[type(context)](context, pending.data)
        if not self._events:
            return []
        events, self._events = self._events, []
        return events

    def _rx_credit_return(self, value: FlowControl | VcFlowControl) -> None:
        source = POOL if isinstance(value, FlowControl) else value.vchan
        counts = (value.req_cmd, value.rsp_cmd, value.req_data, value.rsp_data)
        if counts[0] or counts[1] or counts[2] or counts[3]:
            try:
                self.tx_credits.grant_all(source, counts)
            except CreditError as exc:  # rule E6 / B4: past the maximum, nothing granted
                self._reject(value, exc)

    def _rx_request(self, value: Request | CompressedRequest) -> _RxRequest | None:
        data_credits = _REQUEST_CREDITS.get((value.cmd, value.numbeats))
        if data_credits is None:  # not a wire value (built by hand): compute it
            data_credits = request_data_credits(value.cmd, value.numbeats)
        source = POOL if value.pool else value.vchan
        try:
            self.rx_credits.consume(source, REQ_CMD, REQ_DATA, data_credits)
        except CreditError as exc:  # rule E1: nothing consumed, nothing held
            self._reject(value, exc)
            return None
        if isinstance(value, CompressedRequest):
            way = self._rx_ways[value.cway]
            if way is None:  # rule E2: no address to serve it at; its buffers are freed
                self.rx_credits.free(source, REQ_CMD, REQ_DATA, data_credits)
                self._reject(value, AddressCacheError(value.cway))
                return None
            # The full request, built as the codec's unpack builds values (every field
            # given: the NamedTuple's keyword-handling constructor is not needed).
            request = _tuple_new(Request, (
                value.cmd, value.vchan, way.asi, value.tag, value.pool, value.attr, value.len,
                way.metadata, (way.addr & ~_ADDR_LO_MASK) | value.addr_lo, way.src_acc,
                way.dst_acc, 0, value.cway, value.numbeats))
        else:
            request = value
            if request.cload:
                self._rx_ways[request.cway] = request
        self._counters.requests_received += 1
        return _tuple_new(_RxRequest, (request, source, data_credits))

    def _serve(self, rx: _RxRequest, halves: list[bytes]) -> None:
        # Rule B1: execute only while the response can be held; otherwise wait in order.
        if self._rx_waiting or len(self._rsp_q) >= self.limits.max_responses:
            self._rx_waiting.append((rx, halves))
            self._counters.requests_deferred += 1
            return
        self._execute(rx, halves)

    def _serve_waiting(self) -> None:
        waiting = self._rx_waiting
        limit = self.limits.max_responses
        while waiting and len(self._rsp_q) < limit:
            self._execute(*waiting.popleft())

    def _execute(self, rx: _RxRequest, halves: list[bytes]) -> None:
        request = rx.request
        self.rx_credits.free(rx.source, REQ_CMD, REQ_DATA, rx.data_credits)
        if self.stop_tags and request.tag in self.stop_tags:  # rule T5: never answered
            self._counters.requests_dropped += 1
            return
        status, rd_wr, out, beats, poisoned = execute(
            self.memory, self.acc_id, self.messages, request, halves, self.limits.max_messages)
        if poisoned:
            self._counters.poisoned_beats_sent += poisoned.bit_count()
        if beats < 2 or (self._split is None and not poisoned):  # one response (rule S2)
            self._rsp_q.append(_Rsp(request.tag, request.vchan, status, rd_wr, request.dst_acc,
                                    request.src_acc, out, beats, beats - 1 if beats else 0))
            return
        answer = pieces(request.tag, request.vchan, rd_wr, request.dst_acc, request.src_acc,
                        out, beats, poisoned, self._split or "never", self._split_rng)
        if len(answer) > 1:
            self._counters.split_responses_sent += len(answer)
        self._rsp_q.extend(answer)

    def _fail(self, reason: str) -> None:
        """Rule E7: the peer's stream cannot be followed; end every operation with an error."""
        self._failed = reason
        self._events.append(LinkFailed(reason))
        self._events.extend(self._end_all(Status.DATA_ERROR,
                                          f"LinkFailedError: link failed: {reason}"))

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
        ops = sorted([*self._outstanding.values(), *self._req_q], key=lambda op: op.handle)
        self._free_tags.extend(sorted([*self._outstanding, *self._ended]))
        self._outstanding.clear()
        self._ended.clear()  # no late answer can come over a failed link
        self._partial.clear()
        self._timers.clear()
        self._req_q.clear()
        self._rsp_q.clear()
        for rx, _halves in self._rx_waiting:
            self.rx_credits.free(rx.source, REQ_CMD, REQ_DATA, rx.data_credits)
        self._rx_waiting.clear()
        self._tx_data.clear()
        return [Completion(op.handle, status, None, error) for op in ops]


def _check_timeout(timeout_slots: object) -> float | None:
    """``timeout_slots`` if it is None or a positive number (not a bool).

    Not a number: ``TypeError``, as the native build's argument check raises
    before this runs; a bool, zero, negative or NaN: ``ValueError``.
    """
    if timeout_slots is None:
        return None
    if not isinstance(timeout_slots, int | float):
        raise TypeError(f"timeout_slots must be a positive number or None, got {timeout_slots!r}")
    if isinstance(timeout_slots, bool) or not timeout_slots > 0:
        raise ValueError(f"timeout_slots must be a positive number or None, got {timeout_slots!r}")
    return timeout_slots


__all__ = ["Completion", "FieldRejected", "LateResponse", "LinkFailed", "TLCounters", "TLEvent",
           "TLLimits", "TransactionLayer"]
