"""The pod's rules (specs/fabric.md F2, F3, F7, R1-R3) pinned at their edges.

Each test names the developer's bug it catches (issue 26); ``fuzz/mutation_sample.py
--hand`` replays the hand-made ones.
"""

from __future__ import annotations

import pytest

from ualink_ref.errors import ConfigError
from ualink_ref.net.timeouts import replay_timeout_for
from ualink_ref.node.arbiter import Packet
from ualink_ref.sim.fabric import (
    PFC_CREDITS,
    SWITCH_BUFFER,
    Fabric,
    FabricConfig,
    FabricRun,
    LinkDown,
    dl_fault_slots,
    pfc_for,
    watchdog_slots,
)
from ualink_ref.sim.fabric_report import (
    check,
    make_report,
    percentile,
    run_fabric,
    static_slots,
)
from ualink_ref.sim.workloads import FabricOp, Op, fabric_workload
from ualink_ref.tl import Status, codec, credits
from ualink_ref.tl.credits import CreditConfig
from ualink_ref.tl.upli import Command


def _drained(planes: int = 1) -> Fabric:
    fabric = Fabric(FabricConfig(accelerators=3, planes=planes))
    ops = tuple(FabricOp(src=0, dst=1, op=Op("a", "read", 0x100 * k, length=64))
                for k in range(4))
    fabric.run(ops)
    assert fabric.leaks() == []
    return fabric


@pytest.mark.parametrize("source", [0, 3, credits.POOL])
def test_f7_an_occupied_ingress_buffer_is_a_leak_on_every_source(source: int) -> None:
    # Bug caught: the audit walks the VCs and skips the shared pool (source 4).
    fabric = _drained()
    rx = fabric.switches[0].agents[1].rx_credits
    rx.take_returns()  # nothing owed: the drained books hold every credit at the peer
    rx.outstanding[source][credits.REQ_CMD] += 1  # the peer is granted one more ...
    rx.consume(source, credits.REQ_CMD, credits.REQ_DATA, 0)  # ... and uses it
    leaks = fabric.leaks()
    assert len(leaks) == 1
    assert leaks[0].startswith(f"p0 acc1->sw source {source}: ")
    rx.free(source, credits.REQ_CMD, credits.REQ_DATA, 0)  # freed, now owed back
    assert [x.split(":")[0] for x in fabric.leaks()] == [f"p0 acc1->sw source {source}"]


@pytest.mark.parametrize("source", [0, credits.POOL])
@pytest.mark.parametrize("delta", [-1, 1])
def test_f7_a_sender_holding_one_credit_more_or_less_is_a_leak(source: int, delta: int) -> None:
    fabric = _drained(planes=2)
    fabric.switches[1].agents[2].tx_credits.available[source][credits.RSP_DATA] += delta
    assert [x.split(":")[0] for x in fabric.leaks()] == [f"p1 sw->acc2 source {source}"]


def test_f7_a_field_held_in_a_switch_is_a_leak() -> None:
    fabric = _drained()
    held = codec.Request(cmd=int(Command.READ), vchan=0, asi=0, tag=7, pool=0, attr=0, len=0,
                         metadata=0, addr=0x1000, src_acc=1, dst_acc=0, cload=0, cway=0,
                         numbeats=0)
    # A field queued at egress 0 that the egress never sends (the run is over).
    fabric.switches[0].agents[0].arbiter.enqueue(
        Packet(value=held, halves=[], ingress=1, source=0, data_credits=0, ready=0.0))
    assert fabric.leaks() == ["plane 0: 1 fields still held"]


@pytest.mark.parametrize(("addr", "plane"), [(0xFF, 0), (0x100, 1), (0x1FF, 1), (0x200, 2),
                                             (0x2FF, 2), (0x300, 0)])
def test_f2_plane_boundaries_three_planes(addr: int, plane: int) -> None:
    assert Fabric(FabricConfig(accelerators=2, planes=3)).plane_of(addr) == plane


@pytest.mark.parametrize(("cable_m", "fec_ns", "lanes", "slots"), [
    (0.0, 0.0, 1, 0), (5.12, 0.0, 1, 1), (5.13, 0.0, 1, 2), (3.0, 0.0, 1, 1),
    (3.0, 10.6, 1, 1), (3.0, 10.7, 1, 2), (3.0, 0.0, 2, 2), (3.0, 0.0, 4, 3)])
def test_f3_f9_link_latency_in_whole_slots(cable_m: float, fec_ns: float, lanes: int,
                                           slots: int) -> None:
    # ceil((cable x 5 ns + decode) / (25.6 ns / lanes)): 5.12 m is exactly one slot.
    cfg = FabricConfig(accelerators=2, cable_m=cable_m, fec_decode_ns=fec_ns, lanes=lanes)
    assert cfg.link_slots == slots


@pytest.mark.parametrize(("switch_ns", "lanes", "slots"), [
    (200.0, 1, 8), (204.8, 1, 8), (204.9, 1, 9), (0.0, 1, 0), (200.0, 2, 16)])
def test_f3_switch_latency_in_whole_slots(switch_ns: float, lanes: int, slots: int) -> None:
    assert FabricConfig(accelerators=2, switch_ns=switch_ns, lanes=lanes).switch_slots == slots


def test_r3_traffic_on_plane_one_counts_in_the_active_share() -> None:
    # Bug caught: the active window read from plane 0's switch only (planes ignored):
    # an accelerator whose data all crossed plane 1 showed no active share.
    cfg = FabricConfig(accelerators=2, planes=2)
    ops = tuple(FabricOp(src=0, dst=1, op=Op("a", "read", 0x100 + 0x200 * k, length=256))
                for k in range(8))  # (addr >> 8) % 2 == 1: every op on plane 1
    report = run_fabric(cfg, ops)
    assert report.ok
    port = report.ports[0]
    assert port.to_acc_fraction > 0
    assert port.to_acc_active_fraction > 0


def _active_vs_overall(planes: int) -> list[tuple[int, float, float]]:
    cfg = FabricConfig(accelerators=4, planes=planes, seed=1)
    report = run_fabric(cfg, fabric_workload("uniform", 200, 4, seed=1, load=0.3))
    assert report.ok
    return [(p.acc, p.to_acc_active_fraction, p.to_acc_fraction) for p in report.ports]


def test_r3_active_share_at_least_the_overall_share_one_plane() -> None:
    # The active window is at most the run: the share over it cannot be smaller.
    rows = _active_vs_overall(1)
    assert all(active >= overall > 0 for _, active, overall in rows), rows


def test_r3_active_share_at_least_the_overall_share_four_planes() -> None:
    rows = _active_vs_overall(4)
    assert all(active >= overall > 0 for _, active, overall in rows), rows


def test_r3_one_plane_active_share_is_the_share_over_the_active_window() -> None:
    # Exact for one plane: active = overall x run slots / (last - first data slot + 1).
    fabric = Fabric(FabricConfig(accelerators=2))
    ops = (FabricOp(src=0, dst=1, op=Op("a", "read", 0x0, length=256)),
           FabricOp(src=0, dst=1, op=Op("a", "read", 0x100, length=256), at=100.0))
    run = fabric.run(ops)
    report = make_report(fabric, run)
    st = fabric.switches[0].stats[0]
    window = st.last_data_out - st.first_data_out + 1
    assert 1 < window < run.slots
    port = report.ports[0]
    assert port.to_acc_active_fraction == pytest.approx(
        port.to_acc_fraction * run.slots / window, rel=1e-12)


def test_r1_every_op_once_and_statuses_counted() -> None:
    cfg = FabricConfig(accelerators=3)
    ops = (FabricOp(src=0, dst=1, op=Op("a", "read", 0x0, length=64)),
           FabricOp(src=0, dst=2, op=Op("a", "write", 0x40, data=b"\x01" * 8)),
           FabricOp(src=2, dst=1, op=Op("a", "read", 0x80, length=4)))
    report = run_fabric(cfg, ops)
    assert (report.ops, report.ops_completed, report.status) == (3, 3, {"OKAY": 3})
    assert report.data_mismatches == 0 and report.leaks == []


@pytest.mark.parametrize(("n", "ok"), [(1, False), (2, True), (1024, True), (1025, False)])
def test_f1_accelerator_count_range(n: int, ok: bool) -> None:
    if ok:
        assert FabricConfig(accelerators=n).accelerators == n
    else:
        with pytest.raises(ConfigError, match="accelerators"):
            FabricConfig(accelerators=n)


def test_f1_each_plane_has_one_switch_port_per_accelerator_sharing_one_memory() -> None:
    fabric = Fabric(FabricConfig(accelerators=3, planes=2))
    assert len(fabric.switches) == 2 and all(len(sw.agents) == 3 for sw in fabric.switches)
    assert [len(eps) for eps in fabric.endpoints] == [3, 3]
    for acc in range(3):
        assert fabric.endpoints[0][acc].memory is fabric.endpoints[1][acc].memory


@pytest.mark.parametrize("limit", [1, 2])
def test_f4_at_most_max_outstanding_ops_in_flight(limit: int) -> None:
    fabric = Fabric(FabricConfig(accelerators=2, max_outstanding=limit))
    ops = tuple(FabricOp(src=0, dst=1, op=Op("a", "read", 0x40 * k, length=4))
                for k in range(6))
    run = fabric.run(ops)
    for slot in sorted(set(run.issued_at)):
        live = sum(i <= slot < d for i, d in zip(run.issued_at, run.done_at, strict=True))
        assert live <= limit
    # The (limit+1)-th op waits for the first completion; none is issued before its time.
    assert run.issued_at[limit] >= min(run.done_at[:limit])
    assert run.issued_at[:limit] == [0.0] * limit


def test_f4_an_op_is_issued_at_its_offered_slot_not_before() -> None:
    run = Fabric(FabricConfig(accelerators=2)).run(
        (FabricOp(src=0, dst=1, op=Op("a", "read", 0, length=4), at=37.0),))
    assert run.issued_at == [37.0] and run.done_at[0] > 37.0


def test_f6_default_pfc_thresholds() -> None:
    # 3 m: 1 link slot, batch 1: headroom = 2 x ((2 x 2 + 2) x 10 + 20) = 160 buffers.
    cfg = FabricConfig(accelerators=2)
    pfc = pfc_for(cfg, SWITCH_BUFFER)
    total = sum(SWITCH_BUFFER.pool) + sum(SWITCH_BUFFER.per_vc) * credits.NUM_VCS
    assert total == 416
    assert (pfc.xoff, pfc.xon, pfc.limit, pfc.delay) == (416 - 160, 416 - 320, 416, 2)


def test_f6_pfc_grants_pfc_credits_both_ways() -> None:
    # Bug caught: the endpoints grant the CBFC default under PFC (only the switch gets
    # PFC_CREDITS), so credits, not the pause, bind at the switch's egress.
    fabric = Fabric(FabricConfig(accelerators=2, flow_control="pfc"))
    fabric.run((FabricOp(src=0, dst=1, op=Op("a", "read", 0x100, length=64)),))
    granted = tuple(PFC_CREDITS.capacity(s) for s in range(credits.NUM_VCS + 1))
    assert granted != tuple(CreditConfig().capacity(s) for s in range(credits.NUM_VCS + 1))
    for agent in fabric.switches[0].agents:
        books = agent.credit_books()
        assert books.receiver.capacity == granted  # the switch's ingress grants its peer
        assert books.sender.available == granted  # what the endpoint granted the egress


@pytest.mark.parametrize(("config", "timeout", "watchdog"), [
    (FabricConfig(), 128, 4096), (FabricConfig(batch=32), 196, 5366),
    (FabricConfig(cable_m=300.0), 304, 8336)])
def test_f13_h6_dl_budget_and_watchdog_as_the_spec_states(config: FabricConfig, timeout: int,
                                                           watchdog: int) -> None:
    # F13's DL budget: (max_retrains 3 + 1) x (max_replays 4 + 1) replay timeouts +
    # 3 retrains + idle_after + one probe's retrain_slots, with retrain_slots =
    # max(128, timeout) and idle_after = max(256, 2 x timeout); H6's watchdog figures.
    assert replay_timeout_for(config.link_slots, config.batch) == timeout
    retrain, idle = max(128, timeout), max(256, 2 * timeout)
    assert dl_fault_slots(config) == 4 * 5 * timeout + 3 * retrain + idle + retrain
    assert watchdog_slots(config) == watchdog


def test_f11_a_link_that_is_not_the_pods_is_refused_naming_links_down() -> None:
    for bad in ({"plane": -1}, {"accelerator": -1}):
        with pytest.raises(ConfigError) as refused:
            LinkDown(**{"plane": 0, "accelerator": 0, "at": 0, **bad})  # type: ignore[arg-type]
        assert refused.value.option == "links_down"
        assert f"{next(iter(bad))} must be an integer >= 0, got -1" in str(refused.value)
    with pytest.raises(ConfigError) as refused:
        FabricConfig(accelerators=2, links_down=(LinkDown(0, 2, 0),))
    assert refused.value.option == "links_down"
    assert "not a link of this pod: LinkDown(plane=0, accelerator=2" in str(refused.value)


def test_f6_a_buffer_too_small_for_the_headroom_is_refused() -> None:
    with pytest.raises(ValueError, match="too small"):
        pfc_for(FabricConfig(accelerators=2), CreditConfig(per_vc=(4, 4, 8, 8),
                                                           pool=(32, 32, 32, 32)))


def test_w2_incast_and_all_to_all_destinations() -> None:
    incast = fabric_workload("incast", 9, 4, target=2)
    assert {op.dst for op in incast} == {2}
    assert [op.src for op in incast] == [0, 1, 3] * 3
    a2a = fabric_workload("all-to-all", 12, 4)
    assert [(op.src, op.dst) for op in a2a[:8]] == [(0, 1), (1, 2), (2, 3), (3, 0),
                                                    (0, 2), (1, 3), (2, 0), (3, 1)]


def test_w2_permutation_is_a_derangement() -> None:
    ops = fabric_workload("permutation", 200, 5, seed=3)
    pairs = {op.src: op.dst for op in ops}
    assert all(s != d for s, d in pairs.items())
    assert len({op.dst for op in ops}) == len(pairs)  # one destination per source


def test_w3_source_s_stays_in_its_span() -> None:
    span, base = 1 << 14, 0x10_0000
    for op in fabric_workload("uniform", 300, 4, seed=2):
        assert base + op.src * span <= op.op.addr
        assert op.op.addr + op.op.nbytes <= base + (op.src + 1) * span


@pytest.mark.parametrize(("values", "p50", "p99"), [
    ([], 0.0, 0.0), ([5.0], 5.0, 5.0), ([1.0, 2.0], 1.0, 2.0),
    ([float(i) for i in range(1, 101)], 50.0, 99.0),
    ([float(i) for i in range(1, 102)], 51.0, 100.0)])
def test_r4_percentiles_nearest_rank(values: list[float], p50: float, p99: float) -> None:
    assert (percentile(values, 0.5), percentile(values, 0.99)) == (p50, p99)


@pytest.mark.parametrize("cable_m", [0.0, 3.0])
def test_r2_r4_static_dynamic_and_jitter_of_a_lone_op(cable_m: float) -> None:
    # Issued long after start-up (slot 50), the op's whole latency is static: R2's warm
    # link is one whose start-up credit grants have arrived (2 x (link + batch) + 2 slots;
    # with no cable an op issued before that waits for them).
    cfg = FabricConfig(accelerators=2, cable_m=cable_m)
    op = Op("a", "read", 0x1000, length=64)
    report = run_fabric(cfg, (FabricOp(src=0, dst=1, op=op, at=50.0),))
    static = static_slots(cfg, op) * cfg.slot_ns
    assert report.static_mean_ns == static == report.latency_p50_ns  # alone on a warm link
    assert report.dynamic_mean_ns == 0.0 and report.jitter_ns == 0.0
    assert report.latency_std_ns == 0.0


@pytest.mark.parametrize(("pages", "statuses"), [(1, ["OKAY", "DATA_ERROR"]),
                                                 (2, ["OKAY", "OKAY"])])
def test_f12_memory_pages_bound_what_a_memory_may_allocate(pages: int,
                                                           statuses: list[str]) -> None:
    fabric = Fabric(FabricConfig(accelerators=2, memory_pages=pages))
    ops = (FabricOp(src=0, dst=1, op=Op("a", "write", 0x1000, data=b"\x05" * 64)),
           FabricOp(src=0, dst=1, op=Op("a", "write", 0x2000, data=b"\x06" * 64), at=50.0))
    run = fabric.run(ops)
    assert [r.status.name for r in run.results if r is not None] == statuses
    assert fabric.leaks() == []


def _checked_run() -> tuple[Fabric, FabricRun]:
    fabric = Fabric(FabricConfig(accelerators=2))
    ops = (FabricOp(src=0, dst=1, op=Op("a", "write", 0x1000, data=b"\x05" * 8)),
           FabricOp(src=0, dst=1, op=Op("a", "read", 0x1000, length=8), at=60.0))
    run = fabric.run(ops)
    assert check(fabric, run) == 0
    return fabric, run


def test_r1_a_wrong_result_counts_one_mismatch() -> None:
    fabric, run = _checked_run()
    good = run.results[1]
    assert good is not None and good.data == b"\x05" * 8
    run.results[1] = good._replace(data=b"\x05" * 7 + b"\x06")
    assert check(fabric, run) == 1
    run.results[1] = good._replace(status=Status.DATA_ERROR)
    assert check(fabric, run) == 1


def test_r1_memory_bytes_the_model_does_not_have_count_one_each() -> None:
    fabric, run = _checked_run()
    fabric.memories[1].poke(0x1002, b"\x09\x09\x09")  # three of the written bytes changed
    assert check(fabric, run) == 3


def test_r3_report_text_names_the_busiest_ports_and_the_source_range() -> None:
    cfg = FabricConfig(accelerators=3)
    ops = tuple(FabricOp(src=s, dst=2, op=Op("a", "write", 0x1000 + 0x100 * s,
                                                data=bytes(64 * (1 + 3 * s))))
                for s in range(2))  # source 1 sends four times what source 0 sends
    report = run_fabric(cfg, ops)
    src = sorted(p.from_acc_fraction for p in report.ports if p.from_acc_fraction > 0)
    assert len(src) == 2 and src[0] < src[1]
    text = report.format()
    line = next(x for x in text.splitlines() if x.strip().startswith("sources"))
    assert f"min {src[0]:.0%}" in line and f"max {src[1]:.0%}" in line


def test_r2_r4_an_empty_run_reports_zeros() -> None:
    report = run_fabric(FabricConfig(accelerators=2), ())
    assert (report.ops, report.latency_p50_ns, report.latency_max_ns, report.jitter_ns,
            report.latency_std_ns, report.static_mean_ns) == (0, 0.0, 0.0, 0.0, 0.0, 0.0)


@pytest.mark.parametrize(("src", "dst", "ok"), [(2, 0, True), (3, 0, False), (0, 3, False),
                                                (-1, 0, False), (0, -1, False)])
def test_f1_ops_between_ids_outside_the_pod_are_refused(src: int, dst: int, ok: bool) -> None:
    fabric = Fabric(FabricConfig(accelerators=3))
    ops = (FabricOp(src=src, dst=dst, op=Op("a", "read", 0x40, length=4)),)
    if ok:
        assert fabric.run(ops).results[0] is not None
    else:
        with pytest.raises(ValueError, match=r"pod has IDs 0\.\.2"):
            fabric.run(ops)


def test_f7_a_busy_accelerator_is_a_leak() -> None:
    fabric = _drained()
    fabric.endpoints[0][2].read(1, 0x40, 4)  # issued after the drain, never run
    assert fabric.leaks() == ["accelerator 2: TL still busy"]


@pytest.mark.parametrize(("option", "value", "ok"), [
    ("accelerators", 1, False), ("accelerators", 1025, False), ("accelerators", True, False),
    ("planes", 0, False), ("planes", 1, True), ("batch", 0, False),
    ("max_outstanding", 0, False), ("max_outstanding", 1, True), ("memory_pages", -1, False),
    ("memory_pages", 0, True), ("lanes", 3, False), ("lanes", 4, True),
    ("cable_m", -0.001, False), ("cable_m", 0.0, True), ("cable_m", float("inf"), False),
    ("switch_ns", float("nan"), False), ("fec_decode_ns", -1, False), ("ber", 1.0, True),
    ("ber", 1.0000001, False), ("ber", True, False), ("fec", "rs", False),
    ("flow_control", "xon", False), ("multicast_ops", 0, False), ("multicast_ops", 1, True),
    ("multicast_ops", 2048, True), ("multicast_ops", 2049, False),
    ("multicast", [], False), ("links_down", [], False), ("pfc", 3, False)])
def test_pod_options_at_their_range_edges(option: str, value: object, ok: bool) -> None:
    # Each refusal names its option (the CLI turns it into a usage error, specs/cli.md).
    kwargs = {"accelerators": 4, option: value}
    if ok:
        assert getattr(FabricConfig(**kwargs), option) == value  # type: ignore[arg-type]
        return
    with pytest.raises(ConfigError) as info:
        FabricConfig(**kwargs)  # type: ignore[arg-type]
    assert info.value.option == option
    assert str(info.value).startswith(f"{option}: ")


def test_pod_option_messages_state_the_range() -> None:
    for kwargs, text in (({"accelerators": 1025}, "accelerators: must be 2..1024, got 1025"),
                         ({"multicast": [1]}, "multicast: must be a tuple of MulticastGroup"),
                         ({"multicast_ops": 0}, "multicast_ops: must be 1..2048, got 0"),
                         ({"cable_m": -3}, "cable_m: must be a number >= 0, got -3")):
        with pytest.raises(ConfigError) as info:
            FabricConfig(**kwargs)  # type: ignore[arg-type]
        assert str(info.value) == text


@pytest.mark.parametrize("ber", [0.0, 1e-3])
def test_f11_a_dead_links_noise_is_seeded(ber: float) -> None:
    # The same seed gives the same wire bytes, noise included (a failure reproduces);
    # from slot `at` on, the dead link delivers something other than what was sent.
    def wire(seed: int) -> list[tuple[float, bytes, bytes | None]]:
        cfg = FabricConfig(accelerators=2, ber=ber, seed=seed,
                           links_down=(LinkDown(plane=0, accelerator=1, at=4.0),))
        fabric = Fabric(cfg)
        seen: list[tuple[float, bytes, bytes | None]] = []
        fabric.network.add_tap(lambda c: seen.append((c.sent_at, c.sent, c.received))
                               if c.link == "p0.link1" else None)
        fabric.endpoints[0][0].read(1, 0x40, 64)
        for _ in range(30):
            fabric.network.step()
        return seen

    first = wire(5)
    assert first == wire(5)
    assert first != wire(6)
    late = [(s, r) for at, s, r in first if at >= 4.0]
    assert late and all(r != s for s, r in late)
