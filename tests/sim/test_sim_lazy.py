"""Workloads are drawn lazily: a huge run starts at once, results stay bit-identical."""

from __future__ import annotations

import hashlib
import random
from collections import namedtuple
from collections.abc import Iterator, Sequence
from typing import Any

import pytest

from ualink_ref.phy.config import PhyConfig
from ualink_ref.sim.config import SimConfig
from ualink_ref.sim.link_run import Simulation, simulate
from ualink_ref.sim.workloads import WORKLOAD_KINDS, Op, RandomWorkload, random_workload
from ualink_ref.tl import AtomicOp


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
    sim = Simulation(work, SimConfig(phy=PhyConfig(fec="none")))
    for _ in range(3):
        sim.step()
    assert 0 < len(sim.workload) <= 2 * 64 + 64  # what was issued, plus what waits in a queue


def test_lazy_and_materialised_workloads_give_the_same_report() -> None:
    # A report with replays, recorded with the eager implementation (commit 59b6cd1).
    lazy = simulate(random_workload(300, 5),
                    SimConfig(phy=PhyConfig(fec="none"), ber=3e-5, seed=5, max_outstanding=16))
    eager = simulate(tuple(random_workload(300, 5)),
                     SimConfig(phy=PhyConfig(fec="none"), ber=3e-5, seed=5, max_outstanding=16))
    assert lazy == eager
    assert (lazy.slots, lazy.crc_errors, lazy.replays, lazy.replayed_flits) == (624, 16, 11, 34)
    assert lazy.latency_mean == 60.8 and lazy.data_mismatches == 0


def _reference_ops(n: int, seed: int, span: int, base: int, sides: Sequence[str],
                   kinds: Sequence[str]) -> Iterator[Op]:
    """The ops RandomWorkload must yield, drawn through random's public methods (the
    generator's definition before it inlined them)."""
    rng = random.Random(seed)
    for _ in range(n):
        side = rng.choice(sides)
        kind = rng.choice(kinds)
        if kind == "atomic":
            size = rng.choice((4, 8))
            op = rng.choice(tuple(AtomicOp))
            yield Op(side, "atomic", base + rng.randrange(0, span, size),
                     atomic_op=int(op), operand=rng.getrandbits(8 * size),
                     compare=rng.getrandbits(8 * size) if op == AtomicOp.CAS else None,
                     size=size, fetch=rng.random() < 0.75)
            continue
        length = 4 * rng.randint(1, 64)
        addr = base + rng.randrange(0, span, 256) + 4 * rng.randrange((256 - length) // 4 + 1)
        if kind == "read":
            yield Op(side, "read", addr, length=length)
        else:
            mask = rng.getrandbits(length) if kind == "write" else None
            yield Op(side, "write", addr, data=rng.randbytes(length), byte_enable=mask)


@pytest.mark.parametrize("span", [256, 300, 4096 + 4, 1 << 16, (1 << 70) + 12])
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
        assert [repr(op) for op in fast] == [repr(op) for op in reference]  # types too
        assert {type(op) for op in fast} == {Op}


@pytest.mark.parametrize("args", [
    (5, 1, 1 << 16, 0x10_0000, ("x",), ("read",)),  # an unknown side
    (5, 1, 1 << 16, 0x10_0000, (), ("read",)),  # no side
    (5, 1, 1 << 16, 0x10_0000, ("a",), ("load",)),  # an unknown kind
    (5, 1, 0, 0x10_0000, ("a",), ("read",)),  # no room for a region
    (5, 1, -256, 0x10_0000, ("a",), ("read",)),
    (5, 1, 1 << 16, 0x10_0001, ("a",), ("read",)),  # a base off a region
    (5, 1, 1000.0, 0x10_0000, ("a",), ("read",)),  # not an integer
    (-1, 1, 1 << 16, 0x10_0000, ("a",), ("read",)),
])
def test_a_random_workload_is_checked_when_made(args: tuple[Any, ...]) -> None:
    # Its ops are built unchecked, so the workload itself must refuse what would make a
    # bad op (or never end), whether made through random_workload or directly.
    with pytest.raises(ValueError):
        RandomWorkload(*args)


def test_simulate_refuses_a_workload_item_that_is_not_a_valid_op() -> None:
    # Ops are checked when made; anything else standing in for one is checked when drawn.
    Item = namedtuple("Item", "side kind addr length")
    for bad in (Item("c", "read", 0x10_0000, 4), Item("a", "load", 0x10_0000, 4)):
        with pytest.raises(ValueError, match="bad op side or kind"):
            simulate([bad], SimConfig(phy=PhyConfig(fec="none")))
