"""Issue 26, item 1: a pod of 16 with one hostile accelerator (rules H1-H8 of specs/fabric.md).

A Hypothesis state machine drives ``tests/helpers/hostile_pod.py``: honest ops among IDs
0..14, and from ID 15 arbitrary TL fields (requests to any ID, spoofed sources,
responses for tags never issued, credit grants past any maximum, compressed fields,
floods of unroutable requests, raw TL bytes) and CRC-valid DL flits of arbitrary bytes.
After every step: honest ops complete at most once with the model's data, every
switch port within its stated limits. At the end every honest op has completed and
every honest span equals the model. Any exception fails the test, so nothing outside
the ``UALinkError`` tree (nor inside it) escapes the switch.

The long run (``HOSTILE_POD_STEPS``, slow) drives the same pod from a seeded fuzzer.
"""

from __future__ import annotations

import os
import random
from dataclasses import replace

import pytest
from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, rule

from tests.helpers.hostile_pod import HONEST, HOSTILE, HOSTILE_ADDR, STALL_SLOTS, HostilePod
from ualink_ref.dl.config import DLConfig
from ualink_ref.dl.linkstate import LinkState
from ualink_ref.net.channels import Outage
from ualink_ref.net.harness import Network
from ualink_ref.node.config import EndpointConfig, LinkConfig, SwitchConfig
from ualink_ref.node.endpoint import Endpoint
from ualink_ref.node.switch import MAX_LOCAL_REPLIES, PortResources, Switch
from ualink_ref.phy.config import PhyConfig
from ualink_ref.sim.fabric import SWITCH_BUFFER
from ualink_ref.tl import Memory
from ualink_ref.tl.codec import (
    CompressedRequest,
    CompressedResponseData,
    CompressedResponseNoData,
    FlowControl,
    Request,
    Response,
    TLField,
    VcFlowControl,
)
from ualink_ref.tl.config import TLConfig
from ualink_ref.tl.events import Completion
from ualink_ref.tl.upli import Status

CMDS = (0x03, 0x28, 0x29, 0x2A, 0x30)
#: Where a hostile field may be sent: honest IDs, its own, IDs no port reaches.
DESTS = (*HONEST, HOSTILE, 16, 99, 1023)
#: How long an honest op may wait at the end: the watchdog (H6) plus the trip.
FINISH_SLOTS = 4 * STALL_SLOTS + 2000


def hostile_request(cmd: int, dst: int, spoof: int | None, tag: int, vc: int, pool: int,
                    length: int, beats: int, addr: int, cload: int, cway: int,
                    attr: int) -> Request:
    """A request from the hostile port with arbitrary fields."""
    if dst in HONEST:
        addr |= HOSTILE_ADDR
    return Request(cmd, vc, 0, tag, pool, attr, length, 0, addr,
                   HOSTILE if spoof is None else spoof, dst, cload, cway, beats)


def hostile_response(dst: int, spoof: int | None, tag: int, vc: int, pool: int, length: int,
                     offset: int, status: int, rd_wr: int, last: int) -> Response:
    """A response from the hostile port with arbitrary fields (mostly for tags never
    issued to it)."""
    return Response(vc, tag, pool, length, offset, status, rd_wr, last,
                    HOSTILE if spoof is None else spoof, dst)


def grant(source: int, counts: tuple[int, int, int, int]) -> TLField:
    """A credit return the hostile port never earned (or past the maximum)."""
    return FlowControl(*counts) if source == 4 else VcFlowControl(source, *counts)


honest_ids = st.sampled_from(HONEST)
spoofs = st.one_of(st.none(), st.none(), st.none(), honest_ids)
tags = st.one_of(st.integers(0, 63), st.integers(0, 2047))


class HostilePodMachine(RuleBasedStateMachine):
    """Rules: honest ops, time, and the hostile port's input (see the module doc)."""

    def __init__(self) -> None:
        super().__init__()
        self.pod = HostilePod()

    @initialize()
    def first_grant(self) -> None:
        self.pod.hostile_fields([FlowControl(32, 32, 128, 128)])

    @rule(src=honest_ids, dst=honest_ids, kind=st.sampled_from(["read", "write"]),
          offset=st.integers(0, 15), length=st.sampled_from([8, 64, 256]))
    def honest_op(self, src: int, dst: int, kind: str, offset: int, length: int) -> None:
        self.pod.honest_op(src, dst, kind, offset, length)

    @rule(slots=st.integers(1, 12))
    def step(self, slots: int) -> None:
        self.pod.step(slots)

    @rule(cmd=st.sampled_from(CMDS), dst=st.sampled_from(DESTS), spoof=spoofs, tag=tags,
          vc=st.integers(0, 3), pool=st.integers(0, 1), length=st.integers(0, 63),
          beats=st.integers(0, 3), addr=st.integers(0, (1 << 24) - 1).map(lambda a: a & ~3),
          cload=st.integers(0, 1), cway=st.integers(0, 3), attr=st.integers(0, 255))
    def request(self, cmd: int, dst: int, spoof: int | None, tag: int, vc: int, pool: int,
                length: int, beats: int, addr: int, cload: int, cway: int, attr: int) -> None:
        self.pod.hostile_fields([hostile_request(cmd, dst, spoof, tag, vc, pool, length, beats,
                                                 addr, cload, cway, attr)])

    @rule(count=st.integers(1, 64), tag=st.integers(0, 2047))
    def flood_unroutable(self, count: int, tag: int) -> None:
        for i in range(0, count, 2):  # two reads a control half: line rate
            self.pod.hostile_fields([
                hostile_request(0x03, 700 + i, None, (tag + i) % 2048, 0, 1, 15, 0, 0, 0, 0, 0),
                hostile_request(0x03, 701 + i, None, (tag + i + 1) % 2048, 0, 1, 15, 0, 0, 0, 0,
                                0)])
        self.pod.step(1)

    @rule(dst=st.sampled_from(DESTS), spoof=spoofs, tag=tags, vc=st.integers(0, 3),
          pool=st.integers(0, 1), length=st.integers(0, 3), offset=st.integers(0, 3),
          status=st.integers(0, 15), rd_wr=st.integers(0, 1), last=st.integers(0, 1))
    def response(self, dst: int, spoof: int | None, tag: int, vc: int, pool: int,
                 length: int, offset: int, status: int, rd_wr: int, last: int) -> None:
        self.pod.hostile_fields([hostile_response(dst, spoof, tag, vc, pool, length, offset,
                                                  status, rd_wr, last)])

    @rule(src=honest_ids, dst=honest_ids, kind=st.sampled_from(["read", "write"]),
          spoof=st.booleans(), status=st.integers(0, 3), length=st.integers(0, 3),
          rd_wr=st.integers(0, 1), delay=st.integers(0, 6))
    def attacked_op(self, src: int, dst: int, kind: str, spoof: bool, status: int,
                    length: int, rd_wr: int, delay: int) -> None:
        """An honest op, and ``delay`` slots later a response aimed at it: its
        originator, its likely tag, and its target's ID as the source (spoofed) or the
        hostile port's own."""
        self.pod.honest_op(src, dst, kind, 0, 64)
        src, dst, tag = self.pod.recent[-1]
        self.pod.step(delay)
        self.pod.hostile_fields([hostile_response(src, dst if spoof else None, tag, 0, 1,
                                                  length, 0, status, rd_wr, 1)])

    @rule(source=st.integers(0, 4), counts=st.tuples(
        st.integers(0, 31), st.integers(0, 31), st.integers(0, 255), st.integers(0, 255)),
        times=st.integers(1, 300))
    def credit_grant(self, source: int, counts: tuple[int, int, int, int], times: int) -> None:
        # Repeated past the 65,536 maximum (H1: rejected whole).
        for _ in range(min(times, 8)):
            self.pod.hostile_fields([grant(source, counts)] * 8)

    @rule(data=st.booleans(), vc=st.integers(0, 3), tag=tags, pool=st.integers(0, 1),
          length=st.integers(0, 3))
    def compressed_response(self, data: bool, vc: int, tag: int, pool: int, length: int) -> None:
        cls = CompressedResponseData if data else CompressedResponseNoData
        self.pod.hostile_fields([cls(vc, tag, pool, length)])

    @rule(cmd=st.sampled_from([0x03, 0x29]), way=st.integers(0, 3), tag=tags,
          lo=st.integers(0, (1 << 24) - 1).map(lambda a: a & ~63))
    def compressed_request(self, cmd: int, way: int, tag: int, lo: int) -> None:
        self.pod.hostile_fields([CompressedRequest(cmd, 0, tag, 0, 0, 15, way, 0, lo)])

    @rule(raw=st.binary(min_size=64, max_size=64), framed=st.integers(0, 7),
          types=st.lists(st.sampled_from([0, 4, 5, 6]), min_size=8, max_size=8))
    def raw_tl_flit(self, raw: bytes, framed: int, types: list[int]) -> None:
        if framed:  # mostly: arbitrary one-sector fields that still frame
            self.pod.hostile_framed(raw, types)
        elif self.pod.steps >= 20:  # mostly faults the port (H4): let the rest run first
            self.pod.hostile_raw_tl(raw)

    @rule(body=st.binary(min_size=636, max_size=636))
    def dl_flit(self, body: bytes) -> None:
        self.pod.hostile_dl_flit(body)

    @invariant()
    def within_bounds(self) -> None:
        self.pod.check()

    def teardown(self) -> None:
        self.pod.finish(FINISH_SLOTS)


HostilePodMachine.TestCase.settings = settings(
    HostilePodMachine.TestCase.settings, stateful_step_count=30, max_examples=6,
    deadline=None)
TestHostilePod = HostilePodMachine.TestCase


# -- the seeded fuzzer (the long run) -------------------------------------------------

def fuzz(pod: HostilePod, steps: int, seed: int) -> dict[str, int]:
    """Drive ``pod`` for ``steps`` steps of seeded arbitrary input from the hostile port
    (with honest ops and time between), checking after every step; return the counts
    of what was done."""
    rng = random.Random(seed)
    done: dict[str, int] = {}
    pod.hostile_fields([FlowControl(32, 32, 128, 128)])
    for n in range(steps):
        what = rng.choices(
            ["honest", "step", "request", "flood", "response", "grant", "cresp", "creq",
             "raw", "dl"], [20, 20, 15, 3, 15, 5, 3, 3, 1, 2])[0]
        done[what] = done.get(what, 0) + 1
        r = rng.randrange
        if what == "honest":
            pod.honest_op(rng.choice(HONEST), rng.choice(HONEST), rng.choice(["read", "write"]),
                          r(16), rng.choice([8, 64, 256]))
        elif what == "step":
            pod.step(r(1, 13))
            continue
        elif what == "request":
            pod.hostile_fields([hostile_request(
                rng.choice(CMDS), rng.choice(DESTS), rng.choice([None, None, None, r(15)]),
                r(2048) if r(2) else r(64), r(4), r(2), r(64), r(4), r(1 << 24) & ~3, r(2), r(4),
                r(256))])
        elif what == "flood":
            for i in range(r(1, 33)):
                pod.hostile_fields([hostile_request(0x03, 700 + i, None, r(2048), 0, 1, 15, 0, 0,
                                                    0, 0, 0)] * 2)
        elif what == "response" and pod.recent and r(2):  # aimed at a pending honest op
            src, dst, tag = rng.choice(pod.recent)
            pod.hostile_fields([hostile_response(src, rng.choice([dst, None]), tag, 0, 1,
                                                 r(4), 0, r(4), r(2), 1)])
        elif what == "response":
            pod.hostile_fields([hostile_response(
                rng.choice(DESTS), rng.choice([None, None, None, r(15)]),
                r(2048) if r(2) else r(64), r(4), r(2), r(4), r(4), r(16), r(2), r(2))])
        elif what == "grant":
            counts = (r(32), r(32), r(256), r(256))
            for _ in range(r(1, 9)):
                pod.hostile_fields([grant(r(5), counts)] * 8)
        elif what == "cresp":
            cls = CompressedResponseData if r(2) else CompressedResponseNoData
            pod.hostile_fields([cls(r(4), r(2048), r(2), r(4))])
        elif what == "creq":
            pod.hostile_fields([CompressedRequest(rng.choice([0x03, 0x29]), 0, r(2048), 0, 0,
                                                  15, r(4), 0, r(1 << 24) & ~63)])
        elif what == "raw":
            if r(16) or n < steps * 9 // 10:  # bytes that frame, till the last tenth
                pod.hostile_framed(rng.randbytes(64), [rng.choice([0, 4, 5, 6])
                                                       for _ in range(8)])
            else:  # mostly an undecodable control half: faults the port (H4)
                pod.hostile_raw_tl(rng.randbytes(64))
        else:
            pod.hostile_dl_flit(rng.randbytes(636))
        pod.step(1)  # every hostile input is followed by a slot and the checks
    pod.finish(FINISH_SLOTS)
    return done


@pytest.mark.parametrize("seed", [1, 2])
def test_fuzzer_short(seed: int) -> None:
    """The fuzzer itself, a few hundred steps (the 10,000-step run is below, slow)."""
    pod = HostilePod()
    fuzz(pod, 300, seed)
    assert pod.completed  # honest ops ran and were checked


@pytest.mark.slow
def test_fuzzer_long() -> None:
    """``HOSTILE_POD_STEPS`` (default 10,000) steps of the seeded fuzzer."""
    steps = int(os.environ.get("HOSTILE_POD_STEPS", "10000"))
    seed = int(os.environ.get("HOSTILE_POD_SEED", "0"))
    pod = HostilePod()
    done = fuzz(pod, steps, seed)
    stats = pod.switch.stats[HOSTILE]
    print(f"steps {steps} seed {seed}: {done}; honest ops completed {len(pod.completed)}; "
          f"hostile port: {stats}; faulted {pod.switch.faulted_ports}")


def test_unroutable_flood_is_bounded() -> None:
    """H5: a port that floods unroutable requests and never grants response credits
    holds at most MAX_LOCAL_REPLIES answers; the rest are dropped and counted."""
    pod = HostilePod(stall_slots=1 << 30)  # no watchdog: the bound alone holds
    for i in range(MAX_LOCAL_REPLIES // 2 + 200):
        pod.hostile_fields([hostile_request(0x03, 700, None, i % 2048, 0, 1, 15, 0, 0, 0, 0, 0),
                            hostile_request(0x03, 701, None, (i + 7) % 2048, 0, 1, 15, 0, 0, 0,
                                            0, 0)])
    pod.step(3000)
    agent = pod.switch.agents[HOSTILE]
    assert agent.resources.local_replies == MAX_LOCAL_REPLIES
    assert agent.stats.replies_dropped > 0
    assert agent.stats.unroutable == MAX_LOCAL_REPLIES + agent.stats.replies_dropped


def test_a_spoofed_response_never_reaches_an_honest_op() -> None:
    """H2, H3: responses claiming another source, or for tags the hostile port was never
    asked, are dropped and counted; the honest op they aim at completes with its data."""
    pod = HostilePod()
    pod.hostile_fields([FlowControl(32, 32, 128, 128)])
    pod.honest_op(0, 1, "write", 0, 64)
    pod.step(40)
    pod.honest_op(0, 1, "read", 0, 64)
    for tag in range(8):  # the honest read's tag is among these
        pod.hostile_fields([hostile_response(0, 1, tag, 0, 1, 0, 0, 0, 1, 1),  # spoofed
                            hostile_response(0, None, tag, 0, 1, 0, 0, 0, 1, 1)])  # stray
    pod.finish(2000)
    stats = pod.switch.stats[HOSTILE]
    assert stats.spoofed == 8 and stats.stray_responses == 8


def test_a_starving_peer_is_faulted_and_the_others_go_on() -> None:
    """H6: the hostile port reads honest memory and never grants response credits; the
    answers fill the honest targets' response buffers until the watchdog faults the
    port; honest ops then complete."""
    pod = HostilePod()
    for i in range(64):
        pod.hostile_fields([hostile_request(0x03, 1, None, i, 0, 0, 63, 0, 0, 0, 0, 0)])
    pod.step(50)
    for _ in range(20):
        pod.honest_op(0, 1, "read", 0, 256)
        pod.honest_op(2, 1, "write", 1, 256)
    pod.finish(FINISH_SLOTS)
    pod.step(STALL_SLOTS + 10)
    assert "egress stalled" in pod.switch.faulted_ports[HOSTILE]
    assert pod.switch.port(HOSTILE).link_state is LinkState.FAULT  # its link goes down too
    assert pod.switch.agents[HOSTILE].resources.queued == 0  # its answers were dropped
    assert all(pod.switch.agents[t].occupied_buffers == 0 for t in (1, 2, 3))


def test_an_undecodable_half_faults_the_port_and_answers_its_requesters() -> None:
    """H4, H7: the hostile port's framing is lost; honest reads of it outstanding at the
    switch are answered DATA_ERROR by the switch (no timeout needed), once."""
    pod = HostilePod()
    pod.hostile_fields([FlowControl(32, 32, 128, 128)])
    pod.step(5)
    handles = [pod.endpoints[src].read(HOSTILE, 0x100, 64) for src in (0, 1, 2)]
    pod.step(30)  # the reads reach the hostile port, which never answers
    pod.hostile_raw_tl(bytes([0xF0]) + bytes(63))  # FTYPE 15: undecodable
    done: list[tuple[str, Completion]] = []
    for _ in range(40):
        done += [(n, e) for n, e in pod.net.step() if type(e) is Completion]
        for acc in (0, 1, 2):
            done += [(f"acc{acc}", e) for e in pod.endpoints[acc].drain_events()
                     if type(e) is Completion]
    assert "undecodable" in pod.switch.faulted_ports[HOSTILE]
    assert pod.switch.port(HOSTILE).link_state is LinkState.FAULT
    assert pod.switch.stats[HOSTILE].fault_answers == 3
    assert sorted((n, e.handle, e.status) for n, e in done) == [
        (f"acc{i}", handles[i], Status.DATA_ERROR) for i in range(3)]


def _outage_on_port_1(stall: int, start: int, end: int, writes: int,
                      slots: int = 6000) -> tuple[Switch, list[Endpoint], int]:
    """Two accelerators through a switch with egress watchdog ``stall``; the link of
    port 1 is noise both ways from ``start`` to ``end``; accelerator 0 writes 256 B
    ``writes`` times to accelerator 1. Returns the switch, the endpoints and the
    completions seen."""
    link = LinkConfig(phy=PhyConfig("none"), dl=DLConfig(replay_timeout=16))
    switch = Switch(SwitchConfig(ports=2, latency=0, buffer=SWITCH_BUFFER,
                                 link=replace(link, tl_backlog=10), stall_slots=stall),
                    {0: 0, 1: 1})
    eps = [Endpoint(i, Memory(), config=EndpointConfig(link=link, tl=TLConfig(compress=False)))
           for i in range(2)]
    net = Network()
    for i in range(2):
        net.add_port(f"acc{i}", eps[i])
        net.add_port(f"sw{i}", switch.port(i))
    net.connect("acc0", "sw0", latency=1)
    net.connect("acc1", "sw1", latency=1, channel_ab=Outage(start, end, 1),
                channel_ba=Outage(start, end, 2))
    for _ in range(20):
        net.step()
    for i in range(writes):
        eps[0].write(1, 0x1000 + 256 * i, bytes(256))
    done = 0
    for _ in range(slots):
        done += sum(1 for _, e in net.step() if type(e) is Completion)
        for ep in eps:
            done += sum(1 for e in ep.drain_events() if type(e) is Completion)
        for port in switch.ports:
            port.drain_events()
    return switch, eps, done


def test_a_dead_link_does_not_fault_a_healthy_port() -> None:
    """H6, H7 with the real time: port 1's link is dead from slot 30 to 600 and faults
    (specs/dl.md L5) long after its last traffic; the answers the switch then queues
    for port 0 are stamped with that slot, so port 0's watchdog (300 slots) does not
    fire on them (issue 26 review: they carried port 1's last-traffic slot and the
    healthy port 0 was faulted "egress stalled")."""
    switch, eps, done = _outage_on_port_1(stall=300, start=30, end=600, writes=40)
    assert done == 40  # every write ends once
    assert set(switch.faulted_ports) == {1}
    assert switch.agents[1].stats.fault_answers > 0  # the dead port's ops were answered
    assert switch.port(0).link_state is not LinkState.FAULT
    assert eps[0].link_end.link_state is not LinkState.FAULT


def test_a_port_faulted_mid_retrain_keeps_its_link_down() -> None:
    """H7 with specs/dl.md L11: the watchdog (80 slots) faults port 1 while its link
    retrains from an outage (slots 25-250); the switch end of the link goes to fault
    from training, so the link never carries data again (issue 26 review: it came
    back idle and 20 flits were acknowledged by the DL and ignored by the port)."""
    switch, eps, done = _outage_on_port_1(stall=80, start=25, end=250, writes=200)
    assert done == 200
    assert set(switch.faulted_ports) == {1}
    assert switch.faulted_ports[1].startswith("egress stalled")
    end = switch.port(1)
    assert end.link_state is LinkState.FAULT
    assert end.link.changes[-1].old is LinkState.TRAINING  # faulted mid-retrain
    assert switch.agents[1].stats.flits_ignored == 0  # nothing reached a faulted port
    assert eps[1].link_end.link_state is LinkState.FAULT  # its peer, unanswered, too
    # H7, H8: a faulted port holds nothing (its queue flushed, no local answers counted).
    assert switch.agents[1].resources == PortResources(0, 0, 0, 0, 0)


@pytest.mark.parametrize("state", [LinkState.DOWN, LinkState.TRAINING, LinkState.UP,
                                   LinkState.IDLE])
def test_an_owners_fault_is_taken_in_every_state(state: LinkState) -> None:
    """specs/dl.md L11: ``LinkEnd.fail`` takes the link to fault whatever its state,
    and it stays there (terminal)."""
    end = Endpoint(0, Memory()).link_end
    end.link.state = state
    end.fail("owner gave up", 5.0)
    assert end.link_state is LinkState.FAULT
    assert end.link.fault_reason == "owner gave up"
    end.fail("again", 6.0)
    assert end.link.fault_reason == "owner gave up"
