"""Seeded error channels: determinism, statistics, exact error lists."""

from __future__ import annotations

import numpy as np
import pytest

from ualink_ref.errors import EncodeError
from ualink_ref.phy import BitErrorChannel, BurstChannel, apply_bit_errors


def _diff_bits(a: bytes, b: bytes) -> list[int]:
    x = np.frombuffer(a, np.uint8) ^ np.frombuffer(b, np.uint8)
    return np.flatnonzero(np.unpackbits(x, bitorder="little")).tolist()


def test_apply_bit_errors_exact() -> None:
    wire = bytes(4)
    assert apply_bit_errors(wire, [0, 9, 31]) == b"\x01\x02\x00\x80"
    assert apply_bit_errors(wire, [3, 3]) == wire  # flipped twice: back
    assert apply_bit_errors(b"\xff", []) == b"\xff"
    for bad in ([-1], [32], ["x"]):
        with pytest.raises(EncodeError):
            apply_bit_errors(wire, bad)


def test_bit_error_channel_is_deterministic_by_seed() -> None:
    wire = bytes(10_000)
    a = BitErrorChannel(1e-3, seed=42)
    b = BitErrorChannel(1e-3, seed=42)
    first = a.apply(wire)
    assert first == b.apply(wire)
    assert a.apply(wire) == b.apply(wire)  # the stream continues identically
    assert first != BitErrorChannel(1e-3, seed=43).apply(wire)


def test_bit_error_channel_rate() -> None:
    nbits = 8 * 1_000_000
    channel = BitErrorChannel(1e-3, seed=1)
    out = channel.apply(bytes(nbits // 8))
    count = len(_diff_bits(bytes(nbits // 8), out))
    mean, sigma = nbits * 1e-3, (nbits * 1e-3) ** 0.5
    assert abs(count - mean) < 5 * sigma, f"seed=1 count={count}"
    assert channel.errors == count
    assert BitErrorChannel(0.0, seed=1).apply(b"\x5a" * 9) == b"\x5a" * 9
    assert BitErrorChannel(1.0, seed=1).apply(b"\x5a" * 9) == b"\xa5" * 9
    with pytest.raises(EncodeError):
        BitErrorChannel(1.5, seed=1)


def test_burst_channel_single_burst() -> None:
    wire = bytes(680)
    for seed in range(20):
        flipped = _diff_bits(wire, BurstChannel(140, seed=seed).apply(wire))
        assert flipped[-1] - flipped[0] == 139, f"seed={seed}"  # first and last bit set
    fixed = BurstChannel(10, seed=0, offset=100, density=1.0).apply(wire)
    assert _diff_bits(wire, fixed) == list(range(100, 110))
    assert BurstChannel(10, seed=3).apply(wire) == BurstChannel(10, seed=3).apply(wire)


def test_burst_channel_rate_and_errors() -> None:
    channel = BurstChannel(20, seed=5, rate=1e-4)
    channel.apply(bytes(125_000))  # 1e6 bits: about 100 bursts
    assert 50 < channel.bursts < 150, "seed=5"
    with pytest.raises(EncodeError):
        BurstChannel(0, seed=1)
    with pytest.raises(EncodeError):
        BurstChannel(100, seed=1).apply(bytes(4))
    with pytest.raises(EncodeError):
        BurstChannel(8, seed=1, offset=30).apply(bytes(4))


@pytest.mark.parametrize("positions", [[1.5], [3.0], [True], ["1"], [None], [np.float64(2.0)]])
def test_apply_bit_errors_rejects_non_integer_positions(positions: list[object]) -> None:
    # Found in review: 1.5 was silently truncated to bit 1 (and True taken as bit 1).
    with pytest.raises(EncodeError):
        apply_bit_errors(bytes(8), positions)  # type: ignore[arg-type]


def test_apply_bit_errors_accepts_numpy_integer_positions() -> None:
    assert apply_bit_errors(bytes(2), np.array([0, 9])) == b"\x01\x02"


@pytest.mark.parametrize(
    "kwargs", [{"length_bits": 1.5}, {"length_bits": True}, {"length_bits": 8, "offset": 2.5}]
)
def test_burst_channel_rejects_non_integer_length_or_offset(kwargs: dict[str, object]) -> None:
    # Found in review: BurstChannel(1.5, seed) raised TypeError on its first apply().
    with pytest.raises(EncodeError):
        BurstChannel(seed=1, **kwargs).apply(bytes(8))  # type: ignore[arg-type]


@pytest.mark.parametrize("wire_bytes,ber", [(3704, 1e-4), (680, 3e-3), (10_000, 1e-3)])
def test_bit_error_channel_flips_exactly_the_positions_it_draws(wire_bytes: int,
                                                                ber: float) -> None:
    # apply() flips a few errors in Python and many (the last case) through numpy: both
    # must flip the positions() stream, call after call (same seed, same sizes).
    rng = np.random.default_rng(7)
    applied, drawn = BitErrorChannel(ber, seed=5), BitErrorChannel(ber, seed=5)
    total = 0
    for _ in range(40):
        wire = rng.integers(0, 256, wire_bytes, dtype=np.uint8).tobytes()
        positions = drawn.positions(8 * wire_bytes).tolist()
        total += len(positions)
        assert _diff_bits(wire, applied.apply(wire)) == positions
    assert applied.errors == total > 0


def test_bit_error_channel_takes_any_bytes_like_wire_as_its_bytes() -> None:
    # A memoryview of wider items (or a bytearray) is its bytes: the same stream, flipped.
    raw = bytes(range(256)) * 4
    wide = memoryview(np.frombuffer(raw, dtype=np.uint32).copy())
    for wire in (bytearray(raw), wide, memoryview(raw)):
        assert BitErrorChannel(2e-3, seed=3).apply(wire) == BitErrorChannel(2e-3, seed=3).apply(raw)
    assert BitErrorChannel(1.0, seed=3).apply(wide) == bytes(b ^ 0xFF for b in raw)
