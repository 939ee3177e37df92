"""The length rules of the difftest codecs (issue 27, item 7): the model accepts exactly the
lengths specs/difftest.md states and ``difftest --list`` prints, and answers every other
length with the stated error (``ualink_ref.testing.difftest.lengths``)."""

from __future__ import annotations

import random
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("hypothesis")

from hypothesis import find, settings

from ualink_ref.capture.format import PSEUDO_HEADER, CaptureRecord
from ualink_ref.cli import main
from ualink_ref.errors import EncodeError, TruncatedError
from ualink_ref.phy.channel import apply_bit_errors
from ualink_ref.phy.flits import decode_flits, encode_flits
from ualink_ref.testing.difftest import CODECS, LENGTH_RULES, Codec, LengthRule
from ualink_ref.testing.difftest.api import model_outcome
from ualink_ref.testing.difftest.lengths import (
    PHY_INTERLEAVES,
    markdown_table,
    phy_decode_codec,
    phy_group,
)
from ualink_ref.tl.fields import SECTOR_BYTES, SECTORS, encode_field

SPEC = Path(__file__).resolve().parents[2] / "specs" / "difftest.md"
BYTE_CODECS = [name for name, codec in CODECS.items() if not codec.json_input]


def accepted_valid(codec: Codec, also: Any = None) -> bytes:
    """An input of the codec's ``valid`` source that the model accepts (and ``also`` holds)."""
    case = find(codec.strategy(), lambda c: c.source == "valid"
                and model_outcome(codec, c.data).error is None and (also is None or also(c.data)),
                settings=settings(database=None, max_examples=5000))
    return bytes(case.data)


def witnesses(name: str) -> list[bytes]:
    """Inputs the model accepts: one of each valid length (per FTYPE, per record kind)."""
    codec = CODECS[name]
    if name == "tl-field":
        return [encode_field(ft, {}) for ft in SECTORS]  # every field at its defaults
    if name == "capture":
        wire = encode_flits(bytes(1280), "kp4", 1)
        return [accepted_valid(codec), CaptureRecord(wire, kind="fec_codewords").encode(),
                CaptureRecord(bytes(640), kind="fec_codewords", fec_mode="none").encode()]
    return [accepted_valid(codec)]


def _capture_headers() -> list[bytes]:
    """Records whose payload_length is right but whose payload size their kind may forbid."""
    out = []
    base = PSEUDO_HEADER.unpack(CaptureRecord(bytes(640)).encode()[:16])
    for kind in (0, 1):
        for fec in (0, 1, 2):
            for size in (0, 1, 639, 640, 641, 680, 1279, 1280, 1360, 1361):
                values = dict(base, record_kind=kind, fec_mode=fec, payload_length=size)
                out.append(PSEUDO_HEADER.pack(values) + bytes(size))
    return out


def probe_inputs(name: str, seen: list[bytes]) -> list[bytes]:
    """Inputs of every length from 0 to past two units, and 0..3 whole units of the
    witnesses: zeros, ones, random bytes, and the witnesses cut, padded and repeated."""
    rng = random.Random(27)
    top = 2 * max(len(w) for w in seen) + 8
    lengths = sorted(set(range(0, 80)) | set(range(max(0, top - 80), top)) | {
        k * len(w) + d for w in seen for k in range(4) for d in (-1, 0, 1) if k * len(w) + d >= 0})
    out = []
    for n in lengths:
        out += [bytes(n), b"\xff" * n, rng.randbytes(n)]
        out += [(w * (n // len(w) + 1))[:n] for w in seen]
    if name == "capture":
        out += _capture_headers()
    return out


def _library_decode(mode: str, interleave: int = 1) -> Any:
    def decode(data: bytes) -> dict[str, Any]:
        r = decode_flits(data, mode, interleave)
        return {"flit": r.flits.hex(), "corrected": int(r.corrected.sum()),
                "uncorrectable": bool(r.uncorrectable.any())}
    return decode


def _library_encode(mode: str) -> Any:
    return lambda data: encode_flits(data, mode, 1)


#: The library function under each codec whose rule narrows it.
_LIBRARY: dict[str, Any] = {
    **{phy_decode_codec(m, d): _library_decode(m, d) for m in ("kp4", "ll")
       for d in PHY_INTERLEAVES},
    **{f"phy-{m}-encode": _library_encode(m) for m in ("kp4", "ll")},
}


def mismatches(rule: LengthRule, codec: Codec, inputs: list[bytes],
               seen: list[bytes]) -> list[str]:
    """Where the model's answers break ``rule``: an accepted input the rule calls the wrong
    length, a wrong length answered otherwise than the rule says, a stated length with no
    accepted input. The model is the library function, with the rule applied first when the
    rule ``narrows`` it (as difftest does)."""
    # No rule of its own: the library function (the PHY codecs' references apply their
    # one-flit rule themselves; under it, decode_flits / encode_flits take any number).
    raw = replace(codec, name=codec.name + "/raw",
                  reference=_LIBRARY.get(codec.name, codec.reference))
    bad = []
    for data in inputs:
        wrong = rule.wrong_length(data)
        verdict = wrong if rule.narrows and wrong else model_outcome(raw, data).verdict
        if verdict == "accept" and wrong is not None:
            bad.append(f"{len(data)} bytes accepted, the rule says {wrong}")
        elif wrong is not None and verdict != wrong:
            bad.append(f"{len(data)} bytes answered {verdict}, the rule says {wrong}")
    for w in seen:
        if rule.wrong_length(w) is not None:
            bad.append(f"{len(w)} bytes (an accepted input) outside the rule")
    return sorted(set(bad))[:10]


@pytest.mark.parametrize("name", BYTE_CODECS)
def test_model_accepts_exactly_the_stated_lengths(name: str) -> None:
    codec, rule = CODECS[name], LENGTH_RULES[name]
    seen = witnesses(name)
    assert all(model_outcome(codec, w).error is None for w in seen)
    inputs = probe_inputs(name, seen)
    assert mismatches(rule, codec, inputs, seen) == []
    # difftest's own model answers the same (the rule applied where it narrows).
    for data in inputs[::7]:
        wrong = rule.wrong_length(data)
        if wrong is not None:
            assert model_outcome(codec, data).verdict == wrong


def test_a_wrong_rule_is_caught() -> None:
    """The check can fail: a rule that says too much or too little is reported."""
    for name, wrong_rule in [
        ("dl-message", replace(LENGTH_RULES["dl-message"], wrong_length=lambda d: None
                               if len(d) == 5 else "FieldRangeError")),
        ("phy-kp4-decode", replace(LENGTH_RULES["phy-kp4-decode"], narrows=False)),
        ("dl", replace(LENGTH_RULES["dl"], wrong_length=lambda d: None if len(d) == 640
                       else "FieldRangeError")),
    ]:
        seen = witnesses(name)
        assert mismatches(wrong_rule, CODECS[name], probe_inputs(name, seen), seen), name


@pytest.mark.parametrize("mode", ["kp4", "ll"])
def test_phy_library_takes_whole_flits_and_difftest_one(mode: str) -> None:
    """What the PHY rule narrows (specs/difftest.md, "Lengths"): ``decode_flits`` takes 0 or k
    flits, concatenating them, summing ``corrected`` and OR-ing ``uncorrectable``; difftest's
    model answers those lengths with TruncatedError (and encode with EncodeError)."""
    clean = encode_flits(bytes(640), mode, 1)
    three = apply_bit_errors(clean, [0, 100, 200])  # three symbol errors: corrected
    garbage = bytes(random.Random(1).randbytes(680))  # far beyond t: flagged
    two = decode_flits(three + garbage, mode, 1)
    one_a, one_b = decode_flits(three, mode, 1), decode_flits(garbage, mode, 1)
    assert two.flits == one_a.flits + one_b.flits
    assert int(two.corrected.sum()) == int(one_a.corrected.sum()) + int(one_b.corrected.sum())
    assert bool(two.uncorrectable.any()) == (bool(one_a.uncorrectable.any())
                                             or bool(one_b.uncorrectable.any())) is True
    assert decode_flits(b"", mode, 1).flits == b""
    decode, encode = CODECS[f"phy-{mode}-decode"], CODECS[f"phy-{mode}-encode"]
    for data in (b"", clean * 2, clean * 3):
        assert model_outcome(decode, data).verdict == "TruncatedError"
        with pytest.raises(TruncatedError):  # the codec's own reference applies the rule
            decode.reference(data)
        assert not decode_flits(data, mode, 1).uncorrectable.any()  # the library accepts it
    for data in (b"", bytes(1280)):
        assert model_outcome(encode, data).verdict == "EncodeError"
        with pytest.raises(EncodeError):
            encode.reference(data)
        encode_flits(data, mode, 1)  # the library accepts it


@pytest.mark.parametrize(("mode", "depth"), [("kp4", 2), ("kp4", 4), ("ll", 2), ("ll", 4)])
def test_interleaved_library_takes_whole_groups_and_difftest_one(mode: str, depth: int) -> None:
    """The interleaved decode codecs narrow ``decode_flits(.., interleave=N)`` (any whole
    number of groups) to one group: N codewords, N flits for kp4, N/2 for ll; the answer is
    the group's flits, ``corrected`` summed and ``uncorrectable`` OR-ed."""
    _codewords, flits = phy_group(mode, depth)
    clean = encode_flits(bytes(640 * flits), mode, depth)
    damaged = apply_bit_errors(clean, [0, 100, 200])
    codec = CODECS[phy_decode_codec(mode, depth)]
    answer = codec.reference(damaged)
    library = decode_flits(damaged, mode, depth)
    assert answer == {"flit": bytes(640 * flits).hex(), "corrected": 3,
                      "uncorrectable": False} and int(library.corrected.sum()) == 3
    for data in (b"", clean * 2, clean[:-1], clean + bytes(1)):
        assert model_outcome(codec, data).verdict == "TruncatedError"
        with pytest.raises(TruncatedError):
            codec.reference(data)
    assert decode_flits(clean * 2, mode, depth).ok  # the library accepts two groups


def test_spec_table_is_the_rules() -> None:
    text = SPEC.read_text()
    block = text.split("<!-- length-table -->")[1].split("<!-- /length-table -->")[0]
    assert block.strip() == markdown_table()


def test_list_prints_every_rule(capsys) -> None:
    assert main(["difftest", "--list"]) == 0
    out = capsys.readouterr().out
    for name, rule in LENGTH_RULES.items():
        at = out.index(name)
        section = out[at:at + 2000]
        assert f"length: {rule.valid}" in section and f"else:   {rule.otherwise}" in section
    assert SECTOR_BYTES == 4  # the tl-field row counts in 4-byte sectors
