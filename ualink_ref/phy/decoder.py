"""Batched Reed–Solomon error correction: Berlekamp–Massey, Chien, Forney.

Both engines find the bad codewords from their syndromes (a GF(2)-linear byte
table on the whole batch) and differ in what follows:

* batched: every step works on all erroneous codewords of a call at once (2-D
  numpy arrays, one row per codeword); the only Python loops run over the 2t
  Berlekamp–Massey iterations and the t coefficients of Omega, never over
  codewords or symbol positions. About 1-3 ms per call, whatever the count.
* per codeword: Berlekamp–Massey on Python ints in the log domain, then the
  Chien search and the error values from one small table
  (``CodeTables.split_powers``) with two numpy gathers. About 45 us (1 error)
  to 150 us (15 errors) per bad KP4 codeword on the 2-core dev machine, no
  fixed cost. Used when a call has at most :data:`SCALAR_LIMIT` bad
  codewords, which is the common case (a clean link, a single flit).

Both give the same verdicts and corrections (tested against each other, the
compiled kernels and reedsolo); the per-codeword engine computes the error
values with the Horiguchi–Koetter form of Forney's formula (see
:func:`_forney_one` for why the results are identical).

Conventions (IEEE 802.3 clause 91): symbol index i (0 = first on the wire)
holds the coefficient of x^(n-1-i); syndromes S_j = r(alpha^j), j = 0..2t-1
(first consecutive root alpha^0). An error at index i has locator
X = alpha^(n-1-i); Lambda(x) = prod(1 - X x). With first root alpha^0 the
Forney formula gives the error value e = X * Omega(X^-1) / Lambda'(X^-1),
where Omega = S(x) Lambda(x) mod x^(2t).
"""

from __future__ import annotations

from dataclasses import dataclass
from operator import add
from typing import NamedTuple

import numpy as np
from numpy.typing import NDArray

from ualink_ref.phy import gf
from ualink_ref.phy.tables import CodeTables


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


#: Bad codewords per call up to which the error path runs per codeword (Python ints and
#: small gathers); above it the batched numpy engine is cheaper. Per bad KP4 codeword the
#: per-codeword path takes ~45 us (1 error) to ~150 us (15 errors) on the 2-core dev
#: machine, the batched one ~1-3 ms per call: they cross between ~10 (15 errors) and
#: ~40 (1 error) bad codewords (project choice, see specs/phy.md).
SCALAR_LIMIT = 16


class _Locator(NamedTuple):
    """What :func:`_bm_logs` finds for one codeword (polynomials low degree first)."""

    lam: list[int]  # Lambda
    log_lam: list[int]  # its logs (gf.LOG_ZERO for a zero coefficient)
    length: int  # L, the register length
    log_b: list[int]  # logs of B, the Lambda before the last length change
    log_delta_b: int  # log of the discrepancy at that change
    last_change: int  # the step r of that change


def _bm_logs(log_s: list[int]) -> _Locator:
    """Berlekamp–Massey on the logs of one syndrome row.

    The same steps as :func:`berlekamp_massey` (Lambda low degree first), on
    lists exactly L + 1 long: deg Lambda <= L and deg x^gap B <= L after each
    step (Massey 1969), so nothing past L is ever non-zero (tested against the
    batched form on arbitrary and sparse syndromes). Lambda is kept both as
    values (to add) and as logarithms (to multiply: one table read per product,
    zero-safe through ``gf.LOG_ZERO``); ``B``, the locator before the last
    length change, only as logarithms. This loop is most of the cost of a bad
    codeword on the numpy path, hence pairs by ``map(add, ...)`` (measured ~15 %
    faster than ``zip(..., strict=False)``), updates in place by plain loops
    (a third faster than list comprehensions and slice assignment on 3.11) and
    no helper calls inside it.
    """
    exp, log = gf.int_tables()
    order = gf.ORDER
    zero_log = gf.LOG_ZERO
    two_t = len(log_s)
    rev = log_s[::-1]  # rev[2t-1-r:] = log S_r, S_(r-1), .., S_0
    lam = [1]
    log_lam = [0]
    log_b = [0]
    gap = 1  # Lambda is updated with x^gap B(x)
    length = 0
    log_last = 0  # log of the discrepancy at the last length change (starts at 1)
    for r in range(two_t):
        disc = 0
        for p in map(add, log_lam, rev[two_t - 1 - r :]):  # stops at S_0
            disc ^= exp[p]
        if not disc:
            gap += 1
            continue
        log_disc = log[disc]
        log_coef = log_disc - log_last + order
        i = gap  # x^gap B covers coefficients gap .. gap + len(B) - 1 <= L (new L)
        if 2 * length <= r:  # length change: the old Lambda becomes B
            old_logs = log_lam[:]
            grow = r + 1 - 2 * length  # new L - old L
            length += grow
            if grow > 0:
                lam += [0] * grow
                log_lam += [zero_log] * grow
            for lb in log_b:  # in place: no comprehension frames or slices (3.11)
                a = lam[i] ^ exp[log_coef + lb]
                lam[i] = a
                log_lam[i] = log[a]
                i += 1
            log_b = old_logs
            log_last = log_disc
            gap = 1
        else:
            for lb in log_b:
                a = lam[i] ^ exp[log_coef + lb]
                lam[i] = a
                log_lam[i] = log[a]
                i += 1
            gap += 1
    return _Locator(lam, log_lam, length, log_b, log_last, two_t - gap)


def berlekamp_massey_ints(synd: list[int]) -> tuple[list[int], int]:
    """:func:`berlekamp_massey` for one syndrome row of Python ints (same steps).

    Returns ``(Lambda, L)`` with Lambda low degree first (2t + 1 coefficients).
    """
    _, log = gf.int_tables()
    lam, _, length, *_ = _bm_logs([log[s] for s in synd])
    width = len(synd) + 1
    # deg Lambda <= L <= 2t: anything past 2t + 1 coefficients is zero.
    return (lam + [0] * width)[:width], length


def _forney_one(tables: CodeTables, found: _Locator) -> tuple[list[int], list[int]] | None:
    """Chien search and error values for one codeword; None if it is uncorrectable.

    Chien: every term Lambda_l X^-l (l = 1 .. L) at all n positions is the XOR
    of two rows of ``tables.split_powers`` (the products of the coefficient's low
    and high five bits with X^-l), so the whole search is one numpy gather of
    2L rows. Their XOR over odd l and over even l gives Lambda(X^-1) = 1 + odd +
    even, and at a root odd = X^-1 Lambda'(X^-1) (characteristic 2: only odd
    terms survive the derivative).

    Values: Forney's e = X Omega(X^-1) / Lambda'(X^-1) (what the other engines
    compute) without Omega. After the 2t steps, Lambda Theta - x^g B Omega =
    Delta_B x^(2t) with Theta = x^g B S mod x^(2t), g = 2t - r_B (r_B the step of
    the last length change, Delta_B its discrepancy): both sides have degree <= 2t
    by the degree bounds of Berlekamp–Massey, and the x^(2t) coefficient of
    Lambda x^g B S - x^g B Lambda S = 0 is Delta_B. At a root of Lambda this gives
    Omega(X^-1) = Delta_B X^(g-2t) / B(X^-1), so e = Delta_B X^-r_B / (B(X^-1) odd)
    (Horiguchi 1989). The identity also shows that B(X^-1), Omega(X^-1) and hence
    e are never zero at a root, and when L <= t distinct roots are found,
    Omega mod x^t = Omega mod x^(2t): same values and verdicts as Forney (tested
    against the batched engine and reedsolo). B(X^-1) is one more gather.
    """
    exp, log = gf.int_tables()
    order = gf.ORDER
    lam, length = found.lam, found.length
    split = tables.split_powers
    rows: list[int] = []
    for first in (1, 2):  # rows of odd l, then of even l
        for lv in range(first, length + 1, 2):
            rows += (64 * lv + (lam[lv] & 31), 64 * lv + 32 + (lam[lv] >> 5))
    terms = split[rows]
    n_odd = 2 * ((length + 1) // 2)
    odd = np.bitwise_xor.reduce(terms[:n_odd], axis=0)
    roots = (np.bitwise_xor.reduce(terms[n_odd:], axis=0) ^ odd == 1).nonzero()[0]
    if roots.size != length:
        return None  # Lambda(X^-1) = 1 + odd + even is zero exactly here
    rows = []
    for lv, log_c in enumerate(found.log_b):
        c = exp[log_c]
        rows += (64 * lv + (c & 31), 64 * lv + 32 + (c >> 5))
    b_at = np.bitwise_xor.reduce(split[np.array(rows)[:, None], roots], axis=0).tolist()
    den = odd[roots].tolist()
    if 0 in b_at or 0 in den:
        return None  # cannot happen at a root (see above); never divide by zero
    positions = roots.tolist()
    top = tables.n - 1
    r_b = found.last_change
    return positions, [
        exp[(found.log_delta_b - r_b * (top - pos) - log[bv] - log[dv]) % order]
        for pos, bv, dv in zip(positions, b_at, den, strict=True)
    ]


def _evaluate(coefs: NDArray[np.uint16], log_x: NDArray[np.int64]) -> NDArray[np.uint16]:
    """Evaluate polynomials ``coefs`` (rows, low degree first) at alpha^log_x, per row."""
    exp, log = gf.tables()
    degrees = np.arange(coefs.shape[1], dtype=np.int64)
    powers = np.mod(log[coefs] + degrees[None, :] * log_x[:, None], gf.ORDER)
    terms = np.where(coefs != 0, exp[powers], 0).astype(np.uint16)
    result: NDArray[np.uint16] = np.bitwise_xor.reduce(terms, axis=1)
    return result


def _chien_roots(tables: CodeTables, lam: NDArray[np.uint16]) -> NDArray[np.bool_]:
    """``(M, n)``: True where Lambda (rows, low degree first) vanishes at X^-1 of a position."""
    n, t = tables.n, tables.t
    lam_bytes = gf.symbols_to_bytes(lam[:, : t + 1])
    values = gf.bytes_to_symbols(
        tables.chien.words_to_bytes(tables.chien.apply(lam_bytes), -(-n * gf.M // 8)), n
    )
    roots: NDArray[np.bool_] = values == 0
    return roots


def correct(tables: CodeTables, codewords: NDArray[np.uint8]) -> Corrections:
    """Find the corrections for ``(N, codeword bytes)`` packed codewords."""
    n, t = tables.n, tables.t
    count = codewords.shape[0]
    corrected = np.zeros(count, dtype=np.int64)
    uncorrectable = np.zeros(count, dtype=bool)
    synd_words = tables.syndrome.apply(codewords)
    bad = np.nonzero(synd_words.any(axis=1))[0]
    if bad.size == 0:
        empty = np.zeros(0, dtype=np.intp)
        return Corrections(empty, empty, np.zeros(0, np.uint16), corrected, uncorrectable)
    if bad.size <= SCALAR_LIMIT:
        # Logs of the syndromes straight from the packed words as Python ints (10 bits
        # each, LSB first).
        _, log = gf.int_tables()
        shifts = range(0, 2 * t * gf.M, gf.M)
        log_rows = []
        for words in synd_words[bad].astype("<u8", copy=False):
            v = int.from_bytes(words.tobytes(), "little")
            log_rows.append([log[(v >> shift) & gf.ORDER] for shift in shifts])
        return _correct_few(tables, bad, log_rows, corrected, uncorrectable)
    synd = gf.bytes_to_symbols(
        tables.syndrome.words_to_bytes(synd_words[bad], -(-2 * t * gf.M // 8)), 2 * t
    )
    lam, length = berlekamp_massey(synd)
    fail = length > t
    # Chien search: Lambda at X^-1 for every symbol position, as one linear map.
    roots = _chien_roots(tables, lam)
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


def _correct_few(
    tables: CodeTables,
    bad: NDArray[np.intp],
    log_rows: list[list[int]],
    corrected: NDArray[np.int64],
    uncorrectable: NDArray[np.bool_],
) -> Corrections:
    """:func:`correct` for a few bad codewords (logs of their syndromes): BM on Python
    ints, Chien and Forney per row."""
    t = tables.t
    rows: list[int] = []
    positions: list[int] = []
    values: list[int] = []
    for i, log_s in enumerate(log_rows):
        found = _bm_logs(log_s)
        length = found.length
        fix = _forney_one(tables, found) if length <= t else None
        if fix is None:
            uncorrectable[bad[i]] = True
            continue
        corrected[bad[i]] = length
        rows += [int(bad[i])] * length
        positions += fix[0]
        values += fix[1]
    return Corrections(
        np.array(rows, dtype=np.intp),
        np.array(positions, dtype=np.intp),
        np.array(values, dtype=np.uint16),
        corrected,
        uncorrectable,
    )
