"""Two TransactionLayers flit by flit: every op completes once, memory matches a model."""

from __future__ import annotations

import random

import pytest

from tests.helpers.tl_model import Model, expect, issue, random_ops
from ualink_ref.net.tl_pair import TLPair
from ualink_ref.tl import CreditConfig, Status, TransactionLayer
from ualink_ref.tl.config import TLConfig
from ualink_ref.tl.flit import dissect_stream


@pytest.mark.parametrize(
    ("seed", "latency", "compress", "credits"),
    [
        (1, 0, True, None),
        (2, 5, False, None),
        (3, 17, True, CreditConfig(per_vc=(1, 1, 5, 4), pool=(0, 0, 0, 0))),
        (4, 3, True, CreditConfig(per_vc=(0, 0, 0, 0), pool=(2, 2, 6, 5))),
    ],
)
def test_random_ops_both_directions_match_sequential_model(
    seed: int, latency: int, compress: bool, credits: CreditConfig | None
) -> None:
    rng = random.Random(seed)
    config = TLConfig(compress=compress, credits=credits or CreditConfig())
    a, b = TransactionLayer(1, config=config), TransactionLayer(2, config=config)
    pair = TLPair(a, b, latency=latency)
    ops_a = random_ops(rng, 400, 0x10000, 4096)
    ops_b = random_ops(rng, 400, 0x7000_0000, 1024)
    tags_a = [issue(a, 2, op) for op in ops_a]
    tags_b = [issue(b, 1, op) for op in ops_b]
    got_a, got_b = pair.run()
    for ops, tags, got, target in ((ops_a, tags_a, got_a, b), (ops_b, tags_b, got_b, a)):
        model = Model()
        by_tag = {c.handle: c for c in got}
        assert len(by_tag) == len(got) == len(ops), f"seed {seed}"
        for tag, op in zip(tags, ops, strict=True):
            want = expect(model, op)
            c = by_tag[tag]
            assert c.status == Status.OKAY, f"seed {seed} op {op}"
            assert c.data == want, f"seed {seed} op {op}"
        for addr, value in model.mem.items():
            assert target.memory.peek(addr, 1)[0] == value, f"seed {seed} addr {addr:#x}"
    # No credit leak: once quiet, every credit granted is back with the sender.
    for tx_tl, rx_tl in ((a, b), (b, a)):
        tx, rx = tx_tl.credit_books().sender, rx_tl.credit_books().receiver
        for source in range(5):
            cap = rx.capacity[source]
            owed = rx.owed[source]
            assert tuple(tx.available[source][c] + owed[c] for c in range(4)) == cap


def test_flits_dissect_as_a_stream() -> None:
    a, b = TransactionLayer(1), TransactionLayer(2)
    pair = TLPair(a, b, latency=2, record=True)
    rng = random.Random(9)
    for op in random_ops(rng, 60, 0, 2048):
        issue(a, 2, op)
    pair.run()
    assert pair.trace is not None
    views = dissect_stream([f for _, d, f in pair.trace if d == "a->b"])
    assert views and views[-1].pending_after == 0
    kinds = {h.kind for v in views for h in v.halves}
    assert kinds == {"control", "data"}


def test_out_of_wire_tags_is_back_pressure() -> None:
    big = CreditConfig(per_vc=(0, 0, 0, 0), pool=(4000, 4000, 8000, 8000))
    config = TLConfig(credits=big)
    a, b = TransactionLayer(1, config=config), TransactionLayer(2, config=config)
    handles = [a.read(2, 64 * (i % 1000), 4) for i in range(3000)]
    got, _ = TLPair(a, b, latency=40).run()
    assert a.counters.tag_stalls > 100  # only 2048 wire tags: the rest waited
    assert sorted(c.handle for c in got) == handles
    assert all(c.status == Status.OKAY and c.data == bytes(4) for c in got)
    assert a.outstanding == 0 and a.queued == 0
