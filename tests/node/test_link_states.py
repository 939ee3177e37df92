"""Link states and retrain (specs/dl.md section 8), end to end through Endpoint and the harness.

The stateful machine drives two endpoints over a link that can go down and come
back, lose flits or corrupt them, while both sides write and send UART bytes.
After every step: each side's delivered TL flits are a prefix of what the other
handed its DL (nothing lost, duplicated or reordered, across retrains too), the
UART bytes received are a prefix of those sent, and no op completed twice. At
the end the link is restored: without a fault everything arrives and every op
completes once with OKAY; with a fault every op still completes exactly once.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from ualink_ref.dl import DataLink, TLFlitDelivered
from ualink_ref.dl.config import DLConfig, LinkStateConfig
from ualink_ref.dl.formats import header_payload
from ualink_ref.dl.linkstate import TRANSITIONS, LinkInput, LinkManager, LinkState
from ualink_ref.net.harness import Network
from ualink_ref.node.config import EndpointConfig, LinkConfig
from ualink_ref.node.endpoint import Endpoint
from ualink_ref.phy.config import PhyConfig
from ualink_ref.tl import Status
from ualink_ref.tl.events import Completion


@dataclass
class Switchable:
    """A channel the test turns off (every flit lost) and on, or corrupts flit by flit."""

    down: bool = False
    corrupt_next: int = 0
    lost: int = 0
    drop_data: bool = False  # lose flits that carry TL bytes, pass the rest

    def transmit(self, wire: bytes, first_flit: int, flits: int,
                 now: float = 0) -> bytes | None:
        if self.down or (self.drop_data and header_payload(wire[:3])):
            self.lost += flits
            return None
        if self.corrupt_next:
            self.corrupt_next -= 1
            return bytes([wire[0] ^ 0x40]) + wire[1:]  # fec "none": the CRC rejects it
        return wire


@dataclass
class Side:
    ep: Endpoint
    delivered: list[bytes] = field(default_factory=list)
    completed: dict[int, Status] = field(default_factory=dict)
    issued: list[int] = field(default_factory=list)
    uart_sent: bytearray = field(default_factory=bytearray)


def _pair() -> tuple[Network, dict[str, Side], dict[str, Switchable]]:
    config = EndpointConfig(link=LinkConfig(
        phy=PhyConfig("none"), dl=DLConfig(replay_timeout=16, max_replays=2),
        link_state=LinkStateConfig(retrain_slots=24, max_retrains=3)))
    sides = {s: Side(Endpoint(i, config=config)) for s, i in (("a", 1), ("b", 2))}
    for side in sides.values():
        side.ep.trace = []
    chans = {"ab": Switchable(), "ba": Switchable()}
    net = Network(batch=1)
    net.add_port("a", sides["a"].ep)
    net.add_port("b", sides["b"].ep)
    net.connect("a", "b", latency=2, channel_ab=chans["ab"], channel_ba=chans["ba"])
    return net, sides, chans


def _step(net: Network, sides: dict[str, Side]) -> None:
    events = net.step()
    events += [(n, e) for n, s in sides.items() for e in s.ep.drain_events()]
    for name, event in events:
        side = sides[name]
        if type(event) is TLFlitDelivered:
            side.delivered.append(event.data)
        elif type(event) is Completion:
            assert event.handle not in side.completed, f"op {event.handle} completed twice"
            side.completed[event.handle] = event.status


def _sent_tl(side: Side) -> list[bytes]:
    assert side.ep.trace is not None
    return [data for kind, data in side.ep.trace if kind == "tl"]


class LinkMachine(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.net, self.sides, self.chans = _pair()
        self.addr = 0

    @rule(side=st.sampled_from("ab"), n=st.integers(1, 4), size=st.sampled_from([8, 64, 256]))
    def write(self, side: str, n: int, size: int) -> None:
        s = self.sides[side]
        for _ in range(n):
            self.addr += 0x100
            data = bytes((self.addr + i) & 0xFF for i in range(size))
            s.issued.append(s.ep.write(2 if side == "a" else 1, self.addr, data))

    @rule(side=st.sampled_from("ab"), data=st.binary(min_size=1, max_size=40))
    def uart(self, side: str, data: bytes) -> None:
        s = self.sides[side]
        s.ep.uart_send(data)
        s.uart_sent += data

    @rule(n=st.integers(1, 40))
    def run(self, n: int) -> None:
        for _ in range(n):
            _step(self.net, self.sides)

    @precondition(lambda self: not self.chans["ab"].down)
    @rule(one_way=st.booleans())
    def link_down(self, one_way: bool) -> None:
        self.chans["ab"].down = True
        self.chans["ba"].down = not one_way

    @rule()
    def link_up(self) -> None:
        self.chans["ab"].down = self.chans["ba"].down = False

    @rule(direction=st.sampled_from(["ab", "ba"]), n=st.integers(1, 3))
    def corrupt(self, direction: str, n: int) -> None:
        self.chans[direction].corrupt_next += n

    @invariant()
    def nothing_lost_duplicated_or_reordered(self) -> None:
        for me, peer in (("a", "b"), ("b", "a")):
            got = self.sides[peer].delivered
            assert got == _sent_tl(self.sides[me])[: len(got)]
            received = bytes(self.sides[peer].ep.uart_received)
            assert received == bytes(self.sides[me].uart_sent[: len(received)])

    def teardown(self) -> None:
        self.link_up()
        self.chans["ab"].corrupt_next = self.chans["ba"].corrupt_next = 0
        for _ in range(3000):
            _step(self.net, self.sides)
            if not self.net.busy:
                break
        assert not self.net.busy, "the link never settled"
        fault = any(s.ep.link_state is LinkState.FAULT for s in self.sides.values())
        for me, peer in (("a", "b"), ("b", "a")):
            s = self.sides[me]
            assert sorted(s.completed) == sorted(s.issued)  # every op exactly once
            if not fault:
                assert set(s.completed.values()) <= {Status.OKAY}
                assert self.sides[peer].delivered == _sent_tl(s)
                assert bytes(self.sides[peer].ep.uart_received) == bytes(s.uart_sent)


TestLinkMachine = LinkMachine.TestCase
TestLinkMachine.settings = settings(max_examples=60, stateful_step_count=25, deadline=None)


def test_table_transitions_are_applied_and_absent_pairs_change_nothing() -> None:
    for state in LinkState:
        for event in LinkInput:
            mgr = LinkManager(DataLink())
            mgr.state = state
            mgr.handle(event, 0.0)
            want = TRANSITIONS.get((state, event), (None, state))[1]
            assert mgr.state is want, (state, event)


def test_fault_is_terminal_and_fails_every_op_with_the_fault_status() -> None:
    net, sides, chans = _pair()
    tags = [sides["a"].ep.write(2, 0x1000 * i, b"\x01" * 64) for i in range(20)]
    sides["a"].issued = tags
    chans["ab"].down = chans["ba"].down = True
    for _ in range(2000):
        _step(net, sides)
        if sides["a"].ep.link_state is LinkState.FAULT:
            break
    assert sides["a"].ep.link_state is LinkState.FAULT
    late = sides["a"].ep.write(2, 0x9000, b"\x02" * 8)  # issued after the fault
    chans["ab"].down = chans["ba"].down = False
    for _ in range(50):
        _step(net, sides)
    assert sides["a"].completed == {t: Status.DATA_ERROR for t in [*tags, late]}
    assert sides["a"].ep.link_state is LinkState.FAULT
    assert "without progress" in (sides["a"].ep.link.fault_reason or "")


def test_retrain_keeps_the_replay_buffer_and_completes_everything_okay() -> None:
    net, sides, chans = _pair()
    tags = [sides["a"].ep.write(2, 0x100 * i, bytes([i]) * 256) for i in range(30)]
    for _ in range(5):
        _step(net, sides)
    chans["ab"].down = chans["ba"].down = True
    for _ in range(60):
        _step(net, sides)
    chans["ab"].down = chans["ba"].down = False
    for _ in range(1000):
        _step(net, sides)
        if not net.busy:
            break
    changes = [(c.old, c.new) for c in sides["a"].ep.link.changes]
    assert (LinkState.UP, LinkState.TRAINING) in changes
    assert changes[-1] == (LinkState.TRAINING, LinkState.UP)
    assert sides["a"].completed == {t: Status.OKAY for t in tags}
    assert sides["b"].delivered == _sent_tl(sides["a"])
    assert sides["a"].ep.link.time_down(net.now) > 0


def test_a_silent_faulted_peer_is_found_by_the_idle_probe() -> None:
    # The ci-profile liveness failure, reduced: b went to fault before its credit grants
    # reached a, so a's write waits on credits with nothing the DL could replay. Without
    # the idle probe (specs/dl.md L10) a stayed idle and busy forever.
    net, sides, chans = _pair()
    a, b = sides["a"].ep, sides["b"].ep
    chans["ba"].drop_data = True  # b's credit grants are lost; b's acks to a arrive
    for _ in range(40):
        _step(net, sides)
    assert a.dl.acked >= 1 and a.dl.in_flight == 0
    assert a.tl.credit_books().sender.received_total == (0, 0, 0, 0)  # no credits: the TL must wait
    b.link.handle(LinkInput.TRAIN_EXHAUSTED if b.link_state is LinkState.TRAINING
                  else LinkInput.RETRAIN_EXHAUSTED, net.now, "forced for the test")
    assert b.link_state is LinkState.FAULT
    chans["ba"].drop_data = False
    sides["a"].issued.append(sides["a"].ep.write(2, 0x100, b"\x07" * 8))
    bound = 256 + 24 + 3 * 24 + 50  # idle_after + probe wait + max_retrains trainings + slack
    for _ in range(bound):
        _step(net, sides)
        if not net.busy:
            break
    assert not net.busy
    assert a.link_state is LinkState.FAULT and a.link.counters.probes_sent >= 1
    assert any("idle probe" in c.cause for c in a.link.changes)
    assert sides["a"].completed == {sides["a"].issued[0]: Status.DATA_ERROR}


def test_an_idle_healthy_pair_probes_once_and_stays_up() -> None:
    net, sides, _ = _pair()
    for _ in range(1500):
        _step(net, sides)
    for s in sides.values():
        assert s.ep.link_state is LinkState.IDLE
        assert s.ep.link.counters.probes_sent == 1  # control answers are not traffic
