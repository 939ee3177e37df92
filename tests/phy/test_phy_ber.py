"""Analytic error-rate model: known points, an exact cross-check, and Monte-Carlo."""

from __future__ import annotations

from decimal import Decimal, getcontext
from math import comb

import numpy as np
import pytest

from ualink_ref.cli import main
from ualink_ref.errors import EncodeError
from ualink_ref.phy import (
    KP4,
    LL,
    BitErrorChannel,
    accumulation_time_ns,
    codeword_error_ratio,
    decode_flits,
    encode_flits,
    flit_loss_ratio,
    post_fec_ber,
)


def exact_cer(n: int, t: int, ber: float) -> float:
    """1 - P(X <= t) in 60-digit decimal arithmetic (no cancellation trouble)."""
    getcontext().prec = 60
    ps = 1 - (1 - Decimal(ber)) ** 10
    ok = sum(comb(n, i) * ps**i * (1 - ps) ** (n - i) for i in range(t + 1))
    return float(1 - ok)


@pytest.mark.parametrize(
    ("code", "ber", "expected"),
    # Known points quoted in the project's issue 2.
    [(KP4, 2.4e-4, 8.15e-13), (LL, 1e-3, 6.43e-3), (KP4, 1e-3, 1.53e-4)],
)
def test_known_points(code: object, ber: float, expected: float) -> None:
    assert codeword_error_ratio(code, ber) == pytest.approx(expected, rel=1e-3)  # type: ignore[arg-type]


@pytest.mark.parametrize("ber", [1e-5, 1e-4, 2.4e-4, 1e-3, 3e-3])
def test_cer_matches_exact_complement(ber: float) -> None:
    for code in (KP4, LL):
        assert codeword_error_ratio(code, ber) == pytest.approx(
            exact_cer(code.n, code.t, ber), rel=1e-9
        )


def test_flit_loss_and_post_fec_ber() -> None:
    cer_ll = codeword_error_ratio(LL, 1e-3)
    assert flit_loss_ratio("ll", 1e-3) == pytest.approx(1 - (1 - cer_ll) ** 2)
    assert flit_loss_ratio("kp4", 1e-3) == pytest.approx(codeword_error_ratio(KP4, 1e-3))
    assert flit_loss_ratio("none", 1e-5) == pytest.approx(1 - (1 - 1e-5) ** 5120)
    assert post_fec_ber("none", 1e-4) == 1e-4
    # post-FEC BER is below pre-FEC and above CER * (t+1)/n * BER/ps
    assert 0 < post_fec_ber("kp4", 1e-3) < 1e-3
    assert post_fec_ber("kp4", 0.0) == 0.0 and codeword_error_ratio(KP4, 0.0) == 0.0


def test_accumulation_time() -> None:
    assert accumulation_time_ns("kp4") == pytest.approx(25.6)  # 5440 bits / 212.5 Gb/s
    assert accumulation_time_ns("ll") == pytest.approx(12.8)
    assert accumulation_time_ns("kp4", interleave=4) == pytest.approx(102.4)
    assert accumulation_time_ns("none") == 0.0


@pytest.mark.parametrize(
    ("lane", "interleave"), [(float("nan"), 1), (float("inf"), 1), (0.0, 1), (212.5, 3), (212.5, 0)]
)
def test_accumulation_time_rejects_bad_arguments(lane: float, interleave: int) -> None:
    # Found in review: NaN / inf lane rates and interleave 0 or 3 gave nan, 0 or a silly number.
    with pytest.raises(EncodeError):
        accumulation_time_ns("kp4", lane, interleave)


@pytest.mark.parametrize(("mode", "flits", "seed"), [("kp4", 50_000, 101), ("ll", 6_000, 202)])
def test_monte_carlo_matches_analytic_cer(mode: str, flits: int, seed: int) -> None:
    # Independent bit errors at BER 1e-3 through the channel and the decoder.
    # kp4: 50k codewords, ~7.7 failures expected; ll: 12k codewords (6k flits),
    # ~77 failed flits expected. Accept the observed count within
    # expected +- (3.3 sqrt(expected) + 1) (a ~99.9 % Poisson band; continuity-corrected).
    # Power: a decoder correcting one symbol less (kp4 t=14: ~24 expected; ll t=6:
    # ~240) or more (ll t=8: ~22) fails this; kp4 t=16 (~2.3) would not be told
    # apart here, which the exact per-codeword tests in test_phy_rs.py cover.
    code = KP4 if mode == "kp4" else LL
    cw_per_flit = 1 if mode == "kp4" else 2
    cer = codeword_error_ratio(code, 1e-3)
    channel = BitErrorChannel(1e-3, seed=seed)
    wire = encode_flits(bytes(640 * flits), mode)
    failures = 0
    block = 680 * 10_000  # 10k flits per channel call bounds memory
    for start in range(0, len(wire), block):
        result = decode_flits(channel.apply(wire[start : start + block]), mode)
        failures += int(result.uncorrectable.sum())
        good = ~result.uncorrectable
        flits_out = np.frombuffer(result.flits, np.uint8).reshape(-1, 640)
        assert not flits_out[good].any(), f"seed={seed}: miscorrection"
    # failures counted per flit; convert the expectation to flits
    expected = flits * (1 - (1 - cer) ** cw_per_flit)
    band = 3.3 * expected**0.5 + 1
    assert abs(failures - expected) <= band, (
        f"seed={seed} mode={mode}: {failures} failed flits, analytic {expected:.1f}"
    )


def test_fec_table_cli(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["fec", "table", "--ber", "1e-3", "--ber", "2.4e-4"]) == 0
    out = capsys.readouterr().out
    assert "25.60 ns" in out and "12.80 ns" in out
    assert "1.530e-04" in out and "6.431e-03" in out and "8.152e-13" in out
    rows = [line for line in out.splitlines() if line.startswith(("kp4 ", "ll ", "none "))]
    assert len(rows) == 6


def test_readme_fec_table_is_real_output() -> None:
    from pathlib import Path

    from ualink_ref.cli.fec import format_table

    readme = (Path(__file__).resolve().parents[2] / "docs" / "layers.md").read_text()
    command = "$ ualink-ref fec table --ber 2.4e-4 --ber 1e-3\n"
    assert command in readme
    shown = readme.split(command, 1)[1].split("```", 1)[0].rstrip("\n")
    assert shown == format_table([2.4e-4, 1e-3], ["kp4", "ll", "none"], 212.5)
