"""Precomputed tables of one Reed–Solomon code over GF(2^10), built on first use.

Split from :mod:`ualink_ref.phy.reedsolomon` so that the decoder
(:mod:`ualink_ref.phy.decoder`) and the code object can both use them
without importing each other.
"""

from __future__ import annotations

from functools import cache, cached_property

import numpy as np
from numpy.typing import NDArray

from ualink_ref.phy import gf
from ualink_ref.phy.linear import Gf2ByteTable


def generator_poly(two_t: int) -> list[int]:
    """Coefficients of g(x) = prod_{j<2t} (x - alpha^j), highest degree first."""
    poly = [1]
    for j in range(two_t):
        root = int(gf.alpha_pow(j))
        # multiply by (x + root): new[i] = poly[i] + root * poly[i-1]
        shifted = [*poly, 0]
        for i in range(1, len(shifted)):
            shifted[i] ^= gf.mul_scalar(root, poly[i - 1])
        poly = shifted
    return poly


def _linear_rows(coef: NDArray[np.uint16]) -> NDArray[np.uint8]:
    """0/1 rows of the GF(2) map ``out_o = sum_s in_s * coef[s, o]`` over symbol bits."""
    n_in, n_out = coef.shape
    basis = (1 << np.arange(gf.M, dtype=np.uint16))[None, :, None]  # the 10 bit values
    images = gf.mul(coef[:, None, :], basis)  # (n_in, 10, n_out) symbols
    return gf.symbol_bits(images).reshape(n_in * gf.M, n_out * gf.M)


class CodeTables:
    """Precomputed tables of one code (built lazily by :func:`code_tables`).

    Each table is built on first access: the numpy path uses the byte tables
    ``encoder``/``syndrome``/``chien`` (several MB for KP4), the compiled path
    only ``lanes`` (64 KB) and the GF(2^10) log/antilog tables.
    """

    def __init__(self, n: int, k: int) -> None:
        self.n = n
        self.k = k
        self.t = (n - k) // 2
        self.generator = tuple(generator_poly(n - k))

    @cached_property
    def _rem(self) -> NDArray[np.uint16]:
        # rem[d] = x^d mod g(x), coefficients of x^(2t-1) .. x^0.
        two_t = self.n - self.k
        g_low = np.array(self.generator[1:], dtype=np.uint16)
        rem = np.zeros((self.n, two_t), dtype=np.uint16)
        current = np.zeros(two_t, dtype=np.uint16)
        current[-1] = 1
        for d in range(self.n):
            rem[d] = current
            top = current[0]
            current = np.concatenate([current[1:], np.zeros(1, np.uint16)])
            if top:
                current ^= gf.mul(np.full(1, top, dtype=np.uint16), g_low)
        return rem

    @property
    def _degrees(self) -> NDArray[np.int64]:
        return (self.n - 1 - np.arange(self.n)).astype(np.int64)

    @cached_property
    def encoder(self) -> Gf2ByteTable:
        """Packed message bits -> packed parity bits (numpy path)."""
        enc_coef = self._rem[self._degrees[: self.k]]  # message symbol i sits at degree n-1-i
        return Gf2ByteTable(_linear_rows(enc_coef))

    @cached_property
    def syndrome(self) -> Gf2ByteTable:
        """Packed codeword bits -> packed syndromes S_0 .. S_2t-1 (numpy path)."""
        js = np.arange(self.n - self.k, dtype=np.int64)
        synd_coef = gf.alpha_pow(self._degrees[:, None] * js[None, :])  # (n, 2t)
        return Gf2ByteTable(_linear_rows(synd_coef))

    @cached_property
    def chien(self) -> Gf2ByteTable:
        """Packed Lambda_0 .. Lambda_t -> packed Lambda(X^-1) at every position (numpy path)."""
        ls = np.arange(self.t + 1, dtype=np.int64)
        chien_coef = gf.alpha_pow(-(ls[:, None] * self._degrees[None, :]))  # (t+1, n)
        return Gf2ByteTable(_linear_rows(chien_coef))

    @cached_property
    def chien_powers(self) -> NDArray[np.intp]:
        """``(t+1, n)``: log X^-l = -l (n-1-i) mod 1023 for l <= t at every position i."""
        ls = np.arange(self.t + 1, dtype=np.int64)
        powers: NDArray[np.intp] = np.mod(-(ls[:, None] * self._degrees[None, :]), gf.ORDER)
        return powers.astype(np.intp)

    @cached_property
    def split_powers(self) -> NDArray[np.uint16]:
        """``((t+1) 64, n)``: row 64 l + v is v X^-l, row 64 l + 32 + v is (32 v) X^-l.

        At every position i (X^-1 = alpha^-(n-1-i)), for l <= t and v < 32: a
        coefficient c times X^-l is the XOR of the rows of its low and high five
        bits (multiplication is GF(2)-linear), so the per-codeword Chien search
        and Forney evaluation are one gather of whole rows (numpy path, ~1.1 MB
        for KP4).
        """
        exp, log = gf.int_arrays()
        halves = np.concatenate([np.arange(32), np.arange(32) << 5])  # low, then high halves
        split = np.take(exp, log[halves][None, :, None] + self.chien_powers[:, None, :])
        return np.ascontiguousarray(split.reshape(-1, self.n))

    @cached_property
    def lanes(self) -> NDArray[np.uint64]:
        """``(1024, 8)`` words: row c holds ``c * g_(j+1)`` in 16-bit lane j (compiled path).

        One row per feedback symbol of the encoder's shift register (64 KB); lane
        j is bits 16 (j % 4) .. of word j // 4, so 2t <= 32.
        """
        feedback = np.arange(gf.Q, dtype=np.int64)[:, None]
        g_low = np.array(self.generator[1:], dtype=np.int64)[None, :]
        lanes = np.zeros((gf.Q, 32), dtype=np.uint16)
        lanes[:, : self.n - self.k] = gf.mul_log(feedback, g_low)
        return np.ascontiguousarray(lanes.view("<u8").astype(np.uint64))


@cache
def code_tables(n: int, k: int) -> CodeTables:
    """The (lazily built) tables of RS(n, k), one object per code."""
    return CodeTables(n, k)


__all__ = ["CodeTables", "code_tables", "generator_poly"]
