"""Go-back-N replay and the replay timer (specs/dl.md section 6, rules 3, 6)."""

from __future__ import annotations

import pytest

from tests.helpers.dl_links import (
    TL_256,
    TL_512,
    expire,
    header_fields,
    random_tl_flits,
    replay_sender,
)
from ualink_ref.dl import (
    DataLink,
    DLFlit,
    FlitOp,
    ReplayStarted,
    RetrainNeeded,
)
from ualink_ref.dl.config import DLConfig
from ualink_ref.errors import EncodeError


def test_timer_only_runs_while_flits_are_unacknowledged() -> None:
    link = DataLink(DLConfig(replay_timeout=50))
    assert link.next_timer() is None and link.poll(0) is None
    link.send(random_tl_flits(1, 1))
    link.poll(3)
    assert link.next_timer() == 53
    assert link.handle_timer(52) == []
    ack = DLFlit(FlitOp.ACK, ack_req_seq=1).encode()
    link.receive(ack, 10)
    assert link.next_timer() is None and link.in_flight == 0


def test_replay_request_replays_from_named_flit_in_order_before_new_data() -> None:
    link = DataLink()
    link.send(random_tl_flits(3, 60))  # 6.1 DL flits
    sent = [link.poll(t) for t in range(4)]
    assert all(s is not None for s in sent)
    events = link.receive(DLFlit(FlitOp.REPLAY_REQUEST, ack_req_seq=2).encode(), 4)
    assert [type(e).__name__ for e in events] == ["ReplayStarted"]
    assert link.in_flight == 3  # the request acknowledged seq 1
    replayed = [link.poll(t) for t in range(5, 9)]
    heads = [header_fields(f) for f in replayed if f is not None]
    assert heads[:3] == [(FlitOp.REPLAY, True, 2), (FlitOp.EXPLICIT, True, 3),
                         (FlitOp.EXPLICIT, True, 4)]
    assert heads[3][0] is FlitOp.ACK  # then new data (seq 5), implicit again
    for orig, again in zip(sent[1:], replayed, strict=False):
        assert orig is not None and again is not None
        assert DLFlit.decode(orig).tl == DLFlit.decode(again).tl


def test_replay_goes_back_to_the_oldest_unacknowledged_flit_in_order() -> None:
    link = DataLink(DLConfig(replay_timeout=10))
    link.send(TL_256 * 12)
    for t in range(5):
        link.poll(t)
    link.receive(DLFlit(FlitOp.ACK, ack_req_seq=2).encode(), 5)
    deadline = link.next_timer()
    assert deadline is not None
    [started] = [e for e in link.handle_timer(deadline) if isinstance(e, ReplayStarted)]
    assert (started.from_seq, started.flits) == (3, 3)
    heads = [DLFlit.decode(link.poll(20 + k)) for k in range(3)]  # type: ignore[arg-type]
    assert [(h.op, h.flit_seq) for h in heads] == [(FlitOp.REPLAY, 3), (FlitOp.EXPLICIT, 4),
                                                   (FlitOp.EXPLICIT, 5)]


@pytest.mark.parametrize("max_replays", [1, 2, 3, 4])
def test_retrain_after_exactly_max_replays_futile_replays(max_replays: int) -> None:
    link, _ = replay_sender(max_replays)
    for n in range(1, max_replays + 1):
        events = expire(link)
        assert any(isinstance(e, ReplayStarted) for e in events)
        retrain = [e for e in events if isinstance(e, RetrainNeeded)]
        assert bool(retrain) == (n == max_replays), n
    # the count restarts after the report
    events = expire(link)
    assert any(isinstance(e, RetrainNeeded) for e in events) == (max_replays == 1)


@pytest.mark.parametrize("how", ["ack", "replay_request"])
def test_progress_resets_the_futile_replay_count(how: str) -> None:
    # Mutation caught: `_futile_replays = 0` dropped from `_advance` (not reset on progress).
    link, _ = replay_sender(max_replays=2)
    assert not any(isinstance(e, RetrainNeeded) for e in expire(link))  # futile 1
    op = FlitOp.ACK if how == "ack" else FlitOp.REPLAY_REQUEST
    value = 1 if how == "ack" else 2  # both acknowledge seq 1: progress
    link.receive(DLFlit(op, ack_req_seq=value).encode(), 50)
    if how == "replay_request":  # the request itself starts a replay: futile 1 again
        assert link.replaying
    else:
        assert not any(isinstance(e, RetrainNeeded) for e in expire(link))  # futile 1
    events = expire(link)  # futile 2: now the report
    assert any(isinstance(e, RetrainNeeded) for e in events)


def test_stale_ack_is_not_progress() -> None:
    link, _ = replay_sender(max_replays=2)
    link.receive(DLFlit(FlitOp.ACK, ack_req_seq=1).encode(), 5)
    expire(link)  # futile 1
    link.receive(DLFlit(FlitOp.ACK, ack_req_seq=1).encode(), 50)  # the same ack: stale
    assert any(isinstance(e, RetrainNeeded) for e in expire(link))


def test_replay_started_names_its_cause() -> None:
    link = DataLink(DLConfig(replay_timeout=10))
    link.send(TL_512)
    link.poll(0)
    [by_request] = link.receive(DLFlit(FlitOp.REPLAY_REQUEST, ack_req_seq=1).encode(), 1)
    assert isinstance(by_request, ReplayStarted)
    assert (by_request.reason, by_request.from_seq, by_request.flits) == ("request", 1, 1)
    [by_timer] = link.handle_timer(11)
    assert isinstance(by_timer, ReplayStarted) and by_timer.reason == "timeout"


@pytest.mark.parametrize("now", [float("nan"), None, "1", True])
def test_time_must_be_a_real_number(now: object) -> None:
    # Rule 6: time is passed in as a number; NaN compares false with everything, so it
    # would freeze every deadline — it is refused like a non-number.
    link = DataLink()
    for call in (link.poll, link.handle_timer, lambda n: link.receive(bytes(640), n)):
        with pytest.raises(EncodeError):
            call(now)  # type: ignore[arg-type]
