"""Seeded-bug targets: implementations with one known bug each, for difftest to find.

Each adversarial input source (``adversarial.py``, specs/difftest.md) exists
for a class of bug; :data:`SEEDED` holds one implementation per class that
has exactly that bug, so a test can show that difftest with default settings
finds it, shrinks it and writes a reproducer that ``vectors verify`` and
``difftest replay`` accept. They double as demonstrations::

    ualink-ref difftest --layer phy-kp4-decode \\
        --target "python -m ualink_ref.testing.difftest.seeded_bugs kp4-pad-accepted"

The FEC decoders are a bounded-distance Reed-Solomon decoder written here
from the textbook (syndromes, Berlekamp-Massey, Chien search, Forney) over
the *full-length* code, independent of the model's decoder (it shares only
the GF(2^10) tables and the symbol packing); :class:`DecoderBugs` switches
one check off at a time, and with none off it agrees with the model (tested).
The other targets are the model's codec with one rule changed.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from ualink_ref.dl.crc import CRC_COVERAGE, crc32_bytes
from ualink_ref.dl.flit import capacity
from ualink_ref.dl.formats import COMMAND_HEADER, SEGMENT_HEADER
from ualink_ref.dl.segments import SEGMENT_OFFSETS
from ualink_ref.errors import EncodeError, ReservedBitsError
from ualink_ref.phy import gf
from ualink_ref.phy.flits import FLIT_BYTES, MODES
from ualink_ref.phy.reedsolomon import ReedSolomonCode
from ualink_ref.testing.difftest.adversarial import deinterleave_symbols
from ualink_ref.testing.difftest.layers import CODECS
from ualink_ref.testing.difftest.lengths import check_length, phy_decode_codec
from ualink_ref.testing.difftest.protocol import Outcome, outcome_of
from ualink_ref.testing.difftest.reference_target import serve

# -- a bounded-distance decoder over the full-length code -----------------------------------


@dataclass(frozen=True)
class DecoderBugs:
    """Which check a :class:`SampleDecoder` leaves out (all present by default)."""

    #: Reject a locator root in the shortened (pad) positions, exponents n..1022.
    pad_check: bool = True
    #: Require the Chien search to find exactly deg Lambda roots (else: correct the roots
    #: it found and report success).
    root_count_check: bool = True
    #: Run the Chien search over the parity positions too, not only the message ones.
    chien_parity: bool = True
    #: Clear the error counter at each codeword (else it runs on over a request).
    counter_reset: bool = True
    #: Flag a corrected codeword whose spare message bits are not zero.
    spare_check: bool = True


class SampleDecoder:
    """Hard-decision bounded-distance decoding of one code, as a textbook gives it.

    Symbol index i of a codeword is the coefficient of x^(n-1-i), so its locator is
    X = alpha^(n-1-i); the full-length code has the 1023 exponents 0..1022, of which
    n..1022 are the shortened (always zero, never sent) pad positions.
    """

    def __init__(self, code: ReedSolomonCode, bugs: DecoderBugs) -> None:
        self.code = code
        self.bugs = bugs
        self.two_t = code.n - code.k
        exp, log = gf.tables()
        self._exp, self._log = exp, log
        powers = np.arange(self.two_t)[:, None] * (code.n - 1 - np.arange(code.n))[None, :]
        self._syndrome_logs = powers % gf.ORDER  # log of alpha^(j (n-1-i))
        # Every exponent of the full-length code (roots in the pad are found, then refused
        # by the pad check); without the parity positions, exponents < 2t are skipped.
        lowest = 0 if bugs.chien_parity else code.n - code.k
        self._candidates = np.arange(lowest, gf.ORDER)
        # Python-int tables for the scalar steps: exp[log a + log b] is a * b, zero
        # included (gf.int_tables gives 0 a logarithm that indexes zeros).
        self._iexp, self._ilog = gf.int_tables()

    def _mul(self, a: int, b: int) -> int:
        return self._iexp[self._ilog[a] + self._ilog[b]]

    def _inv(self, a: int) -> int:
        return self._iexp[gf.ORDER - self._ilog[a]]

    def syndromes(self, word: np.ndarray) -> list[int]:
        """S_j = r(alpha^j), j < 2t."""
        nz = np.flatnonzero(word)
        if not nz.size:
            return [0] * self.two_t
        logs = (self._log[word[nz]][None, :] + self._syndrome_logs[:, nz]) % gf.ORDER
        return [int(v) for v in np.bitwise_xor.reduce(self._exp[logs], axis=1)]

    def berlekamp_massey(self, synd: list[int]) -> list[int]:
        """The shortest LFSR (Lambda, low degree first) generating the syndromes."""
        width = self.two_t + 1  # deg Lambda <= 2t throughout
        lam, prev = [1] + [0] * self.two_t, [1] + [0] * self.two_t
        length, gap, last = 0, 1, 1
        for r in range(self.two_t):
            d = synd[r]
            for i in range(1, length + 1):
                d ^= self._mul(lam[i], synd[r - i])
            if d == 0:
                gap += 1
                continue
            coef = self._mul(d, self._inv(last))
            new = lam[:]
            for i in range(width - gap):  # Lambda - (d / last) x^gap B
                new[i + gap] ^= self._mul(coef, prev[i])
            if 2 * length <= r:
                prev, length, last, gap = lam, r + 1 - length, d, 1
            else:
                gap += 1
            lam = new
        return lam[:length + 1]

    def _evaluate(self, poly: list[int], exponents: np.ndarray) -> np.ndarray:
        """poly(alpha^(-e)) for each exponent e."""
        out = np.zeros(exponents.size, dtype=np.int64)
        for degree, c in enumerate(poly):
            if c:
                out ^= self._exp[(int(self._log[c]) - degree * exponents) % gf.ORDER]
        return out

    def decode(self, word: np.ndarray) -> tuple[np.ndarray, int, bool]:
        """``(corrected word, symbols corrected, uncorrectable)`` for ``n`` symbols."""
        synd = self.syndromes(word)
        if not any(synd):
            return word, 0, False
        lam = self.berlekamp_massey(synd)
        length = len(lam) - 1
        if length > self.code.t:
            return word, 0, True
        roots = self._candidates[self._evaluate(lam, self._candidates) == 0]
        if roots.size > length or (roots.size < length and self.bugs.root_count_check):
            return word, 0, True
        if self.bugs.pad_check and (roots >= self.code.n).any():
            return word, 0, True
        # Forney, first consecutive root alpha^0: e = X Omega(X^-1) / Lambda'(X^-1).
        omega = [0] * self.two_t
        for i, s in enumerate(synd):
            for j, c in enumerate(lam):
                if i + j < self.two_t:
                    omega[i + j] ^= self._mul(s, c)
        deriv = [c if d % 2 else 0 for d, c in enumerate(lam)][1:]
        num, den = self._evaluate(omega, roots), self._evaluate(deriv, roots)
        fixed = word.copy()
        for e, a, b in zip(roots.tolist(), num.tolist(), den.tolist(), strict=True):
            value = self._mul(self._mul(int(self._exp[e % gf.ORDER]), a), self._inv(b)) if b \
                else 0
            if not value:
                return word, 0, True
            if e < self.code.n:  # a pad position has no symbol to correct
                fixed[self.code.n - 1 - e] ^= value
        return fixed, int(roots.size), False


@dataclass(frozen=True)
class SampleFlitDecoder:
    """``phy-<mode>-decode`` (``interleave`` 1) or ``phy-<mode>-il<N>-decode`` on a
    :class:`SampleDecoder`: wire bytes in, the codec's JSON fields out (specs/phy.md,
    "Flit <-> codeword mapping" and "Interleave")."""

    mode: str
    bugs: DecoderBugs = DecoderBugs()
    interleave: int = 1

    @property
    def codec(self) -> str:
        """The difftest codec this decoder implements."""
        return phy_decode_codec(self.mode, self.interleave)

    def __call__(self, data: bytes) -> dict[str, Any]:
        """Decode one request (one flit, or one interleave group), as the codec does."""
        fec = MODES[self.mode]
        code = fec.code
        assert code is not None
        check_length(self.codec, data)  # specs/difftest.md "Lengths"
        if self.interleave > 1:  # codeword j's symbol i is wire symbol i*N + j
            data = deinterleave_symbols(data, code.n, self.interleave)
        decoder = _decoder(self.mode, self.bugs)
        flits, corrected, flagged, running = [], 0, False, 0
        for at in range(0, len(data), code.codeword_bytes):
            raw = np.frombuffer(data[at:at + code.codeword_bytes], np.uint8)
            word = gf.bytes_to_symbols(raw, code.n).astype(np.int64)
            fixed, count, bad = decoder.decode(word)
            running = count + (0 if self.bugs.counter_reset else running)
            bad = bad or running > code.t
            out = gf.symbols_to_bytes(fixed).tobytes()
            if not bad and self.bugs.spare_check and _spare(out, fec.chunk_bytes, code):
                bad = True
            if bad:
                out, count = raw.tobytes(), 0
            flits.append(out[:fec.chunk_bytes])
            corrected += count
            flagged |= bad
        return {"flit": b"".join(flits).hex(), "corrected": corrected,
                "uncorrectable": flagged}


def _spare(codeword: bytes, chunk: int, code: ReedSolomonCode) -> bool:
    """True when the spare message bits (after the chunk, before the parity) are not 0."""
    bits = int.from_bytes(codeword, "little") >> (8 * chunk)
    return bool(bits & ((1 << (code.message_bits - 8 * chunk)) - 1))


_DECODERS: dict[tuple[str, DecoderBugs], SampleDecoder] = {}


def _decoder(mode: str, bugs: DecoderBugs) -> SampleDecoder:
    key = (mode, bugs)
    if key not in _DECODERS:
        code = MODES[mode].code
        assert code is not None
        _DECODERS[key] = SampleDecoder(code, bugs)
    return _DECODERS[key]


# -- the other codecs: the model with one rule changed -------------------------------------


def _stale_spare_encoder(mode: str) -> Callable[[bytes], bytes]:
    """An encoder whose spare bits keep the last 20 flit bits of the codeword's chunk (a
    message register shifted in without being cleared), instead of zeros."""
    fec = MODES[mode]
    code = fec.code
    assert code is not None

    def encode(data: bytes) -> bytes:
        check_length(f"phy-{mode}-encode", data)  # specs/difftest.md "Lengths"
        out = []
        chunk = fec.chunk_bytes
        for at in range(0, len(data), chunk):
            part = data[at:at + chunk]
            message = gf.bytes_to_symbols(np.frombuffer(part, np.uint8), code.k).astype(
                np.int64)
            tail = int.from_bytes(part, "little") >> (8 * chunk - 2 * gf.M)
            message[code.k - 2], message[code.k - 1] = tail & gf.ORDER, tail >> gf.M
            out.append(gf.symbols_to_bytes(code.encode(message)).tobytes())
        return b"".join(out)

    return encode


def _recrc(data: bytes) -> bytes:
    return data[:CRC_COVERAGE] + crc32_bytes(data[:CRC_COVERAGE])


def dl_alt_sector_ignored(data: bytes) -> dict[str, Any]:
    """DL decoder that ignores the segment headers' reserved ``alt_sector`` bit."""
    reference = CODECS["dl"].reference
    if len(data) == FLIT_BYTES and _recrc(data) == data:
        mask = ~(1 << SEGMENT_HEADER.position("alt_sector").shift) & 0xFF
        cleared = bytearray(data)
        for at, _body in SEGMENT_OFFSETS:
            cleared[at] &= mask
        data = _recrc(bytes(cleared))
    result: dict[str, Any] = reference(data)
    return result


def dl_replay_request_zero(data: bytes) -> dict[str, Any]:
    """DL decoder whose replay-request range check is 0..511 instead of 1..511."""
    reference = CODECS["dl"].reference
    ack = COMMAND_HEADER.position("ack_req_seq")
    word = int.from_bytes(data[:3], "big")
    if len(data) == FLIT_BYTES and _recrc(data) == data and word >> 21 == 3 and not (
            word >> ack.shift) & ack.field.max_value:
        result: dict[str, Any] = reference(_recrc((word | 1 << ack.shift).to_bytes(3, "big")
                                                  + data[3:]))
        return {**result, "ack_req_seq": 0}
    result = reference(data)
    return result


def dl_encode_masks_fields(values: dict[str, Any]) -> bytes:
    """dl-encode that masks an out-of-range ``flit_seq_lo`` / ``ack_req_seq`` to the field's
    width instead of refusing it (8 -> 0, 512 -> 0)."""
    fixed = dict(values)
    for name, top in (("flit_seq_lo", 7), ("ack_req_seq", 511)):
        if isinstance(fixed.get(name), int) and fixed[name] > top:
            fixed[name] &= top
    out: bytes = CODECS["dl-encode"].reference(fixed)
    return out


def dl_encode_capacity_off_by_one(values: dict[str, Any]) -> bytes:
    """dl-encode that refuses TL bytes filling the flit exactly (``>=`` for ``>``)."""
    messages = values.get("messages")
    if (isinstance(messages, list) and len(messages) == 5 and isinstance(values.get("tl"), str)
            and len(values["tl"]) // 2 == capacity(tuple(messages))):
        raise EncodeError("DLFlit: TL bytes exceed the capacity")
    out: bytes = CODECS["dl-encode"].reference(values)
    return out


def dl_encode_unknown_op_explicit(values: dict[str, Any]) -> bytes:
    """dl-encode that encodes an op name it does not know as ``explicit``."""
    if values.get("op") not in ("explicit", "replay", "ack", "replay_request"):
        values = {**values, "op": "explicit"}
    out: bytes = CODECS["dl-encode"].reference(values)
    return out


def dl_message_compressed_ignored(data: bytes) -> dict[str, Any]:
    """dl-message decoder that ignores the ``compressed`` bit (decodes the word as if 0)."""
    if len(data) == 4:
        data = (int.from_bytes(data, "big") & ~1).to_bytes(4, "big")
    result: dict[str, Any] = CODECS["dl-message"].reference(data)
    return result


def tl_field_ftype_3_bits(data: bytes) -> dict[str, Any]:
    """tl-field decoder that reads FTYPE as 3 bits (FTYPE 8..14 decode as 0..6)."""
    if data:
        data = bytes([data[0] & 0x7F]) + data[1:]
    result: dict[str, Any] = CODECS["tl-field"].reference(data)
    return result


def tl_field_len_5_bits(data: bytes) -> dict[str, Any]:
    """tl-field decoder that keeps 5 bits of a request's 6-bit ``len`` (63 -> 31)."""
    result: dict[str, Any] = CODECS["tl-field"].reference(data)
    if "len" in result["values"] and result["format"] in ("tl_request",
                                                          "tl_compressed_request"):
        result["values"]["len"] &= 31
    return result


def tl_flit_unknown_as_nop(data: bytes) -> dict[str, Any]:
    """tl-flit dissector that skips a control sector with an FTYPE 7..15 as a NOP."""
    if len(data) == 64:
        out = bytearray(data)
        for s in range(8):  # sectors of the first half (a control half in these inputs)
            if out[4 * s] >> 4 >= 7:
                out[4 * s:4 * s + 4] = bytes(4)
        data = bytes(out)
    result: dict[str, Any] = CODECS["tl-flit"].reference(data)
    return result


def tl_flit_rejects_spare(data: bytes) -> dict[str, Any]:
    """tl-flit dissector that rejects a response whose spare bits are set (the model's
    dissection ignores them)."""
    result: dict[str, Any] = CODECS["tl-flit"].reference(data)
    for half in result["halves"]:
        for field in half.get("fields", []):
            if field.get("spare"):
                raise ReservedBitsError(f"{field['format']}.spare", field["spare"])
    return result


def tl_flit_owed_3_bits(data: bytes) -> dict[str, Any]:
    """tl-flit dissector that counts owed data halves in 3 bits (8 wraps to 0)."""
    result: dict[str, Any] = CODECS["tl-flit"].reference(data)
    result["pending_after"] %= 8
    return result


@dataclass(frozen=True)
class Seeded:
    """One seeded-bug target: the codec it implements, the input source meant to find its
    bug, what the bug is, and the implementation (input -> output, or raises)."""

    codec: str
    source: str
    bug: str
    implementation: Callable[[Any], Any]


def _fec(mode: str, bugs: DecoderBugs, interleave: int = 1) -> Callable[[bytes], dict[str, Any]]:
    return SampleFlitDecoder(mode, bugs, interleave)


def _build() -> dict[str, Seeded]:
    out: dict[str, Seeded] = {}
    for mode in ("kp4", "ll"):
        codec = f"phy-{mode}-decode"
        none = DecoderBugs()
        out[f"{mode}-pad-accepted"] = Seeded(
            codec, "pad_miscorrect", "corrections landing in the shortened (pad) positions "
            "are accepted and dropped", _fec(mode, replace(none, pad_check=False)))
        out[f"{mode}-root-count-unchecked"] = Seeded(
            codec, "t_plus_1", "success is reported without checking that the Chien "
            "search found deg Lambda roots", _fec(mode, replace(none, root_count_check=False)))
        out[f"{mode}-chien-message-only"] = Seeded(
            codec, "parity_errors", "the Chien search skips the parity positions",
            _fec(mode, replace(none, chien_parity=False)))
        # KP4 at interleave 1 is one codeword a request, nothing comes "between": its
        # counter bug is seeded on the 2-way interleaved codec, where a burst puts about
        # half its symbols in each codeword.
        depth = 1 if MODES[mode].codewords_per_flit > 1 else 2
        out[f"{mode}-counter-not-reset"] = Seeded(
            phy_decode_codec(mode, depth), "boundary_burst", "the error counter is not "
            "cleared between codewords", _fec(mode, replace(none, counter_reset=False), depth))
        out[f"{mode}-spare-unchecked"] = Seeded(
            codec, "spare_set", "spare bits are not checked after correction",
            _fec(mode, replace(none, spare_check=False)))
        out[f"{mode}-spare-stale"] = Seeded(
            f"phy-{mode}-encode", "spare_edge", "the spare bits keep the chunk's last 20 "
            "flit bits instead of zeros", _stale_spare_encoder(mode))
    out.update({
        "dl-alt-sector-ignored": Seeded("dl", "reserved", "segment-header alt_sector "
                                        "not checked", dl_alt_sector_ignored),
        "dl-replay-request-zero": Seeded("dl", "rule_boundary", "a replay request naming 0 "
                                         "is accepted", dl_replay_request_zero),
        "dl-encode-masks-fields": Seeded("dl-encode", "out_of_range", "out-of-range "
                                         "sequence fields masked, not refused",
                                         dl_encode_masks_fields),
        "dl-encode-capacity-off-by-one": Seeded("dl-encode", "boundary", "TL bytes at the "
                                                "exact capacity refused",
                                                dl_encode_capacity_off_by_one),
        "dl-encode-unknown-op-explicit": Seeded("dl-encode", "unknown_enum", "an unknown op "
                                                "name encoded as explicit",
                                                dl_encode_unknown_op_explicit),
        "dl-message-compressed-ignored": Seeded("dl-message", "unknown_enum", "the "
                                                "compressed bit ignored",
                                                dl_message_compressed_ignored),
        "tl-field-ftype-3-bits": Seeded("tl-field", "unknown_enum", "FTYPE read as 3 bits",
                                        tl_field_ftype_3_bits),
        "tl-field-len-5-bits": Seeded("tl-field", "boundary", "a request's len kept in 5 "
                                      "bits", tl_field_len_5_bits),
        "tl-flit-unknown-as-nop": Seeded("tl-flit", "unknown_enum", "an unknown FTYPE "
                                         "sector skipped as a NOP", tl_flit_unknown_as_nop),
        "tl-flit-rejects-spare": Seeded("tl-flit", "reserved", "response spare bits "
                                        "rejected", tl_flit_rejects_spare),
        "tl-flit-owed-3-bits": Seeded("tl-flit", "boundary", "owed data halves counted in "
                                      "3 bits", tl_flit_owed_3_bits),
    })
    return out


#: Every seeded-bug target by name.
SEEDED: dict[str, Seeded] = _build()


def respond(name: str, line: str) -> str:
    """The seeded target's response line to one request line."""
    target = SEEDED[name]
    codec = CODECS[target.codec]
    try:
        data = codec.parse_request(line)
    except ValueError:
        return Outcome("").line()
    outcome: Outcome = outcome_of(target.implementation, data)
    return outcome.line()


def main(argv: Sequence[str] | None = None) -> int:
    """Serve one seeded target on stdin/stdout (the line protocol of specs/difftest.md)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("bug", choices=sorted(SEEDED))
    args = parser.parse_args(argv)
    return serve(lambda line: respond(args.bug, line))


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
