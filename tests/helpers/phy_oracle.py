"""Independent, deliberately naive PHY oracle for the tests (not the model's code).

Bits are handled as Python lists, Reed–Solomon parity comes from reedsolo
(an independent implementation), interleave is done symbol by symbol. Slow
but obviously right; the tests compare the vectorized model against it.
"""

from __future__ import annotations

import reedsolo

FLIT_BYTES = 640
CODES = {"kp4": (544, 514), "ll": (272, 258)}
CODEWORDS_PER_FLIT = {"kp4": 1, "ll": 2}

_RS: dict[str, reedsolo.RSCodec] = {}


def rs(code: str) -> reedsolo.RSCodec:
    n, k = CODES[code]
    if code not in _RS:
        _RS[code] = reedsolo.RSCodec(
            nsym=n - k, nsize=n, c_exp=10, prim=0x409, fcr=0, generator=2
        )
    return _RS[code]


def rs_encode(code: str, message: list[int]) -> list[int]:
    return [int(s) for s in rs(code).encode(list(message))]


def bits_of(data: bytes) -> list[int]:
    return [(byte >> b) & 1 for byte in data for b in range(8)]


def pack(bits: list[int]) -> bytes:
    bits = bits + [0] * (-len(bits) % 8)
    return bytes(sum(bits[i + b] << b for b in range(8)) for i in range(0, len(bits), 8))


def to_symbols(bits: list[int]) -> list[int]:
    assert len(bits) % 10 == 0
    return [sum(bits[i + b] << b for b in range(10)) for i in range(0, len(bits), 10)]


def from_symbols(symbols: list[int]) -> list[int]:
    return [(s >> b) & 1 for s in symbols for b in range(10)]


def encode_flits(flits: bytes, mode: str, interleave: int) -> bytes:
    if mode == "none":
        return flits
    n, k = CODES[mode]
    per = CODEWORDS_PER_FLIT[mode]
    chunk = FLIT_BYTES // per
    codewords = []
    for start in range(0, len(flits), chunk):
        bits = bits_of(flits[start : start + chunk])
        bits += [0] * (10 * k - len(bits))  # spare bits
        codewords.append(rs_encode(mode, to_symbols(bits)))
    wire_symbols: list[int] = []
    for g in range(0, len(codewords), interleave):
        group = codewords[g : g + interleave]
        for i in range(n):
            for cw in group:
                wire_symbols.append(cw[i])
    return pack(from_symbols(wire_symbols))


def symbol_of_bit(mode: str, interleave: int, bit: int) -> tuple[int, int]:
    """(codeword number, symbol index) that wire bit ``bit`` belongs to."""
    n, _ = CODES[mode]
    group, rest = divmod(bit // 10, n * interleave)
    i, j = divmod(rest, interleave)
    return group * interleave + j, i
