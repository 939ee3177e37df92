"""DL messages on their three paths and transmit pacing (specs/dl.md section 6,
rules 9, 10)."""

from __future__ import annotations

import pytest

from tests.helpers.dl_links import (
    NEVER,
    TL_512,
    data_sender,
    decode_flit,
    random_tl_flits,
)
from ualink_ref.dl import (
    DataLink,
    DeviceId,
    DLFlit,
    DLMessageReceived,
    FlitOp,
    TLFlitDelivered,
    TLRateNotification,
)
from ualink_ref.dl.config import DLConfig
from ualink_ref.dl.messages import NoOp, UartData
from ualink_ref.errors import EncodeError
from ualink_ref.net.link_pair import LinkPair


def test_dl_messages_are_delivered() -> None:
    pair = LinkPair()
    pair.a.send_message(TLRateNotification(100))
    pair.a.send(random_tl_flits(9, 3))
    pair.a.send_message(DeviceId(True, 7))  # no more data: rides in an ack-only flit
    pair.run_until_idle()
    got = [e.message for e in pair.events["b"] if isinstance(e, DLMessageReceived)]
    assert got == [TLRateNotification(100), DeviceId(True, 7)]


def test_plain_messages_ride_in_the_next_flit_data_or_command() -> None:
    link = DataLink(DLConfig(replay_timeout=NEVER))
    link.send_message(NoOp())
    alone = decode_flit(link.poll(0))  # nothing else to send: a command flit carries it
    assert alone.op is FlitOp.ACK and alone.messages[0] == NoOp().encode()
    link.send(TL_512[:1])
    link.send_message(TLRateNotification(9))
    data = decode_flit(link.poll(1))
    assert data.payload and data.messages[0] == TLRateNotification(9).encode()


def test_reliable_messages_wait_for_a_new_data_flit() -> None:
    # Rule 9: a reliable message never rides in a command flit or a replay.
    link = DataLink(DLConfig(replay_timeout=10))
    link.send_message(UartData(b"ab"), reliable=True)
    assert link.poll(0) is None and link.reliable_pending == 1
    link.send(TL_512[:1])
    flit = decode_flit(link.poll(1))
    assert flit.payload and flit.messages[0] == UartData(b"ab").encode()
    assert link.reliable_pending == 0
    replay = decode_flit(link.poll(11)) if link.handle_timer(11) else None
    assert replay is not None and replay.messages[0] == UartData(b"ab").encode()


def test_control_messages_force_a_command_flit_ahead_of_waiting_data() -> None:
    link = DataLink(DLConfig(replay_timeout=NEVER))
    link.send(TL_512[:4])
    link.send_message(NoOp(), control=True)
    assert link.control_only is False  # data waits too
    first = decode_flit(link.poll(0))
    assert first.op is FlitOp.ACK and not first.payload
    assert first.messages[0] == NoOp().encode()
    assert decode_flit(link.poll(1)).payload


def test_poll_control_sends_only_control_messages() -> None:
    link = DataLink(DLConfig(replay_timeout=NEVER))
    link.send(TL_512[:2])
    assert link.poll_control(0) is None  # data is not control
    link.send_message(NoOp(), control=True)
    assert link.control_only is False
    flit = decode_flit(link.poll_control(1))
    assert flit.op is FlitOp.ACK and not flit.payload and link.poll_control(2) is None


def test_received_messages_are_reported_in_segment_order_with_the_tl_flits() -> None:
    sender = DataLink(DLConfig(replay_timeout=NEVER))
    sender.send(TL_512[:2])
    sender.send_message(NoOp())
    sender.send_message(TLRateNotification(3))
    rx = DataLink(DLConfig(replay_timeout=NEVER))
    events = rx.receive(sender.poll(0), 0)  # type: ignore[arg-type]
    assert isinstance(events[0], DLMessageReceived)  # segment 0: its message, then TL_512 bytes
    got = [e.message for e in events if isinstance(e, DLMessageReceived)]
    assert got == [NoOp(), TLRateNotification(3)]
    assert [e.data for e in events if isinstance(e, TLFlitDelivered)] == TL_512[:2]
    assert rx.counters.messages_received == 2


@pytest.mark.parametrize(("rate", "gap"), [(0, 256), (1, 128), (127, 2), (63, 4)])
def test_paced_data_flits_leave_exactly_256_over_rate_plus_one_apart(rate: int,
                                                                   gap: int) -> None:
    # Rule 10: new data flits at least 256 / (rate + 1) slots apart, and no further apart
    # when data waits. Kills mutants of the gap formula and of the `now < _pace_next` test.
    link = data_sender()
    link.set_tx_rate(rate, 0)
    assert link.tx_rate == rate
    sent = [t for t in range(3 * gap + 1) if (f := link.poll(t)) is not None
            and decode_flit(f).payload]
    assert sent == [0, gap, 2 * gap, 3 * gap]


def test_rate_255_lifts_pacing_and_a_new_rate_applies_from_the_next_flit() -> None:
    link = data_sender()
    link.set_tx_rate(127, 0)
    assert link.poll(0) is not None and link.poll(1) is None  # paced: gap 2
    link.set_tx_rate(255, 1)
    assert link.tx_rate == 255
    assert all(decode_flit(link.poll(t)).payload for t in range(1, 6))  # every slot again


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
    link.send(TL_512)
    for t in range(3):
        link.poll(t)  # seq 1..3, unpaced
    link.set_tx_rate(0, 3)  # one new flit per 256 slots from now
    link.receive(DLFlit(FlitOp.REPLAY_REQUEST, ack_req_seq=1).encode(), 3)
    heads = [decode_flit(link.poll(t)) for t in (4, 5, 6)]
    assert [(h.op, h.flit_seq) for h in heads] == [(FlitOp.REPLAY, 1), (FlitOp.EXPLICIT, 2),
                                                   (FlitOp.EXPLICIT, 3)]
    assert decode_flit(link.poll(7)).flit_seq == 4
    assert link.poll(8) is None and link.poll(262) is None  # 7 + 256 = 263
    assert decode_flit(link.poll(263)).flit_seq == 5
