"""Retrain and fault as the DataLink sees them (specs/dl.md section 6, rule 11)."""

from __future__ import annotations

from tests.helpers.dl_links import (
    NEVER,
    TL_512,
    decode_flit,
)
from ualink_ref.dl import (
    DataLink,
    DLFlit,
    FlitOp,
    ReplayStarted,
)
from ualink_ref.dl.config import DLConfig
from ualink_ref.dl.messages import NoOp, UartData


def test_retrained_owes_a_request_from_the_expected_point_then_replays_from_acked() -> None:
    # Rule 11: `retrained` replays everything unacknowledged from the acked point and asks
    # the peer to replay from the expected one — the request first (rule 7's priority).
    link = DataLink(DLConfig(replay_timeout=NEVER))
    link.send(TL_512)
    for t in range(3):
        link.poll(t)  # seq 1..3 out
    peer = DataLink(DLConfig(explicit_interval=1, replay_timeout=NEVER))
    peer.send(TL_512)
    for t in range(2):
        link.receive(peer.poll(t), t)  # type: ignore[arg-type]  # accepted 1, 2
    link.receive(DLFlit(FlitOp.ACK, ack_req_seq=1).encode(), 3)  # peer has seq 1
    events = link.retrained(4)
    [started] = [e for e in events if isinstance(e, ReplayStarted)]
    assert (started.from_seq, started.flits, started.reason) == (2, 2, "retrain")
    request = decode_flit(link.poll(5))
    assert (request.op, request.ack_req_seq) == (FlitOp.REPLAY_REQUEST, 3)
    replay = [decode_flit(link.poll(t)) for t in (6, 7)]
    assert [(f.op, f.flit_seq) for f in replay] == [(FlitOp.REPLAY, 2), (FlitOp.EXPLICIT, 3)]
    assert link.accepted == 2 and link.acked == 1  # positions kept


def test_a_retrain_replay_is_not_counted_futile() -> None:
    # Rule 11 / 6: the retrain's own replay does not count toward max_replays.
    link = DataLink(DLConfig(replay_timeout=10, max_replays=1))
    link.send(TL_512)
    link.poll(0)
    events = link.retrained(1)
    assert not any(type(e).__name__ == "RetrainNeeded" for e in events)
    deadline = link.next_timer()
    assert deadline == 11  # re-armed by the retrain's replay
    assert any(type(e).__name__ == "RetrainNeeded" for e in link.handle_timer(deadline))


def test_retrained_with_nothing_unacknowledged_stops_the_timer() -> None:
    link = DataLink(DLConfig(replay_timeout=10))
    assert link.retrained(0) == []
    assert link.next_timer() is None
    assert decode_flit(link.poll(1)).op is FlitOp.REPLAY_REQUEST  # still owes the request


def test_after_a_retrain_the_first_duplicate_owes_an_ack() -> None:
    # Rules 5 and 11: a retrain starts a new replay run, so the first duplicate after it
    # makes an ack due at once, ahead of this end's own replay (kills the one-ack-per-run
    # flag left set by `retrained`).
    rx = DataLink(DLConfig(explicit_interval=1, ack_interval=32, ack_delay=NEVER,
                           replay_timeout=NEVER))
    rx.send(TL_512)
    rx.poll(0)  # one flit of its own unacknowledged: the retrain replays it
    peer = DataLink(DLConfig(explicit_interval=1, replay_timeout=NEVER))
    peer.send(TL_512)
    first = peer.poll(0)
    rx.receive(first, 1)  # type: ignore[arg-type]
    rx.retrained(2)
    assert decode_flit(rx.poll(2)).op is FlitOp.REPLAY_REQUEST  # settles the ack owed
    rx.receive(first, 3)  # type: ignore[arg-type]  # a duplicate, op EXPLICIT
    out = decode_flit(rx.poll(3))
    assert (out.op, out.payload, out.ack_req_seq) == (FlitOp.ACK, False, 1)
    assert decode_flit(rx.poll(4)).op is FlitOp.REPLAY


def test_discard_empties_every_queue_and_the_link_stays_idle() -> None:
    # Rule 11: a fault drops everything queued, unacknowledged or owed.
    link = DataLink(DLConfig(replay_timeout=10))
    link.send(TL_512)
    link.poll(0)
    link.send_message(NoOp())
    link.send_message(NoOp(), control=True)
    link.send_message(UartData(b"x"), reliable=True)
    peer = DataLink(DLConfig(explicit_interval=1, replay_timeout=NEVER))
    peer.send(TL_512)
    link.receive(peer.poll(0), 1)  # type: ignore[arg-type]  # an ack owed
    link.receive(b"\0" * 640, 2)  # a CRC error: a replay request owed
    link.discard()
    assert link.idle and not link.control_only
    assert (link.tx_backlog, link.in_flight, link.reliable_pending) == (0, 0, 0)
    assert link.next_timer() is None
    assert [link.poll(t) for t in range(3, 40)] == [None] * 37
    assert link.handle_timer(100) == []


def test_after_discard_new_data_starts_at_a_tl_flit_boundary_and_is_acked() -> None:
    # Rule 11: discard forgets a half-packed TL_512 flit and any ack timing, so a link reused
    # after it packs from a TL_512-flit boundary (kills `_tx_phase = 1` in discard) and
    # acknowledges by rule 8's time rule (kills `_unacked_since` left non-None).
    link = DataLink(DLConfig(replay_timeout=NEVER, ack_delay=10, ack_interval=32,
                             explicit_interval=1))
    link.send(TL_512[:3])
    link.poll(0)  # 3 TL_512 flits: 192 bytes, the phase is back at 0 anyway
    link.send(TL_512[:10])
    link.send_message(NoOp())  # 4 bytes of room less: the 10th TL_512 flit is split
    link.poll(1)
    link.discard()
    link.send(TL_512)  # plenty: every slot carries explicit data unless an ack is due
    flit = decode_flit(link.poll(2))
    assert flit.first_tl_start == 0 and flit.tl[:64] == TL_512[0]
    peer = DataLink(DLConfig(explicit_interval=1, replay_timeout=NEVER))
    peer.send(TL_512)
    link.receive(peer.poll(0), 3)  # type: ignore[arg-type]
    assert all(decode_flit(link.poll(t)).payload for t in range(3, 13))
    ack = decode_flit(link.poll(13))  # accepted at 3, ack_delay 10: due at 13
    assert ack.op is FlitOp.ACK and ack.ack_req_seq == 1
