"""The response tracker: outstanding operations, their answers, their deadlines.

:class:`ResponseTracker` owns every wire tag: it lends one to each request sent
(``specs/tl.md`` rule 2), reads each response field as it arrives (its credits
consumed, what it breaks on its own noted: rules E1, E3), turns it — once its data
has arrived — into the end of its operation, exactly once (rules E4, E5, P3),
gathers split answers (rules S4-S7, :mod:`~ualink_ref.tl.reassembly`) and runs the
completion timer (rules T1-T6). A tag whose operation ended before its ``last``
piece came (timed out, or ended by a bad piece) stays quarantined until that piece
arrives.
"""

from __future__ import annotations

import heapq
from collections import deque
from dataclasses import dataclass
from typing import Literal, NamedTuple

from ualink_ref.errors import (
    CreditError,
    FieldRangeError,
    MisroutedError,
    ProtocolError,
    ReservedBitsError,
    ResponseMismatchError,
    TagError,
    UALinkError,
)
from ualink_ref.tl.codec import (
    CompressedResponseData,
    CompressedResponseNoData,
    Response,
    TLField,
)
from ualink_ref.tl.credits import POOL, RSP_CMD, RSP_DATA, ReceiverCredits
from ualink_ref.tl.events import Completion, FieldRejected, LateResponse, TLCounters, TLEvent
from ualink_ref.tl.op import Op
from ualink_ref.tl.reassembly import Partial, add_piece, completion
from ualink_ref.tl.records import keyword_constructor
from ualink_ref.tl.upli import NUM_TAGS, WIRE_STATUSES, Status

#: Where a wire tag is in its life (:meth:`ResponseTracker.tag_state`).
TagState = Literal["free", "outstanding", "quarantined"]


class RxResponse(NamedTuple):
    """A received response, reduced to what completing its operation needs."""

    tag: int
    status: int
    source: int  # credit source, or -1 when it consumed none (it overspent)
    beats: int
    src: int  # the responder, or -1 when implied (a compressed response)
    value: TLField
    problem: UALinkError | None  # a rule the field alone breaks (rule E3)
    offset: int  # first beat answered (rule S1)
    last: int  # 1 on the tag's final piece
    span: int  # beats answered: data beats, or a no-data error piece's len + 1


#: ``RxResponse(**fields)`` at the cost of a plain call (:mod:`~ualink_ref.tl.records`).
_new_rx_response = keyword_constructor(RxResponse)

@dataclass(frozen=True, slots=True)
class TagBook:
    """A snapshot of the wire tags (:meth:`ResponseTracker.tag_book`): every tag is in
    exactly one of the three sets."""

    free: frozenset[int]
    outstanding: frozenset[int]
    quarantined: frozenset[int]


class ResponseTracker:
    """Outstanding operations, their responses and deadlines (see the module docstring).

    ``timeout_slots`` (``None``: off) is the completion timeout of rule T1; received
    responses free their buffers in ``rx_credits``; ``counters`` is the engine's.
    """

    def __init__(self, acc_id: int, timeout_slots: float | None, rx_credits: ReceiverCredits,
                 counters: TLCounters) -> None:
        self._acc_id = acc_id
        self._timeout = timeout_slots
        self._rx_credits = rx_credits
        self._counters = counters
        self._free_tags: deque[int] = deque(range(NUM_TAGS))
        self._outstanding: dict[int, Op] = {}  # tag -> the operation it answers
        self._partial: dict[int, Partial] = {}  # tag -> pieces so far (rule S4)
        # Rule T4 / S7: tags of ended operations whose last piece has not come:
        # tag -> (handle, "timeout" | "error").
        self._ended: dict[int, tuple[int, str]] = {}
        # Rule T1: (deadline, handle, tag) per request sent, earliest first.
        self._timers: list[tuple[float, int, int]] = []

    # -- state ------------------------------------------------------------------------

    @property
    def outstanding(self) -> int:
        """Requests sent and not yet answered."""
        return len(self._outstanding)

    @property
    def quarantined(self) -> int:
        """Tags of ended operations (timed out, or ended by a bad piece) kept out of use
        until their ``last`` piece arrives (rules T4, S7)."""
        return len(self._ended)

    @property
    def has_free_tag(self) -> bool:
        """True when a request could be sent now as far as tags go (rule 2)."""
        return bool(self._free_tags)

    @property
    def timers_armed(self) -> int:
        """Deadlines in the timer heap, stale ones included (bounded: rule T1)."""
        return len(self._timers)

    def tag_state(self, tag: int) -> TagState:
        """Where wire tag ``tag`` is in its life."""
        if tag in self._outstanding:
            return "outstanding"
        if tag in self._ended:
            return "quarantined"
        return "free"

    def tag_book(self) -> TagBook:
        """Every tag's state at once, as a frozen value."""
        return TagBook(frozenset(self._free_tags), frozenset(self._outstanding),
                       frozenset(self._ended))

    # -- tags and timers ----------------------------------------------------------------

    def start(self, op: Op, now: float) -> int:
        """Lend a free tag to ``op``, sent at ``now``, and arm its deadline (rules 2, T1);
        return the tag. Only called when :attr:`has_free_tag`."""
        tag = self._free_tags.popleft()
        self._outstanding[tag] = op
        if self._timeout is not None:  # rule T1: the one per-op cost, a push
            self._arm_timer(now + self._timeout, op.handle, tag)
        return tag

    def _arm_timer(self, deadline: float, handle: int, tag: int) -> None:
        """Push a request's deadline (rule T1). Answered ops leave stale entries that
        :meth:`run_timer` skips; once they outnumber the live ones (plus slack) the heap
        is rebuilt from the live ones, so it stays bounded however long the timeout."""
        timers = self._timers
        if len(timers) > 2 * len(self._outstanding) + 64:
            live = self._outstanding
            timers[:] = [t for t in timers
                         if (op := live.get(t[2])) is not None and op.handle == t[1]]
            heapq.heapify(timers)
        heapq.heappush(timers, (deadline, handle, tag))

    def next_timer(self) -> float | None:
        """The earliest completion deadline armed (rule T1), or ``None``. It may belong to
        an operation already complete; :meth:`run_timer` then just forgets it."""
        return self._timers[0][0] if self._timers else None

    def run_timer(self, now: float) -> list[Completion]:
        """End every outstanding operation whose deadline is at or before ``now`` with
        :attr:`Status.TIMEOUT` (rule T2); return those completions, oldest deadline first."""
        timers = self._timers
        out: list[Completion] = []
        while timers and timers[0][0] <= now:
            deadline, handle, tag = heapq.heappop(timers)
            op = self._outstanding.get(tag)
            if op is None or op.handle != handle:
                continue  # answered (or ended) in time: a stale entry
            del self._outstanding[tag]
            self._partial.pop(tag, None)
            self._ended[tag] = (handle, "timeout")  # rule T4: quarantined
            self._counters.timeouts += 1
            sent = deadline - (self._timeout or 0)
            out.append(Completion(handle, Status.TIMEOUT, None,
                                  f"no complete response within {self._timeout:g} "
                                  f"slots of the request (sent in slot {sent:g}, tag {tag})"))
        return out

    def end_all(self) -> list[Op]:
        """Forget every outstanding operation and quarantined tag (the link under the TL
        is gone: no answer can come); every tag is free again. Return the operations."""
        ops = list(self._outstanding.values())
        self._free_tags.extend(sorted([*self._outstanding, *self._ended]))
        self._outstanding.clear()
        self._ended.clear()
        self._partial.clear()
        self._timers.clear()
        return ops

    # -- received responses ----------------------------------------------------------------

    def _reject(self, value: TLField, error: UALinkError, out: list[TLEvent]) -> None:
        """Rule 6: drop one peer field on its own — count it and report why."""
        self._counters.fields_rejected += 1
        out.append(FieldRejected(value, error))

    def on_response(
        self, value: Response | CompressedResponseData | CompressedResponseNoData,
        out: list[TLEvent],
    ) -> RxResponse:
        """A response field just read: its credits consumed (rule E1) and what the field
        alone breaks (rule E3) noted; its operation ends in :meth:`complete`, once its
        data is in. Nothing is reported yet (``out``, where a field's reader puts its
        events, is taken so that every reader is called alike)."""
        if type(value) is Response:
            status, src, dst = value.status, value.src_acc, value.dst_acc
            beats = value.len + 1 if value.rd_wr == 0 and status == Status.OKAY else 0
            span = value.len + 1
        else:
            status, src, dst = Status.OKAY, -1, self._acc_id  # src implied by the request
            beats = value.len + 1 if type(value) is CompressedResponseData else 0
            span = beats or 1
        source = POOL if value.pool else value.vchan
        problem: UALinkError | None = None
        try:
            self._rx_credits.consume(source, RSP_CMD, RSP_DATA, beats)
        except CreditError as exc:  # rule E1: nothing consumed; still ends its tag (E4)
            problem, source = exc, -1
        if problem is None:  # rule E3: what the field breaks on its own
            if value.spare:
                problem = ReservedBitsError(f"{type(value).__name__}.spare", value.spare)
            elif dst != self._acc_id:
                problem = MisroutedError("response", dst, self._acc_id)
            elif status >= len(WIRE_STATUSES):
                problem = FieldRangeError("status", status, "unknown status code")
        self._counters.responses_received += 1
        return _new_rx_response(tag=value.tag, status=status, source=source, beats=beats, src=src,
                          value=value, problem=problem, offset=value.offset, last=value.last,
                          span=span)

    def complete(self, rx: RxResponse, halves: list[bytes], out: list[TLEvent]) -> None:
        """The response ``rx`` has all its data (``halves``): free its buffers (rule E1)
        and end its operation, or take it as one piece (rule S1); events go to ``out``."""
        if rx.source >= 0:  # buffers first: whatever becomes of the response
            self._rx_credits.free(rx.source, RSP_CMD, RSP_DATA, rx.beats)
        tag = rx.tag
        if rx.offset or not rx.last or tag in self._partial:  # rule S1: a piece
            self._piece(rx, halves, out)
            return
        op = self._outstanding.pop(tag, None)
        if op is None:
            self._unexpected(rx, out)
            return
        self._free_tags.append(tag)
        problem = rx.problem
        if problem is None:  # rule E4: the response must fit its request
            if rx.src >= 0:  # a full response names its responder (a compressed one not)
                problem = _source_mismatch(rx, op)
            if problem is None and rx.status == 0 and rx.beats != op.rsp_beats:
                problem = ResponseMismatchError(tag, "beats", rx.beats, op.rsp_beats)
        if problem is not None:
            self._end_op(rx, op, problem, out)
            return
        status = rx.status
        if status == Status.OKAY:
            data = b"".join(halves)[: op.nbytes] if op.nbytes else None
            out.append(Completion(op.handle, Status.OKAY, data))
        elif status == Status.DATA_ERROR and op.nbytes:  # rule P3: the read's data poisoned
            self._counters.poisoned_completions += 1
            out.append(Completion(op.handle, Status.DATA_ERROR, None,
                                  poisoned=(1 << op.rsp_beats) - 1))
        else:
            out.append(Completion(op.handle, WIRE_STATUSES[status], None))

    def _piece(self, rx: RxResponse, halves: list[bytes], out: list[TLEvent]) -> None:
        """One piece of a split answer (rules S4-S7)."""
        tag = rx.tag
        self._counters.split_responses_received += 1
        op = self._outstanding.get(tag)
        if op is None:
            self._unexpected(rx, out)
            return
        n = op.rsp_beats
        partial = self._partial.get(tag)
        if partial is None:
            partial = self._partial[tag] = Partial(n)
        problem = rx.problem or _source_mismatch(rx, op) or add_piece(
            partial, tag, rx.offset, rx.last, rx.status, rx.beats, rx.span, n, halves)
        if problem is None and not rx.last:
            return  # more pieces to come
        del self._outstanding[tag]
        del self._partial[tag]
        if problem is not None:  # rule S7: the op ends now; later pieces are discarded
            if rx.last:
                self._free_tags.append(tag)
            else:
                self._ended[tag] = (op.handle, "error")
            self._end_op(rx, op, problem, out)
            return
        self._free_tags.append(tag)
        done = completion(op.handle, op.nbytes, partial)
        if done.poisoned:
            self._counters.poisoned_completions += 1
        out.append(done)

    def _end_op(self, rx: RxResponse, op: Op, problem: UALinkError, out: list[TLEvent]) -> None:
        """Rules E4 / S7: report the bad field and end its operation with an error, once."""
        self._reject(rx.value, problem, out)
        out.append(Completion(op.handle, Status.DATA_ERROR, None,
                              f"{type(problem).__name__}: {problem}"))

    def _unexpected(self, rx: RxResponse, out: list[TLEvent]) -> None:
        """A response whose tag has no operation waiting: a late piece of an ended
        operation (rules T3, S7: discarded, reported; ``last`` frees the tag), else E5."""
        tag = rx.tag
        ended = self._ended.get(tag)
        if ended is None or rx.problem is not None:  # rule E5 (its own fault named first)
            self._reject(rx.value, rx.problem or TagError(
                f"response for tag {tag}, which is not outstanding"), out)
            return
        handle, after = ended
        final = bool(rx.last)
        if after == "timeout":
            self._counters.late_responses += 1
        else:
            self._counters.responses_discarded += 1
        if final:
            del self._ended[tag]
            self._free_tags.append(tag)
        out.append(LateResponse(handle, tag, rx.value, after, final))


def _source_mismatch(rx: RxResponse, op: Op) -> ProtocolError | None:
    """A response from another accelerator than the request went to (rule E4)."""
    if rx.src >= 0 and rx.src != op.dst:
        return ResponseMismatchError(rx.tag, "src_acc", rx.src, op.dst)
    return None


__all__ = ["ResponseTracker", "RxResponse", "TagBook", "TagState"]
