"""DL flits on the wire: flit <-> codeword mapping, spare bits, symbol interleave.

A DL flit is 640 bytes (5120 bits). Bits are taken from the flit bytes LSB
first (bit p of the flit is bit p % 8 of byte p // 8) and grouped ten at a
time into message symbols, each symbol's first bit being its LSB (IEEE 802.3
clause 91 convention); the spare message bits after the flit bits are zero.

* ``kp4``: one RS(544,514) codeword per flit: 5120 flit bits + 20 spare bits
  fill the 5140-bit message; 544 symbols = 5440 bits = 680 wire bytes.
* ``ll``: two RS(272,258) codewords per flit, the first carrying flit bits
  0..2559, the second 2560..5119, each + 20 spare bits in its 2580-bit
  message; 2 x 2720 bits = 680 wire bytes.
* ``none``: the flit bytes themselves, 640 wire bytes.

Because the code is systematic and the message bits come first, with
interleave 1 the first 640 wire bytes of a kp4 codeword *are* the flit.

Interleave N (1, 2 or 4): each group of N consecutive codewords is sent
symbol by symbol, symbol i of codeword j at wire symbol i*N + j (as 802.3 does
for its multi-codeword PMAs), so a burst is spread over N codewords.

Receiving: codewords are corrected; an uncorrectable codeword, or one whose
spare bits are non-zero after correction (a detected error: the transmitter
always sends zeros), is flagged and its flit bits are returned as received.
"""

from __future__ import annotations

from dataclasses import dataclass
from types import ModuleType

import numpy as np
from numpy.typing import NDArray

from ualink_ref.errors import (
    DecodeError,
    EncodeError,
    FecUncorrectableError,
    TruncatedError,
    UALinkError,
)
from ualink_ref.phy import accel, gf
from ualink_ref.phy.reedsolomon import KP4, LL, ReedSolomonCode
from ualink_ref.sizes import DL_FLIT_BYTES

#: Bytes in a DL flit (declared in ualink_ref.sizes).
FLIT_BYTES = DL_FLIT_BYTES
#: Interleave depths supported by :func:`encode_flits` / :func:`decode_flits`.
INTERLEAVES = (1, 2, 4)


@dataclass(frozen=True)
class FecMode:
    """How flits map onto the wire in one FEC mode."""

    name: str
    code: ReedSolomonCode | None
    codewords_per_flit: int

    @property
    def chunk_bytes(self) -> int:
        """Flit bytes carried by one codeword (the whole flit when uncoded)."""
        return FLIT_BYTES // self.codewords_per_flit

    @property
    def spare_bits(self) -> int:
        """Zero bits between the flit bits and the parity of each codeword."""
        return 0 if self.code is None else self.code.message_bits - self.chunk_bytes * 8

    @property
    def wire_bytes_per_flit(self) -> int:
        """Wire bytes one flit occupies."""
        if self.code is None:
            return FLIT_BYTES
        return self.codewords_per_flit * self.code.codeword_bytes


#: The three modes by name.
MODES: dict[str, FecMode] = {
    "kp4": FecMode("kp4", KP4, 1),
    "ll": FecMode("ll", LL, 2),
    "none": FecMode("none", None, 1),
}


@dataclass(frozen=True)
class FlitDecodeResult:
    """Outcome of :func:`decode_flits`: flit bytes and per-flit FEC outcome.

    ``corrected[f]``: symbols corrected in flit f's codewords; ``uncorrectable[f]``:
    True when any of its codewords was flagged (its bits are then as received).
    ``codeword_corrected[f, c]`` / ``codeword_uncorrectable[f, c]``: the same per
    codeword ``c`` of flit ``f`` (one column for kp4, two for ll, none for none).
    """

    flits: bytes
    corrected: NDArray[np.int64]
    uncorrectable: NDArray[np.bool_]
    codeword_corrected: NDArray[np.int64]
    codeword_uncorrectable: NDArray[np.bool_]

    @property
    def ok(self) -> bool:
        """True when every flit was delivered clean or corrected."""
        return not bool(self.uncorrectable.any())

    def raise_if_uncorrectable(self) -> FlitDecodeResult:
        """Raise :class:`FecUncorrectableError` naming the bad flits, if any; else return self."""
        if self.uncorrectable.any():
            indices = [int(i) for i in np.flatnonzero(self.uncorrectable)]
            raise FecUncorrectableError(len(indices), indices)
        return self


def _mode(mode: object, interleave: object, error: type[UALinkError]) -> FecMode:
    def fail(message: str) -> UALinkError:
        return EncodeError(message) if error is EncodeError else DecodeError(message)

    if not isinstance(mode, str) or mode not in MODES:
        raise fail(f"unknown FEC mode {mode!r} (choose from {', '.join(MODES)})")
    if isinstance(interleave, bool) or not isinstance(interleave, int):
        raise fail(f"interleave must be an int, got {interleave!r}")
    if interleave not in INTERLEAVES or (mode == "none" and interleave != 1):
        allowed = "1" if mode == "none" else "1, 2 or 4"
        raise fail(f"interleave {interleave} not supported in mode {mode!r} ({allowed})")
    return MODES[mode]


def wire_bytes_per_flit(mode: str) -> int:
    """Wire bytes per 640-byte flit: 680 for ``kp4`` and ``ll``, 640 for ``none``."""
    return _mode(mode, 1, EncodeError).wire_bytes_per_flit


def _as_bytes(data: object, what: str, error: type[UALinkError]) -> NDArray[np.uint8]:
    if not isinstance(data, bytes | bytearray | memoryview):
        message = f"{what} must be bytes, got {type(data).__name__}"
        raise EncodeError(message) if error is EncodeError else DecodeError(message)
    return np.frombuffer(bytes(data), dtype=np.uint8)


def _join_bits(
    head: NDArray[np.uint8], head_bits: int, tail: NDArray[np.uint8], total: int
) -> NDArray[np.uint8]:
    """Rows of ``head`` (first ``head_bits`` bits) followed by ``tail``'s bits, LSB first."""
    out = np.zeros((head.shape[0], total), dtype=np.uint8)
    full, shift = divmod(head_bits, 8)
    out[:, :full] = head[:, :full]
    if shift:
        out[:, full] = head[:, full] & ((1 << shift) - 1)
    wide = tail.astype(np.uint16) << shift
    span = min(tail.shape[1], total - full)
    out[:, full : full + span] |= (wide[:, :span] & 0xFF).astype(np.uint8)
    span = min(tail.shape[1], total - full - 1)
    out[:, full + 1 : full + 1 + span] |= (wide[:, :span] >> 8).astype(np.uint8)
    return out


def _interleave(cw: NDArray[np.uint8], n: int, depth: int) -> NDArray[np.uint8]:
    """Codeword rows -> wire rows of ``depth`` codewords, symbol i of cw j at i*depth + j."""
    sym = gf.bytes_to_symbols(cw, n).reshape(-1, depth, n).transpose(0, 2, 1)
    return gf.symbols_to_bytes(sym.reshape(-1, n * depth))


def _deinterleave(wire: NDArray[np.uint8], n: int, depth: int) -> NDArray[np.uint8]:
    """Inverse of :func:`_interleave`."""
    sym = gf.bytes_to_symbols(wire, n * depth).reshape(-1, n, depth).transpose(0, 2, 1)
    return gf.symbols_to_bytes(sym.reshape(-1, n))


def encode_flits(flits: bytes, mode: str, interleave: int = 1) -> bytes:
    """Wire bytes for a whole number of 640-byte flits in FEC ``mode``.

    Raises :class:`EncodeError` for a length that is not a multiple of 640, an
    unknown mode, or a codeword count that is not a multiple of ``interleave``.
    """
    fec = _mode(mode, interleave, EncodeError)
    data = _as_bytes(flits, "flits", EncodeError)
    if data.size % FLIT_BYTES:
        raise EncodeError(f"flits: {data.size} bytes is not a multiple of {FLIT_BYTES}")
    code = fec.code
    if code is None:
        return data.tobytes()
    chunks = data.reshape(-1, fec.chunk_bytes)
    if chunks.shape[0] % interleave:
        raise EncodeError(
            f"{chunks.shape[0]} codeword(s) is not a multiple of interleave {interleave}"
        )
    fast = accel.kernels()
    if fast is not None:
        wire = np.zeros((chunks.shape[0], code.codeword_bytes), dtype=np.uint8)
        fast.encode_wire(chunks, code.k, code.n - code.k, code.tables.lanes, wire)
    else:
        message = np.zeros((chunks.shape[0], -(-code.message_bits // 8)), dtype=np.uint8)
        message[:, : fec.chunk_bytes] = chunks  # spare bits stay zero
        parity = code.parity_bits(message)
        wire = _join_bits(message, code.message_bits, parity, code.codeword_bytes)
    if interleave > 1:
        wire = _interleave(wire, code.n, interleave)
    return wire.tobytes()


def _decode_compiled(
    fast: ModuleType, fec: FecMode, code: ReedSolomonCode, cw: NDArray[np.uint8], flit_count: int
) -> FlitDecodeResult:
    """:func:`decode_flits` after deinterleave, by one compiled kernel (same rules)."""
    corrected = np.zeros(cw.shape[0], dtype=np.int64)
    flagged = np.zeros(cw.shape[0], dtype=np.bool_)
    exp, log = gf.tables()
    two_t = code.n - code.k
    lanes = code.tables.lanes
    fast.decode_wire(cw, code.k, two_t, fec.chunk_bytes, lanes, exp, log, corrected, flagged)
    per = fec.codewords_per_flit
    by_codeword = corrected.reshape(flit_count, per)
    flagged_by_codeword = flagged.reshape(flit_count, per)
    if per == 1:  # one codeword per flit: the per-flit view is the per-codeword one
        return FlitDecodeResult(
            cw[:, : fec.chunk_bytes].tobytes(), corrected, flagged, by_codeword, flagged_by_codeword
        )
    return FlitDecodeResult(
        cw[:, : fec.chunk_bytes].tobytes(),
        by_codeword.sum(axis=1),
        np.asarray(flagged_by_codeword.any(axis=1)),
        by_codeword,
        flagged_by_codeword,
    )


def decode_flits(wire: bytes, mode: str, interleave: int = 1) -> FlitDecodeResult:
    """Correct wire bytes back into flits; flag (never raise for) uncorrectable ones.

    Raises only :class:`DecodeError` subclasses, for malformed arguments or a
    length that is not a whole number of (interleave groups of) flits.
    """
    fec = _mode(mode, interleave, DecodeError)
    data = _as_bytes(wire, "wire", DecodeError)
    per_flit = fec.wire_bytes_per_flit
    code = fec.code
    group = per_flit if code is None else max(per_flit, interleave * code.codeword_bytes)
    if data.size % group:
        raise TruncatedError("wire", f"a multiple of {group}", int(data.size))
    flit_count = data.size // per_flit
    if code is None:
        zeros = np.zeros(flit_count, dtype=np.int64)
        none = np.zeros((flit_count, 0), dtype=np.int64)
        return FlitDecodeResult(data.tobytes(), zeros, zeros.astype(bool), none, none.astype(bool))
    cw = data.reshape(-1, interleave * code.codeword_bytes)
    cw = _deinterleave(cw, code.n, interleave) if interleave > 1 else cw.copy()
    cw = cw.reshape(-1, code.codeword_bytes)
    fast = accel.kernels()
    if fast is not None:
        return _decode_compiled(fast, fec, code, cw, flit_count)
    fix = code.correct_bytes(cw)
    corrected = fix.corrected.copy()
    flagged = fix.uncorrectable.copy()
    touched = np.unique(fix.rows)
    if touched.size:
        received = cw[touched].copy()
        sym = gf.bytes_to_symbols(received, code.n)
        sym[np.searchsorted(touched, fix.rows), fix.positions] ^= fix.values
        cw[touched] = gf.symbols_to_bytes(sym)
    # Spare bits must be zero after correction; anything else is a detected error.
    first = fec.chunk_bytes  # flit bits end on a byte boundary in both modes
    last, tail = divmod(code.message_bits, 8)
    spare_bad = cw[:, first:last].any(axis=1)
    if tail:
        spare_bad |= (cw[:, last] & ((1 << tail) - 1)) != 0
    if spare_bad.any():
        restore = np.flatnonzero(spare_bad & ~flagged)
        if touched.size and restore.size:
            where = np.searchsorted(touched, restore)
            hit = (where < touched.size) & (touched[np.minimum(where, touched.size - 1)] == restore)
            cw[restore[hit]] = received[where[hit]]
        flagged |= spare_bad
        corrected[spare_bad] = 0
    flits = cw[:, : fec.chunk_bytes].reshape(flit_count, FLIT_BYTES)
    per = fec.codewords_per_flit
    by_codeword = corrected.reshape(flit_count, per)
    flagged_by_codeword = flagged.reshape(flit_count, per)
    return FlitDecodeResult(
        flits.tobytes(),
        by_codeword.sum(axis=1),
        np.asarray(flagged_by_codeword.any(axis=1)),
        by_codeword,
        flagged_by_codeword,
    )
