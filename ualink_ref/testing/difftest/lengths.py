"""Which input lengths each difftest codec accepts, and what it answers for the others.

``specs/difftest.md`` "Lengths" is rendered from :data:`LENGTH_RULES`
(:func:`markdown_table`) and ``ualink-ref difftest --list`` prints the same
rules (:func:`list_lines`); ``tests/testing/test_difftest_lengths.py`` checks
every rule against what the model does with inputs of every length.

One request carries one unit: one flit, one message word, one field, one
record; for an interleaved PHY decode codec, one interleave group. The PHY
codecs are the one place where the difftest codec accepts fewer lengths than
the library function it calls (``narrows``): ``phy.flits.encode_flits`` /
``decode_flits`` take any whole number of flits (of interleave groups) at once
(0 included), and difftest asks one flit, or one group, per request (project
choice, reason in the spec: a hardware or C decoder handles one flit or one
group; batching would make every harness loop and invent an answer for zero
flits). :func:`check_length` raises the rule's error: the codecs' references
and the seeded-bug targets apply the rule through it, so it is written once.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ualink_ref.capture.format import (
    FEC_MODES,
    INTERLEAVES,
    MAX_RECORD_BYTES,
    PSEUDO_HEADER,
    PSEUDO_HEADER_BYTES,
    RECORD_KINDS,
)
from ualink_ref.errors import DecodeError, EncodeError, TruncatedError
from ualink_ref.sizes import DL_FLIT_BYTES, TL_FLIT_BYTES, WIRE_BYTES_PER_FLIT
from ualink_ref.tl.fields import FTYPE_NAMES, SECTOR_BYTES, SECTORS

#: Bytes of one DL message word (specs/dl.md).
MESSAGE_BYTES = 4
#: Wire bytes of one flit in the PHY codecs' FEC modes (interleave 1).
PHY_WIRE_BYTES = WIRE_BYTES_PER_FLIT["kp4"]
assert WIRE_BYTES_PER_FLIT["ll"] == PHY_WIRE_BYTES  # both PHY codecs share the one rule
#: Reed-Solomon codewords per flit in each PHY codec's FEC mode (specs/phy.md, "Flit <->
#: codeword mapping"; ``phy.flits.MODES``, not imported here: it brings numpy).
CODEWORDS_PER_FLIT = {"kp4": 1, "ll": 2}
#: Interleave depths of the PHY decode codecs (specs/phy.md, "Interleave").
PHY_INTERLEAVES = (1, 2, 4)


def phy_decode_codec(mode: str, interleave: int) -> str:
    """The name of the PHY decode codec of ``mode`` at ``interleave``: ``phy-kp4-decode``
    (interleave 1), ``phy-kp4-il2-decode``, ``phy-ll-il4-decode``, ..."""
    return f"phy-{mode}-decode" if interleave == 1 else f"phy-{mode}-il{interleave}-decode"


def phy_group(mode: str, interleave: int) -> tuple[int, int]:
    """``(codewords, flits)`` of one request of the PHY decode codec: one interleave
    group of ``interleave`` codewords (symbol i of codeword j at wire symbol i*N + j,
    specs/phy.md), or at interleave 1 one flit; never less than one flit (LL's two
    codewords a flit: its 2-way group is one flit, its 4-way group two)."""
    per_flit = CODEWORDS_PER_FLIT[mode]
    codewords = max(per_flit, interleave)
    return codewords, codewords // per_flit


@dataclass(frozen=True)
class LengthRule:
    """The length rule of one codec (``specs/difftest.md`` "Lengths").

    ``valid`` and ``otherwise`` are the rule in words (the spec table and
    ``--list``); ``wrong_length(data)`` is the same rule as a function: the
    error class the model answers *because of the length* of ``data``, or
    ``None`` when its length is right for it (other checks then decide).
    ``narrows``: difftest applies the rule itself before calling the model's
    library function, which accepts more lengths. ``answer`` is the form of
    an accepted response: ``json`` (fields) or ``hex`` (bytes).
    """

    codec: str
    valid: str
    otherwise: str
    wrong_length: Callable[[Any], str | None]
    answer: str = "json"
    narrows: bool = False
    #: The one valid length, in bytes, of a rule that ``narrows`` (what :func:`check_length`
    #: names in its error).
    size: int | None = None


def _exactly(size: int, error: str) -> Callable[[Any], str | None]:
    def wrong_length(data: Any) -> str | None:
        return None if len(data) == size else error

    return wrong_length


def _tl_field(data: Any) -> str | None:
    """tl.fields.decode_field's order: under one sector, unknown FTYPE, then the FTYPE's size."""
    if len(data) < SECTOR_BYTES:
        return "TruncatedError"
    sectors = SECTORS.get(data[0] >> 4)
    if sectors is None:
        return "FieldRangeError"
    return None if len(data) == sectors * SECTOR_BYTES else "TruncatedError"


def _capture(data: Any) -> str | None:
    """capture.format.CaptureRecord.decode's order: the header, its length field, the
    payload size its kind and FEC mode allow."""
    if len(data) < PSEUDO_HEADER_BYTES:
        return "TruncatedError"
    try:
        head = PSEUDO_HEADER.unpack(bytes(data[:PSEUDO_HEADER_BYTES]))
    except DecodeError:
        return None  # a header field is wrong: that, not the length, is the verdict
    if head["interleave"] not in INTERLEAVES or head["header_length"] != PSEUDO_HEADER_BYTES:
        return None
    payload = len(data) - PSEUDO_HEADER_BYTES
    if head["payload_length"] != payload:
        return "TruncatedError"
    kind = RECORD_KINDS.get(head["record_kind"])
    unit = WIRE_BYTES_PER_FLIT.get(FEC_MODES.get(head["fec_mode"], ""), 0)
    if kind is None or unit == 0:
        return None
    if kind == "dl_flit" and payload != DL_FLIT_BYTES:
        return "CaptureFormatError"
    if kind == "fec_codewords" and (payload == 0 or payload % unit):
        return "CaptureFormatError"
    return "CaptureFormatError" if payload > MAX_RECORD_BYTES else None


def _any_json(data: Any) -> str | None:
    return None


def _ftypes() -> str:
    return ", ".join(f"{FTYPE_NAMES[ft]} {s * SECTOR_BYTES}" for ft, s in sorted(SECTORS.items()))


def _build() -> dict[str, LengthRule]:
    rules: list[LengthRule] = []
    for mode in ("kp4", "ll"):
        rules.append(LengthRule(
            f"phy-{mode}-encode", f"{DL_FLIT_BYTES} bytes (one flit)",
            "EncodeError, 0 bytes and 2 or more flits included (one request is one flit)",
            _exactly(DL_FLIT_BYTES, "EncodeError"), answer="hex", narrows=True,
            size=DL_FLIT_BYTES))
        rules.append(LengthRule(
            f"phy-{mode}-decode", f"{PHY_WIRE_BYTES} bytes (one flit's wire bytes)",
            "TruncatedError, 0 bytes and 2 or more flits included (one request is one flit)",
            _exactly(PHY_WIRE_BYTES, "TruncatedError"), narrows=True, size=PHY_WIRE_BYTES))
        for depth in PHY_INTERLEAVES[1:]:
            codewords, flits = phy_group(mode, depth)
            size = flits * PHY_WIRE_BYTES
            rules.append(LengthRule(
                phy_decode_codec(mode, depth),
                f"{size} bytes (one {depth}-way interleave group: {codewords} codewords, "
                f"{flits} flit{'s' if flits > 1 else ''})",
                "TruncatedError, 0 bytes and 2 or more groups included (one request is one "
                "interleave group)", _exactly(size, "TruncatedError"), narrows=True,
                size=size))
    rules += [
        LengthRule("dl", f"{DL_FLIT_BYTES} bytes", "TruncatedError",
                   _exactly(DL_FLIT_BYTES, "TruncatedError")),
        LengthRule("dl-encode", "a JSON object (no byte length)", "-", _any_json, answer="hex"),
        LengthRule("dl-header", f"{DL_FLIT_BYTES} bytes", "TruncatedError",
                   _exactly(DL_FLIT_BYTES, "TruncatedError")),
        LengthRule("dl-message", f"{MESSAGE_BYTES} bytes",
                   "FieldRangeError (field dl_message, as dl.messages.decode_message)",
                   _exactly(MESSAGE_BYTES, "FieldRangeError")),
        LengthRule("tl-field", f"the size its FTYPE (byte 0, bits 7:4) names: {_ftypes()}",
                   f"TruncatedError; an unknown FTYPE is FieldRangeError at any length from "
                   f"{SECTOR_BYTES}", _tl_field),
        LengthRule("tl-flit", f"{TL_FLIT_BYTES} bytes", "TruncatedError",
                   _exactly(TL_FLIT_BYTES, "TruncatedError")),
        LengthRule("capture",
                   f"{PSEUDO_HEADER_BYTES} + the header's payload_length; the payload "
                   f"{DL_FLIT_BYTES} bytes (dl_flit) or a non-zero multiple of the mode's wire "
                   f"bytes per flit (fec_codewords: kp4, ll {PHY_WIRE_BYTES}; none "
                   f"{DL_FLIT_BYTES}), at most {MAX_RECORD_BYTES}",
                   "TruncatedError (under the header, or payload_length is not the bytes after "
                   "it); CaptureFormatError (a payload size its kind forbids); a bad header field "
                   "is answered first", _capture),
    ]
    return {r.codec: r for r in rules}


#: The length rule of every difftest codec, by codec name.
LENGTH_RULES: dict[str, LengthRule] = _build()


def length_error(codec: str, data: Any) -> str | None:
    """The error class difftest answers for ``data`` before asking the model, when the
    codec's rule ``narrows`` the library function and the length is wrong; else ``None``."""
    rule = LENGTH_RULES.get(codec)
    if rule is None or not rule.narrows:
        return None
    return rule.wrong_length(data)


def check_length(codec: str, data: Any) -> None:
    """Raise the error the codec's rule answers for the length of ``data``
    (:func:`length_error`), the library's own for that error class: ``TruncatedError``
    (decode) or ``EncodeError`` (encode); return when the length is valid."""
    wrong = length_error(codec, data)
    if wrong is None:
        return
    rule = LENGTH_RULES[codec]
    if wrong == "EncodeError":
        raise EncodeError(f"{codec}: a request is {rule.valid}, got {len(data)} bytes")
    raise TruncatedError(codec, rule.size if rule.size is not None else rule.valid, len(data))


def markdown_table() -> str:
    """The "Lengths" table of ``specs/difftest.md`` (the spec holds exactly this text)."""
    rows = ["| Codec | Valid input length | Any other length | Accepted answer |",
            "|---|---|---|---|"]
    rows += [f"| `{r.codec}` | {r.valid} | {r.otherwise} | {r.answer} |"
             for r in LENGTH_RULES.values()]
    return "\n".join(rows)


def list_lines(codec: str) -> list[str]:
    """The length lines ``ualink-ref difftest --list`` prints under ``codec``."""
    rule = LENGTH_RULES[codec]
    return [f"length: {rule.valid}", f"else:   {rule.otherwise}"]


__all__ = ["CODEWORDS_PER_FLIT", "LENGTH_RULES", "PHY_INTERLEAVES", "LengthRule",
           "check_length", "length_error", "list_lines", "markdown_table", "phy_decode_codec",
           "phy_group"]
