"""Values the transaction layer reports: completions, rejected fields, link failure, counters."""

from __future__ import annotations

from dataclasses import dataclass

from ualink_ref.errors import UALinkError
from ualink_ref.tl.codec import TLField
from ualink_ref.tl.upli import Status


@dataclass(frozen=True, slots=True)
class Completion:
    """The end of one operation: its handle (what ``read`` / ``write`` / ``atomic``
    returned — not the wire tag, which is reused), status and returned data (or ``None``).

    ``error`` is ``None`` when the status came from the completer's response; otherwise
    it names why this end completed the operation itself (a response that did not fit
    the request, or the link failed — ``specs/tl.md``, "Errors from the peer"); the
    status is then :attr:`Status.DATA_ERROR`.
    """

    handle: int
    status: Status
    data: bytes | None
    error: str | None = None

    def __repr__(self) -> str:
        # ``error`` only when there is one: a normal completion reads as before.
        extra = f", error={self.error!r}" if self.error is not None else ""
        return (f"Completion(handle={self.handle!r}, status={self.status!r}, "
                f"data={self.data!r}{extra})")


@dataclass(frozen=True, slots=True)
class FieldRejected:
    """A control field from the peer broke a rule and was dropped on its own
    (its data half-flits are skipped, credits it consumed are returned).

    ``field`` is the typed field, ``error`` the rule it broke (a
    :class:`~ualink_ref.errors.ProtocolError` or ``DecodeError`` carrying the values).
    """

    field: TLField
    error: UALinkError

    @property
    def reason(self) -> str:
        """The rule broken, as text."""
        return f"{type(self.error).__name__}: {self.error}"


@dataclass(frozen=True, slots=True)
class LinkFailed:
    """The TL stream from the peer can no longer be followed (``reason``); this end
    completed everything outstanding with an error and accepts no new operations."""

    reason: str


#: Everything :meth:`TransactionLayer.receive` returns.
TLEvent = Completion | FieldRejected | LinkFailed


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
    fields_rejected: int = 0  # peer fields dropped on their own (FieldRejected events)
    flits_ignored: int = 0  # flits received after the link failed
    requests_deferred: int = 0  # requests that waited for room in the response queue


__all__ = ["Completion", "FieldRejected", "LinkFailed", "TLCounters", "TLEvent"]
