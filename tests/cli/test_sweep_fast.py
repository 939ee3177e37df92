"""``ualink-ref sweep --collective OP --fidelity fast``: collective sweeps on the fast
fidelity at scale, locally or on Dask, with equal rows (issue 25, item 5)."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from ualink_ref.cli import main
from ualink_ref.cli.sweep import run_dask, run_local, write_collective_outputs
from ualink_ref.collectives.sweep import collective_grid
from ualink_ref.fast.sweep import FAST_COLUMNS, run_fast_point
from ualink_ref.sim.fabric import FabricConfig

POD = FabricConfig(planes=2, lanes=4, max_outstanding=256)


def _points() -> list:  # type: ignore[type-arg]
    # a 128-rank pod: past the agreement table (so each row says it extrapolates), and
    # at 256 KiB past auto_config's plain-run bound for the ring (rank 0 alone, bursts)
    return collective_grid("all-reduce", ["ring", "two-shot"], [16384, 262144], ["cbfc"],
                           [16, 128], [3], POD)


def test_fast_collective_sweep_local_and_dask_agree(tmp_path: Path) -> None:
    points = _points()
    serial = run_local(points, workers=1, func=run_fast_point)
    assert run_local(points, workers=2, func=run_fast_point) == serial
    assert [r["ranks"] for r in serial] == [16, 16, 128, 128] * 2
    big = [r for r in serial if r["ranks"] == 128]
    assert all(r["untrusted"] for r in big)  # extrapolated past the table (V3d)
    write_collective_outputs(serial, tmp_path)
    with (tmp_path / "collectives.csv").open() as fh:
        rows = list(csv.DictReader(fh))
    assert tuple(rows[0]) == FAST_COLUMNS and len(rows) == len(points)
    distributed = pytest.importorskip("dask.distributed",
                                      reason="dask[distributed] (the 'dask' extra) not installed")
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster, \
            distributed.Client(cluster) as client:
        assert run_dask(points, client, run_fast_point) == serial


def test_fidelity_needs_a_collective_sweep(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["sweep", "--fidelity", "fast", "--out", "/tmp/never-made"]) == 2
    assert "--fidelity" in capsys.readouterr().err
