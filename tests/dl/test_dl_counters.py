"""DLCounters: each event counted exactly once, by the half that sees it."""

from __future__ import annotations

from tests.helpers.dl_links import (
    NEVER,
    TL_512,
)
from ualink_ref.dl import (
    DataLink,
    DLFlit,
    FlitOp,
    crc32,
)
from ualink_ref.dl.config import DLConfig


def test_counters_count_each_event_exactly_once() -> None:
    link = DataLink(DLConfig(replay_timeout=10, max_replays=2, explicit_interval=1))
    link.send(TL_512)
    for t in range(3):
        link.poll(t)  # seq 1..3, explicit
    link.receive(DLFlit(FlitOp.ACK, ack_req_seq=1).encode(), 3)
    link.receive(DLFlit(FlitOp.ACK, ack_req_seq=2).encode(), 4)
    link.receive(DLFlit(FlitOp.REPLAY_REQUEST, ack_req_seq=3).encode(), 5)  # replays seq 3
    link.receive(DLFlit(FlitOp.REPLAY_REQUEST, ack_req_seq=9).encode(), 6)  # stale
    link.poll(7)  # the replayed flit
    link.handle_timer(link.next_timer())  # type: ignore[arg-type]  # futile 2: a retrain
    c = link.counters
    got = (c.acks_received, c.replay_requests_received, c.stale_acks, c.replays,
           c.retrains, c.flits_replayed, c.explicit_flits_sent, c.timeouts)
    assert got == (2, 2, 1, 2, 1, 1, 4, 1)
    peer = DataLink(DLConfig(explicit_interval=1, replay_timeout=NEVER))
    peer.send(TL_512[:20])
    rx = DataLink(DLConfig(replay_timeout=NEVER))
    for t in range(2):
        rx.receive(peer.poll(t), t)  # type: ignore[arg-type]
    delivered = rx.counters.tl_flits_delivered
    assert delivered == 19 and type(delivered) is int  # 2 x 628 bytes: 19 whole TL_512 flits


def test_receive_counters_count_each_flit_once() -> None:
    sender = DataLink(DLConfig(explicit_interval=1, replay_timeout=NEVER))
    sender.send(TL_512[:30])
    flits = [sender.poll(t) for t in range(4)]
    assert sender.counters.tl_flits_sent == 30
    rx = DataLink(DLConfig(replay_timeout=NEVER))
    rx.receive(flits[0], 0)  # type: ignore[arg-type]
    rx.receive(b"\x55" * 640, 1)  # bad CRC
    rx.receive(DLFlit(FlitOp.ACK).encode()[:639] + b"\0", 2)  # bad CRC too
    bad_header = bytearray(DLFlit(FlitOp.ACK).encode())
    bad_header[0] = 0xE0  # an op the header does not define, CRC repaired
    bad_header[636:] = crc32(bytes(bad_header[:636])).to_bytes(4, "big")
    rx.receive(bytes(bad_header), 3)
    c = rx.counters
    assert (c.flits_received, c.crc_errors, c.malformed, c.data_flits_accepted) == (4, 2, 1, 1)
