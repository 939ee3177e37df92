"""Workloads are drawn lazily: a huge run starts at once, results stay bit-identical."""

from __future__ import annotations

import hashlib

import pytest

from ualink_ref.stack.sim import Simulation, random_workload, simulate
from ualink_ref.stack.workloads import WORKLOAD_KINDS, Op, _reference_ops


def test_random_workload_is_the_same_ops_as_before_it_was_lazy() -> None:
    # Digest of repr(random_workload(500, 7, span=4096)) from the eager implementation
    # (commit 59b6cd1, before the change), so the lazy one must give the same ops.
    ops = tuple(random_workload(500, 7, span=1 << 12))
    digest = hashlib.sha256(repr(ops).encode()).hexdigest()
    assert digest == "66e65113e804838d6c04c1cf7b7d8f516a3841dc6871703a56e6e0e90cd910ad"
    assert tuple(random_workload(500, 7, span=1 << 12)) == ops  # re-iterable, same ops


def test_huge_workload_starts_without_building_it() -> None:
    work = random_workload(10**12, 1)  # would not fit any memory if built
    assert len(work) == 10**12
    sim = Simulation(work, fec="none")
    for _ in range(3):
        sim.step()
    assert 0 < len(sim.workload) <= 2 * 64 + 64  # what was issued, plus what waits in a queue


def test_lazy_and_materialised_workloads_give_the_same_report() -> None:
    # A report with replays, recorded with the eager implementation (commit 59b6cd1).
    lazy = simulate(random_workload(300, 5), fec="none", ber=3e-5, seed=5, max_outstanding=16)
    eager = simulate(tuple(random_workload(300, 5)), fec="none", ber=3e-5, seed=5,
                     max_outstanding=16)
    assert lazy == eager
    assert (lazy.slots, lazy.crc_errors, lazy.replays, lazy.replayed_flits) == (624, 16, 11, 34)
    assert lazy.latency_mean == 60.8 and lazy.data_mismatches == 0


@pytest.mark.parametrize("span", [256, 300, 4096 + 4, 1 << 16])
@pytest.mark.parametrize("kinds", [WORKLOAD_KINDS, ("atomic",), ("write", "read")])
@pytest.mark.parametrize("sides", [("a", "b"), ("b",)])
def test_random_workload_draws_as_the_public_random_methods_do(
    span: int, kinds: tuple[str, ...], sides: tuple[str, ...]
) -> None:
    # The generator inlines random's choice/randint/randrange; _reference_ops calls them.
    for seed in range(4):
        fast = list(random_workload(150, seed, span=span, kinds=kinds, sides=sides))
        reference = list(_reference_ops(150, seed, span, 0x10_0000, sides, kinds))
        assert fast == reference
        assert {type(op) for op in fast} == {Op}
