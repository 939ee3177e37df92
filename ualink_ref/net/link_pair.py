"""Two :class:`DataLink` ends over seeded faulty channels (a test and simulation helper).

Like h11's ``ConnectionPair``, and a thin use of the one harness: :class:`LinkPair`
puts ends ``a`` and ``b`` on a :class:`~ualink_ref.net.harness.Network` (one
flit per slot, ``edge="last_slot"``: what arrives in a slot is received after
that slot's sends), with a :class:`~ualink_ref.net.channels.FaultyChannel`
per direction whose ``delay`` is the link latency. Every random choice comes
from the channels' seeds.
"""

from __future__ import annotations

from ualink_ref.dl.datalink import DataLink
from ualink_ref.dl.events import DLEvent, TLFlitDelivered
from ualink_ref.errors import LinkStalledError
from ualink_ref.net.channels import FaultyChannel
from ualink_ref.net.harness import Network, WireChunk
from ualink_ref.net.ports import DataLinkPort


class LinkPair:
    """Ends ``a`` and ``b`` joined by channels ``ab`` (a to b) and ``ba`` (b to a)."""

    def __init__(self, a: DataLink | None = None, b: DataLink | None = None,
                 ab: FaultyChannel | None = None, ba: FaultyChannel | None = None) -> None:
        self.a = a or DataLink()
        self.b = b or DataLink()
        self.ab = ab or FaultyChannel()
        self.ba = ba or FaultyChannel(seed=1)
        self._ports = {"a": DataLinkPort(self.a), "b": DataLinkPort(self.b)}
        self.network = Network(batch=1, edge="last_slot")
        for name, port in self._ports.items():
            self.network.add_port(name, port)
        self.network.connect("a", "b", latency=self.ab.delay, latency_ba=self.ba.delay,
                             channel_ab=self.ab, channel_ba=self.ba)
        #: Set to True to record every flit as sent: ``(slot, "ab" / "ba", flit)``.
        self.record_wire = False
        self.wire: list[tuple[int, str, bytes]] = []
        self.network.add_tap(self._tap)

    def _tap(self, chunk: WireChunk) -> None:
        if self.record_wire:
            self.wire.append((int(chunk.sent_at), "ab" if chunk.src == "a" else "ba", chunk.sent))

    @property
    def now(self) -> int:
        """The next slot to run."""
        return int(self.network.now)

    @property
    def events(self) -> dict[str, list[DLEvent]]:
        """Every event each end produced (timer and receive), in order."""
        return {name: port.events for name, port in self._ports.items()}

    @property
    def delivered(self) -> dict[str, list[bytes]]:
        """TL flits each end delivered, in order."""
        return {name: [e.data for e in port.events if isinstance(e, TLFlitDelivered)]
                for name, port in self._ports.items()}

    def step(self) -> None:
        """Advance one flit slot."""
        self.network.step()

    def idle(self) -> bool:
        """Nothing queued, unacknowledged, owed or on the wire at either end."""
        return not self.network.busy

    def run(self, slots: int) -> None:
        """Advance ``slots`` flit slots."""
        for _ in range(slots):
            self.network.step()

    def run_until_idle(self, max_slots: int = 100_000) -> int:
        """Step until :meth:`idle`; return the slots used (raise if ``max_slots`` pass)."""
        start = self.now
        while not self.idle():
            if self.now - start >= max_slots:
                raise LinkStalledError(max_slots, "DataLink pair not idle")
            self.step()
        return self.now - start


__all__ = ["LinkPair"]
