"""Collectives on the exact pod: every rank's output equals the independent numpy result
bit for bit, nothing outside the buffers is written (specs/collectives.md C5)."""

from __future__ import annotations

import pytest

from ualink_ref.collectives.algorithms import ALGORITHMS, build
from ualink_ref.collectives.run import run_collective
from ualink_ref.sim.fabric import FabricConfig

CASES = [(op, algo) for op, algos in ALGORITHMS.items() for algo in algos]


@pytest.mark.parametrize("dtype", ["int32", "float32"])
@pytest.mark.parametrize(("op", "algo"), CASES)
def test_every_algorithm_is_exact(op: str, algo: str, dtype: str) -> None:
    collective = build(op, algo, 8, 4096, dtype, seed=3)
    run = run_collective(collective, FabricConfig(accelerators=8, max_outstanding=256))
    assert run.mismatches == ((),) * 8
    assert run.stray_pages == ((),) * 8
    assert run.exact and run.slots > 0
    assert not run.fabric.leaks()


@pytest.mark.parametrize("ber", [1e-4, 2e-3])
@pytest.mark.parametrize(("op", "algo"), [("all-reduce", "ring"), ("all-reduce", "two-shot"),
                                          ("moe", "direct")])
def test_exact_with_bit_errors(op: str, algo: str, ber: float) -> None:
    collective = build(op, algo, 8, 16384, "float32", seed=5)
    run = run_collective(collective, FabricConfig(accelerators=8, ber=ber, seed=7,
                                                  max_outstanding=256))
    eps = [ep for plane in run.fabric.endpoints for ep in plane]
    corrected = sum(ep.counters.fec_corrected_symbols for ep in eps)
    replays = sum(ep.replays for ep in eps)
    replays += sum(p.replays for sw in run.fabric.switches for p in sw.ports)
    assert run.fabric.bit_errors > 0 and corrected > 0  # the errors really hit the run
    if ber > 1e-3:
        assert replays > 0  # past what the FEC corrects: the DL replays
    assert run.exact


@pytest.mark.parametrize("lanes", [2, 4])
def test_exact_on_wider_links_and_faster(lanes: int) -> None:
    collective = build("all-reduce", "ring", 4, 8192, "float32", seed=1)
    narrow = run_collective(collective, FabricConfig(accelerators=4))
    wide = run_collective(collective, FabricConfig(accelerators=4, lanes=lanes))
    assert narrow.exact and wide.exact
    # xN links finish in fewer ns (a slot is SLOT_NS / lanes long)
    assert wide.slots * wide.fabric.config.slot_ns < narrow.slots * narrow.fabric.config.slot_ns


@pytest.mark.parametrize(("op", "algo"), [("all-reduce", "ring"), ("all-to-all", "direct")])
def test_exact_on_planes(op: str, algo: str) -> None:
    collective = build(op, algo, 4, 16384, "int32", seed=1)
    run = run_collective(collective, FabricConfig(accelerators=4, planes=2, lanes=2))
    assert run.exact
    used = [ep.counters.tl_flits_sent for plane in run.fabric.endpoints for ep in plane]
    assert min(used) > 0  # both planes carried traffic from every rank
