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
"""

from __future__ import annotations

from collections import deque
from collections.abc import Sequence
from dataclasses import replace
from typing import NamedTuple

from ualink_ref.errors import (
    AddressCacheError,
    CreditError,
    DecodeError,
    EncodeError,
    FieldRangeError,
    LinkFailedError,
    MisroutedError,
    ProtocolError,
    ReservedBitsError,
    ResponseMismatchError,
    TagError,
    TruncatedError,
    UALinkError,
    UnsupportedError,
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
    TLField,
    VcFlowControl,
    pack_field,
)
from ualink_ref.tl.credits import (
    NUM_VCS,
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
from ualink_ref.tl.events import Completion, FieldRejected, LinkFailed, TLCounters, TLEvent
from ualink_ref.tl.framing import PendingField, TLDeframer
from ualink_ref.tl.limits import TLLimits
from ualink_ref.tl.memory import Memory
from ualink_ref.tl.target import execute
from ualink_ref.tl.upli import (
    ACC_BITS,
    NUM_TAGS,
    AtomicOp,
    Command,
    Status,
    atomic_attr,
    beats_for,
    check_access,
    check_atomic,
    request_data_credits,
)

_STATUS = tuple(Status)
_HALF = TL_HALF_BYTES
_ZERO_HALF = bytes(_HALF)
_ADDR_LO_MASK = (1 << ADDR_LO_BITS) - 1


_REQUESTS = (Request, CompressedRequest)
_RESPONSES = (Response, CompressedResponseData, CompressedResponseNoData)
_CREDIT_RETURNS = (FlowControl, VcFlowControl)


class _RxRequest(NamedTuple):
    """A received request, expanded from the address cache, and the credits it holds."""

    request: Request
    source: int  # credit source: a VC, or POOL
    data_credits: int


class _RxResponse(NamedTuple):
    """A received response, reduced to what completing its operation needs."""

    tag: int
    status: int
    source: int  # credit source, or -1 when it consumed none (it overspent)
    beats: int
    src: int  # the responder, or -1 when implied (a compressed response)
    value: TLField
    problem: UALinkError | None  # a rule the field alone breaks (rule E3)


class _Op:
    """A queued or outstanding request (originator side)."""

    __slots__ = (
        "addr", "attr", "cmd", "data_credits", "dst", "halves", "handle", "len_field",
        "metadata", "nbytes", "numbeats", "stalled", "vc",
    )

    def __init__(
        self, handle: int, cmd: int, dst: int, addr: int, nbytes: int, len_field: int,
        numbeats: int, halves: list[bytes], data_credits: int, attr: int, vc: int, metadata: int,
    ) -> None:
        self.handle = handle
        self.cmd = cmd
        self.dst = dst
        self.addr = addr
        self.nbytes = nbytes  # bytes returned on completion (read length / atomic size)
        self.len_field = len_field
        self.numbeats = numbeats
        self.halves = halves
        self.data_credits = data_credits
        self.attr = attr
        self.vc = vc
        self.metadata = metadata
        self.stalled = False


class _Rsp:
    """A queued response (completer side)."""

    __slots__ = ("beats", "dst", "halves", "rd_wr", "src", "stalled", "status", "tag", "vc")

    def __init__(
        self, tag: int, vc: int, status: int, rd_wr: int, src: int, dst: int, halves: list[bytes],
        beats: int,
    ) -> None:
        self.src = src  # the request's dst_acc: who answers
        self.tag = tag
        self.vc = vc
        self.status = status
        self.rd_wr = rd_wr
        self.dst = dst
        self.halves = halves
        self.beats = beats
        self.stalled = False


class TransactionLayer:
    """Sans-IO TL engine of accelerator ``acc_id`` (see the module docstring)."""

    def __init__(
        self,
        acc_id: int,
        memory: Memory | None = None,
        *,
        credits: CreditConfig | None = None,
        compress: bool = True,
        batch_credit_returns: bool = False,
        limits: TLLimits | None = None,
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
        self._tx_next_way = 0
        # Address-cache ways as loaded by received requests with cload set.
        self._rx_ways: list[Request | None] = [None] * 4
        # The one half-flit framing walk; fields wait in it for their data.
        self._deframer = TLDeframer()

    # -- originator API -----------------------------------------------------------

    def read(self, dst: int, addr: int, length: int, *, vc: int = 0, metadata: int = 0) -> int:
        """Queue a Read of ``length`` bytes; return the operation handle (``tag``)."""
        check_access(addr, length)
        beats = beats_for(length)
        return self._queue(Command.READ, dst, addr, length, length // 4 - 1, beats - 1, [], 0,
                           0, vc, metadata)

    def write(
        self,
        dst: int,
        addr: int,
        data: bytes,
        byte_enable: int | Sequence[int] | None = None,
        *,
        vc: int = 0,
        metadata: int = 0,
        message: bool = False,
    ) -> int:
        """Queue a write; return the handle.

        Without ``byte_enable`` this is a WriteFull (0x29); with it a Write
        (0x28) whose byte i is written when bit i of the integer mask (or item
        i of a per-byte sequence of flags) is set. ``message=True`` sends a
        Write Message (0x2A) instead.
        """
        data = bytes(data)
        length = len(data)
        check_access(addr, length)
        beats = beats_for(length)
        padded = data + bytes(beats * 64 - length) if length % 64 else data
        halves = [padded[i : i + _HALF] for i in range(0, beats * 64, _HALF)]
        if message:
            if byte_enable is not None:
                raise EncodeError("a Write Message has no byte enables")
            cmd = Command.WRITE_MESSAGE
        elif byte_enable is None:
            cmd = Command.WRITE_FULL
        else:
            mask = _mask_of(byte_enable, length)
            halves.insert(0, mask.to_bytes(_HALF, "little"))
            cmd = Command.WRITE
        credits = beats + (1 if cmd == Command.WRITE else 0)
        return self._queue(cmd, dst, addr, 0, length // 4 - 1, beats - 1, halves, credits, 0,
                           vc, metadata)

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
    ) -> int:
        """Queue an atomic (AtomicR when ``fetch``, else AtomicNR); return the handle.

        ``op`` is an :class:`AtomicOp`, its value or its name; ``operand`` and
        ``compare`` (CAS only) are unsigned or signed integers that fit in
        ``size`` bytes; they travel little-endian.
        """
        try:
            op_value = AtomicOp[op.upper()] if isinstance(op, str) else AtomicOp(op)
        except (KeyError, ValueError):
            raise EncodeError(f"unknown atomic op {op!r}", field="attr") from None
        check_atomic(addr, op_value, size)
        if (op_value == AtomicOp.CAS) != (compare is not None):
            raise EncodeError("compare is required for CAS and only for CAS", field="compare")
        payload = _le(operand, size) + (_le(compare, size) if compare is not None else b"")
        beat = payload + bytes(64 - len(payload))
        cmd = Command.ATOMIC_R if fetch else Command.ATOMIC_NR
        return self._queue(cmd, dst, addr, size if fetch else 0, size // 4 - 1, 0,
                           [beat[:_HALF], beat[_HALF:]], 1, atomic_attr(op_value), vc, metadata)

    def _queue(
        self, cmd: int, dst: int, addr: int, nbytes: int, len_field: int, numbeats: int,
        halves: list[bytes], data_credits: int, attr: int, vc: int, metadata: int,
    ) -> int:
        if self._failed is not None:
            raise LinkFailedError(self._failed)
        if not 0 <= dst < (1 << ACC_BITS):
            raise EncodeError(f"destination {dst} does not fit in {ACC_BITS} bits", field="dst")
        if not 0 <= vc < NUM_VCS:
            raise EncodeError(f"virtual channel {vc} is not 0..3", field="vchan")
        if not 0 <= metadata < 256:
            raise EncodeError(f"metadata {metadata} does not fit in 8 bits", field="metadata")
        handle = self._next_handle
        self._next_handle += 1
        self._req_q.append(_Op(handle, cmd, dst, addr, nbytes, len_field, numbeats, halves,
                               data_credits, attr, vc, metadata))
        return handle

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

        ``now`` (flit slots) is accepted for the stack-wide ``poll(now)`` convention;
        the TL has no timers yet, so it does not use it.
        """
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
            len_field = rsp.beats - 1 if rsp.beats else 0
            if compressed:
                cls = CompressedResponseData if rsp.beats else CompressedResponseNoData
                parts.append(pack_field(cls(rsp.vc, rsp.tag, pool, len_field)))
                counters.compressed_responses += 1
            else:
                parts.append(pack_field(Response(rsp.vc, rsp.tag, pool, len_field, 0,
                                                 rsp.status, rsp.rd_wr, 1, rsp.src, rsp.dst)))
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
                ways = self._tx_ways
                way = ways.index(key) if key in ways else -1
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
            pool = 1 if source == POOL else 0
            if way >= 0:
                parts.append(pack_field(CompressedRequest(
                    op.cmd, op.vc, tag, pool, op.attr, op.len_field, way, op.numbeats,
                    op.addr & _ADDR_LO_MASK)))
                counters.compressed_requests += 1
            else:
                cload = 0
                cway = 0
                if self.compress:
                    cload = 1
                    cway = self._tx_next_way
                    self._tx_ways[cway] = key
                    self._tx_next_way = (cway + 1) & 3
                parts.append(pack_field(Request(
                    op.cmd, op.vc, 0, tag, pool, op.attr, op.len_field, op.metadata, op.addr,
                    self.acc_id, op.dst, cload, cway, op.numbeats)))
            room -= size
            counters.requests_sent += 1
            if op.halves:
                self._tx_data.extend(op.halves)
                op.halves = []  # the data is in flight; keep only what completion needs
        if rx.owed_any and room and (parts or rx.urgent or self._eager_returns):
            if not parts:
                counters.credit_only_halves += 1
            room -= self._emit_returns(parts, room)
        if not parts:
            return None
        if room:
            parts.append(bytes(4 * room))
        return b"".join(parts)

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
            flit = _as_flit(flit)
        if len(flit) != TL_FLIT_BYTES:
            raise TruncatedError("TL flit", TL_FLIT_BYTES, len(flit))
        self._counters.flits_received += 1
        if self._failed is not None:
            self._counters.flits_ignored += 1
            return []
        feed = self._deframer.feed_half
        for half in (flit[:_HALF], flit[_HALF:]):
            try:
                started, done = feed(half)
            except DecodeError as exc:  # rule E7: the framing after this half is lost
                self._fail(f"undecodable control half-flit ({exc})")
                break
            for pending in started:
                pending.context = self._on_field(pending.value)
            for pending in done:
                self._on_complete(pending)
        if not self._events:
            return []
        events, self._events = self._events, []
        return events

    def _on_field(self, value: TLField | None) -> _RxRequest | _RxResponse | None:
        """Account for a field as soon as it is read (credits, caches); what it needs later."""
        if isinstance(value, _REQUESTS):
            return self._rx_request(value)
        if isinstance(value, _RESPONSES):
            return self._rx_response(value)
        if isinstance(value, _CREDIT_RETURNS):
            self._rx_credit_return(value)
        return None

    def _on_complete(self, pending: PendingField) -> None:
        """A field whose data is complete: serve a request, complete an operation."""
        context = pending.context
        if isinstance(context, _RxRequest):
            self._serve(context, pending.data)
        elif isinstance(context, _RxResponse):
            self._complete(context, pending.data)

    def _reject(self, value: TLField, error: UALinkError) -> None:
        """Rule 6: drop one peer field on its own — count it and report why."""
        self._counters.fields_rejected += 1
        self._events.append(FieldRejected(value, error))

    def _rx_credit_return(self, value: FlowControl | VcFlowControl) -> None:
        source = POOL if isinstance(value, FlowControl) else value.vchan
        counts = (value.req_cmd, value.rsp_cmd, value.req_data, value.rsp_data)
        if counts[0] or counts[1] or counts[2] or counts[3]:
            try:
                self.tx_credits.grant_all(source, counts)
            except CreditError as exc:  # rule E6 / B4: past the maximum, nothing granted
                self._reject(value, exc)

    def _rx_request(self, value: Request | CompressedRequest) -> _RxRequest | None:
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
            request = Request(value.cmd, value.vchan, way.asi, value.tag, value.pool, value.attr,
                              value.len, way.metadata,
                              (way.addr & ~_ADDR_LO_MASK) | value.addr_lo, way.src_acc,
                              way.dst_acc, 0, value.cway, value.numbeats)
        else:
            request = value
            if request.cload:
                self._rx_ways[request.cway] = request
        self._counters.requests_received += 1
        return _RxRequest(request, source, data_credits)

    def _rx_response(
        self, value: Response | CompressedResponseData | CompressedResponseNoData
    ) -> _RxResponse:
        if isinstance(value, Response):
            status, src, dst = value.status, value.src_acc, value.dst_acc
            beats = value.len + 1 if value.rd_wr == 0 and status == Status.OKAY else 0
        else:
            status, src, dst = Status.OKAY, -1, self.acc_id  # src implied by the tag's request
            beats = value.len + 1 if isinstance(value, CompressedResponseData) else 0
        source = POOL if value.pool else value.vchan
        problem: UALinkError | None = None
        try:
            self.rx_credits.consume(source, RSP_CMD, RSP_DATA, beats)
        except CreditError as exc:  # rule E1: nothing consumed; still ends its tag (E4)
            problem, source = exc, -1
        if problem is None:
            problem = self._response_problem(value, status, dst)
        self._counters.responses_received += 1
        return _RxResponse(value.tag, status, source, beats, src, value, problem)

    def _response_problem(
        self, value: Response | CompressedResponseData | CompressedResponseNoData,
        status: int, dst: int,
    ) -> UALinkError | None:
        """A rule the response field breaks on its own (rule E3), or ``None``."""
        if value.spare:
            return ReservedBitsError(f"{type(value).__name__}.spare", value.spare)
        if value.offset or not value.last:
            return UnsupportedError("split responses (offset != 0 or last == 0)")
        if dst != self.acc_id:
            return MisroutedError("response", dst, self.acc_id)
        if status >= len(_STATUS):
            return FieldRangeError("status", status, "unknown status code")
        return None

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
        status, rd_wr, out, beats = execute(self.memory, self.acc_id, self.messages, request,
                                            halves, self.limits.max_messages)
        self._rsp_q.append(_Rsp(request.tag, request.vchan, status, rd_wr, request.dst_acc,
                                request.src_acc, out, beats))

    def _complete(self, rx: _RxResponse, halves: list[bytes]) -> None:
        # Buffers first (rule E1): whatever becomes of the response, its credits go back.
        if rx.source >= 0:
            self.rx_credits.free(rx.source, RSP_CMD, RSP_DATA, rx.beats)
        tag = rx.tag
        op = self._outstanding.pop(tag, None)
        if op is None:  # rule E5: no operation to end (the field's own fault named first)
            self._reject(rx.value, rx.problem or TagError(
                f"response for tag {tag}, which is not outstanding"))
            return
        self._free_tags.append(tag)
        problem = rx.problem or _mismatch(rx, op)
        if problem is not None:  # rule E4: the tag's one response was bad; end the op
            self._reject(rx.value, problem)
            self._events.append(Completion(op.handle, Status.DATA_ERROR, None,
                                           f"{type(problem).__name__}: {problem}"))
            return
        data: bytes | None = None
        if rx.status == 0 and op.nbytes:
            data = b"".join(halves)[: op.nbytes]
        self._events.append(Completion(op.handle, _STATUS[rx.status], data))

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
        self._free_tags.extend(sorted(self._outstanding))
        self._outstanding.clear()
        self._req_q.clear()
        self._rsp_q.clear()
        for rx, _halves in self._rx_waiting:
            self.rx_credits.free(rx.source, REQ_CMD, REQ_DATA, rx.data_credits)
        self._rx_waiting.clear()
        self._tx_data.clear()
        return [Completion(op.handle, status, None, error) for op in ops]


def _mismatch(rx: _RxResponse, op: _Op) -> ProtocolError | None:
    """How a well-formed response fails to fit its request (rule E4), or ``None``."""
    if rx.src >= 0 and rx.src != op.dst:
        return ResponseMismatchError(rx.tag, "src_acc", rx.src, op.dst)
    rd_wr_ok = rx.status != 0 or rx.beats == (beats_for(op.nbytes) if op.nbytes else 0)
    if not rd_wr_ok:
        return ResponseMismatchError(rx.tag, "beats", rx.beats,
                                     beats_for(op.nbytes) if op.nbytes else 0)
    return None


def _as_flit(flit: object) -> bytes:
    """A byte buffer (``bytes``, ``bytearray``, a ``memoryview`` or array of single
    bytes) as ``bytes``; anything else is a :class:`TruncatedError` (only
    ``UALinkError`` escapes a public entry point)."""
    if isinstance(flit, bytes | bytearray):
        return bytes(flit)
    try:
        view = memoryview(flit)  # type: ignore[arg-type]
    except TypeError:
        raise TruncatedError("TL flit", TL_FLIT_BYTES, -1) from None
    if view.itemsize != 1:  # an array of wider items is not a byte string
        raise TruncatedError("TL flit (bytes)", TL_FLIT_BYTES, -1)
    return view.tobytes()


def _mask_of(byte_enable: int | Sequence[int], length: int) -> int:
    if isinstance(byte_enable, int):
        if not 0 <= byte_enable < (1 << length):
            raise EncodeError(f"byte_enable mask does not fit {length} bytes", field="byte_enable")
        return byte_enable
    flags = list(byte_enable)
    if len(flags) != length:
        raise EncodeError(f"byte_enable has {len(flags)} flags for {length} bytes")
    return sum(1 << i for i, flag in enumerate(flags) if flag)


def _le(value: int, size: int) -> bytes:
    bits = 8 * size
    if not -(1 << (bits - 1)) <= value < (1 << bits):
        raise EncodeError(f"atomic operand {value} does not fit in {size} bytes", field="operand")
    return (value & ((1 << bits) - 1)).to_bytes(size, "little")


__all__ = ["Completion", "FieldRejected", "LinkFailed", "TLCounters", "TLEvent", "TLLimits",
           "TransactionLayer"]
