"""Every size the layers share, declared once, with where it comes from.

Layers import these names instead of retyping the numbers; ``specs/README.md``
("Sizes") lists them with the same provenance. Field widths inside a header
are not here: each header's :class:`~ualink_ref.bitfields.BitFormat` declares
its own.
"""

from __future__ import annotations

from typing import Literal

from ualink_ref.errors import EncodeError

#: A DL flit: 640 bytes (public: UALink 200G 1.0 announcements — "640-byte flits").
DL_FLIT_BYTES = 640
#: DL flit header bytes (public third-party model citing the spec's flit-header table).
DL_HEADER_BYTES = 3
#: Segment body lengths, 628 payload bytes in all (public third-party model citing the
#: spec's segment table); each segment has a one-byte header.
DL_SEGMENT_LENGTHS: tuple[int, ...] = (128, 128, 128, 124, 120)
#: Segment headers, one byte each, one per segment.
DL_SEGMENTS = len(DL_SEGMENT_LENGTHS)
#: CRC-32 at the end of each DL flit (same source; CRC parameters in specs/dl.md).
DL_CRC_BYTES = 4
#: TL bytes one DL flit carries: 640 - 3 - 5 - 4 = 628 (checked against the segments).
DL_PAYLOAD_BYTES = DL_FLIT_BYTES - DL_HEADER_BYTES - DL_SEGMENTS - DL_CRC_BYTES
assert sum(DL_SEGMENT_LENGTHS) == DL_PAYLOAD_BYTES, "segment table and flit size disagree"
#: A DL message word (one segment header can announce one): 4 bytes.
DL_MESSAGE_BYTES = 4
#: A TL flit: 64 bytes, two 32-byte half-flits (public: UALink 200G 1.0 — "64-byte flits").
TL_FLIT_BYTES = 64
#: A TL half-flit (control or data): 32 bytes.
TL_HALF_BYTES = TL_FLIT_BYTES // 2
#: The largest single UALink request / response: 256 bytes (public: UALink 200G 1.0).
MAX_REQUEST_BYTES = 256
#: DL sequence numbers are 9 bits, 1..511; 0 means "none" (public third-party model).
SEQ_BITS = 9
SEQ_MAX = (1 << SEQ_BITS) - 1
#: The largest go-back-N window: half the sequence space, rounded up (project choice:
#: keeps "ahead" and "behind" distinguishable, specs/dl.md rule 2).
MAX_WINDOW = (SEQ_MAX + 1) // 2

#: The FEC modes of the PHY; the one name used for them everywhere is ``fec``.
FecMode = Literal["kp4", "ll", "none"]
FEC_MODES: tuple[FecMode, ...] = ("kp4", "ll", "none")
#: Wire bytes of one DL flit per FEC mode: RS(544,514) carries 5140 bits per 5440 (680 B),
#: two RS(272,258) codewords likewise 680 B, none sends the 640 bytes (specs/phy.md).
WIRE_BYTES_PER_FLIT: dict[str, int] = {"kp4": 680, "ll": 680, "none": DL_FLIT_BYTES}

#: One flit slot at 200G: 680 wire bytes at 212.5 Gb/s = 25.6 ns (project choice: the
#: 200G lane rate with RS(544,514) overhead, used as the slot length in every mode).
SLOT_NS = 25.6


def check_fec(fec: object) -> FecMode:
    """``fec`` if it names a FEC mode; else an :class:`~ualink_ref.errors.EncodeError`
    (a ``ValueError``) listing the modes."""
    if fec not in FEC_MODES:
        raise EncodeError(f"fec must be one of {FEC_MODES}, got {fec!r}", field="fec")
    return fec


__all__ = [
    "DL_CRC_BYTES",
    "DL_FLIT_BYTES",
    "DL_HEADER_BYTES",
    "DL_MESSAGE_BYTES",
    "DL_PAYLOAD_BYTES",
    "DL_SEGMENTS",
    "DL_SEGMENT_LENGTHS",
    "FEC_MODES",
    "MAX_REQUEST_BYTES",
    "MAX_WINDOW",
    "SEQ_BITS",
    "SEQ_MAX",
    "SLOT_NS",
    "TL_FLIT_BYTES",
    "TL_HALF_BYTES",
    "WIRE_BYTES_PER_FLIT",
    "FecMode",
    "check_fec",
]
