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
from ualink_ref.phy.tables import CodeTables, code_tables


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
