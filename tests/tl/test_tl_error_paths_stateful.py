"""Hypothesis state machines for the TL error paths of issue 13 (specs/tl.md S1-S7, T1-T6).

* :class:`SplitPeer` plays a hostile completer against a bare TransactionLayer:
  it answers reads with arbitrary pieces — any offset, length, status and
  ``last`` flag, for outstanding, ended or unknown tags, so overlaps, gaps and
  out-of-range pieces all happen — while time passes and a completion timeout
  may be armed. After every step: no operation completes twice, completed +
  outstanding + queued = issued, the credit books and the tag books balance.
  At the end, every tag still waiting gets a well-formed final answer: every
  operation has then completed exactly once, every tag is free again and every
  credit is back.
* :class:`DelayedAnswers` plays an honest completer whose answers (possibly
  split) each arrive after a drawn delay, against a drawn timeout: each
  operation completes exactly once, TIMEOUT exactly when its answer's last
  piece arrives at or after ``sent + timeout_slots`` (expiry runs before
  arrivals at the same slot, rule T2), with the memory's bytes otherwise; every
  late piece is reported once; tags and credits balance at the end.
"""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from tests.helpers.tl_peer import (
    books_balance,
    drain,
    flits,
    grant_all,
    halves,
    ok_response,
    requests_in,
)
from ualink_ref.tl import Status, TransactionLayer
from ualink_ref.tl.codec import Request
from ualink_ref.tl.config import TLConfig
from ualink_ref.tl.events import Completion, LateResponse
from ualink_ref.tl.framing import TLDeframer

_BEAT = bytes(range(64))


def _beat_halves(beats: int) -> list[bytes]:
    return [_BEAT[:32], _BEAT[32:]] * beats


class _Model:
    """The test's own reading of rules S1-S7 for one operation (independent of the engine)."""

    def __init__(self, handle: int, beats: int, deadline: float | None) -> None:
        self.handle, self.beats, self.deadline = handle, beats, deadline
        self.got = 0  # beats answered so far

    def take(self, offset: int, span: int, status: int, last: bool) -> str:
        """``"ok"`` / ``"status"`` (the op completes), ``"error"`` (ended by this piece) or
        ``"more"`` (more pieces awaited)."""
        n, full = self.beats, (1 << self.beats) - 1
        if not self.got and offset == 0 and last:  # the whole answer (rule S1)
            if status:
                return "status"
            return "ok" if span == n else "error"  # a write's OKAY carries nothing: n = 0
        if not n:
            return "error"  # S5: a write-type answer is never split
        mask = ((1 << span) - 1) << offset
        if offset + span > n or self.got & mask:
            return "error"  # S4: range, overlap
        self.got |= mask
        if last != (self.got == full):
            return "error"  # S6: gap at last, or complete without last
        return ("status" if status else "ok") if last else "more"


class SplitPeer(RuleBasedStateMachine):
    """Arbitrary response pieces against one originator (see the module docstring)."""

    def __init__(self) -> None:
        super().__init__()
        self.tl = TransactionLayer(1, config=TLConfig(compress=False, timeout_slots=None))
        self.now = 0.0
        self.walk = TLDeframer()
        drain(self.tl)
        grant_all(self.tl)
        self.requests: dict[int, Request] = {}  # wire tag -> the latest request with it
        self.issued = 0
        self.completed: dict[int, Completion] = {}
        self.model: dict[int, _Model] = {}  # wire tag -> outstanding op, as the test sees it
        self.ended: set[int] = set()  # wire tags quarantined, as the test sees it
        self.next_handle = 0
        self.statuses: dict[int, list[int]] = {}  # handle -> piece statuses so far (model)

    @rule(timeout=st.sampled_from([None, 5, 40]))
    @precondition(lambda self: self.issued == 0)
    def arm_timeout(self, timeout: int | None) -> None:
        # The timeout is configuration (a frozen TLConfig): before any op, a fresh engine.
        self.tl = TransactionLayer(1, config=TLConfig(compress=False, timeout_slots=timeout))
        drain(self.tl)
        grant_all(self.tl)

    @rule(length=st.sampled_from([4, 64, 100, 128, 192, 256]), write=st.booleans())
    def issue(self, length: int, write: bool) -> None:
        if write:
            self.tl.write(2, 0x1000, bytes(length))
        else:
            self.tl.read(2, 0x1000, length)
        handle, self.next_handle = self.next_handle, self.next_handle + 1
        self.issued += 1
        for req in self._pump():
            timeout = self.tl.config.timeout_slots
            self.model[req.tag] = _Model(handle, 0 if write else -(-length // 64),
                                         None if timeout is None else self.now + timeout)

    def _pump(self) -> list[Request]:
        out = []
        while (flit := self.tl.poll(self.now)) is not None:
            out.append(flit)
        found = requests_in(out, self.walk)
        for req in found:
            self.requests[req.tag] = req
        return found

    def _take(self, events: list[Any]) -> list[Any]:
        for event in events:
            if type(event) is Completion:
                assert event.handle not in self.completed, f"{event.handle} completed twice"
                self.completed[event.handle] = event
        return events

    @rule(data=st.data(), status=st.sampled_from([0, 0, 0, 3, 2]), last=st.booleans(),
          kind=st.sampled_from(["fresh", "fresh", "covered", "any", "stray"]))
    def piece(self, data: st.DataObject, status: int, last: bool, kind: str) -> None:
        if kind == "stray" or not self.requests:
            tag = data.draw(st.integers(0, 2047), label="tag")
            req = self.requests.get(tag) or Request(0x03, 0, 0, tag, 1, 0, 63, 0, 0x400, 1, 2,
                                                    0, 0, 3)
        else:
            req = self.requests[data.draw(st.sampled_from(sorted(self.requests)), label="tag")]
        op = self.model.get(req.tag)
        n = op.beats if op is not None else 4
        # Aim at the interesting cases: a beat not yet answered (a legal next piece), one
        # already answered (an overlap), or anything in 0..3 (range and gap errors too).
        pool = {"fresh": [i for i in range(n) if not (op and op.got >> i & 1)],
                "covered": [i for i in range(n) if op and op.got >> i & 1]}.get(kind) or [0, 1,
                                                                                         2, 3]
        offset = data.draw(st.sampled_from(pool), label="offset")
        span = data.draw(st.integers(1, 4 if kind == "any" else max(1, n - offset)),
                         label="span")
        read = req.cmd == 0x03
        beats = span if status == 0 and read else 0  # data only with a read-type OKAY
        field = ok_response(req, beats=span, offset=offset, status=status, last=int(last),
                            rd_wr=0 if read else 1)
        events = self._take(self._feed(halves([field], _beat_halves(beats))))
        self._check(req.tag, offset, span if read or status else 0, status, last, events)

    def _check(self, tag: int, offset: int, span: int, status: int, last: bool,
               events: list[Any]) -> None:
        """The engine's verdict on one piece equals the test model's."""
        done = [e for e in events if type(e) is Completion]
        late = [e for e in events if type(e) is LateResponse]
        op = self.model.get(tag)
        if op is None:
            if tag in self.ended:  # T3 / S7: discarded and reported; last frees the tag
                assert [(e.tag, e.final) for e in late] == [(tag, last)] and not done
                if last:
                    self.ended.discard(tag)
            else:  # E5: rejected, nothing completes
                assert not done and not late
            return
        verdict = op.take(offset, span, status, last)
        if verdict == "more":
            assert not done
            self.statuses.setdefault(op.handle, []).append(status)
            return
        [c] = done
        assert c.handle == op.handle
        del self.model[tag]
        if verdict == "error":
            assert c.status == Status.DATA_ERROR and c.error is not None
            if not last:
                self.ended.add(tag)
            return
        seen = [*self.statuses.pop(op.handle, []), status]
        # Rule S7: the first status other than OKAY / DATA_ERROR wins; else DATA_ERROR
        # (poisoned beats) if any piece had it; else OKAY.
        other = [x for x in seen if x not in (0, 3)]
        want = other[0] if other else (3 if 3 in seen else 0)
        assert c.error is None
        assert c.status == Status(want), (c, seen)

    def _feed(self, stream: list[bytes]) -> list[Any]:
        events: list[Any] = []
        for flit in flits(stream):
            events += self.tl.receive(flit, self.now)
        self._pump()  # credit returns go back to "us"; nothing else to send
        return events

    @rule(dt=st.integers(1, 30))
    def advance(self, dt: int) -> None:
        self.now += dt
        deadline = self.tl.next_timer()
        events = self.tl.run_timer(self.now) if deadline is not None and \
            self.now >= deadline else []
        self._take(events)
        expired = {tag for tag, op in self.model.items()
                   if op.deadline is not None and op.deadline <= self.now}
        assert sorted(e.handle for e in events) == sorted(self.model[t].handle for t in expired)
        assert all(e.status == Status.TIMEOUT for e in events)
        for tag in expired:
            del self.model[tag]
            self.ended.add(tag)
        self._pump()

    @invariant()
    def books(self) -> None:
        assert len(self.completed) + self.tl.outstanding + self.tl.queued == self.issued
        assert self.tl.outstanding == len(self.model) and self.tl.quarantined == len(self.ended)
        books_balance(self.tl)

    def teardown(self) -> None:
        # Every tag still waiting (outstanding or quarantined) gets a well-formed last piece.
        for _ in range(3):
            tags = self.tl.tag_book()
            waiting = sorted(tags.outstanding | tags.quarantined)
            for tag in waiting:
                req = self.requests[tag]
                read = req.cmd == 0x03
                beats = req.numbeats + 1 if read else 0
                field = ok_response(req, beats=beats, rd_wr=0 if read else 1)
                self._take(self._feed(halves([field], _beat_halves(beats))))
            self._pump()
        assert len(self.completed) == self.issued, "an operation never completed"
        assert self.tl.outstanding == self.tl.queued == self.tl.quarantined == 0
        assert len(self.tl.tag_book().free) == 2048
        books_balance(self.tl)
        rx = self.tl.rx_credits  # nothing held: every buffer freed, its credit owed or back
        assert all(v == 0 for row in rx.occupied for v in row)


class DelayedAnswers(RuleBasedStateMachine):
    """Honest answers after drawn delays against a drawn timeout (see the module docstring)."""

    def __init__(self) -> None:
        super().__init__()
        self.timeout = 0
        self.tl: TransactionLayer | None = None
        self.now = 0
        self.walk = TLDeframer()
        self.pending: list[tuple[int, int, list[bytes]]] = []  # (arrival, seq, half-flits)
        self.seq = 0
        self.sent_at: dict[int, int] = {}  # handle -> slot its request was sent
        self.final_at: dict[int, int] = {}  # handle -> arrival slot of its last piece
        self.handles: dict[int, int] = {}  # wire tag -> handle of the request using it
        self.completed: dict[int, Completion] = {}
        self.late: list[LateResponse] = []
        self.issued = 0

    @rule(timeout=st.integers(1, 60))
    @precondition(lambda self: self.tl is None)
    def start(self, timeout: int) -> None:
        self.timeout = timeout
        self.tl = TransactionLayer(1, config=TLConfig(compress=False, timeout_slots=timeout))
        drain(self.tl)
        grant_all(self.tl)

    @rule(beats=st.integers(1, 4), delay=st.integers(1, 80), split=st.booleans())
    @precondition(lambda self: self.tl is not None)
    def issue(self, beats: int, delay: int, split: bool) -> None:
        assert self.tl is not None
        handle = self.tl.read(2, 0x1000, 64 * beats)
        self.issued += 1
        out = []
        while (flit := self.tl.poll(self.now)) is not None:
            out.append(flit)
        [req] = requests_in(out, self.walk)
        self.sent_at[handle] = self.now
        self.handles[req.tag] = handle
        cuts = list(range(beats)) if split else [0]
        for k, start in enumerate(cuts):  # pieces in beat order, one slot apart
            span = (cuts[k + 1] if k + 1 < len(cuts) else beats) - start
            last = int(k == len(cuts) - 1)
            field = ok_response(req, beats=span, offset=start, last=last)
            self.pending.append((self.now + delay + k, self.seq, halves([field],
                                                                        _beat_halves(span))))
            self.seq += 1
        self.final_at[handle] = self.now + delay + len(cuts) - 1

    @rule(dt=st.integers(1, 25))
    @precondition(lambda self: self.tl is not None)
    def advance(self, dt: int) -> None:
        for _ in range(dt):
            self._slot()

    def _slot(self) -> None:
        tl = self.tl
        assert tl is not None
        self.now += 1
        deadline = tl.next_timer()
        if deadline is not None and self.now >= deadline:
            self._take(tl.run_timer(self.now))
        due = sorted(p for p in self.pending if p[0] <= self.now)
        self.pending = [p for p in self.pending if p[0] > self.now]
        for _, _, stream in due:
            for flit in flits(stream):
                self._take(tl.receive(flit, self.now))
        while tl.poll(self.now) is not None:  # credit returns
            pass

    def _take(self, events: list[Any]) -> None:
        for event in events:
            if type(event) is Completion:
                assert event.handle not in self.completed, f"{event.handle} completed twice"
                self.completed[event.handle] = event
            elif type(event) is LateResponse:
                assert event.after == "timeout" and event.handle in self.completed
                assert self.completed[event.handle].status == Status.TIMEOUT
                self.late.append(event)

    @invariant()
    def books(self) -> None:
        if self.tl is not None:
            assert len(self.completed) + self.tl.outstanding == self.issued
            books_balance(self.tl)

    def teardown(self) -> None:
        if self.tl is None:
            return
        while self.pending:
            self._slot()
        for _ in range(self.timeout + 2):
            self._slot()
        assert len(self.completed) == self.issued
        for handle, done in self.completed.items():
            in_time = self.final_at[handle] < self.sent_at[handle] + self.timeout
            if in_time:
                assert done.status == Status.OKAY and done.data is not None
                assert done.data == _BEAT * (len(done.data) // 64)
            else:
                assert done.status == Status.TIMEOUT and done.data is None
        assert self.tl.quarantined == 0 and len(self.tl.tag_book().free) == 2048
        assert sum(e.final for e in self.late) == sum(
            1 for c in self.completed.values() if c.status == Status.TIMEOUT)
        books_balance(self.tl)


TestSplitPeer = SplitPeer.TestCase
TestDelayedAnswers = DelayedAnswers.TestCase
