"""Values the transaction layer reports: completions, rejected fields, link failure, counters."""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

from ualink_ref.errors import UALinkError
from ualink_ref.tl.codec import TLField
from ualink_ref.tl.upli import Status


class Completion(NamedTuple):
    """The end of one operation: its handle (what ``read`` / ``write`` / ``atomic``
    returned — not the wire tag, which is reused), status and returned data (or ``None``).

    ``error`` is ``None`` when the status came from the completer's response(s);
    otherwise it names why this end completed the operation itself: a response that
    did not fit the request or broke the split rules, or the link failed
    (``specs/tl.md``, "Errors from the peer", "Split responses") — the status is then
    :attr:`Status.DATA_ERROR` — or no response came in time (:attr:`Status.TIMEOUT`,
    rule T2).

    ``poisoned`` is a mask of the request's data beats (bit i = beat i) the completer
    answered ``DATA_ERROR``: their data was poisoned (rule P3). The status is then
    ``DATA_ERROR``; ``data`` holds the other beats' bytes with the poisoned beats' bytes
    zero (they never travel), or is ``None`` when every beat was poisoned.

    Immutable like every event; a ``NamedTuple`` rather than a frozen dataclass
    because one is made per operation, and a frozen dataclass's ``__init__`` costs
    about three times as much (project choice, specs/README.md "Composition").
    """

    handle: int
    status: Status
    data: bytes | None
    error: str | None = None
    poisoned: int = 0

    def __repr__(self) -> str:
        # ``error`` / ``poisoned`` only when set: a normal completion reads as before.
        extra = f", error={self.error!r}" if self.error is not None else ""
        if self.poisoned:
            extra += f", poisoned={self.poisoned:#x}"
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


@dataclass(frozen=True, slots=True)
class LateResponse:
    """A response for a tag whose operation this end already ended, discarded
    (``specs/tl.md`` rules T3, S7): ``after`` is ``"timeout"`` (the op timed out) or
    ``"error"`` (an earlier piece broke the split rules). Its credits were returned;
    ``handle`` is the operation it belonged to; ``final`` says it carried ``last`` = 1,
    which released the quarantined ``tag``."""

    handle: int
    tag: int
    field: TLField
    after: str
    final: bool


#: Everything :meth:`TransactionLayer.receive` returns.
TLEvent = Completion | FieldRejected | LinkFailed | LateResponse


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
    split_responses_sent: int = 0  # responses sent as one piece of a split answer
    split_responses_received: int = 0  # pieces received with offset != 0 or last == 0
    poisoned_beats_sent: int = 0  # read beats answered DATA_ERROR (poisoned), completer side
    poisoned_completions: int = 0  # completions with poisoned beats (originator side)
    timeouts: int = 0  # operations ended by the completion timer (rule T2)
    late_responses: int = 0  # responses discarded after their op timed out (rule T3)
    responses_discarded: int = 0  # pieces discarded after their op ended in error (rule S7)
    requests_dropped: int = 0  # requests the completer never answers (stop_tags, rule T5)


__all__ = ["Completion", "FieldRejected", "LateResponse", "LinkFailed", "TLCounters", "TLEvent"]
