"""The FEC engines agree: compiled (numba), numpy batched, numpy per codeword, and reedsolo.

Every engine decodes the same received words; corrections, counts and the
uncorrectable verdict must be identical, and for up to t errors the result must
be reedsolo's (an independent implementation). Inputs: random words with 0..t
errors, t+1..2t+2 errors, arbitrary garbage, and adversarial placements
(parity only, first/last symbols, bursts, all-zero and all-ones codewords).
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.helpers.phy_oracle import rs
from ualink_ref.phy import KP4, LL, ReedSolomonCode, decode_flits, decoder, encode_flits
from ualink_ref.phy.accel import ENV_VAR, compiled_available, kernels, use_compiled

ROOT = Path(__file__).resolve().parent.parent
CODES = [pytest.param(KP4, "kp4", id="kp4"), pytest.param(LL, "ll", id="ll")]
needs_numba = pytest.mark.skipif(
    not compiled_available() or bool(os.environ.get(ENV_VAR, "") not in ("", "0")),
    reason="numba is not installed (the 'fast' extra) or UALINK_REF_NO_NUMBA is set",
)


def _engines() -> dict[str, Callable[[ReedSolomonCode, np.ndarray], Any]]:
    def numpy_with(limit: int) -> Callable[[ReedSolomonCode, np.ndarray], Any]:
        def run(code: ReedSolomonCode, words: np.ndarray) -> Any:
            saved = decoder.SCALAR_LIMIT
            decoder.SCALAR_LIMIT = limit
            try:
                with use_compiled(False):
                    return code.decode(words)
            finally:
                decoder.SCALAR_LIMIT = saved

        return run

    engines = {
        "numpy-batched": numpy_with(-1),
        "numpy-per-codeword": numpy_with(10**9),
    }
    if compiled_available() and kernels() is not None:
        engines["compiled"] = lambda code, words: code.decode(words)
    return engines


def _corrupt(
    code: ReedSolomonCode, rng: np.random.Generator, counts: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    msgs = rng.integers(0, 1024, (counts.size, code.k))
    with use_compiled(False):
        cws = code.encode(msgs)
    received = cws.copy()
    for i, count in enumerate(counts):
        where = rng.choice(code.n, int(count), replace=False)
        received[i, where] ^= rng.integers(1, 1024, int(count)).astype(np.uint16)
    return cws, received


def _assert_engines_agree(code: ReedSolomonCode, received: np.ndarray, note: str) -> Any:
    results = {name: run(code, received) for name, run in _engines().items()}
    first_name, first = next(iter(results.items()))
    for name, other in results.items():
        for field in ("codeword", "corrected", "uncorrectable"):
            a, b = getattr(first, field), getattr(other, field)
            assert np.array_equal(a, b), f"{note}: {name} vs {first_name} differ in {field}"
    return first


@pytest.mark.parametrize(("code", "name"), CODES)
@given(seed=st.integers(0, 2**32 - 1))
@settings(max_examples=15)
def test_engines_agree_and_match_reedsolo(code: ReedSolomonCode, name: str, seed: int) -> None:
    rng = np.random.default_rng(seed)
    counts = rng.integers(0, 2 * code.t + 3, int(rng.integers(1, 40)))
    cws, received = _corrupt(code, rng, counts)
    result = _assert_engines_agree(code, received, f"seed={seed}")
    correctable = counts <= code.t
    assert not result.uncorrectable[correctable].any(), f"seed={seed}"
    assert (result.codeword[correctable] == cws[correctable]).all(), f"seed={seed}"
    for i in np.flatnonzero(correctable)[:3]:  # reedsolo is slow: a few rows per example
        theirs, _, errata = rs(name).decode(received[i].tolist())
        assert list(theirs) == result.codeword[i, : code.k].tolist(), f"seed={seed} row={i}"
        assert len(errata) == result.corrected[i], f"seed={seed} row={i}"


@pytest.mark.parametrize(("code", "name"), CODES)
def test_uncorrectable_verdicts_agree(code: ReedSolomonCode, name: str) -> None:
    rng = np.random.default_rng(77)
    counts = np.repeat(np.arange(code.t + 1, 2 * code.t + 3), 6)
    _, received = _corrupt(code, rng, counts)
    garbage = rng.integers(0, 1024, (300, code.n)).astype(np.uint16)
    for words, note in ((received, "t+1.. errors"), (garbage, "random words")):
        result = _assert_engines_agree(code, words, note)
        assert result.uncorrectable.sum() >= len(words) - 1


@pytest.mark.parametrize(("code", "name"), CODES)
def test_adversarial_placements_agree(code: ReedSolomonCode, name: str) -> None:
    rng = np.random.default_rng(5)
    n, k, t = code.n, code.k, code.t
    with use_compiled(False):
        zero = code.encode(np.zeros(k, dtype=np.int64))
        ones = code.encode(np.full(k, 1023))
    rows = []
    for base in (zero, ones):
        for where in (
            np.arange(n - 2 * t, n - t),  # parity only, t errors
            np.arange(n - t - 1, n),  # parity only, t + 1 errors
            np.arange(t),  # the first t symbols
            np.arange(n - t, n),  # the last t symbols
            np.arange(t + 1),  # t + 1 at the start
            np.array([0, n - 1]),  # both ends
            np.arange(100, 100 + t),  # a burst of t symbols
            np.array([k - 1, k]),  # across the message/parity boundary
        ):
            word = base.copy()
            word[where] ^= rng.integers(1, 1024, where.size).astype(np.uint16)
            rows.append(word)
        word = base.copy()
        word[: 2 * t] = 0  # overwrite, not XOR: some positions may be unchanged
        rows.append(word)
    result = _assert_engines_agree(code, np.array(rows), "adversarial")
    flagged = result.uncorrectable.reshape(2, -1)
    # t errors in parity, first t, last t, both ends, burst, boundary: corrected
    assert not flagged[:, [0, 2, 3, 5, 6, 7]].any()
    assert flagged[:, [1, 4]].all()


@pytest.mark.parametrize(("code", "name"), CODES)
def test_per_codeword_error_values_equal_forney(code: ReedSolomonCode, name: str) -> None:
    # The per-codeword engine takes error values from B and the last discrepancy of
    # Berlekamp–Massey (Horiguchi–Koetter), the batched one from Omega (Forney): on
    # every correctable placement they must agree symbol for symbol.
    rng = np.random.default_rng(41)
    n, t = code.n, code.t
    with use_compiled(False):
        clean = code.encode(rng.integers(0, 1024, (400, code.k)))
    words = clean.copy()
    for i, word in enumerate(words):
        count = 1 + i % t
        kind = i % 4
        if kind == 0:  # anywhere
            where = rng.choice(n, count, replace=False)
        elif kind == 1:  # a burst
            start = int(rng.integers(0, n - count + 1))
            where = np.arange(start, start + count)
        elif kind == 2:  # parity only
            where = n - 2 * t + rng.choice(2 * t, count, replace=False)
        else:  # both ends and the rest near the start
            where = np.unique(np.r_[0, n - 1, np.arange(1, count - 1)])
        word[where] ^= rng.integers(1, 1024, where.size).astype(np.uint16)
    engines = _engines()
    batched = engines["numpy-batched"](code, words)
    per_codeword = engines["numpy-per-codeword"](code, words)
    assert not per_codeword.uncorrectable.any()
    assert np.array_equal(per_codeword.codeword, clean)
    assert np.array_equal(per_codeword.codeword, batched.codeword)
    assert np.array_equal(per_codeword.corrected, batched.corrected)


@pytest.mark.parametrize("seed", range(12))
def test_bm_on_ints_equals_batched_bm_on_arbitrary_syndromes(seed: int) -> None:
    # Not only syndromes of real errors: any 2t symbols (the Python form relies on
    # deg Lambda <= L, which must hold for every input, not just decodable ones).
    rng = np.random.default_rng(seed)
    for two_t in (14, 30):
        synd = rng.integers(0, 1024, (60, two_t)).astype(np.uint16)
        synd[:5] = 0
        synd[5:10, 1:] = 0  # one non-zero syndrome
        synd[10:15, : two_t // 2] = 0
        # Sparse rows: zero discrepancies in the middle of the run, where the
        # per-codeword form keeps Lambda and x^m B exactly L + 1 long.
        synd[15:30] *= rng.random((15, two_t)) < 0.3
        synd[30:40] *= rng.random((10, two_t)) < 0.6
        lam, length = decoder.berlekamp_massey(synd)
        for row in range(synd.shape[0]):
            got_lam, got_len = decoder.berlekamp_massey_ints(synd[row].tolist())
            assert got_lam == lam[row].tolist(), (seed, two_t, row)
            assert got_len == length[row], (seed, two_t, row)


@pytest.mark.parametrize(("mode", "interleave"), [("kp4", 1), ("kp4", 4), ("ll", 2)])
def test_flit_paths_agree(mode: str, interleave: int) -> None:
    rng = np.random.default_rng(3)
    flits = rng.integers(0, 256, 640 * 8, dtype=np.uint8).tobytes()
    with use_compiled(False):
        wire = encode_flits(flits, mode, interleave)
    assert encode_flits(flits, mode, interleave) == wire
    noisy = bytearray(wire)
    for pos in rng.choice(len(wire), 120, replace=False):
        noisy[int(pos)] ^= 1 << int(rng.integers(0, 8))
    with use_compiled(False):
        expected = decode_flits(bytes(noisy), mode, interleave)
    got = decode_flits(bytes(noisy), mode, interleave)
    assert got.flits == expected.flits
    assert np.array_equal(got.codeword_corrected, expected.codeword_corrected)
    assert np.array_equal(got.codeword_uncorrectable, expected.codeword_uncorrectable)


@needs_numba
def test_compiled_path_is_the_default_when_numba_imports() -> None:
    assert kernels() is not None
    with use_compiled(False):
        assert kernels() is None
    assert kernels() is not None


def test_env_var_disables_compiled_path_and_import_stays_light() -> None:
    code = (
        "import sys\n"
        "import ualink_ref, ualink_ref.phy\n"
        "assert 'numba' not in sys.modules, 'numba imported at import time'\n"
        "from ualink_ref.phy import KP4\n"
        "from ualink_ref.phy.accel import kernels\n"
        "assert kernels() is None\n"
        "cw = KP4.encode(list(range(514)))\n"
        "bad = cw.copy(); bad[:15] ^= 5\n"
        "r = KP4.decode(bad)\n"
        "assert (r.codeword == cw).all() and int(r.corrected) == 15\n"
        "assert 'numba' not in sys.modules, 'numba imported although disabled'\n"
    )
    env = {**os.environ, ENV_VAR: "1"}
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
