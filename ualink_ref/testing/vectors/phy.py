"""PHY golden vectors: RS known answers, decode cases, flit <-> wire cases, error rates.

Every case lists its inputs in full (messages, flit bytes, error positions), so
a third party can feed them to their own implementation; ``compute`` is the
model's answer. Kinds (layout in specs/vectors.md, section "PHY"):

* ``rs_generator``  code -> generator polynomial coefficients;
* ``rs_encode``     code, message -> parity symbols, packed codeword (hex);
* ``rs_decode``     code, message, error positions/values -> received word,
  decoded message, symbols corrected, uncorrectable flag;
* ``flit_encode``   mode, interleave, flit bytes -> wire bytes;
* ``flit_decode``   mode, interleave, flit bytes, wire bit errors -> received
  wire, decoded flits, per-flit corrected / uncorrectable;
* ``error_rate``    mode, pre-FEC BER -> CER, flit loss ratio, post-FEC BER.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ualink_ref.errors import EncodeError
from ualink_ref.phy import gf
from ualink_ref.phy.ber import codeword_error_ratio, flit_loss_ratio, post_fec_ber
from ualink_ref.phy.channel import apply_bit_errors
from ualink_ref.phy.flits import FLIT_BYTES, MODES, decode_flits, encode_flits
from ualink_ref.phy.reedsolomon import KP4, LL, ReedSolomonCode
from ualink_ref.testing.vectors import VectorInput, hexstr, unhex

LAYER = "phy"
DESCRIPTION = (
    "Physical layer: RS(544,514) 'kp4' and RS(272,258) 'll' over GF(2^10) "
    "(p(x) = x^10 + x^3 + 1, first root alpha^0, symbols LSB first on the wire), "
    "640-byte flits on the wire with 1/2/4-way symbol interleave, analytic error rates."
)

CODES: dict[str, ReedSolomonCode] = {"kp4": KP4, "ll": LL}


def prbs31_bits(count: int, state: int = 0x7FFFFFFF) -> list[int]:
    """``count`` bits of PRBS31 (x^31 + x^28 + 1, Fibonacci form), the test pattern source."""
    bits = []
    for _ in range(count):
        new = ((state >> 30) ^ (state >> 27)) & 1
        state = ((state << 1) | new) & 0x7FFFFFFF
        bits.append(new)
    return bits


def prbs_symbols(count: int, state: int = 0x7FFFFFFF) -> list[int]:
    """PRBS31 bits grouped into 10-bit symbols, first bit as the LSB."""
    bits = prbs31_bits(count * 10, state)
    return [sum(bits[10 * i + b] << b for b in range(10)) for i in range(count)]


def prbs_bytes(count: int, state: int = 0x7FFFFFFF) -> bytes:
    """PRBS31 bits packed into bytes, first bit as the LSB."""
    bits = prbs31_bits(count * 8, state)
    return bytes(sum(bits[8 * i + b] << b for b in range(8)) for i in range(count))


def _code(inputs: dict[str, Any]) -> ReedSolomonCode:
    name = inputs["code"]
    if name not in CODES:
        raise EncodeError(f"unknown code {name!r}")
    return CODES[name]


def _symbol_index(value: Any, limit: int) -> int:
    """``value`` if it is an int in 0..limit-1 (a vector file may have been edited)."""
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < limit:
        raise EncodeError(f"{value!r:.40} is not an integer in 0..{limit - 1}")
    return value


def _fmt(value: float) -> str:
    # Seven significant digits: reproducible across libm implementations.
    return f"{value:.6e}"


def compute(kind: str, inputs: dict[str, Any]) -> dict[str, Any]:
    """The model's expected outputs for one case."""
    if kind == "rs_generator":
        return {"generator": list(_code(inputs).generator)}
    if kind == "rs_encode":
        code = _code(inputs)
        cw = code.encode(inputs["message"])  # the codec checks type, shape and range
        return {
            "parity": [int(s) for s in cw[code.k :]],
            "wire": hexstr(gf.symbols_to_bytes(cw).tobytes()),
        }
    if kind == "rs_decode":
        code = _code(inputs)
        received = code.encode(inputs["message"])
        for pos, value in zip(inputs["error_positions"], inputs["error_values"], strict=True):
            received[_symbol_index(pos, code.n)] ^= _symbol_index(value, 1024)
        result = code.decode(received)
        return {
            "received": [int(s) for s in received],
            "message": [int(s) for s in result.message],
            "corrected": int(result.corrected),
            "uncorrectable": bool(result.uncorrectable),
        }
    if kind == "flit_encode":
        wire = encode_flits(unhex(inputs["flits"]), inputs["mode"], inputs["interleave"])
        return {"wire": hexstr(wire)}
    if kind == "flit_decode":
        mode, interleave = inputs["mode"], inputs["interleave"]
        clean = encode_flits(unhex(inputs["flits"]), mode, interleave)
        wire = apply_bit_errors(clean, inputs["error_bits"])
        flit_result = decode_flits(wire, mode, interleave)
        return {
            "wire": hexstr(wire),
            "flits": hexstr(flit_result.flits),
            "corrected": [int(c) for c in flit_result.corrected],
            "uncorrectable": [bool(u) for u in flit_result.uncorrectable],
        }
    if kind == "error_rate":
        mode, ber = inputs["mode"], float(inputs["ber"])
        mode_code = MODES[mode].code
        return {
            "cer": None if mode_code is None else _fmt(codeword_error_ratio(mode_code, ber)),
            "flit_loss": _fmt(flit_loss_ratio(mode, ber)),
            "post_fec_ber": _fmt(post_fec_ber(mode, ber)),
        }
    raise ValueError(f"unknown phy vector kind {kind!r}")


def _encode_cases(name: str, code: ReedSolomonCode) -> list[VectorInput]:
    k = code.k
    patterns: list[tuple[str, list[int], str]] = [
        ("zeros", [0] * k, "all-zero message: all-zero parity"),
        ("ones", [1023] * k, "every symbol 0x3ff"),
        (
            "impulse-last",
            [0] * (k - 1) + [1],
            "message x^0: parity = low 2t coefficients of g(x) (IEEE 802.3 clause 91 check)",
        ),
        ("impulse-first", [1] + [0] * (k - 1), "message x^(k-1): first symbol on the wire"),
        ("impulse-mid", [0] * (k // 2) + [0x201] + [0] * (k - k // 2 - 1), "one mid symbol"),
        ("incrementing", [i % 1024 for i in range(k)], "symbol i = i mod 1024"),
        ("prbs31", prbs_symbols(k), "PRBS31 (x^31+x^28+1, state all ones), LSB first"),
    ]
    return [
        VectorInput(f"{name}-encode-{label}", "rs_encode", {"code": name, "message": msg}, note)
        for label, msg, note in patterns
    ]


def _decode_cases(name: str, code: ReedSolomonCode) -> list[VectorInput]:
    n, t = code.n, code.t
    rng = np.random.default_rng(2026 + n)  # fixed seed: the cases are then listed verbatim
    message = prbs_symbols(code.k, 0x1234567)
    layouts: list[tuple[str, list[int], str]] = [
        ("clean", [], "no errors"),
        ("one-first", [0], "one error in the first symbol"),
        ("one-parity", [n - 1], "one error in the last parity symbol"),
        ("t-random", sorted(rng.choice(n, t, replace=False).tolist()), "t errors, anywhere"),
        ("t-burst", list(range(n - 2 * t - 3, n - t - 3)), "t consecutive symbols"),
        ("t-in-parity", list(range(n - t, n)), "t errors, all in parity"),
        ("t+1", sorted(rng.choice(n, t + 1, replace=False).tolist()), "t+1 errors: flagged"),
        ("2t", sorted(rng.choice(n, 2 * t, replace=False).tolist()), "2t errors: flagged"),
    ]
    cases = []
    for label, positions, note in layouts:
        values = rng.integers(1, 1024, len(positions)).tolist()
        inputs = {
            "code": name,
            "message": message,
            "error_positions": [int(p) for p in positions],
            "error_values": [int(v) for v in values],
        }
        cases.append(VectorInput(f"{name}-decode-{label}", "rs_decode", inputs, note))
    return cases


def _flit_cases() -> list[VectorInput]:
    cases = []
    one_bit = bytearray(FLIT_BYTES)
    one_bit[0] = 0x01
    cases.append(
        VectorInput(
            "kp4-flit-bit0",
            "flit_encode",
            {"mode": "kp4", "interleave": 1, "flits": hexstr(bytes(one_bit))},
            "only flit bit 0 set: symbol 0 = 1 (wire bit 0)",
        )
    )
    last = bytearray(FLIT_BYTES)
    last[-1] = 0x80
    cases.append(
        VectorInput(
            "ll-flit-bit5119",
            "flit_encode",
            {"mode": "ll", "interleave": 1, "flits": hexstr(bytes(last))},
            "only flit bit 5119 set: second codeword, symbol 255 = 0x200",
        )
    )
    for mode, interleave in [("kp4", 1), ("kp4", 2), ("kp4", 4), ("ll", 1), ("ll", 2),
                             ("ll", 4), ("none", 1)]:  # fmt: skip
        count = max(1, interleave // MODES[mode].codewords_per_flit)
        flits = prbs_bytes(FLIT_BYTES * count, 0x0BADF00D + interleave)
        inputs = {"mode": mode, "interleave": interleave, "flits": hexstr(flits)}
        cases.append(
            VectorInput(f"{mode}-flit-encode-il{interleave}", "flit_encode", inputs, "PRBS31 flits")
        )
    decode_layouts: list[tuple[str, str, int, int, list[int], str]] = [
        ("kp4", "scattered", 1, 1, [3, 100, 999, 5119, 5120, 5139, 5300, 5439],
         "8 bit errors incl. spare and parity bits: corrected"),
        ("kp4", "burst140", 1, 1, list(range(1001, 1141)),
         "140-bit burst at an odd offset: the 1-way guarantee, corrected"),
        ("kp4", "burst161", 1, 1, list(range(2000, 2161)),
         "161-bit burst: 17 symbols, flagged uncorrectable"),
        ("kp4", "burst590-il4", 4, 4, list(range(7777, 8367)),
         "590-bit burst over 4-way interleave: corrected"),
        ("ll", "scattered", 1, 1, [0, 2559, 2560, 2579, 2580, 2719, 2720, 5439],
         "errors in both codewords incl. spare and parity bits: corrected"),
        ("ll", "burst81", 1, 1, list(range(2720, 2801)),
         "81-bit burst in the second codeword: 9 symbols, flagged"),
        ("none", "scattered", 1, 1, [7, 4000], "no FEC: errors pass through"),
        ("kp4", "burst280-il2", 2, 2, list(range(3001, 3281)),
         "280-bit burst over 2-way interleave (two flits)"),
        ("ll", "burst140-il2", 2, 1, list(range(1001, 1141)),
         "140-bit burst over 2-way interleave"),
        ("ll", "burst280-il4", 4, 2, list(range(3001, 3281)),
         "280-bit burst over 4-way interleave (two flits)"),
    ]  # fmt: skip
    for mode, label, interleave, count, bits, note in decode_layouts:
        flits = prbs_bytes(FLIT_BYTES * count, 0x00C0FFEE + len(bits))
        inputs = {
            "mode": mode,
            "interleave": interleave,
            "flits": hexstr(flits),
            "error_bits": bits,
        }
        cases.append(VectorInput(f"{mode}-flit-decode-{label}", "flit_decode", inputs, note))
    return cases


def vector_inputs() -> list[VectorInput]:
    """All PHY cases, inputs only."""
    cases = [
        VectorInput(
            f"{name}-generator",
            "rs_generator",
            {"code": name},
            "g(x) = prod_{j<2t} (x - alpha^j), highest degree first",
        )
        for name in CODES
    ]
    for name, code in CODES.items():
        cases += _encode_cases(name, code)
        cases += _decode_cases(name, code)
    cases += _flit_cases()
    points = [("kp4", 2.4e-4), ("kp4", 1e-3), ("ll", 1e-3), ("ll", 1e-4), ("none", 1e-5)]
    cases += [
        VectorInput(
            f"{mode}-error-rate-{ber:g}", "error_rate", {"mode": mode, "ber": ber}, "analytic"
        )
        for mode, ber in points
    ]
    return cases
