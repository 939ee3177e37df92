"""Flits on the wire: bit order, spare bits, interleave, burst guarantees, robustness."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.helpers.phy_oracle import encode_flits as oracle_encode
from tests.helpers.phy_oracle import rs_encode, symbol_of_bit
from ualink_ref.errors import DecodeError, EncodeError, FecUncorrectableError, UALinkError
from ualink_ref.phy import (
    KP4,
    BurstChannel,
    apply_bit_errors,
    decode_flits,
    encode_flits,
    gf,
    wire_bytes_per_flit,
)

SETUPS = [("kp4", 1), ("kp4", 2), ("kp4", 4), ("ll", 1), ("ll", 2), ("ll", 4), ("none", 1)]


def _flits(count: int, seed: int) -> bytes:
    return np.random.default_rng(seed).integers(0, 256, 640 * count, dtype=np.uint8).tobytes()


def _flit_count(mode: str, interleave: int) -> int:
    return 2 if (mode, interleave) == ("ll", 4) else (interleave if mode == "kp4" else 1)


def test_wire_bytes_per_flit() -> None:
    assert [wire_bytes_per_flit(m) for m in ("kp4", "ll", "none")] == [680, 680, 640]
    with pytest.raises(EncodeError):
        wire_bytes_per_flit("rs528")


def test_kp4_wire_is_flit_then_spare_then_parity() -> None:
    flit = _flits(1, 1)
    wire = encode_flits(flit, "kp4")
    assert len(wire) == 680
    assert wire[:640] == flit  # 5120 flit bits, LSB first, unchanged
    assert wire[640] == 0 and wire[641] == 0 and wire[642] & 0x0F == 0  # 20 spare bits
    # hand-checkable symbol view: bit 0 of the flit is bit 0 (LSB) of symbol 0
    one = bytearray(640)
    one[0] = 0x01
    assert gf.bytes_to_symbols(np.frombuffer(encode_flits(bytes(one), "kp4"), np.uint8), 544)[
        0
    ] == 1
    one[0], one[1] = 0xFF, 0x03  # bits 0..9 set: symbol 0 = 0x3ff, symbol 1 = 0
    syms = gf.bytes_to_symbols(np.frombuffer(encode_flits(bytes(one), "kp4"), np.uint8), 544)
    assert syms[0] == 1023 and syms[1] == 0
    assert syms.tolist() == rs_encode("kp4", [1023] + [0] * 513)


def test_ll_splits_the_flit_in_two_codewords() -> None:
    flit = _flits(1, 2)
    wire = encode_flits(flit, "ll")
    assert len(wire) == 680
    assert wire[:320] == flit[:320] and wire[340:660] == flit[320:]
    assert wire[320:322] == b"\x00\x00" and wire[322] & 0x0F == 0  # spare bits, first cw
    assert wire[660:662] == b"\x00\x00" and wire[662] & 0x0F == 0  # spare bits, second cw


@pytest.mark.parametrize(("mode", "interleave"), SETUPS)
def test_encode_matches_naive_oracle(mode: str, interleave: int) -> None:
    flits = _flits(_flit_count(mode, interleave), 3)
    assert encode_flits(flits, mode, interleave) == oracle_encode(flits, mode, interleave)


@pytest.mark.parametrize(("mode", "interleave"), SETUPS)
@given(data=st.data())
def test_round_trip(mode: str, interleave: int, data: st.DataObject) -> None:
    unit = _flit_count(mode, interleave)
    groups = data.draw(st.integers(0, 2))
    flits = data.draw(st.binary(min_size=640 * unit * groups, max_size=640 * unit * groups))
    wire = encode_flits(flits, mode, interleave)
    assert len(wire) == wire_bytes_per_flit(mode) * unit * groups
    result = decode_flits(wire, mode, interleave)
    assert result.flits == flits and result.ok
    assert result.corrected.shape == result.uncorrectable.shape == (unit * groups,)


@pytest.mark.parametrize("interleave", [1, 2, 4])
def test_burst_guarantee_every_offset(interleave: int) -> None:
    # 10*(15N - 1) bits touch at most 15N symbols spread over N codewords: at most
    # 15 per codeword. The symbols hit depend only on the offset modulo 10N, so
    # every offset in two full periods at both ends, plus a random sample, covers
    # all cases; each burst flips every bit it spans.
    length = 10 * (15 * interleave - 1)
    flits = _flits(interleave, 4)
    clean = np.frombuffer(encode_flits(flits, "kp4", interleave), np.uint8)
    nbits = clean.size * 8
    period = 20 * interleave
    rng = np.random.default_rng(interleave)
    offsets = np.unique(
        np.concatenate(
            [
                np.arange(period),
                np.arange(nbits - length - period + 1, nbits - length + 1),
                rng.integers(0, nbits - length + 1, 150),
            ]
        )
    )
    bits = np.unpackbits(np.tile(clean, (offsets.size, 1)), axis=1, bitorder="little")
    span = offsets[:, None] + np.arange(length)[None, :]
    np.put_along_axis(bits, span, 1 - np.take_along_axis(bits, span, axis=1), axis=1)
    wire = np.packbits(bits, axis=1, bitorder="little").tobytes()
    result = decode_flits(wire, "kp4", interleave)
    assert result.ok
    assert result.flits == flits * offsets.size
    assert result.corrected.max() == 15


@pytest.mark.parametrize("interleave", [1, 2, 4])
def test_random_bursts_within_the_guarantee(interleave: int) -> None:
    # One random-pattern burst (first and last bit flipped, the rest at 50 %) per
    # interleave group, at a random offset.
    flits = _flits(interleave * 8, 5)
    wire = encode_flits(flits, "kp4", interleave)
    group = 680 * interleave
    channel = BurstChannel(10 * (15 * interleave - 1), seed=interleave)
    hit = b"".join(channel.apply(wire[g : g + group]) for g in range(0, len(wire), group))
    assert hit != wire
    result = decode_flits(hit, "kp4", interleave)
    assert result.ok and result.flits == flits, f"seed={interleave}"


def test_burst_one_symbol_too_long_fails() -> None:
    wire = encode_flits(_flits(1, 6), "kp4")
    hit = apply_bit_errors(wire, range(151))  # 16 symbols
    result = decode_flits(hit, "kp4")
    assert result.uncorrectable.tolist() == [True]
    assert result.flits == hit[:640]  # passed on as received
    with pytest.raises(FecUncorrectableError):
        result.raise_if_uncorrectable()


@pytest.mark.parametrize(("mode", "interleave"), SETUPS[:-1])
def test_corrected_counts_match_symbols_hit(mode: str, interleave: int) -> None:
    unit = _flit_count(mode, interleave)
    flits = _flits(unit, 7)
    wire = encode_flits(flits, mode, interleave)
    rng = np.random.default_rng(8)
    positions = rng.choice(len(wire) * 8, 12, replace=False).tolist()
    result = decode_flits(apply_bit_errors(wire, positions), mode, interleave)
    per_cw = 2 if mode == "ll" else 1
    hit: dict[int, set[int]] = {}
    for bit in positions:
        cw, sym = symbol_of_bit(mode, interleave, bit)
        hit.setdefault(cw // per_cw, set()).add(cw * 1000 + sym)
    expected = [len(hit.get(f, ())) for f in range(unit)]
    assert result.flits == flits
    assert result.corrected.tolist() == expected


def test_nonzero_spare_bits_are_flagged() -> None:
    flit = _flits(1, 9)
    bits = np.unpackbits(np.frombuffer(flit, np.uint8), bitorder="little")
    message = gf.bytes_to_symbols(
        np.packbits(np.concatenate([bits, np.zeros(20, np.uint8)]), bitorder="little"), 514
    )
    message[-1] ^= 1 << 9  # last spare bit set, then a *valid* codeword
    wire = gf.symbols_to_bytes(KP4.encode(message)).tobytes()
    result = decode_flits(wire, "kp4")
    assert result.uncorrectable.tolist() == [True] and result.corrected.tolist() == [0]


def test_none_mode_passes_errors_through() -> None:
    flit = _flits(1, 10)
    hit = apply_bit_errors(flit, [0, 5119])
    result = decode_flits(hit, "none")
    assert result.flits == hit and result.ok


@pytest.mark.parametrize(
    ("args", "error"),
    [
        ((b"\x00" * 639, "kp4"), EncodeError),
        ((b"\x00" * 640, "rs528"), EncodeError),
        ((b"\x00" * 640, "kp4", 3), EncodeError),
        ((b"\x00" * 640, "kp4", 2), EncodeError),  # one codeword cannot fill 2-way
        ((b"\x00" * 640, "none", 2), EncodeError),
        (("text", "kp4"), EncodeError),
    ],
)
def test_encode_argument_errors(args: tuple[Any, ...], error: type[Exception]) -> None:
    with pytest.raises(error):
        encode_flits(*args)


@given(
    wire=st.one_of(st.binary(max_size=3000), st.just(b"\x00" * 2720), st.integers()),
    mode=st.sampled_from(["kp4", "ll", "none", "bogus", 4]),
    interleave=st.sampled_from([1, 2, 4, 3, 0, True, "1"]),
)
def test_decode_arbitrary_input_raises_only_decode_errors(
    wire: Any, mode: Any, interleave: Any
) -> None:
    try:
        result = decode_flits(wire, mode, interleave)
    except DecodeError:
        return
    except UALinkError as exc:  # pragma: no cover - would be a bug
        pytest.fail(f"non-DecodeError {exc!r}")
    assert len(result.flits) == 640 * result.corrected.size


def test_per_codeword_outcome_of_ll_flits() -> None:
    # Flit 0: 3 symbol errors in its first LL codeword, 8 (> t = 7) in its second.
    # Flit 1: clean. LL codeword c of flit f is wire bytes [680 f + 340 c, +340).
    flits = bytes(range(256)) * 5
    wire = bytearray(encode_flits(flits, "ll"))
    for symbol in (0, 50, 100):  # 10-bit symbols, LSB-first: bit 10*s is in byte (10*s)//8
        wire[(10 * symbol) // 8] ^= 1 << ((10 * symbol) % 8)
    for symbol in range(0, 80, 10):
        wire[340 + (10 * symbol) // 8] ^= 1 << ((10 * symbol) % 8)
    result = decode_flits(bytes(wire), "ll")
    assert result.codeword_corrected.tolist() == [[3, 0], [0, 0]]
    assert result.codeword_uncorrectable.tolist() == [[False, True], [False, False]]
    assert result.corrected.tolist() == [3, 0]
    assert result.uncorrectable.tolist() == [True, False]
    assert decode_flits(flits, "none").codeword_uncorrectable.shape == (2, 0)
