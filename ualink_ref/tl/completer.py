"""The completer: the peer's requests served on this end's memory, answered in order.

:class:`Completer` reads each request field as it arrives (its credits consumed,
rule E1; a compressed one expanded through the receive address cache, rules 5 and
E2), executes it once its data is in (:func:`~ualink_ref.tl.target.execute`) while
the response queue has room (rule B1; otherwise it waits, in order, holding its
credits), and packs queued responses into control half-flits when the peer's
credits allow (rules 3-5). Requests with a tag in ``stop_tags`` are dropped
unexecuted (rule T5).

Its answers follow ``specs/tl.md`` rules S1-S3 (one response, or pieces by
``TLConfig.split``: :func:`pieces`) and P3 (each run of poisoned beats one DATA_ERROR
piece without data, whatever the mode); all of this is ``specs/tl.md`` rules 3, 5, 7,
8 and 9 of the engine.
"""

from __future__ import annotations

import random
from collections import deque
from itertools import pairwise
from typing import Literal, NamedTuple

from ualink_ref.errors import AddressCacheError, ConfigError, CreditError
from ualink_ref.tl.codec import (
    ADDR_LO_BITS,
    CompressedRequest,
    Request,
    TLField,
)
from ualink_ref.tl.credits import (
    POOL,
    REQ_CMD,
    REQ_DATA,
    RSP_CMD,
    RSP_DATA,
    ReceiverCredits,
    SenderCredits,
)
from ualink_ref.tl.events import FieldRejected, TLCounters, TLEvent
from ualink_ref.tl.field_code import (
    encode_compressed_response_no_data,
    encode_compressed_response_with_data,
    encode_response,
)
from ualink_ref.tl.limits import TLLimits
from ualink_ref.tl.memory import Memory
from ualink_ref.tl.records import keyword_constructor
from ualink_ref.tl.target import execute
from ualink_ref.tl.upli import REQUEST_DATA_CREDITS, Status, request_data_credits

_ADDR_LO_MASK = (1 << ADDR_LO_BITS) - 1

#: How the memory target answers a multi-beat Read (rule S2).
SplitMode = Literal["never", "always", "random"]
SPLIT_MODES: tuple[SplitMode, ...] = ("never", "always", "random")


def check_split(split: object) -> SplitMode:
    """``split`` when it names a mode; else :class:`ConfigError` (a caller's argument)."""
    if split not in SPLIT_MODES:
        raise ConfigError("split", f"must be one of {SPLIT_MODES}, got {split!r}")
    return split


class Rsp(NamedTuple):
    """A queued response or response piece (completer side)."""

    tag: int
    vc: int
    status: int
    rd_wr: int
    src: int  # the request's dst_acc: who answers
    dst: int
    halves: list[bytes]
    beats: int  # data beats carried (what the response-data credits pay for)
    len_field: int = 0  # beats answered - 1 (data beats, or a no-data error's span)
    offset: int = 0
    last: int = 1


#: ``Rsp(**fields)`` at the cost of a plain call (:mod:`~ualink_ref.tl.records`).
new_rsp = keyword_constructor(Rsp)


def pieces(
    tag: int, vc: int, rd_wr: int, src: int, dst: int, halves: list[bytes], beats: int,
    poisoned: int, split: SplitMode, rng: random.Random,
) -> list[Rsp]:
    """The pieces, in sending order, of an OKAY read answer of ``beats`` (>= 2) beats
    whose beats in mask ``poisoned`` (not all of them) are poisoned (rules S2, P3)."""
    cuts = [0]
    for i in range(1, beats):
        bad_change = (poisoned >> i & 1) != (poisoned >> (i - 1) & 1)
        if bad_change or split == "always" or (split == "random" and rng.random() < 0.5):
            cuts.append(i)
    cuts.append(beats)
    runs = list(pairwise(cuts))
    if split == "random":
        rng.shuffle(runs)
    out = []
    for i, (start, end) in enumerate(runs):
        count = end - start
        last = 1 if i == len(runs) - 1 else 0
        if poisoned >> start & 1:
            out.append(new_rsp(tag=tag, vc=vc, status=Status.DATA_ERROR, rd_wr=rd_wr, src=src,
                               dst=dst, halves=[], beats=0, len_field=count - 1, offset=start,
                               last=last))
        else:
            out.append(new_rsp(tag=tag, vc=vc, status=Status.OKAY, rd_wr=rd_wr, src=src,
                               dst=dst, halves=halves[2 * start : 2 * end], beats=count,
                               len_field=count - 1, offset=start, last=last))
    return out


class RxRequest(NamedTuple):
    """A received request, expanded from the address cache, and the credits it holds."""

    request: Request
    source: int  # credit source: a VC, or POOL
    data_credits: int


#: The records built per received request, at the cost of a plain call
#: (:mod:`~ualink_ref.tl.records`).
_new_request = keyword_constructor(Request)
_new_rx_request = keyword_constructor(RxRequest)


class Completer:
    """Serves the peer's requests and sends their responses (see the module docstring).

    ``memory`` is the target, ``limits`` its bounds (rules B1, B3), ``split`` /
    ``split_seed`` how multi-beat reads are answered (rule S2), ``stop_tags`` the tags
    never answered (rule T5), ``compress`` whether OKAY responses go compressed (rule 5).
    Request buffers are freed in ``rx_credits``; ``counters`` is the engine's.
    """

    def __init__(
        self, acc_id: int, memory: Memory, *, limits: TLLimits, split: SplitMode,
        split_seed: int, stop_tags: frozenset[int], compress: bool,
        rx_credits: ReceiverCredits, counters: TLCounters,
    ) -> None:
        self._acc_id = acc_id
        self.memory = memory
        #: Write Message payloads received: ``(src_acc, addr, data)`` (rule B3 caps them).
        self.messages: list[tuple[int, int, bytes]] = []
        self._limits = limits
        self._split: SplitMode = check_split(split)
        self._split_rng = random.Random(split_seed)
        self._stop_tags = stop_tags
        self._compress = compress
        self._rx_credits = rx_credits
        self._counters = counters
        self._ways: list[Request | None] = [None] * 4  # loaded by requests with cload set
        self._responses: deque[Rsp] = deque()
        self._head_stalled = False  # the head response counted as a credit stall, once
        # Received requests waiting for room in the response queue (rule B1), in order.
        self._waiting: deque[tuple[RxRequest, list[bytes]]] = deque()

    @property
    def responses_queued(self) -> int:
        """Responses waiting for the peer's credits (at most ``limits.max_responses``)."""
        return len(self._responses)

    @property
    def requests_waiting(self) -> int:
        """Received requests waiting for room in the response queue (rule B1)."""
        return len(self._waiting)

    @property
    def busy(self) -> bool:
        """True while a response is to be sent or a request to be served."""
        return bool(self._responses or self._waiting)

    # -- received requests ----------------------------------------------------------------

    def _reject(self, value: TLField, error: CreditError | AddressCacheError,
                out: list[TLEvent]) -> None:
        """Rule 6: drop one peer field on its own — count it and report why."""
        self._counters.fields_rejected += 1
        out.append(FieldRejected(value, error))

    def on_request(self, value: Request | CompressedRequest,
                   out: list[TLEvent]) -> RxRequest | None:
        """A request field just read: its credits consumed (rule E1), a compressed one
        expanded (rules 5, E2); ``None`` when it was rejected (the event is in ``out``)."""
        data_credits = REQUEST_DATA_CREDITS.get((value.cmd, value.numbeats))
        if data_credits is None:  # not a wire value (built by hand): compute it
            data_credits = request_data_credits(value.cmd, value.numbeats)
        source = POOL if value.pool else value.vchan
        try:
            self._rx_credits.consume(source, REQ_CMD, REQ_DATA, data_credits)
        except CreditError as exc:  # rule E1: nothing consumed, nothing held
            self._reject(value, exc, out)
            return None
        if isinstance(value, CompressedRequest):
            way = self._ways[value.cway]
            if way is None:  # rule E2: no address to serve it at; its buffers are freed
                self._rx_credits.free(source, REQ_CMD, REQ_DATA, data_credits)
                self._reject(value, AddressCacheError(value.cway), out)
                return None
            request = _new_request(
                cmd=value.cmd, vchan=value.vchan, asi=way.asi, tag=value.tag, pool=value.pool,
                attr=value.attr, len=value.len, metadata=way.metadata,
                addr=(way.addr & ~_ADDR_LO_MASK) | value.addr_lo, src_acc=way.src_acc,
                dst_acc=way.dst_acc, cload=0, cway=value.cway, numbeats=value.numbeats)
        else:
            request = value
            if request.cload:
                self._ways[request.cway] = request
        self._counters.requests_received += 1
        return _new_rx_request(request=request, source=source, data_credits=data_credits)

    def serve(self, rx: RxRequest, halves: list[bytes], out: list[TLEvent]) -> None:
        """The request ``rx`` has its data (``halves``): execute it now when its response
        can be held, else queue it behind those already waiting (rule B1). Serving reports
        nothing (``out`` is taken so that every field's finisher is called alike)."""
        if self._waiting or len(self._responses) >= self._limits.max_responses:
            self._waiting.append((rx, halves))
            self._counters.requests_deferred += 1
            return
        self._execute(rx, halves)

    def serve_waiting(self) -> None:
        """Execute waiting requests, in order, while the response queue has room (B1)."""
        waiting = self._waiting
        limit = self._limits.max_responses
        while waiting and len(self._responses) < limit:
            rx, halves = waiting.popleft()
            self._execute(rx, halves)

    def _execute(self, rx: RxRequest, halves: list[bytes]) -> None:
        request = rx.request
        self._rx_credits.free(rx.source, REQ_CMD, REQ_DATA, rx.data_credits)
        if request.tag in self._stop_tags:  # rule T5: never answered
            self._counters.requests_dropped += 1
            return
        status, rd_wr, out, beats, poisoned = execute(
            self.memory, self._acc_id, self.messages, request, halves,
            self._limits.max_messages)
        if poisoned:
            self._counters.poisoned_beats_sent += poisoned.bit_count()
        if beats < 2 or (self._split == "never" and not poisoned):  # one response (S2)
            self._responses.append(new_rsp(
                tag=request.tag, vc=request.vchan, status=status, rd_wr=rd_wr,
                src=request.dst_acc, dst=request.src_acc, halves=out, beats=beats,
                len_field=beats - 1 if beats else 0))
            return
        answer = pieces(request.tag, request.vchan, rd_wr, request.dst_acc, request.src_acc,
                        out, beats, poisoned, self._split, self._split_rng)
        if len(answer) > 1:
            self._counters.split_responses_sent += len(answer)
        self._responses.extend(answer)

    # -- sending ------------------------------------------------------------------------

    def pack_responses(self, parts: list[bytes], room: int, credits: SenderCredits,
                       data_out: deque[bytes]) -> int:
        """Pack queued responses into ``parts`` (``room`` sectors free) in order, each with
        credits from ``credits``; their data half-flits go to ``data_out`` (rule 3). Return
        the sectors still free."""
        responses = self._responses
        counters = self._counters
        while responses and room:
            rsp = responses[0]
            compressed = self._compress and rsp.status == Status.OKAY  # rule 5
            size = 1 if compressed else 2
            if size > room:
                break
            source = credits.take(rsp.vc, RSP_CMD, RSP_DATA, rsp.beats)
            if source < 0:
                if not self._head_stalled:
                    self._head_stalled = True
                    counters.credit_stalls += 1
                break
            responses.popleft()
            self._head_stalled = False
            pool = 1 if source == POOL else 0
            if compressed:
                encode = (encode_compressed_response_with_data if rsp.beats
                          else encode_compressed_response_no_data)
                parts.append(encode(vchan=rsp.vc, tag=rsp.tag, pool=pool, len=rsp.len_field,
                                    offset=rsp.offset, last=rsp.last))
                counters.compressed_responses += 1
            else:
                parts.append(encode_response(
                    vchan=rsp.vc, tag=rsp.tag, pool=pool, len=rsp.len_field, offset=rsp.offset,
                    status=rsp.status, rd_wr=rsp.rd_wr, last=rsp.last, src_acc=rsp.src,
                    dst_acc=rsp.dst))
            room -= size
            counters.responses_sent += 1
            if rsp.halves:
                data_out.extend(rsp.halves)
        return room

    def clear(self) -> None:
        """Drop every queued response and waiting request (the link is gone); waiting
        requests give their credits back."""
        self._responses.clear()
        self._head_stalled = False
        for rx, _halves in self._waiting:
            self._rx_credits.free(rx.source, REQ_CMD, REQ_DATA, rx.data_credits)
        self._waiting.clear()


__all__ = ["SPLIT_MODES", "Completer", "Rsp", "RxRequest", "SplitMode", "check_split", "pieces"]
