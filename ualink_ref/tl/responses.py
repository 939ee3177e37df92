"""The originator's side of received responses: completions, split pieces, timeouts.

:class:`ResponseHandling` is the part of
:class:`~ualink_ref.tl.transaction.TransactionLayer` that reads each response
field as it arrives (its credits consumed, what it breaks on its own noted: rules
E1, E3), turns it (once its data has arrived) into the end of an operation —
exactly once — and runs the completion timer (``specs/tl.md`` rules E4-E5, S4-S7,
P3, T1-T6):

* a response with ``offset`` 0 and ``last`` 1 for a tag with no pieces yet is
  the whole answer (the fast path: what every unsplit answer is);
* anything else is a piece, checked and gathered by
  :mod:`~ualink_ref.tl.reassembly`; a bad piece ends the operation with
  DATA_ERROR and its reason, and the tag stays quarantined until the tag's
  ``last`` piece arrives (later pieces are discarded as :class:`LateResponse`);
* :meth:`run_timer` ends operations whose deadline passed with the local
  status TIMEOUT; their tags are quarantined the same way. Deadlines sit in a
  heap: checking costs one comparison when nothing expires.
"""

from __future__ import annotations

import heapq
from collections import deque
from typing import NamedTuple

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
from ualink_ref.tl.originator import Op
from ualink_ref.tl.reassembly import Partial, add_piece, completion
from ualink_ref.tl.upli import WIRE_STATUSES, Status

_STATUS = WIRE_STATUSES
_NUM_STATUS = len(WIRE_STATUSES)
_tuple_new = tuple.__new__
# Enum members read once: on Python 3.11 ``Enum.MEMBER`` costs several times a global.
_OKAY, _DATA_ERROR = Status.OKAY, Status.DATA_ERROR


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



class ResponseHandling:
    """Received responses and the completion timer (mixed into the TL engine)."""

    _counters: TLCounters
    _events: list[TLEvent]
    _outstanding: dict[int, Op]
    _free_tags: deque[int]
    _partial: dict[int, Partial]
    _ended: dict[int, tuple[int, str]]
    _timers: list[tuple[float, int, int]]
    timeout_slots: float | None
    rx_credits: ReceiverCredits
    acc_id: int

    @property
    def quarantined(self) -> int:
        """Tags of ended operations (timed out, or ended by a bad piece) kept out of use
        until their ``last`` piece arrives (rules T4, S7)."""
        return len(self._ended)

    def _arm_timer(self, deadline: float, handle: int, tag: int) -> None:
        """Push a request's deadline (rule T1). Answered ops leave stale entries that
        :meth:`run_timer` skips; once they outnumber the live ones (plus slack) the heap
        is rebuilt from the live ones, so it never holds more than twice the most ops
        ever outstanding + 65 (2 * 2,048 + 65 entries) however long the timeout."""
        timers = self._timers
        if len(timers) > 2 * len(self._outstanding) + 64:
            live = self._outstanding
            timers[:] = [t for t in timers
                         if (op := live.get(t[2])) is not None and op.handle == t[1]]
            heapq.heapify(timers)
        heapq.heappush(timers, (deadline, handle, tag))

    def next_timer(self) -> float | None:
        """The earliest completion deadline armed (rule 10), or ``None``. It may belong to
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
            sent = deadline - (self.timeout_slots or 0)
            out.append(Completion(handle, Status.TIMEOUT, None,
                                  f"no complete response within {self.timeout_slots:g} "
                                  f"slots of the request (sent in slot {sent:g}, tag {tag})"))
        return out

    def _reject(self, value: TLField, error: UALinkError) -> None:
        """Rule 6: drop one peer field on its own — count it and report why."""
        self._counters.fields_rejected += 1
        self._events.append(FieldRejected(value, error))

    def _rx_response(
        self, value: Response | CompressedResponseData | CompressedResponseNoData
    ) -> RxResponse:
        """A response field just read: its credits consumed (rule E1) and what the field
        alone breaks (rule E3) noted; its operation ends once its data is in."""
        if type(value) is Response:
            status, src, dst = value.status, value.src_acc, value.dst_acc
            beats = value.len + 1 if value.rd_wr == 0 and status == _OKAY else 0
            span = value.len + 1
        else:
            status, src, dst = _OKAY, -1, self.acc_id  # src implied by the tag's request
            beats = value.len + 1 if type(value) is CompressedResponseData else 0
            span = beats or 1
        source = POOL if value.pool else value.vchan
        problem: UALinkError | None = None
        try:
            self.rx_credits.consume(source, RSP_CMD, RSP_DATA, beats)
        except CreditError as exc:  # rule E1: nothing consumed; still ends its tag (E4)
            problem, source = exc, -1
        # Rule E3, written out for the common case; _response_problem says which rule.
        if problem is None and (value.spare or dst != self.acc_id or status >= _NUM_STATUS):
            problem = self._response_problem(value, status, dst)
        self._counters.responses_received += 1
        # Every field given, so the NamedTuple's keyword-handling constructor is skipped.
        return _tuple_new(RxResponse, (value.tag, status, source, beats, src, value, problem,
                                       value.offset, value.last, span))

    def _response_problem(
        self, value: Response | CompressedResponseData | CompressedResponseNoData,
        status: int, dst: int,
    ) -> UALinkError | None:
        """A rule the response field breaks on its own (rule E3), or ``None``."""
        if value.spare:
            return ReservedBitsError(f"{type(value).__name__}.spare", value.spare)
        if dst != self.acc_id:
            return MisroutedError("response", dst, self.acc_id)
        if status >= len(_STATUS):
            return FieldRangeError("status", status, "unknown status code")
        return None

    def _complete(self, rx: RxResponse, halves: list[bytes]) -> None:
        # Buffers first (rule E1): whatever becomes of the response, its credits go back.
        if rx.source >= 0:
            self.rx_credits.free(rx.source, RSP_CMD, RSP_DATA, rx.beats)
        tag = rx.tag
        if rx.offset or not rx.last or tag in self._partial:  # rule S1: a piece
            self._piece(rx, halves)
            return
        op = self._outstanding.pop(tag, None)
        if op is None:
            self._unexpected(rx)
            return
        self._free_tags.append(tag)
        # Rule E4: the tag's one response was bad (its own fault, or it does not fit the
        # request; the check is :func:`_mismatch`, written out for the common case).
        if rx.problem is not None or (rx.src >= 0 and rx.src != op.dst) or (
                rx.status == 0 and rx.beats != op.rsp_beats):
            problem = rx.problem or _mismatch(rx, op)
            if problem is not None:  # always, by the check above: end the op
                self._end_op(rx, op, problem)
                return
        status = rx.status
        if status == 0:
            data = b"".join(halves)[: op.nbytes] if op.nbytes else None
            self._events.append(Completion(op.handle, _OKAY, data))
        elif status == _DATA_ERROR and op.nbytes:  # rule P3: the read's data poisoned
            self._counters.poisoned_completions += 1
            self._events.append(Completion(op.handle, Status.DATA_ERROR, None,
                                           poisoned=(1 << op.rsp_beats) - 1))
        else:
            self._events.append(Completion(op.handle, _STATUS[status], None))

    def _piece(self, rx: RxResponse, halves: list[bytes]) -> None:
        """One piece of a split answer (rules S4-S7)."""
        tag = rx.tag
        self._counters.split_responses_received += 1
        op = self._outstanding.get(tag)
        if op is None:
            self._unexpected(rx)
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
            self._end_op(rx, op, problem)
            return
        self._free_tags.append(tag)
        done = completion(op.handle, op.nbytes, partial)
        if done.poisoned:
            self._counters.poisoned_completions += 1
        self._events.append(done)

    def _end_op(self, rx: RxResponse, op: Op, problem: UALinkError) -> None:
        """Rules E4 / S7: report the bad field and end its operation with an error, once."""
        self._reject(rx.value, problem)
        self._events.append(Completion(op.handle, Status.DATA_ERROR, None,
                                       f"{type(problem).__name__}: {problem}"))

    def _unexpected(self, rx: RxResponse) -> None:
        """A response whose tag has no operation waiting: a late piece of an ended
        operation (rules T3, S7: discarded, reported; ``last`` frees the tag), else E5."""
        tag = rx.tag
        ended = self._ended.get(tag)
        if ended is None or rx.problem is not None:  # rule E5 (its own fault named first)
            self._reject(rx.value, rx.problem or TagError(
                f"response for tag {tag}, which is not outstanding"))
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
        self._events.append(LateResponse(handle, tag, rx.value, after, final))


def _source_mismatch(rx: RxResponse, op: Op) -> ProtocolError | None:
    """A response from another accelerator than the request went to (rule E4)."""
    if rx.src >= 0 and rx.src != op.dst:
        return ResponseMismatchError(rx.tag, "src_acc", rx.src, op.dst)
    return None


def _mismatch(rx: RxResponse, op: Op) -> ProtocolError | None:
    """How a well-formed response fails to fit its request (rule E4), or ``None``."""
    if rx.src >= 0 and rx.src != op.dst:
        return ResponseMismatchError(rx.tag, "src_acc", rx.src, op.dst)
    if rx.status == 0 and rx.beats != op.rsp_beats:
        return ResponseMismatchError(rx.tag, "beats", rx.beats, op.rsp_beats)
    return None


__all__ = ["ResponseHandling", "RxResponse"]
