"""Fabric workloads: who talks to whom (the pattern), what (the op mix), and when (the load).

Rules (``specs/fabric.md``, "Workloads"):

W1. The op shapes come from :func:`ualink_ref.stack.sim.random_workload` (the
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

import random
from dataclasses import dataclass, replace
from typing import Literal

from ualink_ref.sizes import DL_PAYLOAD_BYTES
from ualink_ref.stack.sim import WORKLOAD_KINDS, Op, random_workload

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
    """``n`` seeded ops among ``accelerators`` (IDs 0..N-1) by ``pattern`` (rules W1-W4)."""
    if pattern not in PATTERNS:
        raise ValueError(f"pattern must be one of {PATTERNS}, got {pattern!r}")
    if accelerators < 2 or not 0 <= target < accelerators:
        raise ValueError(f"need >= 2 accelerators and target in range, got {accelerators}, "
                         f"{target}")
    if load is not None and not 0 < load <= 4:
        raise ValueError(f"load must be in (0, 4], got {load}")
    if size is not None and (size % 4 or not 4 <= size <= 256):
        raise ValueError(f"size must be a multiple of 4 in 4..256, got {size}")
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
        if size is not None:
            addr = rng.randrange(0, span, 256)
            shape = (Op("a", "read", addr, length=size) if shape.kind == "read"
                     else Op("a", "write", addr, data=rng.randbytes(size)))
        op = replace(shape, addr=base + src * span + shape.addr)
        at = 0.0
        if load is not None:
            gap = op_link_bytes(op) / DL_PAYLOAD_BYTES / load
            if pattern == "incast":  # the load is the destination link's (rule W4)
                gap *= len(others)
            clock[src] += rng.expovariate(1.0) * gap
            at = clock[src]
        ops.append(FabricOp(src, dst, op, at))
    return tuple(ops)


__all__ = ["PATTERNS", "FabricOp", "Pattern", "fabric_workload", "op_link_bytes"]
