"""``ualink-ref sweep``: local processes and a Dask LocalCluster give the same rows."""

from __future__ import annotations

import pytest

from ualink_ref.cli.sweep import grid, run_dask, run_local, write_outputs

POD = dict(planes=1, fec="kp4", ber=1e-4, cable_m=3.0, switch_ns=200.0, batch=1,
           max_outstanding=64)


def _points() -> list[dict[str, object]]:
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
