"""Harness ports for a bare layer: a ``DataLink`` or a ``TransactionLayer`` on its own.

:class:`~ualink_ref.node.endpoint.Endpoint` is a harness port by itself; these
adapters let the test pairs (:mod:`~ualink_ref.net.link_pair`,
:mod:`~ualink_ref.net.tl_pair`) drive a single layer through the same
:class:`~ualink_ref.net.harness.Network`, one flit per slot.
"""

from __future__ import annotations

from ualink_ref.dl import DataLink, DLEvent
from ualink_ref.tl.events import TLEvent
from ualink_ref.tl.transaction import TransactionLayer


class DataLinkPort:
    """A :class:`DataLink` as a harness port: its 640-byte flits are the wire bytes.

    Each slot runs the replay timer, then ``poll``. Every event the link
    produces — from the timer or from ``receive`` — is also kept in
    :attr:`events` (the timer's have no other way out of a poll).
    """

    def __init__(self, dl: DataLink) -> None:
        self.dl = dl
        self.events: list[DLEvent] = []

    def poll_many(self, now: float, max_flits: int) -> tuple[bytes, int]:
        """Up to ``max_flits`` flits for slots ``now, now + 1, ...`` (stops when idle)."""
        out = []
        for i in range(max_flits):
            slot = now + i
            deadline = self.dl.next_timer()
            if deadline is not None and slot >= deadline:
                self.events.extend(self.dl.handle_timer(slot))
            flit = self.dl.poll(slot)
            if flit is None:
                break
            out.append(flit)
        return b"".join(out), len(out)

    def receive(self, data: bytes, now: float) -> list[DLEvent]:
        """Give one received flit to the DataLink; return (and keep) its events."""
        events = self.dl.receive(data, now)
        self.events.extend(events)
        return events

    @property
    def busy(self) -> bool:
        """True unless the DataLink is idle."""
        return not self.dl.idle


class TransactionLayerPort:
    """A :class:`TransactionLayer` as a harness port: its 64-byte TL flits are the wire."""

    def __init__(self, tl: TransactionLayer) -> None:
        self.tl = tl

    def poll_many(self, now: float, max_flits: int) -> tuple[bytes, int]:
        """Up to ``max_flits`` TL flits (stops when the TL has nothing to send)."""
        out = []
        for i in range(max_flits):
            flit = self.tl.poll(now + i)
            if flit is None:
                break
            out.append(flit)
        return b"".join(out), len(out)

    def receive(self, data: bytes, now: float) -> list[TLEvent]:
        """Give one TL flit to the TransactionLayer; return its events (completions,
        and rejected fields or a link failure if the peer broke the rules)."""
        return self.tl.receive(data, now)

    @property
    def busy(self) -> bool:
        """True while the TL has anything queued, outstanding or owed."""
        return self.tl.busy


__all__ = ["DataLinkPort", "TransactionLayerPort"]
