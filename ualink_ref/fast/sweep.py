"""A collective sweep's point on the fast fidelity: the same
:class:`~ualink_ref.collectives.sweep.CollectivePoint` the exact sweep runs, timed by
:func:`ualink_ref.fast.run.fast_collective` — a pure function of its point, so local
processes and a Dask cluster give the same rows (``ualink-ref sweep --collective OP
--fidelity fast``)."""

from __future__ import annotations

from typing import Any

from ualink_ref.collectives.run import DEFAULT_REDUCE_BYTES_PER_NS
from ualink_ref.collectives.sweep import CollectivePoint
from ualink_ref.fast.report import FastReport
from ualink_ref.fast.run import fast_collective

#: Columns of a fast collective sweep row, in CSV order (no data columns: no data).
FAST_COLUMNS = ("op", "algo", "flow_control", "ranks", "planes", "lanes", "seed", "size",
                "time_us", "algbw_gbps", "busbw_gbps", "link_mean", "link_max", "operations",
                "untrusted")


def run_fast_point(point: CollectivePoint) -> dict[str, Any]:
    """One grid point on the fast fidelity: the report as a row (every field of
    :class:`~ualink_ref.fast.report.FastReport`, and the seed; pure in ``point``)."""
    cfg = point.config
    report = fast_collective(point.op, point.algo, point.size, cfg,
                             DEFAULT_REDUCE_BYTES_PER_NS, point.dtype, cfg.seed)
    row = report.as_dict()
    row["untrusted"] = list(report.untrusted)  # JSON and CSV alike
    row["seed"] = cfg.seed
    return row


def fast_report_of(row: dict[str, Any]) -> FastReport:
    """The :class:`FastReport` a row was made from."""
    fields = {k: v for k, v in row.items() if k != "seed"}
    fields["untrusted"] = tuple(row["untrusted"])
    return FastReport(**fields)


__all__ = ["FAST_COLUMNS", "fast_report_of", "run_fast_point"]
