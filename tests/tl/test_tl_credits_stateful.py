"""Credit invariants under a stateful test: two TLs, random ops, random slot stepping."""

from __future__ import annotations

import random

from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, rule

from ualink_ref.net.tl_pair import TLPair
from ualink_ref.tl import CreditConfig, Status, TransactionLayer
from ualink_ref.tl.config import TLConfig
from ualink_ref.tl.credits import NUM_VCS

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
            tx, rx = tx_side.tx_credits, rx_side.rx_credits
            for source in range(NUM_VCS + 1):
                cap = rx.config.capacity(source)
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
            for source in range(NUM_VCS + 1):
                cap = rx_side.rx_credits.config.capacity(source)
                back = [tx_side.tx_credits.available[source][c]
                        + rx_side.rx_credits.owed[source][c] for c in range(4)]
                assert back == list(cap), "credit leak"
                if not self.batch:  # eager returns: once quiet, nothing is still owed
                    assert rx_side.rx_credits.owed[source] == [0, 0, 0, 0]


CreditMachine.TestCase.settings = settings(
    CreditMachine.TestCase.settings, stateful_step_count=30, max_examples=40
)
TestCredits = CreditMachine.TestCase
