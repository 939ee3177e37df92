"""DataLink rules one by one, sequence wrap-around, and implicit-sequence safety."""

from __future__ import annotations

import random
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ualink_ref.dl import DataLink, DeviceId, DLFlit, DLMessageReceived, FlitOp, TLRateNotification
from ualink_ref.dl.config import DLConfig
from ualink_ref.errors import EncodeError
from ualink_ref.net.link_pair import FaultyChannel, LinkPair, flip_bits
from ualink_ref.testing.strategies import dl_flits


def _flits(seed: int, n: int) -> list[bytes]:
    rng = random.Random(seed)
    return [rng.randbytes(64) for _ in range(n)]


def _header(flit: bytes) -> tuple[FlitOp, bool, int]:
    word = int.from_bytes(flit[:3], "big")
    op = FlitOp(word >> 21)
    seq = (word >> 8) & 0x1FF if not op.is_command else (word >> 11) & 0x1FF
    return op, bool(word & (1 << 20)), seq


def test_tx_backlog_counts_tl_flits_not_completely_packed() -> None:
    link = DataLink()
    link.send(_flits(0, 20))
    assert link.tx_backlog == 20
    link.poll(0)  # 628 bytes: 9 whole TL flits and 52 bytes of the 10th
    assert link.tx_backlog == 11
    link.poll(1)
    assert link.tx_backlog == 1  # 24 bytes of the 20th remain
    link.poll(2)
    assert link.tx_backlog == 0


def test_send_rejects_wrong_size() -> None:
    for bad in (bytes(63), [0] * 64, "x" * 64):
        with pytest.raises(EncodeError):
            DataLink().send([bad])  # type: ignore[list-item]


def test_timer_only_runs_while_flits_are_unacknowledged() -> None:
    link = DataLink(DLConfig(replay_timeout=50))
    assert link.next_timer() is None and link.poll(0) is None
    link.send(_flits(1, 1))
    link.poll(3)
    assert link.next_timer() == 53
    assert link.handle_timer(52) == []
    ack = DLFlit(FlitOp.ACK, ack_req_seq=1).encode()
    link.receive(ack, 10)
    assert link.next_timer() is None and link.in_flight == 0


def test_stale_and_duplicate_acks_change_nothing() -> None:
    link = DataLink()
    link.send(_flits(2, 30))
    for t in range(3):
        link.poll(t)
    assert link.in_flight == 3
    link.receive(DLFlit(FlitOp.ACK, ack_req_seq=2).encode(), 5)
    assert link.in_flight == 1
    before = link.counters
    link.receive(DLFlit(FlitOp.ACK, ack_req_seq=2).encode(), 6)  # duplicate
    link.receive(DLFlit(FlitOp.ACK, ack_req_seq=1).encode(), 7)  # stale
    link.receive(DLFlit(FlitOp.ACK, ack_req_seq=200).encode(), 8)  # beyond what was sent
    assert link.in_flight == 1 and not link.replaying
    assert link.counters.stale_acks == before.stale_acks + 2


def test_replay_request_replays_from_named_flit_in_order_before_new_data() -> None:
    link = DataLink()
    link.send(_flits(3, 60))  # 6.1 DL flits
    sent = [link.poll(t) for t in range(4)]
    assert all(s is not None for s in sent)
    events = link.receive(DLFlit(FlitOp.REPLAY_REQUEST, ack_req_seq=2).encode(), 4)
    assert [type(e).__name__ for e in events] == ["ReplayStarted"]
    assert link.in_flight == 3  # the request acknowledged seq 1
    replayed = [link.poll(t) for t in range(5, 9)]
    heads = [_header(f) for f in replayed if f is not None]
    assert heads[:3] == [(FlitOp.REPLAY, True, 2), (FlitOp.EXPLICIT, True, 3),
                         (FlitOp.EXPLICIT, True, 4)]
    assert heads[3][0] is FlitOp.ACK  # then new data (seq 5), implicit again
    for orig, again in zip(sent[1:], replayed, strict=False):
        assert orig is not None and again is not None
        assert DLFlit.decode(orig).tl == DLFlit.decode(again).tl


def test_one_replay_request_per_error_episode() -> None:
    script = {i: "corrupt" for i in range(2, 12)}
    pair = LinkPair(ab=FaultyChannel(script=script, delay=1))
    sent = _flits(4, 200)
    pair.a.send(sent)
    pair.run_until_idle()
    assert pair.delivered["b"] == sent
    assert pair.b.counters.crc_errors == 10
    assert pair.b.counters.replay_requests_sent == 1


def test_duplicates_are_dropped_and_reacked() -> None:
    # b's acks are lost for a while: a times out and replays flits b already has.
    pair = LinkPair(a=DataLink(DLConfig(replay_timeout=20)),
                    ba=FaultyChannel(script={i: "drop" for i in range(12)}))
    sent = _flits(5, 40)
    pair.a.send(sent)
    pair.run_until_idle()
    assert pair.delivered["b"] == sent
    assert pair.b.counters.duplicates > 0 and pair.a.counters.timeouts > 0


def test_window_caps_flits_in_flight() -> None:
    pair = LinkPair(a=DataLink(DLConfig(replay_timeout=10_000)), ba=FaultyChannel(drop=1.0))
    pair.a.send(_flits(6, 3000))
    pair.run(400)
    assert pair.a.in_flight == 256
    assert pair.a.counters.data_flits_sent == 256


def test_explicit_header_at_least_every_32_data_flits() -> None:
    pair = LinkPair()
    pair.record_wire = True
    pair.a.send(_flits(7, 1000))
    pair.b.send(_flits(8, 1000))
    pair.run_until_idle()
    for direction in ("ab", "ba"):
        run = longest = 0
        for _, d, flit in pair.wire:
            op, payload, _ = _header(flit)
            if d != direction or not payload:
                continue
            run = run + 1 if op is FlitOp.ACK else 0
            longest = max(longest, run)
        assert 0 < longest <= 31


def test_dl_messages_are_delivered() -> None:
    pair = LinkPair()
    pair.a.send_message(TLRateNotification(100))
    pair.a.send(_flits(9, 3))
    pair.a.send_message(DeviceId(True, 7))  # no more data: rides in an ack-only flit
    pair.run_until_idle()
    got = [e.message for e in pair.events["b"] if isinstance(e, DLMessageReceived)]
    assert got == [TLRateNotification(100), DeviceId(True, 7)]


class _WrapLossChannel:
    """Loses the first transmission of every data flit numbered 510, 511 or 1 (or ``seqs``)."""

    def __init__(self, sender: DataLink, seqs: tuple[int, ...] = (510, 511, 1),
                 silent: bool = False) -> None:
        self.sender = sender
        self.delay = 1
        self.fresh_seen = 0
        self.lost: list[int] = []
        self.seqs = seqs
        self.silent = silent

    def transmit(self, flit: bytes, first_flit: int, flits: int,
                 now: float = 0) -> bytes | None:
        fresh = self.sender.counters.data_flits_sent
        if fresh == self.fresh_seen:
            return flit  # not a new data flit
        self.fresh_seen = fresh
        seq = (fresh - 1) % 511 + 1
        if seq in self.seqs:
            self.lost.append(seq)
            return None if seq != 511 or self.silent else flip_bits(flit, [4000])
        return flit


def test_sequence_wraps_four_times_with_losses_at_510_511_1() -> None:
    a, b = DataLink(), DataLink()
    ab, ba = _WrapLossChannel(a), _WrapLossChannel(b)
    pair = LinkPair(a, b, ab, ba)  # type: ignore[arg-type]
    n = 4 * 511 * 628 // 64 + 60
    sa, sb = _flits(10, n), _flits(11, n // 2)
    pair.a.send(sa)
    pair.b.send(sb)
    pair.run_until_idle()
    assert pair.delivered["b"] == sa and pair.delivered["a"] == sb
    assert a.counters.data_flits_sent >= 4 * 511 + 3
    assert ab.lost.count(510) >= 4 and ab.lost.count(511) >= 4 and ab.lost.count(1) >= 5
    assert ba.lost.count(510) >= 2


@pytest.mark.parametrize("run", [8, 16, 7, 24])
@pytest.mark.parametrize("delay", [1, 6])
def test_silent_loss_of_consecutive_flits_never_misdelivers(run: int, delay: int) -> None:
    # Runs that are multiples of 8 would fool a bare 3-bit check; rule 4 prevents it.
    script: dict[int, Any] = {i: "drop" for i in range(3, 3 + run)}
    script.update({i: "drop" for i in range(40, 40 + run)})
    pair = LinkPair(ab=FaultyChannel(script=script, delay=delay),
                    ba=FaultyChannel(delay=delay))
    sent = _flits(run, 600)
    for i in range(0, 600, 6):
        pair.a.send(sent[i:i + 6])
        pair.step()
    pair.run_until_idle()
    assert pair.delivered["b"] == sent


def test_silent_loss_of_seven_across_the_wrap_never_misdelivers() -> None:
    # 506..511 and 1 lost silently: the next flit, seq 2, has the same low 3 bits as 506
    # (the wrap skips 0), so the implicit form must not reach 7 flits past the ack.
    a = DataLink()
    lost = (*range(506, 512), 1)
    ab = _WrapLossChannel(a, seqs=lost, silent=True)
    pair = LinkPair(a, DataLink(), ab)  # type: ignore[arg-type]
    sent = _flits(12, 530 * 628 // 64)
    for i in range(0, len(sent), 9):
        pair.a.send(sent[i:i + 9])
        pair.step()
    pair.run_until_idle()
    assert ab.lost == [1, *lost]  # seq 1 also at the very start
    assert pair.delivered["b"] == sent


@given(st.lists(dl_flits().map(DLFlit.encode) | st.binary(min_size=640, max_size=640),
                max_size=12),
       st.integers(0, 40))
def test_any_received_bytes_are_handled_without_raising(flits: list[bytes], queued: int) -> None:
    # A hostile or broken peer (valid CRCs, nonsense sequence numbers and acks) cannot
    # crash the state machine or push it past its window.
    link = DataLink()
    link.send(_flits(13, queued))
    for t, flit in enumerate(flits):
        link.poll(t)
        link.receive(flit, t)
        link.handle_timer(t + 1000)
        assert 0 <= link.in_flight <= 256
