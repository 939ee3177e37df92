"""What architects read from a collective run (``specs/collectives.md`` M1-M5).

Time, algorithm and bus bandwidth as nccl-tests defines them, per-link utilisation,
each rank's time by phase, stalls and replays, and the data check; a size sweep as a
table in nccl-tests' column layout.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

from ualink_ref.collectives.run import PHASES, CollectiveRun
from ualink_ref.sizes import DL_PAYLOAD_BYTES, TL_FLIT_BYTES


@dataclass(frozen=True)
class LinkUse:
    """One accelerator's link on one plane: the share of its slots carrying TL flits."""

    rank: int
    plane: int
    up: float  # accelerator -> switch
    down: float  # switch -> accelerator


@dataclass(frozen=True)
class CollectiveReport:
    """One run's figures (M1-M5)."""

    op: str
    algo: str
    ranks: int
    planes: int
    lanes: int
    max_outstanding: int  # operations in flight per accelerator (rule C1)
    flow_control: str
    ber: float
    dtype: str
    size: int
    time_us: float
    algbw_gbps: float  # GB/s, as nccl-tests prints it
    busbw_gbps: float
    link_payload_gbps: float  # GB/s of TL payload one link carries at most
    exact: bool
    wrong_ranks: int
    stray_pages: int
    phases: dict[str, float]  # share of the run each phase took, mean over ranks
    endpoint_credit_stalls: int
    switch_credit_stalls: int
    replays: int
    links: tuple[LinkUse, ...]
    #: MoE: tokens the busiest expert received over the mean per expert (None otherwise).
    expert_imbalance: float | None = None

    def as_dict(self) -> dict[str, Any]:
        """The report as plain data (``--json``)."""
        return asdict(self)

    @property
    def fidelity(self) -> str:
        """Which engine made it (plots name it): the exact pod."""
        return "exact pod"

    def format(self) -> str:
        """A few lines a reader takes in at a glance."""
        util = [u for link in self.links for u in (link.up, link.down)]
        lines = [
            f"{self.op} ({self.algo}), {self.ranks} accelerators, {self.planes} plane(s), "
            f"x{self.lanes} links, {self.flow_control.upper()}, BER {self.ber:g}, "
            f"{self.max_outstanding} in flight, "
            f"{self.size} B {self.dtype}",
            f"  time {self.time_us:.3f} us  algbw {self.algbw_gbps:.2f} GB/s  busbw "
            f"{self.busbw_gbps:.2f} GB/s ({100 * self.busbw_gbps / self.link_payload_gbps:.1f} % "
            f"of one link's {self.link_payload_gbps:.2f} GB/s TL payload rate)",
            "  data: " + ("exact on every rank (bit for bit), nothing else written"
                          if self.exact else f"{self.wrong_ranks} rank(s) wrong, "
                          f"{self.stray_pages} stray page(s)"),
            "  time by phase (mean over ranks): " + "  ".join(
                f"{name} {100 * share:.1f} %" for name, share in self.phases.items()),
            f"  link utilisation: mean {100 * sum(util) / max(len(util), 1):.1f} %, "
            f"max {100 * max(util, default=0):.1f} %",
            f"  credit stalls: endpoints {self.endpoint_credit_stalls}, switch "
            f"{self.switch_credit_stalls}; replays {self.replays}",
        ]
        if self.expert_imbalance is not None:
            lines.append(f"  MoE routing: the busiest expert received {self.expert_imbalance:.2f}x "
                         "the mean tokens per expert (its rank's link bounds the exchange)")
        return "\n".join(lines)


def make_report(run: CollectiveRun) -> CollectiveReport:
    """The :class:`CollectiveReport` of ``run``."""
    c, fabric = run.collective, run.fabric
    cfg = fabric.config
    slots = max(run.slots, 1.0)
    seconds = slots * cfg.slot_ns * 1e-9
    algbw = c.size / seconds / 1e9
    links = []
    for plane, eps in enumerate(fabric.endpoints):
        for rank, ep in enumerate(eps):
            counters = ep.counters
            capacity = slots * DL_PAYLOAD_BYTES
            links.append(LinkUse(rank, plane, counters.tl_flits_sent * TL_FLIT_BYTES / capacity,
                                 counters.tl_flits_received * TL_FLIT_BYTES / capacity))
    phases = {name: sum(r.phases[name] for r in run.ranks) / (len(run.ranks) * slots)
              for name in PHASES}
    imbalance = None
    if c.routing is not None:
        load = c.routing.expert_load()
        imbalance = max(load) / (sum(load) / len(load))
    return CollectiveReport(
        op=c.op, algo=c.algo, ranks=c.ranks, planes=cfg.planes, lanes=cfg.lanes,
        max_outstanding=cfg.max_outstanding,
        flow_control=cfg.flow_control, ber=cfg.ber, dtype=c.dtype, size=c.size,
        time_us=slots * cfg.slot_ns / 1000, algbw_gbps=algbw, busbw_gbps=algbw * c.bus_factor,
        link_payload_gbps=DL_PAYLOAD_BYTES / cfg.slot_ns,
        exact=run.exact, wrong_ranks=sum(bool(m) for m in run.mismatches),
        stray_pages=sum(len(s) for s in run.stray_pages), phases=phases,
        endpoint_credit_stalls=sum(ep.counters.credit_stalls
                                   for eps in fabric.endpoints for ep in eps),
        switch_credit_stalls=sum(st.egress_credit_stalls
                                 for sw in fabric.switches for st in sw.stats),
        replays=sum(ep.replays for eps in fabric.endpoints for ep in eps)
        + sum(port.replays for sw in fabric.switches for port in sw.ports),
        links=tuple(links), expert_imbalance=imbalance)


#: nccl-tests' element counts are per dtype; the reduction column names the operator.
_REDOP = {"all-reduce": "sum", "reduce-scatter": "sum"}


def sweep_table(reports: Sequence[CollectiveReport]) -> str:
    """Reports of one operation at several sizes, in nccl-tests' columns (out-of-place;
    ``#wrong`` counts wrong ranks)."""
    head = (f"{'size':>12} {'count':>12} {'type':>8} {'redop':>6} {'time':>10} "
            f"{'algbw':>8} {'busbw':>8} {'#wrong':>7}   algo, flow control")
    unit = (f"{'(B)':>12} {'(elements)':>12} {'':>8} {'':>6} {'(us)':>10} "
            f"{'(GB/s)':>8} {'(GB/s)':>8} {'':>7}")
    rows = [head, unit]
    for rep in reports:
        item = 4
        rows.append(f"{rep.size:>12} {rep.size // item:>12} {rep.dtype:>8} "
                    f"{_REDOP.get(rep.op, 'none'):>6} {rep.time_us:>10.2f} "
                    f"{rep.algbw_gbps:>8.2f} {rep.busbw_gbps:>8.2f} {rep.wrong_ranks:>7}   "
                    f"{rep.algo}, {rep.flow_control}")
    return "\n".join(rows)


__all__ = ["CollectiveReport", "LinkUse", "make_report", "sweep_table"]
