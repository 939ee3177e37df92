"""Each collective's algorithms as programs, and each one's result computed on its own
(``specs/collectives.md`` sections "Algorithms" and "Reduction order").

:func:`build` returns a :class:`Collective`: one program per rank, each rank's input,
and the bytes every rank's output must hold. The expected outputs come from
:mod:`ualink_ref.collectives.reference`, which computes each operation from its
definition with numpy, in the reduction order the algorithm defines — never by
replaying a program.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from ualink_ref.collectives import layout as L
from ualink_ref.collectives import reference as R
from ualink_ref.collectives.moe import MoeRouting, route_tokens
from ualink_ref.collectives.program import (
    Copy,
    Fence,
    Get,
    Put,
    Reduce,
    Signal,
    Step,
    Wait,
)
from ualink_ref.errors import ConfigError
from ualink_ref.node.config import MulticastGroup

#: Each operation's algorithms (the first is the default).
ALGORITHMS: dict[str, tuple[str, ...]] = {
    "all-reduce": ("ring", "one-shot", "two-shot", "in-network"),
    "reduce-scatter": ("ring",),
    "all-gather": ("ring",),
    "broadcast": ("ring",),
    "all-to-all": ("direct",),
    "moe": ("direct",),
}


def bus_factor(op: str, n: int) -> float:
    """nccl-tests' bus-bandwidth factor busbw / algbw of ``op`` on ``n`` ranks."""
    if op == "all-reduce":
        return 2 * (n - 1) / n
    if op == "broadcast":
        return 1.0
    return (n - 1) / n  # reduce-scatter, all-gather, all-to-all (and the MoE exchange)
DTYPES: dict[str, np.dtype[np.generic]] = {"int32": np.dtype("<i4"), "float32": np.dtype("<f4")}
#: The multicast group of an in-network algorithm: every rank (project choice: the
#: highest accelerator ID, so a pod with in-network reduction has at most 1,023 ranks).
GROUP = 1023
#: Reduce-loads an in-network rank keeps ahead of its multicast stores, in slices.
IN_NETWORK_AHEAD = 2
#: A ring's transfers are cut into slices of at most this many bytes, so a rank forwards
#: the first slice while later ones are still arriving (project choice: NCCL-style
#: pipelining; 32 KiB keeps ≥ 4 slices in flight at 1 MiB on 8 ranks).
SLICE_BYTES = 32 * 1024


@dataclass(frozen=True)
class Collective:
    """One collective, ready to run: programs, inputs and expected outputs."""

    op: str
    algo: str
    ranks: int
    size: int  # bytes, as nccl-tests counts them for ``op`` (see specs/collectives.md)
    dtype: str
    programs: tuple[tuple[Step, ...], ...]
    inputs: tuple[bytes, ...]
    #: Per rank, ``{address: bytes}`` its memory must hold at the end.
    expected: tuple[dict[int, bytes], ...]
    routing: MoeRouting | None = field(default=None)
    #: Multicast groups the pod's switches need (in-network algorithms, S9).
    groups: tuple[MulticastGroup, ...] = ()
    #: The most bytes of buffers one rank fills (its memory is made that large, C5).
    memory_bytes: int = 0

    @property
    def bus_factor(self) -> float:
        """busbw / algbw for this operation (nccl-tests)."""
        return bus_factor(self.op, self.ranks)


def _bounds(count: int, parts: int) -> list[tuple[int, int]]:
    """``parts`` contiguous element ranges covering ``count`` elements (sizes differ by
    at most one)."""
    return [(count * i // parts, count * (i + 1) // parts) for i in range(parts)]


def _slices(start: int, end: int, item: int) -> list[tuple[int, int]]:
    """``[start, end)`` (elements of ``item`` bytes) cut into slices of <= SLICE_BYTES."""
    count = end - start
    pieces = max(1, math.ceil(count * item / SLICE_BYTES))
    return [(start + a, start + b) for a, b in _bounds(count, pieces)]


class _Flags:
    """Hands out flag addresses (rule C2): one counter per signalled event; at most the
    layout's (``limit``), unless a timing-only schedule lifts it (no memory holds them)."""

    def __init__(self, limit: int | None = L.MAX_FLAGS) -> None:
        self.used = 0
        self.limit = limit

    def take(self) -> int:
        if self.limit is not None and self.used >= self.limit:
            raise ConfigError("size", "the collective needs more flags than the layout has")
        self.used += 1
        return L.FLAGS + 8 * (self.used - 1)


def check_collective(op: str, algo: str, ranks: int, size: int, dtype: str) -> str:
    """``algo`` (or ``op``'s default when empty) if ``op`` by it on ``ranks`` ranks of
    ``size`` bytes of ``dtype`` can be built and fits a rank's memory; else
    :class:`~ualink_ref.errors.ConfigError` naming the option."""
    algo = _check_shape(op, algo, ranks, size, dtype)
    if size > L.REGION_LIMIT:
        raise ConfigError("size", f"at most {L.REGION_LIMIT} bytes, got {size}")
    footprint = _footprint(op, algo, ranks, size)
    if footprint > MEMORY_LIMIT:
        raise ConfigError("size", f"{op} ({algo}) of {size} bytes on {ranks} ranks needs "
                                  f"{footprint} bytes of buffers per rank; at most "
                                  f"{MEMORY_LIMIT}")
    return algo


def check_schedule(op: str, algo: str, ranks: int, size: int, dtype: str) -> str:
    """:func:`check_collective` without the memory bounds: what a timing-only schedule
    (:class:`TimingOnly`) must satisfy."""
    return _check_shape(op, algo, ranks, size, dtype)


def _check_shape(op: str, algo: str, ranks: int, size: int, dtype: str) -> str:
    """The checks of :func:`check_collective` that do not concern memory."""
    if op not in ALGORITHMS:
        raise ConfigError("op", f"must be one of {tuple(ALGORITHMS)}, got {op!r}")
    algo = algo or ALGORITHMS[op][0]
    if algo not in ALGORITHMS[op]:
        raise ConfigError("algo", f"{op} has {ALGORITHMS[op]}, not {algo!r}")
    if dtype not in DTYPES:
        raise ConfigError("dtype", f"must be one of {tuple(DTYPES)}, got {dtype!r}")
    if isinstance(ranks, bool) or not isinstance(ranks, int) or not 2 <= ranks <= 1024:
        raise ConfigError("accelerators", f"must be 2..1024, got {ranks!r}")
    if algo == "in-network" and ranks > GROUP:
        raise ConfigError("accelerators", f"in-network needs group ID {GROUP} free: at most "
                                          f"{GROUP} ranks")
    item = DTYPES[dtype].itemsize
    if isinstance(size, bool) or not isinstance(size, int) or size < item or size % item:
        raise ConfigError("size", f"must be a positive multiple of {item} bytes, got {size!r}")
    if op in ("reduce-scatter", "all-gather") and size // item < ranks:
        raise ConfigError("size", f"{op} needs at least one element per rank")
    if op in ("all-gather", "all-to-all") and size % (item * ranks):
        raise ConfigError("size", f"{op} needs a size that is a multiple of "
                                  f"{item * ranks} bytes ({ranks} equal blocks)")
    return algo


#: The most memory a collective's buffers may fill in one rank (project choice: 1 GiB,
#: what the layout's regions hold; the runner gives each rank memory for its buffers).
MEMORY_LIMIT = 1 << 30


def _footprint(op: str, algo: str, ranks: int, size: int) -> int:
    """Bytes of memory a rank fills (input, output, partial sums, landing buffers)."""
    if op == "all-reduce" and algo == "one-shot":
        return size * (ranks + 1)  # input, output and every peer's copy
    if op in ("all-reduce", "reduce-scatter") and algo in ("ring", "two-shot"):
        return size * 3 + size * (ranks - 1) // ranks + 4 * ranks  # + n - 1 landing chunks
    if op == "moe":
        return size * 3  # tokens, the dispatch buffer (skew bounded by the total), combine
    return size * 3


def fit_size(op: str, ranks: int, size: int, dtype: str = "float32") -> int | None:
    """The largest size <= ``size`` that ``op`` accepts on ``ranks`` ranks, or ``None``
    when there is none (a size sweep rounds as nccl-tests rounds its counts)."""
    item = DTYPES[dtype].itemsize if dtype in DTYPES else 4
    if op in ("all-gather", "all-to-all"):
        unit, least = item * ranks, item * ranks
    elif op == "reduce-scatter":
        unit, least = item, item * ranks
    elif op == "moe":  # whole tokens: 4 KiB ones from 16 KiB up (top-2), else two per rank
        unit = 8192 if size >= 16384 else 16
        least = 16
    else:
        unit, least = item, item
    fitted = size - size % unit
    return fitted if fitted >= least else None


def random_inputs(ranks: int, count: int, dtype: str, seed: int) -> list[np.ndarray]:
    """Each rank's seeded input of ``count`` elements: int32 over the whole range, float32
    finite values of mixed sign and scale (so rounding order matters)."""
    rng = np.random.default_rng(seed)
    if dtype == "int32":
        return [rng.integers(-(2**31), 2**31, count, dtype=np.int64).astype("<i4")
                for _ in range(ranks)]
    return [(rng.standard_normal(count) * np.exp2(rng.integers(-8, 9, count))).astype("<f4")
            for _ in range(ranks)]


@dataclass(frozen=True)
class TimingOnly:
    """A schedule for a timing model (the fast fidelity, specs/fast.md): no rank's memory
    holds it, so the buffers' footprint and the layout's flag count do not bound it, and
    ``ranks`` (when set) builds only those ranks' programs (the others stay empty)."""

    ranks: tuple[int, ...] | None = None


@dataclass(frozen=True)
class Schedule:
    """A collective's programs without its data: what a timing model needs (the fast
    fidelity runs these, specs/fast.md), and what :func:`build` fills with data."""

    op: str
    algo: str
    ranks: int
    size: int
    programs: tuple[tuple[Step, ...], ...]
    groups: tuple[MulticastGroup, ...] = ()
    routing: MoeRouting | None = None

    @property
    def bus_factor(self) -> float:
        """busbw / algbw for this operation (nccl-tests)."""
        return bus_factor(self.op, self.ranks)


def schedule(op: str, algo: str, ranks: int, size: int, dtype: str = "float32", *,
             seed: int = 0, moe: MoeRouting | None = None,
             timing: TimingOnly | None = None) -> Schedule:
    """The programs of ``op`` by ``algo`` (as :func:`build` runs them), without data; with
    ``timing``, for a timing model only (see :class:`TimingOnly`)."""
    if timing is None:
        algo = check_collective(op, algo, ranks, size, dtype)
        built: Sequence[int] = range(ranks)
        flags = _Flags()
    else:
        algo = _check_shape(op, algo, ranks, size, dtype)
        built = timing.ranks if timing.ranks is not None else range(ranks)
        flags = _Flags(limit=None)
    item = DTYPES[dtype].itemsize
    if op == "moe":
        routing = moe if moe is not None else route_tokens(ranks, size, seed=seed)
        return Schedule(op, algo, ranks, routing.dispatch_bytes,
                        _moe_programs(routing, built), routing=routing)
    count = {"all-gather": size // item // ranks}.get(op, size // item)
    builder = {
        ("all-reduce", "ring"): _ring_all_reduce,
        ("all-reduce", "one-shot"): _one_shot,
        ("all-reduce", "two-shot"): _two_shot,
        ("all-reduce", "in-network"): _in_network,
        ("reduce-scatter", "ring"): _ring_reduce_scatter,
        ("all-gather", "ring"): _ring_all_gather,
        ("broadcast", "ring"): _ring_broadcast,
        ("all-to-all", "direct"): _all_to_all,
    }[(op, algo)]
    groups = ((MulticastGroup(GROUP, tuple(range(ranks))),) if algo == "in-network" else ())
    programs = builder(ranks, count, item, flags, built)
    return Schedule(op, algo, ranks, size, tuple(tuple(p) for p in programs), groups)


def build(op: str, algo: str, ranks: int, size: int, dtype: str = "float32", *,
          seed: int = 0, moe: MoeRouting | None = None) -> Collective:
    """The collective ``op`` by ``algo`` on ``ranks`` ranks of ``size`` bytes (nccl-tests'
    size: the buffer all-reduced or broadcast, the gathered output, the scattered input,
    the bytes each rank sends in an all-to-all; for ``moe`` the dispatch bytes per rank,
    see :func:`ualink_ref.collectives.moe.route_tokens`)."""
    plan = schedule(op, algo, ranks, size, dtype, seed=seed, moe=moe)
    item = DTYPES[dtype].itemsize
    if plan.routing is not None:
        return _moe(plan, dtype, seed)
    count = {"all-gather": size // item // ranks}.get(op, size // item)
    inputs = random_inputs(ranks, count, dtype, seed)
    outputs = R.expected(op, plan.algo, inputs)
    return Collective(op=op, algo=plan.algo, ranks=ranks, size=size, dtype=dtype,
                      programs=plan.programs,
                      inputs=tuple(x.tobytes() for x in inputs),
                      expected=tuple({L.OUTPUT: out.tobytes()} for out in outputs),
                      groups=plan.groups, memory_bytes=_footprint(op, plan.algo, ranks, size))


# -- the algorithms --------------------------------------------------------------------


def _ring_reduce_phase(ranks: int, count: int, item: int, flags: _Flags,
                       compact: bool, built: Sequence[int]) -> list[list[Step]]:
    """Ring reduce-scatter (rule A1): after it, rank r holds chunk r reduced in ring order
    at OUTPUT, at the chunk's own offset (or at offset 0 when ``compact``)."""
    n = ranks
    chunks = _bounds(count, n)
    slices = [_slices(a, b, item) for a, b in chunks]
    # flag[k][c][s]: slice s of the chunk c sent at step k has landed at its receiver
    # sent[k][s]: slice s of what a rank received at step k has landed (each rank receives
    # one chunk per step, so one flag per step and slice, in the receiver's memory)
    per_step = max(len(sl) for sl in slices)
    sent = [[flags.take() for _ in range(per_step)] for _k in range(n - 1)]
    widest = max(b - a for a, b in chunks) * item

    def landing(k: int, c: int, a: int) -> int:
        """Where element ``a`` of chunk ``c``, received at step ``k``, lands: one
        chunk-sized slot per step, so the receiver's memory holds n - 1 chunks."""
        return L.SCRATCH + k * widest + (a - chunks[c][0]) * item

    programs: list[list[Step]] = [[] for _ in range(n)]
    for r in built:
        prog, nxt = programs[r], (r + 1) % n
        for k in range(n - 1):
            c = (r - k - 1) % n  # the chunk this rank sends at step k
            for s, (a, b) in enumerate(slices[c]):
                if k == 0:
                    src = L.INPUT + a * item
                else:  # received at step k - 1: add this rank's own part, then forward
                    prog.append(Wait(sent[k - 1][s], 1))
                    src = L.ACCUMULATOR + a * item
                    prog.append(Reduce(src, (landing(k - 1, c, a), L.INPUT + a * item),
                                       (b - a) * item))
                prog.append(Put(nxt, src, landing(k, c, a), (b - a) * item))
                prog.append(Signal(nxt, sent[k][s]))
        c = r  # the chunk that ends here, received at step n - 2
        for s, (a, b) in enumerate(slices[c]):
            prog.append(Wait(sent[n - 2][s], 1))
            at = a - chunks[c][0] if compact else a
            prog.append(Reduce(L.OUTPUT + at * item,
                               (landing(n - 2, c, a), L.INPUT + a * item), (b - a) * item))
    return programs


def _ring_gather_phase(programs: list[list[Step]], ranks: int, count: int, item: int,
                       flags: _Flags, built: Sequence[int]) -> None:
    """Ring all-gather of the chunks each rank holds at OUTPUT (rule A2)."""
    n = ranks
    chunks = _bounds(count, n)
    slices = [_slices(a, b, item) for a, b in chunks]
    # sent[k][s]: slice s of what a rank received at step k has landed (each rank receives
    # one chunk per step, so one flag per step and slice, in the receiver's memory)
    per_step = max(len(sl) for sl in slices)
    sent = [[flags.take() for _ in range(per_step)] for _k in range(n - 1)]
    for r in built:
        prog, nxt = programs[r], (r + 1) % n
        for k in range(n - 1):
            c = (r - k) % n
            for s, (a, b) in enumerate(slices[c]):
                if k > 0:
                    prog.append(Wait(sent[k - 1][s], 1))
                addr = L.OUTPUT + a * item
                prog.append(Put(nxt, addr, addr, (b - a) * item))
                prog.append(Signal(nxt, sent[k][s]))
        c = (r + 1) % n  # the last chunk to arrive
        for s in range(len(slices[c])):
            prog.append(Wait(sent[n - 2][s], 1))


def _ring_all_reduce(ranks: int, count: int, item: int, flags: _Flags,
                     built: Sequence[int]) -> list[list[Step]]:
    programs = _ring_reduce_phase(ranks, count, item, flags, False, built)
    _ring_gather_phase(programs, ranks, count, item, flags, built)
    return programs


def _ring_reduce_scatter(ranks: int, count: int, item: int, flags: _Flags,
                         built: Sequence[int]) -> list[list[Step]]:
    """Ring reduce-scatter, rank r's chunk at OUTPUT (rule A1)."""
    return _ring_reduce_phase(ranks, count, item, flags, True, built)


def _ring_all_gather(ranks: int, count: int, item: int, flags: _Flags,
                     built: Sequence[int]) -> list[list[Step]]:
    """Each rank's input (``count`` elements) gathered in rank order at OUTPUT."""
    programs: list[list[Step]] = [[] for _ in range(ranks)]
    for r in built:
        programs[r].append(Copy(L.OUTPUT + r * count * item, L.INPUT, count * item))
    _ring_gather_phase(programs, ranks, count * ranks, item, flags, built)
    return programs


def _ring_broadcast(ranks: int, count: int, item: int, flags: _Flags,
                    built: Sequence[int]) -> list[list[Step]]:
    """Rank 0's input along the chain 0 -> 1 -> ... -> n-1, slice by slice (rule A5)."""
    slices = _slices(0, count, item)
    arrived = [[flags.take() for _ in slices] for _ in range(ranks)]
    programs: list[list[Step]] = [[] for _ in range(ranks)]
    if 0 in built:
        programs[0].append(Copy(L.OUTPUT, L.INPUT, count * item))
    for r in built:
        prog = programs[r]
        for s, (a, b) in enumerate(slices):
            addr = L.OUTPUT + a * item
            if r > 0:
                prog.append(Wait(arrived[r][s], 1))
            if r < ranks - 1:
                prog.append(Put(r + 1, addr, addr, (b - a) * item))
                prog.append(Signal(r + 1, arrived[r + 1][s]))
    return programs


def _one_shot(ranks: int, count: int, item: int, flags: _Flags,
              built: Sequence[int]) -> list[list[Step]]:
    """Every rank sends its whole input to every other; each reduces all n in rank order
    (rule A3)."""
    nbytes = count * item
    landed = flags.take()
    programs: list[list[Step]] = [[] for _ in range(ranks)]
    for r in built:
        prog: list[Step] = []
        for j in range(1, ranks):
            p = (r + j) % ranks
            prog.append(Put(p, L.INPUT, L.SCRATCH + r * nbytes, nbytes))
            prog.append(Signal(p, landed))
        prog.append(Wait(landed, ranks - 1))
        srcs = tuple(L.INPUT if q == r else L.SCRATCH + q * nbytes for q in range(ranks))
        prog.append(Reduce(L.OUTPUT, srcs, nbytes))
        programs[r] = prog
    return programs


def _two_shot(ranks: int, count: int, item: int, flags: _Flags,
              built: Sequence[int]) -> list[list[Step]]:
    """Direct reduce-scatter (rank c reduces chunk c in rank order), then direct
    all-gather (rule A4)."""
    chunks = _bounds(count, ranks)
    widest = max(b - a for a, b in chunks) * item  # one landing slot per sender
    scattered, gathered = flags.take(), flags.take()
    programs: list[list[Step]] = [[] for _ in range(ranks)]
    for r in built:
        prog: list[Step] = []
        for j in range(1, ranks):
            p = (r + j) % ranks
            a, b = chunks[p]
            prog.append(Put(p, L.INPUT + a * item, L.SCRATCH + r * widest, (b - a) * item))
            prog.append(Signal(p, scattered))
        prog.append(Wait(scattered, ranks - 1))
        a, b = chunks[r]
        srcs = tuple(L.INPUT + a * item if q == r else L.SCRATCH + q * widest
                     for q in range(ranks))
        prog.append(Reduce(L.OUTPUT + a * item, srcs, (b - a) * item))
        for j in range(1, ranks):
            p = (r + j) % ranks
            prog.append(Put(p, L.OUTPUT + a * item, L.OUTPUT + a * item, (b - a) * item))
            prog.append(Signal(p, gathered))
        prog.append(Wait(gathered, ranks - 1))
        programs[r] = prog
    return programs


def _in_network(ranks: int, count: int, item: int, flags: _Flags,
                built: Sequence[int]) -> list[list[Step]]:
    """Rank c reduce-loads chunk c from every rank at the switch, then multicast-stores the
    sum to every rank (rule A8, switch rule S9); the switch sums in member (rank) order."""
    chunks = _bounds(count, ranks)
    landed = flags.take()
    programs: list[list[Step]] = [[] for _ in range(ranks)]
    for r in built:
        prog: list[Step] = []
        slices = _slices(*chunks[r], item)
        loads: list[int] = []  # the program step of each slice's reduce-load

        def load(s: int, prog: list[Step] = prog, slices: list[tuple[int, int]] = slices,
                 loads: list[int] = loads) -> None:
            a, b = slices[s]
            loads.append(len(prog))
            prog.append(Get(GROUP, L.INPUT + a * item, L.OUTPUT + a * item, (b - a) * item))

        for s in range(min(IN_NETWORK_AHEAD, len(slices))):
            load(s)
        for s, (a, b) in enumerate(slices):  # each slice stored once its sum is in
            prog.append(Fence(loads[s]))
            prog.append(Put(GROUP, L.OUTPUT + a * item, L.OUTPUT + a * item, (b - a) * item))
            if s + IN_NETWORK_AHEAD < len(slices):
                load(s + IN_NETWORK_AHEAD)
        for j in range(1, ranks):
            prog.append(Signal((r + j) % ranks, landed))
        prog.append(Wait(landed, ranks - 1))
        programs[r] = prog
    return programs


def _all_to_all(ranks: int, count: int, item: int, flags: _Flags,
                built: Sequence[int]) -> list[list[Step]]:
    """Rank r's block j goes to rank j's block r (rule A6); ``count`` elements each rank
    sends in all, ``count / ranks`` per block."""
    block = count // ranks * item
    landed = flags.take()
    programs: list[list[Step]] = [[] for _ in range(ranks)]
    for r in built:
        prog: list[Step] = [Copy(L.OUTPUT + r * block, L.INPUT + r * block, block)]
        for j in range(1, ranks):
            p = (r + j) % ranks
            prog.append(Put(p, L.INPUT + p * block, L.OUTPUT + r * block, block))
            prog.append(Signal(p, landed))
        prog.append(Wait(landed, ranks - 1))
        programs[r] = prog
    return programs


def _moe_programs(routing: MoeRouting, built: Sequence[int]) -> tuple[tuple[Step, ...], ...]:
    """MoE dispatch then combine (rule A7): every (token, choice) pair's vector to its
    expert's rank, then back to the token's rank, slot ``(token, choice)``."""
    n, token = routing.ranks, routing.token_bytes
    dispatched, combined = L.flag(0), L.flag(1)
    programs: list[list[Step]] = [[] for _ in range(n)]
    for r in built:
        prog = programs[r]
        for j in range(n):  # dispatch, staggered: r, r + 1, ...
            q = (r + j) % n
            for t, choice, slot in routing.sent(r, q):
                del choice
                src, dst = L.INPUT + t * token, L.OUTPUT + slot * token
                prog.append(Copy(dst, src, token) if q == r else Put(q, src, dst, token))
            if q != r:
                prog.append(Signal(q, dispatched))
        prog.append(Wait(dispatched, n - 1))
        for j in range(n):  # combine: each received vector back to its token's rank
            p = (r + j) % n
            for t, choice, slot in routing.sent(p, r):
                src = L.OUTPUT + slot * token
                dst = L.SCRATCH + (t * routing.top_k + choice) * token
                prog.append(Copy(dst, src, token) if p == r else Put(p, src, dst, token))
            if p != r:
                prog.append(Signal(p, combined))
        prog.append(Wait(combined, n - 1))
    return tuple(tuple(p) for p in programs)


def _moe(plan: Schedule, dtype: str, seed: int) -> Collective:
    """The MoE exchange of ``plan`` with seeded tokens and its expected outputs (A7)."""
    routing = plan.routing
    assert routing is not None
    n, item = routing.ranks, DTYPES[dtype].itemsize
    received = max(sum(routing.pairs(s, q) for s in range(n)) for q in range(n))
    if 2 * routing.dispatch_bytes + received * routing.token_bytes > MEMORY_LIMIT:
        raise ConfigError("size", f"the busiest expert's rank would need more than "
                                  f"{MEMORY_LIMIT} bytes of buffers")
    inputs = random_inputs(n, routing.tokens * routing.token_bytes // item, dtype, seed)
    expected = R.moe_expected(routing, [x.tobytes() for x in inputs])
    return Collective(op="moe", algo="direct", ranks=n, size=routing.dispatch_bytes,
                      dtype=dtype, programs=plan.programs,
                      inputs=tuple(x.tobytes() for x in inputs), expected=expected,
                      routing=routing,
                      memory_bytes=2 * routing.dispatch_bytes + received * routing.token_bytes)


__all__ = ["ALGORITHMS", "DTYPES", "GROUP", "IN_NETWORK_AHEAD", "MEMORY_LIMIT", "SLICE_BYTES",
           "Collective", "Schedule", "TimingOnly", "build", "bus_factor", "check_collective",
           "check_schedule",
           "fit_size", "random_inputs", "schedule"]
