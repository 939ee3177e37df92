"""Per-codec adapters for differential testing: the model's side of every codec.

A :class:`Codec` says how to draw inputs (from the public strategies: valid
values, near-valid mutations, raw bytes), what the model answers, how the
input travels on the line protocol, how a byte output splits into named
fields, and which golden-vector kind a reproducer maps onto. ``CODECS``
holds them by name (the ``--layer`` of ``ualink-ref difftest``).

Imports Hypothesis (the ``test`` extra) when a strategy is built, and the
layer codecs lazily, so listing the codecs is cheap.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from ualink_ref.capture.format import PSEUDO_HEADER, CaptureRecord
from ualink_ref.dl import formats as F
from ualink_ref.dl.crc import CRC_COVERAGE, crc32, crc32_bytes
from ualink_ref.dl.flit import SEGMENT_LENGTHS, DLFlit
from ualink_ref.dl.formats import COMMAND_HEADER, EXPLICIT_HEADER, FlitOp
from ualink_ref.dl.messages import decode_message
from ualink_ref.dl.segments import SEGMENT_OFFSETS
from ualink_ref.errors import CrcError, EncodeError, TruncatedError
from ualink_ref.phy import gf
from ualink_ref.phy.channel import apply_bit_errors
from ualink_ref.phy.flits import FLIT_BYTES, MODES, decode_flits, encode_flits
from ualink_ref.testing.difftest import adversarial as ADV
from ualink_ref.testing.difftest.lengths import (
    PHY_INTERLEAVES,
    check_length,
    length_error,
    phy_decode_codec,
    phy_group,
)
from ualink_ref.testing.difftest.protocol import Difference
from ualink_ref.tl.fields import FORMATS, decode_field, encode_field
from ualink_ref.tl.flit import dissect, view_to_json

#: Labels of input sources (``Case.source``), for the coverage summary; the adversarial
#: ones come from :mod:`ualink_ref.testing.difftest.adversarial`.
SOURCES = ("valid", "boundary", "bit_flip", "bit_flip_recrc", "reserved", "unknown_enum",
           "truncate", "extend", "raw", "symbol_errors", *ADV.ADVERSARIAL_SOURCES)


@dataclass(frozen=True)
class Case:
    """One generated input and where it came from (``source``, one of :data:`SOURCES`)."""

    source: str
    data: Any  # bytes for hex-in codecs, dict for encoders


@dataclass(frozen=True)
class Codec:
    """The model's side of one codec under differential test."""

    name: str
    layer: str  # golden-vector layer of its reproducers
    summary: str
    json_input: bool  # True: requests are JSON objects (encoders); False: hex
    strategy: Callable[[], Any]  # () -> SearchStrategy[Case]
    reference: Callable[[Any], Any]  # the model: input -> bytes | dict, or raises
    vector: Callable[[Any], tuple[str, dict[str, Any]] | None]  # golden-vector kind, inputs
    locate: Callable[[bytes, bytes], list[Difference]] | None = None

    def request_line(self, data: Any) -> str:
        """The request line (no newline) carrying ``data``."""
        if self.json_input:
            return json.dumps(data, sort_keys=True, separators=(",", ":"))
        return bytes(data).hex()

    def parse_request(self, line: str) -> Any:
        """Inverse of :meth:`request_line` (used by targets speaking the protocol)."""
        text = line.strip()
        return json.loads(text) if self.json_input else bytes.fromhex(text)


# -- shared strategy helpers ---------------------------------------------------------


def _st() -> Any:
    from hypothesis import strategies as st

    return st


def _near_valid(valid: Any, *, flips: int = 3, max_extra: int = 8) -> list[Any]:
    """Bit flips, truncations and extensions of ``valid`` bytes, labelled."""
    from ualink_ref.testing import strategies as S

    return [
        S.bit_flips(valid, max_flips=flips).map(lambda m: Case("bit_flip", m.data)),
        S.truncations(valid).map(lambda m: Case("truncate", m.data)),
        S.extensions(valid, max_extra=max_extra).map(lambda m: Case("extend", m.data)),
    ]


def _labelled(sources: list[ADV.Source]) -> list[Any]:
    """Adversarial ``(label, strategy)`` pairs as strategies of :class:`Case`."""
    return [strategy.map(_as_case(label)) for label, strategy in sources]


def _as_case(label: str) -> Callable[[Any], Case]:
    return lambda data: Case(label, data)


def _raw(length: int) -> Any:
    st = _st()
    return st.one_of(st.binary(min_size=length, max_size=length),
                     st.binary(max_size=2 * length)).map(lambda b: Case("raw", b))


# -- PHY: flit <-> wire, per FEC mode ---------------------------------------------------


def _phy_encode(mode: str) -> Codec:
    name = f"phy-{mode}-encode"

    def reference(data: bytes) -> bytes:
        check_length(name, data)  # one flit a request; encode_flits takes any number
        return encode_flits(data, mode, 1)

    def strategy() -> Any:
        st = _st()
        flit = st.binary(min_size=640, max_size=640)
        sparse = st.lists(st.integers(0, 5119), max_size=4).map(_bits_set)
        return st.one_of(flit.map(lambda b: Case("valid", b)),
                         sparse.map(lambda b: Case("boundary", b)),
                         st.sampled_from([bytes(640), b"\xff" * 640]).map(
                             lambda b: Case("boundary", b)),
                         *_labelled(ADV.fec_encode_sources(mode)))

    def vector(data: bytes) -> tuple[str, dict[str, Any]] | None:
        if length_error(name, data):
            return None  # a length difftest answers itself is no case of encode_flits
        return "flit_encode", {"mode": mode, "interleave": 1, "flits": data.hex()}

    return Codec(name, "phy",
                 f"640-byte flit -> {mode} wire bytes (interleave 1)", False, strategy,
                 reference, vector, _symbol_locator(mode))


def _bits_set(bits: list[int]) -> bytes:
    out = bytearray(640)
    for b in bits:
        out[b // 8] |= 1 << (b % 8)
    return bytes(out)


def _symbol_locator(mode: str) -> Callable[[bytes, bytes], list[Difference]]:
    def locate(model: bytes, target: bytes) -> list[Difference]:


        code = MODES[mode].code
        if code is None or len(model) != len(target) or len(model) % code.codeword_bytes:
            return []
        out = []
        a = gf.bytes_to_symbols(np.frombuffer(model, np.uint8).reshape(-1, code.codeword_bytes),
                                code.n)
        b = gf.bytes_to_symbols(np.frombuffer(target, np.uint8).reshape(-1, code.codeword_bytes),
                                code.n)
        for cw, sym in zip(*np.nonzero(a != b), strict=True):
            part = "message" if sym < code.k else "parity"
            out.append(Difference(f"codeword[{cw}].symbol[{sym}] ({part})",
                                  f"{int(a[cw, sym]):#05x}", f"{int(b[cw, sym]):#05x}"))
            if len(out) >= 8:
                break
        return out

    return locate


def _phy_decode(mode: str, interleave: int = 1) -> Codec:
    """``phy-<mode>-decode`` (one flit a request) or, at ``interleave`` 2 or 4,
    ``phy-<mode>-il<N>-decode`` (one interleave group a request, lengths.phy_group)."""
    name = phy_decode_codec(mode, interleave)
    fec = MODES[mode]
    code = fec.code
    assert code is not None
    codewords, flits = phy_group(mode, interleave)
    wire_bytes = flits * fec.wire_bytes_per_flit

    def reference(data: bytes) -> dict[str, Any]:
        check_length(name, data)  # one flit / group a request; decode_flits takes any number
        r = decode_flits(data, mode, interleave)
        return {"flit": r.flits.hex(), "corrected": int(r.corrected.sum()),
                "uncorrectable": bool(r.uncorrectable.any())}

    def strategy() -> Any:

        st = _st()
        t = (code.n - code.k) // 2
        wire = st.binary(min_size=flits * FLIT_BYTES, max_size=flits * FLIT_BYTES).map(
            lambda f: encode_flits(f, mode, interleave))

        @st.composite  # type: ignore[untyped-decorator]
        def with_errors(draw: Any) -> Case:
            clean = bytearray(draw(wire))
            count = draw(st.integers(0, t + 2))
            for sym in draw(st.lists(st.integers(0, codewords * code.n - 1),
                                     min_size=count, max_size=count, unique=True)):
                bit = 10 * sym + draw(st.integers(0, 9))
                clean[bit // 8] ^= 1 << (bit % 8)
            return Case("symbol_errors", bytes(clean))

        return st.one_of(wire.map(lambda b: Case("valid", b)), with_errors(),
                         *_near_valid(wire, max_extra=4), _raw(wire_bytes),
                         *_labelled(ADV.fec_decode_sources(mode, interleave)))

    def vector(data: bytes) -> tuple[str, dict[str, Any]] | None:
        if length_error(name, data):
            return None  # a length difftest answers itself is no case of decode_flits
        # Any flit bits will do: the received ones (each codeword's first chunk bytes,
        # after de-interleaving); the errors are then the bits that differ from their
        # encoding, so the vector's received wire is exactly ``data``.
        words = data if interleave == 1 else ADV.deinterleave_symbols(data, code.n, interleave)
        size = code.codeword_bytes
        sent = b"".join(words[c * size:c * size + fec.chunk_bytes] for c in range(codewords))
        clean = encode_flits(sent, mode, interleave)
        bits = [8 * i + b for i in range(len(data)) for b in range(8)
                if (clean[i] ^ data[i]) >> b & 1]
        return "flit_decode", {"mode": mode, "interleave": interleave, "flits": sent.hex(),
                               "error_bits": _vector_bit_positions(bits)}

    if interleave == 1:
        summary = f"{mode} wire bytes ({wire_bytes}) -> corrected flit, symbols corrected, flag"
    else:
        summary = (f"{mode} wire bytes of one {interleave}-way interleave group ({wire_bytes}) "
                   "-> corrected flits, symbols corrected (summed), flag (OR)")
    return Codec(name, "phy", summary, False, strategy, reference, vector)


def _vector_bit_positions(lsb_first: list[int]) -> list[int]:
    """Our LSB-first bit indices in the numbering ``apply_bit_errors`` uses."""

    msb_first = apply_bit_errors(bytes(1), [0]) == b"\x80"
    return sorted(8 * (p // 8) + (7 - p % 8) if msb_first else p for p in lsb_first)


# -- DL flits --------------------------------------------------------------------------


def _flit_fields(f: Any) -> dict[str, Any]:
    return {"op": f.op.name.lower(), "flit_seq": f.flit_seq, "ack_req_seq": f.ack_req_seq,
            "flit_seq_lo": f.flit_seq_lo, "tl": f.tl.hex(),
            "first_tl_start": f.first_tl_start, "messages": list(f.messages)}


def _recrc(data: bytes) -> bytes:

    return data[:CRC_COVERAGE] + crc32_bytes(data[:CRC_COVERAGE])


def _dl_inputs(*, header_reserved: bool) -> Any:
    """Cases for the DL flit decoders: valid flits, bit flips with and without a fixed
    CRC, reserved header bits set (CRC fixed), wrong lengths, raw bytes."""
    from ualink_ref.testing import strategies as S

    st = _st()
    flits = S.dl_flits().map(lambda f: f.encode())

    @st.composite  # type: ignore[untyped-decorator]
    def reserved(draw: Any) -> Case:
        data = draw(flits)
        fmt = COMMAND_HEADER if data[0] >> 5 in (2, 3) else EXPLICIT_HEADER
        field = draw(st.sampled_from([f for f in fmt.fields if f.reserved]))
        pos = fmt.position(field.name)
        word = int.from_bytes(data[:3], "big") | (draw(st.integers(1, field.max_value))
                                                  << pos.shift)
        return Case("reserved", _recrc(word.to_bytes(3, "big") + data[3:]))

    head = 3 if header_reserved else 636  # where re-CRC'd flips land
    recrc = st.tuples(flits, st.lists(st.integers(0, 8 * head - 1), min_size=1, max_size=3,
                                      unique=True)).map(
        lambda fb: Case("bit_flip_recrc", _recrc(_flip(fb[0], fb[1]))))
    unknown = S.unknown_enum_values(EXPLICIT_HEADER).map(
        lambda h: Case("unknown_enum", _recrc(h + bytes(637))))
    return st.one_of(flits.map(lambda b: Case("valid", b)), recrc, reserved(), unknown,
                     *_near_valid(flits, max_extra=4), *_labelled(ADV.dl_flit_sources(flits)),
                     _raw(640).map(lambda c: Case("raw", _recrc(c.data) if len(c.data) == 640
                                                  else c.data)))


def _flip(data: bytes, bits: list[int]) -> bytes:
    word = bytearray(data)
    for b in bits:
        word[b // 8] ^= 0x80 >> (b % 8)
    return bytes(word)


def _dl_decode_reference(data: bytes) -> dict[str, Any]:

    return _flit_fields(DLFlit.decode(data))


def _dl_header_reference(data: bytes) -> dict[str, Any]:
    """The header-only check the cocotb example's RTL implements: length, CRC-32 over
    bytes 0..635, op known, header reserved fields zero; the five header fields out."""

    if len(data) != 640:
        raise TruncatedError("DL flit", 640, len(data))
    stored = int.from_bytes(data[CRC_COVERAGE:], "big")
    actual = crc32(data[:CRC_COVERAGE])
    if stored != actual:
        raise CrcError(stored, actual, "DL flit CRC")
    fmt = COMMAND_HEADER if data[0] >> 5 in (2, 3) else EXPLICIT_HEADER
    values = fmt.unpack(data[:3])  # unknown op: FieldRangeError; reserved: ReservedBitsError
    return {"op": values["op"], "payload": values["payload"],
            "flit_seq": values.get("flit_seq", 0), "ack_req_seq": values.get("ack_req_seq", 0),
            "flit_seq_lo": values.get("flit_seq_lo", 0)}


def _dl_decode_vector(data: bytes) -> tuple[str, dict[str, Any]] | None:
    return "flit_decode", {"flit": data.hex()}


def _dl_encode_reference(values: dict[str, Any]) -> bytes:
    """``DLFlit.encode`` of the request's fields; a request the model cannot read (an op
    name that is not a flit op, a missing field, ``tl`` not hex) is an ``EncodeError``."""
    if not isinstance(values, dict):
        raise EncodeError(f"DLFlit: a request is a JSON object, got {type(values).__name__}")
    name = values.get("op")
    op = FlitOp.__members__.get(name.upper()) if isinstance(name, str) else None
    if op is None:
        raise EncodeError(f"DLFlit: unknown op {name!r}", field="op")
    try:
        tl = bytes.fromhex(values["tl"])
        fields = (values["flit_seq"], values["ack_req_seq"], values["flit_seq_lo"],
                  values["first_tl_start"], tuple(values["messages"]))
    except (KeyError, TypeError, ValueError) as exc:
        raise EncodeError(f"DLFlit: unreadable request ({exc})") from None
    return DLFlit(op, fields[0], fields[1], fields[2], tl, fields[3], fields[4]).encode()


def _dl_encode_strategy() -> Any:
    from ualink_ref.testing import strategies as S

    st = _st()
    valid = S.dl_flits().map(_flit_fields)
    return st.one_of(valid.map(lambda v: Case("valid", v)),
                     *_labelled(ADV.dl_encode_sources(valid)))


def _dl_locate(model: bytes, target: bytes) -> list[Difference]:
    """Name the DL-flit fields where two encodings differ (header fields by bit)."""

    if len(model) != 640 or len(target) != 640:
        return [Difference("length", len(model), len(target))]
    out: list[Difference] = []
    fmt = COMMAND_HEADER if model[0] >> 5 in (2, 3) else EXPLICIT_HEADER
    a, b = int.from_bytes(model[:3], "big"), int.from_bytes(target[:3], "big")
    for pos in fmt.positions:
        va, vb = (a >> pos.shift) & pos.field.max_value, (b >> pos.shift) & pos.field.max_value
        if va != vb:
            out.append(Difference(f"header.{pos.field.name}", va, vb))
    for k, ((hdr, body), length) in enumerate(zip(SEGMENT_OFFSETS, SEGMENT_LENGTHS,
                                                  strict=True)):
        if model[hdr] != target[hdr]:
            out.append(Difference(f"segment{k}.header", f"{model[hdr]:#04x}",
                                  f"{target[hdr]:#04x}"))
        at = next((i for i in range(length) if model[body + i] != target[body + i]), None)
        if at is not None:
            out.append(Difference(f"segment{k}.body[{at}]", f"{model[body + at]:#04x}",
                                  f"{target[body + at]:#04x}"))
    if model[636:] != target[636:]:
        out.append(Difference("crc", model[636:].hex(), target[636:].hex()))
    return out


def _dl_encode_vector(values: dict[str, Any]) -> tuple[str, dict[str, Any]] | None:
    return "flit_encode", dict(values)


# -- DL messages -----------------------------------------------------------------------


def _dl_message_reference(data: bytes) -> dict[str, Any]:
    from dataclasses import fields


    m = decode_message(data)
    out: dict[str, Any] = {"type": type(m).__name__}
    for fld in fields(m):
        value = getattr(m, fld.name)
        out[fld.name] = value.hex() if isinstance(value, bytes) else (
            value if isinstance(value, bool) else int(value))
    return out


def _dl_message_strategy() -> Any:
    from ualink_ref.testing import strategies as S

    st = _st()
    valid = S.dl_messages().map(lambda m: m.encode().to_bytes(4, "big"))
    known = (F.NOOP_MESSAGE, F.TL_RATE_MESSAGE, F.DEVICE_ID_MESSAGE, F.PORT_NUMBER_MESSAGE,
             F.CHANNEL_NEGOTIATION_MESSAGE, F.UART_MESSAGE)
    # Every field at its edges (0, 1, max), e.g. a UART count of 3: packable, not all valid.
    edges = st.one_of(*(S.format_bytes(f, fixed={
        "mclass": f.field("mclass").default, "mtype": f.field("mtype").default,
        "compressed": 0}) for f in known))
    return st.one_of(valid.map(lambda b: Case("valid", b)),
                     edges.map(lambda b: Case("boundary", b)),
                     st.one_of(*(S.reserved_bits_set(f) for f in known)).map(
                         lambda b: Case("reserved", b)),
                     *_near_valid(valid, max_extra=2), _raw(4),
                     *_labelled(ADV.dl_message_sources()))


def _dl_message_vector(data: bytes) -> tuple[str, dict[str, Any]] | None:
    if len(data) != 4:
        return None
    return "message_decode", {"word": int.from_bytes(data, "big")}


# -- TL fields and flits -------------------------------------------------------------------


def _tl_field_reference(data: bytes) -> dict[str, Any]:

    fmt, values = decode_field(data)
    return {"format": fmt.name, "values": values}


def _tl_field_strategy() -> Any:
    from ualink_ref.testing import strategies as S

    st = _st()
    valid = S.tl_fields().map(lambda fv: encode_field(fv[0], fv[1]))
    with_reserved = [f for f in FORMATS.values() if any(x.reserved for x in f.fields)]
    return st.one_of(valid.map(lambda b: Case("valid", b)),
                     st.one_of(*(S.reserved_bits_set(f) for f in with_reserved)).map(
                         lambda b: Case("reserved", b)),
                     *_near_valid(valid, max_extra=8), _raw(16),
                     *_labelled(ADV.tl_field_sources()))


def _tl_flit_reference(data: bytes) -> dict[str, Any]:

    view = dissect(data, 0)
    return {"halves": view_to_json(view), "pending_after": view.pending_after}


def _tl_flit_strategy() -> Any:
    from ualink_ref.testing import strategies as S

    st = _st()
    valid = S.tl_flits()
    return st.one_of(valid.map(lambda b: Case("valid", b)), *_near_valid(valid), _raw(64),
                     *_labelled(ADV.tl_flit_sources()))


# -- capture records -------------------------------------------------------------------------


def _capture_reference(data: bytes) -> dict[str, Any]:

    r = CaptureRecord.decode(data)
    return {"kind": r.kind, "direction": r.direction, "fec_mode": r.fec_mode, "port": r.port,
            "lane": r.lane, "interleave": r.interleave,
            "symbols_corrected": r.symbols_corrected, "uncorrectable": r.uncorrectable,
            "slot": r.slot, "data": r.data.hex()}


def _capture_strategy() -> Any:
    from ualink_ref.testing import strategies as S

    st = _st()
    valid = S.capture_records().map(lambda r: r.encode())
    header_flips = st.tuples(valid, st.lists(st.integers(0, 8 * PSEUDO_HEADER.byte_length - 1),
                                             min_size=1, max_size=2, unique=True)).map(
        lambda vb: Case("bit_flip", _flip(vb[0], vb[1])))
    return st.one_of(valid.map(lambda b: Case("valid", b)), header_flips,
                     S.truncations(valid).map(lambda m: Case("truncate", m.data)),
                     S.extensions(valid, max_extra=4).map(lambda m: Case("extend", m.data)),
                     _raw(24))


def _hex_vector(kind: str, key: str, extra: dict[str, Any] | None = None) -> Callable[
        [bytes], tuple[str, dict[str, Any]] | None]:
    def vector(data: bytes) -> tuple[str, dict[str, Any]] | None:
        return kind, {key: data.hex(), **(extra or {})}

    return vector


def _no_vector(data: Any) -> tuple[str, dict[str, Any]] | None:
    return None


def _build() -> dict[str, Codec]:
    codecs = [
        *(c for mode in ("kp4", "ll") for c in (
            _phy_encode(mode), *(_phy_decode(mode, depth) for depth in PHY_INTERLEAVES))),
        Codec("dl", "dl", "DL flit decode: 640 bytes -> fields (as dl.json flit_decode)", False,
              lambda: _dl_inputs(header_reserved=False), _dl_decode_reference,
              _dl_decode_vector),
        Codec("dl-encode", "dl", "DL flit encode: fields (as dl.json flit_encode) -> 640 bytes",
              True, _dl_encode_strategy, _dl_encode_reference, _dl_encode_vector, _dl_locate),
        Codec("dl-header", "dl", "DL flit CRC-32 check and header fields (the cocotb example)",
              False, lambda: _dl_inputs(header_reserved=True), _dl_header_reference,
              _dl_decode_vector),
        Codec("dl-message", "dl", "DL message decode: 4 bytes -> type and fields", False,
              _dl_message_strategy, _dl_message_reference, _dl_message_vector),
        Codec("tl-field", "tl", "TL control field decode: bytes -> format and values", False,
              _tl_field_strategy, _tl_field_reference, _hex_vector("field_decode", "hex")),
        Codec("tl-flit", "tl", "TL flit dissection: 64 bytes -> half-flits and fields", False,
              _tl_flit_strategy, _tl_flit_reference,
              _hex_vector("dissect", "flit", {"pending": 0})),
        Codec("capture", "capture", "capture record decode: pseudo-header + data -> fields",
              False, _capture_strategy, _capture_reference, _no_vector),
    ]
    return {c.name: c for c in codecs}


#: Every codec under differential test, by name.
CODECS: dict[str, Codec] = _build()

__all__ = ["CODECS", "SOURCES", "Case", "Codec"]
