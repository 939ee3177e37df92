"""Compiled (numba) Reed–Solomon kernels: the optional ``fast`` path of the PHY.

Imported only by :func:`ualink_ref.phy.accel.kernels`, on the first FEC call,
never at ``import ualink_ref``; every kernel is ``@njit(cache=True)``, so the
first process compiles it (a few seconds) and later ones load the on-disk cache.

The kernels compute exactly what the numpy path computes (same algorithm, same
failure rules, same order of corrections), with small tables that stay in
cache: ``CodeTables.lanes`` (1024 x 8 uint64, 64 KB) holds ``c * g_j`` for
every feedback symbol ``c``, packed four symbols per 64-bit word, so one step
of the encoder's shift register is eight shifts and XORs on machine words;
``exp`` (2046 uint16) and ``log`` (1024 int64) serve all other products.

Decoding divides the received word by g(x) with the same table: the remainder
R(x) is zero exactly for codewords, and because g(alpha^j) = 0 the syndromes
are S_j = R(alpha^j) (2t x 2t products instead of n x 2t). Errors are then
found with Berlekamp–Massey, a Chien search that stops once deg Lambda roots
are found (a polynomial has no more roots than its degree), and Forney.

One set of kernels serves both input forms: rows of symbols (uint16, for
``ReedSolomonCode``) and rows of LSB-first packed bytes (whole flits, for
``encode_flits`` / ``decode_flits``). The ``packed`` argument says which; it is
the same for a whole call, so the branch in :func:`_symbol` costs nothing
measurable (the loop is latency-bound on the table reads).
"""

from __future__ import annotations

import numpy as np
from numba import njit

#: Multiplicative group order of GF(2^10).
_ORDER = 1023


@njit(cache=True)
def _symbol(row, s, packed):
    """Symbol ``s`` of a row: ``row[s]``, or from LSB-first packed bytes when ``packed``."""
    if packed:
        bit = 10 * s
        b = bit >> 3
        # 10 s is even, so a symbol starts at bit 0, 2, 4 or 6 of a byte and
        # always ends in the next byte: two bytes hold it.
        word = np.uint32(row[b]) | (np.uint32(row[b + 1]) << 8)
        return (word >> (bit & 7)) & 1023
    return np.uint32(row[s])


@njit(cache=True)
def _xor_symbol(row, s, value):
    """XOR ``value`` into symbol ``s`` of a packed byte row."""
    bit = 10 * s
    b = bit >> 3
    word = np.uint32(value) << (bit & 7)
    row[b] ^= np.uint8(word & 0xFF)
    row[b + 1] ^= np.uint8((word >> 8) & 0xFF)


@njit(cache=True)
def unpack_symbols(data, m):
    """``(N, nbytes)`` LSB-first bytes -> ``(N, m)`` 10-bit symbols (uint16)."""
    rows = data.shape[0]
    out = np.empty((rows, m), dtype=np.uint16)
    for r in range(rows):
        for s in range(m):
            out[r, s] = _symbol(data[r], s, True)
    return out


@njit(cache=True)
def pack_symbols(sym, nbytes):
    """``(N, m)`` symbols -> ``(N, nbytes)`` LSB-first bytes (bits past 10 m are zero)."""
    rows, m = sym.shape
    out = np.zeros((rows, nbytes), dtype=np.uint8)
    for r in range(rows):
        for s in range(m):
            _xor_symbol(out[r], s, sym[r, s])
    return out


#: The parity register is packed four symbols to a 64-bit word (16-bit lanes),
#: eight words: room for 2t <= 32 parity symbols.
_WORDS = 8


@njit(cache=True)
def _lfsr_pair(a, b, count, table, packed):
    """Remainders of rows ``a`` and ``b`` (first ``count`` symbols, x^(2t) shifted) mod g(x).

    Returns 16 words: eight packed registers per row. Lane j of a register is
    the remainder coefficient of x^(2t-1-j); each symbol shifts the register
    down one lane and XORs in the table row of the feedback symbol. Two rows
    at once: the loop is bound by the latency of one chain (feedback -> table
    read -> next feedback), so a second independent chain comes almost free;
    a lone row is run as a pair with itself. Sixteen scalars stay in machine
    registers: no memory traffic but one 64-byte table row per symbol.
    """
    w0 = w1 = w2 = w3 = w4 = w5 = w6 = w7 = np.uint64(0)
    v0 = v1 = v2 = v3 = v4 = v5 = v6 = v7 = np.uint64(0)
    s16 = np.uint64(16)
    s48 = np.uint64(48)
    low = np.uint64(0xFFFF)
    for i in range(count):
        f = (np.uint64(_symbol(a, i, packed)) ^ w0) & low
        g = (np.uint64(_symbol(b, i, packed)) ^ v0) & low
        # Scalar 2-D indexing: no per-symbol array view of the table row.
        w0 = ((w0 >> s16) | (w1 << s48)) ^ table[f, 0]
        v0 = ((v0 >> s16) | (v1 << s48)) ^ table[g, 0]
        w1 = ((w1 >> s16) | (w2 << s48)) ^ table[f, 1]
        v1 = ((v1 >> s16) | (v2 << s48)) ^ table[g, 1]
        w2 = ((w2 >> s16) | (w3 << s48)) ^ table[f, 2]
        v2 = ((v2 >> s16) | (v3 << s48)) ^ table[g, 2]
        w3 = ((w3 >> s16) | (w4 << s48)) ^ table[f, 3]
        v3 = ((v3 >> s16) | (v4 << s48)) ^ table[g, 3]
        w4 = ((w4 >> s16) | (w5 << s48)) ^ table[f, 4]
        v4 = ((v4 >> s16) | (v5 << s48)) ^ table[g, 4]
        w5 = ((w5 >> s16) | (w6 << s48)) ^ table[f, 5]
        v5 = ((v5 >> s16) | (v6 << s48)) ^ table[g, 5]
        w6 = ((w6 >> s16) | (w7 << s48)) ^ table[f, 6]
        v6 = ((v6 >> s16) | (v7 << s48)) ^ table[g, 6]
        w7 = (w7 >> s16) ^ table[f, 7]
        v7 = (v7 >> s16) ^ table[g, 7]
    return w0, w1, w2, w3, w4, w5, w6, w7, v0, v1, v2, v3, v4, v5, v6, v7


@njit(cache=True)
def _registers(words, count, table, packed):
    """``(N, 8)`` shift-register states after the first ``count`` symbols of every row."""
    rows = words.shape[0]
    regs = np.empty((rows, _WORDS), dtype=np.uint64)
    for r in range(0, rows, 2):
        s = r + 1 if r + 1 < rows else r  # an odd last row pairs with itself
        (
            regs[r, 0], regs[r, 1], regs[r, 2], regs[r, 3],
            regs[r, 4], regs[r, 5], regs[r, 6], regs[r, 7],
            regs[s, 0], regs[s, 1], regs[s, 2], regs[s, 3],
            regs[s, 4], regs[s, 5], regs[s, 6], regs[s, 7],
        ) = _lfsr_pair(words[r], words[s], count, table, packed)  # fmt: skip
    return regs


@njit(cache=True)
def _unpack_lanes(regs, two_t, out):
    """Lanes 0 .. 2t-1 of the packed register into ``out``."""
    for j in range(two_t):
        out[j] = (regs[j >> 2] >> np.uint64(16 * (j & 3))) & np.uint64(0xFFFF)


@njit(cache=True)
def encode_into(msgs, table, two_t, out):
    """Write systematic codewords of ``msgs`` ``(N, k)`` into ``out`` ``(N, k + 2t)``.

    The parity is m(x) x^(2t) mod g(x), computed by :func:`_lfsr_pair`.
    """
    rows, k = msgs.shape
    regs = _registers(msgs, k, table, False)
    for r in range(rows):
        for i in range(k):
            out[r, i] = msgs[r, i]
        _unpack_lanes(regs[r], two_t, out[r, k:])


@njit(cache=True)
def encode_wire(chunks, k, two_t, table, out):
    """Codewords of flit chunks ``(N, chunk)`` into zeroed ``out`` ``(N, codeword bytes)``.

    Message = the chunk's bits then zero spare bits up to 10 k; parity packed
    from bit 10 k on, exactly as ``flits.encode_flits`` lays it out.
    """
    rows, chunk = chunks.shape
    for r in range(rows):
        for i in range(chunk):
            out[r, i] = chunks[r, i]
    regs = _registers(out, k, table, True)
    parity = np.zeros(two_t, dtype=np.uint16)
    for r in range(rows):
        _unpack_lanes(regs[r], two_t, parity)
        for j in range(two_t):
            _xor_symbol(out[r], k + j, parity[j])


@njit(cache=True)
def _mul(a, b, exp, log):
    if a == 0 or b == 0:
        return 0
    return int(exp[log[a] + log[b]])


#: Rows of the per-call scratch array of :func:`_correct_one` (int64, 2t + 1 wide):
#: remainder, syndromes, Lambda, x^m B, next x^m B, Omega, Chien steps and logs,
#: error positions, error values.
_REM, _SYND, _LAM, _PREV, _NXT, _OMEGA, _STEP, _CUR, _POS, _VAL = range(10)


@njit(cache=True)
def _scratch(t):
    return np.zeros((10, 2 * t + 1), dtype=np.int64)


@njit(cache=True)
def _remainder(row, k, two_t, regs, work, packed):
    """r(x) mod g(x) of one received row into ``work[_REM]`` (2t, high degree first).

    r(x) = high(x) x^(2t) + low(x), so the remainder is the encoder's parity of
    the first k = n - 2t symbols (``regs``, from :func:`_registers`) XOR the last
    2t. Returns True if it is non-zero (the row is not a codeword).
    """
    rem = work[_REM]
    _unpack_lanes(regs, two_t, rem)
    nonzero = False
    for j in range(two_t):
        rem[j] ^= _symbol(row, k + j, packed)
        if rem[j] != 0:
            nonzero = True
    return nonzero


@njit(cache=True)
def _correct_one(n, t, exp, log, work):
    """Errors of one word from its remainder ``work[_REM]`` (2t symbols, high degree first).

    Returns the number of corrections written to ``work[_POS]``/``work[_VAL]``,
    or -1 when the word is uncorrectable (the same rules as the numpy decoder).
    """
    rem = work[_REM]
    synd = work[_SYND]
    lam = work[_LAM]
    prev = work[_PREV]
    nxt = work[_NXT]
    omega = work[_OMEGA]
    step = work[_STEP]
    cur = work[_CUR]
    pos_out = work[_POS]
    val_out = work[_VAL]
    two_t = 2 * t
    # Syndromes S_j = R(alpha^j); rem[m] is the coefficient of x^(2t-1-m). Term by
    # term, so the 2t sums are independent (no chain of dependent table reads).
    for j in range(two_t):
        synd[j] = 0
    for m in range(two_t):
        c = rem[m]
        if c == 0:
            continue
        e = two_t - 1 - m  # log of alpha^(j e) grows by e per j
        idx = int(log[c])
        for j in range(two_t):
            synd[j] ^= exp[idx]
            idx += e
            if idx >= _ORDER:
                idx -= _ORDER
    # Berlekamp–Massey, step for step as decoder.berlekamp_massey (prev holds x^m B(x)).
    # The discrepancy stops at the register length (deg Lambda <= L, Massey 1969; as
    # berlekamp_massey_ints, tested against the batched form on arbitrary syndromes).
    for i in range(two_t + 1):
        lam[i] = 0
        prev[i] = 0
    lam[0] = 1
    prev[1] = 1
    length = 0
    last_d = 1
    for r in range(two_t):
        disc = 0
        for i in range(min(r, length) + 1):
            disc ^= _mul(lam[i], synd[r - i], exp, log)
        swap = disc != 0 and 2 * length <= r
        # At step r: deg Lambda <= r, deg x^m B <= r + 1, so the new x^m B has degree
        # <= r + 2 (dropped past x^2t, like the batched form).
        top = r + 2  # coefficients of Lambda that can change
        shift = r + 2 if r + 2 < two_t else two_t
        nxt[0] = 0
        for i in range(shift):
            nxt[i + 1] = lam[i] if swap else prev[i]
        if disc != 0:
            coef = int(exp[log[disc] + _ORDER - log[last_d]])
            for i in range(top):
                lam[i] ^= _mul(coef, prev[i], exp, log)
        for i in range(shift + 1):
            prev[i] = nxt[i]
        if swap:
            length = r + 1 - length
            last_d = disc
    if length > t:
        return -1
    # Chien search over lam[0..t] at X^-1 = alpha^-(n-1-i), i = 0 .. n-1.
    # terms: the non-zero lam[l] (l >= 1), each tracked as log(lam[l] X^-l), which grows
    # by l from one position to the next (X^-1 = alpha^-(n-1-i)).
    degree = 0
    terms = 0
    for lv in range(1, t + 1):
        if lam[lv] != 0:
            degree = lv
            step[terms] = lv
            cur[terms] = (log[lam[lv]] + lv * (_ORDER - (n - 1) % _ORDER)) % _ORDER
            terms += 1
    found = 0
    for i in range(n):
        acc = lam[0]
        for q in range(terms):
            acc ^= exp[cur[q]]
            nxt_e = cur[q] + step[q]
            cur[q] = nxt_e - _ORDER if nxt_e >= _ORDER else nxt_e
        if acc == 0:
            if found < t:
                pos_out[found] = i
            found += 1
            if found == degree:
                break  # no polynomial has more roots than its degree
    if found != length:
        return -1
    # Forney: e = X * Omega(X^-1) / Lambda'(X^-1), Omega = S Lambda mod x^t.
    for mo in range(t):
        acc2 = 0
        for j in range(mo + 1):
            acc2 ^= _mul(lam[j], synd[mo - j], exp, log)
        omega[mo] = acc2
    for f in range(found):
        e = n - 1 - pos_out[f]
        xinv = int(exp[(_ORDER - e % _ORDER) % _ORDER])
        num = 0
        den = 0
        power = 1  # xinv^d
        for d in range(t):
            if omega[d] != 0:
                num ^= _mul(omega[d], power, exp, log)
            if d % 2 == 0 and lam[d + 1] != 0:
                den ^= _mul(lam[d + 1], power, exp, log)
            power = _mul(power, xinv, exp, log)
        if den == 0 or num == 0:
            return -1  # value 0 exactly when the numerator is 0 (X and 1/den non-zero)
        val_out[f] = _mul(
            _mul(int(exp[e % _ORDER]), num, exp, log), int(exp[_ORDER - log[den]]), exp, log
        )
    return found


@njit(cache=True)
def correct_symbols(words, table, exp, log, t, rows_out, pos_out, val_out, corrected, flagged):
    """Corrections for ``(N, n)`` received words; returns how many were written.

    ``rows_out``/``pos_out``/``val_out`` (room for N t entries) receive one
    entry per corrected symbol, by row then position; ``corrected`` and
    ``flagged`` (length N, zeroed by the caller) are filled per row.
    """
    rows, n = words.shape
    two_t = 2 * t
    regs = _registers(words, n - two_t, table, False)
    work = _scratch(t)
    count = 0
    for r in range(rows):
        if not _remainder(words[r], n - two_t, two_t, regs[r], work, False):
            continue
        got = _correct_one(n, t, exp, log, work)
        if got < 0:
            flagged[r] = True
            continue
        corrected[r] = got
        for f in range(got):
            rows_out[count] = r
            pos_out[count] = work[_POS, f]
            val_out[count] = work[_VAL, f]
            count += 1
    return count


@njit(cache=True)
def decode_wire(cw, k, two_t, chunk, table, exp, log, corrected, flagged):
    """Correct packed codewords ``cw`` ``(N, codeword bytes)`` in place, as ``decode_flits``.

    A codeword is flagged (and left exactly as received) when it is
    uncorrectable or when its spare bits (chunk * 8 .. 10 k - 1) are non-zero
    after correction; otherwise its corrections are applied and counted.
    """
    rows = cw.shape[0]
    t = two_t // 2
    n = k + two_t
    regs = _registers(cw, k, table, True)
    work = _scratch(t)
    pos = work[_POS]
    val = work[_VAL]
    spare_end = 10 * k  # first bit after the spare bits
    for r in range(rows):
        row = cw[r]
        got = 0
        if _remainder(row, k, two_t, regs[r], work, True):
            got = _correct_one(n, t, exp, log, work)
            if got < 0:
                flagged[r] = True
                continue
            for f in range(got):
                _xor_symbol(row, pos[f], val[f])
        spare = False
        for bit in range(chunk * 8, spare_end):
            if (row[bit >> 3] >> (bit & 7)) & 1:
                spare = True
                break
        if spare:
            for f in range(got):  # undo: the codeword goes on exactly as received
                _xor_symbol(row, pos[f], val[f])
            flagged[r] = True
            continue
        corrected[r] = got
