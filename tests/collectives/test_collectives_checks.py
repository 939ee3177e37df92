"""The data check can fail: a reordered reduction, a stray write and a wrong reference
are all caught (specs/collectives.md C5, "Reduction order")."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from ualink_ref.collectives import layout as L
from ualink_ref.collectives.algorithms import build, random_inputs
from ualink_ref.collectives.program import Put, Reduce
from ualink_ref.collectives.reference import ordered_sum, ring_reduced
from ualink_ref.collectives.run import (
    FAULT_CHECK_SLOTS,
    CollectiveError,
    CollectiveRunner,
    run_collective,
)
from ualink_ref.sim.fabric import FabricConfig, LinkDown


def test_float_order_matters_and_int_ring_is_the_plain_sum() -> None:
    floats = random_inputs(8, 4096, "float32", seed=2)
    ring = np.concatenate(ring_reduced(floats))
    assert ring.tobytes() != ordered_sum(floats).tobytes()  # a different order differs
    ints = random_inputs(8, 4096, "int32", seed=2)
    plain = (np.sum(np.stack(ints).astype(np.int64), axis=0) % 2**32).astype(np.uint32)
    assert np.concatenate(ring_reduced(ints)).view(np.uint32).tolist() == plain.tolist()


def test_a_reordered_reduction_is_caught() -> None:
    collective = build("all-reduce", "ring", 4, 4096, "float32", seed=1)
    program = list(collective.programs[2])
    i = next(i for i, step in enumerate(program) if isinstance(step, Reduce))
    step = program[i]
    assert isinstance(step, Reduce)
    # a + b == b + a in IEEE arithmetic, so swapping two terms changes nothing: add the
    # rank's own part twice instead, a wrong sum the check must see
    program[i] = Reduce(step.dst, (step.srcs[1], step.srcs[0], step.srcs[1]), step.nbytes)
    programs = tuple(tuple(program) if r == 2 else p for r, p in enumerate(collective.programs))
    run = run_collective(replace(collective, programs=programs), FabricConfig(accelerators=4))
    assert not run.exact and run.mismatches[2]


def test_a_stray_write_is_caught() -> None:
    collective = build("all-gather", "ring", 4, 4096, "int32", seed=1)
    stray = Put(1, L.INPUT, 0x3000_0000, 64)  # outside every collective buffer
    programs = ((*collective.programs[0], stray), *collective.programs[1:])
    run = run_collective(replace(collective, programs=programs), FabricConfig(accelerators=4))
    assert run.mismatches == ((),) * 4
    assert run.stray_pages[1] == (0x3000_0000,) and not run.exact


def test_a_wrong_expectation_is_caught() -> None:
    collective = build("broadcast", "ring", 4, 1024, "float32", seed=1)
    wrong = dict(collective.expected[3])
    data = bytearray(wrong[L.OUTPUT])
    data[100] ^= 1
    wrong[L.OUTPUT] = bytes(data)
    expected = (*collective.expected[:3], wrong)
    run = run_collective(replace(collective, expected=expected), FabricConfig(accelerators=4))
    assert run.mismatches[3] == (L.OUTPUT + 100,) and run.mismatches[:3] == ((),) * 3


@pytest.mark.parametrize("algo", ["ring", "in-network"])
def test_a_link_failure_ends_the_collective_at_every_rank(algo: str) -> None:
    collective = build("all-reduce", algo, 8, 65536, "float32", seed=1)
    pod = FabricConfig(accelerators=8, max_outstanding=256, links_down=(LinkDown(0, 3, 200),))
    runner = CollectiveRunner(collective, pod)
    # The switch answers the ops to the dead rank at once (specs/fabric.md H7): the first
    # error named may be a healthy rank's op to rank 3, or rank 3's link in fault.
    with pytest.raises(CollectiveError, match=r"p0\.link3|ended DATA_ERROR") as caught:
        runner.run()
    error = caught.value
    assert "ended at all 8 ranks without a result" in str(error)
    assert [r.split(":")[0] for r in error.ranks] == [f"rank {i}" for i in range(8)]
    assert any("stopped at step" in r for r in error.ranks)  # the run was cut short
    # bounded: the link is found in fault within the DL's retrain budget plus one check
    assert runner.fabric.network.now < 200 + 3 * (128 + 200) + FAULT_CHECK_SLOTS + 1000


@pytest.mark.parametrize("algo", ["ring", "one-shot", "two-shot"])
def test_signals_wait_for_data_on_other_planes(algo: str) -> None:
    """Rule C3: with two planes a signal overtakes data on the other plane unless it waits
    for its completion; replays (BER 1.5e-3) make the other plane late often enough for
    a signal that did not wait to be seen (the reviewer's mutation broke 7 of 12 runs)."""
    collective = build("all-reduce", algo, 4, 16384, "float32", seed=0)
    pod = FabricConfig(accelerators=4, planes=2, ber=1.5e-3, seed=0, max_outstanding=256)
    run = run_collective(collective, pod)
    assert run.exact


def test_a_signal_that_did_not_wait_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    """The same run with rule C3 switched off reads data before it lands: wrong."""
    from ualink_ref.collectives import run as run_module

    monkeypatch.setattr(run_module._Rank, "ordered_before", lambda *args: True)
    wrong = 0
    for algo in ("ring", "one-shot", "two-shot"):
        collective = build("all-reduce", algo, 4, 16384, "float32", seed=0)
        pod = FabricConfig(accelerators=4, planes=2, ber=1.5e-3, seed=0, max_outstanding=256)
        wrong += not run_collective(collective, pod).exact
    assert wrong > 0


def test_a_collective_runs_one_slot_a_step() -> None:
    from ualink_ref.errors import ConfigError

    with pytest.raises(ConfigError, match="batch"):
        CollectiveRunner(build("all-reduce", "ring", 4, 4096, "int32"),
                         FabricConfig(accelerators=4, batch=4))


def test_each_rank_gets_memory_for_its_buffers() -> None:
    from ualink_ref.errors import ConfigError
    from ualink_ref.tl.memory import PAGE_SIZE

    collective = build("all-reduce", "one-shot", 8, 1 << 20, "int32")
    assert collective.memory_bytes >= 9 << 20  # input, output and seven peers' copies
    big = replace(collective, memory_bytes=200 << 20)
    runner = CollectiveRunner(big, FabricConfig(accelerators=8))
    assert all(m.max_pages * PAGE_SIZE >= 200 << 20 for m in runner.fabric.memories)
    with pytest.raises(ConfigError, match="buffers"):
        build("all-reduce", "one-shot", 64, 32 << 20, "int32")  # 2 GiB a rank
