"""The receiver: which flits are taken, error episodes and replay requests, duplicates
(specs/dl.md section 6, rules 2, 4, 5; the table RX_TRANSITIONS)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from tests.helpers.dl_links import (
    NEVER,
    TL_512,
    corrupt,
    data_flits,
    decode_flit,
    decoded_op,
    random_tl_flits,
)
from ualink_ref.dl import (
    DataLink,
    DLFlit,
    FlitOp,
    SequenceGap,
    TLFlitDelivered,
)
from ualink_ref.dl.config import DLConfig
from ualink_ref.dl.events import CrcErrorDetected, DLEvent
from ualink_ref.dl.receive import RX_TRANSITIONS, Receiver, RxAction, RxInput, RxState
from ualink_ref.net.channels import FaultyChannel
from ualink_ref.net.link_pair import LinkPair
from ualink_ref.testing.strategies import dl_flits


def test_one_replay_request_per_error_episode() -> None:
    script = {i: "corrupt" for i in range(2, 12)}
    pair = LinkPair(ab=FaultyChannel(script=script, delay=1))
    sent = random_tl_flits(4, 200)
    pair.a.send(sent)
    pair.run_until_idle()
    assert pair.delivered["b"] == sent
    assert pair.b.counters.crc_errors == 10
    assert pair.b.counters.replay_requests_sent == 1


def test_duplicates_are_dropped_and_reacked() -> None:
    # b's acks are lost for a while: a times out and replays flits b already has.
    pair = LinkPair(a=DataLink(DLConfig(replay_timeout=20)),
                    ba=FaultyChannel(script={i: "drop" for i in range(12)}))
    sent = random_tl_flits(5, 40)
    pair.a.send(sent)
    pair.run_until_idle()
    assert pair.delivered["b"] == sent
    assert pair.b.counters.duplicates > 0 and pair.a.counters.timeouts > 0


def test_every_error_episode_gets_its_replay_request() -> None:
    # Mutation caught: `_rr_outstanding = False` dropped on acceptance (a request only for
    # the first error ever).
    rx = DataLink(DLConfig(replay_timeout=10**9))
    flits = data_flits(6)
    t = 0
    for episode in range(3):
        good, bad = flits[2 * episode], flits[2 * episode + 1]
        rx.receive(corrupt(good), t)
        rx.receive(corrupt(good), t + 1)  # same episode: no second request
        assert decoded_op(rx.poll(t + 1)) is FlitOp.REPLAY_REQUEST, f"episode {episode}"
        assert decoded_op(rx.poll(t + 2)) is not FlitOp.REPLAY_REQUEST
        rx.receive(good, t + 3)
        rx.receive(bad, t + 4)
        t += 10
    assert rx.counters.replay_requests_sent == 3
    assert rx.counters.data_flits_accepted == 6


def test_a_gap_is_an_error_episode_and_a_duplicate_is_not() -> None:
    rx = DataLink(DLConfig(replay_timeout=10**9))
    flits = data_flits(3)
    rx.receive(flits[0], 0)
    rx.receive(flits[0], 1)  # duplicate: an ack, never a request
    assert decoded_op(rx.poll(1)) is FlitOp.ACK
    rx.receive(flits[2], 2)  # seq 3 while 2 is expected: a gap
    out = rx.poll(2)
    assert decoded_op(out) is FlitOp.REPLAY_REQUEST
    assert DLFlit.decode(out).ack_req_seq == 2  # type: ignore[arg-type]


def test_a_gap_reports_the_expected_and_the_received_number() -> None:
    sender = DataLink(DLConfig(explicit_interval=1, replay_timeout=NEVER))
    sender.send(TL_512)
    flits = [sender.poll(t) for t in range(3)]
    rx = DataLink(DLConfig(replay_timeout=NEVER))
    rx.receive(flits[0], 0)  # type: ignore[arg-type]
    [gap] = [e for e in rx.receive(flits[2], 1) if isinstance(e, SequenceGap)]  # type: ignore[arg-type]
    assert (gap.expected_seq, gap.received_seq) == (2, 3)
    assert rx.counters.sequence_errors == 1


def test_a_tl_stream_phase_mismatch_is_one_malformed_flit() -> None:
    # Rule 5: a flit whose first TL_512-flit boundary disagrees with the bytes the receiver
    # holds is malformed: dropped, counted once, and a replay request is owed.
    flit = DLFlit(FlitOp.EXPLICIT, flit_seq=1, tl=bytes(68), first_tl_start=4).encode()
    rx = DataLink(DLConfig(replay_timeout=NEVER))
    events = rx.receive(flit, 0)
    assert [type(e).__name__ for e in events] == ["MalformedFlit"]
    assert (rx.counters.malformed, rx.accepted) == (1, 0)
    assert decode_flit(rx.poll(1)).op is FlitOp.REPLAY_REQUEST


def test_a_bad_message_word_is_reported_with_the_word() -> None:
    bad = 0x00000002  # a NoOp with its reserved bit 1 set
    sender_flit = DLFlit(FlitOp.EXPLICIT, flit_seq=1, tl=TL_512[0],
                         messages=(bad, None, None, None, None)).encode()
    rx = DataLink(DLConfig(replay_timeout=NEVER))
    events = rx.receive(sender_flit, 0)
    malformed = [e for e in events if type(e).__name__ == "MalformedFlit"]
    assert len(malformed) == 1 and "0x00000002" in malformed[0].reason  # type: ignore[attr-defined]
    assert [e.data for e in events if isinstance(e, TLFlitDelivered)] == [TL_512[0]]  # TL_512 kept


@given(st.lists(dl_flits().map(DLFlit.encode) | st.binary(min_size=640, max_size=640),
                max_size=12),
       st.integers(0, 40))
def test_any_received_bytes_are_handled_without_raising(flits: list[bytes], queued: int) -> None:
    # A hostile or broken peer (valid CRCs, nonsense sequence numbers and acks) cannot
    # crash the state machine or push it past its window.
    link = DataLink()
    link.send(random_tl_flits(13, queued))
    for t, flit in enumerate(flits):
        link.poll(t)
        link.receive(flit, t)
        link.handle_timer(t + 1000)
        assert 0 <= link.in_flight <= 256


# -- the receive table (RX_TRANSITIONS) ---------------------------------------------------


def test_the_receive_table_answers_every_flit_input_in_every_state() -> None:
    # Rule 5: a flit is accepted, a duplicate or an error in any state; a retrain or a
    # fault applies in any state; "request sent" only where a request is owed.
    for state in RxState:
        for event in (RxInput.ACCEPTED, RxInput.DUPLICATE, RxInput.ERROR, RxInput.RETRAINED,
                      RxInput.DISCARDED):
            assert (state, event) in RX_TRANSITIONS
    sent_from = {s for (s, i) in RX_TRANSITIONS if i is RxInput.REQUEST_SENT}
    assert sent_from == {RxState.REQUEST_OWED, RxState.CLOSED_REQUEST_OWED}
    for (state, event), (action, new) in RX_TRANSITIONS.items():
        if event is RxInput.ACCEPTED:
            assert action is RxAction.DELIVER
        if event is RxInput.DUPLICATE:
            assert (action, new) == (RxAction.ACK_DUPLICATE, state)


def _error(rx: Receiver) -> None:
    rx.on_bad_flit(CrcErrorDetected(0, 1))


def test_one_error_episode_walks_the_table_and_owes_one_request() -> None:
    rx = Receiver(DLConfig())
    assert rx.state is RxState.IN_SEQUENCE and not rx.owes_request
    _error(rx)
    assert rx.state is RxState.REQUEST_OWED and rx.owes_request
    _error(rx)  # the same episode: still one request owed
    assert rx.state is RxState.REQUEST_OWED
    rx.request_sent()
    assert rx.state is RxState.REQUEST_SENT and not rx.owes_request
    _error(rx)  # no second request until the expected flit arrives
    assert rx.state is RxState.REQUEST_SENT and not rx.owes_request
    events: list[DLEvent] = []
    rx.on_flit(DLFlit.decode(data_flits(1)[0]), 0, events)
    assert rx.state is RxState.IN_SEQUENCE and rx.accepted == 1
    assert [type(e) for e in events] == [TLFlitDelivered] * 9


def test_a_gap_closed_before_its_request_left_still_sends_it_once() -> None:
    # The expected flit arrives between the error and the poll that sends the request:
    # the request still leaves (it names the expected number), then nothing more is owed.
    rx = Receiver(DLConfig())
    _error(rx)
    rx.on_flit(DLFlit.decode(data_flits(1)[0]), 0, [])
    assert rx.state is RxState.CLOSED_REQUEST_OWED and rx.owes_request
    assert rx.request_value == 2  # the next expected number
    rx.request_sent()
    assert rx.state is RxState.IN_SEQUENCE and not rx.owes_request
    _error(rx)  # a new episode owes a new request
    assert rx.owes_request


def test_retrain_and_fault_through_the_table() -> None:
    rx = Receiver(DLConfig())
    rx.retrained()  # rule 11: a request from the expected point is owed
    assert rx.state is RxState.REQUEST_OWED and rx.request_value == 1
    rx.discard()  # a fault owes nothing
    assert not rx.owes_request and not rx.owes_ack
