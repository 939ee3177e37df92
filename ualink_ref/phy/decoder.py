"""Batched Reed–Solomon error correction: Berlekamp–Massey, Chien, Forney.

Every step works on all erroneous codewords of a batch at once (2-D numpy
arrays, one row per codeword); the only Python loops run over the 2t
Berlekamp–Massey iterations and the t+1 coefficients of the locator, never
over codewords or symbol positions.

Conventions (IEEE 802.3 clause 91): symbol index i (0 = first on the wire)
holds the coefficient of x^(n-1-i); syndromes S_j = r(alpha^j), j = 0..2t-1
(first consecutive root alpha^0). An error at index i has locator
X = alpha^(n-1-i); Lambda(x) = prod(1 - X x). With first root alpha^0 the
Forney formula gives the error value e = X * Omega(X^-1) / Lambda'(X^-1),
where Omega = S(x) Lambda(x) mod x^(2t).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import NDArray

from ualink_ref.phy import gf

if TYPE_CHECKING:
    from ualink_ref.phy.reedsolomon import CodeTables


@dataclass(frozen=True)
class Corrections:
    """What the decoder found in a batch of ``N`` codewords.

    ``rows``/``positions``/``values``: one entry per corrected symbol (codeword
    row, symbol index, error value to XOR in). ``corrected``: symbols corrected
    per codeword; ``uncorrectable``: codewords flagged as beyond the code's
    power (they get no corrections).
    """

    rows: NDArray[np.intp]
    positions: NDArray[np.intp]
    values: NDArray[np.uint16]
    corrected: NDArray[np.int64]
    uncorrectable: NDArray[np.bool_]


def berlekamp_massey(
    synd: NDArray[np.uint16],
) -> tuple[NDArray[np.uint16], NDArray[np.int64]]:
    """Error-locator polynomials for a batch of syndrome rows ``(M, 2t)``.

    Returns ``(Lambda, L)``: coefficients low degree first ``(M, 2t+1)`` and
    the register length per row. ``Bs`` holds x^m B(x) (the previous locator
    already shifted by the gap m), so the per-row gap needs no indexing.
    """
    rows, two_t = synd.shape
    width = two_t + 1
    lam = np.zeros((rows, width), dtype=np.uint16)
    lam[:, 0] = 1
    shifted_b = np.zeros((rows, width), dtype=np.uint16)
    shifted_b[:, 1] = 1
    length = np.zeros(rows, dtype=np.int64)
    last_d = np.ones(rows, dtype=np.uint16)
    for r in range(two_t):
        disc = np.bitwise_xor.reduce(gf.mul(lam[:, : r + 1], synd[:, r::-1]), axis=1)
        nonzero = disc != 0
        coef = gf.mul(disc, gf.inv(last_d))
        updated = lam ^ gf.mul(coef[:, None], shifted_b)
        swap = nonzero & (2 * length <= r)
        next_b = np.zeros_like(shifted_b)
        next_b[:, 1:] = np.where(swap[:, None], lam[:, :-1], shifted_b[:, :-1])
        shifted_b = next_b
        length = np.where(swap, r + 1 - length, length)
        last_d = np.where(swap, disc, last_d)
        lam = np.where(nonzero[:, None], updated, lam)
    return lam, length


def _evaluate(coefs: NDArray[np.uint16], log_x: NDArray[np.int64]) -> NDArray[np.uint16]:
    """Evaluate polynomials ``coefs`` (rows, low degree first) at alpha^log_x, per row."""
    exp, log = gf.tables()
    degrees = np.arange(coefs.shape[1], dtype=np.int64)
    powers = np.mod(log[coefs] + degrees[None, :] * log_x[:, None], gf.ORDER)
    terms = np.where(coefs != 0, exp[powers], 0).astype(np.uint16)
    result: NDArray[np.uint16] = np.bitwise_xor.reduce(terms, axis=1)
    return result


def correct(tables: CodeTables, codewords: NDArray[np.uint8]) -> Corrections:
    """Find the corrections for ``(N, codeword bytes)`` packed codewords."""
    n, t = tables.n, tables.t
    count = codewords.shape[0]
    corrected = np.zeros(count, dtype=np.int64)
    uncorrectable = np.zeros(count, dtype=bool)
    synd_words = tables.syndrome.apply(codewords)
    bad = np.flatnonzero(synd_words.any(axis=1))
    if bad.size == 0:
        empty = np.zeros(0, dtype=np.intp)
        return Corrections(empty, empty, np.zeros(0, np.uint16), corrected, uncorrectable)
    synd = gf.bytes_to_symbols(
        tables.syndrome.words_to_bytes(synd_words[bad], -(-2 * t * gf.M // 8)), 2 * t
    )
    lam, length = berlekamp_massey(synd)
    fail = length > t
    # Chien search: Lambda at X^-1 for every symbol position, as one linear map.
    lam_bytes = gf.symbols_to_bytes(lam[:, : t + 1])
    values = gf.bytes_to_symbols(
        tables.chien.words_to_bytes(tables.chien.apply(lam_bytes), -(-n * gf.M // 8)), n
    )
    roots = values == 0
    fail |= roots.sum(axis=1) != length
    # Forney on the flattened list of (row, position) roots of surviving rows.
    row, pos = np.nonzero(roots & ~fail[:, None])
    omega = np.zeros((bad.size, t), dtype=np.uint16)
    for j in range(t):  # Omega = S * Lambda mod x^t (deg Omega < L <= t)
        omega[:, j:] ^= gf.mul(lam[:, j : j + 1], synd[:, : t - j])
    log_x = (n - 1 - pos).astype(np.int64)  # log of the locator X
    log_xinv = np.mod(-log_x, gf.ORDER)
    deriv = np.zeros((bad.size, t), dtype=np.uint16)
    deriv[:, 0::2] = lam[:, 1 : t + 1 : 2]  # formal derivative: odd terms only (char 2)
    num = _evaluate(omega[row], log_xinv)
    den = _evaluate(deriv[row], log_xinv)
    value = gf.mul(gf.mul(gf.alpha_pow(log_x), num), gf.inv(den))
    broken = (den == 0) | (value == 0)
    fail[row[broken]] = True
    keep = ~fail[row]
    row, pos, value = row[keep], pos[keep], value[keep]
    global_rows = bad[row]
    corrected[bad] = np.where(fail, 0, length)
    uncorrectable[bad] = fail
    return Corrections(global_rows, pos.astype(np.intp), value, corrected, uncorrectable)
