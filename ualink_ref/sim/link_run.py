"""Deterministic two-endpoint link simulation over a seeded faulty channel.

:func:`simulate` runs a workload of UPLI operations between endpoints ``a``
(accelerator 1) and ``b`` (accelerator 2), each op issued by one side against
the other's memory, and returns a :class:`SimReport`.

Model (documented in ``specs/tl.md``, "Simulation"):

* The two endpoints are ports of the one harness,
  :class:`~ualink_ref.net.harness.Network` (``edge="boundary"``). Time is
  counted in flit slots and advances ``batch`` slots a step: each endpoint
  sends up to ``batch`` DL flits (one FEC encode for all of them), the wire
  bytes cross a channel — independent bit errors at ``ber``, then optional
  bursts — and arrive ``latency`` slots after the end of the batch, where they
  are FEC-decoded together. Batching is what makes the numpy FEC fast; it
  adds at most ``batch`` slots of latency each way.
* Each side keeps at most ``max_outstanding`` of its ops issued and not yet
  complete, issuing the rest in workload order as earlier ones finish.
  Latency of an op = completion slot - issue slot.
* Unless ``SimConfig.dl`` is given, both DLs get
  :func:`replay_timeout_for` ``(latency, batch)``, longer than the simulated
  round trip, so the wire delay alone never sets off the replay timer.
* Everything random comes from ``seed``; the same arguments give the same
  report, bit for bit.
* TL error paths (``specs/tl.md`` "Split responses", "Poison", "Completion
  timeouts"): ``split`` makes both memory targets answer multi-beat reads in
  pieces, ``timeout_slots`` arms both originators' completion timers, and a
  fault plan's ``poison`` / ``stop-tag`` entries poison both memories before
  slot 0 / make both targets drop that wire tag. The report counts split
  pieces, timeouts, late responses and poisoned completions, and says why ops
  failed; the check's model (:mod:`~ualink_ref.sim.model`) knows poison.
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Callable, Iterable, Mapping, Sequence, Sized
from dataclasses import dataclass, field, replace
from typing import Any

from ualink_ref.errors import ConfigError, LinkStalledError
from ualink_ref.net.channels import ErrorBursts, RandomBitErrors
from ualink_ref.net.harness import Channel, Network, Tap, chain
from ualink_ref.node.config import EndpointConfig
from ualink_ref.node.endpoint import Endpoint
from ualink_ref.sim.config import SimConfig
from ualink_ref.sim.faults import FaultPlan
from ualink_ref.sim.link_report import SimReport
from ualink_ref.sim.model import expected, memory_mismatches, tl_report
from ualink_ref.sim.workloads import OP_KINDS, SIDES, Op
from ualink_ref.sizes import FecMode
from ualink_ref.tl import Status
from ualink_ref.tl.events import Completion, LateResponse


@dataclass
class _Side:
    ep: Endpoint
    dst: int  # the peer's accelerator ID
    queue: deque[int] = field(default_factory=deque)  # drawn, not yet issued workload indices
    in_flight: dict[int, tuple[int, int]] = field(default_factory=dict)  # handle -> (index, slot)


class Simulation:
    """A configured run; :meth:`run` drives it to completion (see :func:`simulate`).

    After the run, ``results[i]`` is op i's :class:`Completion` and ``a`` / ``b``
    are the endpoints (their memories hold the final state). ``network`` is the
    harness the endpoints are ports of (ports ``"a"`` and ``"b"``); add taps to
    it to observe the wire. ``channels`` replaces the ``ber`` / ``burst`` channel of a
    direction (``"ab"`` or ``"ba"``); ``faults`` adds channels after them (e.g.
    :class:`~ualink_ref.net.channels.Outage`), per direction; ``fault_plan`` adds
    its entries (its TL entries to both ends' configurations).

    The run stops with :class:`~ualink_ref.errors.LinkStalledError` when
    ``config.watchdog_slots`` pass with no progress — no op completed and no DL
    advance (neither DL's acknowledged nor accepted count moved), rule S2 — or past
    ``config.max_slots``.
    """

    def __init__(
        self,
        workload: Iterable[Op],
        config: SimConfig | None = None,
        *,
        channels: Mapping[str, Channel | None] | None = None,
        faults: Mapping[str, Sequence[Channel]] | None = None,
        fault_plan: FaultPlan | None = None,
    ) -> None:
        self.config = config = config if config is not None else SimConfig()
        if not isinstance(workload, Sized):
            workload = tuple(workload)
        # Ops are drawn from the workload as they are issued (a lazy workload of a
        # billion ops starts at once); ``workload`` holds those drawn so far.
        self._total = len(workload)
        self._source = iter(workload)
        self.workload: list[Op] = []
        self.fec: FecMode = config.phy.fec
        self.ber, self.burst, self.seed = config.ber, config.burst, config.seed
        self.max_outstanding = config.max_outstanding
        tl = config.endpoint_config.tl
        self.split, self.timeout_slots = tl.split, tl.timeout_slots
        id_a, id_b = config.acc_ids
        stop_tags = (fault_plan.checked_stop_tags(tl.timeout_slots) if fault_plan is not None
                     else frozenset())
        self.a = Endpoint(id_a, config=_side(config.endpoint_config, config.seed * 2, stop_tags))
        self.b = Endpoint(id_b, config=_side(config.endpoint_config_b, config.seed * 2 + 1,
                                             stop_tags))
        if fault_plan is not None:  # poison entries: both targets, before slot 0
            fault_plan.apply_tl([self.a.memory, self.b.memory])
        #: Ops that timed out (workload index by (side, handle)) and those of them whose
        #: late response came (so the target did execute them).
        self._timed_out: dict[tuple[str, int], int] = {}
        self._late_executed: set[int] = set()
        self.fault_plan = fault_plan
        self.results: list[Completion | None] = []
        self.latencies: list[int] = []
        self.max_slots = config.max_slots
        self.stall_slots = config.watchdog_slots
        #: Stall-free stretches survived: the longest time, in slots, without progress.
        self.longest_quiet = 0
        self._sides = {s: _Side(ep, dst) for s, ep, dst in (("a", self.a, id_b),
                                                             ("b", self.b, id_a))}
        self._error_channels: list[RandomBitErrors | ErrorBursts] = []
        given = channels or {}
        extra = faults or {}
        unknown = (set(given) | set(extra)) - {"ab", "ba"}
        if unknown:
            raise ConfigError("channels", f"directions are 'ab' and 'ba', got {sorted(unknown)}")
        chans = {d: chain([given[d] if d in given else self._channel(config.seed * 4 + k),
                           *extra.get(d, ())])
                 for k, d in enumerate(("ab", "ba"))}
        if fault_plan is not None:  # the plan's channels see the slot the harness is at
            planned = fault_plan.channels(lambda: self.network.now, self.fec, self.a.interleave)
            chans = {d: chain([chans[d], planned[d]]) for d in chans}
        self.network = Network(batch=config.batch, edge=config.edge)
        self.network.add_port("a", self.a)
        self.network.add_port("b", self.b)
        self.network.connect("a", "b", latency=config.latency, channel_ab=chans["ab"],
                             channel_ba=chans["ba"])
        self._done = 0

    @property
    def now(self) -> int:
        """The first slot of the next step."""
        return int(self.network.now)

    def add_tap(self, tap: Tap) -> None:
        """Observe every wire chunk (see :meth:`ualink_ref.net.harness.Network.add_tap`)."""
        self.network.add_tap(tap)

    def _channel(self, seed: int) -> Channel | None:
        parts: list[RandomBitErrors | ErrorBursts] = []
        if self.ber:
            parts.append(RandomBitErrors(self.ber, seed))
        if self.burst is not None:
            parts.append(ErrorBursts(self.burst.length_bits, self.burst.rate, seed + 2,
                                     density=self.burst.density))
        self._error_channels.extend(parts)
        return chain(parts)

    @property
    def _bit_errors(self) -> int:
        return sum(c.errors for c in self._error_channels)

    def _draw(self, side: _Side) -> bool:
        """Draw ops from the workload until ``side`` has one queued; False when none is left."""
        while not side.queue:
            op = next(self._source, None)
            if op is None:
                return False
            # An Op is checked when made (a RandomWorkload's through its arguments, which
            # it checks); anything else standing in for one is checked here.
            if type(op) is not Op and (op.side not in SIDES or op.kind not in OP_KINDS):
                raise ValueError(f"bad op side or kind: {op!r}")
            self._sides[op.side].queue.append(len(self.workload))
            self.workload.append(op)
            self.results.append(None)
        return True

    def _issue(self) -> None:
        now = self.now
        for side in self._sides.values():
            while len(side.in_flight) < self.max_outstanding and self._draw(side):
                index = side.queue.popleft()
                tag = self.workload[index].issue(side.ep, side.dst)
                side.in_flight[tag] = (index, now)

    def _collect(self, events: list[tuple[str, Any]]) -> None:
        now = self.now
        # events that arose outside receive (link timers: state changes, fault completions)
        events = events + [(name, e) for name, ep in (("a", self.a), ("b", self.b))
                           for e in ep.drain_events()]
        for name, event in events:
            if type(event) is not Completion:
                if type(event) is LateResponse and event.after == "timeout":
                    self._late_executed.add(self._timed_out[(name, event.handle)])
                continue
            index, issued = self._sides[name].in_flight.pop(event.handle)
            if event.status == Status.TIMEOUT:
                self._timed_out[(name, event.handle)] = index
            if self.results[index] is not None:
                raise AssertionError(f"op {index} completed twice (seed {self.seed})")
            self.results[index] = event
            self.latencies.append(now - issued)
            self._done += 1

    def step(self) -> None:
        """Advance one batch of flit slots."""
        self._issue()
        self._collect(self.network.step())

    def run(
        self, progress: Callable[[int], None] | None = None, verify: bool = True
    ) -> SimReport:
        """Run until every op has completed; ``progress(n)`` gets newly completed counts.

        With ``verify`` the report's ``data_mismatches`` is computed (:meth:`check`).
        """
        total = self._total
        mark = self._progress_mark()
        since = self.now
        while self._done < total:
            if self.max_slots is not None and self.now > self.max_slots:
                raise LinkStalledError(
                    self.now, f"simulation ran past max_slots {self.max_slots} "
                    f"(fec {self.fec}, ber {self.ber})",
                    completed=self._done, total=total, seed=self.seed)
            before = self._done
            self.step()
            if progress is not None and self._done != before:
                progress(self._done - before)
            now_mark = self._progress_mark()
            if now_mark != mark:
                mark, since = now_mark, self.now
                continue
            quiet = self.now - since
            self.longest_quiet = max(self.longest_quiet, quiet)
            if quiet >= self.stall_slots:
                raise LinkStalledError(
                    self.now, f"no progress for {quiet} slots (no op completed, no DL "
                    f"ack or accepted flit; stall_slots {self.stall_slots}; fec {self.fec}, "
                    f"ber {self.ber})",
                    completed=self._done, total=total, seed=self.seed)
        if verify and self._timed_out:  # late responses still on the way count for the model
            self.drain()
        return self.report(verify)

    def _progress_mark(self) -> tuple[int, int, int, int, int]:
        """What moves when the run makes progress (the watchdog compares it, rule S2)."""
        a, b = self.a.dl, self.b.dl
        return (self._done, a.acked, a.accepted, b.acked, b.accepted)

    def drain(self, max_slots: int = 100_000) -> None:
        """Keep stepping until both endpoints are idle and nothing is on the wire."""
        limit = self.now + max_slots
        while self.network.busy or self.a.credits_owed or self.b.credits_owed:
            if self.now > limit:
                raise LinkStalledError(max_slots, "link did not drain", seed=self.seed)
            self._force_credit_returns()
            self.step()

    def _force_credit_returns(self) -> None:
        # Credit returns below the batching threshold are only sent with other
        # traffic; at the end of a run, ask for them so the books can close.
        for ep in (self.a, self.b):
            ep.urge_credit_return()

    def check(self) -> int:
        """Count results and final-memory bytes that differ from a sequential model
        (every byte of both memories: stray writes count too). An op outside the
        target's mapped ranges is expected to end in DECODE_ERROR and change nothing."""
        bad = 0
        poison = self.fault_plan.poisoned if self.fault_plan is not None else ()
        results, late, timeout = self.results, self._late_executed, Status.TIMEOUT
        for side, target in (("a", self.b), ("b", self.a)):
            mem: dict[int, bytearray] = {}
            poisoned = set(poison)
            is_mapped = target.memory.is_mapped
            for index, op in enumerate(self.workload):
                if op.side != side:
                    continue
                got = results[index]
                if got is not None and got.status == timeout:  # see ualink_ref.sim.model
                    if index in late:
                        expected(mem, poisoned, op)
                    continue
                if is_mapped(op.addr, op.nbytes):
                    want: tuple[Status, bytes | None, int] = expected(mem, poisoned, op)
                else:  # the target answers DECODE_ERROR and changes nothing
                    want = (Status.DECODE_ERROR, None, 0)
                if got is None or (got.status, got.data, got.poisoned) != want:
                    bad += 1
            bad += memory_mismatches(target.memory, mem)
        return bad

    def report(self, verify: bool = True) -> SimReport:
        """The report for the run so far."""
        ca, cb = self.a.counters, self.b.counters
        lat = sorted(self.latencies)
        p99 = float(lat[min(len(lat) - 1, math.ceil(0.99 * len(lat)) - 1)]) if lat else 0.0
        return SimReport(
            ops=self._total,
            ops_completed=self._done,
            ops_okay=sum(1 for r in self.results if r is not None and r.status == Status.OKAY),
            data_mismatches=self.check() if verify else None,
            slots=self.now,
            fec=self.fec,
            ber=self.ber,
            seed=self.seed,
            wire_bytes_ab=ca.wire_bytes_sent,
            wire_bytes_ba=cb.wire_bytes_sent,
            flits_ab=ca.flits_sent,
            flits_ba=cb.flits_sent,
            tl_flits_ab=ca.tl_flits_sent,
            tl_flits_ba=cb.tl_flits_sent,
            bit_errors_injected=self._bit_errors,
            fec_corrected_symbols=ca.fec_corrected_symbols + cb.fec_corrected_symbols,
            fec_corrected_codewords=ca.fec_corrected_codewords + cb.fec_corrected_codewords,
            fec_corrected_flits=ca.fec_corrected_flits + cb.fec_corrected_flits,
            fec_uncorrectable_codewords=(ca.fec_uncorrectable_codewords
                                         + cb.fec_uncorrectable_codewords),
            fec_uncorrectable_flits=ca.fec_uncorrectable_flits + cb.fec_uncorrectable_flits,
            crc_errors=ca.crc_errors + cb.crc_errors,
            replays=ca.replays + cb.replays,
            replayed_flits=ca.replayed_flits + cb.replayed_flits,
            retrains_needed=ca.retrains_needed + cb.retrains_needed,
            credit_stalls=ca.credit_stalls + cb.credit_stalls,
            latency_mean=sum(lat) / len(lat) if lat else 0.0,
            latency_p99=p99,
            latency_max=lat[-1] if lat else 0,
            link_changes=tuple((c.now, side, c.old.value, c.new.value, c.cause)
                               for side, ep in (("a", self.a), ("b", self.b))
                               for c in ep.link.changes),
            slots_down_a=self.a.link.time_down(self.now),
            slots_down_b=self.b.link.time_down(self.now),
            link_fault=self._fault_reason(),
            ops_failed_by_fault=self._fault_failed(),
            faults=self.fault_plan.text() if self.fault_plan is not None else "",
            **tl_report(self.results, self.workload, (self.a.tl.counters, self.b.tl.counters),
                        self.split, self.timeout_slots),
        )

    def _fault_reason(self) -> str | None:
        reasons = [f"{side}: {ep.link.fault_reason}" for side, ep in (("a", self.a),
                                                                      ("b", self.b))
                   if ep.link.fault_reason is not None]
        return "; ".join(reasons) or None

    def _fault_failed(self) -> int:
        if self._fault_reason() is None:
            return 0
        status = self.a.config.tl.fault_status
        return sum(1 for r in self.results if r is not None and r.status == status)


def _side(config: EndpointConfig, split_seed: int, stop_tags: frozenset[int]) -> EndpointConfig:
    """One end's configuration in a run: its split draws seeded from the run's seed,
    and the fault plan's stopped tags added (specs/tl.md rule 10)."""
    tl = replace(config.tl, split_seed=split_seed, stop_tags=config.tl.stop_tags | stop_tags)
    return replace(config, tl=tl)


def simulate(
    workload: Iterable[Op],
    config: SimConfig | None = None,
    *,
    faults: Mapping[str, Sequence[Channel]] | None = None,
    fault_plan: FaultPlan | None = None,
    progress: Callable[[int], None] | None = None,
    verify: bool = True,
) -> SimReport:
    """Run ``workload`` between two endpoints as ``config`` says; return the report.

    ``faults`` and ``fault_plan`` as :class:`Simulation` takes them. With ``verify``
    the report counts data mismatches against a sequential model.
    """
    return Simulation(workload, config, faults=faults, fault_plan=fault_plan).run(progress, verify)


__all__ = [
    "SimReport",
    "Simulation",
    "simulate",
]
