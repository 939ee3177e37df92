"""Workloads: the ops a run issues — two-endpoint (:class:`Op`, :func:`random_workload`,
:func:`uniform_workload`, used by :mod:`ualink_ref.sim.link_run`) and fabric (who talks to
whom, the pattern; what, the op mix; and when, the load).

Fabric rules (``specs/fabric.md``, "Workloads"):

W1. The op shapes come from :func:`random_workload` (the
    existing mix: reads, Writes with byte enables, WriteFulls, atomics,
    4..256 bytes inside one 256-byte region), or, with ``size``, reads /
    writes of exactly ``size`` bytes region-aligned.
W2. Patterns: ``uniform`` (source and destination uniform, distinct),
    ``permutation`` (a seeded derangement: each source always the same
    destination), ``all-to-all`` (each source cycles through every other
    accelerator in turn), ``incast`` (every other accelerator to ``target``),
    ``hotspot`` (``hot_fraction`` of ops to ``target``, the rest uniform).
W3. Addresses: op of source s lies in ``[base + s * span, base + (s + 1) * span)``
    of its destination, so no two sources touch the same bytes and the
    sequential model per source is exact per address at every target.
W4. Offered load ``load`` (fraction of one link's data rate, per source):
    each source's ops arrive as a Poisson process whose mean gap is the op's
    link time on its busier direction divided by ``load``; ``None`` issues
    everything at slot 0 (a closed loop bounded by ``max_outstanding``). For
    ``incast`` the load is that offered to the destination's link in all, split
    evenly over the sources (so 1.0 saturates it exactly).
"""

from __future__ import annotations

import operator
import random
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace
from typing import Any, Literal

from ualink_ref.node.endpoint import Endpoint
from ualink_ref.sizes import DL_PAYLOAD_BYTES
from ualink_ref.tl import AtomicOp
from ualink_ref.tl.upli import request_pieces

SIDES = ("a", "b")
#: The kinds an :class:`Op` can have (a WriteFull is a "write" without byte enables).
OP_KINDS = ("read", "write", "atomic")
#: The kinds :func:`random_workload` can draw from.
WORKLOAD_KINDS = ("read", "write", "writefull", "atomic")
#: The largest transfer a fixed-size fabric workload offers (it is split at 256 bytes, W5).
MAX_TRANSFER_BYTES = 1 << 20
#: ``fabric --mix``: the op kinds of a fixed-size workload.
MIXES: dict[str, tuple[str, ...]] = {"mixed": ("read", "writefull"), "reads": ("read",),
                                     "writes": ("writefull",)}
#: The atomic ops a random workload draws from, in declaration order.
ATOMIC_OPS = tuple(AtomicOp)


@dataclass(frozen=True, slots=True)
class Op:
    """One UPLI operation of a workload, issued by ``side`` against the other side.

    ``kind`` is ``"read"`` (``length`` bytes), ``"write"`` (``data``, with an
    optional integer ``byte_enable`` mask) or ``"atomic"`` (``atomic_op``,
    ``operand``, ``compare`` for CAS, ``size`` 4 or 8, ``fetch``). Immutable;
    ``dataclasses.replace`` makes a changed copy, checked like a new one.
    """

    side: str
    kind: str
    addr: int
    length: int = 0
    data: bytes = b""
    byte_enable: int | None = None
    atomic_op: int = 0
    operand: int = 0
    compare: int | None = None
    size: int = 8
    fetch: bool = True

    def __post_init__(self) -> None:
        if self.side not in SIDES:
            raise ValueError(f"op side must be 'a' or 'b', got {self.side!r}")
        if self.kind not in OP_KINDS:
            raise ValueError(f"op kind must be one of {OP_KINDS}, got {self.kind!r}")

    @property
    def nbytes(self) -> int:
        """Bytes of target memory the op touches."""
        if self.kind == "read":
            return self.length
        return len(self.data) if self.kind == "write" else self.size

    def issue(self, ep: Endpoint | Any, dst: int) -> int:
        """Queue this op on ``ep`` (an endpoint or a TL engine) towards ``dst``; return its tag."""
        if self.kind == "read":
            return ep.read(dst, self.addr, self.length)
        if self.kind == "write":
            return ep.write(dst, self.addr, self.data, self.byte_enable)
        return ep.atomic(dst, self.addr, self.atomic_op, self.operand, self.compare,
                         self.size, self.fetch)


class RandomWorkload:
    """``n`` seeded random ops, generated as they are iterated (see :func:`random_workload`).

    Sized and re-iterable: ``len()`` is ``n`` without generating anything, and
    every iteration yields the same ops (it restarts from the seed), so a run of
    a billion ops starts at once and holds only the ops it has drawn.
    """

    def __init__(self, n: int, seed: int, span: int, base: int, sides: Sequence[str],
                 kinds: Sequence[str]) -> None:
        # Checked here, not only in random_workload: the ops are built unchecked (see
        # __iter__), so a workload that exists is one whose every op is valid.
        try:
            n, span, base = operator.index(n), operator.index(span), operator.index(base)
        except TypeError:
            raise ValueError(f"n, span and base must be integers, got {n!r}, {span!r}, "
                             f"{base!r}") from None
        if n < 0:
            raise ValueError(f"number of ops must be >= 0, got {n}")
        unknown = [k for k in kinds if k not in WORKLOAD_KINDS]
        if unknown or not kinds:
            raise ValueError(f"kinds must be drawn from {WORKLOAD_KINDS}, got {tuple(kinds)}")
        if span < 256 or base % 256:
            raise ValueError(
                f"span must be >= 256 and base 256-byte aligned (got span {span}, base "
                f"{base:#x}): every op lies inside one 256-byte region of [base, base + span)"
            )
        if not sides or any(side not in SIDES for side in sides):
            raise ValueError(f"sides must be drawn from {SIDES}, got {tuple(sides)}")
        self.n, self.seed, self.span, self.base = n, seed, span, base
        self.sides, self.kinds = tuple(sides), tuple(kinds)

    def __len__(self) -> int:
        return self.n

    def __iter__(self) -> Iterator[Op]:
        rng = random.Random(self.seed)
        span, base = self.span, self.base
        for _ in range(self.n):
            side = rng.choice(self.sides)
            kind = rng.choice(self.kinds)
            if kind == "atomic":
                size = rng.choice((4, 8))
                atomic_op = rng.choice(ATOMIC_OPS)
                addr = base + size * rng.randrange((span + size - 1) // size)
                operand = rng.getrandbits(8 * size)
                compare = rng.getrandbits(8 * size) if atomic_op is AtomicOp.CAS else None
                yield Op(side, "atomic", addr, atomic_op=int(atomic_op), operand=operand,
                         compare=compare, size=size, fetch=rng.random() < 0.75)
                continue
            length = 4 * rng.randint(1, 64)
            addr = (base + 256 * rng.randrange((span + 255) // 256)
                    + 4 * rng.randrange((256 - length) // 4 + 1))
            if kind == "read":
                yield Op(side, "read", addr, length=length)
            else:
                # A Write draws its byte enables, then its data; a WriteFull has no enables.
                mask = rng.getrandbits(length) if kind == "write" else None
                data = rng.randbytes(length)
                yield Op(side, "write", addr, data=data, byte_enable=mask)


def random_workload(
    n: int,
    seed: int = 0,
    *,
    span: int = 1 << 16,
    base: int = 0x10_0000,
    sides: Sequence[str] = SIDES,
    kinds: Sequence[str] = WORKLOAD_KINDS,
) -> RandomWorkload:
    """``n`` seeded random ops: reads, Writes with byte enables, WriteFulls and
    atomics of every op and both sizes, 4..256 bytes inside 256-byte regions of
    ``[base, base + span)``, issued from random ``sides``.

    The ops are generated lazily (a sized, re-iterable :class:`RandomWorkload`);
    ``tuple(random_workload(...))`` gives them all. The arguments are checked at once
    (``ValueError``), when the workload is made.
    """
    return RandomWorkload(n, seed, span, base, sides, kinds)


def uniform_workload(n: int, kind: str, length: int = 64, *, side: str = "a") -> tuple[Op, ...]:
    """``n`` ops of one kind (``"read"`` or ``"write"``) of ``length`` bytes, sequential
    addresses: the shape the throughput benchmark uses."""
    if kind not in ("read", "write"):
        raise ValueError(f"uniform_workload kind must be 'read' or 'write', got {kind!r}")
    if kind == "read":
        return tuple(Op(side, "read", i * 256, length=length) for i in range(n))
    payload = bytes(range(length))
    return tuple(Op(side, "write", i * 256, data=payload) for i in range(n))


Pattern = Literal["uniform", "permutation", "all-to-all", "incast", "hotspot"]
PATTERNS: tuple[Pattern, ...] = ("uniform", "permutation", "all-to-all", "incast", "hotspot")


@dataclass(frozen=True)
class FabricOp:
    """Op ``op`` issued by accelerator ``src`` against accelerator ``dst`` at slot ``at``
    (``op.side`` is not used in a fabric)."""

    src: int
    dst: int
    op: Op
    at: float = 0.0


def op_link_bytes(op: Op) -> int:
    """TL bytes the op puts on its busier direction (request or response)."""
    beats = -(-op.nbytes // 64) if op.kind != "atomic" else 1
    if op.kind == "read":
        return max(16, 8 + 64 * beats)
    if op.kind == "write":
        return 16 + (32 if op.byte_enable is not None else 0) + 64 * beats
    return 16 + 64


def fabric_workload(
    pattern: Pattern,
    n: int,
    accelerators: int,
    seed: int = 0,
    *,
    load: float | None = None,
    kinds: tuple[str, ...] = WORKLOAD_KINDS,
    size: int | None = None,
    target: int = 0,
    hot_fraction: float = 0.5,
    span: int = 1 << 14,
    base: int = 0x10_0000,
) -> tuple[FabricOp, ...]:
    """``n`` seeded ops among ``accelerators`` (IDs 0..N-1) by ``pattern`` (rules W1-W4).

    With ``size`` above 256 bytes each of the ``n`` is a transfer of ``size`` bytes,
    issued as one op per 256-byte region at consecutive addresses, all offered at the
    same time (rule W5: a copy engine splits a transfer so).
    """
    if pattern not in PATTERNS:
        raise ValueError(f"pattern must be one of {PATTERNS}, got {pattern!r}")
    if accelerators < 2 or not 0 <= target < accelerators:
        raise ValueError(f"need >= 2 accelerators and target in range, got {accelerators}, "
                         f"{target}")
    if load is not None and not 0 < load <= 4:
        raise ValueError(f"load must be in (0, 4], got {load}")
    if size is not None and (size % 4 or not 4 <= size <= MAX_TRANSFER_BYTES):
        raise ValueError(f"size must be a multiple of 4 in 4..{MAX_TRANSFER_BYTES}, got {size}")
    if size is not None and size > 256:
        span = max(span, 1 << (2 * size - 1).bit_length())  # room for transfers at random

    rng = random.Random(seed ^ 0x5F1DE)
    shapes = random_workload(n, seed, span=span, base=0, kinds=kinds)
    ids = list(range(accelerators))
    perm = ids[:]
    while any(i == p for i, p in zip(ids, perm, strict=True)):
        rng.shuffle(perm)
    others = [i for i in ids if i != target]
    clock = [0.0] * accelerators
    ops = []
    for i, shape in enumerate(shapes):
        if pattern == "incast":
            src, dst = others[i % len(others)], target
        elif pattern == "all-to-all":
            src = i % accelerators
            dst = (src + 1 + (i // accelerators) % (accelerators - 1)) % accelerators
        else:
            src = rng.randrange(accelerators)
            if pattern == "permutation":
                dst = perm[src]
            elif pattern == "hotspot" and src != target and rng.random() < hot_fraction:
                dst = target
            else:
                dst = rng.randrange(accelerators - 1)
                dst += dst >= src
        pieces = [shape]
        if size is not None:  # fixed-size reads / WriteFulls, split at 256 bytes (W5)
            start = rng.randrange(0, span - size + 1, 256)
            pieces = [Op("a", "read", addr, length=length) if shape.kind == "read"
                      else Op("a", "write", addr, data=rng.randbytes(length))
                      for addr, length in request_pieces(start, size)]
        at = 0.0
        if load is not None:
            gap = sum(op_link_bytes(p) for p in pieces) / DL_PAYLOAD_BYTES / load
            if pattern == "incast":  # the load is the destination link's (rule W4)
                gap *= len(others)
            clock[src] += rng.expovariate(1.0) * gap
            at = clock[src]
        for piece in pieces:
            ops.append(FabricOp(src, dst, replace(piece, addr=base + src * span + piece.addr),
                                at))
    return tuple(ops)


__all__ = [
    "MAX_TRANSFER_BYTES",
    "MIXES",
    "OP_KINDS",
    "PATTERNS",
    "SIDES",
    "WORKLOAD_KINDS",
    "FabricOp",
    "Op",
    "Pattern",
    "RandomWorkload",
    "fabric_workload",
    "op_link_bytes",
    "random_workload",
    "uniform_workload",
]
