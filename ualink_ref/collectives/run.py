"""A collective run on the exact pod (``specs/collectives.md`` C1-C6).

:func:`run_collective` builds a :class:`~ualink_ref.sim.fabric.Fabric`, writes each
rank's input into its memory, runs every rank's program slot by slot on the pod, and
checks every rank's output against the independent reference, bit for bit.
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from typing import NoReturn

import numpy as np

from ualink_ref.collectives import layout as L
from ualink_ref.collectives import program as P
from ualink_ref.collectives.algorithms import DTYPES, Collective
from ualink_ref.dl.linkstate import LinkState
from ualink_ref.errors import ConfigError, UALinkError
from ualink_ref.node.multicast import REDUCE_CODES
from ualink_ref.sim.fabric import Fabric, FabricConfig
from ualink_ref.tl.memory import PAGE_SIZE, Memory
from ualink_ref.tl.upli import AtomicOp, Status, request_pieces

#: Local reduction rate (project choice: 1,000 bytes/ns, about a third of an H100's
#: 3.35 TB/s HBM3, since an elementwise add reads two operands and writes one).
DEFAULT_REDUCE_BYTES_PER_NS = 1000.0
#: What each rank's time is spent on (rule C6).
PHASES = ("window", "wait", "reduce", "drain")


#: How often (slots) a run looks for links in fault (rule C7).
FAULT_CHECK_SLOTS = 64


class CollectiveError(UALinkError):
    """A collective ended without a result at every rank: an operation failed, a link
    went to fault, or nothing moved for ``RunConfig.stall_slots`` (rule C7).
    ``ranks`` says, per rank, where it stopped; no rank has a result."""

    def __init__(self, message: str, ranks: tuple[str, ...] = ()) -> None:
        super().__init__(message)
        self.ranks = ranks


@dataclass(frozen=True)
class RunConfig:
    """How a collective runs on the pod (beside the pod's own :class:`FabricConfig`)."""

    reduce_bytes_per_ns: float = DEFAULT_REDUCE_BYTES_PER_NS
    #: Give up (``CollectiveError``) after this many slots without progress.
    stall_slots: int = 20_000

    def __post_init__(self) -> None:
        rate = self.reduce_bytes_per_ns
        if isinstance(rate, bool) or not isinstance(rate, int | float) or not (
                math.isfinite(rate) and rate > 0):
            raise ConfigError("reduce_bytes_per_ns", f"must be a number > 0, got {rate!r}")
        if isinstance(self.stall_slots, bool) or not isinstance(self.stall_slots, int) or (
                self.stall_slots < 1):
            raise ConfigError("stall_slots", f"must be an integer >= 1, got {self.stall_slots!r}")


@dataclass
class RankTimes:
    """Slots one rank spent in each phase (rule C6), and when it finished."""

    phases: dict[str, int] = field(default_factory=lambda: dict.fromkeys(PHASES, 0))
    finished: float = 0.0


@dataclass(frozen=True)
class CollectiveRun:
    """What a run produced: times in slots, per-rank phases, the data check."""

    collective: Collective
    fabric: Fabric
    slots: float
    ranks: tuple[RankTimes, ...]
    #: Per rank, the output addresses whose bytes differ from the reference (empty: exact).
    mismatches: tuple[tuple[int, ...], ...]
    #: Per rank, pages written outside the collective's buffers (empty: untouched).
    stray_pages: tuple[tuple[int, ...], ...]

    @property
    def exact(self) -> bool:
        """Every rank's output equals the reference and nothing else was written."""
        return not any(self.mismatches) and not any(self.stray_pages)


def _pieces(remote: int, local: int, nbytes: int) -> Iterator[tuple[int, int, int]]:
    """``(remote, local, length)`` of a transfer's requests, split at the remote address
    (:func:`~ualink_ref.tl.upli.request_pieces`); ``local`` follows along."""
    for addr, length in request_pieces(remote, nbytes):
        yield addr, local + (addr - remote), length


class _Rank:
    """One rank's program as it runs (rules C1-C4)."""

    def __init__(self, index: int, program: tuple[P.Step, ...], memory: Memory,
                 dtype: np.dtype[np.generic]) -> None:
        self.index = index
        self.program = program
        self.memory = memory
        self.dtype = dtype
        self.pc = 0
        self.busy_until = 0.0
        self.pieces: Iterator[tuple[int, int, int]] | None = None
        self.issued = 0  # operations issued, numbered 0, 1, ...
        self.completed: list[bool] = []
        self.outstanding = 0
        self.signals: deque[tuple[int, P.Signal]] = deque()  # (ops issued before it, signal)
        # (peer, plane) -> numbers of the operations to that peer on that plane not yet
        # known complete, oldest first (completed ones leave from the head lazily)
        self.open_ops: dict[tuple[int, int], deque[int]] = {}
        self.step_open: dict[int, int] = {}  # program step -> its operations in flight
        self.groups: set[int] = set()  # multicast groups this rank has sent to
        self.times = RankTimes()

    @property
    def done(self) -> bool:
        return self.pc >= len(self.program) and not self.signals and not self.outstanding

    def complete(self, seq: int, step: int) -> None:
        self.completed[seq] = True
        self.outstanding -= 1
        self.step_open[step] -= 1

    def ordered_before(self, signal: P.Signal, issued_before: int, plane: int) -> bool:
        """Rule C3: every operation to the signal's peer issued before it (the first
        ``issued_before``) either travels on the signal's own plane, where TL rule 1 and
        switch rule S5 keep it ahead of the signal, or has completed."""
        for (peer, other), seqs in self.open_ops.items():
            while seqs and self.completed[seqs[0]]:  # completed ones leave from the head
                seqs.popleft()
            # through a group (S9) nothing keeps the order: it must have completed
            if peer not in self.groups and (peer != signal.peer or other == plane):
                continue
            if seqs and seqs[0] < issued_before:
                return False
        return True

    def flag(self, addr: int) -> int:
        return int.from_bytes(self.memory.peek(addr, 8), "little")


class CollectiveRunner:
    """Runs one :class:`Collective` on a fresh pod (see the module docstring)."""

    def __init__(self, collective: Collective, fabric_config: FabricConfig,
                 config: RunConfig | None = None) -> None:
        if fabric_config.accelerators != collective.ranks:
            raise ConfigError("accelerators", f"the pod has {fabric_config.accelerators} "
                              f"accelerators, the collective {collective.ranks} ranks")
        if fabric_config.batch != 1:  # phases and fault checks count single slots (C6, C7)
            raise ConfigError("batch", f"a collective runs one slot a step, got "
                                       f"{fabric_config.batch}")
        self.collective = collective
        self.config = config if config is not None else RunConfig()
        # every rank's memory holds the collective's buffers (flags and slack besides)
        pages = -(-(collective.memory_bytes + (1 << 20)) // PAGE_SIZE)
        if pages > fabric_config.memory_pages:
            fabric_config = replace(fabric_config, memory_pages=pages)
        if collective.groups:  # the collective's multicast groups on every switch (S9)
            fabric_config = replace(fabric_config,
                                    multicast=fabric_config.multicast + collective.groups)
        self.fabric = Fabric(fabric_config)
        self.slot_ns = fabric_config.slot_ns
        dtype = DTYPES[collective.dtype]
        self.ranks = [_Rank(r, collective.programs[r], self.fabric.memories[r], dtype)
                      for r in range(collective.ranks)]
        for r, data in enumerate(collective.inputs):
            self.fabric.memories[r].poke(L.INPUT, data)
        self.max_outstanding = fabric_config.max_outstanding
        self._reduce_code = {dtype: code for code, dtype in REDUCE_CODES.items()}[dtype]
        self._groups = {g.group for g in collective.groups}
        # (plane, rank, handle) -> (op number, program step, local address of read data or -1)
        self._in_flight: dict[tuple[int, int, int], tuple[int, int, int]] = {}

    # -- issuing ------------------------------------------------------------------------

    def _issue(self, rank: _Rank, peer: int, addr: int, kind: str, payload: bytes | int,
               local: int = -1, step: int | None = None) -> None:
        plane = self.fabric.plane_of(addr)
        ep = self.fabric.endpoints[plane][rank.index]
        try:
            if kind == "write":
                assert isinstance(payload, bytes)
                handle = ep.write(peer, addr, payload)
            elif kind in ("read", "reduce"):
                assert isinstance(payload, int)
                handle = ep.read(peer, addr, payload,
                                 metadata=self._reduce_code if kind == "reduce" else 0)
            else:
                handle = ep.atomic(peer, addr, AtomicOp.ADD, 1, size=8, fetch=False)
        except UALinkError as exc:  # e.g. the TL refuses new operations once its link failed
            self._fail(f"rank {rank.index}: cannot issue on link p{plane}.link{rank.index} "
                       f"({exc})")
        step = rank.pc if step is None else step  # the data step it belongs to (-1: a signal)
        self._in_flight[(plane, rank.index, handle)] = (rank.issued, step, local)
        rank.step_open[step] = rank.step_open.get(step, 0) + 1
        rank.open_ops.setdefault((peer, plane), deque()).append(rank.issued)
        rank.issued += 1
        rank.completed.append(False)
        rank.outstanding += 1

    def _advance(self, rank: _Rank, now: float) -> str:
        """Issue what ``rank`` can issue at ``now``; return the phase it is in (C6)."""
        while rank.signals and rank.outstanding < self.max_outstanding:
            issued_before, signal = rank.signals[0]
            if not rank.ordered_before(signal, issued_before, self.fabric.plane_of(signal.flag)):
                break
            rank.signals.popleft()
            self._issue(rank, signal.peer, signal.flag, "atomic", 0, step=-1)
        if now < rank.busy_until:
            return "reduce"
        program = rank.program
        while rank.pc < len(program):
            step = program[rank.pc]
            if isinstance(step, P.Put | P.Get):
                writes = isinstance(step, P.Put)
                peer = step.peer
                group = peer in self._groups
                if rank.pieces is None:
                    rank.pieces = (_pieces(step.dst, step.src, step.nbytes) if writes
                                   else _pieces(step.src, step.dst, step.nbytes))
                    if group:
                        rank.groups.add(peer)
                while rank.outstanding < self.max_outstanding:
                    piece = next(rank.pieces, None)
                    if piece is None:
                        break
                    remote, local, length = piece
                    if writes:
                        self._issue(rank, peer, remote, "write", rank.memory.peek(local, length))
                    else:
                        self._issue(rank, peer, remote,
                                    "reduce" if group else "read",
                                    length, local)
                else:
                    return "window"  # held by the in-flight limit (rule C1)
                rank.pieces = None
                rank.pc += 1
                continue
            if isinstance(step, P.Signal):
                rank.signals.append((rank.issued, step))
                rank.pc += 1
                continue
            if isinstance(step, P.Fence):
                if not 0 <= step.step < rank.pc:
                    raise CollectiveError(f"rank {rank.index}: a fence on step {step.step}, "
                                          "not an earlier one")
                if rank.step_open.get(step.step, 0):
                    return "wait"
                rank.pc += 1
                continue
            if isinstance(step, P.Wait):
                if rank.flag(step.flag) < step.count:
                    return "wait"
                rank.pc += 1
                continue
            rank.pc += 1  # Reduce or Copy: rule C4
            work = self._local(rank, step)
            rank.busy_until = now + math.ceil(work / self.config.reduce_bytes_per_ns
                                              / self.slot_ns)
            if now < rank.busy_until:
                return "reduce"
        return "drain" if not rank.done else "done"

    def _local(self, rank: _Rank, step: P.Reduce | P.Copy) -> int:
        """Apply a local step to the rank's memory; return the bytes it moves (C4)."""
        if isinstance(step, P.Copy):
            rank.memory.poke(step.dst, rank.memory.peek(step.src, step.nbytes))
            return 2 * step.nbytes
        parts = [np.frombuffer(rank.memory.peek(src, step.nbytes), dtype=rank.dtype)
                 for src in step.srcs]
        acc = parts[0].copy()
        for part in parts[1:]:
            acc = acc + part  # in order: rule C4
        rank.memory.poke(step.dst, acc.tobytes())
        return step.nbytes * (len(step.srcs) + 1)

    # -- running ------------------------------------------------------------------------

    def run(self, progress: Callable[[int], None] | None = None) -> CollectiveRun:
        """Run every program to its end; check the outputs (rule C5)."""
        net = self.fabric.network
        active = list(self.ranks)
        last_progress = net.now
        while active:
            now = net.now
            still = []
            for rank in active:
                phase = self._advance(rank, now)
                if phase == "done":
                    rank.times.finished = now
                    if progress is not None:
                        progress(1)
                    continue
                rank.times.phases[phase] += 1
                still.append(rank)
            active = still
            moved = False
            for plane, acc, event in self.fabric.step():
                entry = self._in_flight.pop((plane, acc, event.handle), None)
                if entry is None:
                    self._fail(f"rank {acc}: a completion of no operation in flight on link "
                               f"p{plane}.link{acc}")
                seq, step_index, local = entry
                rank = self.ranks[acc]
                if event.status != Status.OKAY:
                    self._fail(f"rank {acc}: an operation on link p{plane}.link{acc} ended "
                               f"{event.status.name}"
                               f"{': ' + event.error if event.error else ''}")
                if local >= 0 and event.data is not None:
                    rank.memory.poke(local, event.data)
                rank.complete(seq, step_index)
                moved = True
            if moved or any(now < r.busy_until for r in active):
                last_progress = net.now
            elif active and net.now - last_progress > self.config.stall_slots:
                self._fail(f"no progress for {self.config.stall_slots} slots")
            if active and int(now) % FAULT_CHECK_SLOTS == 0:
                down = [f"p{p}.link{a}" for p, eps in enumerate(self.fabric.endpoints)
                        for a, ep in enumerate(eps) if ep.link.state is LinkState.FAULT]
                if down:
                    self._fail(f"link {', '.join(down)} in fault")
        slots = max((r.times.finished for r in self.ranks), default=0.0)
        self.fabric.drain()
        return CollectiveRun(collective=self.collective, fabric=self.fabric, slots=slots,
                             ranks=tuple(r.times for r in self.ranks),
                             mismatches=self._mismatches(), stray_pages=self._strays())

    def _fail(self, reason: str) -> NoReturn:
        """Rule C7: end the collective at every rank, none with a result."""
        now = self.fabric.network.now
        ranks = tuple(f"rank {r.index}: " + (f"stopped at step {r.pc} of {len(r.program)}"
                                             if not r.done else "finished its program, "
                                             "but the collective has no result")
                      for r in self.ranks)
        raise CollectiveError(f"{reason} at slot {now:.0f} "
                              f"({now * self.slot_ns / 1000:.2f} us): the collective ended "
                              f"at all {len(self.ranks)} ranks without a result", ranks)

    def _mismatches(self) -> tuple[tuple[int, ...], ...]:
        out = []
        for r, want in enumerate(self.collective.expected):
            bad = []
            for addr, data in want.items():
                got = self.fabric.memories[r].peek(addr, len(data))
                if got != data:
                    first = next(i for i in range(len(data)) if got[i] != data[i])
                    bad.append(addr + first)
            out.append(tuple(bad))
        return tuple(out)

    def _strays(self) -> tuple[tuple[int, ...], ...]:
        allowed = L.regions()
        out = []
        for memory in self.fabric.memories:
            out.append(tuple(base for base in memory.snapshot()
                             if not any(a <= base < b for a, b in allowed)))
        return tuple(out)


def run_collective(collective: Collective, fabric_config: FabricConfig,
                   config: RunConfig | None = None,
                   progress: Callable[[int], None] | None = None) -> CollectiveRun:
    """Run ``collective`` on a fresh pod ``fabric_config`` (see the module docstring)."""
    return CollectiveRunner(collective, fabric_config, config).run(progress)


__all__ = ["DEFAULT_REDUCE_BYTES_PER_NS", "FAULT_CHECK_SLOTS", "PHASES", "CollectiveError",
           "CollectiveRun", "CollectiveRunner", "RankTimes", "RunConfig", "run_collective"]
