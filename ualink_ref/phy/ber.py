"""Analytic error-rate model of the FEC modes under independent bit errors.

A symbol is wrong when any of its 10 bits is: p_s = 1 - (1 - BER)^10. With
independent bit errors the symbol errors of an n-symbol codeword are
Binomial(n, p_s), and a bounded-distance decoder fails when more than t are
wrong: CER = P(X > t). Terms are summed in the log domain (``lgamma``) so the
tail is accurate down to 1e-300 without cancellation.

Post-FEC BER assumes that a codeword the decoder cannot correct is flagged and
passed on as received (no miscorrection; see specs/phy.md for how rare that
is), so it keeps its i symbol errors, each carrying on average 10·BER/p_s bit
errors: BER_out = sum_{i>t} P(X = i) · (i / n) · BER / p_s.

A flit is lost when any of its codewords fails (kp4: 1 codeword, ll: 2); with
no FEC, when any of its 5120 bits is wrong (the DL CRC then rejects it).
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass

from ualink_ref.errors import EncodeError
from ualink_ref.phy import gf
from ualink_ref.phy.flits import FLIT_BYTES, INTERLEAVES, MODES, FecMode
from ualink_ref.phy.reedsolomon import ReedSolomonCode

#: Lane rate used for the latency column: 200 Gb/s of payload x 544/512 (KP4 overhead).
DEFAULT_LANE_GBPS = 212.5


def _mode(mode: object) -> FecMode:
    if not isinstance(mode, str) or mode not in MODES:
        raise EncodeError(f"unknown FEC mode {mode!r} (choose from {', '.join(MODES)})")
    return MODES[mode]


def _check_ber(ber: object) -> float:
    # Only real numbers (numpy's too); None, strings and bools are refused, not compared.
    if isinstance(ber, bool) or not isinstance(ber, numbers.Real):
        raise EncodeError(f"BER must be a number in [0, 1], got {ber!r:.40}")
    value = float(ber)
    if not 0.0 <= value <= 1.0:
        raise EncodeError(f"BER must be in [0, 1], got {ber}")
    return value


def symbol_error_probability(ber: float) -> float:
    """Probability that a 10-bit symbol holds at least one bit error."""
    ber = _check_ber(ber)
    return 1.0 if ber == 1.0 else -math.expm1(gf.M * math.log1p(-ber))


def _tail_terms(code: ReedSolomonCode, ber: float) -> list[tuple[int, float]]:
    """``(i, P(X = i))`` for i = t+1 .. n, X ~ Binomial(n, p_s)."""
    ps = symbol_error_probability(ber)
    n, t = code.n, code.t
    if ps == 0.0:
        return []
    if ps == 1.0:
        return [(n, 1.0)]
    log_ps, log_qs = math.log(ps), math.log1p(-ps)
    terms = []
    for i in range(t + 1, n + 1):
        log_comb = math.lgamma(n + 1) - math.lgamma(i + 1) - math.lgamma(n - i + 1)
        terms.append((i, math.exp(log_comb + i * log_ps + (n - i) * log_qs)))
    return terms


def codeword_error_ratio(code: ReedSolomonCode, ber: float) -> float:
    """Probability that a codeword has more than t symbol errors."""
    return min(1.0, math.fsum(p for _, p in _tail_terms(code, ber)))


def post_fec_ber(mode: str, ber: float) -> float:
    """Bit error ratio after decoding (uncorrectable codewords passed on as received)."""
    fec = _mode(mode)
    ber = _check_ber(ber)
    if fec.code is None:
        return ber
    ps = symbol_error_probability(ber)
    if ps == 0.0:
        return 0.0
    n = fec.code.n
    return math.fsum(p * i / n for i, p in _tail_terms(fec.code, ber)) * ber / ps


def flit_loss_ratio(mode: str, ber: float) -> float:
    """Probability that a 640-byte flit is not delivered intact (flagged or CRC-rejected)."""
    fec = _mode(mode)
    ber = _check_ber(ber)
    if fec.code is None:
        return 1.0 if ber == 1.0 else -math.expm1(FLIT_BYTES * 8 * math.log1p(-ber))
    cer = codeword_error_ratio(fec.code, ber)
    return 1.0 if cer == 1.0 else -math.expm1(fec.codewords_per_flit * math.log1p(-cer))


def accumulation_bits(mode: str, interleave: int = 1) -> int:
    """Wire bits the receiver must collect before it can correct (0 without FEC)."""
    fec = _mode(mode)
    if isinstance(interleave, bool) or interleave not in INTERLEAVES or (
        fec.code is None and interleave != 1
    ):
        raise EncodeError(f"interleave {interleave!r} not supported in mode {mode!r}")
    return 0 if fec.code is None else fec.code.n * gf.M * interleave


def accumulation_time_ns(
    mode: str, lane_gbps: float = DEFAULT_LANE_GBPS, interleave: int = 1
) -> float:
    """Codeword accumulation time on one lane, in ns (KP4: 5440 bits / 212.5 Gb/s = 25.6 ns)."""
    if not 0 < lane_gbps < math.inf:  # also rejects NaN
        raise EncodeError(f"lane rate must be positive and finite, got {lane_gbps}")
    return accumulation_bits(mode, interleave) / lane_gbps


@dataclass(frozen=True)
class ErrorRateRow:
    """One line of the error-rate table (``cer`` is None for mode ``none``)."""

    mode: str
    ber: float
    cer: float | None
    flit_loss: float
    post_fec_ber: float


def error_rate_table(
    bers: list[float], modes: tuple[str, ...] = ("kp4", "ll", "none")
) -> list[ErrorRateRow]:
    """Rows for every mode and every pre-FEC BER, mode-major."""
    rows = []
    for mode in modes:
        code = _mode(mode).code
        for ber in bers:
            cer = None if code is None else codeword_error_ratio(code, ber)
            rows.append(
                ErrorRateRow(mode, ber, cer, flit_loss_ratio(mode, ber), post_fec_ber(mode, ber))
            )
    return rows
