"""Credit-based flow control (``tl/credits.py``, ``specs/tl.md`` rule 4 and
"Credit-based flow control"): each rule pinned at its boundary, then the invariants under a
stateful test.

The boundary tests were written against the mutants a mutmut run left alive
(``fuzz/README.md``, "Mutation testing"): each asserts one rule at its edge — exactly
enough credits vs one short, exactly the maximum vs one past it, the return thresholds
and per-field return caps — with expected values worked out by hand from the rule. The
state machine runs two TLs with random ops and random slot stepping.
"""

from __future__ import annotations

import random

import pytest
from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, rule

from ualink_ref.errors import CreditError
from ualink_ref.net.tl_pair import TLPair
from ualink_ref.tl import CreditConfig, Status, TransactionLayer
from ualink_ref.tl.config import TLConfig
from ualink_ref.tl.credits import (
    NUM_VCS,
    POOL,
    POOL_RETURN_MAX,
    REQ_CMD,
    REQ_DATA,
    RSP_CMD,
    RSP_DATA,
    VC_RETURN_MAX,
    ReceiverCredits,
    SenderCredits,
    check_config,
    return_thresholds,
)

# -- Credit rules (``ualink_ref/tl/credits.py``, ``specs/tl.md``) pinned at their boundaries

@pytest.mark.parametrize("cls", [REQ_CMD, RSP_CMD, REQ_DATA, RSP_DATA])
@pytest.mark.parametrize("source", [0, 3, POOL])
def test_grant_adds_to_exactly_one_class_of_one_source(source: int, cls: int) -> None:
    credits = SenderCredits()
    credits.grant(source, cls, 5)
    want = [0, 0, 0, 0]
    want[cls] = 5
    for s in range(POOL + 1):
        assert credits.available[s] == (want if s == source else [0, 0, 0, 0])
    assert credits.received_total == want


def test_a_grant_up_to_the_maximum_is_taken_one_past_it_is_refused_whole() -> None:
    # "A sender holds at most a configured number of credits per (source, class); a grant
    # past it raises CreditError and is not applied" — all classes of the field or none.
    credits = SenderCredits(max_available=10)
    credits.grant_all(POOL, (10, 3, 0, 0))  # exactly the maximum: accepted
    assert credits.available[POOL] == [10, 3, 0, 0]
    with pytest.raises(CreditError):
        credits.grant_all(POOL, (1, 1, 1, 1))  # req_cmd would be 11
    assert credits.available[POOL] == [10, 3, 0, 0]  # nothing of that field applied
    assert credits.received_total == [10, 3, 0, 0]
    credits.grant_all(POOL, (0, 7, 10, 10))  # the other classes up to the maximum
    assert credits.available[POOL] == [10, 10, 10, 10]


def test_take_prefers_the_vc_then_the_pool_and_needs_the_whole_amount_in_one() -> None:
    # "A field takes all of its credits from one source; senders prefer the VC's own."
    credits = SenderCredits()
    credits.grant_all(1, (1, 0, 3, 0))
    credits.grant_all(POOL, (1, 0, 4, 0))
    assert credits.take(1, REQ_CMD, REQ_DATA, 3) == 1  # exactly enough on the VC
    assert credits.available[1] == [0, 0, 0, 0]
    assert credits.take(1, REQ_CMD, REQ_DATA, 4) == POOL  # exactly enough in the pool
    assert credits.available[POOL] == [0, 0, 0, 0]
    assert credits.spent_total == [2, 0, 7, 0]


def test_take_one_data_credit_short_spends_nothing() -> None:
    credits = SenderCredits()
    credits.grant_all(2, (1, 0, 2, 0))
    credits.grant_all(POOL, (1, 0, 2, 0))
    assert credits.take(2, REQ_CMD, REQ_DATA, 3) == -1  # 2 < 3 on both sources
    assert credits.available[2] == [1, 0, 2, 0] and credits.available[POOL] == [1, 0, 2, 0]
    assert credits.spent_total == [0, 0, 0, 0]
    credits.grant_all(2, (0, 0, 0, 0))
    assert credits.take(2, RSP_CMD, RSP_DATA, 0) == -1  # no command credit at all


# -- receiver side: checking use, owing returns ---------------------------------------------


def _granted(config: CreditConfig) -> ReceiverCredits:
    """A receiver whose initial grant (its whole capacity) has gone out."""
    rx = ReceiverCredits(config)
    while rx.owed_any:
        rx.take_returns()
    return rx


def test_the_link_starts_owing_the_whole_capacity() -> None:
    config = CreditConfig(per_vc=(2, 3, 4, 5), pool=(6, 7, 8, 9))
    rx = ReceiverCredits(config)
    assert rx.owed == [[2, 3, 4, 5]] * 4 + [[6, 7, 8, 9]]
    assert rx.owed_any and rx.urgent
    assert rx.outstanding == [[0, 0, 0, 0]] * 5


def test_consume_exactly_what_was_granted_then_one_more_is_a_credit_error() -> None:
    rx = _granted(CreditConfig(per_vc=(2, 2, 5, 4), pool=(0, 0, 0, 0)))
    rx.consume(0, REQ_CMD, REQ_DATA, 5)  # one command credit and all five data credits
    rx.consume(0, REQ_CMD, REQ_DATA, 0)  # the second command credit, no data
    assert rx.outstanding[0] == [0, 2, 0, 4]
    assert rx.occupied[0] == [2, 0, 5, 0]
    with pytest.raises(CreditError):
        rx.consume(0, REQ_CMD, REQ_DATA, 0)  # no command credit left
    with pytest.raises(CreditError):
        rx.consume(0, RSP_CMD, RSP_DATA, 5)  # 4 response-data credits only
    assert rx.outstanding[0] == [0, 2, 0, 4]  # a refused field changes nothing


@pytest.mark.parametrize("source", [-1, POOL + 1])
def test_consume_from_a_source_that_does_not_exist_is_a_credit_error(source: int) -> None:
    rx = _granted(CreditConfig())
    with pytest.raises(CreditError):
        rx.consume(source, REQ_CMD, REQ_DATA, 0)


def test_pool_and_vc_credits_are_separate() -> None:
    rx = _granted(CreditConfig(per_vc=(1, 1, 5, 4), pool=(1, 1, 5, 4)))
    rx.consume(POOL, RSP_CMD, RSP_DATA, 4)
    with pytest.raises(CreditError):
        rx.consume(POOL, RSP_CMD, RSP_DATA, 0)
    rx.consume(3, RSP_CMD, RSP_DATA, 4)  # VC 3's own credits are untouched
    assert rx.outstanding[3] == [1, 0, 5, 0] and rx.outstanding[POOL] == [1, 0, 5, 0]


def test_freed_buffers_are_owed_back_and_returned_once() -> None:
    rx = _granted(CreditConfig(per_vc=(4, 4, 8, 8), pool=(0, 0, 0, 0)))
    assert not rx.owed_any
    rx.consume(2, REQ_CMD, REQ_DATA, 3)
    rx.free(2, REQ_CMD, REQ_DATA, 3)
    assert rx.occupied[2] == [0, 0, 0, 0] and rx.owed[2] == [1, 0, 3, 0] and rx.owed_any
    assert rx.take_returns() == [(2, (1, 0, 3, 0))]
    assert rx.outstanding[2] == [4, 4, 8, 8] and not rx.owed_any
    assert rx.take_returns() == []


def test_returns_come_pool_first_then_vcs_in_order_up_to_the_limit() -> None:
    rx = ReceiverCredits(CreditConfig(per_vc=(1, 1, 5, 4), pool=(2, 2, 6, 6)))
    first = rx.take_returns(limit=2)
    assert first == [(POOL, (2, 2, 6, 6)), (0, (1, 1, 5, 4))]
    assert rx.owed_any  # VCs 1-3 still owed
    assert [s for s, _ in rx.take_returns(limit=3)] == [1, 2, 3]
    assert not rx.owed_any and not rx.urgent


def test_one_field_returns_at_most_its_field_width_and_the_rest_stays_owed() -> None:
    # FTYPE 0 carries at most (63, 63, 255, 255), FTYPE 6 at most (31, 31, 255, 255).
    big = CreditConfig(per_vc=(40, 40, 300, 300), pool=(100, 100, 600, 600))
    rx = ReceiverCredits(big)
    returns = dict(rx.take_returns())
    assert returns[POOL] == POOL_RETURN_MAX == (63, 63, 255, 255)
    assert returns[0] == VC_RETURN_MAX == (31, 31, 255, 255)
    assert rx.owed[POOL] == [37, 37, 345, 345] and rx.owed[0] == [9, 9, 45, 45]
    assert rx.owed_any
    assert dict(rx.take_returns())[POOL] == (37, 37, 255, 255)


def test_a_return_becomes_urgent_exactly_at_its_threshold() -> None:
    # Rule 4 of the TL engine: credits go first once a class owes its threshold. With
    # per-VC req_data capacity 8 and a maximal need of 5: min(8 // 2, 8 - 5 + 1) = 4.
    rx = _granted(CreditConfig(per_vc=(4, 4, 8, 8), pool=(0, 0, 0, 0)))
    rx.consume(1, REQ_CMD, REQ_DATA, 3)
    rx.free(1, REQ_CMD, REQ_DATA, 3)  # req_cmd owes 1 (< 2), req_data 3 (< 4)
    assert rx.owed_any and not rx.urgent
    rx.consume(1, REQ_CMD, REQ_DATA, 1)
    rx.free(1, REQ_CMD, REQ_DATA, 1)  # req_cmd 2 (= 4 // 2): urgent
    assert rx.urgent
    rx.take_returns()
    assert not rx.urgent and not rx.owed_any


def test_urgent_stays_after_a_partial_return_only_while_a_threshold_is_still_met() -> None:
    big = CreditConfig(per_vc=(1, 1, 5, 4), pool=(200, 200, 600, 600))
    rx = ReceiverCredits(big)
    rx.take_returns(limit=1)  # the pool: 63 of 200 commands go, 137 stay (>= 100)
    assert rx.urgent
    rx.take_returns(limit=5)  # the pool again (74 left < 100) and every VC
    assert rx.owed[POOL] == [74, 74, 90, 90]
    assert rx.owed_any and not rx.urgent  # thresholds 100, 100, 300, 300 not met


# -- thresholds and configurations --------------------------------------------------------


@pytest.mark.parametrize(("cap", "want"), [
    ((16, 16, 32, 32), (8, 8, 16, 16)),  # half the capacity
    ((256, 256, 512, 512), (128, 128, 256, 256)),
    ((1, 1, 5, 4), (1, 1, 1, 1)),  # at least 1
    ((2, 2, 6, 6), (1, 1, 2, 3)),  # cap - need + 1 when that is smaller than half
    ((0, 3, 0, 9), (0, 1, 0, 4)),  # a class without capacity never triggers
])
def test_return_thresholds(cap: tuple[int, int, int, int],
                           want: tuple[int, int, int, int]) -> None:
    # threshold = max(1, min(cap // 2, cap - MAX_NEED + 1)), 0 without capacity;
    # MAX_NEED = (1, 1, 5, 4) — a byte-enabled 256-byte write, a 4-beat read response.
    rows = return_thresholds(CreditConfig(per_vc=cap, pool=(1, 1, 5, 4)))
    assert rows[:4] == [want] * 4
    assert rows[POOL] == (1, 1, 1, 1)


@pytest.mark.parametrize(("per_vc", "pool", "ok"), [
    ((1, 1, 5, 4), (0, 0, 0, 0), True),  # the VC holds one maximal request and response
    ((1, 1, 4, 4), (0, 0, 0, 0), False),  # one request-data credit short
    ((1, 1, 5, 3), (0, 0, 0, 0), False),  # one response-data credit short
    ((0, 1, 5, 4), (0, 0, 0, 0), False),  # no request-command credit
    ((1, 0, 5, 4), (0, 0, 0, 0), False),  # no response-command credit
    ((0, 0, 0, 0), (1, 1, 5, 4), True),  # the pool alone suffices
    ((1, 1, 4, 3), (1, 1, 5, 3), False),  # requests via the pool, responses nowhere
    ((1, 1, 4, 4), (1, 0, 5, 0), True),  # requests via the pool, responses via the VC
])
def test_check_config_needs_one_maximal_field_per_direction(
        per_vc: tuple[int, int, int, int], pool: tuple[int, int, int, int], ok: bool) -> None:
    config = CreditConfig(per_vc=per_vc, pool=pool)
    if ok:
        check_config(config)
    else:
        with pytest.raises(ValueError):
            check_config(config)


@pytest.mark.parametrize("bad", [(1, 1, 1), (1, 1, 1, 1, 1), (1, -1, 1, 1), (-1, 0, 0, 0)])
def test_credit_config_rejects_wrong_shapes_and_negative_counts(
        bad: tuple[int, ...]) -> None:
    with pytest.raises(ValueError):
        CreditConfig(per_vc=bad)  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        CreditConfig(pool=bad)  # type: ignore[arg-type]


def test_credit_config_capacity_names_the_pool_and_the_vcs() -> None:
    config = CreditConfig(per_vc=(1, 2, 3, 4), pool=(5, 6, 7, 8))
    assert [config.capacity(s) for s in range(POOL + 1)] == [(1, 2, 3, 4)] * 4 + [(5, 6, 7, 8)]
    assert CreditConfig(per_vc=(0, 0, 0, 0)).per_vc == (0, 0, 0, 0)  # zero is allowed


def test_a_class_without_capacity_never_makes_returns_urgent() -> None:
    # Threshold 0 means "never urgent" (no capacity, nothing to wait for): with only
    # small returns owed (below their thresholds) and the pool empty, nothing is urgent.
    rx = _granted(CreditConfig(per_vc=(4, 4, 8, 8), pool=(0, 0, 0, 0)))
    for vc in (0, 1):
        rx.consume(vc, REQ_CMD, REQ_DATA, 0)
        rx.free(vc, REQ_CMD, REQ_DATA, 0)  # one command credit owed (threshold 2)
    assert rx.owed_any and not rx.urgent
    assert rx.take_returns(limit=1) == [(0, (1, 0, 0, 0))]
    assert rx.owed_any and not rx.urgent  # VC 1 still owes 1 < 2; the pool owes nothing


def test_a_data_threshold_of_one_makes_the_first_freed_data_credit_urgent() -> None:
    # per-VC req_data capacity 5, maximal need 5: threshold min(5 // 2, 5 - 5 + 1) = 1 —
    # one freed buffer must go back at once, or the peer cannot send a maximal write.
    rx = _granted(CreditConfig(per_vc=(4, 4, 5, 4), pool=(0, 0, 0, 0)))
    rx.consume(0, REQ_CMD, REQ_DATA, 1)
    rx.free(0, REQ_CMD, REQ_DATA, 1)  # req_cmd owes 1 (< 2), req_data 1 (= 1)
    assert rx.urgent


def test_a_source_owing_only_one_class_is_still_returned() -> None:
    # Returns continue until nothing is owed, whichever class is left: after one capped
    # field only request data (here) or only response commands may remain.
    rx = ReceiverCredits(CreditConfig(per_vc=(1, 1, 300, 4), pool=(0, 0, 0, 0)))
    rx.take_returns()
    assert rx.owed[0] == [0, 0, 45, 0] and rx.owed_any
    assert dict(rx.take_returns())[0] == (0, 0, 45, 0)
    rx = ReceiverCredits(CreditConfig(per_vc=(1, 40, 5, 4), pool=(0, 0, 0, 0)))
    rx.take_returns()
    assert rx.owed[0] == [0, 9, 0, 0] and rx.owed_any
    assert dict(rx.take_returns())[0] == (0, 9, 0, 0)
    assert not rx.owed_any


@pytest.mark.parametrize(("source", "where"), [(POOL, "pool"), (2, "VC 2")])
def test_an_over_grant_names_its_source(source: int, where: str) -> None:
    credits = SenderCredits(max_available=1)
    with pytest.raises(CreditError) as info:
        credits.grant_all(source, (0, 0, 2, 0))
    assert where in str(info.value)



# -- Credit invariants under a stateful test: two TLs, random ops, random slot stepping

CONFIGS = [
    CreditConfig(),
    CreditConfig(per_vc=(1, 1, 5, 4), pool=(0, 0, 0, 0)),
    CreditConfig(per_vc=(0, 0, 0, 0), pool=(1, 1, 5, 4)),
    CreditConfig(per_vc=(2, 1, 3, 2), pool=(3, 2, 6, 5)),
]


class CreditMachine(RuleBasedStateMachine):
    """Issue ops at random, step the link, and check the credit books after every step."""

    @initialize(cfg=st.sampled_from(CONFIGS), latency=st.integers(0, 12), seed=st.integers(0, 99),
                batch=st.booleans())
    def setup(self, cfg: CreditConfig, latency: int, seed: int, batch: bool) -> None:
        self.batch = batch
        self.a = TransactionLayer(1, config=TLConfig(credits=cfg, batch_credit_returns=batch))
        self.b = TransactionLayer(2, config=TLConfig(credits=cfg, batch_credit_returns=batch))
        self.pair = TLPair(self.a, self.b, latency=latency)
        self.rng = random.Random(seed)
        self.issued = {1: set(), 2: set()}  # type: dict[int, set[int]]
        self.done = {1: set(), 2: set()}  # type: dict[int, set[int]]
        self.seen = {"a": 0, "b": 0}

    def _issue(self, tl: TransactionLayer, dst: int, kind: int, vc: int) -> None:
        rng = self.rng
        addr = rng.randrange(0, 1 << 16, 256)
        if kind == 0:
            tag = tl.read(dst, addr, 4 * rng.randint(1, 64), vc=vc)
        elif kind == 1:
            tag = tl.write(dst, addr, rng.randbytes(4 * rng.randint(1, 64)), vc=vc)
        elif kind == 2:
            n = 4 * rng.randint(1, 64)
            tag = tl.write(dst, addr, rng.randbytes(n), byte_enable=rng.getrandbits(n), vc=vc)
        else:
            tag = tl.atomic(dst, addr, "add", 1, size=8, fetch=rng.random() < 0.5, vc=vc)
        self.issued[tl.acc_id].add(tag)

    @rule(kind=st.integers(0, 3), vc=st.integers(0, NUM_VCS - 1), burst=st.integers(1, 20),
          from_a=st.booleans())
    def issue(self, kind: int, vc: int, burst: int, from_a: bool) -> None:
        tl, dst = (self.a, 2) if from_a else (self.b, 1)
        for _ in range(burst):
            self._issue(tl, dst, kind, vc)

    @rule(slots=st.integers(1, 30))
    def step(self, slots: int) -> None:
        for _ in range(slots):
            self.pair.step()
            self._collect()

    def _collect(self) -> None:
        for name, tl in (("a", self.a), ("b", self.b)):
            done = self.pair.completions[name]
            for c in done[self.seen[name]:]:
                assert c.status == Status.OKAY
                assert c.handle not in self.done[tl.acc_id], "completed twice"
                self.done[tl.acc_id].add(c.handle)
            self.seen[name] = len(done)

    @invariant()
    def books_balance(self) -> None:
        if not hasattr(self, "a"):
            return
        for tx_side, rx_side in ((self.a, self.b), (self.b, self.a)):
            tx, rx = tx_side.credit_books().sender, rx_side.credit_books().receiver
            for source in range(NUM_VCS + 1):
                cap = rx.capacity[source]
                for cls in range(4):
                    avail = tx.available[source][cls]
                    # The sender never holds more than the receiver has granted and not seen used
                    assert 0 <= avail <= rx.outstanding[source][cls]
                    # In-flight use never exceeds what was granted: buffers never overflow.
                    assert 0 <= rx.occupied[source][cls] <= cap[cls]
                    # The receiver's books: every credit is in a buffer, owed, or with the peer.
                    assert (rx.occupied[source][cls] + rx.owed[source][cls]
                            + rx.outstanding[source][cls]) == cap[cls]
                    if not self.pair.in_flight:
                        assert avail == rx.outstanding[source][cls]

    def teardown(self) -> None:
        if not hasattr(self, "a"):
            return
        got_a, got_b = self.pair.run(max_slots=200_000)
        for c in got_a + got_b:
            assert c.status == Status.OKAY
        self.done[1].update(c.handle for c in got_a)
        self.done[2].update(c.handle for c in got_b)
        assert self.done == self.issued  # every op completed, exactly once
        for tx_side, rx_side in ((self.a, self.b), (self.b, self.a)):
            tx, rx = tx_side.credit_books().sender, rx_side.credit_books().receiver
            for source in range(NUM_VCS + 1):
                cap = rx.capacity[source]
                back = tuple(tx.available[source][c] + rx.owed[source][c] for c in range(4))
                assert back == cap, "credit leak"
                if not self.batch:  # eager returns: once quiet, nothing is still owed
                    assert rx.owed[source] == (0, 0, 0, 0)


CreditMachine.TestCase.settings = settings(
    CreditMachine.TestCase.settings, stateful_step_count=30, max_examples=40
)
TestCredits = CreditMachine.TestCase
