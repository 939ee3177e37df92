"""Issue 15, deliverable 7: a bare TransactionLayer against a hostile peer
(rules and invariants in ``tests/helpers/hostile_peer.py``)."""

from __future__ import annotations

from hypothesis import settings

from tests.helpers.hostile_peer import CREDITS, HONEST, LIMITS, HostilePeer
from ualink_ref.tl import TransactionLayer
from ualink_ref.tl.config import TLConfig


class HostileTL(HostilePeer):
    """The peer's TL flits go straight to the honest TL; its output comes straight back."""

    def __init__(self) -> None:
        super().__init__()
        self._tl = TransactionLayer(HONEST, self.memory, config=TLConfig(
            credits=CREDITS, compress=False, limits=LIMITS))

    @property
    def tl(self) -> TransactionLayer:
        return self._tl

    def deliver(self, tl_flits: list[bytes]) -> list[object]:
        events: list[object] = []
        for flit in tl_flits:
            events.extend(self._tl.receive(flit))
        return events

    def collect(self, budget: int) -> list[bytes]:
        out = []
        for _ in range(budget):
            flit = self._tl.poll()
            if flit is None:
                break
            out.append(flit)
        return out


HostileTL.TestCase.settings = settings(
    HostileTL.TestCase.settings, stateful_step_count=80, max_examples=100
)
TestHostileTL = HostileTL.TestCase
