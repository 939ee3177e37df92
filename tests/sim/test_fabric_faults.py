"""Issue 26, item 2: faults in a pod (specs/fabric.md F11, F13, H6, H7).

A link killed mid-run (either direction or both, for good or for a while), a switch
port retraining, a burst outage on one plane: ops through healthy links end OKAY
with the model's data; ops through a dead link end once, with an error, within
``fault_bound_slots``; the dead link is reported (``Fabric.faulted_links``), nothing
rerouted; the run ends (no hang) and the healthy links' books balance.
"""

from __future__ import annotations

import pytest

from ualink_ref.errors import ConfigError
from ualink_ref.sim.fabric import Fabric, FabricConfig, FabricRun, LinkDown, fault_bound_slots
from ualink_ref.sim.model import PAGE, ModelMemory, model_read, model_step
from ualink_ref.sim.workloads import FabricOp, Op, fabric_workload
from ualink_ref.tl.upli import Status


def _dead(fabric: Fabric, fop: FabricOp, links: set[tuple[int, int]]) -> bool:
    plane = fabric.plane_of(fop.op.addr)
    return (plane, fop.src) in links or (plane, fop.dst) in links


def check_faulted_run(fabric: Fabric, run: FabricRun, links: set[tuple[int, int]],
                      at: float) -> tuple[int, int]:
    """Healthy ops OKAY with the model's data and memories equal outside dead regions;
    dead ops OKAY or an error within the bound. Returns (healthy, dead ops with error)."""
    bound = fault_bound_slots(fabric.config)
    models: dict[int, ModelMemory] = {}
    skip: set[tuple[int, int]] = set()  # (target, page) touched by a dead op
    healthy = errors = 0
    for i, fop in enumerate(run.workload):
        got = run.results[i]
        assert got is not None, f"op {i} never completed"
        if _dead(fabric, fop, links):
            skip.add((fop.dst, fop.op.addr - fop.op.addr % PAGE))
            if got.status != Status.OKAY:
                assert got.status == Status.DATA_ERROR, got
                assert run.done_at[i] - max(run.issued_at[i], at) <= bound, (
                    i, run.issued_at[i], run.done_at[i], bound)
                errors += 1
            continue
        want = model_step(models.setdefault(fop.dst, {}), fop.op)
        assert (got.status, got.data) == (Status.OKAY, want), (i, fop, got)
        healthy += 1
    for acc, memory in enumerate(fabric.memories):
        model = models.get(acc, {})
        pages = {base for base, _ in memory.snapshot().items()} | set(model)
        for base in pages:
            for page in range(base - base % PAGE, base + 4096, PAGE):
                if (acc, page) not in skip:
                    assert memory.peek(page, PAGE) == model_read(model, page, PAGE), (acc, page)
    return healthy, errors


def test_a_link_killed_mid_run_16_accelerators_4_planes() -> None:
    """The issue's figure: 16 accelerators, 4 planes, plane 1's link to accelerator 5
    dies for good at slot 20."""
    at = 20
    config = FabricConfig(accelerators=16, planes=4, fec="none",
                          links_down=(LinkDown(1, 5, at),))
    work = fabric_workload("uniform", 400, 16, seed=3, load=0.3)
    fabric = Fabric(config)
    run = fabric.run(work)  # returns: no hang (it raises LinkStalledError past its limit)
    assert set(fabric.faulted_links()) == {(1, 5)}  # reported, nothing else down
    healthy, errors = check_faulted_run(fabric, run, {(1, 5)}, at)
    assert healthy > 300 and errors > 5
    assert fabric.leaks() == []  # the healthy links' books balance


@pytest.mark.parametrize("direction", ["to_switch", "from_switch"])
def test_one_direction_dead_for_good(direction: str) -> None:
    at = 30
    config = FabricConfig(accelerators=4, fec="none",
                          links_down=(LinkDown(0, 2, at, direction=direction),))
    work = fabric_workload("uniform", 200, 4, seed=1, load=0.3)
    fabric = Fabric(config)
    run = fabric.run(work)
    assert set(fabric.faulted_links()) == {(0, 2)}
    _, errors = check_faulted_run(fabric, run, {(0, 2)}, at)
    assert errors > 0


def test_a_short_outage_retrains_and_loses_nothing() -> None:
    """A switch port retraining: the link is down for 40 slots; both ends replay and
    retrain (specs/dl.md L5), every op ends OKAY with the model's data."""
    config = FabricConfig(accelerators=4, fec="none", links_down=(LinkDown(0, 1, 30, 70),))
    work = fabric_workload("uniform", 200, 4, seed=2, load=0.3)
    fabric = Fabric(config)
    run = fabric.run(work)
    assert fabric.faulted_links() == {}
    healthy, errors = check_faulted_run(fabric, run, set(), 30)
    assert healthy == 200 and errors == 0
    port = fabric.switches[0].port(1)
    assert port.counters.replays > 0  # the outage was felt
    assert fabric.leaks() == []


def test_a_burst_outage_on_one_plane() -> None:
    """Every link of plane 2 down for 40 slots: every plane-2 link retrains, nothing is
    lost; the other planes never notice."""
    links = tuple(LinkDown(2, acc, 25, 65) for acc in range(8))
    config = FabricConfig(accelerators=8, planes=4, fec="none", links_down=links)
    work = fabric_workload("uniform", 300, 8, seed=4, load=0.3)
    fabric = Fabric(config)
    run = fabric.run(work)
    assert fabric.faulted_links() == {}
    healthy, _ = check_faulted_run(fabric, run, set(), 25)
    assert healthy == 300
    replays = [sum(sw.port(a).counters.replays for a in range(8)) for sw in fabric.switches]
    assert replays[2] > 0 and replays[0] == replays[1] == replays[3] == 0


def test_a_long_burst_on_one_plane_is_reported_not_rerouted() -> None:
    """Plane 3's links to accelerators 0 and 1 die: their plane-3 ops end with an error
    (no silent rerouting to another plane) and both links are reported."""
    links = (LinkDown(3, 0, 20), LinkDown(3, 1, 20))
    config = FabricConfig(accelerators=4, planes=4, fec="none", links_down=links)
    work = fabric_workload("uniform", 300, 4, seed=5, load=0.3)
    fabric = Fabric(config)
    run = fabric.run(work)
    assert set(fabric.faulted_links()) == {(3, 0), (3, 1)}
    _, errors = check_faulted_run(fabric, run, {(3, 0), (3, 1)}, 20)
    assert errors > 0
    for i, fop in enumerate(work):  # every error is a plane-3 op of a dead link
        if run.results[i] is not None and run.results[i].status != Status.OKAY:
            assert _dead(fabric, fop, {(3, 0), (3, 1)})


def test_link_down_values_are_checked() -> None:
    with pytest.raises(ConfigError, match="direction"):
        LinkDown(0, 1, 5, direction="up")
    with pytest.raises(ConfigError, match="until"):
        LinkDown(0, 1, 5, until=5)


def test_the_bound_follows_the_dl_rules() -> None:
    """F13's bound: (max_retrains + 1) x (max_replays + 1) replay timeouts + the trainings
    + one idle probe, or the watchdog, whichever is longer, plus the answer's trip."""
    config = FabricConfig()  # 3 m: 1 slot of cable; 200 ns: 8 slots of switch; batch 1
    detect = 4 * 5 * 128 + 3 * 128 + 256 + 128  # 3,328: the DL's own budget
    assert fault_bound_slots(config) == max(detect, 4096) + 2 * (1 + 1) + 8 + 2


def test_a_multicast_store_with_a_dead_member_ends_once_with_an_error() -> None:
    """H7 with S9: member 3's link dies; a store to the group (and a reduce-load) waiting
    on it takes DATA_ERROR as its answer: each ends once, the engine holds nothing."""
    from ualink_ref.node.config import MulticastGroup
    from ualink_ref.tl.events import Completion

    group = 100
    config = FabricConfig(accelerators=4, fec="none", links_down=(LinkDown(0, 3, 10),),
                          multicast=(MulticastGroup(group, (0, 1, 2, 3)),))
    fabric = Fabric(config)
    for _ in range(30):
        fabric.step()
    ep = fabric.endpoints[0][1]
    handles = {ep.write(group, 0x4000, bytes(range(64))), ep.read(group, 0x4000, 64, metadata=1)}
    done: list[Completion] = []
    for _ in range(fault_bound_slots(config)):
        done += [e for _, acc, e in fabric.step() if acc == 1]
        if len(done) == 2:
            break
    assert sorted(e.handle for e in done) == sorted(handles)
    assert all(e.status == Status.DATA_ERROR for e in done)
    assert set(fabric.faulted_links()) == {(0, 3)}
    assert fabric.switches[0].held == 0


@pytest.mark.parametrize("direction", ["to_switch", "from_switch"])
def test_a_link_dying_at_any_slot_of_a_short_run_ends_every_op(direction: str) -> None:
    """F13, H3, H7 at every boundary: the target's link dies at each slot of a run of
    four 256-byte reads (it ends at slot 6 unfaulted), so also between a response's
    header and its data. The tag slot stays until the response is forwarded, so the
    switch still answers the op when the target faults (issue 26 review: at slot 4 two
    ops never ended)."""
    for at in range(8):
        config = FabricConfig(accelerators=2, fec="none", cable_m=0.0, switch_ns=0.0,
                              links_down=(LinkDown(0, 1, at=at, direction=direction),))
        work = [FabricOp(0, 1, Op("a", "read", 0x1000 + 256 * i, length=256), 0)
                for i in range(4)]
        fabric = Fabric(config)
        run = fabric.run(work)  # raises LinkStalledError on a hang
        check_faulted_run(fabric, run, {(0, 1)}, at)
        assert fabric.switches[0].tags.count == 0  # no slot outlives its op
