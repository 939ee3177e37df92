"""Expert-parallel routing: which expert each token goes to (``specs/collectives.md`` A7).

Each rank holds ``tokens`` tokens of ``token_bytes`` and ``experts_per_rank`` experts.
Every token picks ``top_k`` distinct experts, drawn without replacement with seeded,
skewed popularity (Zipf exponent ``zipf`` over a seeded ranking of the experts: a few
hot experts, as top-k gating produces). The dispatch sends each (token, choice) pair's
vector to its expert's rank; the receiving rank keeps them in (source rank, token,
choice) order; the combine sends each back to slot ``token * top_k + choice`` of its
token's rank.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ualink_ref.errors import ConfigError

#: A token's vector (project choice: 2,048 bf16 values, a mid-size model's hidden width).
DEFAULT_TOKEN_BYTES = 4096
#: Routing choices per token (top-2 gating, the common MoE setting).
DEFAULT_TOP_K = 2
#: Popularity skew of the experts (project choice: Zipf 1.2, a few hot experts).
DEFAULT_ZIPF = 1.2


@dataclass(frozen=True)
class MoeRouting:
    """Where each rank's tokens go: ``choices[rank][token]`` the experts it picked."""

    ranks: int
    experts_per_rank: int
    top_k: int
    tokens: int
    token_bytes: int
    zipf: float
    seed: int
    choices: tuple[tuple[tuple[int, ...], ...], ...]

    def expert_rank(self, expert: int) -> int:
        """The rank that holds ``expert``."""
        return expert // self.experts_per_rank

    @property
    def dispatch_bytes(self) -> int:
        """Bytes each rank dispatches (every token, ``top_k`` times)."""
        return self.tokens * self.top_k * self.token_bytes

    def sent(self, src: int, dst: int) -> list[tuple[int, int, int]]:
        """``(token, choice, slot)`` of every pair rank ``src`` dispatches to rank ``dst``,
        in token then choice order; ``slot`` is where it lands in ``dst``'s buffer."""
        slot = self._first_slot(src, dst)
        out = []
        for t, experts in enumerate(self.choices[src]):
            for j, e in enumerate(experts):
                if self.expert_rank(e) == dst:
                    out.append((t, j, slot))
                    slot += 1
        return out

    def _first_slot(self, src: int, dst: int) -> int:
        return sum(self.pairs(s, dst) for s in range(src))

    def pairs(self, src: int, dst: int) -> int:
        """How many pairs rank ``src`` dispatches to rank ``dst``."""
        return sum(self.expert_rank(e) == dst for experts in self.choices[src]
                   for e in experts)

    def expert_load(self) -> list[int]:
        """Tokens each expert receives, over every rank."""
        load = [0] * (self.ranks * self.experts_per_rank)
        for per_rank in self.choices:
            for experts in per_rank:
                for e in experts:
                    load[e] += 1
        return load


def route_tokens(ranks: int, dispatch_bytes: int, *, seed: int = 0,
                 top_k: int = DEFAULT_TOP_K, experts_per_rank: int = 1,
                 token_bytes: int | None = None, zipf: float = DEFAULT_ZIPF) -> MoeRouting:
    """Seeded top-k routing of ``dispatch_bytes`` per rank (see the module docstring).

    Without ``token_bytes`` a token is :data:`DEFAULT_TOKEN_BYTES`, or smaller so that
    each rank has at least two tokens: ``tokens = dispatch_bytes // (top_k *
    token_bytes)``.
    """
    experts = ranks * experts_per_rank
    if not 1 <= top_k <= experts:
        raise ConfigError("top_k", f"must be 1..{experts} (the experts), got {top_k}")
    if token_bytes is None:
        token_bytes = min(DEFAULT_TOKEN_BYTES, dispatch_bytes // (2 * top_k)) // 4 * 4
    if token_bytes < 4 or token_bytes % 4:
        raise ConfigError("size", f"too small for {top_k} choices of a 4-byte token")
    tokens = dispatch_bytes // (top_k * token_bytes)
    if tokens * top_k * token_bytes != dispatch_bytes:
        raise ConfigError("size", f"must be a multiple of {top_k * token_bytes} bytes "
                                  f"({top_k} choices of {token_bytes}-byte tokens)")
    rng = np.random.default_rng(seed)
    order = rng.permutation(experts)  # order[i]: the i-th most popular expert
    weight = np.empty(experts)
    weight[order] = 1.0 / np.arange(1, experts + 1) ** zipf
    weight /= weight.sum()
    choices = tuple(
        tuple(tuple(int(e) for e in rng.choice(experts, size=top_k, replace=False, p=weight))
              for _ in range(tokens))
        for _ in range(ranks))
    return MoeRouting(ranks=ranks, experts_per_rank=experts_per_rank, top_k=top_k,
                      tokens=tokens, token_bytes=token_bytes, zipf=zipf, seed=seed,
                      choices=choices)


__all__ = ["DEFAULT_TOKEN_BYTES", "DEFAULT_TOP_K", "DEFAULT_ZIPF", "MoeRouting", "route_tokens"]
