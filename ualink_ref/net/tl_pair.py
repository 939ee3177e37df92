"""Two TransactionLayers connected flit by flit, with no DL in between.

For tests and examples (h11's ``ConnectionPair`` habit), a thin use of the one
harness: each :meth:`TLPair.step` is one flit slot of a
:class:`~ualink_ref.net.harness.Network` (``edge="last_slot"``): each side
may send one TL flit, which is received ``latency`` slots later, after that
slot's sends. The DL's guarantee (in order, exactly once) holds trivially.
Each slot first runs both TLs' completion timers (``timeout_slots``,
``specs/tl.md`` rules T1-T6), so an operation whose answer never comes ends
with TIMEOUT even while nothing arrives.
"""

from __future__ import annotations

from ualink_ref.errors import LinkStalledError
from ualink_ref.net.harness import Network, WireChunk
from ualink_ref.net.ports import TransactionLayerPort
from ualink_ref.tl.events import Completion, TLEvent
from ualink_ref.tl.transaction import TransactionLayer


class TLPair:
    """Drive ``a`` and ``b`` against each other; optionally record every flit."""

    def __init__(
        self, a: TransactionLayer, b: TransactionLayer, *, latency: int = 0, record: bool = False
    ) -> None:
        if latency < 0:
            raise ValueError("latency must be >= 0")
        self.a = a
        self.b = b
        self.latency = latency
        #: ``(slot, "a->b" / "b->a", flit)`` for every flit sent, with ``record``.
        self.trace: list[tuple[int, str, bytes]] | None = [] if record else None
        self.network = Network(batch=1, edge="last_slot")
        self.network.add_port("a", TransactionLayerPort(a))
        self.network.add_port("b", TransactionLayerPort(b))
        self.network.connect("a", "b", latency=latency)
        self.network.add_tap(self._tap)
        #: Every completion each side produced so far, in order.
        self.completions: dict[str, list[Completion]] = {"a": [], "b": []}
        #: Every other TL event (FieldRejected, LinkFailed, LateResponse) each side reported.
        self.other_events: dict[str, list[TLEvent]] = {"a": [], "b": []}

    def _tap(self, chunk: WireChunk) -> None:
        if self.trace is not None:
            self.trace.append((int(chunk.sent_at), f"{chunk.src}->{chunk.dst}", chunk.sent))

    @property
    def slot(self) -> int:
        """The next slot to run."""
        return int(self.network.now)

    def step(self) -> int:
        """One flit slot; return the number of flits sent in it."""
        sent_before = self._flits_sent()
        slot = self.network.now
        timed_out = [(name, c) for name, tl in (("a", self.a), ("b", self.b))
                     if (deadline := tl.next_timer()) is not None and slot >= deadline
                     for c in tl.run_timer(slot)]
        for name, event in timed_out + self.network.step():
            if type(event) is Completion:
                self.completions[name].append(event)
            else:  # a rejected field or a failed link: kept apart from the completions
                self.other_events[name].append(event)
        return self._flits_sent() - sent_before

    def _flits_sent(self) -> int:
        return self.a.counters.flits_sent + self.b.counters.flits_sent

    @property
    def in_flight(self) -> int:
        """Flits sent and not yet delivered."""
        return self.network.in_flight

    def run(self, max_slots: int = 1_000_000) -> tuple[list[Completion], list[Completion]]:
        """Step until both sides are quiet; return the completions of ``a`` and ``b``
        that arrived during this call.

        Raises :class:`~ualink_ref.errors.LinkStalledError` if the link is still
        busy after ``max_slots``.
        """
        start = {name: len(done) for name, done in self.completions.items()}
        idle = 0
        for _ in range(max_slots):
            sent = self.step()
            if sent == 0 and not self.network.busy:
                idle += 1
                if idle >= 2:
                    return (self.completions["a"][start["a"]:],
                            self.completions["b"][start["b"]:])
            else:
                idle = 0
        raise LinkStalledError(max_slots, "TLPair still busy")


__all__ = ["TLPair"]
