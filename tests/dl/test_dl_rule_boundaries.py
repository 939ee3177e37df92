"""Each DataLink retry rule pinned at its boundary (specs/dl.md section 6, rules 2-8).

These are behaviour tests of one ``DataLink`` at a time, fed hand-built flits, so a
plausible one-line bug in a rule fails here — not only later, through a changed
README output or committed vector. Each test names the mutation it catches (issue 15,
deliverable 9; the report of the mutation run is in specs/dl.md, "Mutation testing").
"""

from __future__ import annotations

import random

import pytest

from ualink_ref.dl import DataLink, DLFlit, FlitOp, ReplayStarted, RetrainNeeded
from ualink_ref.dl.config import DLConfig

TL = [bytes([i]) * 64 for i in range(256)]


def _data_flits(n: int, seed: int = 0) -> list[bytes]:
    """``n`` consecutive data flits as a sender builds them (explicit headers, seq 1..n)."""
    rng = random.Random(seed)
    sender = DataLink(DLConfig(explicit_interval=1, replay_timeout=10**9))
    sender.send([rng.randbytes(64) for _ in range(10 * n + 10)])
    flits = []
    for t in range(n):
        flit = sender.poll(t)
        assert flit is not None
        flits.append(flit)
    return flits


def _op(flit: bytes | None) -> FlitOp | None:
    return None if flit is None else DLFlit.decode(flit).op


def _corrupt(flit: bytes) -> bytes:
    return flit[:100] + bytes([flit[100] ^ 1]) + flit[101:]


def _busy_receiver(**options: float) -> DataLink:
    """A receiver with plenty of its own data, every data flit explicit (so it can never
    piggy-back an ack): acks leave only as ack-only flits, when rule 8 makes one due."""
    link = DataLink(DLConfig(explicit_interval=1, **options))  # type: ignore[arg-type]
    link.send(TL * 4)
    return link


# -- rule 8: an ack is due after exactly ack_interval accepted flits ---------------------


@pytest.mark.parametrize("interval", [1, 2, 4, 7])
def test_ack_due_at_exactly_ack_interval_flits(interval: int) -> None:
    # Mutation caught: `_rx_since_ack >= ack_interval` -> `>` (the ack one flit late).
    rx = _busy_receiver(ack_interval=interval, ack_delay=10**9, replay_timeout=10**9)
    flits = _data_flits(interval + 1)
    for k, flit in enumerate(flits[:interval], start=1):
        rx.receive(flit, k)
        out = rx.poll(k)
        if k < interval:
            assert _op(out) is FlitOp.EXPLICIT, f"ack before {interval} flits (at {k})"
        else:
            decoded = DLFlit.decode(out)  # type: ignore[arg-type]
            assert decoded.op is FlitOp.ACK and not decoded.payload
            assert decoded.ack_req_seq == interval  # the last flit accepted
    # the count restarts after the ack: the next flit alone does not force one
    rx.receive(flits[interval], interval + 1)
    if interval > 1:
        assert _op(rx.poll(interval + 1)) is FlitOp.EXPLICIT


def test_ack_due_at_exactly_ack_delay() -> None:
    rx = _busy_receiver(ack_interval=32, ack_delay=10, replay_timeout=10**9)
    rx.receive(_data_flits(1)[0], 100)
    assert _op(rx.poll(109)) is FlitOp.EXPLICIT  # 9 < ack_delay
    assert _op(rx.poll(110)) is FlitOp.ACK  # waited exactly ack_delay


def test_a_duplicate_makes_an_ack_due_at_once() -> None:
    rx = _busy_receiver(ack_interval=32, ack_delay=10**9, replay_timeout=10**9)
    first = _data_flits(1)[0]
    rx.receive(first, 0)
    assert _op(rx.poll(0)) is FlitOp.EXPLICIT
    rx.receive(first, 1)  # a duplicate
    assert _op(rx.poll(1)) is FlitOp.ACK


# -- rule 6: max_replays consecutive futile replays; progress resets the count --------------


def _sender(max_replays: int, timeout: float = 10) -> tuple[DataLink, float]:
    link = DataLink(DLConfig(max_replays=max_replays, replay_timeout=timeout))
    link.send(TL[:40])
    for t in range(4):
        link.poll(t)
    return link, timeout


def _expire(link: DataLink) -> list[object]:
    deadline = link.next_timer()
    assert deadline is not None
    return list(link.handle_timer(deadline))


@pytest.mark.parametrize("max_replays", [1, 2, 3, 4])
def test_retrain_after_exactly_max_replays_futile_replays(max_replays: int) -> None:
    link, _ = _sender(max_replays)
    for n in range(1, max_replays + 1):
        events = _expire(link)
        assert any(isinstance(e, ReplayStarted) for e in events)
        retrain = [e for e in events if isinstance(e, RetrainNeeded)]
        assert bool(retrain) == (n == max_replays), n
    # the count restarts after the report
    events = _expire(link)
    assert any(isinstance(e, RetrainNeeded) for e in events) == (max_replays == 1)


@pytest.mark.parametrize("how", ["ack", "replay_request"])
def test_progress_resets_the_futile_replay_count(how: str) -> None:
    # Mutation caught: `_futile_replays = 0` dropped from `_advance` (not reset on progress).
    link, _ = _sender(max_replays=2)
    assert not any(isinstance(e, RetrainNeeded) for e in _expire(link))  # futile 1
    op = FlitOp.ACK if how == "ack" else FlitOp.REPLAY_REQUEST
    value = 1 if how == "ack" else 2  # both acknowledge seq 1: progress
    link.receive(DLFlit(op, ack_req_seq=value).encode(), 50)
    if how == "replay_request":  # the request itself starts a replay: futile 1 again
        assert link.replaying
    else:
        assert not any(isinstance(e, RetrainNeeded) for e in _expire(link))  # futile 1
    events = _expire(link)  # futile 2: now the report
    assert any(isinstance(e, RetrainNeeded) for e in events)


def test_stale_ack_is_not_progress() -> None:
    link, _ = _sender(max_replays=2)
    link.receive(DLFlit(FlitOp.ACK, ack_req_seq=1).encode(), 5)
    _expire(link)  # futile 1
    link.receive(DLFlit(FlitOp.ACK, ack_req_seq=1).encode(), 50)  # the same ack: stale
    assert any(isinstance(e, RetrainNeeded) for e in _expire(link))


# -- rule 5: one replay request per error episode, and one for every episode -----------------


def test_every_error_episode_gets_its_replay_request() -> None:
    # Mutation caught: `_rr_outstanding = False` dropped on acceptance (a request only for
    # the first error ever).
    rx = DataLink(DLConfig(replay_timeout=10**9))
    flits = _data_flits(6)
    t = 0
    for episode in range(3):
        good, bad = flits[2 * episode], flits[2 * episode + 1]
        rx.receive(_corrupt(good), t)
        rx.receive(_corrupt(good), t + 1)  # same episode: no second request
        assert _op(rx.poll(t + 1)) is FlitOp.REPLAY_REQUEST, f"episode {episode}"
        assert _op(rx.poll(t + 2)) is not FlitOp.REPLAY_REQUEST
        rx.receive(good, t + 3)
        rx.receive(bad, t + 4)
        t += 10
    assert rx.counters.replay_requests_sent == 3
    assert rx.counters.data_flits_accepted == 6


def test_a_gap_is_an_error_episode_and_a_duplicate_is_not() -> None:
    rx = DataLink(DLConfig(replay_timeout=10**9))
    flits = _data_flits(3)
    rx.receive(flits[0], 0)
    rx.receive(flits[0], 1)  # duplicate: an ack, never a request
    assert _op(rx.poll(1)) is FlitOp.ACK
    rx.receive(flits[2], 2)  # seq 3 while 2 is expected: a gap
    out = rx.poll(2)
    assert _op(out) is FlitOp.REPLAY_REQUEST
    assert DLFlit.decode(out).ack_req_seq == 2  # type: ignore[arg-type]


# -- rules 2 and 4: the window and the implicit-sequence reach at their edges ----------------


@pytest.mark.parametrize("window", [1, 2, 4, 256])
def test_window_edge(window: int) -> None:
    link = DataLink(DLConfig(window=window, replay_timeout=10**9))
    link.send(TL * 12)
    sent = [link.poll(t) for t in range(window)]
    assert all(s is not None for s in sent)
    assert link.poll(window) is None and link.in_flight == window  # window full
    link.receive(DLFlit(FlitOp.ACK, ack_req_seq=1).encode(), window)
    assert link.poll(window + 1) is not None  # one acknowledged: exactly one more


def test_implicit_form_only_within_reach_seven() -> None:
    link = DataLink(DLConfig(replay_timeout=10**9))
    link.send(TL * 12)
    ops = [_op(link.poll(t)) for t in range(9)]
    # flits 1..7 may piggy-back (0..6 unacknowledged before each); the 8th may not
    assert ops[:7] == [FlitOp.ACK] * 7
    assert ops[7] is FlitOp.EXPLICIT


def test_replay_goes_back_to_the_oldest_unacknowledged_flit_in_order() -> None:
    link = DataLink(DLConfig(replay_timeout=10))
    link.send(TL * 12)
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
