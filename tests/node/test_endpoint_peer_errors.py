"""Issue 15 reproducer at the full stack: a bad TL flit inside a DL flit does not lose
the TL flits after it (the DL has acknowledged them: they would never be replayed)."""

from __future__ import annotations

from tests.helpers.tl_peer import flits, halves, ok_response, requests_in
from ualink_ref.dl import DataLink, TLFlitDelivered
from ualink_ref.node.config import EndpointConfig, LinkConfig
from ualink_ref.node.endpoint import Endpoint
from ualink_ref.tl import Status, TransactionLayer
from ualink_ref.tl.config import TLConfig
from ualink_ref.tl.events import Completion, FieldRejected


def test_bad_tl_flit_inside_a_dl_flit_does_not_lose_the_rest() -> None:
    ep = Endpoint(1, config=EndpointConfig(link=LinkConfig().with_fec("none"),
                                          tl=TLConfig(compress=False)))
    peer_dl = DataLink()
    peer_tl = TransactionLayer(2)
    now = 0

    def to_peer() -> list[bytes]:
        got = []
        while (wire := ep.poll(now)) is not None:
            got.extend(e.data for e in peer_dl.receive(wire, now) if type(e) is TLFlitDelivered)
        return got

    def to_ep(tl_flits: list[bytes]) -> list:
        peer_dl.send(tl_flits)
        events = []
        while (flit := peer_dl.poll(now)) is not None:
            events.extend(ep.receive(flit, now))
        return events

    to_ep([f for f in iter(peer_tl.poll, None)])  # the peer's credit grant
    handles = [ep.read(2, 0x40, 4), ep.read(2, 0x80, 4)]
    reqs = requests_in(to_peer())
    assert len(reqs) == 2
    beat = b"\x22" * 32
    bad = flits(halves([ok_response(reqs[0], rd_wr=1, tag=1999)]))  # a tag never issued
    good = flits(halves([ok_response(reqs[0], beats=1), ok_response(reqs[1], beats=1)],
                        [beat] * 4))
    events = to_ep(bad + good)  # one DL flit carries all three TL flits
    rejected = [e for e in events if type(e) is FieldRejected]
    done = [e for e in events if type(e) is Completion]
    assert len(rejected) == 1 and "not outstanding" in rejected[0].reason
    assert [(c.handle, c.status, c.data) for c in done] == [
        (h, Status.OKAY, b"\x22" * 4) for h in handles]
    assert ep.counters.tl_fields_rejected == 1 and ep.failed is None
    assert ep.tl.outstanding == 0
