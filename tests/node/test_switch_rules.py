"""The switch's rules (specs/fabric.md S4-S8) pinned at their edges, on the arbiter of
one egress port (``node/arbiter.py``), a switch port and a port's pause control (S8).

Each test names the developer's bug it catches (issue 26, "Tests that catch the bugs a
developer would make"); ``fuzz/mutation_sample.py --hand`` replays the hand-made ones.
"""

from __future__ import annotations

import pytest

from tests.helpers.tl_peer import flits, halves
from ualink_ref.node.arbiter import REQUEST, RESPONSE, Arbiter, Packet
from ualink_ref.node.config import PfcConfig, SwitchConfig
from ualink_ref.node.pause import PauseControl
from ualink_ref.node.switch import Switch
from ualink_ref.tl import codec, credits
from ualink_ref.tl.framing import data_halves
from ualink_ref.tl.upli import Command, Status

PORTS = 3


def _request(ingress: int, n: int, vc: int = 0) -> Packet:
    value = codec.Request(cmd=int(Command.READ), vchan=vc, asi=0, tag=16 * ingress + n, pool=0,
                          attr=0, len=0, metadata=0, addr=0x1000, src_acc=ingress, dst_acc=2,
                          cload=0, cway=0, numbeats=0)
    return Packet(value=value, halves=[], ingress=ingress, source=vc, data_credits=0, ready=0.0)


def _response(ingress: int, n: int, vc: int = 0) -> Packet:
    value = codec.Response(vchan=vc, tag=16 * ingress + n, pool=0, len=0, offset=0,
                           status=int(Status.OKAY), rd_wr=1, last=1, src_acc=ingress, dst_acc=2)
    return Packet(value=value, halves=[], ingress=ingress, source=vc, data_credits=0, ready=0.0)


def _credits(cmd: int = 1000) -> credits.SenderCredits:
    tx = credits.SenderCredits()
    for vc in range(credits.NUM_VCS):
        for cls in range(4):
            tx.grant(vc, cls, cmd)
    return tx


def _drain(arbiter: Arbiter, cls: int, tx: credits.SenderCredits, now: float = 0.0,
           room: int = 8, rounds: int = 20) -> list[Packet]:
    sent: list[Packet] = []
    stalls: list[None] = []
    for _ in range(rounds):
        arbiter.arbitrate(cls, room, now, tx, lambda p, _s: sent.append(p),
                          lambda: stalls.append(None))
    return sent


def _who(sent: list[Packet]) -> list[tuple[int, int]]:
    return [(p.ingress, p.value.tag % 16) for p in sent]


@pytest.mark.parametrize("room", [4, 8])
def test_s6_ingress_ports_take_turns_round_robin(room: int) -> None:
    # Bug caught: the ingress just served goes to the front of the ring again (it is
    # served twice before the others). Room 4 = one request per call, 8 = two.
    arbiter = Arbiter()
    for n in range(3):
        for ingress in range(PORTS):
            arbiter.enqueue(_request(ingress, n))
    sent = _drain(arbiter, REQUEST, _credits(), room=room)
    assert _who(sent) == [(i, n) for n in range(3) for i in range(PORTS)]
    assert arbiter.queued == 0


def test_s6_an_ingress_that_empties_leaves_the_ring_and_rejoins_at_the_back() -> None:
    arbiter = Arbiter()
    arbiter.enqueue(_request(0, 0))
    arbiter.enqueue(_request(1, 0))
    arbiter.enqueue(_request(1, 1))
    sent = _drain(arbiter, REQUEST, _credits(), room=4, rounds=1)  # serves ingress 0
    arbiter.enqueue(_request(0, 1))  # 0 rejoins behind 1
    sent += _drain(arbiter, REQUEST, _credits(), room=4, rounds=3)
    assert _who(sent) == [(0, 0), (1, 0), (0, 1), (1, 1)]


def test_s6_the_vcs_take_turns_and_the_turn_resumes_after_the_last_vc_served() -> None:
    # Room for one request a call: VC 0, then VC 1, then VC 2 (not VC 0 again).
    arbiter = Arbiter()
    for vc in range(3):
        for n in range(2):
            arbiter.enqueue(_request(0, 4 * vc + n, vc=vc))
    sent = _drain(arbiter, REQUEST, _credits(), room=4, rounds=6)
    assert [p.value.vchan for p in sent] == [0, 1, 2, 0, 1, 2]


def test_s6_responses_before_requests_on_a_switch_port() -> None:
    # The switch port packs responses first (TL rule 3): the request, queued first,
    # leaves after the three responses queued behind it.
    switch = Switch(SwitchConfig(ports=PORTS), {0: 0, 1: 1, 2: 2})
    agent = switch.agents[2]
    for cls in range(4):
        for vc in range(credits.NUM_VCS):
            agent.tx_credits.grant(vc, cls, 50)
    for now in range(3):  # the ingress's start-up credit grants go first
        agent.poll(float(now))
    agent.enqueue(_request(0, 0), 3.0)
    for ingress in range(PORTS):
        agent.enqueue(_response(ingress, 0), 3.0)
    order: list[str] = []
    for now in range(3, 8):
        flit = agent.poll(float(now))
        for half in (flit[:32], flit[32:]) if flit is not None else ():
            order += [type(f).__name__ for _, f in codec.decode_control_half(half)
                      if isinstance(f, codec.Request | codec.Response)]
    assert order == ["Response", "Response", "Response", "Request"]
    assert agent.arbiter.queued == 0


def test_s6_a_head_without_credits_is_skipped_and_counted_the_others_go() -> None:
    # Ingress 0's head needs 4 data credits, ingress 1's none; with 1 data credit only 1
    # goes, and 0 is skipped once per turn (a switch credit stall).
    arbiter = Arbiter()
    big = _request(0, 0)
    arbiter.enqueue(Packet(value=big.value._replace(cmd=int(Command.WRITE_FULL), numbeats=3),
                           halves=[bytes(32)] * 8, ingress=0, source=0, data_credits=4,
                           ready=0.0))
    arbiter.enqueue(_request(1, 0))
    tx = credits.SenderCredits()
    tx.grant(0, credits.REQ_CMD, 5)
    tx.grant(0, credits.REQ_DATA, 3)  # one short of the 4 the head needs
    sent: list[Packet] = []
    stalls: list[None] = []
    arbiter.arbitrate(REQUEST, 8, 0.0, tx, lambda p, _s: sent.append(p),
                      lambda: stalls.append(None))
    assert _who(sent) == [(1, 0)] and len(stalls) == 1
    tx.grant(0, credits.REQ_DATA, 1)  # exactly enough now
    arbiter.arbitrate(REQUEST, 8, 0.0, tx, lambda p, _s: sent.append(p),
                      lambda: stalls.append(None))
    assert _who(sent) == [(1, 0), (0, 0)] and len(stalls) == 1
    assert tx.available[0][credits.REQ_DATA] == 0  # spent exactly (S4)


def test_s4_the_pool_is_spent_when_the_vc_is_short() -> None:
    arbiter = Arbiter()
    arbiter.enqueue(_response(0, 0, vc=1))
    tx = credits.SenderCredits()
    tx.grant(credits.POOL, credits.RSP_CMD, 1)
    sources: list[int] = []
    arbiter.arbitrate(RESPONSE, 8, 0.0, tx, lambda _p, s: sources.append(s), lambda: None)
    assert sources == [credits.POOL]
    assert tx.available[credits.POOL][credits.RSP_CMD] == 0


@pytest.mark.parametrize(("now", "sent"), [(4.0, 0), (5.0, 1), (6.0, 1)])
def test_s7_a_field_leaves_no_earlier_than_its_ready_slot(now: float, sent: int) -> None:
    arbiter = Arbiter()
    p = _request(0, 0)
    arbiter.enqueue(Packet(value=p.value, halves=[], ingress=0, source=0, data_credits=0,
                           ready=5.0))
    assert len(_drain(arbiter, REQUEST, _credits(), now=now, rounds=1)) == sent


def _requests_in(flit: bytes | None) -> list[codec.Request]:
    return [f for half in ((flit[:32], flit[32:]) if flit is not None else ())
            for _, f in codec.decode_control_half(half) if isinstance(f, codec.Request)]


def test_s7_a_switch_port_polled_without_a_slot_polls_slot_zero() -> None:
    # ``SwitchPort.poll()``'s slot defaults to 0: a field ready at slot 1 waits for it.
    switch = Switch(SwitchConfig(ports=PORTS), {0: 0, 1: 1, 2: 2})
    agent = switch.agents[2]
    for cls in range(4):
        for vc in range(credits.NUM_VCS):
            agent.tx_credits.grant(vc, cls, 50)
    p = _request(0, 0)
    agent.enqueue(Packet(value=p.value, halves=[], ingress=0, source=0, data_credits=0,
                         ready=1.0), 0.0)
    assert _requests_in(agent.poll()) == []
    assert _requests_in(agent.poll(1.0)) == [p.value]


def test_s7_a_waiting_head_does_not_block_another_ingress() -> None:
    arbiter = Arbiter()
    p = _request(0, 0)
    arbiter.enqueue(Packet(value=p.value, halves=[], ingress=0, source=0, data_credits=0,
                           ready=9.0))
    arbiter.enqueue(_request(1, 0))
    assert _who(_drain(arbiter, REQUEST, _credits(), now=1.0, rounds=1)) == [(1, 0)]


def test_s5_one_fifo_per_ingress_class_and_vc_keeps_order() -> None:
    arbiter = Arbiter()
    for n in range(4):
        arbiter.enqueue(_request(0, n, vc=2))
    assert _who(_drain(arbiter, REQUEST, _credits())) == [(0, n) for n in range(4)]


class _Peer:
    def __init__(self) -> None:
        self.told: list[tuple[float, bool]] = []

    def schedule_pause(self, at: float, paused: bool) -> None:
        self.told.append((at, paused))


def _pause() -> tuple[PauseControl, _Peer]:
    control = PauseControl(PfcConfig(xoff=10, xon=4, delay=3, limit=12))
    peer = _Peer()
    control.peer = peer
    return control, peer


@pytest.mark.parametrize(("occupied", "paused"), [(9, False), (10, True), (11, True)])
def test_s8_pause_at_xoff_from_now_plus_delay(occupied: int, paused: bool) -> None:
    control, peer = _pause()
    control.after_arrival(occupied, 20.0)
    assert control.paused is paused
    assert peer.told == ([(23.0, True)] if paused else [])
    assert control.pauses == int(paused)


@pytest.mark.parametrize(("occupied", "resumed"), [(5, False), (4, True), (3, True)])
def test_s8_resume_at_xon_or_below(occupied: int, resumed: bool) -> None:
    control, peer = _pause()
    control.after_arrival(10, 20.0)
    control.after_release(occupied, 30.0)
    assert control.paused is not resumed
    assert peer.told[1:] == ([(33.0, False)] if resumed else [])
    assert control.pause_slots == (10.0 if resumed else 0.0)  # 23 .. 33


def test_s8_one_pause_while_paused_and_headroom_overruns_counted_past_limit() -> None:
    control, peer = _pause()
    for occupied in (10, 11, 12, 13, 14):
        control.after_arrival(occupied, 1.0)
    assert control.pauses == 1 and len(peer.told) == 1
    assert control.headroom_exceeded == 2  # 13 and 14 exceed the 12-buffer limit


def _forwarded(switch: Switch, egress: int, now: float) -> list[codec.TLField]:
    agent = switch.agents[egress]
    for cls in range(4):
        for vc in range(credits.NUM_VCS):
            agent.tx_credits.grant(vc, cls, 50)
    out: list[codec.TLField] = []
    for _ in range(4):
        flit = agent.poll(now)
        for half in (flit[:32], flit[32:]) if flit is not None else ():
            out += [f for _, f in codec.decode_control_half(half)
                    if isinstance(f, codec.Request)]
    return out


def test_s3_a_compressed_request_is_expanded_with_the_ports_cache_way() -> None:
    switch = Switch(SwitchConfig(ports=2), {0: 0, 1: 1})
    ingress = switch.agents[0]
    while ingress.rx_credits.take_returns():  # the start-up grants, now the peer's
        pass
    loader = codec.Request(cmd=int(Command.READ), vchan=1, asi=0, tag=3, pool=0, attr=0,
                           len=0, metadata=0x5A, addr=0x12_3456_7800, src_acc=0, dst_acc=1,
                           cload=1, cway=2, numbeats=0)
    short = codec.CompressedRequest(cmd=int(Command.READ), vchan=1, tag=4, pool=0, attr=0x30,
                                    len=2, cway=2, numbeats=0, addr_lo=0x00_0ABC)
    for field in (loader, short):
        packed = codec.pack_field(field)
        ingress.receive(packed + bytes(32 - len(packed)) + bytes(32), 0.0)
    got = _forwarded(switch, 1, 1.0)
    assert len(got) == 2
    first, expanded = got
    assert (first.cload, first.cway) == (0, 0)  # egress sends only uncompressed (S3)
    assert expanded == codec.Request(
        cmd=int(Command.READ), vchan=1, asi=0, tag=4, pool=0, attr=0x30, len=2, metadata=0x5A,
        addr=0x12_3400_0ABC, src_acc=0, dst_acc=1, cload=0, cway=0, numbeats=0)


def test_s3_a_compressed_request_naming_an_empty_way_is_dropped_and_counted() -> None:
    # S3 / H2: the way was never loaded, so the request names no address: dropped, counted.
    switch = Switch(SwitchConfig(ports=2), {0: 0, 1: 1})
    ingress = switch.agents[0]
    while ingress.rx_credits.take_returns():  # the peer holds the port's credit grants
        pass
    short = codec.CompressedRequest(cmd=int(Command.READ), vchan=0, tag=4, pool=0, attr=0,
                                    len=0, cway=3, numbeats=0, addr_lo=0x40)
    packed = codec.pack_field(short)
    ingress.receive(packed + bytes(32 - len(packed)) + bytes(32), 0.0)
    assert (ingress.stats.bad_fields, ingress.stats.credit_overruns) == (1, 0)


def test_s2_a_response_for_an_id_no_port_reaches_is_dropped_and_counted() -> None:
    switch = Switch(SwitchConfig(ports=2), {0: 0, 1: 1})
    ingress = switch.agents[0]
    while ingress.rx_credits.take_returns():
        pass
    for tag in (1, 2):  # each one counted (not merely flagged)
        rsp = codec.Response(vchan=0, tag=tag, pool=0, len=0, offset=0, status=0, rd_wr=1,
                             last=1, src_acc=0, dst_acc=5)
        packed = codec.pack_field(rsp)
        ingress.receive(packed + bytes(32 - len(packed)) + bytes(32), 0.0)  # S2 / H3: no raise
        stats = ingress.stats
        assert (stats.misrouted_responses, stats.stray_responses,
                stats.credit_overruns) == (tag, 0, 0)


def test_h3_a_second_answer_to_one_request_is_stray_when_its_data_is_in() -> None:
    # Two read answers for one forwarded request, both headers in one control half: both
    # match the outstanding slot when decoded (H3's check); the first forwarded frees
    # the slot, so the second, once its data is in, is stray: counted once, dropped.
    switch = Switch(SwitchConfig(ports=2), {0: 0, 1: 1})
    for agent in switch.agents:
        while agent.rx_credits.take_returns():  # the start-up grants, now the peers'
            pass
        for cls in range(4):
            for vc in range(credits.NUM_VCS):
                agent.tx_credits.grant(vc, cls, 50)
    read = codec.Request(cmd=int(Command.READ), vchan=0, asi=0, tag=5, pool=0, attr=0, len=0,
                         metadata=0, addr=0x1000, src_acc=0, dst_acc=1, cload=0, cway=0,
                         numbeats=0)
    for flit in flits(halves([read])):
        switch.agents[0].receive(flit, 0.0)
    assert _requests_in(next(f for now in range(1, 6)
                             if (f := switch.agents[1].poll(float(now))) is not None)) == [read]
    answer = codec.Response(vchan=0, tag=5, pool=0, len=0, offset=0, status=int(Status.OKAY),
                            rd_wr=0, last=1, src_acc=1, dst_acc=0)
    owed = data_halves(answer)
    assert owed == 2
    for flit in flits(halves([answer, answer], [bytes([7]) * 32] * (2 * owed))):
        switch.agents[1].receive(flit, 10.0)
    assert switch.agents[1].stats.stray_responses == 1
    assert switch.tags.count == 0 and switch.agents[0].arbiter.queued == 1  # the first only
