"""Two DataLinks over a seeded faulty channel: every TL flit delivered once, in order."""

from __future__ import annotations

import random

import pytest

from ualink_ref.dl import DataLink, ReplayStarted, RetrainNeeded
from ualink_ref.dl.config import DLConfig
from ualink_ref.net.channels import FaultyChannel
from ualink_ref.net.link_pair import LinkPair


def _flits(seed: int, n: int) -> list[bytes]:
    rng = random.Random(seed)
    return [rng.randbytes(64) for _ in range(n)]


def _run(pair: LinkPair, faulty_slots: int, seed: int,
         feed: tuple[list[bytes], list[bytes]] = ([], [])) -> None:
    """Feed the TL flits a few per slot while faults are on, then heal and drain."""
    sa, sb = feed
    for i in range(faulty_slots):
        pair.a.send(sa[4 * i:4 * i + 4])
        if i % 3 == 0:  # b is lightly loaded, so it also sends ack-only flits
            pair.b.send(sb[i // 3:i // 3 + 1])
        pair.step()
    assert not sa[4 * faulty_slots:] and not sb[-(-faulty_slots // 3):]
    pair.ab.stop_faults()
    pair.ba.stop_faults()
    pair.run_until_idle(20_000)
    ctx = f"seed={seed}"
    assert pair.a.in_flight == 0 and pair.b.in_flight == 0, ctx


def test_clean_link_bidirectional_and_acks_flow() -> None:
    pair = LinkPair()
    sa, sb = _flits(1, 700), _flits(2, 300)
    pair.a.send(sa)
    pair.b.send(sb)
    pair.run_until_idle()
    assert pair.delivered["b"] == sa and pair.delivered["a"] == sb
    c = pair.a.counters
    assert c.crc_errors == c.replays == 0
    assert c.data_flits_sent == -(-700 * 64 // 628)  # no padding: TL stream fills every flit


def test_one_sided_traffic_gets_acked_by_command_flits() -> None:
    pair = LinkPair()
    pair.a.send(_flits(3, 100))
    pair.run_until_idle()
    assert pair.b.counters.command_flits_sent > 0
    assert pair.b.counters.data_flits_sent == 0
    assert pair.a.in_flight == 0


def test_poll_sends_what_is_queued_without_waiting() -> None:
    link = DataLink()
    link.send(_flits(4, 1))
    flit = link.poll(0)
    assert flit is not None and link.tx_backlog == 0
    assert link.poll(1) is None  # nothing more worth sending


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize(
    "faults",
    [
        {"drop": 0.1},
        {"corrupt": 0.1},
        {"drop_commands": 0.5},
        {"drop": 0.05, "corrupt": 0.05, "drop_commands": 0.3},
    ],
    ids=["drop", "corrupt", "drop-acks", "mixed"],
)
@pytest.mark.parametrize("both", [False, True], ids=["one-way", "both-ways"])
def test_faulty_channel_delivers_everything_once_in_order(
    seed: int, faults: dict[str, float], both: bool
) -> None:
    ba = FaultyChannel(seed=seed, delay=2, **faults)
    ab = FaultyChannel(seed=seed + 100, delay=2, **(faults if both else {}))
    pair = LinkPair(ab=ab, ba=ba)
    sa, sb = _flits(seed, 1200), _flits(seed + 1, 100)
    _run(pair, 300, seed, (sa, sb))
    assert pair.ba.dropped + pair.ba.corrupted > 0  # the faults did happen
    assert pair.delivered["b"] == sa, f"seed={seed}"
    assert pair.delivered["a"] == sb, f"seed={seed}"


def test_dead_link_reports_retrain_needed() -> None:
    pair = LinkPair(ab=FaultyChannel(drop=1.0), a=DataLink(DLConfig(replay_timeout=20,
                                                                    max_replays=4)))
    pair.a.send(_flits(5, 5))
    pair.run(200)
    replays = [e for e in pair.events["a"] if isinstance(e, ReplayStarted)]
    retrains = [e for e in pair.events["a"] if isinstance(e, RetrainNeeded)]
    assert len(replays) >= 4 and all(r.reason == "timeout" for r in replays)
    assert retrains and retrains[0].replays == 4
    assert pair.a.counters.retrains == len(retrains)


@pytest.mark.parametrize("delay", [1, 2])
def test_short_round_trip_piggybacks_every_ack(delay: int) -> None:
    pair = LinkPair(ab=FaultyChannel(delay=delay), ba=FaultyChannel(delay=delay))
    pair.a.send(_flits(20, 3000))
    pair.b.send(_flits(21, 3000))
    pair.run(200)  # both ends saturated throughout
    for end in (pair.a, pair.b):
        c = end.counters
        assert c.command_flits_sent == 0 and c.data_flits_sent == 200


def test_long_round_trip_sends_ack_only_flits_sparingly() -> None:
    pair = LinkPair(ab=FaultyChannel(delay=10), ba=FaultyChannel(delay=10))
    pair.a.send(_flits(22, 3000))
    pair.b.send(_flits(23, 3000))
    pair.run(300)
    c = pair.a.counters
    assert c.timeouts == 0 and 0 < c.command_flits_sent <= c.flits_sent // 30


def test_both_ends_replaying_duplicates_still_get_acks_through() -> None:
    # Found in review (default settings): both ends saturated over a 10-slot delay and
    # every ack-only flit lost until both windows hold 128 unacknowledged flits. Each end
    # then replays (timeout 128) flits the other already has; duplicates asked for a
    # re-ack but only accepted flits counted towards the forced ack, and replays outrank
    # ack-only flits, so no ack ever left either end: a livelock after the faults stopped.
    pair = LinkPair(ab=FaultyChannel(delay=10, drop_commands=1.0, seed=1),
                    ba=FaultyChannel(delay=10, drop_commands=1.0, seed=2))
    sa, sb = _flits(30, 3000), _flits(31, 3000)
    pair.a.send(sa)
    pair.b.send(sb)
    pair.run(600)
    assert pair.a.in_flight >= 100 and pair.b.in_flight >= 100  # the trap is set
    pair.ab.stop_faults()
    pair.ba.stop_faults()
    pair.run_until_idle(5_000)
    assert pair.delivered["b"] == sa and pair.delivered["a"] == sb


@pytest.mark.parametrize("delay", [10, 40])
def test_sparse_traffic_is_acked_in_time_while_the_peer_is_saturated(delay: int) -> None:
    # Found in review: b sends one DL flit while a streams data over a clean link. a's
    # data flits are explicit (no room for an ack) and the forced ack waited for 32 data
    # flits from b, which never came: b timed out 16 times and raised RetrainNeeded 4
    # times on a fault-free link. An ack now also leaves `ack_delay` slots after it is owed.
    pair = LinkPair(ab=FaultyChannel(delay=delay), ba=FaultyChannel(delay=delay, seed=2))
    sa, sb = _flits(40, 20_000), _flits(41, 5)
    pair.a.send(sa)
    pair.b.send(sb)
    pair.run_until_idle()
    assert pair.delivered["b"] == sa and pair.delivered["a"] == sb
    c = pair.b.counters
    assert c.timeouts == c.flits_replayed == c.retrains == 0
