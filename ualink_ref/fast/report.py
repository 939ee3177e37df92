"""What a fast collective run reports (``specs/fast.md`` rule P3): the exact report's timing
figures, what the engine counted, and why (if at all) it is not to be trusted."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

from ualink_ref.sizes import DL_PAYLOAD_BYTES, SLOT_NS


@dataclass(frozen=True)
class FastReport:
    """What a fast run measured (rule P3): the exact report's timing figures."""

    op: str
    algo: str
    ranks: int
    planes: int
    lanes: int
    flow_control: str
    size: int
    time_us: float
    algbw_gbps: float
    busbw_gbps: float
    #: Mean and highest share of a link direction's slots spent serving packets.
    link_mean: float
    link_max: float
    operations: int
    #: Why the figures may be off the exact pod's (rule V3); empty: within its bounds.
    untrusted: tuple[str, ...] = ()

    def format(self) -> str:
        """A few lines, as the exact report prints them."""
        lines = [
            f"{self.op} ({self.algo}), {self.ranks} accelerators, {self.planes} plane(s), "
            f"x{self.lanes} links, {self.flow_control.upper()}, {self.size} B "
            "[fast fidelity: timing only, no data]",
            f"  time {self.time_us:.3f} us  algbw {self.algbw_gbps:.2f} GB/s  busbw "
            f"{self.busbw_gbps:.2f} GB/s",
            f"  link utilisation: mean {100 * self.link_mean:.1f} %, "
            f"max {100 * self.link_max:.1f} %; {self.operations} memory operations",
        ]
        lines += [f"  warning: not to be trusted here: {why}" for why in self.untrusted]
        return "\n".join(lines)

    @property
    def dtype(self) -> str:
        """The element type (timing does not depend on it; plots name it)."""
        return "float32"

    @property
    def link_payload_gbps(self) -> float:
        """GB/s of TL payload one link carries at most (as the exact report's)."""
        return DL_PAYLOAD_BYTES / (SLOT_NS / self.lanes)

    @property
    def fidelity(self) -> str:
        """Which engine made it (plots name it)."""
        return "fast fidelity"

    def as_dict(self) -> dict[str, Any]:
        """The report as plain data (``--json``)."""
        return asdict(self)


def fast_sweep_table(reports: Sequence[FastReport]) -> str:
    """Fast reports of one operation at several sizes, in nccl-tests' columns (time,
    algbw, busbw) — no ``#wrong`` column: the fast fidelity carries no data."""
    head = (f"{'size':>12} {'time':>12} {'algbw':>8} {'busbw':>8}   algo, flow control, "
            "trusted")
    unit = f"{'(B)':>12} {'(us)':>12} {'(GB/s)':>8} {'(GB/s)':>8}"
    rows = [head, unit]
    for rep in reports:
        rows.append(f"{rep.size:>12} {rep.time_us:>12.2f} {rep.algbw_gbps:>8.2f} "
                    f"{rep.busbw_gbps:>8.2f}   {rep.algo}, {rep.flow_control}, "
                    f"{'no' if rep.untrusted else 'yes'}")
    return "\n".join(rows)


__all__ = ["FastReport", "fast_sweep_table"]
