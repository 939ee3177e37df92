"""Systematic Reed–Solomon codes over GF(2^10): RS(544,514) "KP4" and RS(272,258) "LL".

Conventions (IEEE 802.3 clause 91, shared by clauses 119/134/161/172):
generator g(x) = prod_{j=0}^{2t-1} (x - alpha^j); a codeword is the message
followed by 2t parity symbols; symbol index 0 is the first on the wire and the
coefficient of the highest power x^(n-1); parity = m(x) x^(2t) mod g(x).

The batch path is vectorized: encoding and syndromes are GF(2)-linear maps
evaluated by byte lookup tables (:mod:`ualink_ref.phy.linear`), and the error
correction runs on all codewords at once (:mod:`ualink_ref.phy.decoder`).
Tables are built once, on first use.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache, cached_property
from types import ModuleType

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ualink_ref.errors import (
    DecodeError,
    EncodeError,
    FecUncorrectableError,
    FieldRangeError,
    UALinkError,
)
from ualink_ref.phy import accel, gf
from ualink_ref.phy.decoder import Corrections, correct
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


@dataclass(frozen=True)
class RSDecodeResult:
    """Outcome of :meth:`ReedSolomonCode.decode`.

    ``message``: ``(k,)`` or ``(N, k)`` corrected message symbols (received
    symbols as they were for uncorrectable codewords); ``codeword``: the same
    for the whole codeword; ``corrected``: symbols corrected per codeword;
    ``uncorrectable``: True where the codeword had more errors than t (as far
    as the decoder can tell). 1-D input gives 0-d ``corrected`` / ``uncorrectable``.
    """

    message: NDArray[np.uint16]
    codeword: NDArray[np.uint16]
    corrected: NDArray[np.int64]
    uncorrectable: NDArray[np.bool_]

    @property
    def ok(self) -> bool:
        """True when no codeword was flagged uncorrectable."""
        return not bool(np.any(self.uncorrectable))

    def raise_if_uncorrectable(self) -> RSDecodeResult:
        """Raise :class:`FecUncorrectableError` if a codeword is uncorrectable; else return self."""
        flags = np.atleast_1d(self.uncorrectable)
        if flags.any():
            indices = [int(i) for i in np.flatnonzero(flags)]
            raise FecUncorrectableError(len(indices), indices)
        return self


def _as_symbols(
    values: ArrayLike, width: int, what: str, error: type[UALinkError]
) -> tuple[NDArray[np.uint16], bool]:
    """Validate symbol input: integer dtype, shape (width,) or (N, width), values 0..1023."""

    def fail(message: str) -> UALinkError:
        if error is EncodeError:
            return EncodeError(message, field=what)
        return DecodeError(message)

    try:
        arr = np.asarray(values)
    except (ValueError, TypeError) as exc:
        raise fail(f"{what}: not an array of symbols ({exc})") from None
    if arr.dtype.kind not in "iu":
        raise fail(f"{what}: need integer symbols, got dtype {arr.dtype}")
    if arr.ndim not in (1, 2) or arr.shape[-1] != width:
        raise fail(f"{what}: need shape ({width},) or (N, {width}), got {arr.shape}")
    # One pass: seen as unsigned, a negative symbol is huge, so max() catches both ends.
    if arr.size and int(arr.view(f"u{arr.itemsize}").max()) > gf.ORDER:
        bad = int(arr.max()) if int(arr.max()) > gf.ORDER else int(arr.min())
        if error is EncodeError:
            raise EncodeError(f"{what}: symbol {bad} outside 0..1023", field=what)
        raise FieldRangeError(what, bad, "symbol outside 0..1023")
    single = arr.ndim == 1
    return np.ascontiguousarray(arr.reshape(-1, width), dtype=np.uint16), single


@dataclass(frozen=True)
class ReedSolomonCode:
    """A systematic RS(n, k) code over GF(2^10) (IEEE 802.3 clause 91 conventions)."""

    name: str
    n: int
    k: int

    @property
    def t(self) -> int:
        """Symbol errors corrected per codeword."""
        return (self.n - self.k) // 2

    @property
    def tables(self) -> CodeTables:
        """The code's lookup tables (built on first use)."""
        return code_tables(self.n, self.k)

    @property
    def generator(self) -> tuple[int, ...]:
        """g(x) coefficients, highest degree first (2t + 1 of them)."""
        return self.tables.generator

    @property
    def message_bits(self) -> int:
        """Bits in a message (10 k)."""
        return self.k * gf.M

    @property
    def codeword_bytes(self) -> int:
        """Bytes of one codeword packed LSB first (10 n / 8, rounded up)."""
        return -(-self.n * gf.M // 8)

    def parity_bits(self, message_bytes: NDArray[np.uint8]) -> NDArray[np.uint8]:
        """Parity of ``(N, ceil(10k/8))`` packed messages, as ``(N, ceil(20t/8))`` packed bytes.

        Bits of the last input byte beyond 10 k are ignored.
        """
        parity_bytes = -(-2 * self.t * gf.M // 8)
        fast = accel.kernels()
        if fast is not None:
            sym = fast.unpack_symbols(np.ascontiguousarray(message_bytes), self.k)
            out = np.empty((sym.shape[0], self.n), dtype=np.uint16)
            fast.encode_into(sym, self.tables.lanes, self.n - self.k, out)
            packed: NDArray[np.uint8] = fast.pack_symbols(
                np.ascontiguousarray(out[:, self.k :]), parity_bytes
            )
            return packed
        words = self.tables.encoder.apply(message_bytes)
        return Gf2ByteTable.words_to_bytes(words, parity_bytes)

    def encode(self, msgs: ArrayLike) -> NDArray[np.uint16]:
        """Systematic codewords for messages of shape ``(k,)`` or ``(N, k)`` (ints 0..1023)."""
        sym, single = _as_symbols(msgs, self.k, f"{self.name} message", EncodeError)
        fast = accel.kernels()
        if fast is not None:
            out = np.empty((sym.shape[0], self.n), dtype=np.uint16)
            fast.encode_into(sym, self.tables.lanes, self.n - self.k, out)
        else:
            parity = gf.bytes_to_symbols(
                self.parity_bits(gf.symbols_to_bytes(sym)), self.n - self.k
            )
            out = np.concatenate([sym, parity], axis=1)
        return out[0] if single else out

    def correct_bytes(self, codewords: NDArray[np.uint8]) -> Corrections:
        """Corrections for ``(N, codeword_bytes)`` packed codewords (see :mod:`.decoder`)."""
        fast = accel.kernels()
        if fast is not None:
            sym = fast.unpack_symbols(np.ascontiguousarray(codewords), self.n)
            return self._compiled_corrections(fast, sym)
        return correct(self.tables, codewords)

    def _compiled_corrections(self, fast: ModuleType, sym: NDArray[np.uint16]) -> Corrections:
        """Corrections of ``(N, n)`` received symbols by the compiled kernels."""
        count = sym.shape[0]
        room = count * self.t
        rows = np.empty(room, dtype=np.intp)
        positions = np.empty(room, dtype=np.intp)
        values = np.empty(room, dtype=np.uint16)
        corrected = np.zeros(count, dtype=np.int64)
        flagged = np.zeros(count, dtype=np.bool_)
        exp, log = gf.tables()
        got = fast.correct_symbols(
            sym, self.tables.lanes, exp, log, self.t, rows, positions, values, corrected, flagged
        )
        return Corrections(rows[:got], positions[:got], values[:got], corrected, flagged)

    def decode(self, cws: ArrayLike) -> RSDecodeResult:
        """Correct codewords of shape ``(n,)`` or ``(N, n)``; flag uncorrectable ones (no raise)."""
        sym, single = _as_symbols(cws, self.n, f"{self.name} codeword", DecodeError)
        fast = accel.kernels()
        if fast is not None:
            fix = self._compiled_corrections(fast, sym)
        else:
            fix = correct(self.tables, gf.symbols_to_bytes(sym))
        fixed = sym.copy()
        fixed[fix.rows, fix.positions] ^= fix.values
        if single:
            return RSDecodeResult(
                fixed[0, : self.k],
                fixed[0],
                np.asarray(fix.corrected[0]),
                np.asarray(fix.uncorrectable[0]),
            )
        return RSDecodeResult(fixed[:, : self.k], fixed, fix.corrected, fix.uncorrectable)


#: RS(544,514), t = 15: the IEEE 802.3 clause 91 "KP4" FEC.
KP4 = ReedSolomonCode("KP4", 544, 514)
#: RS(272,258), t = 7: the lightweight low-latency FEC ("RS(272,257+1)").
LL = ReedSolomonCode("LL", 272, 258)
