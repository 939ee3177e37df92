"""A grid of collective runs, each a pure function of its point, so the same points give
the same rows on local processes or a Dask cluster (``ualink-ref sweep --collective``).

A point carries its pod as a :class:`~ualink_ref.sim.fabric.FabricConfig` (a frozen
dataclass: a value, picklable for Dask), made per point from the sweep's base pod with
:func:`dataclasses.replace` (DESIGN.md principle 8: configuration is a value)."""

from __future__ import annotations

import itertools
from dataclasses import dataclass, replace
from typing import Any, cast

from ualink_ref.collectives.algorithms import build
from ualink_ref.collectives.report import CollectiveReport, LinkUse, make_report
from ualink_ref.collectives.run import run_collective
from ualink_ref.sim.fabric import FabricConfig, FlowControlMode

#: Columns of a collective sweep row, in CSV order.
COLLECTIVE_COLUMNS = ("op", "algo", "flow_control", "ranks", "max_outstanding", "seed", "size",
                      "dtype",
                      "time_us", "algbw_gbps", "busbw_gbps", "exact", "wrong_ranks",
                      "endpoint_credit_stalls", "switch_credit_stalls", "replays")


@dataclass(frozen=True)
class CollectivePoint:
    """One point of a collective sweep: the operation, algorithm, size and element type,
    on the pod ``config`` (its ``accelerators`` are the ranks, its ``seed`` also seeds the
    collective's inputs)."""

    op: str
    algo: str
    size: int
    dtype: str
    config: FabricConfig

    def describe(self) -> dict[str, Any]:
        """What a progress line names: the point's own values and the pod's swept ones."""
        return dict(op=self.op, algo=self.algo, size=self.size,
                    flow_control=self.config.flow_control,
                    accelerators=self.config.accelerators, seed=self.config.seed)


def collective_grid(op: str, algos: list[str], sizes: list[int], flow_controls: list[str],
                    accelerators: list[int], seeds: list[int], pod: FabricConfig,
                    dtype: str = "float32") -> list[CollectivePoint]:
    """Every grid point, in a fixed order: ``pod`` with each flow control, pod size and
    seed (``dataclasses.replace``, so each point's configuration is checked as it is
    made); the collective's inputs come from its seed."""
    return [CollectivePoint(op, a, z, dtype,
                            replace(pod, flow_control=cast(FlowControlMode, fc),  # a checked
                                    accelerators=n, seed=s))  # choice; replace checks again
            for a, fc, n, s, z in itertools.product(algos, flow_controls, accelerators, seeds,
                                                    sizes)]


def run_collective_point(point: CollectivePoint) -> dict[str, Any]:
    """One grid point: build the pod and the collective, run it, return the report as a
    row (every field of :class:`CollectiveReport`; pure in ``point``)."""
    cfg = point.config
    collective = build(point.op, point.algo, cfg.accelerators, point.size, point.dtype,
                       seed=cfg.seed)
    row = make_report(run_collective(collective, cfg)).as_dict()
    row["seed"] = cfg.seed
    return row


def report_of(row: dict[str, Any]) -> CollectiveReport:
    """The :class:`CollectiveReport` a row was made from."""
    fields = {k: v for k, v in row.items() if k != "seed"}
    fields["links"] = tuple(LinkUse(**u) for u in row["links"])
    return CollectiveReport(**fields)


__all__ = ["COLLECTIVE_COLUMNS", "CollectivePoint", "collective_grid", "report_of",
           "run_collective_point"]
