"""A grid of collective runs, each a pure function of its point, so the same points give
the same rows on local processes or a Dask cluster (``ualink-ref sweep --collective``)."""

from __future__ import annotations

import itertools
from typing import Any

from ualink_ref.collectives.algorithms import build
from ualink_ref.collectives.report import CollectiveReport, LinkUse, make_report
from ualink_ref.collectives.run import run_collective
from ualink_ref.sim.fabric import FabricConfig

#: Columns of a collective sweep row, in CSV order.
COLLECTIVE_COLUMNS = ("op", "algo", "flow_control", "ranks", "max_outstanding", "seed", "size",
                      "dtype",
                      "time_us", "algbw_gbps", "busbw_gbps", "exact", "wrong_ranks",
                      "endpoint_credit_stalls", "switch_credit_stalls", "replays")


def collective_grid(op: str, algos: list[str], sizes: list[int], flow_controls: list[str],
                    accelerators: list[int], seeds: list[int], pod: dict[str, Any],
                    dtype: str = "float32") -> list[dict[str, Any]]:
    """Every grid point, in a fixed order (the collective's inputs come from its seed)."""
    return [dict(op=op, algo=a, size=z, flow_control=fc, accelerators=n, seed=s, pod=pod,
                 dtype=dtype)
            for a, fc, n, s, z in itertools.product(algos, flow_controls, accelerators, seeds,
                                                    sizes)]


def run_collective_point(point: dict[str, Any]) -> dict[str, Any]:
    """One grid point: build the pod and the collective, run it, return the report as a
    row (every field of :class:`CollectiveReport`; pure in ``point``)."""
    n = point["accelerators"]
    pod = FabricConfig(accelerators=n, flow_control=point["flow_control"], seed=point["seed"],
                       **point["pod"])
    collective = build(point["op"], point["algo"], n, point["size"], point["dtype"],
                       seed=point["seed"])
    row = make_report(run_collective(collective, pod)).as_dict()
    row["seed"] = point["seed"]
    return row


def report_of(row: dict[str, Any]) -> CollectiveReport:
    """The :class:`CollectiveReport` a row was made from."""
    fields = {k: v for k, v in row.items() if k != "seed"}
    fields["links"] = tuple(LinkUse(**u) for u in row["links"])
    return CollectiveReport(**fields)


__all__ = ["COLLECTIVE_COLUMNS", "collective_grid", "report_of", "run_collective_point"]
