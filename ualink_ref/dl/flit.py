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
from functools import cache

from ualink_ref.dl.crc import CRC_COVERAGE, crc32
from ualink_ref.dl.formats import COMMAND_HEADER, EXPLICIT_HEADER, SEGMENT_HEADER, FlitOp
from ualink_ref.errors import (
    CrcError,
    DecodeError,
    EncodeError,
    FieldRangeError,
    ReservedBitsError,
    TruncatedError,
)

#: Size of a DL flit on the wire (before FEC).
FLIT_BYTES = 640
#: Size of the flit header.
HEADER_BYTES = 3
#: Segment sizes (public): 628 payload bytes in total.
SEGMENT_LENGTHS: tuple[int, ...] = (128, 128, 128, 124, 120)
#: Payload bytes in a flit (segment headers, flit header and CRC excluded).
PAYLOAD_BYTES = sum(SEGMENT_LENGTHS)
#: Size of a TL flit: the unit whose boundaries the segment headers locate.
TL_FLIT_BYTES = 64
#: Size of a DL message word.
MESSAGE_BYTES = 4
#: Number of segments.
SEGMENTS = len(SEGMENT_LENGTHS)
#: Largest 9-bit sequence number; 0 is reserved.
SEQ_MAX = 511


def _segment_offsets() -> tuple[tuple[int, int], ...]:
    """(header offset, body offset) of every segment."""
    out = []
    pos = HEADER_BYTES
    for length in SEGMENT_LENGTHS:
        out.append((pos, pos + 1))
        pos += 1 + length
    assert pos == CRC_COVERAGE
    return tuple(out)


#: (segment-header byte offset, segment-body byte offset) for each segment.
SEGMENT_OFFSETS = _segment_offsets()

NO_MESSAGES: tuple[int | None, ...] = (None,) * SEGMENTS


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
        return (self.tl_starts << 6) | (int(self.msg) << 5) | (self.tl_offset << 1)


def capacity(messages: tuple[int | None, ...]) -> int:
    """TL bytes a flit can carry when it holds these message words."""
    return PAYLOAD_BYTES - MESSAGE_BYTES * sum(m is not None for m in messages)


def layout_problem(
    tl_len: int, first_tl_start: int, messages: tuple[int | None, ...]
) -> str | None:
    """Why ``(len(tl), first_tl_start, messages)`` cannot form a flit, or ``None``."""
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
    """Why these header values cannot form a flit header, or ``None``."""
    for name, value, top in (("flit_seq", flit_seq, SEQ_MAX), ("ack_req_seq", ack_req_seq,
                             SEQ_MAX), ("flit_seq_lo", flit_seq_lo, 7)):
        if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= top:
            return f"{name}={value!r} does not fit"
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
        if not isinstance(self.tl, bytes | bytearray | memoryview):
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
        """Byte offsets, in the encoded flit, where TL flits begin (for dissectors)."""
        starts: list[int] = []
        for (_, body_off), seg in zip(SEGMENT_OFFSETS, self.segments(), strict=True):
            base = body_off + MESSAGE_BYTES * seg.msg + 4 * seg.tl_offset
            starts.extend(base + TL_FLIT_BYTES * i for i in range(seg.tl_starts))
        return starts

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
        if not isinstance(data, bytes | bytearray | memoryview):
            raise TruncatedError("DL flit", FLIT_BYTES, -1)
        data = bytes(data)
        if len(data) != FLIT_BYTES:
            raise TruncatedError("DL flit", FLIT_BYTES, len(data))
        stored = int.from_bytes(data[CRC_COVERAGE:], "big")
        actual = crc32(data[:CRC_COVERAGE])
        if stored != actual:
            raise CrcError(stored, actual, "DL flit CRC")
        return _parse(data)


@cache
def _segment_table() -> tuple[tuple[int, int, int] | None, ...]:
    """(tl_starts, msg, tl_offset) for each segment-header byte; ``None`` if it is invalid.

    Built once from the declaration, so the hot path does one tuple lookup per segment.
    """
    table: list[tuple[int, int, int] | None] = []
    for byte in range(256):
        try:
            v = SEGMENT_HEADER.from_int(byte)
        except DecodeError:
            table.append(None)  # the only possible failure: alt_sector (reserved) set
        else:
            table.append((v["tl_starts"], v["msg"], v["tl_offset"]))
    return tuple(table)


#: FlitOp by header value, so the hot path does a dict lookup instead of an enum call.
_OPS: dict[int, FlitOp] = {op.value: op for op in FlitOp}


def _parse(data: bytes) -> DLFlit:
    """Parse a flit whose CRC is already known to be good."""
    op_value = data[0] >> 5
    op = _OPS.get(op_value)
    if op is None:
        raise FieldRangeError("dl_header.op", op_value, "unknown op")
    fmt = COMMAND_HEADER if op.is_command else EXPLICIT_HEADER
    fields = fmt.unpack(data[:HEADER_BYTES])
    messages: list[int | None] = []
    pieces = []
    seg_headers = []
    table = _segment_table()
    for k, ((hdr_off, body_off), length) in enumerate(zip(SEGMENT_OFFSETS, SEGMENT_LENGTHS,
                                                          strict=True)):
        entry = table[data[hdr_off]]
        if entry is None:
            raise ReservedBitsError(f"segment{k}.alt_sector", data[hdr_off] & 1)
        starts, msg, offset = entry
        seg_headers.append(entry)
        pos = body_off
        body = length
        if msg:
            messages.append(int.from_bytes(data[pos:pos + MESSAGE_BYTES], "big"))
            pos += MESSAGE_BYTES
            body -= MESSAGE_BYTES
        else:
            messages.append(None)
        bounds = [4 * offset + 64 * i for i in range(3) if 4 * offset + 64 * i < body]
        if starts > len(bounds):
            raise FieldRangeError(f"segment{k}.tl_starts", starts,
                                  f"only {len(bounds)} TL-flit boundaries fit")
        n = bounds[starts] if starts < len(bounds) else body
        pieces.append(data[pos:pos + n])
        fill = data[pos + n:pos + body]
        if fill.count(0) != len(fill):
            raise FieldRangeError(f"segment{k}.fill", next(b for b in fill if b),
                                  "fill bytes must be zero")
    tl = b"".join(pieces)
    first = 4 * seg_headers[0][2]
    msgs = tuple(messages)
    problem = layout_problem(len(tl), first, msgs)
    if problem:
        raise FieldRangeError("segment0.tl_offset", seg_headers[0][2], problem)
    for k, (want, got) in enumerate(zip(segment_layout(len(tl), first, msgs), seg_headers,
                                        strict=True)):
        if (want.tl_offset, want.tl_starts, want.tl_bytes) != (got[2], got[0], len(pieces[k])):
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


__all__ = [
    "FLIT_BYTES",
    "HEADER_BYTES",
    "MESSAGE_BYTES",
    "PAYLOAD_BYTES",
    "SEGMENTS",
    "SEGMENT_LENGTHS",
    "SEGMENT_OFFSETS",
    "SEQ_MAX",
    "TL_FLIT_BYTES",
    "DLFlit",
    "SegmentLayout",
    "capacity",
    "header_problem",
    "layout_problem",
    "segment_layout",
]
