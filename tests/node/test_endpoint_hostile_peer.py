"""Issue 15, deliverable 7: a full Endpoint against a hostile peer behind an honest
DataLink — the peer's TL fields (``tests/helpers/hostile_peer.py``), plus CRC-valid DL flits of
arbitrary bytes, lost flits and time passing (replays)."""

from __future__ import annotations

from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import rule

from tests.helpers.hostile_peer import CREDITS, HONEST, LIMITS, HostilePeer
from ualink_ref.dl import DataLink, TLFlitDelivered
from ualink_ref.dl.crc import crc32
from ualink_ref.node.config import EndpointConfig, LinkConfig
from ualink_ref.node.endpoint import Endpoint
from ualink_ref.tl import TransactionLayer
from ualink_ref.tl.config import TLConfig


class HostileEndpoint(HostilePeer):
    """The peer's TL flits ride a real DataLink to the honest Endpoint (``fec="none"``)."""

    def __init__(self) -> None:
        super().__init__()
        self.ep = Endpoint(HONEST, self.memory, config=EndpointConfig(
            link=LinkConfig().with_fec("none"),
            tl=TLConfig(credits=CREDITS, compress=False, limits=LIMITS)))
        self.peer_dl = DataLink()
        self.now = 0

    @property
    def tl(self) -> TransactionLayer:
        return self.ep.tl

    def _to_ep(self, flit: bytes) -> list[object]:
        return list(self.ep.receive(flit, self.now))

    def deliver(self, tl_flits: list[bytes]) -> list[object]:
        self.peer_dl.send(tl_flits)
        events: list[object] = []
        while (flit := self.peer_dl.poll(self.now)) is not None:
            events.extend(self._to_ep(flit))
        return events

    def collect(self, budget: int) -> list[bytes]:
        out = []
        for _ in range(budget):
            self.now += 1
            wire = self.ep.poll(self.now)
            if wire is None:
                break
            out.extend(e.data for e in self.peer_dl.receive(wire, self.now)
                       if type(e) is TLFlitDelivered)
        # Events that arose while polling (a link fault completes every op there).
        self._events(self.ep.drain_events())
        # The peer's DL may now send what its window held back (acks came in).
        self._events(self.deliver([]))
        return out

    @rule(body=st.binary(min_size=636, max_size=636))
    def crc_valid_dl_flit(self, body: bytes) -> None:
        self._events(self._to_ep(body + crc32(body).to_bytes(4, "big")))

    @rule()
    def lose_a_peer_flit(self) -> None:
        self.peer_dl.poll(self.now)  # sent, never arrives: the honest DL asks for a replay

    @rule(slots=st.integers(1, 400))
    def time_passes(self, slots: int) -> None:
        self.now += slots
        deadline = self.peer_dl.next_timer()
        if deadline is not None and self.now >= deadline:
            self.peer_dl.handle_timer(self.now)
        self.collect(1)


HostileEndpoint.TestCase.settings = settings(
    HostileEndpoint.TestCase.settings, stateful_step_count=50, max_examples=60
)
TestHostileEndpoint = HostileEndpoint.TestCase
