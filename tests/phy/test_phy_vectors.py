"""The committed PHY golden vectors: reproducible, verifiable, and independently confirmed.

Every golden case is re-derived here without the model's codec: parity from
reedsolo, bits from the naive oracle, error rates from exact decimal sums.
"""

from __future__ import annotations

import json
from decimal import Decimal, getcontext
from math import comb
from pathlib import Path
from typing import Any

import pytest

from tests.helpers.phy_oracle import (
    CODES,
    bits_of,
    from_symbols,
    pack,
    rs,
    rs_encode,
    symbol_of_bit,
)
from tests.helpers.phy_oracle import encode_flits as oracle_encode
from ualink_ref.cli import main
from ualink_ref.testing import vectors

ROOT = Path(__file__).resolve().parents[2]
PHY_JSON = ROOT / "vectors" / "phy.json"

# g(x) of RS(544,514), high -> low, as given in the project's issue 2.
KP4_GENERATOR = [
    1, 575, 552, 187, 230, 552, 1, 108, 565, 282, 249, 593, 132, 94, 720, 495,
    385, 942, 503, 883, 361, 788, 610, 193, 392, 127, 185, 158, 128, 834, 523,
]  # fmt: skip


def _cases(kind: str) -> list[dict[str, Any]]:
    doc = json.loads(PHY_JSON.read_text())
    found = [c for c in doc["cases"] if c["kind"] == kind]
    assert found, kind
    return found


def test_committed_vectors_equal_fresh_generation(tmp_path: Path) -> None:
    vectors.generate(tmp_path, ["phy"])
    assert (tmp_path / "phy.json").read_bytes() == PHY_JSON.read_bytes()


def test_verify_committed_directory() -> None:
    report = vectors.verify_dir(ROOT / "vectors")
    assert "phy.json" in report.files
    assert not [m for m in report.mismatches if m.file == "phy.json"]
    assert main(["vectors", "verify", str(ROOT / "vectors")]) == 0


def test_verify_catches_a_changed_parity_symbol(tmp_path: Path) -> None:
    doc = json.loads(PHY_JSON.read_text())
    case = next(c for c in doc["cases"] if c["id"] == "kp4-encode-prbs31")
    case["expected"]["parity"][0] ^= 1
    (tmp_path / "phy.json").write_text(json.dumps(doc))
    report = vectors.verify_dir(tmp_path)
    assert [(m.case, m.field) for m in report.mismatches] == [("kp4-encode-prbs31", "parity")]


@pytest.mark.parametrize(
    ("case_id", "key", "index", "value"),
    [
        ("kp4-encode-prbs31", "message", 3, 1 << 64),  # was OverflowError
        ("ll-decode-t-random", "message", 0, -(10**30)),  # was OverflowError
        ("kp4-decode-one-first", "error_positions", 0, 10**6),  # was IndexError
        ("kp4-decode-one-first", "error_values", 0, 1 << 70),  # was OverflowError
        ("kp4-decode-one-first", "error_values", 0, 1.5),
        ("kp4-flit-decode-scattered", "error_bits", 0, 1 << 64),
    ],
)
def test_verify_reports_tampered_inputs_instead_of_crashing(
    tmp_path: Path, case_id: str, key: str, index: int, value: Any
) -> None:
    # Found in review: `vectors verify` died with a traceback on these edits.
    doc = json.loads(PHY_JSON.read_text())
    case = next(c for c in doc["cases"] if c["id"] == case_id)
    case["inputs"][key][index] = value
    (tmp_path / "phy.json").write_text(json.dumps(doc))
    report = vectors.verify_dir(tmp_path)
    assert [m.case for m in report.mismatches] == [case_id]
    assert main(["vectors", "verify", str(tmp_path)]) == 1


def test_verify_tells_booleans_from_integers(tmp_path: Path) -> None:
    # Found in review: JSON `true` in place of `1` (or `1` for `true`) passed verify.
    doc = json.loads(PHY_JSON.read_text())
    case = next(c for c in doc["cases"] if c["id"] == "kp4-decode-one-first")
    assert case["expected"]["corrected"] == 1 and case["expected"]["uncorrectable"] is False
    case["expected"]["corrected"] = True
    case["expected"]["uncorrectable"] = 0
    (tmp_path / "phy.json").write_text(json.dumps(doc))
    report = vectors.verify_dir(tmp_path)
    assert sorted(m.field for m in report.mismatches) == ["corrected", "uncorrectable"]


def test_generator_cases() -> None:
    for case in _cases("rs_generator"):
        code = case["inputs"]["code"]
        n, k = CODES[code]
        expected = [int(c) for c in rs(code).gen[n - k]]
        assert case["expected"]["generator"] == expected
        if code == "kp4":
            assert expected == KP4_GENERATOR


def test_encode_cases_match_reedsolo_and_bit_packing() -> None:
    for case in _cases("rs_encode"):
        code, message = case["inputs"]["code"], case["inputs"]["message"]
        codeword = rs_encode(code, message)
        assert case["expected"]["parity"] == codeword[len(message) :], case["id"]
        assert case["expected"]["wire"] == pack(from_symbols(codeword)).hex(), case["id"]
    impulse = next(c for c in _cases("rs_encode") if c["id"] == "kp4-encode-impulse-last")
    assert impulse["expected"]["parity"] == KP4_GENERATOR[1:]


def test_decode_cases_match_injected_errors() -> None:
    for case in _cases("rs_decode"):
        inputs, expected = case["inputs"], case["expected"]
        code = inputs["code"]
        n, k = CODES[code]
        received = rs_encode(code, inputs["message"])
        for pos, value in zip(inputs["error_positions"], inputs["error_values"], strict=True):
            received[pos] ^= value
        assert expected["received"] == received, case["id"]
        errors = len(inputs["error_positions"])
        if errors <= (n - k) // 2:
            assert expected["message"] == inputs["message"], case["id"]
            assert expected["corrected"] == errors and not expected["uncorrectable"]
            decoded, _, _ = rs(code).decode(received)
            assert list(decoded) == inputs["message"]
        else:
            assert expected["uncorrectable"] and expected["corrected"] == 0, case["id"]
            assert expected["message"] == received[:k]  # passed through as received


def test_flit_encode_cases_match_oracle() -> None:
    for case in _cases("flit_encode"):
        inputs = case["inputs"]
        flits = bytes.fromhex(inputs["flits"])
        wire = oracle_encode(flits, inputs["mode"], inputs["interleave"])
        assert case["expected"]["wire"] == wire.hex(), case["id"]
    bit0 = next(c for c in _cases("flit_encode") if c["id"] == "kp4-flit-bit0")
    assert bytes.fromhex(bit0["expected"]["wire"])[:2] == b"\x01\x00"


def test_flit_decode_cases_match_oracle() -> None:
    for case in _cases("flit_decode"):
        inputs, expected = case["inputs"], case["expected"]
        mode, interleave = inputs["mode"], inputs["interleave"]
        flits = bytes.fromhex(inputs["flits"])
        bits = bits_of(oracle_encode(flits, mode, interleave))
        for p in inputs["error_bits"]:
            bits[p] ^= 1
        assert expected["wire"] == pack(bits).hex(), case["id"]
        count = len(flits) // 640
        if mode == "none":
            assert expected["corrected"] == [0] * count
            assert expected["flits"] == pack(bits).hex()
            continue
        per_flit = 2 if mode == "ll" else 1
        hit: dict[int, set[int]] = {}
        for p in inputs["error_bits"]:
            cw, sym = symbol_of_bit(mode, interleave, p)
            hit.setdefault(cw, set()).add(sym)
        t = (CODES[mode][0] - CODES[mode][1]) // 2
        bad = [
            any(len(hit.get(f * per_flit + j, ())) > t for j in range(per_flit))
            for f in range(count)
        ]
        assert expected["uncorrectable"] == bad, case["id"]
        for f in range(count):
            if not bad[f]:
                got = bytes.fromhex(expected["flits"])[640 * f : 640 * (f + 1)]
                assert got == flits[640 * f : 640 * (f + 1)], case["id"]
                n_hit = sum(len(hit.get(f * per_flit + j, ())) for j in range(per_flit))
                assert expected["corrected"][f] == n_hit, case["id"]


def _exact_tail(n: int, t: int, ber: float) -> tuple[Decimal, Decimal, Decimal]:
    getcontext().prec = 60
    b = Decimal(repr(ber))
    ps = 1 - (1 - b) ** 10
    probs = [comb(n, i) * ps**i * (1 - ps) ** (n - i) for i in range(n + 1)]
    cer = 1 - sum(probs[: t + 1])
    post = sum(probs[i] * i for i in range(t + 1, n + 1)) / n * b / ps
    return cer, post, b


@pytest.mark.parametrize("case", _cases("error_rate"), ids=lambda c: c["id"])
def test_error_rate_cases_match_exact_sums(case: dict[str, Any]) -> None:
    mode, ber = case["inputs"]["mode"], case["inputs"]["ber"]
    expected = case["expected"]
    if mode == "none":
        getcontext().prec = 60
        loss = 1 - (1 - Decimal(repr(ber))) ** 5120
        assert float(expected["flit_loss"]) == pytest.approx(float(loss), rel=1e-6)
        assert float(expected["post_fec_ber"]) == ber and expected["cer"] is None
        return
    n, k = CODES[mode]
    cer, post, _ = _exact_tail(n, (n - k) // 2, ber)
    per = 2 if mode == "ll" else 1
    assert float(expected["cer"]) == pytest.approx(float(cer), rel=1e-6)
    assert float(expected["flit_loss"]) == pytest.approx(float(1 - (1 - cer) ** per), rel=1e-6)
    assert float(expected["post_fec_ber"]) == pytest.approx(float(post), rel=1e-6)
