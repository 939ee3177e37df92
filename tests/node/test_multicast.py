"""The switch's multicast engine (specs/fabric.md S9): stores reach every member, reduce-
loads come back summed in member order, anything else to a group is refused, and the
switch's books balance afterwards."""

from __future__ import annotations

import numpy as np
import pytest

from ualink_ref.errors import ConfigError
from ualink_ref.net.harness import Network
from ualink_ref.node.config import EndpointConfig, MulticastGroup, SwitchConfig
from ualink_ref.node.endpoint import Endpoint
from ualink_ref.node.switch import Switch
from ualink_ref.sim.fabric import Fabric, FabricConfig, LinkDown
from ualink_ref.tl.config import TLConfig
from ualink_ref.tl.events import Completion
from ualink_ref.tl.memory import Memory
from ualink_ref.tl.upli import AtomicOp, Status

GROUP = 100


def _pod(n: int = 4) -> Fabric:
    return Fabric(FabricConfig(accelerators=n, multicast=(MulticastGroup(GROUP, tuple(range(n))),)))


def _run(fabric: Fabric, issue: dict[int, int]) -> dict[int, Completion]:
    """Step until every (accelerator -> handle) in ``issue`` completed; drain; return them."""
    done: dict[int, Completion] = {}
    for _ in range(5000):
        for name, event in fabric.network.step():
            if type(event) is Completion:
                _, acc = fabric.port_of[name]
                assert issue[acc] == event.handle
                done[acc] = event
        if len(done) == len(issue):
            break
    fabric.drain()
    assert fabric.leaks() == [] and all(sw.held == 0 for sw in fabric.switches)
    return done


def test_a_multicast_store_reaches_every_member_and_is_answered_once() -> None:
    fabric = _pod()
    data = bytes(range(256))
    handle = fabric.endpoints[0][2].write(GROUP, 0x4000, data)
    done = _run(fabric, {2: handle})
    assert done[2].status == Status.OKAY
    for memory in fabric.memories:
        assert memory.peek(0x4000, 256) == data


@pytest.mark.parametrize(("code", "dtype"), [(1, "<i4"), (2, "<f4")])
def test_a_reduce_load_is_the_sum_in_member_order(code: int, dtype: str) -> None:
    fabric = _pod()
    rng = np.random.default_rng(1)
    values = [(rng.standard_normal(64) * 1e3).astype(dtype) if dtype == "<f4"
              else rng.integers(-(2**31), 2**31, 64).astype(dtype) for _ in range(4)]
    for memory, value in zip(fabric.memories, values, strict=True):
        memory.poke(0x8000, value.tobytes())
    handle = fabric.endpoints[0][1].read(GROUP, 0x8000, 256, metadata=code)
    done = _run(fabric, {1: handle})
    want = ((values[0] + values[1]) + values[2]) + values[3]
    assert done[1].status == Status.OKAY and done[1].data == want.tobytes()
    if dtype == "<f4":  # the order is part of the result
        assert want.tobytes() != (((values[3] + values[2]) + values[1]) + values[0]).tobytes()


def test_what_a_group_cannot_do_is_refused() -> None:
    fabric = _pod()
    ep = fabric.endpoints[0][0]
    handles = {0: ep.read(GROUP, 0x100, 64)}  # a plain load of a group: no reduction named
    assert _run(fabric, handles)[0].status == Status.UNSUPPORTED_REQUEST
    handles = {3: fabric.endpoints[0][3].atomic(GROUP, 0x100, AtomicOp.ADD, 1, size=8)}
    assert _run(fabric, handles)[3].status == Status.UNSUPPORTED_REQUEST
    assert all(m.peek(0x100, 8) == bytes(8) for m in fabric.memories)


def test_many_stores_queue_for_the_engine_and_all_land() -> None:
    n = 4
    # an engine that works on two operations at once: the others wait at ingress
    fabric = Fabric(FabricConfig(accelerators=n, max_outstanding=256, multicast_ops=2,
                                 multicast=(MulticastGroup(GROUP, tuple(range(n))),)))
    handles = [fabric.endpoints[0][0].write(GROUP, 0x10000 + 256 * i, bytes([i]) * 256)
               for i in range(64)]
    done = 0
    for _ in range(20000):
        for _name, event in fabric.network.step():
            if type(event) is Completion:
                assert event.status == Status.OKAY and event.handle in handles
                done += 1
        if done == 64:
            break
    fabric.drain()
    assert done == 64 and fabric.leaks() == []
    for memory in fabric.memories:
        assert all(memory.peek(0x10000 + 256 * i, 256) == bytes([i]) * 256 for i in range(64))


def test_group_configuration_is_checked() -> None:
    with pytest.raises(ConfigError):
        MulticastGroup(5, (1, 1))
    with pytest.raises(ConfigError):
        MulticastGroup(5, (5, 1))
    with pytest.raises(ConfigError):
        MulticastGroup(1 << 10, (1,))
    with pytest.raises(ConfigError):  # a group ID that is an accelerator's
        FabricConfig(accelerators=4, multicast=(MulticastGroup(2, (0, 1)),))
    with pytest.raises(ConfigError):
        SwitchConfig(ports=2, multicast_ops=0)
    with pytest.raises(ConfigError):  # checked by the pod's own configuration too
        FabricConfig(accelerators=4, multicast_ops=0)
    twice = (MulticastGroup(9, (0, 1)), MulticastGroup(9, (2, 3)))
    with pytest.raises(ConfigError):
        FabricConfig(accelerators=4, multicast=twice)
    with pytest.raises(ConfigError):  # a group may not take over an accelerator's ID
        Switch(SwitchConfig(ports=2, multicast=(MulticastGroup(1, (0,)),)), {0: 0, 1: 1})
    with pytest.raises(ConfigError):
        FabricConfig(accelerators=4, links_down=[LinkDown(0, 1, 5)])  # type: ignore[arg-type]


def test_a_member_answering_in_pieces_is_gathered_and_a_poisoned_sum_is_an_error() -> None:
    fabric = _pod()
    for memory in fabric.memories:
        memory.poke(0x8000, np.arange(64, dtype="<f4").tobytes())
    fabric.memories[2].poison(0x8000 + 64 + 8, 4)  # beat 1 of member 2: it answers in pieces
    handle = fabric.endpoints[0][0].read(GROUP, 0x8000, 256, metadata=2)
    done = _run(fabric, {0: handle})
    assert done[0].status == Status.DATA_ERROR and done[0].data is None
    engine = fabric.switches[0].multicast
    assert engine is not None and engine.stray_answers == 0 and engine.held == 0
    # the engine's tag is free again and a later reduce-load is answered in full
    assert fabric.memories[2].write(0x8000 + 64 + 8, bytes(4)) == Status.OKAY  # unpoisons
    handle = fabric.endpoints[0][1].read(GROUP, 0x8000, 256, metadata=2)
    done = _run(fabric, {1: handle})
    ones = np.arange(64, dtype="<f4")
    member2 = ones.copy()
    member2[18] = 0  # the element just rewritten
    assert done[1].status == Status.OKAY
    assert done[1].data == (((ones + ones) + member2) + ones).tobytes()


def test_a_group_with_a_member_out_of_reach_is_refused() -> None:
    # a switch of two ports whose group also names accelerator 7, which no port reaches
    switch = Switch(SwitchConfig(ports=2, multicast=(MulticastGroup(GROUP, (0, 1, 7)),)),
                    {0: 0, 1: 1})
    net = Network()
    memories = [Memory(), Memory()]
    eps = [Endpoint(i, memories[i], config=EndpointConfig(tl=TLConfig(compress=False)))
           for i in range(2)]
    for i, ep in enumerate(eps):
        net.add_port(f"a{i}", ep)
        net.add_port(f"s{i}", switch.port(i))
        net.connect(f"a{i}", f"s{i}", latency=1)
    handle = eps[0].write(GROUP, 0x100, bytes([5]) * 64)
    done = None
    for _ in range(500):
        for name, event in net.step():
            if type(event) is Completion and name == "a0":
                done = event
        if done is not None:
            break
    assert done is not None and done.handle == handle
    assert done.status == Status.UNSUPPORTED_REQUEST
    assert all(m.peek(0x100, 64) == bytes(64) for m in memories) and switch.held == 0


def test_a_copy_for_a_faulted_member_is_answered_for_it() -> None:
    """H7 with S9: a multicast store issued after a member's port faulted reaches the
    other members, and the copy that cannot reach the dead one is answered for it
    (``FAULT_STATUS``), so the store ends once, with that error, instead of waiting."""
    fabric = Fabric(FabricConfig(accelerators=4, links_down=(LinkDown(0, 3, 0),),
                                 multicast=(MulticastGroup(GROUP, (0, 1, 2, 3)),)))
    switch = fabric.switches[0]
    while 3 not in switch.faulted_ports:
        assert fabric.network.now < 10_000, "the dead link never faulted its port"
        fabric.step()
    data = bytes(range(256))
    handle = fabric.endpoints[0][2].write(GROUP, 0x4000, data)
    done = _run(fabric, {2: handle})
    assert done[2].status == Status.DATA_ERROR
    assert [m.peek(0x4000, 256) == data for m in fabric.memories] == [True, True, True, False]
    assert switch.agents[3].stats.fault_answers >= 1
