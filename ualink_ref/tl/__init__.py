"""Transaction layer: TL flits and fields, UPLI commands, credits, memory target.

Public names:

* :class:`TransactionLayer` — the sans-IO TL engine (originator and completer);
* :class:`Completion` — the end of one operation (``tag``, ``status``, ``data``);
* :class:`Memory` — sparse byte-addressable memory target;
* :class:`CreditConfig` — receive-buffer capacities granted to the peer;
* :class:`Command`, :class:`Status`, :class:`AtomicOp` — UPLI encodings;
* :func:`dissect` / :func:`dissect_stream` — read a TL flit field by field;
"""

from __future__ import annotations

from ualink_ref.tl.credits import CreditConfig
from ualink_ref.tl.events import Completion, TLCounters
from ualink_ref.tl.flit import TLFlitView, dissect, dissect_stream, encode_control_half
from ualink_ref.tl.memory import Memory
from ualink_ref.tl.transaction import TransactionLayer
from ualink_ref.tl.upli import AtomicOp, Command, Status, apply_atomic

__all__ = [
    "AtomicOp",
    "Command",
    "Completion",
    "CreditConfig",
    "Memory",
    "Status",
    "TLCounters",
    "TLFlitView",
    "TransactionLayer",
    "apply_atomic",
    "dissect",
    "dissect_stream",
    "encode_control_half",
]
