"""Checks of the cost benchmark's harness (benchmarks/cost_scaling.py), not of its times.

Run: ``python -m pytest -q -p no:cacheprovider benchmarks/test_cost_scaling.py`` (a few
seconds: two 16-accelerator exact runs of 200 ops). Nothing here asserts on time.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

from ualink_ref.sim.fabric import Fabric, FabricConfig
from ualink_ref.sim.workloads import fabric_workload


def _bench() -> ModuleType:
    path = Path(__file__).with_name("cost_scaling.py")
    spec = importlib.util.spec_from_file_location("cost_scaling", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["cost_scaling"] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def test_child_runs_the_cell_it_names() -> None:
    """The child's exact fabric cell is the library's run of the same workload (same slots),
    and its peak RSS and CPU time come back from the child."""
    bench = _bench()
    res = bench.measure(bench.Cell("exact", "fabric", 16, size=200), None, 120.0)
    assert not res["stopped"] and not res["failed"]
    run = Fabric(FabricConfig(accelerators=16)).run(
        fabric_workload("uniform", 200, 16, seed=1, load=0.5))
    assert res["slots"] == run.slots
    assert res["ok"] is True
    assert res["rss_mb"] > 20 and res["cpu_s"] > 0


def test_a_cell_past_its_time_out_is_stopped_not_reported() -> None:
    """A cell past its time-out shows as stopped, with no run figures in its place."""
    bench = _bench()
    res = bench.measure(bench.Cell("exact", "fabric", 16, size=200), None, 0.3)
    assert res["stopped"] is True
    assert "run_s" not in res and "slots" not in res


def test_grid_covers_every_pod_and_keeps_a_multicast_id_free() -> None:
    """Every fast row runs on 16, 64, 256 and 1,024 (1,023 for in-network: its multicast
    group takes one of the 1,024 IDs); the headline cells are the issue's."""
    bench = _bench()
    grid = bench.cells(["fast", "headline"])
    rows: dict[tuple[str, str, int], set[int]] = {}
    for cell in grid:
        if cell.job == "collective":
            rows.setdefault((cell.op, cell.algo, cell.size), set()).add(cell.n)
    for (_, algo, size), pods in rows.items():
        if size < 1 << 30:
            assert pods == ({16, 64, 256, 1023} if algo == "in-network" else set(bench.PODS))
    assert ("all-reduce", "ring", 1 << 30) in rows
    assert rows[("all-reduce", "in-network", 1 << 30)] == {1023}
    assert all(cell.wide for cell in grid if cell.job == "collective")
