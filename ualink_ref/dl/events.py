"""Events a :class:`~ualink_ref.dl.DataLink` reports upward: small frozen dataclasses
(specs/dl.md section 6, "For the layer above")."""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

from ualink_ref.dl.messages import DLMessage


class TLFlitDelivered(NamedTuple):
    """A 64-byte TL flit received in order, exactly once.

    Immutable like every event; a ``NamedTuple`` rather than a frozen dataclass
    because one is made per flit (project choice, see ``tl.events.Completion``).
    """

    data: bytes


@dataclass(frozen=True, slots=True)
class DLMessageReceived:
    """A DL message word taken from a received flit (already parsed)."""

    message: DLMessage


@dataclass(frozen=True, slots=True)
class CrcErrorDetected:
    """A received flit failed its CRC and was dropped."""

    expected: int
    actual: int


@dataclass(frozen=True, slots=True)
class MalformedFlit:
    """A received flit had a good CRC but broke the format; it was dropped."""

    reason: str


@dataclass(frozen=True, slots=True)
class SequenceGap:
    """A data flit arrived out of sequence (flits were lost); it was dropped."""

    expected_seq: int
    received_seq: int | None  # None for an implicit-sequence flit (only its low bits known)


@dataclass(frozen=True, slots=True)
class ReplayStarted:
    """This end began replaying its unacknowledged flits from ``from_seq``."""

    from_seq: int
    flits: int
    reason: str  # "request" (the peer asked), "timeout" (replay timer) or "retrain"


@dataclass(frozen=True, slots=True)
class RetrainNeeded:
    """``replays`` consecutive replays made no progress: the link needs retraining."""

    replays: int


DLEvent = (
    TLFlitDelivered | DLMessageReceived | CrcErrorDetected | MalformedFlit | SequenceGap
    | ReplayStarted | RetrainNeeded
)

__all__ = [
    "CrcErrorDetected",
    "DLEvent",
    "DLMessageReceived",
    "MalformedFlit",
    "ReplayStarted",
    "RetrainNeeded",
    "SequenceGap",
    "TLFlitDelivered",
]
