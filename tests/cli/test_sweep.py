"""``ualink-ref sweep``: local processes and a Dask LocalCluster give the same rows."""

from __future__ import annotations

import pytest

from ualink_ref.cli.sweep import SweepPoint, grid, run_dask, run_local, write_outputs
from ualink_ref.collectives.sweep import CollectivePoint
from ualink_ref.sim.fabric import FabricConfig

POD = FabricConfig(planes=1, fec="kp4", ber=1e-4, cable_m=3.0, switch_ns=200.0, batch=1,
                   max_outstanding=64)


def _points() -> list[SweepPoint]:
    return grid(["incast", "uniform"], [0.3, 0.9], ["cbfc", "pfc"], [4], [5], 120, POD)


def test_local_equals_serial(tmp_path) -> None:
    points = _points()
    serial = run_local(points, workers=1)
    assert run_local(points, workers=2) == serial
    assert all(r["ok"] for r in serial)
    paths = write_outputs(serial, tmp_path)
    assert (tmp_path / "sweep.csv").read_text().count("\n") == len(points) + 1
    assert len(paths) >= 2


def test_dask_local_cluster_equals_local() -> None:
    distributed = pytest.importorskip("dask.distributed",
                                      reason="dask[distributed] (the 'dask' extra) not installed")
    points = _points()[:4]
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster, \
            distributed.Client(cluster) as client:
        rows = run_dask(points, client)
    assert rows == run_local(points, workers=1)


def _collective_points() -> list[CollectivePoint]:
    from ualink_ref.collectives.sweep import collective_grid

    return collective_grid("all-reduce", ["ring", "in-network"], [4096, 16384], ["cbfc"],
                           [4], [2], POD)


def test_collective_sweep_local_and_dask_agree(tmp_path) -> None:
    from ualink_ref.cli.sweep import write_collective_outputs
    from ualink_ref.collectives.sweep import run_collective_point

    points = _collective_points()
    serial = run_local(points, workers=1, func=run_collective_point)
    assert all(r["exact"] for r in serial) and [r["size"] for r in serial] == [4096, 16384] * 2
    assert run_local(points, workers=2, func=run_collective_point) == serial
    written = write_collective_outputs(serial, tmp_path)
    assert (tmp_path / "collectives.csv").read_text().splitlines()[0].startswith("op,algo,")
    assert len(written) >= 2
    distributed = pytest.importorskip("dask.distributed",
                                      reason="dask[distributed] (the 'dask' extra) not installed")
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster, \
            distributed.Client(cluster) as client:
        assert run_dask(points, client, run_collective_point) == serial
