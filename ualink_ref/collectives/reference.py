"""Each collective's result from its definition, with numpy (``specs/collectives.md``,
"Reduction order"): what every rank's output must be, bit for bit.

Nothing here reads a program: sums are written out in the order each algorithm
defines (float32 addition is not associative, so the order is part of the result).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ualink_ref.collectives import layout as L
from ualink_ref.collectives.moe import MoeRouting


def ordered_sum(parts: Sequence[np.ndarray]) -> np.ndarray:
    """``((parts[0] + parts[1]) + parts[2]) + ...`` elementwise, in the parts' dtype (int32
    wraps modulo 2**32)."""
    acc = parts[0].copy()
    for part in parts[1:]:
        acc = acc + part
    return acc


def _chunks(count: int, n: int) -> list[tuple[int, int]]:
    return [(count * i // n, count * (i + 1) // n) for i in range(n)]


def ring_reduced(inputs: Sequence[np.ndarray]) -> list[np.ndarray]:
    """Chunk c of a ring reduction: the ranks' chunk c summed starting at rank c + 1 and
    going round the ring (c + 1, c + 2, ..., c + n, indices mod n; rule A1)."""
    n = len(inputs)
    return [ordered_sum([inputs[(c + j) % n][a:b] for j in range(1, n + 1)])
            for c, (a, b) in enumerate(_chunks(len(inputs[0]), n))]


def expected(op: str, algo: str, inputs: Sequence[np.ndarray]) -> list[np.ndarray]:
    """Every rank's output of ``op`` by ``algo`` on ``inputs`` (one array per rank)."""
    n = len(inputs)
    if op == "all-reduce":
        if algo == "ring":
            whole = np.concatenate(ring_reduced(inputs))
        else:  # one-shot, two-shot and in-network: in rank order 0 .. n-1 (A3, A4, A8)
            whole = ordered_sum(list(inputs))
        return [whole] * n
    if op == "reduce-scatter":
        return ring_reduced(inputs)
    if op == "all-gather":
        return [np.concatenate(list(inputs))] * n
    if op == "broadcast":
        return [inputs[0]] * n
    if op == "all-to-all":
        block = len(inputs[0]) // n
        return [np.concatenate([inputs[s][d * block:(d + 1) * block] for s in range(n)])
                for d in range(n)]
    raise ValueError(f"no reference for {op!r}")


def moe_expected(routing: MoeRouting, inputs: Sequence[bytes]) -> tuple[dict[int, bytes], ...]:
    """Per rank: its dispatch buffer (at OUTPUT: every pair it receives, in source rank,
    token, choice order) and its combine buffer (at SCRATCH: token t's vector in slot
    ``t * top_k + j`` for every choice j)."""
    size = routing.token_bytes
    out = []
    for q in range(routing.ranks):
        received = b"".join(inputs[s][t * size:(t + 1) * size]
                            for s in range(routing.ranks)
                            for t, experts in enumerate(routing.choices[s])
                            for e in experts if routing.expert_rank(e) == q)
        combined = b"".join(inputs[q][t * size:(t + 1) * size] * routing.top_k
                            for t in range(routing.tokens))
        out.append({L.OUTPUT: received, L.SCRATCH: combined})
    return tuple(out)


__all__ = ["expected", "moe_expected", "ordered_sum", "ring_reduced"]
