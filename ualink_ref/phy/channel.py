"""Seeded error channels applied to wire bytes.

Bit ``p`` of a wire byte string is bit ``p % 8`` (LSB = 0) of byte ``p // 8``,
which is also its transmission order (bytes are sent LSB first, see
:mod:`ualink_ref.phy.flits`). Every channel is deterministic by seed: a channel
object owns a ``numpy.random.Generator(seed)`` and successive ``apply`` calls
continue its stream, so the same seed and the same sequence of calls give the
same errors. All work is vectorized over the bits of the call.
"""

from __future__ import annotations

import operator
from collections.abc import Iterable

import numpy as np
from numpy.typing import NDArray

from ualink_ref.errors import EncodeError


def _wire_array(wire: object) -> NDArray[np.uint8]:
    if not isinstance(wire, bytes | bytearray | memoryview):
        raise EncodeError(f"wire must be bytes, got {type(wire).__name__}")
    return np.frombuffer(bytes(wire), dtype=np.uint8).copy()


def _integer(value: object, what: str) -> int:
    """``value`` as an int; floats (even 3.0), bools and strings are refused, not truncated."""
    if isinstance(value, bool) or not hasattr(type(value), "__index__"):
        raise EncodeError(f"{what} must be an integer, got {value!r:.40}")
    return operator.index(value)  # type: ignore[arg-type]


def _flip(data: NDArray[np.uint8], positions: NDArray[np.int64]) -> bytes:
    """XOR a 1 into each listed bit position (each position at most once)."""
    np.bitwise_xor.at(data, positions >> 3, (1 << (positions & 7)).astype(np.uint8))
    return data.tobytes()


def apply_bit_errors(wire: bytes, bit_positions: Iterable[int]) -> bytes:
    """Flip exactly the listed bit positions of ``wire`` (a position listed twice flips back).

    Raises :class:`EncodeError` for a position outside the wire.
    """
    data = _wire_array(wire)
    try:
        if isinstance(bit_positions, np.ndarray) and bit_positions.dtype.kind in "iu":
            pos = bit_positions.ravel().astype(np.int64)  # fast path; range checked below
        else:
            listed = [_integer(p, "bit position") for p in bit_positions]
            pos = np.asarray(listed, dtype=np.int64)
    except (TypeError, OverflowError) as exc:
        raise EncodeError(f"bit positions must be integers ({exc})") from None
    if pos.size and (pos.min() < 0 or pos.max() >= data.size * 8):
        raise EncodeError(f"bit position outside 0..{data.size * 8 - 1}")
    return _flip(data, pos)


class BitErrorChannel:
    """Independent bit errors at a fixed bit error ratio (binary symmetric channel).

    Per call: the number of errors is drawn Binomial(bits, ber), then that many
    distinct positions uniformly, so the cost follows the error count, not the
    wire length.
    """

    def __init__(self, ber: float, seed: int) -> None:
        if not 0.0 <= ber <= 1.0:
            raise EncodeError(f"ber must be in [0, 1], got {ber}")
        self.ber = float(ber)
        self.seed = seed
        self._rng = np.random.default_rng(seed)
        #: Bits flipped so far (all calls).
        self.errors = 0

    def __repr__(self) -> str:
        return f"BitErrorChannel(ber={self.ber!r}, seed={self.seed!r})"

    def positions(self, nbits: int) -> NDArray[np.int64]:
        """Draw the sorted error positions for a wire of ``nbits`` bits."""
        return np.sort(self._draw(nbits).astype(np.int64))

    def _draw(self, nbits: int) -> NDArray[np.integer]:
        # The stream: a Binomial(nbits, ber) count, then that many distinct positions.
        count = int(self._rng.binomial(nbits, self.ber)) if nbits else 0
        return self._rng.choice(nbits, size=count, replace=False) if count else np.zeros(0, int)

    def apply(self, wire: bytes) -> bytes:
        """``wire`` with this channel's errors applied."""
        if not isinstance(wire, bytes | bytearray | memoryview):
            raise EncodeError(f"wire must be bytes, got {type(wire).__name__}")
        if type(wire) is not bytes:
            wire = bytes(wire)  # a memoryview's len() counts items, not bytes
        pos = self._draw(len(wire) * 8)  # distinct positions: flipped in any order
        self.errors += int(pos.size)
        if pos.size > _FEW_ERRORS:
            return _flip(_wire_array(wire), pos.astype(np.int64))
        # A handful of errors (the usual case): flipped one by one in a bytearray, not
        # through numpy arrays built for them (a third of the call's cost).
        out = bytearray(wire)
        for p in pos.tolist():
            out[p >> 3] ^= 1 << (p & 7)
        return bytes(out)


#: Up to this many errors a call flips them in Python; more go through numpy at once.
_FEW_ERRORS = 32


class BurstChannel:
    """Bursts of ``length_bits`` bits: the first and last bit of each burst are flipped,
    each bit between them with probability ``density``.

    By default every ``apply`` call gets exactly one burst, starting at a uniform
    bit offset (``offset`` fixes it instead); with ``rate`` set, the number of
    bursts per call is Binomial(bits, rate) (bursts start independently at each bit).
    """

    def __init__(
        self,
        length_bits: int,
        seed: int,
        *,
        density: float = 0.5,
        rate: float | None = None,
        offset: int | None = None,
    ) -> None:
        length_bits = _integer(length_bits, "burst length")
        if offset is not None:
            offset = _integer(offset, "burst offset")
        if length_bits < 1:
            raise EncodeError(f"burst length must be >= 1 bit, got {length_bits}")
        if not 0.0 <= density <= 1.0:
            raise EncodeError(f"density must be in [0, 1], got {density}")
        if rate is not None and not 0.0 <= rate <= 1.0:
            raise EncodeError(f"rate must be in [0, 1], got {rate}")
        self.length_bits = length_bits
        self.seed = seed
        self.density = density
        self.rate = rate
        self.offset = offset
        self._rng = np.random.default_rng(seed)
        #: Bursts applied so far (all calls).
        self.bursts = 0

    def __repr__(self) -> str:
        return (
            f"BurstChannel(length_bits={self.length_bits}, seed={self.seed!r}, "
            f"density={self.density}, rate={self.rate}, offset={self.offset})"
        )

    def positions(self, nbits: int) -> NDArray[np.int64]:
        """Draw the sorted, distinct error positions for a wire of ``nbits`` bits."""
        length = self.length_bits
        if nbits < length:
            raise EncodeError(f"wire of {nbits} bits is shorter than a {length}-bit burst")
        if self.offset is not None and not 0 <= self.offset <= nbits - length:
            raise EncodeError(f"burst offset {self.offset} does not fit {nbits} bits")
        if self.rate is not None:
            count = int(self._rng.binomial(nbits - length + 1, self.rate))
            starts = self._rng.integers(0, nbits - length + 1, size=count)
        elif self.offset is not None:
            starts = np.array([self.offset])
        else:
            starts = np.array([self._rng.integers(nbits - length + 1)])
        inner = self._rng.random((starts.size, length)) < self.density
        inner[:, 0] = True
        inner[:, -1] = True
        rows, cols = np.nonzero(inner)
        self.bursts += int(starts.size)
        pos: NDArray[np.int64] = np.unique(starts[rows].astype(np.int64) + cols)
        # Overlapping bursts merge; a bit hit by two bursts is flipped once.
        return pos

    def apply(self, wire: bytes) -> bytes:
        """``wire`` with this channel's burst(s) applied."""
        data = _wire_array(wire)
        return _flip(data, self.positions(data.size * 8))
