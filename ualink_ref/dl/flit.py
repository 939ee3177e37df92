"""The 640-byte DL flit: value type and codec.

Layout (byte offsets; sizes public, the placement of each segment header just
before its segment is a project choice)::

    0..2     flit header (explicit-sequence or command layout, by op)
    3        segment header 0      4..131    segment 0 (128 bytes)
    132      segment header 1      133..260  segment 1 (128 bytes)
    261      segment header 2      262..389  segment 2 (128 bytes)
    390      segment header 3      391..514  segment 3 (124 bytes)
    515      segment header 4      516..635  segment 4 (120 bytes)
    636..639 CRC-32 (IEEE 802.3) over bytes 0..635, big-endian

A segment optionally opens with one 4-byte DL message word; the rest of the
628 payload bytes carry one continuous TL byte stream (64-byte TL flits cut
anywhere, across segments and across DL flits) followed, when the sender had
fewer bytes queued than fit, by zero fill that begins at a TL-flit boundary.
See ``specs/dl.md`` for the segment-header rules.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache, lru_cache
from typing import NamedTuple

from ualink_ref.bitfields import BitFormat
from ualink_ref.dl.crc import CRC_COVERAGE, crc32
from ualink_ref.dl.formats import (
    COMMAND_HEADER,
    EXPLICIT_HEADER,
    SEGMENT_HEADER,
    FlitOp,
    header_op,
)
from ualink_ref.dl.segments import SEGMENT_OFFSETS, walk_segments
from ualink_ref.errors import (
    CrcError,
    DecodeError,
    EncodeError,
    FieldRangeError,
    TruncatedError,
)
from ualink_ref.sizes import (
    DL_FLIT_BYTES,
    DL_HEADER_BYTES,
    DL_MESSAGE_BYTES,
    DL_PAYLOAD_BYTES,
    DL_SEGMENT_LENGTHS,
    DL_SEGMENTS,
    SEQ_MAX,
    TL_FLIT_BYTES,
)

#: Bytes-like types as a tuple: ``isinstance(x, a | b)`` builds a union object per call.
_BYTES_LIKE = (bytes, bytearray, memoryview)

# Sizes are declared once, with provenance, in ualink_ref.sizes.
FLIT_BYTES = DL_FLIT_BYTES
HEADER_BYTES = DL_HEADER_BYTES
SEGMENT_LENGTHS = DL_SEGMENT_LENGTHS
PAYLOAD_BYTES = DL_PAYLOAD_BYTES
MESSAGE_BYTES = DL_MESSAGE_BYTES
SEGMENTS = DL_SEGMENTS


NO_MESSAGES: tuple[int | None, ...] = (None,) * SEGMENTS
# Segment-header field positions, read from the declaration once.
_SH_STARTS, _SH_MSG, _SH_OFFSET = (SEGMENT_HEADER.position(n).shift
                                   for n in ("tl_starts", "msg", "tl_offset"))


@dataclass(frozen=True)
class SegmentLayout:
    """How one segment is filled: derived from the flit, one per segment."""

    msg: bool  # opens with a DL message word
    tl_offset: int  # words from the first TL byte to the first TL-flit boundary
    tl_starts: int  # TL flits beginning in this segment
    tl_bytes: int  # TL bytes carried (the rest of the body is zero fill)

    @property
    def header(self) -> int:
        """The segment-header byte."""
        return (self.tl_starts << _SH_STARTS) | (int(self.msg) << _SH_MSG) | (
            self.tl_offset << _SH_OFFSET)


def capacity(messages: tuple[int | None, ...]) -> int:
    """TL bytes a flit can carry when it holds these message words."""
    if messages is NO_MESSAGES:
        return PAYLOAD_BYTES  # the common case, without counting
    return PAYLOAD_BYTES - MESSAGE_BYTES * sum(m is not None for m in messages)


def layout_problem(
    tl_len: int, first_tl_start: int, messages: tuple[int | None, ...]
) -> str | None:
    """Why ``(len(tl), first_tl_start, messages)`` cannot form a flit, or ``None``.

    The values are a caller's, unchecked: a wrong type is a problem named here too.
    """
    if len(messages) != SEGMENTS:
        return f"messages must have {SEGMENTS} entries, got {len(messages)}"
    for m in messages:
        if m is not None and (isinstance(m, bool) or not isinstance(m, int)
                              or not 0 <= m <= 0xFFFFFFFF):
            return f"message word {m!r} is not a 32-bit integer"
    if isinstance(first_tl_start, bool) or not isinstance(first_tl_start, int):
        return f"first_tl_start {first_tl_start!r} is not an integer"
    cap = capacity(messages)
    if tl_len > cap:
        return f"{tl_len} TL bytes exceed the capacity of {cap}"
    if not 0 <= first_tl_start < TL_FLIT_BYTES or first_tl_start % 4:
        return f"first_tl_start {first_tl_start} is not a multiple of 4 in 0..60"
    if tl_len == 0 and first_tl_start:
        return "a flit without TL bytes has first_tl_start 0"
    if 0 < tl_len < cap and (tl_len - first_tl_start) % TL_FLIT_BYTES:
        return (f"TL bytes end at {tl_len}, not at a TL-flit boundary "
                f"({first_tl_start} + 64k): fill must start at a boundary")
    return None


def segment_layout(
    tl_len: int, first_tl_start: int, messages: tuple[int | None, ...]
) -> tuple[SegmentLayout, ...]:
    """The per-segment layout of a flit (arguments already valid)."""
    return _segment_layout(tl_len, first_tl_start, tuple(m is not None for m in messages))


@cache
def _segment_layout(
    tl_len: int, first: int, flags: tuple[bool, ...]
) -> tuple[SegmentLayout, ...]:
    out = []
    rel = 0  # TL bytes of this flit placed before the segment
    for length, msg in zip(SEGMENT_LENGTHS, flags, strict=True):
        body = length - MESSAGE_BYTES * msg
        n = min(max(tl_len - rel, 0), body)
        if n == 0:
            out.append(SegmentLayout(msg, 0, 0, 0))
        else:
            nb = first if rel <= first else first + -(-(rel - first) // 64) * 64
            starts = 0 if nb >= rel + n else (rel + n - 1 - nb) // 64 + 1
            out.append(SegmentLayout(msg, (nb - rel) // 4, starts, n))
        rel += n
    return tuple(out)


def header_problem(op: FlitOp, flit_seq: int, ack_req_seq: int, flit_seq_lo: int,
                   payload: bool) -> str | None:
    """Why these header values cannot form a flit header, or ``None``.

    The values are a caller's, unchecked: a wrong type is a problem named here too.
    """
    for name, value, top in (("flit_seq", flit_seq, SEQ_MAX), ("ack_req_seq", ack_req_seq,
                             SEQ_MAX), ("flit_seq_lo", flit_seq_lo, 7)):
        if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= top:
            return f"{name}={value!r} does not fit"
    return _header_rule_problem(op, flit_seq, ack_req_seq, flit_seq_lo, payload)


def _header_rule_problem(op: FlitOp, flit_seq: int, ack_req_seq: int, flit_seq_lo: int,
                         payload: bool) -> str | None:
    """The header rules between fields that each fit (``header_problem``'s second half;
    the decoder, whose values come from masked bits, needs only this one)."""
    if op.is_command:
        if flit_seq:
            return f"{op.name} flits carry flit_seq_lo, not flit_seq"
        if not payload and flit_seq_lo:
            return "flit_seq_lo must be 0 without payload"
        if op is FlitOp.REPLAY_REQUEST and ack_req_seq == 0:
            return "a replay request names a sequence number 1..511"
    else:
        if ack_req_seq or flit_seq_lo:
            return f"{op.name} flits carry no ack_req_seq / flit_seq_lo"
        if payload != (flit_seq != 0):
            return "flit_seq is 1..511 exactly when the flit carries TL bytes"
        if op is FlitOp.REPLAY and not payload:
            return "a replay flit carries TL bytes"
    return None


@dataclass(frozen=True)
class DLFlit:
    """One DL flit, as values. ``encode()`` gives its 640 bytes; ``decode`` the inverse.

    ``flit_seq`` is used by the explicit-sequence ops (``EXPLICIT``,
    ``REPLAY``); ``ack_req_seq`` and ``flit_seq_lo`` by the command ops
    (``ACK``, ``REPLAY_REQUEST``); unused fields are 0. ``tl`` is the TL byte
    stream the flit carries, in order; ``first_tl_start`` is the offset in
    ``tl`` of the first TL-flit boundary (bytes before it finish a TL flit
    begun in an earlier DL flit). ``messages`` holds one optional 32-bit DL
    message word per segment. The header's payload bit is ``bool(tl)``.
    Invalid combinations raise :class:`~ualink_ref.errors.EncodeError`.
    """

    op: FlitOp
    flit_seq: int = 0
    ack_req_seq: int = 0
    flit_seq_lo: int = 0
    tl: bytes = b""
    first_tl_start: int = 0
    messages: tuple[int | None, ...] = NO_MESSAGES

    def __post_init__(self) -> None:
        try:
            op = FlitOp(self.op)
        except ValueError:
            raise EncodeError(f"DLFlit: unknown op {self.op!r}", field="op") from None
        object.__setattr__(self, "op", op)
        if not isinstance(self.tl, _BYTES_LIKE):
            raise EncodeError(f"DLFlit: tl must be bytes, not {type(self.tl).__name__}",
                              field="tl")
        object.__setattr__(self, "tl", bytes(self.tl))  # accept bytearray / memoryview
        try:
            object.__setattr__(self, "messages", tuple(self.messages))
        except TypeError:
            raise EncodeError("DLFlit: messages must be a sequence", field="messages") from None
        problem = header_problem(op, self.flit_seq, self.ack_req_seq, self.flit_seq_lo,
                                 bool(self.tl)) or layout_problem(
            len(self.tl), self.first_tl_start, self.messages)
        if problem:
            raise EncodeError(f"DLFlit: {problem}")

    @classmethod
    def trusted(
        cls,
        op: FlitOp,
        flit_seq: int = 0,
        ack_req_seq: int = 0,
        flit_seq_lo: int = 0,
        tl: bytes = b"",
        first_tl_start: int = 0,
        messages: tuple[int | None, ...] = NO_MESSAGES,
    ) -> DLFlit:
        """Build a flit from values the caller has already validated, skipping ``__post_init__``.

        For internal paths only (the decoder, a data link assembling a flit from
        its own checked state): ``op`` must be a :class:`FlitOp`, ``tl`` ``bytes``,
        ``messages`` a 5-tuple, and the combination one the constructor accepts.
        The public constructor stays the checked way in.
        """
        flit = object.__new__(cls)
        setter = object.__setattr__
        setter(flit, "op", op)
        setter(flit, "flit_seq", flit_seq)
        setter(flit, "ack_req_seq", ack_req_seq)
        setter(flit, "flit_seq_lo", flit_seq_lo)
        setter(flit, "tl", tl)
        setter(flit, "first_tl_start", first_tl_start)
        setter(flit, "messages", messages)
        return flit

    @property
    def payload(self) -> bool:
        """True when the flit carries TL bytes (and so consumes a sequence number)."""
        return bool(self.tl)

    def segments(self) -> tuple[SegmentLayout, ...]:
        """The five segments' layouts (their headers, TL byte counts)."""
        return segment_layout(len(self.tl), self.first_tl_start, self.messages)

    def header_bytes(self) -> bytes:
        """The 3-byte flit header."""
        if self.op.is_command:
            return COMMAND_HEADER.pack(op=self.op, payload=int(self.payload),
                                       ack_req_seq=self.ack_req_seq,
                                       flit_seq_lo=self.flit_seq_lo)
        return EXPLICIT_HEADER.pack(op=self.op, payload=int(self.payload),
                                    flit_seq=self.flit_seq)

    def encode(self) -> bytes:
        """The 640 bytes of the flit, CRC included."""
        # The constructor has checked every value: the planned encoder may run.
        return encode_fields(self.op, self.flit_seq, self.ack_req_seq, self.flit_seq_lo,
                             self.tl, self.first_tl_start, self.messages)

    def encode_checked(self) -> bytes:
        """:meth:`encode` the long way (header via the declarations, segment by
        segment): the reference the planned encoder is tested against."""
        out = bytearray(FLIT_BYTES)
        out[0:HEADER_BYTES] = self.header_bytes()
        rel = 0
        for (hdr_off, body_off), seg, msg in zip(SEGMENT_OFFSETS, self.segments(),
                                                 self.messages, strict=True):
            out[hdr_off] = seg.header
            pos = body_off
            if msg is not None:
                out[pos:pos + MESSAGE_BYTES] = msg.to_bytes(MESSAGE_BYTES, "big")
                pos += MESSAGE_BYTES
            out[pos:pos + seg.tl_bytes] = self.tl[rel:rel + seg.tl_bytes]
            rel += seg.tl_bytes
        out[CRC_COVERAGE:] = crc32(out[:CRC_COVERAGE]).to_bytes(4, "big")
        return bytes(out)

    def tl_flit_starts(self) -> list[int]:
        """Byte offsets, in the encoded flit, where TL flits begin (for dissectors): the
        segment walk over the flit's own bytes."""
        return [start for seg in walk_segments(self.encode()) for start in seg.starts]

    def describe(self) -> str:
        """One line for humans: op, sequence fields, TL bytes, messages."""
        if self.op.is_command:
            seq = f"ack_req_seq={self.ack_req_seq} seq_lo={self.flit_seq_lo}"
        else:
            seq = f"seq={self.flit_seq}"
        msgs = sum(m is not None for m in self.messages)
        return (f"DLFlit[{self.op.name.lower()} {seq} tl={len(self.tl)}B "
                f"first_tl_start={self.first_tl_start} messages={msgs}]")

    @classmethod
    def decode(cls, data: bytes | bytearray | memoryview) -> DLFlit:
        """Parse 640 bytes. Raises ``CrcError`` on a bad CRC, other ``DecodeError`` s else."""
        if not isinstance(data, _BYTES_LIKE):
            raise TruncatedError("DL flit", FLIT_BYTES, -1)
        try:
            data = bytes(data)
        except ValueError:  # a released memoryview
            raise TruncatedError("DL flit", FLIT_BYTES, -1) from None
        if len(data) != FLIT_BYTES:
            raise TruncatedError("DL flit", FLIT_BYTES, len(data))
        stored = int.from_bytes(data[CRC_COVERAGE:], "big")
        actual = crc32(data[:CRC_COVERAGE])
        if stored != actual:
            raise CrcError(stored, actual, "DL flit CRC")
        # The planned parser takes every valid flit; anything else goes to the checked
        # parser, so a malformed flit raises exactly the error that one names.
        return _parse_planned(data) or _parse(data)


#: FlitOp by header value, so the hot path does a dict lookup instead of an enum call.
_OPS: dict[int, FlitOp] = {op.value: op for op in FlitOp}


def _parse(data: bytes) -> DLFlit:
    """Parse a flit whose CRC is already known to be good."""
    op_value = header_op(data)
    op = _OPS.get(op_value)
    if op is None:
        raise FieldRangeError("dl_header.op", op_value, "unknown op")
    fmt = COMMAND_HEADER if op.is_command else EXPLICIT_HEADER
    fields = fmt.unpack(data[:HEADER_BYTES])
    segments = walk_segments(data, strict=True)
    msgs = tuple(s.message for s in segments)
    pieces = [data[s.begin:s.begin + s.tl_bytes] for s in segments]
    tl = b"".join(pieces)
    first = 4 * segments[0].tl_offset
    problem = layout_problem(len(tl), first, msgs)
    if problem:
        raise FieldRangeError("segment0.tl_offset", segments[0].tl_offset, problem)
    for k, (want, got) in enumerate(zip(segment_layout(len(tl), first, msgs), segments,
                                        strict=True)):
        if (want.tl_offset, want.tl_starts, want.tl_bytes) != (
                got.tl_offset, got.tl_starts, got.tl_bytes):
            raise FieldRangeError(
                f"segment{k}", data[SEGMENT_OFFSETS[k][0]],
                f"inconsistent with a continuous TL stream (expected tl_offset="
                f"{want.tl_offset} tl_starts={want.tl_starts} with {want.tl_bytes} TL bytes)")
    if fields["payload"] != bool(tl):
        raise FieldRangeError("dl_header.payload", fields["payload"],
                              "payload bit disagrees with the segment headers")
    problem = header_problem(op, fields.get("flit_seq", 0), fields.get("ack_req_seq", 0),
                             fields.get("flit_seq_lo", 0), bool(tl))
    if problem:
        raise FieldRangeError("dl_header", int.from_bytes(data[:HEADER_BYTES], "big"), problem)
    # Every check __post_init__ makes has been made above: build without repeating them.
    return DLFlit.trusted(op, fields.get("flit_seq", 0), fields.get("ack_req_seq", 0),
                          fields.get("flit_seq_lo", 0), tl, first, msgs)


# -- planned codec: the hot path ---------------------------------------------------------
#
# Every DL flit sent or received passes here, so the per-flit work is reduced to
# slicing: what depends only on the segment headers (where TL bytes, message words
# and fill lie; whether they form one continuous TL stream) is worked out once per
# combination by the checked code above and kept. Nothing is typed twice: the
# header shifts are read from the declarations, the plans from ``segment_layout``
# and ``walk_segments``. tests/dl/test_dl_flit_planned.py holds both paths equal.

_E_OP, _E_PAYLOAD, _E_SEQ = (EXPLICIT_HEADER.position(n).shift
                             for n in ("op", "payload", "flit_seq"))
if (COMMAND_HEADER.position("op").shift, COMMAND_HEADER.field("op").width) != (
        _E_OP, EXPLICIT_HEADER.field("op").width):  # pragma: no cover
    raise ImportError("the two DL header layouts must put op in the same bits")
_OP_MASK = EXPLICIT_HEADER.field("op").max_value
_C_OP, _C_PAYLOAD, _C_ACK, _C_LO = (COMMAND_HEADER.position(n).shift
                                    for n in ("op", "payload", "ack_req_seq", "flit_seq_lo"))
_COMMAND_OPS = frozenset(int(op) for op in FlitOp if op.is_command)
_NO_FLAGS = (False,) * SEGMENTS
_HEADER_SLOTS = tuple(hdr for hdr, _body in SEGMENT_OFFSETS)
_H0, _H1, _H2, _H3, _H4 = _HEADER_SLOTS


@cache
def _encode_plan(tl_len: int, first: int, flags: tuple[bool, ...]
                 ) -> tuple[tuple[bytes, int, int, bytes, bool], ...]:
    """Per segment: (header byte, TL slice start, end, zero fill, has a message word).

    Keys are valid layouts only (the constructor or the data link checked them),
    so the cache is bounded by the layouts that exist."""
    plan = []
    rel = 0
    for seg, msg, length in zip(_segment_layout(tl_len, first, flags), flags,
                                SEGMENT_LENGTHS, strict=True):
        fill = length - MESSAGE_BYTES * msg - seg.tl_bytes
        plan.append((bytes((seg.header,)), rel, rel + seg.tl_bytes, bytes(fill), msg))
        rel += seg.tl_bytes
    return tuple(plan)


def encode_fields(op: int, flit_seq: int, ack_req_seq: int, flit_seq_lo: int, tl: bytes,
                  first_tl_start: int, messages: tuple[int | None, ...]) -> bytes:
    """The 640 bytes of a flit from values already known valid (no checks).

    For :meth:`DLFlit.encode` (whose constructor checked them) and the data link,
    which builds them from its own state (sequence numbers in range, TL bytes cut
    at its own phase, message words its own encodings); anyone else builds a
    :class:`DLFlit`."""
    payload = 1 if tl else 0
    if op in _COMMAND_OPS:
        word = (op << _C_OP | payload << _C_PAYLOAD | ack_req_seq << _C_ACK
                | flit_seq_lo << _C_LO)
    else:
        word = op << _E_OP | payload << _E_PAYLOAD | flit_seq << _E_SEQ
    flags = _NO_FLAGS if messages is NO_MESSAGES else tuple(m is not None for m in messages)
    parts = [word.to_bytes(HEADER_BYTES, "big")]
    append = parts.append
    for (header, start, end, fill, msg), word_ in zip(
            _encode_plan(len(tl), first_tl_start, flags), messages, strict=True):
        append(header)
        if msg:
            append(word_.to_bytes(MESSAGE_BYTES, "big"))  # type: ignore[union-attr]
        if end > start:
            append(tl[start:end])
        if fill:
            append(fill)
    body = b"".join(parts)
    return body + crc32(body).to_bytes(4, "big")


class _DecodePlan(NamedTuple):
    """Where a valid flit with given segment headers keeps its parts."""

    tl: tuple[tuple[int, int], ...]  # TL byte ranges, in stream order
    words: tuple[int, ...]  # offsets of message words (segment k's, or -1: none)
    fills: tuple[tuple[int, int], ...]  # ranges that must be zero fill
    first_tl_start: int
    has_messages: bool


@lru_cache(maxsize=4096)  # bounded: a peer chooses the header bytes
def _decode_plan(headers: tuple[int, ...]) -> _DecodePlan | None:
    """The plan for segment-header bytes ``headers``, or ``None`` when no valid flit
    has them (the checked parser then names the fault)."""
    probe = bytearray(FLIT_BYTES)  # zero words and fill: only the headers decide
    for offset, byte in zip(_HEADER_SLOTS, headers, strict=True):
        probe[offset] = byte
    try:
        segments = walk_segments(bytes(probe), strict=True)
    except DecodeError:
        return None
    flags = tuple(s.message is not None for s in segments)
    tl_len = sum(s.tl_bytes for s in segments)
    first = 4 * segments[0].tl_offset
    zero_words = tuple(0 if f else None for f in flags)
    if layout_problem(tl_len, first, zero_words):
        return None
    for want, got in zip(segment_layout(tl_len, first, zero_words), segments, strict=True):
        if (want.tl_offset, want.tl_starts, want.tl_bytes) != (
                got.tl_offset, got.tl_starts, got.tl_bytes):
            return None
    return _DecodePlan(
        tuple((s.begin, s.begin + s.tl_bytes) for s in segments if s.tl_bytes),
        tuple(s.begin - MESSAGE_BYTES if f else -1 for s, f in zip(segments, flags,
                                                                    strict=True)),
        tuple((s.begin + s.tl_bytes, s.begin + s.room) for s in segments
              if s.tl_bytes < s.room),
        first, any(flags))


def _reserved_bits(fmt: BitFormat) -> int:
    """The bits of ``fmt``'s reserved fields, as one mask."""
    return sum(p.field.max_value << p.shift for p in fmt.positions if p.field.reserved)


_E_RESERVED, _C_RESERVED = _reserved_bits(EXPLICIT_HEADER), _reserved_bits(COMMAND_HEADER)
_SEQ_MASK = EXPLICIT_HEADER.field("flit_seq").max_value
_ACK_MASK = COMMAND_HEADER.field("ack_req_seq").max_value
_LO_MASK = COMMAND_HEADER.field("flit_seq_lo").max_value


def _decode_header(word: int, payload: bool) -> tuple[FlitOp, int, int, int] | None:
    """``(op, flit_seq, ack_req_seq, flit_seq_lo)`` of a valid 3-byte header word on a
    flit with (``payload``) or without TL bytes, else ``None``: the declarations' shifts
    and reserved bits, then the same header rules the checked path asks."""
    op = _OPS.get(word >> _E_OP & _OP_MASK)  # the op field sits alike in both layouts
    if op is None:
        return None
    if op.is_command:
        if word & _C_RESERVED or (word >> _C_PAYLOAD & 1) != payload:
            return None
        seq, ack, lo = 0, word >> _C_ACK & _ACK_MASK, word >> _C_LO & _LO_MASK
    else:
        if word & _E_RESERVED or (word >> _E_PAYLOAD & 1) != payload:
            return None
        seq, ack, lo = word >> _E_SEQ & _SEQ_MASK, 0, 0
    if _header_rule_problem(op, seq, ack, lo, payload):  # each field fits: masked bits
        return None
    return op, seq, ack, lo


def _parse_planned(data: bytes) -> DLFlit | None:
    """The flit in ``data`` (CRC already good) if it is valid, else ``None``."""
    plan = _decode_plan((data[_H0], data[_H1], data[_H2], data[_H3], data[_H4]))
    if plan is None:
        return None
    for start, end in plan.fills:
        if data.count(0, start, end) != end - start:
            return None
    tl = b"".join([data[start:end] for start, end in plan.tl])
    header = _decode_header(int.from_bytes(data[:HEADER_BYTES], "big"), bool(tl))
    if header is None:
        return None
    messages = NO_MESSAGES
    if plan.has_messages:
        messages = tuple(None if at < 0 else int.from_bytes(data[at:at + MESSAGE_BYTES], "big")
                         for at in plan.words)
    op, seq, ack, lo = header
    return DLFlit.trusted(op, seq, ack, lo, tl, plan.first_tl_start, messages)


__all__ = [
    "FLIT_BYTES",
    "HEADER_BYTES",
    "MESSAGE_BYTES",
    "PAYLOAD_BYTES",
    "SEGMENTS",
    "SEGMENT_LENGTHS",
    "DLFlit",
    "SegmentLayout",
    "capacity",
    "encode_fields",
    "header_problem",
    "layout_problem",
    "segment_layout",
]
