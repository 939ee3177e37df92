"""Reed–Solomon decoder rules (``ualink_ref/phy/decoder.py``) pinned at their boundaries.

Written against the mutants a mutmut run left alive (``fuzz/README.md``, "Mutation
testing"): the switch between the per-codeword and the batched engine at
``SCALAR_LIMIT`` bad codewords, where both must give the same, exact corrections.
(The run also pinned the old per-codeword Forney step's zero-value and
zero-derivative checks; that step was replaced in the same round by the fused
Chien/value step, whose values ``tests/phy/test_phy_paths.py`` checks against the
batched engine, so those two tests went with it.)
"""

from __future__ import annotations

import numpy as np
import pytest

from ualink_ref.phy import KP4, LL, ReedSolomonCode
from ualink_ref.phy.decoder import SCALAR_LIMIT


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
