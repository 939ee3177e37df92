"""The read-only TL view of a DL flit (``UALinkDLFlit.tl_flits``, ``ualink_ref.scapy.tlview``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

pytest.importorskip("scapy")

from scapy.utils import rdpcap

from ualink_ref import scapy_layers as sl
from ualink_ref.capture.dissect import dissect_records
from ualink_ref.capture.format import read_capture
from ualink_ref.dl.flit import FLIT_BYTES, PAYLOAD_BYTES, SEGMENT_OFFSETS, DLFlit, capacity
from ualink_ref.dl.formats import SEGMENT_HEADER
from ualink_ref.scapy.tlview import FILL, LEADING, TRAILING, WHOLE, tl_spans

CAPTURES = sorted((Path(__file__).resolve().parents[2] / "vectors" / "captures")
                  .glob("*.pcap"))


def _spans(pkt: Any, kind: int) -> list[Any]:
    return [s for s in pkt.tl_flits if s.kind == kind]


@pytest.mark.parametrize("path", CAPTURES, ids=lambda p: p.name)
def test_view_matches_codec_and_dissector(path: Path) -> None:
    """Whole TL flits shown == the codec's TL flits at tl_flit_starts() == the dissector's."""
    pkts = rdpcap(str(path))
    dissected = dissect_records(read_capture(path))
    by_index = {f.index: f for f in dissected}
    # data half-flits owed before each TL flit the dissector completed, per direction
    pending_before: dict[tuple[int, int], int] = {}
    owed: dict[str, int] = {}
    for f in dissected:
        for n, view in enumerate(f.tl_flits):
            pending_before[(f.index, n)] = owed.get(f.direction, 0)
            owed[f.direction] = view.pending_after
    checked = kinds_checked = 0
    for i, p in enumerate(pkts):
        flit = p.payload
        if not isinstance(flit, sl.UALinkDLFlit) or flit.crc_valid != 1:
            continue
        raw = bytes(flit)
        codec = DLFlit.decode(raw)
        tl, first = codec.tl, codec.first_tl_start
        whole = _spans(flit, WHOLE)
        # the codec's view: TL flits begin at first + 64k in its TL stream, at tl_flit_starts()
        expected = [tl[s:s + 64] for s in range(first, len(tl) - 63, 64)] if tl else []
        assert [bytes(s.flit) for s in whole] == expected, (path.name, i)
        starts = [s.offset for s in flit.tl_flits if s.kind in (WHOLE, TRAILING)]
        assert starts == codec.tl_flit_starts(), (path.name, i)
        # labelled pieces: leading partial, trailing partial and fill cover the rest exactly
        lead = _spans(flit, LEADING)
        assert [s.raw for s in lead] == ([tl[:first]] if first else [])
        trail = b"".join(s.raw for s in _spans(flit, TRAILING))
        assert b"".join(s.raw for s in lead) + b"".join(bytes(s.flit) for s in whole) + trail \
            == tl
        fill = _spans(flit, FILL)
        assert sum(s.length for s in fill) == capacity(codec.messages) - len(tl)
        assert all(set(s.raw) <= {0} for s in fill)
        # the project's dissector (stateful, across records) completed the same TL flits here
        d = by_index[i]
        if d.status == "accepted" and whole:
            assert list(d.tl_raw[-len(whole):]) == expected, (path.name, i)
            if len(d.tl_flits) == len(d.tl_raw):
                views = d.tl_flits[-len(whole):]
                before = pending_before[(i, len(d.tl_flits) - len(whole))]
                # the view assumes nothing is owed before the first whole TL flit; when
                # that holds, every half-flit kind agrees with the stateful dissection
                if before == 0:
                    for span, view in zip(whole, views, strict=True):
                        kinds = ["data" if isinstance(h, sl.TLDataHalf) else "control"
                                 for h in span.flit.halves]
                        assert kinds == [h.kind for h in view.halves], (path.name, i)
                    kinds_checked += 1
        checked += 1
    assert checked > 0 and kinds_checked > 0


def test_show_prints_requests_with_enum_names() -> None:
    pkt = rdpcap(str(CAPTURES[[p.name for p in CAPTURES].index("clean.pcap")]))[2]
    text = pkt.show(dump=True)
    view = text[text.index("\\tl_flits"):]
    assert "kind      = tl_flit" in view
    assert "cmd       = WriteFull" in view and "ftype     = COMPRESSED_REQUEST" in view
    assert "TL data half-flit" in view


def test_partials_and_fill_are_labelled() -> None:
    seen: set[str] = set()
    for path in CAPTURES:
        for p in rdpcap(str(path)):
            if isinstance(p.payload, sl.UALinkDLFlit) and p.payload.crc_valid == 1:
                text = p.payload.show(dump=True)
                seen |= {k for k in ("partial_from_earlier_dl_flit", "partial_into_next_dl_flit",
                                     "kind      = fill") if k in text}
    assert seen == {"partial_from_earlier_dl_flit", "partial_into_next_dl_flit",
                    "kind      = fill"}


def test_ack_flit_is_all_fill_and_built_flit_has_no_view() -> None:
    from ualink_ref.dl.formats import FlitOp

    raw = DLFlit(FlitOp.ACK, ack_req_seq=5).encode()
    pkt = sl.UALinkDLFlit(raw)
    assert [(s.kind, s.length) for s in pkt.tl_flits] == [(FILL, PAYLOAD_BYTES)]
    assert sl.UALinkDLFlit().tl_flits is None
    assert "not computed" in sl.UALinkDLFlit().show(dump=True)


@given(st.binary(min_size=FLIT_BYTES, max_size=FLIT_BYTES))
def test_view_of_any_640_bytes(raw: bytes) -> None:
    """Any bytes: no crash, build unchanged, the pieces cover the payload once, in order."""
    pkt = sl.UALinkDLFlit(raw)
    assert bytes(pkt) == raw
    msg = SEGMENT_HEADER.position("msg").shift
    messages = tuple(1 if raw[h] >> msg & 1 else None for h, _ in SEGMENT_OFFSETS)
    spans = pkt.tl_flits
    assert sum(s.length for s in spans) == capacity(messages)
    offsets = [s.offset for s in spans]
    assert offsets == sorted(offsets) and len(set(offsets)) == len(offsets)
    for s in spans:
        assert s.length == (64 if s.kind == WHOLE else len(s.raw)) > 0
        if s.kind == WHOLE:
            assert len(bytes(s.flit)) == 64
    pkt.show(dump=True)


@given(st.binary(max_size=FLIT_BYTES + 8))
def test_tl_spans_any_length(raw: bytes) -> None:
    """Short input gives no view; 640 bytes or more always give one (never raises)."""
    spans = tl_spans(raw)
    assert (spans != []) == (len(raw) >= FLIT_BYTES)


def test_view_is_lazy_kept_and_survives_copy() -> None:
    pkt = rdpcap(str(CAPTURES[[p.name for p in CAPTURES].index("clean.pcap")]))[2]
    flit = pkt.payload
    assert flit.fields["tl_flits"] is None  # nothing computed while reading the capture
    view = pkt.tl_flits  # through the record layer
    assert view is flit.tl_flits and len(view) > 1
    assert [bytes(s) for s in pkt.copy().tl_flits] == [bytes(s) for s in view]
    assert bytes(flit) == bytes(pkt)[16:]  # reading the view leaves the built bytes alone
