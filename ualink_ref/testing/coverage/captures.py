"""Sampling a capture (pcap / pcapng bytes): pseudo-headers, DL flits, TL flits, requests.

Every packet's first 16 bytes are sampled raw as the pseudo-header; the valid
records are dissected (:func:`ualink_ref.capture.dissect.dissect_records`, the one
walk) and every DL flit (after FEC decode), every TL flit that framed and every
request with its record's FEC mode are sampled. An unreadable file samples the
packets before the fault (the reader's own rule).
"""

from __future__ import annotations

from ualink_ref.capture.dissect import dissect_records
from ualink_ref.capture.format import CaptureRecord, iter_capture_file, iter_capture_tolerant
from ualink_ref.errors import DecodeError
from ualink_ref.testing.coverage.model import Coverage
from ualink_ref.testing.coverage.wire import sample_dl_flit, sample_pseudo_header, sample_tl_flits
from ualink_ref.testing.vectors.limits import MAX_ARTIFACT_BYTES


def sample_capture_bytes(cov: Coverage, data: bytes) -> int:
    """Sample one capture file's bytes; return the records sampled."""
    if not data or len(data) > MAX_ARTIFACT_BYTES:
        return 0
    records: list[CaptureRecord] = []
    try:
        for pkt in iter_capture_file(data):
            sample_pseudo_header(cov, pkt.data)
        records = [rec for _, rec in iter_capture_tolerant(data)
                   if isinstance(rec, CaptureRecord)]
    except DecodeError:
        pass  # a framing fault: what was read before it stays sampled
    for flit in dissect_records(records):
        sample_dl_flit(cov, flit.raw)
        for raw, owed in zip(flit.tl_raw, flit.tl_owed, strict=True):
            if owed is not None:  # None: it did not frame, nothing in it can be read
                sample_tl_flits(cov, [raw], pending=owed, fec=flit.record.fec_mode)
    return len(records)


__all__ = ["sample_capture_bytes"]
