"""DataLink rules pinned at their boundaries, from the mutants a mutmut run left alive.

Each test asserts one numbered rule of ``ualink_ref/dl/datalink.py`` (``specs/dl.md``)
at its edge, through the public surface only (``send``, ``send_message``, ``poll``,
``receive``, ``set_tx_rate``, ``retrained``, ``discard``, timers, counters). The
mutation run, its sample and the survival rates are in ``fuzz/README.md``, "Mutation
testing"; the comment on each test names the survivors it kills.
"""

from __future__ import annotations

import pytest

from ualink_ref.dl import (
    DataLink,
    DLFlit,
    DLMessageReceived,
    FlitOp,
    ReplayStarted,
    SequenceGap,
    TLFlitDelivered,
    crc32,
)
from ualink_ref.dl.config import DLConfig
from ualink_ref.dl.messages import NoOp, TLRateNotification, UartData
from ualink_ref.errors import EncodeError

TL = [bytes([i]) * 64 for i in range(256)] * 2  # 512 TL flits: about 52 full DL flits
NEVER = 10**9


def _decode(flit: bytes | None) -> DLFlit:
    assert flit is not None
    return DLFlit.decode(flit)


def _data_sender(n: int = 512, **options: float) -> DataLink:
    link = DataLink(DLConfig(replay_timeout=NEVER, **options))  # type: ignore[arg-type]
    link.send(TL[:n])
    return link


# -- rule 10: pacing -------------------------------------------------------------------


@pytest.mark.parametrize(("rate", "gap"), [(0, 256), (1, 128), (127, 2), (63, 4)])
def test_paced_data_flits_leave_exactly_256_over_rate_plus_one_apart(rate: int,
                                                                   gap: int) -> None:
    # Rule 10: new data flits at least 256 / (rate + 1) slots apart, and no further apart
    # when data waits. Kills mutants of the gap formula and of the `now < _pace_next` test.
    link = _data_sender()
    link.set_tx_rate(rate, 0)
    assert link.tx_rate == rate
    sent = [t for t in range(3 * gap + 1) if (f := link.poll(t)) is not None
            and _decode(f).payload]
    assert sent == [0, gap, 2 * gap, 3 * gap]


def test_rate_255_lifts_pacing_and_a_new_rate_applies_from_the_next_flit() -> None:
    link = _data_sender()
    link.set_tx_rate(127, 0)
    assert link.poll(0) is not None and link.poll(1) is None  # paced: gap 2
    link.set_tx_rate(255, 1)
    assert link.tx_rate == 255
    assert all(_decode(link.poll(t)).payload for t in range(1, 6))  # every slot again


@pytest.mark.parametrize("rate", [-1, 256, 1.5, "7", None])
def test_a_rate_outside_0_to_255_or_not_an_int_is_an_encode_error(rate: object) -> None:
    # Rule 10's range, both edges and the type check.
    link = DataLink()
    with pytest.raises(EncodeError) as info:
        link.set_tx_rate(rate, 0)  # type: ignore[arg-type]
    assert info.value.field == "rate"
    assert link.tx_rate == 255  # nothing changed


def test_a_bool_rate_is_the_int_it_is() -> None:
    link = DataLink()
    link.set_tx_rate(True, 0)
    assert link.tx_rate == 1


@pytest.mark.parametrize("rate", [0, 255])
def test_both_ends_of_the_rate_range_are_accepted(rate: int) -> None:
    link = DataLink()
    link.set_tx_rate(rate, 0)
    assert link.tx_rate == rate


def test_replays_are_not_paced() -> None:
    # Rule 10: only *new* data is paced; a replay goes out in consecutive slots, and the
    # first new flit after pacing starts is not held back (nothing new went out yet).
    link = DataLink(DLConfig(replay_timeout=NEVER, explicit_interval=1))
    link.send(TL)
    for t in range(3):
        link.poll(t)  # seq 1..3, unpaced
    link.set_tx_rate(0, 3)  # one new flit per 256 slots from now
    link.receive(DLFlit(FlitOp.REPLAY_REQUEST, ack_req_seq=1).encode(), 3)
    heads = [_decode(link.poll(t)) for t in (4, 5, 6)]
    assert [(h.op, h.flit_seq) for h in heads] == [(FlitOp.REPLAY, 1), (FlitOp.EXPLICIT, 2),
                                                   (FlitOp.EXPLICIT, 3)]
    assert _decode(link.poll(7)).flit_seq == 4
    assert link.poll(8) is None and link.poll(262) is None  # 7 + 256 = 263
    assert _decode(link.poll(263)).flit_seq == 5


# -- rule 11: retrain keeps everything, fault discards everything -------------------------


def test_retrained_owes_a_request_from_the_expected_point_then_replays_from_acked() -> None:
    # Rule 11: `retrained` replays everything unacknowledged from the acked point and asks
    # the peer to replay from the expected one — the request first (rule 7's priority).
    link = DataLink(DLConfig(replay_timeout=NEVER))
    link.send(TL)
    for t in range(3):
        link.poll(t)  # seq 1..3 out
    peer = DataLink(DLConfig(explicit_interval=1, replay_timeout=NEVER))
    peer.send(TL)
    for t in range(2):
        link.receive(peer.poll(t), t)  # type: ignore[arg-type]  # accepted 1, 2
    link.receive(DLFlit(FlitOp.ACK, ack_req_seq=1).encode(), 3)  # peer has seq 1
    events = link.retrained(4)
    [started] = [e for e in events if isinstance(e, ReplayStarted)]
    assert (started.from_seq, started.flits, started.reason) == (2, 2, "retrain")
    request = _decode(link.poll(5))
    assert (request.op, request.ack_req_seq) == (FlitOp.REPLAY_REQUEST, 3)
    replay = [_decode(link.poll(t)) for t in (6, 7)]
    assert [(f.op, f.flit_seq) for f in replay] == [(FlitOp.REPLAY, 2), (FlitOp.EXPLICIT, 3)]
    assert link.accepted == 2 and link.acked == 1  # positions kept


def test_a_retrain_replay_is_not_counted_futile() -> None:
    # Rule 11 / 6: the retrain's own replay does not count toward max_replays.
    link = DataLink(DLConfig(replay_timeout=10, max_replays=1))
    link.send(TL)
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
    assert _decode(link.poll(1)).op is FlitOp.REPLAY_REQUEST  # still owes the request


def test_discard_empties_every_queue_and_the_link_stays_idle() -> None:
    # Rule 11: a fault drops everything queued, unacknowledged or owed.
    link = DataLink(DLConfig(replay_timeout=10))
    link.send(TL)
    link.poll(0)
    link.send_message(NoOp())
    link.send_message(NoOp(), control=True)
    link.send_message(UartData(b"x"), reliable=True)
    peer = DataLink(DLConfig(explicit_interval=1, replay_timeout=NEVER))
    peer.send(TL)
    link.receive(peer.poll(0), 1)  # type: ignore[arg-type]  # an ack owed
    link.receive(b"\0" * 640, 2)  # a CRC error: a replay request owed
    link.discard()
    assert link.idle and not link.control_only
    assert (link.tx_backlog, link.in_flight, link.reliable_pending) == (0, 0, 0)
    assert link.next_timer() is None
    assert [link.poll(t) for t in range(3, 40)] == [None] * 37
    assert link.handle_timer(100) == []


# -- rule 9: the three ways a message travels ---------------------------------------------


def test_plain_messages_ride_in_the_next_flit_data_or_command() -> None:
    link = DataLink(DLConfig(replay_timeout=NEVER))
    link.send_message(NoOp())
    alone = _decode(link.poll(0))  # nothing else to send: a command flit carries it
    assert alone.op is FlitOp.ACK and alone.messages[0] == NoOp().encode()
    link.send(TL[:1])
    link.send_message(TLRateNotification(9))
    data = _decode(link.poll(1))
    assert data.payload and data.messages[0] == TLRateNotification(9).encode()


def test_reliable_messages_wait_for_a_new_data_flit() -> None:
    # Rule 9: a reliable message never rides in a command flit or a replay.
    link = DataLink(DLConfig(replay_timeout=10))
    link.send_message(UartData(b"ab"), reliable=True)
    assert link.poll(0) is None and link.reliable_pending == 1
    link.send(TL[:1])
    flit = _decode(link.poll(1))
    assert flit.payload and flit.messages[0] == UartData(b"ab").encode()
    assert link.reliable_pending == 0
    replay = _decode(link.poll(11)) if link.handle_timer(11) else None
    assert replay is not None and replay.messages[0] == UartData(b"ab").encode()


def test_control_messages_force_a_command_flit_ahead_of_waiting_data() -> None:
    link = DataLink(DLConfig(replay_timeout=NEVER))
    link.send(TL[:4])
    link.send_message(NoOp(), control=True)
    assert link.control_only is False  # data waits too
    first = _decode(link.poll(0))
    assert first.op is FlitOp.ACK and not first.payload
    assert first.messages[0] == NoOp().encode()
    assert _decode(link.poll(1)).payload


def test_poll_control_sends_only_control_messages() -> None:
    link = DataLink(DLConfig(replay_timeout=NEVER))
    link.send(TL[:2])
    assert link.poll_control(0) is None  # data is not control
    link.send_message(NoOp(), control=True)
    assert link.control_only is False
    flit = _decode(link.poll_control(1))
    assert flit.op is FlitOp.ACK and not flit.payload and link.poll_control(2) is None


def test_received_messages_are_reported_in_segment_order_with_the_tl_flits() -> None:
    sender = DataLink(DLConfig(replay_timeout=NEVER))
    sender.send(TL[:2])
    sender.send_message(NoOp())
    sender.send_message(TLRateNotification(3))
    rx = DataLink(DLConfig(replay_timeout=NEVER))
    events = rx.receive(sender.poll(0), 0)  # type: ignore[arg-type]
    assert isinstance(events[0], DLMessageReceived)  # segment 0: its message, then TL bytes
    got = [e.message for e in events if isinstance(e, DLMessageReceived)]
    assert got == [NoOp(), TLRateNotification(3)]
    assert [e.data for e in events if isinstance(e, TLFlitDelivered)] == TL[:2]
    assert rx.counters.messages_received == 2


def test_a_gap_reports_the_expected_and_the_received_number() -> None:
    sender = DataLink(DLConfig(explicit_interval=1, replay_timeout=NEVER))
    sender.send(TL)
    flits = [sender.poll(t) for t in range(3)]
    rx = DataLink(DLConfig(replay_timeout=NEVER))
    rx.receive(flits[0], 0)  # type: ignore[arg-type]
    [gap] = [e for e in rx.receive(flits[2], 1) if isinstance(e, SequenceGap)]  # type: ignore[arg-type]
    assert (gap.expected_seq, gap.received_seq) == (2, 3)
    assert rx.counters.sequence_errors == 1


def test_after_discard_new_data_starts_at_a_tl_flit_boundary_and_is_acked() -> None:
    # Rule 11: discard forgets a half-packed TL flit and any ack timing, so a link reused
    # after it packs from a TL-flit boundary (kills `_tx_phase = 1` in discard) and
    # acknowledges by rule 8's time rule (kills `_unacked_since` left non-None).
    link = DataLink(DLConfig(replay_timeout=NEVER, ack_delay=10, ack_interval=32,
                             explicit_interval=1))
    link.send(TL[:3])
    link.poll(0)  # 3 TL flits: 192 bytes, the phase is back at 0 anyway
    link.send(TL[:10])
    link.send_message(NoOp())  # 4 bytes of room less: the 10th TL flit is split
    link.poll(1)
    link.discard()
    link.send(TL)  # plenty: every slot carries explicit data unless an ack is due
    flit = _decode(link.poll(2))
    assert flit.first_tl_start == 0 and flit.tl[:64] == TL[0]
    peer = DataLink(DLConfig(explicit_interval=1, replay_timeout=NEVER))
    peer.send(TL)
    link.receive(peer.poll(0), 3)  # type: ignore[arg-type]
    assert all(_decode(link.poll(t)).payload for t in range(3, 13))
    ack = _decode(link.poll(13))  # accepted at 3, ack_delay 10: due at 13
    assert ack.op is FlitOp.ACK and ack.ack_req_seq == 1


def test_after_a_retrain_the_first_duplicate_owes_an_ack() -> None:
    # Rules 5 and 11: a retrain starts a new replay run, so the first duplicate after it
    # makes an ack due at once, ahead of this end's own replay (kills the one-ack-per-run
    # flag left set by `retrained`).
    rx = DataLink(DLConfig(explicit_interval=1, ack_interval=32, ack_delay=NEVER,
                           replay_timeout=NEVER))
    rx.send(TL)
    rx.poll(0)  # one flit of its own unacknowledged: the retrain replays it
    peer = DataLink(DLConfig(explicit_interval=1, replay_timeout=NEVER))
    peer.send(TL)
    first = peer.poll(0)
    rx.receive(first, 1)  # type: ignore[arg-type]
    rx.retrained(2)
    assert _decode(rx.poll(2)).op is FlitOp.REPLAY_REQUEST  # settles the ack owed
    rx.receive(first, 3)  # type: ignore[arg-type]  # a duplicate, op EXPLICIT
    out = _decode(rx.poll(3))
    assert (out.op, out.payload, out.ack_req_seq) == (FlitOp.ACK, False, 1)
    assert _decode(rx.poll(4)).op is FlitOp.REPLAY


# -- rule 4: implicit flits counted from the last explicit one, replays included -----------


def test_a_replayed_flit_restarts_the_implicit_count() -> None:
    # Rule 4: at most explicit_interval - 1 implicit flits since the last explicit one;
    # every replayed flit is explicit, so after a replay the full allowance is back.
    link = DataLink(DLConfig(explicit_interval=3, replay_timeout=NEVER))
    link.send(TL)
    assert [_decode(link.poll(t)).op for t in (0, 1)] == [FlitOp.ACK, FlitOp.ACK]
    link.receive(DLFlit(FlitOp.REPLAY_REQUEST, ack_req_seq=2).encode(), 2)  # seq 1 acked
    replay = _decode(link.poll(3))
    assert (replay.op, replay.flit_seq) == (FlitOp.REPLAY, 2)
    ops = [_decode(link.poll(t)).op for t in (4, 5, 6)]
    assert ops == [FlitOp.ACK, FlitOp.ACK, FlitOp.EXPLICIT]


# -- the events and counters report each happening once ---------------------------------------


def test_replay_started_names_its_cause() -> None:
    link = DataLink(DLConfig(replay_timeout=10))
    link.send(TL)
    link.poll(0)
    [by_request] = link.receive(DLFlit(FlitOp.REPLAY_REQUEST, ack_req_seq=1).encode(), 1)
    assert isinstance(by_request, ReplayStarted)
    assert (by_request.reason, by_request.from_seq, by_request.flits) == ("request", 1, 1)
    [by_timer] = link.handle_timer(11)
    assert isinstance(by_timer, ReplayStarted) and by_timer.reason == "timeout"


def test_counters_count_each_event_exactly_once() -> None:
    link = DataLink(DLConfig(replay_timeout=10, max_replays=2, explicit_interval=1))
    link.send(TL)
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
    peer.send(TL[:20])
    rx = DataLink(DLConfig(replay_timeout=NEVER))
    for t in range(2):
        rx.receive(peer.poll(t), t)  # type: ignore[arg-type]
    delivered = rx.counters.tl_flits_delivered
    assert delivered == 19 and type(delivered) is int  # 2 x 628 bytes: 19 whole TL flits


@pytest.mark.parametrize("now", [float("nan"), None, "1", True])
def test_time_must_be_a_real_number(now: object) -> None:
    # Rule 6: time is passed in as a number; NaN compares false with everything, so it
    # would freeze every deadline — it is refused like a non-number.
    link = DataLink()
    for call in (link.poll, link.handle_timer, lambda n: link.receive(bytes(640), n)):
        with pytest.raises(EncodeError):
            call(now)  # type: ignore[arg-type]


def test_the_default_replay_timeout_is_128_slots_and_the_ack_delay_a_quarter() -> None:
    # specs/dl.md: defaults assume `now` counts flit slots; 128-slot timeout, ack_delay
    # replay_timeout / 4 (rule 8).
    link = DataLink()
    assert (link.config.replay_timeout, link.config.effective_ack_delay) == (128, 32)
    link.send(TL[:1])
    link.poll(5)
    assert link.next_timer() == 133


def test_one_duplicate_ack_per_replay_run() -> None:
    # Rule 5: the first duplicate after a flit with op `replay` owes one ack; later
    # duplicates of the same run coalesce into it (no second forced ack-only flit).
    rx = DataLink(DLConfig(explicit_interval=1, ack_interval=32, ack_delay=NEVER,
                           replay_timeout=NEVER))
    rx.send(TL)  # busy: data leaves every slot unless an ack is forced
    sender = DataLink(DLConfig(explicit_interval=1, replay_timeout=NEVER))
    sender.send(TL)
    flits = [sender.poll(t) for t in range(3)]
    for t, flit in enumerate(flits):
        rx.receive(flit, t)  # type: ignore[arg-type]
    sender.receive(DLFlit(FlitOp.REPLAY_REQUEST, ack_req_seq=1).encode(), 3)
    replays = [sender.poll(t) for t in (4, 5, 6)]  # seq 1 (op replay), 2, 3: duplicates
    assert _decode(replays[0]).op is FlitOp.REPLAY
    out = []
    for t, flit in enumerate(replays, start=10):
        rx.receive(flit, t)  # type: ignore[arg-type]
        out.append(_decode(rx.poll(t)))
    assert [(f.op, f.payload) for f in out] == [(FlitOp.ACK, False), (FlitOp.EXPLICIT, True),
                                                (FlitOp.EXPLICIT, True)]
    assert out[0].ack_req_seq == 3 and rx.counters.duplicates == 3


def test_a_bad_message_word_is_reported_with_the_word() -> None:
    bad = 0x00000002  # a NoOp with its reserved bit 1 set
    sender_flit = DLFlit(FlitOp.EXPLICIT, flit_seq=1, tl=TL[0],
                         messages=(bad, None, None, None, None)).encode()
    rx = DataLink(DLConfig(replay_timeout=NEVER))
    events = rx.receive(sender_flit, 0)
    malformed = [e for e in events if type(e).__name__ == "MalformedFlit"]
    assert len(malformed) == 1 and "0x00000002" in malformed[0].reason  # type: ignore[attr-defined]
    assert [e.data for e in events if isinstance(e, TLFlitDelivered)] == [TL[0]]  # TL kept


def test_receive_counters_count_each_flit_once() -> None:
    sender = DataLink(DLConfig(explicit_interval=1, replay_timeout=NEVER))
    sender.send(TL[:30])
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


@pytest.mark.parametrize("options", [
    {"window": 0}, {"window": 257}, {"explicit_interval": 0}, {"explicit_interval": 33},
    {"replay_timeout": 0, "ack_delay": 1}, {"replay_timeout": -1, "ack_delay": 1},
    {"max_replays": 0}, {"ack_interval": 0}, {"ack_delay": 0},
])
def test_parameters_outside_their_range_are_refused(options: dict[str, float]) -> None:
    # Rules 2, 4, 6, 8: window 1..256, explicit_interval 1..32, the rest positive.
    with pytest.raises(ValueError):
        DataLink(DLConfig(**options))  # type: ignore[arg-type]


@pytest.mark.parametrize("options", [
    {"window": 1}, {"window": 256}, {"explicit_interval": 1}, {"explicit_interval": 32},
    {"replay_timeout": 0.5}, {"max_replays": 1}, {"ack_interval": 1}, {"ack_delay": 0.25},
])
def test_parameters_at_the_edge_of_their_range_are_accepted(options: dict[str, float]) -> None:
    link = DataLink(DLConfig(**options))  # type: ignore[arg-type]
    for name, value in options.items():
        assert getattr(link.config, name) == value


def test_a_tl_stream_phase_mismatch_is_one_malformed_flit() -> None:
    # Rule 5: a flit whose first TL-flit boundary disagrees with the bytes the receiver
    # holds is malformed: dropped, counted once, and a replay request is owed.
    flit = DLFlit(FlitOp.EXPLICIT, flit_seq=1, tl=bytes(68), first_tl_start=4).encode()
    rx = DataLink(DLConfig(replay_timeout=NEVER))
    events = rx.receive(flit, 0)
    assert [type(e).__name__ for e in events] == ["MalformedFlit"]
    assert (rx.counters.malformed, rx.accepted) == (1, 0)
    assert _decode(rx.poll(1)).op is FlitOp.REPLAY_REQUEST
