"""GF(2^10) arithmetic and the symbol <-> byte packing used on the wire.

The field is GF(2)[x] / p(x) with p(x) = x^10 + x^3 + 1 and primitive element
alpha = x (= 2), the IEEE 802.3 clause 91 convention. Elements are the integers
0..1023 whose bit b is the coefficient of x^b.

All functions work elementwise on numpy arrays, so every caller can operate on
many codewords at once. Tables are built on first use (``functools.cache``),
keeping ``import ualink_ref`` cheap.

Packing: a sequence of 10-bit symbols goes on the wire symbol after symbol, each
symbol least-significant bit first, and bits fill bytes least-significant bit
first (bit ``p`` of a stream is bit ``p % 8`` of byte ``p // 8``).
"""

from __future__ import annotations

from functools import cache

import numpy as np
from numpy.typing import NDArray

#: Bits per symbol.
M = 10
#: Number of field elements.
Q = 1 << M
#: Order of the multiplicative group (alpha^ORDER = 1).
ORDER = Q - 1
#: Primitive polynomial x^10 + x^3 + 1 (IEEE 802.3 clause 91.5.2.7).
PRIMITIVE_POLY = 0x409

U16 = NDArray[np.uint16]
I64 = NDArray[np.int64]


@cache
def tables() -> tuple[U16, I64]:
    """``(exp, log)``: ``exp[i] = alpha^i`` for 0 <= i < 2*ORDER, ``log[alpha^i] = i``.

    ``exp`` is doubled in length so that ``exp[log a + log b]`` needs no modulo.
    ``log[0]`` is 0 and must be masked by callers (0 has no logarithm).
    """
    exp = np.zeros(2 * ORDER, dtype=np.uint16)
    log = np.zeros(Q, dtype=np.int64)
    value = 1
    for i in range(ORDER):
        exp[i] = value
        log[value] = i
        value <<= 1
        if value & Q:
            value ^= PRIMITIVE_POLY
    exp[ORDER:] = exp[:ORDER]
    exp.setflags(write=False)
    log.setflags(write=False)
    return exp, log


def alpha_pow(e: NDArray[np.integer] | int) -> U16:
    """alpha raised to integer power(s) ``e`` (any sign)."""
    exp, _ = tables()
    return exp[np.mod(e, ORDER)]


def mul_log(a: NDArray[np.integer], b: NDArray[np.integer]) -> U16:
    """Elementwise product through the log/antilog tables (no 2 MiB product table)."""
    exp, log = tables()
    a = np.asarray(a)
    b = np.asarray(b)
    prod = exp[log[a] + log[b]]
    return np.where((a != 0) & (b != 0), prod, 0).astype(np.uint16)


@cache
def mul_table() -> U16:
    """The full 1024 x 1024 product table, flattened (2 MiB; one gather per product)."""
    everything = np.arange(Q, dtype=np.int64)
    table = mul_log(everything[:, None], everything[None, :]).ravel()
    table.setflags(write=False)
    return table


def mul(a: NDArray[np.integer], b: NDArray[np.integer]) -> U16:
    """Elementwise product of field elements (broadcasting).

    One gather from the full product table: about 3x faster than log + log +
    antilog with zero masking, and this is the inner operation of the decoder.
    """
    index = (np.asarray(a).astype(np.intp) << M) | np.asarray(b).astype(np.intp)
    return np.take(mul_table(), index)


def inv(a: NDArray[np.integer]) -> U16:
    """Elementwise inverse of non-zero field elements (0 maps to 0)."""
    exp, log = tables()
    a = np.asarray(a)
    return np.where(a != 0, exp[ORDER - log[a]], 0).astype(np.uint16)


def mul_scalar(a: int, b: int) -> int:
    """Product of two field elements given as Python ints (slow, for tables and tests)."""
    result = 0
    while b:
        if b & 1:
            result ^= a
        b >>= 1
        a <<= 1
        if a & Q:
            a ^= PRIMITIVE_POLY
    return result


#: ``log`` value given to 0 by :func:`int_tables`: any sum involving it indexes a zero.
LOG_ZERO = 4 * ORDER


@cache
def int_tables() -> tuple[list[int], list[int]]:
    """``(exp, log)`` as Python lists, for per-codeword work on plain ints.

    ``exp`` repeats with period ORDER up to index ``LOG_ZERO - 1`` (so sums of up
    to four logarithms need no modulo) and is zero from ``LOG_ZERO`` to
    ``2 * LOG_ZERO``; ``log[0]`` is :data:`LOG_ZERO`. Hence ``exp[log[a] + log[b]]``
    is the product of ``a`` and ``b`` with no test for zero, and
    ``exp[log[a] - log[b] + ORDER]`` is ``a / b`` for non-zero ``b``.
    """
    exp_np, log_np = tables()
    period = [int(v) for v in exp_np[:ORDER]]
    exp = [period[i % ORDER] for i in range(LOG_ZERO)] + [0] * (LOG_ZERO + 1)
    log = [int(v) for v in log_np]
    log[0] = LOG_ZERO
    return exp, log


@cache
def int_arrays() -> tuple[U16, NDArray[np.intp]]:
    """:func:`int_tables` as numpy arrays (``exp`` uint16, ``log`` intp), for gathers."""
    exp, log = int_tables()
    exp_arr = np.array(exp, dtype=np.uint16)
    log_arr = np.array(log, dtype=np.intp)
    exp_arr.setflags(write=False)
    log_arr.setflags(write=False)
    return exp_arr, log_arr


@cache
def _pack_plan(m: int) -> tuple[NDArray[np.intp], NDArray[np.intp], U16, U16]:
    """For m symbols: per output byte, its low symbol, that symbol + 1, and the two shifts."""
    nbytes = -(-m * M // 8)
    first_bit = 8 * np.arange(nbytes, dtype=np.intp)
    low = first_bit // M
    right = (first_bit - M * low).astype(np.uint16)  # 0, 2, 4, 6 or 8
    return low, low + 1, right, (M - right).astype(np.uint16)


@cache
def _unpack_plan(m: int) -> tuple[NDArray[np.intp], U16, int]:
    """For m symbols: the byte pair holding each symbol (interleaved), its shift, bytes needed."""
    first_bit = M * np.arange(m, dtype=np.intp)
    byte = first_bit >> 3
    pairs = np.stack([byte, byte + 1], axis=-1).ravel()
    return pairs, (first_bit & 7).astype(np.uint16), -(-m * M // 8)


def symbols_to_bytes(symbols: NDArray[np.integer]) -> NDArray[np.uint8]:
    """Pack ``(..., m)`` symbols into ``(..., ceil(10 m / 8))`` bytes, LSB first.

    Each output byte takes its bits from at most two consecutive symbols (a
    byte is 8 bits, a symbol 10), so it is one gather of each plus shifts, with
    the shifts and indices precomputed per m.
    """
    sym = np.asarray(symbols)
    m = sym.shape[-1]
    low, high, right, left = _pack_plan(m)
    padded = np.zeros((*sym.shape[:-1], m + 1), dtype=np.uint16)  # symbol m reads as 0
    padded[..., :m] = sym
    # uint16 arithmetic wraps above bit 15; only the low 8 bits are kept anyway.
    out = (padded[..., low] >> right) | (padded[..., high] << left)
    return out.astype(np.uint8)


def bytes_to_symbols(data: NDArray[np.uint8], m: int) -> U16:
    """Unpack ``(..., nbytes)`` LSB-first bytes into ``(..., m)`` 10-bit symbols.

    Bits past ``10 m`` are ignored; missing bytes read as zero. A symbol starts
    at an even bit of a byte and so lies within two bytes: one gather of the
    byte pairs, viewed as little-endian 16-bit words, one shift and one mask.
    """
    raw = np.asarray(data, dtype=np.uint8)
    pairs, shift, need = _unpack_plan(m)
    if raw.shape[-1] < need + 1:  # the last pair may reach one byte past the data
        padded = np.zeros((*raw.shape[:-1], need + 1), dtype=np.uint8)
        take = min(raw.shape[-1], need)
        padded[..., :take] = raw[..., :take]
        raw = padded
    words = np.ascontiguousarray(raw[..., pairs]).view("<u2")
    out: U16 = (words >> shift) & np.uint16(ORDER)
    return out.astype(np.uint16, copy=False)


def symbol_bits(symbols: NDArray[np.integer]) -> NDArray[np.uint8]:
    """``(..., m)`` symbols as ``(..., 10 m)`` bits (0/1), each symbol LSB first."""
    sym = np.asarray(symbols, dtype=np.uint16)
    bits = (sym[..., None] >> np.arange(M, dtype=np.uint16)) & 1
    return bits.reshape(*sym.shape[:-1], sym.shape[-1] * M).astype(np.uint8)
