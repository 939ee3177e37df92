"""Reed–Solomon decoder rules (``ualink_ref/phy/decoder.py``) pinned at their boundaries.

Written against the mutants a mutmut run left alive (``fuzz/README.md``, "Mutation
testing"): Forney's "a zero denominator or a zero error value means uncorrectable",
and the switch between the per-codeword and the batched engine at ``SCALAR_LIMIT``
bad codewords, where both must give the same, exact corrections.
"""

from __future__ import annotations

import numpy as np
import pytest

from ualink_ref.phy import KP4, LL, ReedSolomonCode
from ualink_ref.phy.decoder import SCALAR_LIMIT, forney_ints


@pytest.mark.parametrize("t", [7, 15])
def test_forney_reports_a_zero_error_value_as_uncorrectable(t: int) -> None:
    # All-zero syndromes give Omega = 0: the error value at any root is 0, which is no
    # error at all — the locator is wrong, so the word is uncorrectable (None).
    lam = [1, 5] + [0] * (2 * t - 1)  # one root; Lambda'(x) = 5, never zero
    assert forney_ints(lam, [0] * (2 * t), [10], 544, t) is None


@pytest.mark.parametrize("t", [7, 15])
def test_forney_reports_a_zero_derivative_as_uncorrectable(t: int) -> None:
    # Lambda(x) = 1 + x^2 has no odd terms: its formal derivative is 0 everywhere.
    lam = [1, 0, 1] + [0] * (2 * t - 2)
    synd = [1] * (2 * t)
    assert forney_ints(lam, synd, [3], 544, t) is None


def _received(code: ReedSolomonCode, rows: int, errors: int, seed: int
              ) -> tuple[np.ndarray, np.ndarray]:
    """``rows`` codewords and copies with ``errors`` symbol errors each (distinct places)."""
    rng = np.random.default_rng(seed)
    cws = code.encode(rng.integers(0, 1024, (rows, code.k)))
    received = cws.copy()
    for row in received:
        where = rng.choice(code.n, errors, replace=False)
        row[where] ^= rng.integers(1, 1024, errors).astype(np.uint16)
    return cws, received


@pytest.mark.parametrize("code", [KP4, LL], ids=["kp4", "ll"])
@pytest.mark.parametrize("bad", [SCALAR_LIMIT, SCALAR_LIMIT + 1])
def test_both_engines_correct_exactly_t_errors_at_the_switch(code: ReedSolomonCode,
                                                            bad: int) -> None:
    # SCALAR_LIMIT bad codewords run per codeword, one more run batched: both correct
    # every pattern of exactly t errors, and report t corrections per codeword.
    cws, received = _received(code, bad, code.t, seed=bad)
    clean = code.encode(np.zeros((3, code.k), dtype=np.uint16))
    result = code.decode(np.concatenate([received, clean]))
    assert not result.uncorrectable.any()
    assert (result.codeword[:bad] == cws).all()
    assert result.corrected.tolist() == [code.t] * bad + [0, 0, 0]


@pytest.mark.parametrize("code", [KP4, LL], ids=["kp4", "ll"])
@pytest.mark.parametrize("bad", [SCALAR_LIMIT, SCALAR_LIMIT + 1])
def test_both_engines_flag_t_plus_one_errors_at_the_switch(code: ReedSolomonCode,
                                                          bad: int) -> None:
    # One error more than t: flagged and passed through untouched (for these seeds no
    # word falls within t of another codeword; see test_phy_rs for the odds).
    _, received = _received(code, bad, code.t + 1, seed=100 + bad)
    result = code.decode(received)
    assert result.uncorrectable.all() and (result.corrected == 0).all()
    assert (result.codeword == received).all()
