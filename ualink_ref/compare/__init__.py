"""RoCEv2 vs ualink_ref: wire efficiency of Load / Store / Atomic traffic, op by op.

* :mod:`ualink_ref.compare.headers` — RoCEv2 header sizes with their sources,
  the RETH / AtomicETH / AtomicAckETH BitFormats, PHY coding overheads;
* :mod:`ualink_ref.compare.mapping` — how each operation becomes RoCEv2 packets;
* :mod:`ualink_ref.compare.ualink_side` — what the ualink_ref stack really
  sends for the same operations (measured by running it);
* :mod:`ualink_ref.compare.report` — the side-by-side table, the mixed
  workload, the literature figures; ``ualink-ref compare`` prints it.

The RoCEv2 frames themselves are built with Scapy in :mod:`ualink_ref.scapy.roce`,
whose counter the caller passes in (``ualink-ref compare`` does).
"""

from __future__ import annotations

from ualink_ref.compare.headers import (
    ATOMIC_ACK_ETH,
    ATOMIC_ETH,
    HEADER_SIZES,
    RETH,
    HeaderSize,
    frame_bytes,
)
from ualink_ref.compare.mapping import (
    ATOMIC_KINDS,
    OP_KINDS,
    CompareOp,
    FwdRev,
    RoceMapping,
    RocePacket,
    map_op,
)
from ualink_ref.compare.report import (
    MIX,
    Headline,
    LiteratureFigure,
    Report,
    Row,
    build_report,
    headline,
    literature_figures,
)
from ualink_ref.compare.ualink_side import UalinkCount, measure_ualink

__all__ = [
    "ATOMIC_ACK_ETH",
    "ATOMIC_ETH",
    "ATOMIC_KINDS",
    "HEADER_SIZES",
    "MIX",
    "OP_KINDS",
    "RETH",
    "CompareOp",
    "FwdRev",
    "HeaderSize",
    "Headline",
    "LiteratureFigure",
    "Report",
    "RoceMapping",
    "RocePacket",
    "Row",
    "UalinkCount",
    "build_report",
    "frame_bytes",
    "headline",
    "literature_figures",
    "map_op",
    "measure_ualink",
]
