"""A collective on the fast fidelity: the exact pod's programs, timed by the fast engine.

The same :class:`~ualink_ref.collectives.algorithms.Schedule` the exact pod runs (rules
C1-C4 of ``specs/collectives.md``: pieces of at most 256 bytes, the in-flight limit, C3's
signal ordering, local reduction time) runs here on :class:`~ualink_ref.fast.engine.Engine`
without data (``specs/fast.md`` rules P1-P3):

P1. A rank acts at whole slots, as the exact runner does: whatever frees it (a completion,
    a flag, the end of a local step) lets it act at the nearest slot boundary (the
    exact pod's arrivals fall on boundaries; the engine's times are estimates of them,
    and rounding to the nearest is the unbiased choice: the next boundary added half a
    slot per dependent step, 3-5 % on a ring of short steps).
P2. A flag counts the signals that reached it (E4); a :class:`Wait` holds until it is
    high enough. There is no data: the result is time and traffic, never checked bytes.
P3. The figures are the exact report's (nccl-tests' time, algbw, busbw; link use) for
    the same collective on the same pod.
P5. Two options trade detail for speed (:class:`FastConfig`), for pods past what the exact
    pod runs: ``burst`` sends up to that many of a data step's pieces per plane as one
    burst (engine rule E8) instead of one by one; ``symmetric`` runs one rank only, for
    an algorithm whose ranks all do the same thing shifted by their index
    (:data:`SYMMETRIC`) on a pod whose links are all alike: every other rank is then in
    the same state at the same time, so what rank 0 sends to any peer is what it
    receives from one, at the same moment — every queue is rank 0's, and a signal rank 0
    sends sets rank 0's own flag when it arrives. Each is validated against the plain
    run (``specs/fast.md``, "Agreement").
P6. In bursts, a data step's next batch (``burst`` pieces per plane, or what is left) goes
    once a quarter of it (``FastConfig.admit_share``, at most the whole limit) has room
    under the in-flight limit, whole, so the count in flight swings about the limit
    instead of below it (project choice, measured: issuing only what has room kept bursts
    to one or two pieces, since completions free room a few pieces at a time, E9; waiting
    for room for a whole batch ran 31-32 % slow against the piece-by-piece run). With
    ``FastConfig.within_limit`` the batch (at most the limit) takes only what has room
    once its share has, so the count never passes the limit: the reduce-scatter ring's
    large runs (:data:`WITHIN_LIMIT`), which the swing above the limit ran 6-15 % fast on
    8 to 64 ranks (a rank that could send a whole sub-chunk after each local reduction
    queued less than one held to the limit, which trickles the rest out a piece per
    completion, as the exact pod does); on 256 and 1,024 ranks both ran within 1 %.
"""

from __future__ import annotations

import math
from collections import deque
from dataclasses import dataclass

from ualink_ref.collectives import program as P
from ualink_ref.collectives.algorithms import Schedule
from ualink_ref.collectives.run import DEFAULT_REDUCE_BYTES_PER_NS, CollectiveError
from ualink_ref.errors import ConfigError
from ualink_ref.fast.calibrate import LinkCalibration, calibrate
from ualink_ref.fast.engine import Engine, Operation
from ualink_ref.fast.report import FastReport
from ualink_ref.fast.trust import untrusted_reasons
from ualink_ref.sim.fabric import FabricConfig
from ualink_ref.tl.upli import REGION_BYTES


@dataclass(slots=True)
class Transfer:
    """What is left of a data step: the bytes ``[addr, end)``, split as
    :func:`~ualink_ref.tl.upli.request_pieces` splits them (a piece per 256-byte region
    touched), counted rather than listed, so a burst of many is taken in O(planes)."""

    addr: int
    end: int

    @property
    def left(self) -> int:
        """Pieces not yet taken."""
        if self.addr >= self.end:
            return 0
        return (self.end - 1) // REGION_BYTES - self.addr // REGION_BYTES + 1

    def take_one(self) -> tuple[int, int]:
        """The next piece, ``(addr, length)``."""
        length = min(REGION_BYTES - self.addr % REGION_BYTES, self.end - self.addr)
        piece = (self.addr, length)
        self.addr += length
        return piece

    def take(self, count: int, planes: int) -> list[tuple[int, int, int]]:
        """The next ``count`` pieces (at most :attr:`left`) as ``(first addr, pieces,
        longest)`` per plane, in the order the planes first appear (rule F2: a region's
        plane is its index modulo ``planes``)."""
        count = min(count, self.left)
        first_region = self.addr // REGION_BYTES
        out = []
        for offset in range(min(planes, count)):
            region = first_region + offset
            pieces = (count - offset + planes - 1) // planes
            addr = self.addr if offset == 0 else region * REGION_BYTES
            out.append((addr, pieces, REGION_BYTES if count > 1
                        else min(REGION_BYTES - self.addr % REGION_BYTES,
                                 self.end - self.addr)))
        self.addr = min(self.end, (first_region + count) * REGION_BYTES)
        return out


class _Rank:
    """One rank's program as it runs (the exact runner's rank, without data)."""

    def __init__(self, index: int, program: tuple[P.Step, ...]) -> None:
        self.index = index
        self.program = program
        self.pc = 0
        self.busy_until = 0.0
        self.pieces: Transfer | None = None
        self.issued = 0
        self.completed: list[bool] = []
        self.outstanding = 0
        self.signals: deque[tuple[int, P.Signal]] = deque()
        self.open_ops: dict[tuple[int, int], deque[int]] = {}
        self.step_open: dict[int, int] = {}
        self.groups: set[int] = set()
        self.flags: dict[int, int] = {}
        self.finished: float | None = None
        self.wakes: set[float] = set()  # slots at which it is due to act (P1)

    @property
    def done(self) -> bool:
        return self.pc >= len(self.program) and not self.signals and not self.outstanding

    def ordered_before(self, signal: P.Signal, issued_before: int, plane: int) -> bool:
        """Rule C3, as the exact runner applies it."""
        for (peer, other), seqs in self.open_ops.items():
            while seqs and self.completed[seqs[0]]:
                seqs.popleft()
            if peer not in self.groups and (peer != signal.peer or other == plane):
                continue
            if seqs and seqs[0] < issued_before:
                return False
        return True


#: The (operation, algorithm) pairs whose ranks run the same program shifted by their
#: index (rule P5): rank r's peers are rank 0's plus r, its chunks rank 0's rotated.
SYMMETRIC: frozenset[tuple[str, str]] = frozenset({
    ("all-reduce", "ring"), ("all-reduce", "one-shot"), ("all-reduce", "two-shot"),
    ("all-reduce", "in-network"), ("reduce-scatter", "ring"), ("all-gather", "ring"),
    ("all-to-all", "direct")})


#: Rule P6: the share of a batch that must have room under the in-flight limit before it
#: goes (project choice from the burst table of specs/fast.md, ``--share``: whole-batch
#: room ran 31-32 % slow, a half up to 5.5 % slow on the all-to-all, all-gather and
#: two-shot (12 % with bursts of 16), a quarter 0.1-3.4 % off but for the reduce-scatter
#: ring, which :data:`WITHIN_LIMIT` mends).
BURST_ADMIT_SHARE = 0.25


@dataclass(frozen=True)
class FastConfig:
    """How the fast fidelity runs a collective (rule P5); the defaults are the validated
    plain run: every rank, piece by piece."""

    #: Pieces of a data step sent as one burst per plane (engine rule E8); 1: one by one.
    burst: int = 1
    #: Run rank 0 only (rule P5); needs an algorithm of :data:`SYMMETRIC`.
    symmetric: bool = False
    #: In bursts, the share of the next batch that must have room before it goes (P6).
    admit_share: float = BURST_ADMIT_SHARE
    #: In bursts, a batch (at most the in-flight limit) goes once its admit share has room
    #: and takes only what has room, so the count never passes the limit (P6).
    within_limit: bool = False
    #: Local reduction rate, bytes/ns (rule C4, as the exact runner's ``RunConfig``).
    reduce_bytes_per_ns: float = DEFAULT_REDUCE_BYTES_PER_NS

    def __post_init__(self) -> None:
        if isinstance(self.burst, bool) or not isinstance(self.burst, int) or self.burst < 1:
            raise ConfigError("burst", f"must be an integer >= 1, got {self.burst!r}")
        if not isinstance(self.symmetric, bool):
            raise ConfigError("symmetric", f"must be True or False, got {self.symmetric!r}")
        if not isinstance(self.within_limit, bool):
            raise ConfigError("within_limit",
                              f"must be True or False, got {self.within_limit!r}")
        share = self.admit_share
        if isinstance(share, bool) or not isinstance(share, int | float) or not (
                0 < share <= 1):
            raise ConfigError("admit_share", f"must be a number in (0, 1], got {share!r}")
        rate = self.reduce_bytes_per_ns
        if isinstance(rate, bool) or not isinstance(rate, int | float) or not (
                math.isfinite(rate) and rate > 0):
            raise ConfigError("reduce_bytes_per_ns", f"must be a number > 0, got {rate!r}")


class FastCollective:
    """Runs one :class:`Schedule` on the fast engine for a pod like ``pod``."""

    def __init__(self, plan: Schedule, pod: FabricConfig,
                 config: FastConfig | None = None,
                 calibration: LinkCalibration | None = None) -> None:
        if pod.accelerators != plan.ranks:
            raise ConfigError("accelerators", f"the pod has {pod.accelerators} accelerators, "
                                              f"the collective {plan.ranks} ranks")
        if pod.links_down:
            raise ConfigError("links_down", "the fast fidelity does not model link faults "
                                            "(specs/fast.md E6): run the exact pod")
        self.plan = plan
        self.pod = pod
        self.config = config if config is not None else FastConfig()
        self.fold = self.config.symmetric
        if self.fold and (plan.op, plan.algo) not in SYMMETRIC:
            raise ConfigError("symmetric", f"{plan.op} ({plan.algo}) is not one of the "
                                           "symmetric algorithms (specs/fast.md P5)")
        # folded (P5): one accelerator's queues; a group's members all land on them
        groups = {g.group: (0,) * len(g.members) if self.fold else g.members
                  for g in plan.groups}
        self.engine = Engine(1 if self.fold else pod.accelerators, pod.planes,
                             calibration if calibration is not None else calibrate(pod), groups)
        self.engine.on_target = self._at_target
        built = (0,) if self.fold else range(plan.ranks)
        self.ranks = [_Rank(r, plan.programs[r]) for r in built]
        self.operations = 0

    # -- events ----------------------------------------------------------------------------

    def _wake(self, rank: _Rank, time: float) -> None:
        """Rule P1: ``rank`` acts at the slot boundary nearest ``time``."""
        at = float(math.floor(time + 0.5))
        if at in rank.wakes:
            return  # it acts then already
        rank.wakes.add(at)
        self.engine.at(at, lambda: self._act(rank, at))

    def _act(self, rank: _Rank, at: float) -> None:
        rank.wakes.discard(at)
        self._advance(rank)

    def _at_target(self, target: int, op: Operation, time: float) -> None:
        if op.kind == "atomic":  # a signal: its flag counts one more (P2; folded: P5)
            rank = self.ranks[0 if self.fold else target]
            rank.flags[op.addr] = rank.flags.get(op.addr, 0) + 1
            self._wake(rank, time)

    def _issue(self, rank: _Rank, peer: int, addr: int, kind: str, nbytes: int,
               step: int, pieces: int = 1) -> None:
        """Issue ``pieces`` operations to ``peer`` on ``addr``'s plane as one burst (E8)."""
        plane = (addr >> 8) % self.pod.planes
        seq = rank.issued

        def freed(op: Operation, time: float, count: int) -> None:
            rank.outstanding -= count  # E9: the in-flight limit frees as pieces end
            self._wake(rank, time)

        def done(op: Operation, time: float) -> None:
            if pieces == 1:
                rank.outstanding -= 1
            rank.completed[seq] = True
            rank.step_open[step] -= 1
            self._wake(rank, time)

        src, dst = rank.index, peer
        if self.fold:  # P5: every queue is rank 0's
            src, dst = 0, (peer if peer in self.engine.groups else 0)
        self.engine.issue(src, dst, plane, kind, nbytes, addr, done, pieces,
                          freed if pieces > 1 else None)
        self.operations += pieces
        rank.step_open[step] = rank.step_open.get(step, 0) + 1
        rank.open_ops.setdefault((peer, plane), deque()).append(seq)
        rank.issued += 1
        rank.completed.append(False)
        rank.outstanding += pieces

    def _room_needed(self, want: int) -> int:
        """Free places under the in-flight limit a rank needs to send on: one piece by
        piece (C1); in bursts its share of the batch (P6), never more than the limit (so a
        rank with nothing in flight always sends)."""
        if self.config.burst == 1:
            return 1
        share = math.ceil(self.config.admit_share * want)
        return min(self.pod.max_outstanding, max(1, share))

    def _issue_batch(self, rank: _Rank, peer: int, kind: str, transfer: Transfer,
                     count: int, step: int) -> None:
        """The next piece (piece by piece), or (P5) the next ``count`` pieces in address
        order as one burst per plane, each burst as long as its longest piece."""
        if self.config.burst == 1:  # piece by piece: exactly the exact runner's C1
            addr, length = transfer.take_one()
            self._issue(rank, peer, addr, kind, length, step)
            return
        for addr, pieces, longest in transfer.take(count, self.pod.planes):
            self._issue(rank, peer, addr, kind, longest, step, pieces)

    def _advance(self, rank: _Rank) -> None:
        """The exact runner's ``_advance`` (C1-C4) at the engine's time."""
        self._run_program(rank, self.engine.now)
        self._after(rank, self.engine.now)

    def _after(self, rank: _Rank, now: float) -> None:
        """The exact runner visits every rank every slot; this one acts when woken, so it
        wakes a rank for the next slot when a signal could go then, and notes the end."""
        if rank.signals and rank.outstanding < self.pod.max_outstanding:
            issued_before, signal = rank.signals[0]
            if rank.ordered_before(signal, issued_before, (signal.flag >> 8) % self.pod.planes):
                self._wake(rank, now + 1)
        if rank.done and rank.finished is None:
            rank.finished = now

    def _run_program(self, rank: _Rank, now: float) -> None:
        limit = self.pod.max_outstanding
        while rank.signals and rank.outstanding < limit:
            issued_before, signal = rank.signals[0]
            if not rank.ordered_before(signal, issued_before,
                                       (signal.flag >> 8) % self.pod.planes):
                break
            rank.signals.popleft()
            self._issue(rank, signal.peer, signal.flag, "atomic", 8, -1)
        if now < rank.busy_until:
            return
        program = rank.program
        while rank.pc < len(program):
            step = program[rank.pc]
            if isinstance(step, P.Put | P.Get):
                writes = isinstance(step, P.Put)
                if rank.pieces is None:
                    start = step.dst if writes else step.src
                    rank.pieces = Transfer(start, start + step.nbytes)
                    if step.peer in self.engine.groups:
                        rank.groups.add(step.peer)
                kind = "write" if writes else "read"
                while rank.pieces.left:
                    want = min(rank.pieces.left, self.config.burst * self.pod.planes)
                    if self.config.within_limit:
                        want = min(want, limit)  # P6: its share is then of what can go
                    room = limit - rank.outstanding
                    if room < self._room_needed(want):
                        return  # held by the in-flight limit (C1; in bursts P6)
                    if self.config.within_limit:
                        want = min(want, room)  # P6: never past the limit
                    self._issue_batch(rank, step.peer, kind, rank.pieces, want, rank.pc)
                rank.pieces = None
                rank.pc += 1
                continue
            if isinstance(step, P.Signal):
                rank.signals.append((rank.issued, step))
                rank.pc += 1
                continue
            if isinstance(step, P.Fence):
                if rank.step_open.get(step.step, 0):
                    return
                rank.pc += 1
                continue
            if isinstance(step, P.Wait):
                if rank.flags.get(step.flag, 0) < step.count:
                    return
                rank.pc += 1
                continue
            rank.pc += 1  # Reduce or Copy (C4): local time, in whole slots
            work = (2 * step.nbytes if isinstance(step, P.Copy)
                    else step.nbytes * (len(step.srcs) + 1))
            rank.busy_until = now + math.ceil(work / self.config.reduce_bytes_per_ns
                                              / self.pod.slot_ns)
            if now < rank.busy_until:
                self._wake(rank, rank.busy_until)
                return

    # -- running ---------------------------------------------------------------------------

    def run(self) -> FastReport:
        """Run every program to its end; the figures of rule P3."""
        for rank in self.ranks:
            self._wake(rank, 0.0)
        self.engine.run()
        stuck = [r.index for r in self.ranks if r.finished is None]
        if stuck:
            raise CollectiveError(f"ranks {stuck[:8]} never finished: the schedule "
                                  "waits on a signal nobody sends")
        slots = max(max(r.finished for r in self.ranks if r.finished is not None), 1.0)
        plan, pod = self.plan, self.pod
        seconds = slots * pod.slot_ns * 1e-9
        algbw = plan.size / seconds / 1e9
        use = [q.served_slots / slots for queues in (self.engine.up, self.engine.down)
               for plane in queues for q in plane]
        return FastReport(op=plan.op, algo=plan.algo, ranks=plan.ranks, planes=pod.planes,
                          lanes=pod.lanes, flow_control=pod.flow_control, size=plan.size,
                          time_us=slots * pod.slot_ns / 1000, algbw_gbps=algbw,
                          busbw_gbps=algbw * plan.bus_factor,
                          link_mean=sum(use) / len(use), link_max=max(use),
                          operations=self.operations,
                          untrusted=untrusted_reasons(self.engine, pod) + self._burst_reasons())

    def _burst_reasons(self) -> tuple[str, ...]:
        """Rule V3e: a run in bursts other than its algorithm's validated large run
        (:func:`large_config`), or whose batches are larger against the in-flight limit
        than the burst table measured (:data:`MEASURED_BATCH_SHARE`), is not validated."""
        config = self.config
        if config.burst == 1:
            return ()
        op, algo = self.plan.op, self.plan.algo
        validated = large_config(op, algo, symmetric=config.symmetric,
                                 reduce_bytes_per_ns=config.reduce_bytes_per_ns)
        reasons: list[str] = []
        if config != validated:
            reasons.append(f"{_burst_mode(config)} is not the validated large run of {op} "
                           f"({algo}), {_burst_mode(validated)} (specs/fast.md's burst "
                           "table, rule P6)")
        batch = config.burst * self.pod.planes
        limit = self.pod.max_outstanding
        if batch > MEASURED_BATCH_SHARE * limit:
            reasons.append(f"a batch of {batch} pieces (bursts of {config.burst} on "
                           f"{self.pod.planes} planes) is more than {MEASURED_BATCH_SHARE:g} "
                           f"of max_outstanding {limit}: beyond what specs/fast.md's burst "
                           "table measured (rule P6)")
        return tuple(reasons)


def _burst_mode(config: FastConfig) -> str:
    """How a run in bursts issues, in words (for V3e's reasons)."""
    batches = ("batches within the in-flight limit" if config.within_limit
               else "whole batches")
    return f"bursts of {config.burst} in {batches} at admit share {config.admit_share:g}"


def run_fast_collective(plan: Schedule, pod: FabricConfig, config: FastConfig | None = None,
                        calibration: LinkCalibration | None = None) -> FastReport:
    """Time ``plan`` on a pod like ``pod`` with the fast fidelity (module docstring); the
    link costs are ``calibration`` (default: measured on the exact pod, rules Q1-Q5; the
    protocol comparison passes other framings')."""
    return FastCollective(plan, pod, config, calibration).run()


#: Pieces (memory operations) a plain run takes on before :func:`auto_config` turns to
#: bursts and symmetry (project choice: about 20 s of the engine on one core, which runs
#: 75-90 us a piece).
PLAIN_PIECES = 250_000
#: The burst (pieces per plane) of a large run (rule P5), by default and per algorithm
#: (project choice from the burst table of specs/fast.md, ``--burst``: bursts of 16 are
#: within 1 % of the piece-by-piece run on the all-reduce ring and in-network, where
#: bursts of 8 ran up to 6 % fast; elsewhere bursts of 16 ran up to 10 % slow and bursts
#: of 8 within 3.4 %; the reduce-scatter ring within the limit, :data:`WITHIN_LIMIT`,
#: within 2.1 % with 8, up to 8 % slow with 16).
LARGE_BURST = 8
LARGE_BURSTS: dict[tuple[str, str], int] = {
    ("all-reduce", "ring"): 16, ("all-reduce", "in-network"): 16}
#: Algorithms whose large runs keep their batches within the in-flight limit (rule P6;
#: project choice from the burst table: the reduce-scatter ring ran 12-13 % fast in whole
#: batches on 16 and 64 ranks, within 2.1 % within the limit; the others ran within
#: 3.4 % in whole batches and 0.0-1.9 % within the limit (the all-reduce ring 6 % with
#: bursts of 16), at up to 4.5x the CPU time: 39 s against 8.6 s for an all-to-all of
#: 1,024 ranks).
WITHIN_LIMIT: frozenset[tuple[str, str]] = frozenset({("reduce-scatter", "ring")})
#: Rule V3e: the largest batch (a burst on every plane) against the in-flight limit that
#: the burst table measured (4 planes of bursts of 16 under a limit of 256); past it a
#: whole batch can pass the limit by more than it measured (``burst_agreement.py --quick``:
#: with ``--planes 16`` the ring ran 6 % fast, with ``--max-outstanding 16`` the ring and
#: the all-to-all 47-59 % fast).
MEASURED_BATCH_SHARE = 0.25


def large_burst(op: str, algo: str) -> int:
    """The burst a large run of ``op`` by ``algo`` takes (:data:`LARGE_BURSTS`)."""
    return LARGE_BURSTS.get((op, algo), LARGE_BURST)


def large_config(op: str, algo: str, *, symmetric: bool,
                 reduce_bytes_per_ns: float = DEFAULT_REDUCE_BYTES_PER_NS) -> FastConfig:
    """The validated large run of ``op`` by ``algo`` (rules P5, P6): bursts of
    :func:`large_burst` at the default admit share, within the in-flight limit for the
    algorithms of :data:`WITHIN_LIMIT`; ``symmetric`` as given."""
    return FastConfig(burst=large_burst(op, algo), symmetric=symmetric,
                      within_limit=(op, algo) in WITHIN_LIMIT,
                      reduce_bytes_per_ns=reduce_bytes_per_ns)


def pieces_per_rank(op: str, ranks: int, size: int) -> int:
    """About how many memory operations one rank issues (for :func:`auto_config`)."""
    share = {"all-reduce": 2 * size, "broadcast": size, "moe": 2 * size}.get(op, size)
    return -(-share // 256)


def auto_config(op: str, algo: str, ranks: int, size: int,
                reduce_bytes_per_ns: float = DEFAULT_REDUCE_BYTES_PER_NS) -> FastConfig:
    """The run rule P5 picks: plain (every rank, piece by piece) up to
    :data:`PLAIN_PIECES` operations in all; past it, one rank for a symmetric algorithm
    and the algorithm's large run (:func:`large_config`)."""
    total = ranks * pieces_per_rank(op, ranks, size)
    if total <= PLAIN_PIECES:
        return FastConfig(reduce_bytes_per_ns=reduce_bytes_per_ns)
    return large_config(op, algo, symmetric=(op, algo) in SYMMETRIC,
                        reduce_bytes_per_ns=reduce_bytes_per_ns)


__all__ = ["BURST_ADMIT_SHARE", "LARGE_BURST", "LARGE_BURSTS", "MEASURED_BATCH_SHARE",
           "PLAIN_PIECES", "SYMMETRIC", "WITHIN_LIMIT", "FastCollective", "FastConfig",
           "FastReport", "Transfer", "auto_config", "large_burst", "large_config",
           "pieces_per_rank", "run_fast_collective"]
