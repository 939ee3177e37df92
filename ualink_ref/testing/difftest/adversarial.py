"""Adversarial input sources for difftest: the inputs implementations get wrong.

Random bytes and a few random symbol errors almost never reach the cases a
decoder's corner logic exists for (specs/difftest.md, "Inputs, budget,
coverage", says why each source is here). Every ``*_sources`` function below returns
``(label, strategy)`` pairs, the label one of :data:`ADVERSARIAL_SOURCES` (or
``reserved`` / ``unknown_enum`` / ``boundary``), the strategy drawing the input
itself; ``layers`` wraps them into its ``Case`` values and mixes them into each
codec's inputs, so they are on by default.

FEC decode (both codes; at interleave N > 1 the codec's request is one
interleave group, :func:`ualink_ref.testing.difftest.lengths.phy_group`, and
every source but ``boundary_burst`` builds the group's codewords back to back,
then interleaves them, :func:`interleave_symbols`):

* ``pad_miscorrect``: a received word more than t symbols from the codeword
  sent but within t of a codeword of the *full-length* (1023-symbol) code
  whose shortened (pad) symbols are not zero. :func:`full_length_null_word`
  builds that codeword (the code is MDS: any 2t+1 positions carry one);
  its transmitted part is added to a valid codeword. A decoder that accepts
  corrections landing in the pad reports success with a word that is not a
  codeword; the model flags it (specs/phy.md, "Decoder": roots must lie among
  the n positions of the shortened code).
* ``t_plus_1``: exactly t+1 symbol errors, full 10-bit values, in one codeword.
* ``parity_errors``: 1..2t symbol errors, all in parity symbols.
* ``boundary_burst``: a burst of consecutive wire symbols across a codeword
  boundary (LL: between the two codewords of a flit; KP4, one codeword a flit:
  wrapping the codeword's last and first symbols), each symbol stuck at
  0x000 / 0x3ff like a lost lane, or inverted. At interleave N every two
  consecutive wire symbols belong to different codewords, so the burst (2..N(t+1)
  wire symbols, wrapping at the group's ends) straddles the boundaries between
  the interleaved codewords and puts about B/N symbols in each: correctable
  where B/N <= t (what interleave is for), if the decoder de-interleaves right
  and keeps no state from one codeword to the next.
* ``spare_set``: a true codeword whose spare message bits are not zero, plus
  0..t errors elsewhere (the model flags it: spare bits must be zero).

FEC encode: ``spare_edge`` flits whose set bits sit next to each codeword's
spare bits (the last and first bits of each chunk), whole chunks of ones.

DL and TL: ``rule_boundary`` (a named consistency rule broken, CRC valid; a
field at its limit), ``out_of_range`` (one past a limit), and the existing
labels ``reserved`` / ``unknown_enum`` / ``boundary`` where a codec lacked them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ualink_ref.dl import formats as F
from ualink_ref.dl.crc import CRC_COVERAGE, crc32_bytes
from ualink_ref.dl.flit import SEGMENT_LENGTHS, capacity
from ualink_ref.dl.formats import COMMAND_HEADER, EXPLICIT_HEADER, SEGMENT_HEADER
from ualink_ref.dl.segments import SEGMENT_OFFSETS
from ualink_ref.phy import gf
from ualink_ref.phy.flits import FLIT_BYTES, MODES, encode_flits
from ualink_ref.phy.reedsolomon import ReedSolomonCode
from ualink_ref.testing.difftest.lengths import phy_group
from ualink_ref.tl.fields import COMMANDS, FORMATS, SECTORS, STATUS_NAMES, FType, encode_field

#: Labels these sources add to ``SOURCES`` (``reserved``, ``unknown_enum`` and
#: ``boundary`` are reused where a codec lacked them).
ADVERSARIAL_SOURCES = ("pad_miscorrect", "t_plus_1", "parity_errors", "boundary_burst",
                       "spare_set", "spare_edge", "rule_boundary", "out_of_range")

#: Length of the full (unshortened) Reed-Solomon code over GF(2^10).
FULL_LENGTH = gf.ORDER


#: A labelled source: (``Case.source`` label, strategy of the input value).
Source = tuple[str, Any]


def _st() -> Any:
    from hypothesis import strategies as st

    return st


# -- GF(2^10) helpers on Python ints ------------------------------------------------------


def _alpha(e: int) -> int:
    exp, _ = gf.int_tables()
    return exp[e % gf.ORDER]


def _inverse(a: int) -> int:
    exp, log = gf.int_tables()
    return exp[gf.ORDER - log[a]]


def _product(a: int, b: int) -> int:
    exp, log = gf.int_tables()
    return exp[log[a] + log[b]]


def full_length_null_word(exponents: list[int]) -> list[int]:
    """Values v_p, one per locator exponent e_p (2t+1 distinct, 0..1022), such that the
    word sum_p v_p x^(e_p) has every syndrome S_j = sum_p v_p alpha^(j e_p), j < 2t, zero:
    a codeword of the full-length code supported exactly on those positions.

    With X_p = alpha^(e_p) and m = 2t+1 points, v_p = 1 / prod_(q != p) (X_p + X_q): the
    Lagrange identity sum_p X_p^j / prod_(q != p) (X_p - X_q) = 0 for j <= m - 2 (the
    leading coefficient of the interpolant of x^j through m points). Every v_p is non-zero,
    as the code is MDS. Checked in tests against the syndromes.
    """
    locators = [_alpha(e) for e in exponents]
    out = []
    for p, xp in enumerate(locators):
        den = 1
        for q, xq in enumerate(locators):
            if q != p:
                den = _product(den, xp ^ xq)
        out.append(_inverse(den))
    return out


def syndromes(code: ReedSolomonCode, word: dict[int, int]) -> list[int]:
    """S_j (j < 2t) of a sparse word ``{locator exponent: value}`` (first root alpha^0)."""
    out = []
    for j in range(code.n - code.k):
        s = 0
        for e, v in word.items():
            s ^= _product(v, _alpha(j * e))
        out.append(s)
    return out


def xor_symbols(wire: bytes, errors: dict[int, int]) -> bytes:
    """``wire`` with ``value`` XORed into wire symbol ``index`` for each entry (symbols are
    10 bits, LSB first, packed LSB first: specs/phy.md, "Bit numbering")."""
    word = int.from_bytes(wire, "little")
    for index, value in errors.items():
        word ^= value << (gf.M * index)
    return word.to_bytes(len(wire), "little")


def read_symbol(wire: bytes, index: int) -> int:
    """Wire symbol ``index`` of ``wire`` (10 bits, LSB first)."""
    return int.from_bytes(wire, "little") >> (gf.M * index) & gf.ORDER


def interleave_symbols(words: bytes, n: int, depth: int) -> bytes:
    """``depth`` codewords of ``n`` symbols, back to back, as they go on the wire: symbol i
    of codeword j at wire symbol i*depth + j (specs/phy.md, "Interleave")."""
    rows = np.frombuffer(words, np.uint8).reshape(depth, -1)
    symbols = gf.bytes_to_symbols(rows, n)  # (depth, n)
    return gf.symbols_to_bytes(symbols.T.reshape(1, depth * n)).tobytes()


def deinterleave_symbols(wire: bytes, n: int, depth: int) -> bytes:
    """Inverse of :func:`interleave_symbols`: the ``depth`` codewords of one interleave
    group, back to back (wire symbol s is symbol s // depth of codeword s % depth)."""
    symbols = gf.bytes_to_symbols(np.frombuffer(wire, np.uint8).reshape(1, -1), depth * n)
    return gf.symbols_to_bytes(symbols.reshape(n, depth).T).tobytes()


# -- FEC decode --------------------------------------------------------------------------


def _code_of(mode: str) -> tuple[ReedSolomonCode, int]:
    code = MODES[mode].code
    assert code is not None
    return code, MODES[mode].codewords_per_flit


def fec_decode_sources(mode: str, interleave: int = 1) -> list[Source]:
    """The five adversarial sources of the PHY decode codec of ``mode`` at ``interleave``
    (``phy-<mode>-decode``, ``phy-<mode>-il<N>-decode``; module docstring)."""
    st = _st()
    code, per_flit = _code_of(mode)
    n, k, t = code.n, code.k, code.t
    codewords, flits = phy_group(mode, interleave)
    flit = st.binary(min_size=flits * FLIT_BYTES, max_size=flits * FLIT_BYTES)
    # The request's codewords back to back (the wire at interleave 1).
    wire = flit.map(lambda f: encode_flits(f, mode, 1))
    which = st.integers(0, codewords - 1)  # codeword of the request that is hit

    def on_wire(words: bytes) -> bytes:
        return words if interleave == 1 else interleave_symbols(words, n, interleave)
    values = st.integers(1, gf.ORDER)

    @st.composite  # type: ignore[untyped-decorator]
    def pad_miscorrect(draw: Any) -> bytes:
        clean = draw(wire)
        base = n * draw(which)
        k_pad = draw(st.integers(1, t))
        pad = draw(st.lists(st.integers(n, FULL_LENGTH - 1), min_size=k_pad, max_size=k_pad,
                            unique=True))
        sent = draw(st.lists(st.integers(0, n - 1), min_size=2 * t + 1 - k_pad,
                             max_size=2 * t + 1 - k_pad, unique=True))
        # Index i of the codeword is the coefficient of x^(n-1-i).
        exponents = pad + [n - 1 - i for i in sent]
        null = full_length_null_word(exponents)
        errors = {base + i: v for i, v in zip(sent, null[k_pad:], strict=True)}
        # Up to t - k_pad further errors elsewhere: still within t of the full-length
        # codeword, so a decoder without the pad check "corrects" them too.
        free = [i for i in range(n) if i not in set(sent)]
        extra = draw(st.lists(st.sampled_from(free), max_size=t - k_pad, unique=True))
        errors.update({base + i: draw(values) for i in extra})
        return xor_symbols(clean, errors)

    @st.composite  # type: ignore[untyped-decorator]
    def t_plus_1(draw: Any) -> bytes:
        clean = draw(wire)
        base = n * draw(which)
        where = draw(st.lists(st.integers(0, n - 1), min_size=t + 1, max_size=t + 1,
                              unique=True))
        return xor_symbols(clean, {base + i: draw(values) for i in where})

    @st.composite  # type: ignore[untyped-decorator]
    def parity_errors(draw: Any) -> bytes:
        clean = draw(wire)
        base = n * draw(which)
        count = draw(st.integers(1, 2 * t))
        where = draw(st.lists(st.integers(k, n - 1), min_size=count, max_size=count,
                              unique=True))
        return xor_symbols(clean, {base + i: draw(values) for i in where})

    @st.composite  # type: ignore[untyped-decorator]
    def boundary_burst(draw: Any) -> bytes:
        # One flit a request (specs/difftest.md "Lengths"). LL: the burst crosses the
        # boundary between the flit's two codewords. KP4 (one codeword a flit): the
        # burst wraps the codeword's ends, its last and first symbols, as the two halves
        # of a burst across the boundary of consecutive flits would.
        clean = draw(wire)
        before = draw(st.integers(1, t + 1))  # symbols of the burst before the boundary
        after = draw(st.integers(1, t + 1))
        boundary = n * draw(st.integers(1, per_flit - 1)) if per_flit > 1 else 0
        positions = [(boundary + i) % (n * per_flit) for i in range(-before, after)]
        return _burst(clean, positions, draw(st.sampled_from(("stuck0", "stuck1", "invert"))))

    @st.composite  # type: ignore[untyped-decorator]
    def interleaved_burst(draw: Any) -> bytes:
        # Consecutive wire symbols of one interleave group: wire symbol s belongs to
        # codeword s % N, so each codeword gets at most t+1 of the at most N(t+1).
        clean = draw(flit.map(lambda f: encode_flits(f, mode, interleave)))
        half = interleave * (t + 1) // 2
        before = draw(st.integers(1, half))  # wire symbols before the boundary drawn
        after = draw(st.integers(1, half))
        boundary = draw(st.integers(0, interleave * n - 1))
        return _burst(clean, [(boundary + i) % (interleave * n) for i in range(-before, after)],
                      draw(st.sampled_from(("stuck0", "stuck1", "invert"))))

    @st.composite  # type: ignore[untyped-decorator]
    def spare_set(draw: Any) -> bytes:
        data = draw(flit)
        chunk = FLIT_BYTES // per_flit
        words = []
        set_in = draw(st.sets(st.integers(0, codewords - 1), min_size=1))
        for c in range(codewords):
            message = gf.bytes_to_symbols(np.frombuffer(data[c * chunk:(c + 1) * chunk],
                                                        np.uint8), k).astype(np.int64)
            if c in set_in:  # the spare bits are the last 2 message symbols (20 bits)
                spare = draw(st.integers(1, (1 << 2 * gf.M) - 1))
                message[k - 2], message[k - 1] = spare & gf.ORDER, spare >> gf.M
            words.append(gf.symbols_to_bytes(code.encode(message)).tobytes())
        received = b"".join(words)
        count = draw(st.integers(0, t))
        where = draw(st.lists(st.integers(0, n - 1), min_size=count, max_size=count,
                              unique=True))
        base = n * draw(which)
        return xor_symbols(received, {base + i: draw(values) for i in where})

    burst = boundary_burst() if interleave == 1 else interleaved_burst()
    return [("pad_miscorrect", pad_miscorrect().map(on_wire)),
            ("t_plus_1", t_plus_1().map(on_wire)),
            ("parity_errors", parity_errors().map(on_wire)), ("boundary_burst", burst),
            ("spare_set", spare_set().map(on_wire))]


def _burst(clean: bytes, positions: list[int], how: str) -> bytes:
    """``clean`` with its wire symbols at ``positions`` stuck at 0x000 (``stuck0``), at
    0x3ff (``stuck1``) or inverted (``invert``)."""
    errors = {}
    for s in positions:
        old = read_symbol(clean, s)
        new = {"stuck0": 0, "stuck1": gf.ORDER, "invert": old ^ gf.ORDER}[how]
        if new != old:
            errors[s] = old ^ new
    return xor_symbols(clean, errors)


# -- FEC encode --------------------------------------------------------------------------


def fec_encode_sources(mode: str) -> list[Source]:
    """``spare_edge`` flits for the ``phy-<mode>-encode`` codec: set bits in the last
    1..20 flit bits of a codeword's chunk (just before its spare bits) and the first bits of
    the next chunk, or whole chunks of ones (an all-ones message beside zero spare bits)."""
    st = _st()
    per_flit = MODES[mode].codewords_per_flit
    chunk_bits = 8 * FLIT_BYTES // per_flit

    @st.composite  # type: ignore[untyped-decorator]
    def spare_edge(draw: Any) -> bytes:
        bits = 0
        for c in sorted(draw(st.sets(st.integers(0, per_flit - 1), min_size=1))):
            if draw(st.booleans()):
                bits |= ((1 << chunk_bits) - 1) << (c * chunk_bits)  # the whole chunk
                continue
            end = (c + 1) * chunk_bits
            width = draw(st.integers(1, 20))
            bits |= draw(st.integers(1, (1 << width) - 1)) << (end - width)
            if end < 8 * FLIT_BYTES and draw(st.booleans()):
                bits |= draw(st.integers(1, 0xFFFFF)) << end  # first bits of the next chunk
        return bits.to_bytes(FLIT_BYTES, "little")

    return [("spare_edge", spare_edge())]


# -- DL flits ----------------------------------------------------------------------------


def _recrc(data: bytes) -> bytes:
    return data[:CRC_COVERAGE] + crc32_bytes(data[:CRC_COVERAGE])


def _header_word(data: bytes) -> int:
    return int.from_bytes(data[:3], "big")


def _with_header(data: bytes, word: int) -> bytes:
    return word.to_bytes(3, "big") + data[3:]


def _set_field(data: bytes, fmt: Any, name: str, value: int) -> bytes:
    pos = fmt.position(name)
    word = _header_word(data) & ~(pos.field.max_value << pos.shift)
    return _with_header(data, word | (value & pos.field.max_value) << pos.shift)


def _header_fmt(data: bytes) -> Any:
    return COMMAND_HEADER if data[0] >> 5 in (2, 3) else EXPLICIT_HEADER


def _dl_rules() -> list[Callable[[bytes, int], bytes]]:
    """Transforms of a valid flit's bytes (before the CRC is redone), each aimed at one
    rule of specs/dl.md sections 2 and 3: broken when the flit is of the kind the rule is
    about, else a field moved to a limit the rules allow. ``v`` is a drawn integer."""
    op_pos = EXPLICIT_HEADER.position("op")
    payload_pos = EXPLICIT_HEADER.position("payload")

    def seq_zero(data: bytes, _v: int) -> bytes:
        # flit_seq is 1..511 with payload (explicit layout); ack 0 means "none yet", a
        # replay request must name 1..511 (command layout).
        if _header_fmt(data) is EXPLICIT_HEADER:
            return _set_field(data, EXPLICIT_HEADER, "flit_seq", 0)
        return _set_field(data, COMMAND_HEADER, "ack_req_seq", 0)

    def seq_nonzero(data: bytes, v: int) -> bytes:
        # flit_seq is 0 without payload; flit_seq_lo is 0 without payload.
        if _header_fmt(data) is EXPLICIT_HEADER:
            return _set_field(data, EXPLICIT_HEADER, "flit_seq", 1 + v % 511)
        return _set_field(data, COMMAND_HEADER, "flit_seq_lo", 1 + v % 7)

    def seq_limit(data: bytes, v: int) -> bytes:  # the sequence field at 511 or at 1
        fmt = _header_fmt(data)
        name = "flit_seq" if fmt is EXPLICIT_HEADER else "ack_req_seq"
        return _set_field(data, fmt, name, 511 if v & 1 else 1)

    def op_swap(data: bytes, _v: int) -> bytes:
        # The other op of the same layout: explicit <-> replay (a replay carries payload),
        # ack <-> replay_request (which names 1..511).
        return _with_header(data, _header_word(data) ^ 1 << op_pos.shift)

    def payload_flip(data: bytes, _v: int) -> bytes:  # the payload bit vs the segments
        return _with_header(data, _header_word(data) ^ 1 << payload_pos.shift)

    def segment_header(data: bytes, v: int) -> bytes:
        # One continuous TL stream: tl_starts 3 (at most 2 fit), tl_offset moved by one
        # word, or a message flag set where the segment's first word is TL bytes or fill.
        at = SEGMENT_OFFSETS[v % len(SEGMENT_OFFSETS)][0]
        field = ("tl_starts", "tl_offset", "msg")[(v >> 3) % 3]
        pos = SEGMENT_HEADER.position(field)
        old = (data[at] >> pos.shift) & pos.field.max_value
        value = {"tl_starts": 3, "tl_offset": old + 1, "msg": 1}[field] & pos.field.max_value
        byte = data[at] & ~(pos.field.max_value << pos.shift) | value << pos.shift
        return data[:at] + bytes([byte]) + data[at + 1:]

    def fill_nonzero(data: bytes, v: int) -> bytes:  # fill is zero (a bit set in segment 4)
        at = SEGMENT_OFFSETS[-1][1] + v % SEGMENT_LENGTHS[-1]
        return data[:at] + bytes([data[at] | 1 << (v % 8)]) + data[at + 1:]

    return [seq_zero, seq_nonzero, seq_limit, op_swap, payload_flip, segment_header,
            fill_nonzero]


def dl_flit_sources(flits: Any) -> list[Source]:
    """``rule_boundary`` (one DL header or segment-header rule broken or met at its limit,
    CRC valid) and ``reserved`` (a segment header's ``alt_sector`` set, CRC valid) for the
    ``dl`` / ``dl-header`` codecs; ``flits`` draws valid encoded flits."""
    st = _st()
    rules = _dl_rules()
    alt = SEGMENT_HEADER.position("alt_sector")

    def rule(args: tuple[bytes, int, int]) -> bytes:
        data, which, v = args
        return _recrc(rules[which](data, v))

    def alt_sector(args: tuple[bytes, int]) -> bytes:
        data, k = args
        at = SEGMENT_OFFSETS[k][0]
        return _recrc(data[:at] + bytes([data[at] | 1 << alt.shift]) + data[at + 1:])

    return [("rule_boundary", st.tuples(flits, st.integers(0, len(rules) - 1),
                                        st.integers(0, 4095)).map(rule)),
            ("reserved", st.tuples(flits, st.integers(0, len(SEGMENT_OFFSETS) - 1)).map(
                alt_sector))]


def dl_encode_sources(valid: Any) -> list[Source]:
    """``boundary`` (a field at its limit), ``out_of_range`` (one past it) and
    ``unknown_enum`` (an op name that is not a flit op) for ``dl-encode``; ``valid`` draws
    the JSON field dicts of valid flits."""
    st = _st()

    def at_limit(args: tuple[dict[str, Any], int]) -> dict[str, Any]:
        values, which = dict(args[0]), args[1]
        cap = capacity(tuple(values["messages"]))
        change: list[dict[str, Any]] = [
            {"flit_seq": 511} if values["flit_seq"] else {"ack_req_seq": 511},
            {"flit_seq_lo": 7} if values["flit_seq_lo"] else {"ack_req_seq": 0},
            {"tl": (bytes.fromhex(values["tl"]) + bytes(cap))[:cap].hex()}
            if values["tl"] else {"messages": [0xFFFFFFFF] * 5},
            {"first_tl_start": 60} if values["tl"] else {"messages": [0] * 5},
        ]
        values.update(change[which])
        return values

    def past_limit(args: tuple[dict[str, Any], int]) -> dict[str, Any]:
        values, which = dict(args[0]), args[1]
        cap = capacity(tuple(values["messages"]))
        change: list[dict[str, Any]] = [
            {"flit_seq": 512}, {"flit_seq": -1}, {"ack_req_seq": 512}, {"flit_seq_lo": 8},
            {"first_tl_start": 64}, {"first_tl_start": 2},
            {"tl": bytes(cap + 1).hex()}, {"messages": [None] * 6},
            {"messages": [1 << 32, None, None, None, None]},
        ]
        values.update(change[which])
        return values

    names = st.sampled_from(["nack", "replay-request", "replayrequest", "", "4"])
    return [("boundary", st.tuples(valid, st.integers(0, 3)).map(at_limit)),
            ("out_of_range", st.tuples(valid, st.integers(0, 8)).map(past_limit)),
            ("unknown_enum", st.tuples(valid, names).map(lambda vn: {**vn[0], "op": vn[1]}))]


#: The DL message layouts a class and type select (specs/dl.md section 5); the vendor
#: class takes every type.
_MESSAGE_FORMATS = (F.NOOP_MESSAGE, F.TL_RATE_MESSAGE, F.DEVICE_ID_MESSAGE,
                    F.PORT_NUMBER_MESSAGE, F.CHANNEL_NEGOTIATION_MESSAGE, F.UART_MESSAGE)


def dl_message_sources() -> list[Source]:
    """``unknown_enum`` DL message words: a class no layout names, a named non-vendor class
    with an unnamed type, or a known type with the ``compressed`` bit set (each decodes as
    ``UnknownMessage``, specs/dl.md section 5)."""
    st = _st()
    known = sorted((f.field("mclass").default, f.field("mtype").default)
                   for f in _MESSAGE_FORMATS)
    classes = F.DL_MESSAGE.field("mclass").enum or {}
    types_of = {c: {t for cc, t in known if cc == c} for c, _ in known}
    gaps = [(c, t) for c in sorted(types_of) for t in range(8) if t not in types_of[c]]

    def word(body: int, mclass: int, mtype: int, compressed: int) -> bytes:
        return (body << 9 | mtype << 6 | mclass << 2 | compressed).to_bytes(4, "big")

    body = st.integers(0, (1 << 23) - 1)
    return [("unknown_enum", st.one_of(
        st.tuples(body, st.integers(0, 15).filter(lambda c: c not in classes),
                  st.integers(0, 7)).map(lambda b: word(b[0], b[1], b[2], 0)),
        st.tuples(body, st.sampled_from(gaps)).map(lambda b: word(b[0], b[1][0], b[1][1], 0)),
        st.sampled_from(known).map(lambda ct: word(0, ct[0], ct[1], 1)),
    ))]


# -- TL fields and flits -------------------------------------------------------------------


def _field_at(ftype: int, edge: str) -> bytes:
    """A field of ``ftype`` with every non-reserved field at 0 or at its maximum."""
    fmt = FORMATS[ftype]
    values = {f.name: 0 if f.reserved or edge == "min" else f.max_value for f in fmt.fields}
    values["ftype"] = ftype
    return encode_field(ftype, values)


def _field_edges(draw: Any, ftype: int) -> bytes:
    """A field of ``ftype`` with each non-reserved field at 0, 1 or its maximum."""
    st = _st()
    values = {f.name: 0 if f.reserved else draw(st.sampled_from(sorted({0, 1, f.max_value})))
              for f in FORMATS[ftype].fields}
    values["ftype"] = ftype
    return encode_field(ftype, values)


def _replace(data: bytes, ftype: int, name: str, value: int) -> bytes:
    pos = FORMATS[ftype].position(name)
    word = int.from_bytes(data, "big") & ~(pos.field.max_value << pos.shift)
    return (word | value << pos.shift).to_bytes(len(data), "big")


def tl_field_sources() -> list[Source]:
    """``boundary`` (each field of a layout at 0, 1 or its maximum) and ``unknown_enum``
    (FTYPE 7..15 at each field size; a request with an unnamed command; a response with an
    unnamed status) for ``tl-field``."""
    st = _st()
    edges = st.composite(lambda draw: _field_edges(draw, draw(st.sampled_from(
        sorted(FORMATS)))))()
    unknown_ftype = st.tuples(st.integers(len(FORMATS), 15), st.sampled_from((1, 2, 4)),
                              st.binary(min_size=16, max_size=16)).map(
        lambda t: bytes([t[0] << 4 | t[2][0] & 0xF]) + t[2][1:4 * t[1]])
    unnamed_cmd = st.integers(0, 63).filter(lambda c: c not in COMMANDS).map(
        lambda c: _replace(_field_at(FType.REQUEST, "min"), FType.REQUEST, "cmd", c))
    unnamed_status = st.integers(0, 15).filter(lambda s: s not in STATUS_NAMES).map(
        lambda s: _replace(_field_at(FType.RESPONSE, "min"), FType.RESPONSE, "status", s))
    return [("boundary", edges),
            ("unknown_enum", st.one_of(unknown_ftype, unnamed_cmd, unnamed_status))]


def tl_flit_sources() -> list[Source]:
    """For ``tl-flit``: ``unknown_enum`` (a control half with an FTYPE 7..15 sector or a
    request with an unnamed command), ``reserved`` (a response's spare bits set) and
    ``boundary`` (a write request in the last sectors that hold it, owing the most data:
    numbeats 2 or 3, so the second half is data and more data halves stay owed)."""
    st = _st()
    second = st.binary(min_size=32, max_size=32)

    def half(fields: bytes, at: int) -> bytes:
        return (bytes(4 * at) + fields + bytes(32))[:32]

    unknown = st.one_of(
        st.tuples(st.integers(len(FORMATS), 15), st.integers(0, (1 << 28) - 1),
                  st.integers(0, 7)).map(
            lambda t: half((t[0] << 28 | t[1]).to_bytes(4, "big"), t[2])),
        st.tuples(st.integers(0, 63).filter(lambda c: c not in COMMANDS),
                  st.integers(0, 4)).map(
            lambda t: half(_replace(_field_at(FType.REQUEST, "min"), FType.REQUEST, "cmd",
                                    t[0]), t[1])))
    responses = (FType.RESPONSE, FType.COMPRESSED_RESPONSE_DATA,
                 FType.COMPRESSED_RESPONSE_NODATA)
    reserved = st.tuples(st.sampled_from(responses), st.integers(1, 255),
                         st.integers(0, 7)).map(
        lambda t: half(_replace(_field_at(t[0], "min"), t[0], "spare",
                                t[1] & FORMATS[t[0]].field("spare").max_value or 1),
                       min(t[2], 8 - SECTORS[t[0]])))

    def request(args: tuple[int, int, int]) -> bytes:
        cmd, at, beats = args
        values = {f.name: 0 for f in FORMATS[FType.REQUEST].fields}
        values.update(ftype=int(FType.REQUEST), cmd=cmd, numbeats=beats)
        return half(encode_field(FType.REQUEST, values), at)

    writes = sorted(c for c, name in COMMANDS.items() if name != "Read")
    most = st.tuples(st.sampled_from(writes), st.integers(3, 4), st.integers(2, 3)).map(
        request)
    return [("unknown_enum", st.tuples(unknown, second).map(lambda hd: hd[0] + hd[1])),
            ("reserved", st.tuples(reserved, second).map(lambda hd: hd[0] + hd[1])),
            ("boundary", st.tuples(most, second).map(lambda hd: hd[0] + hd[1]))]


__all__ = ["ADVERSARIAL_SOURCES", "FULL_LENGTH", "Source", "deinterleave_symbols",
           "dl_encode_sources", "dl_flit_sources", "dl_message_sources",
           "fec_decode_sources", "fec_encode_sources", "full_length_null_word",
           "interleave_symbols", "read_symbol", "syndromes",
           "tl_field_sources", "tl_flit_sources", "xor_symbols"]
