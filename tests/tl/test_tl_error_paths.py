"""The TL error paths (``specs/tl.md`` rules 8-10: split responses S1-S7, poison
P1-P6, completion timeouts T1-T6): single rules, one test each, then Hypothesis state
machines.

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

import copy
import pickle
from typing import Any

import pytest
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
from ualink_ref.errors import ConfigError, EncodeError
from ualink_ref.net.tl_pair import TLPair
from ualink_ref.tl import CreditConfig, Memory, Status, TransactionLayer
from ualink_ref.tl.codec import Request, Response, pack_field
from ualink_ref.tl.config import TLConfig
from ualink_ref.tl.events import Completion, LateResponse
from ualink_ref.tl.framing import TLDeframer
from ualink_ref.tl.upli import WIRE_STATUSES

# -- Single rules of the TL error paths (specs/tl.md S1-S7, P1-P6, T1-T6), one test each

def _ready(**options: object) -> TransactionLayer:
    tl = TransactionLayer(1, config=TLConfig(compress=False, **options))  # type: ignore[arg-type]
    drain(tl)
    grant_all(tl)
    return tl


def test_t2_timeout_is_local_only_and_cannot_be_encoded() -> None:
    assert Status.TIMEOUT not in WIRE_STATUSES and len(WIRE_STATUSES) == 4
    with pytest.raises(EncodeError):
        pack_field(Response(0, 1, 0, 0, 0, int(Status.TIMEOUT), 0, 1, 2, 1))


def test_t1_next_timer_is_the_earliest_deadline_and_nothing_expires_before_it() -> None:
    tl = _ready(timeout_slots=50)
    tl.read(2, 0x1000, 64)
    requests_in(drain_at(tl, 10))
    tl.read(2, 0x1040, 64)
    requests_in(drain_at(tl, 30))
    assert tl.next_timer() == 60
    assert tl.run_timer(59) == [] and tl.outstanding == 2
    [first] = tl.run_timer(60)
    assert (first.handle, first.status) == (0, Status.TIMEOUT) and tl.next_timer() == 80


def drain_at(tl: TransactionLayer, now: float) -> list[bytes]:
    out = []
    while (flit := tl.poll(now)) is not None:
        out.append(flit)
    return out


def test_t4_a_timed_out_tag_is_not_reused_until_its_last_piece_arrives() -> None:
    tl = _ready(timeout_slots=5)
    tl.read(2, 0x1000, 128)
    [req] = requests_in(drain_at(tl, 0))
    assert tl.run_timer(5)[0].status == Status.TIMEOUT
    assert tl.tag_state(req.tag) == "quarantined" and tl.quarantined == 1
    tl.read(2, 0x1000, 64)
    [other] = requests_in(drain_at(tl, 6), None)
    assert other.tag != req.tag
    # The late answer in two pieces: both discarded, credits freed, the last frees the tag.
    first = ok_response(req, beats=1, offset=1, last=0)
    late: list[object] = []
    for flit in flits(halves([first], [bytes(32)] * 2)):
        late += tl.receive(flit, 7)
    assert [type(e) for e in late] == [LateResponse] and tl.quarantined == 1
    for flit in flits(halves([ok_response(req, beats=1, offset=0, last=1)], [bytes(32)] * 2)):
        late += tl.receive(flit, 8)
    assert [(e.final, e.after) for e in late if isinstance(e, LateResponse)] == [
        (False, "timeout"), (True, "timeout")]
    assert tl.quarantined == 0 and tl.tag_state(req.tag) == "free"
    assert not [e for e in late if isinstance(e, Completion)]
    assert tl.counters.late_responses == 2
    books_balance(tl)


def test_t2_expiry_runs_before_an_answer_arriving_at_the_deadline() -> None:
    tl = _ready(timeout_slots=10)
    tl.read(2, 0x1000, 64)
    [req] = requests_in(drain_at(tl, 0))
    events: list[object] = []
    for flit in flits(halves([ok_response(req, beats=1)], [bytes(32)] * 2)):
        events += tl.receive(flit, 10)
    assert [type(e) for e in events] == [Completion, LateResponse]
    assert events[0].status == Status.TIMEOUT  # type: ignore[union-attr]


def test_s2_split_modes_answer_the_same_bytes() -> None:
    data = bytes(range(256))
    for split in ("never", "always", "random"):
        memory = Memory()
        memory.poke(0x1000, data)
        a = TransactionLayer(1)
        b = TransactionLayer(2, memory, config=TLConfig(split=split, split_seed=1))
        pair = TLPair(a, b)
        pair.run()
        handles = [a.read(2, 0x1000 + off, n) for off, n in ((0, 256), (4, 188), (64, 128))]
        done, _ = pair.run()
        assert [(c.handle, c.status, c.data) for c in sorted(done, key=lambda c: c.handle)] == [
            (handles[0], Status.OKAY, data), (handles[1], Status.OKAY, data[4:192]),
            (handles[2], Status.OKAY, data[64:192])]
        sent = b.counters.split_responses_sent
        assert (sent == 0) == (split == "never") and a.counters.split_responses_received == sent


def test_bad_options_and_arguments_are_refused() -> None:
    with pytest.raises(ValueError, match="split"):
        TransactionLayer(1, config=TLConfig(split="sometimes"))  # type: ignore[arg-type]
    for bad in (0, -1, True, float("nan")):
        with pytest.raises(ValueError, match="timeout_slots"):
            TransactionLayer(1, config=TLConfig(timeout_slots=bad))
    # Not a number at all: a ConfigError (a ValueError) too, at construction.
    for wrong in ("5", b"5", [5]):
        with pytest.raises(ConfigError, match="timeout_slots"):
            TransactionLayer(1, config=TLConfig(timeout_slots=wrong))  # type: ignore[arg-type]
    tl = TransactionLayer(1)
    for poison in (4, -1, 2):  # a 64-byte write has one beat: mask 0 or 1
        with pytest.raises(EncodeError):
            tl.write(2, 0x1000, bytes(64), poison=poison)
    for wrong in ("1", None):  # not an int: EncodeError
        with pytest.raises(EncodeError):
            tl.write(2, 0x1000, bytes(64), poison=wrong)  # type: ignore[arg-type]
    # A bool is the int it is.
    flits = []
    for poison in (True, 1):
        sender = TransactionLayer(1)
        sender.write(2, 0x1000, bytes(64), poison=poison)
        flits.append(sender.poll())
    assert flits[0] == flits[1] and flits[0] is not None


def test_buffers_other_than_bytes_are_taken_as_their_bytes() -> None:
    # write's data, Memory.poke's data: any byte buffer.
    sent = []
    for data in (bytes(range(64)), bytearray(range(64)), memoryview(bytes(range(64)))):
        tl = TransactionLayer(1)
        tl.write(2, 0x1000, data)
        sent.append(tl.poll())
        memory = Memory()
        memory.poke(0x40, data)
        assert memory.peek(0x40, 64) == bytes(range(64))
    assert sent[0] == sent[1] == sent[2] and sent[0] is not None
    # stop_tags: any iterable of tags.
    config = TLConfig(stop_tags=[3, 5])  # type: ignore[arg-type]
    assert TransactionLayer(1, config=config).config.stop_tags == frozenset({3, 5})


def test_extension_points_work_in_either_build() -> None:
    # A Memory subclass serves the target; a CreditConfig copies and pickles; an int is no
    # buffer. (The native build had refused the first two, and taken 5 as five zero bytes.)
    class Registers(Memory):
        def read(self, addr: int, length: int) -> tuple[Status, bytes | None]:
            return Status.OKAY, bytes([0xA5]) * length

    a, b = TransactionLayer(1), TransactionLayer(2, memory=Registers())
    pair = TLPair(a, b)
    handle = a.read(2, 0x40, 64)
    while not pair.completions["a"] and pair.slot < 1000:
        pair.step()
    (done,) = pair.completions["a"]
    assert (done.handle, done.status, done.data) == (handle, Status.OKAY, b"\xa5" * 64)
    config = CreditConfig(per_vc=(1, 2, 3, 4))
    assert copy.deepcopy(config) == pickle.loads(pickle.dumps(config)) == config
    for call in (lambda: Memory().poke(0, 5), lambda: a.write(2, 0, 64)):  # type: ignore
        with pytest.raises(TypeError):
            call()


def test_memory_poison_bytes_refuses_a_negative_mask() -> None:
    # Found by the native build's probe: -1 (all bits, without end) never finished.
    with pytest.raises(ValueError, match="byte_mask"):
        Memory().poison_bytes(0x1000, -1)


def test_p1_memory_poison_helpers() -> None:
    memory = Memory()
    memory.poke(0x1000, bytes(range(16)))
    assert not memory.has_poison and memory.poison_map(0x1000, 16) == 0
    memory.poison_bytes(0x1002, 0b1001)
    assert memory.has_poison and memory.poison_map(0x1000, 8) == 0b100100
    status, data, bad = memory.read_with_poison(0x1000, 8)
    assert (status, data, bad) == (Status.OKAY, bytes(range(8)), 0b100100)
    assert memory.read(0x1000, 8) == (Status.DATA_ERROR, None)  # the old rule still holds
    assert memory.read_with_poison(1 << 40, 4) == (Status.DECODE_ERROR, None, 0)


def test_t1_timer_heap_stays_bounded_by_the_outstanding_requests() -> None:
    # A timeout far longer than the run: every request is answered long before its
    # deadline, so without the rebuild each answered one would leave an entry behind.
    a = TransactionLayer(1, config=TLConfig(compress=False, timeout_slots=10**9))
    b = TransactionLayer(2, memory=Memory(), config=TLConfig(compress=False))
    pair = TLPair(a, b)
    handles = [a.read(2, 0x1000 + 64 * (i % 64), 64) for i in range(3000)]
    peak = most_outstanding = 0
    while len(pair.completions["a"]) < len(handles) and pair.slot < 100_000:
        pair.step()
        most_outstanding = max(most_outstanding, a.outstanding)
        peak = max(peak, a.timers_armed)
        # rule T1: a push rebuilds a heap holding more than twice the outstanding + 64
        assert a.timers_armed <= 2 * most_outstanding + 65
    assert sorted(c.handle for c in pair.completions["a"]) == handles
    assert all(c.status == Status.OKAY for c in pair.completions["a"])
    assert peak > 64  # the heap did fill past the slack, so the rebuild was exercised



# -- Hypothesis state machines for the TL error paths (specs/tl.md S1-S7, T1-T6)

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
        rx = self.tl.credit_books().receiver  # nothing held: every buffer freed
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
