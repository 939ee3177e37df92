"""RS(544,514) and RS(272,258): known answers, reedsolo agreement, correction power."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.helpers.phy_oracle import rs, rs_encode
from ualink_ref.errors import DecodeError, EncodeError, FecUncorrectableError, UALinkError
from ualink_ref.phy import KP4, LL, ReedSolomonCode

# g(x) of RS(544,514), coefficients high -> low, as given in the project's issue 2
# (the IEEE 802.3 clause 91 generator with first root alpha^0).
KP4_GENERATOR = [
    1, 575, 552, 187, 230, 552, 1, 108, 565, 282, 249, 593, 132, 94, 720, 495,
    385, 942, 503, 883, 361, 788, 610, 193, 392, 127, 185, 158, 128, 834, 523,
]  # fmt: skip

CODES = [pytest.param(KP4, "kp4", id="kp4"), pytest.param(LL, "ll", id="ll")]


def test_parameters() -> None:
    assert (KP4.n, KP4.k, KP4.t) == (544, 514, 15)
    assert (LL.n, LL.k, LL.t) == (272, 258, 7)


def test_kp4_generator_known_answer() -> None:
    assert list(KP4.generator) == KP4_GENERATOR
    message = np.zeros(514, dtype=np.int64)
    message[-1] = 1  # x^0: parity = x^30 mod g(x) = the low 30 coefficients of g
    assert KP4.encode(message)[514:].tolist() == KP4_GENERATOR[1:]


@pytest.mark.parametrize(("code", "name"), CODES)
def test_generator_matches_reedsolo(code: ReedSolomonCode, name: str) -> None:
    assert list(code.generator) == [int(c) for c in rs(name).gen[code.n - code.k]]


@pytest.mark.parametrize(("code", "name"), CODES)
def test_parity_matches_reedsolo(code: ReedSolomonCode, name: str) -> None:
    rng = np.random.default_rng(11)
    msgs = rng.integers(0, 1024, (12, code.k))
    msgs[0] = 1023
    cws = code.encode(msgs)
    assert cws.dtype == np.uint16 and cws.shape == (12, code.n)
    for msg, cw in zip(msgs, cws, strict=True):
        assert cw.tolist() == rs_encode(name, msg.tolist())


def _corrupt(
    code: ReedSolomonCode, rng: np.random.Generator, counts: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    msgs = rng.integers(0, 1024, (counts.size, code.k))
    cws = code.encode(msgs)
    received = cws.copy()
    # error positions: a random permutation per row, first `count` entries
    order = np.argsort(rng.random((counts.size, code.n)), axis=1)
    mask = np.zeros_like(received, dtype=bool)
    np.put_along_axis(mask, order, np.arange(code.n)[None, :] < counts[:, None], axis=1)
    values = rng.integers(1, 1024, received.shape).astype(np.uint16)
    received[mask] ^= values[mask]
    return msgs, cws, received


@pytest.mark.parametrize(("code", "name"), CODES)
@given(seed=st.integers(0, 2**32 - 1))
@settings(max_examples=25)
def test_up_to_t_errors_anywhere_are_corrected(code: ReedSolomonCode, name: str, seed: int) -> None:
    rng = np.random.default_rng(seed)
    counts = rng.integers(0, code.t + 1, 64)
    msgs, cws, received = _corrupt(code, rng, counts)
    result = code.decode(received)
    assert not result.uncorrectable.any(), f"seed={seed}"
    assert (result.message == msgs).all(), f"seed={seed}"
    assert (result.codeword == cws).all(), f"seed={seed}"
    assert result.corrected.tolist() == counts.tolist(), f"seed={seed}"


@pytest.mark.parametrize(("code", "name"), CODES)
def test_t_plus_1_to_2t_errors_are_flagged(code: ReedSolomonCode, name: str) -> None:
    # A bounded-distance decoder miscorrects only when the received word falls
    # within t of another codeword; for a word with more than t errors that is about
    # 5e-17 for KP4 and 2e-8 for LL per codeword (sum_{i<=t} C(n,i) 1023^i / 1024^2t).
    # With these fixed seeds none does.
    rng = np.random.default_rng(5)
    counts = np.repeat(np.arange(code.t + 1, 2 * code.t + 1), 40)
    _, _, received = _corrupt(code, rng, counts)
    result = code.decode(received)
    assert result.uncorrectable.all()
    assert (result.corrected == 0).all()
    assert (result.codeword == received).all()  # flagged words pass through untouched
    with pytest.raises(FecUncorrectableError) as info:
        result.raise_if_uncorrectable()
    assert info.value.count == counts.size


def test_mixed_batch_rows_are_independent() -> None:
    rng = np.random.default_rng(9)
    counts = np.array([0, 3, 15, 16, 0, 30, 1])
    _, _, received = _corrupt(KP4, rng, counts)
    batch = KP4.decode(received)
    for i, row in enumerate(received):
        single = KP4.decode(row)
        assert single.message.shape == (514,)
        assert (single.message == batch.message[i]).all()
        assert int(single.corrected) == batch.corrected[i]
        assert bool(single.uncorrectable) == batch.uncorrectable[i]
    assert batch.uncorrectable.tolist() == [False, False, False, True, False, True, False]


def test_agrees_with_reedsolo_decoder() -> None:
    rng = np.random.default_rng(3)
    counts = np.array([1, 7, 15])
    msgs, _, received = _corrupt(KP4, rng, counts)
    ours = KP4.decode(received)
    for i, row in enumerate(received):
        theirs, _, errata = rs("kp4").decode(row.tolist())
        assert list(theirs) == ours.message[i].tolist() == msgs[i].tolist()
        assert len(errata) == ours.corrected[i]


def test_single_codeword_shapes_and_raise_helper() -> None:
    cw = KP4.encode(list(range(514)))
    assert cw.shape == (544,)
    ok = KP4.decode(cw)
    assert ok.ok and int(ok.corrected) == 0 and ok.raise_if_uncorrectable() is ok
    bad = cw.copy()
    bad[:16] ^= 1
    result = KP4.decode(bad)
    assert bool(result.uncorrectable) and not result.ok
    with pytest.raises(FecUncorrectableError):
        result.raise_if_uncorrectable()
    assert KP4.decode(np.zeros((0, 544), dtype=np.uint16)).message.shape == (0, 514)


@pytest.mark.parametrize(
    "bad",
    [
        np.zeros(513, dtype=np.int64),
        np.zeros(515, dtype=np.int64),
        np.zeros((2, 2, 514), dtype=np.int64),
        np.full(514, 1024),
        np.full(514, -1),
        np.zeros(514, dtype=np.float64),
        [[0] * 514, [0] * 3],
        "x" * 514,
        None,
        object(),
    ],
)
def test_encode_rejects_bad_input(bad: Any) -> None:
    with pytest.raises(EncodeError):
        KP4.encode(bad)


@pytest.mark.parametrize(
    "bad",
    [np.zeros(543, dtype=np.int64), np.full(544, 4096), np.zeros(544, dtype=bool), b"\x00" * 544],
)
def test_decode_rejects_bad_input(bad: Any) -> None:
    with pytest.raises(DecodeError):
        KP4.decode(bad)


@given(
    st.one_of(
        st.binary(max_size=600),
        st.lists(st.integers(-(2**70), 2**70), max_size=600),
        st.lists(st.integers(0, 1023), min_size=272, max_size=272),
        st.lists(st.lists(st.integers(0, 1100), min_size=272, max_size=272), max_size=3),
        st.lists(st.floats(), max_size=300),
    )
)
def test_decode_arbitrary_input_raises_only_ualink_errors(data: Any) -> None:
    try:
        result = LL.decode(data)
    except UALinkError:
        return
    assert result.message.shape[-1] == 258
