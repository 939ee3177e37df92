"""GF(2^10) tables and symbol packing against naive definitions."""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from tests.helpers.phy_oracle import bits_of, from_symbols, pack, to_symbols
from ualink_ref.phy import KP4, LL, gf


def test_alpha_is_primitive_for_x10_x3_1() -> None:
    exp, log = gf.tables()
    powers = exp[: gf.ORDER]
    assert sorted(powers.tolist()) == list(range(1, 1024))  # every non-zero element once
    assert gf.mul_scalar(int(exp[gf.ORDER - 1]), 2) == 1  # alpha^1023 = 1
    assert exp[10] == 0b1001  # x^10 = x^3 + 1
    assert all(log[exp[i]] == i for i in range(gf.ORDER))


def test_vectorized_mul_and_inv_match_shift_and_add() -> None:
    rng = np.random.default_rng(7)
    a = rng.integers(0, 1024, 2000)
    b = rng.integers(0, 1024, 2000)
    got = gf.mul(a, b)
    naive = [gf.mul_scalar(int(x), int(y)) for x, y in zip(a, b, strict=True)]
    assert [int(x) for x in got] == naive
    nz = a[a != 0]
    assert (gf.mul(nz, gf.inv(nz)) == 1).all()


@given(st.lists(st.integers(0, 1023), min_size=0, max_size=40))
def test_symbol_packing_matches_bit_lists(symbols: list[int]) -> None:
    packed = gf.symbols_to_bytes(np.array([symbols], dtype=np.uint16).reshape(1, -1))
    assert packed[0].tobytes() == pack(from_symbols(symbols))
    back = gf.bytes_to_symbols(packed, len(symbols))
    assert back[0].tolist() == symbols


def test_bits_lsb_first() -> None:
    # symbol 0 = 0x3ff fills byte 0 and the two low bits of byte 1
    assert gf.symbols_to_bytes(np.array([[1023, 0]])).tobytes() == b"\xff\x03\x00"
    assert to_symbols(bits_of(b"\x01\x04\x00\x00\x00")) == [1, 1, 0, 0]


@given(st.binary(max_size=90), st.integers(0, 70), st.integers(1, 3))
def test_unpacking_short_or_long_rows_matches_bit_lists(data: bytes, m: int, rows: int) -> None:
    # Missing bytes read as zero, bits past 10 m are ignored; every row alike.
    bits = (bits_of(data) + [0] * (10 * m))[: 10 * m]
    block = np.frombuffer(data * rows, dtype=np.uint8).reshape(rows, len(data))
    got = gf.bytes_to_symbols(block, m)
    assert got.shape == (rows, m) and got.dtype == np.uint16
    for row in got:
        assert row.tolist() == (to_symbols(bits) if m else [])


def test_split_powers_rows_are_products_with_inverse_locators() -> None:
    # Row 64 l + v holds v * X^-l and row 64 l + 32 + v holds (32 v) * X^-l at every
    # position i, X = alpha^(n-1-i); checked with shift-and-add products and powers
    # of alpha built by repeated multiplication (not the log/antilog tables).
    rng = np.random.default_rng(11)
    for code in (KP4, LL):
        split = code.tables.split_powers
        assert split.shape == ((code.t + 1) * 64, code.n)
        alpha_inv = 1
        for _ in range(gf.ORDER - 1):  # alpha^-1 = alpha^1022
            alpha_inv = gf.mul_scalar(alpha_inv, 2)
        for _ in range(40):
            lv, v = int(rng.integers(0, code.t + 1)), int(rng.integers(0, 32))
            i = int(rng.integers(0, code.n))
            x_inv_l = 1
            for _ in range(lv * (code.n - 1 - i)):
                x_inv_l = gf.mul_scalar(x_inv_l, alpha_inv)
            assert split[64 * lv + v, i] == gf.mul_scalar(v, x_inv_l)
            assert split[64 * lv + 32 + v, i] == gf.mul_scalar(v << 5, x_inv_l)
