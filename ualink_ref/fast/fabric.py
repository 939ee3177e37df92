"""A fabric workload on the fast fidelity: the exact pod's ops, timed by the fast engine.

The same :class:`~ualink_ref.sim.workloads.FabricOp` list the exact pod runs
(:meth:`ualink_ref.sim.fabric.Fabric.run`, rules F2 and F4 of ``specs/fabric.md``: each op
on plane ``(addr >> 8) % P``, issued at its offered slot or as soon as one of the
source's ``max_outstanding`` frees up) runs on :class:`~ualink_ref.fast.engine.Engine`
(``specs/fast.md`` rules P1, P4):

P4. Latency is the exact report's (R2, R4): completion slot - issue slot, both at slot
    boundaries (an op offered at ``at`` is issued at the first boundary at or after it,
    F4; a completion is taken at the nearest boundary, P1); the run's slots end at the
    last completion.
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from ualink_ref.fast.calibrate import calibrate
from ualink_ref.fast.engine import Engine, Operation
from ualink_ref.fast.trust import untrusted_reasons
from ualink_ref.sim.fabric import FabricConfig
from ualink_ref.sim.workloads import FabricOp
from ualink_ref.tl.upli import Command, beats_for, request_data_halves


@dataclass(frozen=True)
class FastFabricReport:
    """What a fast fabric run measured (P4), in the exact :class:`FabricReport`'s units."""

    accelerators: int
    planes: int
    ops: int
    slots: float
    latency_p50_ns: float
    latency_p99_ns: float
    latency_mean_ns: float
    #: Data delivered to the accelerators, Gb/s over the run (the exact report's R3 total).
    throughput_total_gbps: float
    untrusted: tuple[str, ...] = ()

    def format(self) -> str:
        """A few lines, as the exact report prints them."""
        lines = [f"{self.accelerators} accelerators, {self.planes} plane(s), {self.ops} ops, "
                 f"{self.slots:.0f} slots [fast fidelity: timing only, no data]",
                 f"  latency ns: p50 {self.latency_p50_ns:.0f}  p99 {self.latency_p99_ns:.0f}"
                 f"  mean {self.latency_mean_ns:.0f}",
                 f"  throughput {self.throughput_total_gbps:.1f} Gb/s delivered"]
        lines += [f"  warning: not to be trusted here: {why}" for why in self.untrusted]
        return "\n".join(lines)


def _percentile(values: list[float], q: float) -> float:
    """The exact report's percentile (nearest rank, as ``fabric_report._pct``)."""
    if not values:
        return 0.0
    return values[min(len(values) - 1, max(0, math.ceil(q * len(values)) - 1))]


def _delivered_halves(fop: FabricOp) -> int:
    """Data half-flits the switch sends the op's accelerators (rule R3's count): a write's
    request data to its target (``request_data_halves``), a read's data to its source, an
    atomic's operand and, fetched, its old value (two half-flits a beat, TL rule)."""
    op = fop.op
    beats = beats_for(op.nbytes)
    if op.kind == "read":
        return 2 * beats
    if op.kind == "atomic":
        cmd = Command.ATOMIC_R if op.fetch else Command.ATOMIC_NR
        return request_data_halves(cmd, 0) + (2 if op.fetch else 0)
    cmd = Command.WRITE if op.byte_enable is not None else Command.WRITE_FULL
    return request_data_halves(cmd, beats - 1)


def run_fast_fabric(config: FabricConfig, workload: Sequence[FabricOp]) -> FastFabricReport:
    """Time ``workload`` on a pod like ``config`` with the fast fidelity (rules P1, P4)."""
    n = config.accelerators
    engine = Engine(n, config.planes, calibrate(config))
    pending: list[deque[int]] = [deque() for _ in range(n)]
    for i in sorted(range(len(workload)), key=lambda i: (workload[i].at, i)):
        pending[workload[i].src].append(i)
    outstanding = [0] * n
    issued = [0.0] * len(workload)
    done = [0.0] * len(workload)
    due: set[tuple[int, float]] = set()

    def wake(src: int, at: float) -> None:
        """Let ``src`` act at slot boundary ``at`` (once per slot)."""
        if (src, at) not in due:
            due.add((src, at))
            engine.at(at, lambda: act(src, at))

    def act(src: int, at: float) -> None:
        due.discard((src, at))
        queue = pending[src]
        while queue and outstanding[src] < config.max_outstanding:
            index = queue[0]
            fop = workload[index]
            if fop.at > at:  # offered later: issued at the first slot at or after (F4)
                wake(src, float(math.ceil(fop.at)))
                return
            queue.popleft()
            issued[index] = at
            outstanding[src] += 1
            op = fop.op
            engine.issue(src, fop.dst, (op.addr >> 8) % config.planes,
                         op.kind, op.nbytes, op.addr, finish(index, src))

    def finish(index: int, src: int) -> Callable[[Operation, float], None]:
        def done_now(op: Operation, time: float) -> None:
            done[index] = float(math.floor(time + 0.5))  # at the nearest boundary (P1)
            outstanding[src] -= 1
            wake(src, done[index])
        return done_now

    for src in range(n):
        if pending[src]:
            wake(src, float(math.ceil(workload[pending[src][0]].at)))
    engine.run()
    slots = max(done, default=0.0)
    totals = sorted((d - i) * config.slot_ns for d, i in zip(done, issued, strict=True))
    halves = sum(_delivered_halves(fop) for fop in workload)
    gbps = 8 * 32 * halves / (max(slots, 1.0) * config.slot_ns)
    return FastFabricReport(
        accelerators=n, planes=config.planes, ops=len(workload), slots=slots,
        latency_p50_ns=_percentile(totals, 0.5), latency_p99_ns=_percentile(totals, 0.99),
        latency_mean_ns=sum(totals) / len(totals) if totals else 0.0,
        throughput_total_gbps=gbps, untrusted=untrusted_reasons(engine, config, open_loop=True))


__all__ = ["FastFabricReport", "run_fast_fabric"]
