"""Issue 26, item 3: a switch port's memory is stated and bounded (specs/fabric.md H8).

A fresh port costs the same whatever the switch's size (the egress keeps a FIFO only
per ingress with packets waiting: an earlier arbiter made 8 FIFOs per ingress per
egress up front, 2.4 MB a port at 512 ports — the 1,024-accelerator run's 6.7 GB);
what a port holds later is bounded by ``SwitchPort.limits`` (checked after every
step of the hostile-pod machine, ``tests/node/test_switch_hostile.py``).
"""

from __future__ import annotations

import tracemalloc

from tests.helpers.hostile_pod import HOSTILE, HostilePod
from ualink_ref.node.config import SwitchConfig
from ualink_ref.node.switch import MAX_LOCAL_REPLIES, Switch
from ualink_ref.sim.fabric import SWITCH_BUFFER
from ualink_ref.tl.codec import FlowControl

#: The stated cost of one idle switch port (specs/fabric.md H8): its link end (PHY, DL,
#: link state), its agent, its credit books and its originator's 4 KiB tag table.
PORT_BYTES = 32 * 1024


def per_port_bytes(ports: int) -> float:
    tracemalloc.start()
    try:
        switch = Switch(SwitchConfig(ports=ports, buffer=SWITCH_BUFFER),
                        {i: i for i in range(ports)})
        size, _ = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert len(switch.agents) == ports
    return size / ports


def test_a_port_costs_the_same_at_any_size() -> None:
    small, large = per_port_bytes(16), per_port_bytes(256)
    assert small <= PORT_BYTES and large <= PORT_BYTES, (small, large)
    assert abs(large - small) < 0.1 * small, (small, large)  # O(1) per port, not O(ports)


def test_what_a_port_holds_is_bounded_by_its_limits() -> None:
    """The limits are finite and the hostile port reaches the local-reply one exactly."""
    pod = HostilePod(stall_slots=1 << 30)
    limits = pod.switch.agents[0].limits
    # every ingress's command buffers, the port's own answers: a number, not a growth
    cmd = (4 + 4) * 4 + 32 + 32
    assert limits.queued == cmd * 16 + MAX_LOCAL_REPLIES
    assert limits.occupied_buffers == (4 + 4 + 8 + 8) * 4 + (32 + 32 + 128 + 128)
    pod.hostile_fields([FlowControl(0, 0, 0, 0)])
    pod.step(10)
    assert pod.switch.agents[HOSTILE].resources.queued <= limits.queued
