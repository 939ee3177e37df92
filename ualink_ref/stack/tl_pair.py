"""Two TransactionLayers connected flit by flit, with no DL in between.

For tests and examples (h11's ``ConnectionPair`` habit): each :meth:`TLPair.step`
is one flit slot: each side may send one TL flit, which arrives ``latency``
slots later. The DL's guarantee (in order, exactly once) holds trivially.
"""

from __future__ import annotations

from collections import deque

from ualink_ref.tl.transaction import Completion, TransactionLayer


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
        self.slot = 0
        self.trace: list[tuple[int, str, bytes]] | None = [] if record else None
        self._a_to_b: deque[tuple[int, bytes]] = deque()
        self._b_to_a: deque[tuple[int, bytes]] = deque()

    def step(self) -> int:
        """One flit slot; return the number of flits sent in it."""
        sent = 0
        for src, pipe, name in ((self.a, self._a_to_b, "a->b"), (self.b, self._b_to_a, "b->a")):
            flit = src.poll_flit()
            if flit is not None:
                pipe.append((self.slot + self.latency, flit))
                sent += 1
                if self.trace is not None:
                    self.trace.append((self.slot, name, flit))
        for dst, pipe in ((self.b, self._a_to_b), (self.a, self._b_to_a)):
            while pipe and pipe[0][0] <= self.slot:
                dst.receive_flit(pipe.popleft()[1])
        self.slot += 1
        return sent

    @property
    def in_flight(self) -> int:
        """Flits sent and not yet delivered."""
        return len(self._a_to_b) + len(self._b_to_a)

    def run(self, max_slots: int = 1_000_000) -> tuple[list[Completion], list[Completion]]:
        """Step until both sides are quiet; return the completions of ``a`` and ``b``.

        Raises ``RuntimeError`` if the link is still busy after ``max_slots``.
        """
        got_a: list[Completion] = []
        got_b: list[Completion] = []
        idle = 0
        for _ in range(max_slots):
            sent = self.step()
            _drain(self.a, got_a)
            _drain(self.b, got_b)
            if sent == 0 and not self.in_flight and not self.a.busy and not self.b.busy:
                idle += 1
                if idle >= 2:
                    return got_a, got_b
            else:
                idle = 0
        raise RuntimeError(f"TLPair still busy after {max_slots} slots")


def _drain(tl: TransactionLayer, out: list[Completion]) -> None:
    event = tl.next_event()
    while event is not None:
        out.append(event)
        event = tl.next_event()


__all__ = ["TLPair"]
