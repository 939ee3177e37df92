"""When acks go out: cumulative acks, duplicates re-acked promptly, and an ack never held
back so long that the peer's replay timer expires on a clean link (specs/dl.md section 6,
rules 3, 5, 8)."""

from __future__ import annotations

import pytest

from tests.helpers.dl_links import (
    NEVER,
    TL_512,
    ack_value,
    busy_receiver,
    data_flits,
    decode_flit,
    decoded_op,
    make_busy,
    op_of,
    poll_n,
    random_tl_flits,
)
from ualink_ref.dl import (
    DataLink,
    DLFlit,
    FlitOp,
    ReplayStarted,
)
from ualink_ref.dl.config import DLConfig
from ualink_ref.net.channels import FaultyChannel, carries_payload, flip_bits
from ualink_ref.net.link_pair import LinkPair
from ualink_ref.phy.config import PhyConfig
from ualink_ref.sim.config import SimConfig
from ualink_ref.sim.link_run import Simulation
from ualink_ref.sim.workloads import random_workload, uniform_workload


def test_stale_and_duplicate_acks_change_nothing() -> None:
    link = DataLink()
    link.send(random_tl_flits(2, 30))
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


@pytest.mark.parametrize("interval", [1, 2, 4, 7])
def test_ack_due_at_exactly_ack_interval_flits(interval: int) -> None:
    # Mutation caught: `_rx_since_ack >= ack_interval` -> `>` (the ack one flit late).
    rx = busy_receiver(ack_interval=interval, ack_delay=10**9, replay_timeout=10**9)
    flits = data_flits(interval + 1)
    for k, flit in enumerate(flits[:interval], start=1):
        rx.receive(flit, k)
        out = rx.poll(k)
        if k < interval:
            assert decoded_op(out) is FlitOp.EXPLICIT, f"ack before {interval} flits (at {k})"
        else:
            decoded = DLFlit.decode(out)  # type: ignore[arg-type]
            assert decoded.op is FlitOp.ACK and not decoded.payload
            assert decoded.ack_req_seq == interval  # the last flit accepted
    # the count restarts after the ack: the next flit alone does not force one
    rx.receive(flits[interval], interval + 1)
    if interval > 1:
        assert decoded_op(rx.poll(interval + 1)) is FlitOp.EXPLICIT


def test_ack_due_at_exactly_ack_delay() -> None:
    rx = busy_receiver(ack_interval=32, ack_delay=10, replay_timeout=10**9)
    rx.receive(data_flits(1)[0], 100)
    assert decoded_op(rx.poll(109)) is FlitOp.EXPLICIT  # 9 < ack_delay
    assert decoded_op(rx.poll(110)) is FlitOp.ACK  # waited exactly ack_delay


def test_a_duplicate_makes_an_ack_due_at_once() -> None:
    rx = busy_receiver(ack_interval=32, ack_delay=10**9, replay_timeout=10**9)
    first = data_flits(1)[0]
    rx.receive(first, 0)
    assert decoded_op(rx.poll(0)) is FlitOp.EXPLICIT
    rx.receive(first, 1)  # a duplicate
    assert decoded_op(rx.poll(1)) is FlitOp.ACK


def test_one_duplicate_ack_per_replay_run() -> None:
    # Rule 5: the first duplicate after a flit with op `replay` owes one ack; later
    # duplicates of the same run coalesce into it (no second forced ack-only flit).
    rx = DataLink(DLConfig(explicit_interval=1, ack_interval=32, ack_delay=NEVER,
                           replay_timeout=NEVER))
    rx.send(TL_512)  # busy: data leaves every slot unless an ack is forced
    sender = DataLink(DLConfig(explicit_interval=1, replay_timeout=NEVER))
    sender.send(TL_512)
    flits = [sender.poll(t) for t in range(3)]
    for t, flit in enumerate(flits):
        rx.receive(flit, t)  # type: ignore[arg-type]
    sender.receive(DLFlit(FlitOp.REPLAY_REQUEST, ack_req_seq=1).encode(), 3)
    replays = [sender.poll(t) for t in (4, 5, 6)]  # seq 1 (op replay), 2, 3: duplicates
    assert decode_flit(replays[0]).op is FlitOp.REPLAY
    out = []
    for t, flit in enumerate(replays, start=10):
        rx.receive(flit, t)  # type: ignore[arg-type]
        out.append(decode_flit(rx.poll(t)))
    assert [(f.op, f.payload) for f in out] == [(FlitOp.ACK, False), (FlitOp.EXPLICIT, True),
                                                (FlitOp.EXPLICIT, True)]
    assert out[0].ack_req_seq == 3 and rx.counters.duplicates == 3


def test_busy_receiver_reacks_a_replay_of_duplicates_once() -> None:
    a, b = DataLink(), DataLink()
    make_busy(b)
    a.send(random_tl_flits(1, 30))  # 3 DL flits
    for flit in poll_n(a, 3, 0):
        b.receive(flit, 20)
    assert op_of(b.poll(21) or b"") is FlitOp.EXPLICIT  # ack owed but not yet due (rule 8)
    for run in range(2):  # each timeout replay is one run: REPLAY, EXPLICIT, EXPLICIT
        events = a.handle_timer(a.next_timer() or 0)
        assert [type(e) for e in events] == [ReplayStarted]
        replayed = poll_n(a, 3, 200 + 10 * run)
        assert [op_of(f) for f in replayed] == [FlitOp.REPLAY, FlitOp.EXPLICIT, FlitOp.EXPLICIT]
        for flit in replayed:
            assert b.receive(flit, 205 + 10 * run) == []  # dropped silently
        ack = b.poll(206 + 10 * run)
        assert ack is not None and not carries_payload(ack)
        assert op_of(ack) is FlitOp.ACK and ack_value(ack) == 3  # an ack, not a request
        # the run's other duplicates coalesced into that one ack: data again
        assert all(carries_payload(f) for f in poll_n(b, 3, 207 + 10 * run))
    c = b.counters
    assert c.duplicates == 6 and c.command_flits_sent == 2 and c.replay_requests_sent == 0
    a.receive(ack, 300)
    assert a.in_flight == 0 and not a.replaying


def test_duplicate_acks_do_not_become_extra_replay_requests() -> None:
    a, b = DataLink(), DataLink()
    make_busy(b)
    a.send(random_tl_flits(2, 40))  # 4 DL flits (seq 1..4)
    sent = poll_n(a, 4, 0)
    b.receive(sent[0], 10)
    b.receive(sent[1], 10)
    b.receive(flip_bits(sent[2], [100]), 10)  # CRC error: one replay request owed
    b.receive(sent[3], 10)  # out of sequence: no second request
    request = b.poll(11)
    assert request is not None and op_of(request) is FlitOp.REPLAY_REQUEST
    assert ack_value(request) == 3
    # The request is lost; a's timer replays from seq 1: duplicates 1 and 2 at b.
    a.handle_timer(a.next_timer() or 0)
    replayed = poll_n(a, 4, 300)
    b.receive(replayed[0], 305)
    b.receive(replayed[1], 305)
    b.receive(flip_bits(replayed[2], [200]), 305)  # corrupted again: same episode
    ack = b.poll(306)
    assert ack is not None and op_of(ack) is FlitOp.ACK and ack_value(ack) == 2
    assert b.poll(307) is not None and b.counters.replay_requests_sent == 1
    # stale and duplicate acks change nothing at a
    a.receive(ack, 308)
    before = (a.in_flight, a.replaying, a.counters.replays)
    a.receive(ack, 309)
    a.receive(DLFlit(FlitOp.ACK, ack_req_seq=1).encode(), 309)
    assert (a.in_flight, a.replaying, a.counters.replays) == before == (2, False, 1)


def test_linkpair_duplicate_is_reacked_in_the_next_slot() -> None:
    # b saturates b->a with explicit data; all of its ack-only flits are lost until a
    # times out. The replay's first duplicate must draw an ack-only flit at once.
    delay = 10
    a = DataLink(DLConfig(replay_timeout=100))
    pair = LinkPair(a=a, ab=FaultyChannel(delay=delay),
                    ba=FaultyChannel(delay=delay, drop_commands=1.0))
    pair.record_wire = True
    pair.b.send(random_tl_flits(3, 5000))
    sent = random_tl_flits(4, 30)
    pair.a.send(sent)
    while not a.counters.timeouts:
        pair.step()
        assert pair.now < 1000
    pair.ba.stop_faults()
    first_replay = pair.now - 1  # the timer ran and the REPLAY flit left in that slot
    pair.run(2 * delay + 3)
    assert a.in_flight == 0 and a.counters.timeouts == 1  # acked before a second timeout
    acks = [(t, f) for t, d, f in pair.wire if d == "ba" and not carries_payload(f)]
    late = [t for t, _ in acks if t > first_replay]
    assert late and late[0] == first_replay + delay + 1
    assert pair.b.counters.duplicates >= 1 and pair.b.counters.replay_requests_sent == 0
    assert pair.delivered["b"] == sent


def test_busy_sender_acks_within_ack_delay() -> None:
    a, b = DataLink(), DataLink(DLConfig(replay_timeout=128))
    assert b.config.effective_ack_delay == 32  # default: a quarter of the replay timeout
    make_busy(b)
    a.send(random_tl_flits(5, 9))  # one DL flit
    b.receive(poll_n(a, 1, 0)[0], 100)
    assert all(carries_payload(f) for f in poll_n(b, 31, 101))
    ack = b.poll(132)
    assert ack is not None and op_of(ack) is FlitOp.ACK and ack_value(ack) == 1
    assert carries_payload(b.poll(133) or b"")  # settled: no ack storm
    custom, peer = DataLink(DLConfig(replay_timeout=128, ack_delay=5)), DataLink()
    make_busy(custom)
    peer.send(random_tl_flits(6, 9))
    custom.receive(poll_n(peer, 1, 0)[0], 100)
    assert all(carries_payload(f) for f in poll_n(custom, 4, 101))
    assert op_of(custom.poll(105) or b"") is FlitOp.ACK


def test_one_way_saturation_never_replays_on_a_clean_link() -> None:
    # a saturates a->b; b sends one TL flit every 20 slots, far fewer than
    # ack_interval data flits per replay timeout. b's timer must never expire.
    pair = LinkPair(ab=FaultyChannel(delay=10), ba=FaultyChannel(delay=10))
    sa, sb = random_tl_flits(6, 20_000), random_tl_flits(7, 100)
    pair.a.send(sa)
    for i in range(2000):
        if i % 20 == 0:
            pair.b.send(sb[i // 20:i // 20 + 1])
        pair.step()
    pair.run_until_idle()
    assert pair.delivered["a"] == sb and pair.delivered["b"] == sa
    for end in (pair.a, pair.b):
        c = end.counters
        assert c.timeouts == c.replays == c.flits_replayed == 0
    ca = pair.a.counters
    # a's price: at most one ack-only flit per ack_delay (32) slots
    assert 0 < ca.command_flits_sent <= ca.flits_sent // 30


def test_sim_clean_link_one_way_saturation_has_no_replays() -> None:
    sim = Simulation(uniform_workload(2000, "write", 256), SimConfig(max_outstanding=256))
    report = sim.run()
    assert report.ops_completed == 2000 and report.data_mismatches == 0
    assert report.replays == 0 and report.replayed_flits == 0
    for ep in (sim.a, sim.b):
        assert ep.dl.counters.timeouts == 0
    ca = sim.a.dl.counters
    assert ca.command_flits_sent <= ca.flits_sent // 25  # ack-only flits stay cheap


def test_replay_timeout_below_round_trip_costs_replays_but_completes() -> None:
    # Reviewer's reproducer: the timer (10 slots) is far below the round trip (~80).
    sim = Simulation(random_workload(200, 6),
                     SimConfig(phy=PhyConfig(fec="none"), latency=30, max_slots=20_000,
                               dl=DLConfig(replay_timeout=10)))
    report = sim.run()
    assert report.ops_completed == 200 and report.data_mismatches == 0
    assert report.replays > 0  # spurious replays are the price of a short timer


def test_replay_timer_below_round_trip_still_drains_under_faults() -> None:
    # Every combination of a too-short timer and faults: spurious replays, but the
    # prompt duplicate acks keep both ends making progress once faults stop.
    for seed, (delay, timeout) in enumerate([(4, 5), (8, 10), (20, 10), (20, 30)]):
        faults = {"drop": 0.02, "corrupt": 0.02, "drop_commands": 0.3}
        pair = LinkPair(a=DataLink(DLConfig(replay_timeout=timeout)),
                                            b=DataLink(DLConfig(replay_timeout=timeout)),
                        ab=FaultyChannel(seed=seed, delay=delay, **faults),
                        ba=FaultyChannel(seed=seed + 50, delay=delay, **faults))
        sa, sb = random_tl_flits(seed + 10, 1500), random_tl_flits(seed + 20, 300)
        for i in range(300):
            pair.a.send(sa[5 * i:5 * i + 5])
            pair.b.send(sb[i:i + 1])
            pair.step()
        pair.ab.stop_faults()
        pair.ba.stop_faults()
        pair.run_until_idle(20_000)
        ctx = f"seed={seed} delay={delay} timeout={timeout}"
        assert pair.delivered["b"] == sa and pair.delivered["a"] == sb, ctx
        assert pair.a.counters.timeouts > 0, ctx  # the timer really was too short
