"""The TL flits inside one DL flit, as a computed, read-only Scapy view.

``UALinkDLFlit`` ends with ``tl_flits``, a zero-width field (it takes and
adds no wire bytes, so building is unchanged): on first read after
dissection (so ``rdpcap`` pays nothing for it) the view walks the
segment headers of that one flit the way ``ualink_ref.dl.flit`` defines them
(``specs/dl.md`` §3) — TL bytes follow any message word, TL flits start at
``4*tl_offset + 64*i`` for ``i < tl_starts``, the first uncounted boundary
starts zero fill — and shows the DL flit's TL byte stream as a list of
``DLTLSpan`` layers: the partial TL flit continued from an earlier DL flit,
each TL flit wholly inside (dissected with :class:`~ualink_ref.scapy.tl.TLFlit`
when its ``flit`` is first read: a view costs about what reading its record
did, and only the TL flits looked at pay for their layers), a trailing partial
TL flit and the fill. No earlier state is used, and no bytes raise: whatever
the header bits say, offsets are clipped to the segment.

Imports Scapy (GPL-2.0-only): use it through ``ualink_ref.scapy_layers``.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from scapy.fields import (
    ByteEnumField,
    ByteField,
    ConditionalField,
    Field,
    PacketField,
    ShortField,
    StrField,
)
from scapy.packet import Packet

from ualink_ref.dl.segments import walk_segments
from ualink_ref.scapy.tl import TLFlit, pending_after, tl_flit
from ualink_ref.sizes import DL_FLIT_BYTES as FLIT_BYTES
from ualink_ref.sizes import TL_FLIT_BYTES

#: ``DLTLSpan.kind`` values.
LEADING, WHOLE, TRAILING, FILL, UNEXPLAINED = 0, 1, 2, 3, 4
SPAN_KINDS = {
    LEADING: "partial_from_earlier_dl_flit",
    WHOLE: "tl_flit",
    TRAILING: "partial_into_next_dl_flit",
    FILL: "fill",
    # only in malformed flits: bytes between a TL flit's end and the next start the
    # segment headers give (the codec rejects such a flit)
    UNEXPLAINED: "unexplained_by_segment_headers",
}


class UndissectedTLFlit(NamedTuple):
    """What a view's ``DLTLSpan.fields["flit"]`` holds until the TL flit is first read:
    its 64 bytes and the data half-flits owed before it (immutable: copies share it)."""

    data: bytes
    pending: int


class LazyTLFlitField(PacketField):
    """The ``flit`` of a ``DLTLSpan``: a :class:`~ualink_ref.scapy.tl.TLFlit`, dissected
    from an :class:`UndissectedTLFlit` on first read (``span.flit``, ``show()``, ``repr``,
    building) and then kept in the span's fields. Dissecting from bytes is unchanged."""

    def i2h(self, pkt: Packet | None, x: Any) -> Any:
        """``span.flit``: the dissected TL flit."""
        return super().i2h(pkt, _dissected(pkt, x))

    def i2repr(self, pkt: Packet | None, x: Any) -> str:
        """As for the dissected TL flit."""
        return str(super().i2repr(pkt, _dissected(pkt, x)))

    def addfield(self, pkt: Packet, s: bytes, val: Any) -> bytes:
        """The TL flit's bytes, as built from its layers."""
        return bytes(super().addfield(pkt, s, _dissected(pkt, val)))


def _dissected(pkt: Packet | None, value: Any) -> Any:
    """``value``, or the TL flit it stands for, dissected now and kept in ``pkt``."""
    if not isinstance(value, UndissectedTLFlit):
        return value
    flit = tl_flit(value.data, value.pending)
    if pkt is not None and pkt.fields.get("flit") is value:
        # as DLTLSpan(flit=...) stores it (the TL flit's parent is the span)
        pkt.fields["flit"] = pkt.get_field("flit").any2i(pkt, flit)
    return flit


class DLTLSpan(Packet):
    """A piece of a DL flit's TL byte stream (computed on dissection, never built).

    ``offset`` is the byte offset in the DL flit of the piece's first byte;
    ``length`` its byte count (a piece may cross segment boundaries, skipping
    the segment-header byte and any message word between). A whole TL flit
    is in ``flit``, dissected with ``pending_before`` data half-flits owed
    (0 for the first one in the DL flit: unknown without earlier state);
    partial TL flits and fill are ``raw`` bytes.
    """

    name = "TL bytes in DL flit"
    fields_desc = [  # noqa: RUF012
        ByteEnumField("kind", WHOLE, SPAN_KINDS),
        ShortField("offset", 0),
        ShortField("length", 0),
        ConditionalField(ByteField("pending_before", 0), lambda p: p.kind == WHOLE),
        ConditionalField(LazyTLFlitField("flit", None, TLFlit), lambda p: p.kind == WHOLE),
        ConditionalField(StrField("raw", b""), lambda p: p.kind != WHOLE),
    ]

    def getfieldval(self, attr: str) -> Any:
        """``flit`` is dissected on first read (see :class:`LazyTLFlitField`)."""
        value = super().getfieldval(attr)
        return _dissected(self, value) if attr == "flit" else value


def tl_stream(raw: bytes) -> tuple[list[int], list[int], int | None]:
    """Walk the segment headers of one DL flit's bytes (any bytes, never raises).

    Returns ``(positions, starts, fill)``: the flit offset of every TL-stream
    byte in order, the stream indices where TL flits begin, and the stream
    index where zero fill begins (``None`` when the stream is TL bytes to
    the end of the payload).
    """
    positions, starts, fill, _stream = _walk(raw)
    return positions, starts, fill


def _walk(raw: bytes) -> tuple[list[int], list[int], int | None, bytes]:
    """:func:`tl_stream`, and the TL-stream bytes themselves (a slice per segment)."""
    positions: list[int] = []
    starts: list[int] = []
    pieces: list[bytes] = []
    fill: int | None = None
    for seg in walk_segments(raw, strict=False):  # the codec's own walk, never raising
        if fill is None:
            starts += [len(positions) + s - seg.begin for s in seg.starts]
            if seg.tl_bytes < seg.room:  # the first uncounted boundary starts the fill
                fill = len(positions) + seg.tl_bytes
        positions += range(seg.begin, seg.begin + seg.room)
        pieces.append(raw[seg.begin:seg.begin + seg.room])
    return positions, starts, fill, b"".join(pieces)


def tl_spans(raw: bytes) -> list[DLTLSpan]:
    """The ``DLTLSpan`` pieces of one DL flit's TL byte stream (any bytes)."""
    if len(raw) < FLIT_BYTES:
        return []
    positions, starts, fill, stream = _walk(raw)
    end = len(stream) if fill is None else fill
    spans: list[DLTLSpan] = []

    def add(kind: int, a: int, b: int, **kw: Any) -> None:
        if b > a:
            spans.append(DLTLSpan(kind=kind, offset=positions[a], length=b - a, **kw))

    cursor = min(starts[0] if starts else end, end)
    add(LEADING, 0, cursor, raw=stream[:cursor])
    pending = 0
    for s in starts:
        if s >= end:
            break
        if s < cursor:  # overlaps the previous TL flit: the headers are inconsistent
            continue
        add(UNEXPLAINED, cursor, s, raw=stream[cursor:s])
        if s + TL_FLIT_BYTES <= end:
            data = stream[s:s + TL_FLIT_BYTES]
            add(WHOLE, s, s + TL_FLIT_BYTES, pending_before=pending,
                flit=UndissectedTLFlit(data, pending))
            pending = pending_after(data, pending)  # the TLFlit layer's rule, from the bytes
            cursor = s + TL_FLIT_BYTES
        else:
            add(TRAILING, s, end, raw=stream[s:end])
            cursor = end
    add(UNEXPLAINED, cursor, end, raw=stream[cursor:end])
    add(FILL, max(end, cursor), len(stream), raw=stream[max(end, cursor):])
    return spans


class TLSpansField(Field[Any, Any]):
    """Zero-width field for the ``DLTLSpan`` list of a dissected flit.

    Dissection stores nothing (``None``), so reading a capture costs no more
    than before; the owning packet computes the view on first read through
    :func:`lazy_spans` (``UALinkDLFlit.getfieldval``) and keeps it.
    """

    islist = 1
    holds_packets = 1

    def __init__(self, name: str) -> None:
        super().__init__(name, None)

    def addfield(self, pkt: Packet, s: bytes, val: Any) -> bytes:
        """Nothing goes on the wire: the view is derived from the bytes."""
        return s

    def getfield(self, pkt: Packet, s: bytes) -> tuple[bytes, Any]:
        """Takes no bytes; the view is computed when first read."""
        return s, None

    def i2h(self, pkt: Packet | None, x: Any) -> Any:
        """``pkt.tl_flits`` (attribute access, also through an outer layer): the view."""
        return lazy_spans(pkt) if x is None and pkt is not None else x

    def i2repr(self, pkt: Packet | None, x: Any) -> str:
        """The view's layers (``repr()`` of a dissected flit computes it, as reading
        ``pkt.tl_flits`` does); ``not computed (built, not dissected)`` when the packet
        has no dissected bytes. (``repr()`` leaves the field out of a built packet.)"""
        if x is None and pkt is not None:
            x = lazy_spans(pkt)
        return "not computed (built, not dissected)" if x is None else repr(x)


def lazy_spans(pkt: Packet) -> list[DLTLSpan] | None:
    """The view of a dissected packet's bytes, computed once (``None`` when built)."""
    cache = vars(pkt)
    if "_tl_spans" not in cache:
        # a copy() of a dissected packet keeps its bytes in raw_packet_cache only
        raw = pkt.original or pkt.raw_packet_cache
        cache["_tl_spans"] = tl_spans(bytes(raw)) if raw else None
    spans: list[DLTLSpan] | None = cache["_tl_spans"]
    return spans


__all__ = [
    "FILL",
    "LEADING",
    "SPAN_KINDS",
    "TRAILING",
    "UNEXPLAINED",
    "WHOLE",
    "DLTLSpan",
    "LazyTLFlitField",
    "TLSpansField",
    "UndissectedTLFlit",
    "lazy_spans",
    "tl_spans",
    "tl_stream",
]
