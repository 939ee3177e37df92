"""Values the transaction layer reports: completions and running counters."""

from __future__ import annotations

from dataclasses import dataclass

from ualink_ref.tl.upli import Status


@dataclass(frozen=True, slots=True)
class Completion:
    """The end of one operation: its handle (what ``read`` / ``write`` / ``atomic``
    returned — not the wire tag, which is reused), status and returned data (or ``None``)."""

    handle: int
    status: Status
    data: bytes | None


@dataclass
class TLCounters:
    """Running totals of one TransactionLayer (``TransactionLayer.counters`` returns a
    snapshot, as the DL's and the endpoint's do)."""

    flits_sent: int = 0
    flits_received: int = 0
    requests_sent: int = 0
    requests_received: int = 0
    responses_sent: int = 0
    responses_received: int = 0
    compressed_requests: int = 0
    compressed_responses: int = 0
    credit_returns_sent: int = 0
    credit_only_halves: int = 0
    credit_stalls: int = 0
    tag_stalls: int = 0


__all__ = ["Completion", "TLCounters"]
