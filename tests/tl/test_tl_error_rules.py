"""Single rules of the TL error paths (specs/tl.md S1-S7, P1-P6, T1-T6), one test each."""

from __future__ import annotations

import copy
import pickle

import pytest

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
from ualink_ref.tl.codec import Response, pack_field
from ualink_ref.tl.config import TLConfig
from ualink_ref.tl.events import Completion, LateResponse
from ualink_ref.tl.upli import WIRE_STATUSES


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
