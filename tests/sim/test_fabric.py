"""The switched pod: reduced-size versions of the issue-10 acceptance runs (the full
10,000-op runs are marked slow)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from ualink_ref.errors import LinkStalledError
from ualink_ref.node.config import EndpointConfig
from ualink_ref.node.endpoint import Endpoint
from ualink_ref.sim import fabric as fabric_module
from ualink_ref.sim.fabric import Fabric, FabricConfig
from ualink_ref.sim.fabric_report import run_fabric, zero_load_load64
from ualink_ref.sim.workloads import PATTERNS, FabricOp, Op, fabric_workload
from ualink_ref.tl import Memory


def _acceptance(n_ops: int, fec: str, planes: int, accelerators: int = 16) -> None:
    cfg = FabricConfig(accelerators=accelerators, fec=fec, ber=1e-4, planes=planes, seed=3)
    work = fabric_workload("uniform", n_ops, accelerators, seed=3)
    report = run_fabric(cfg, work, pattern="uniform")
    assert report.ops_completed == n_ops
    assert report.status == {"OKAY": n_ops}, report.status
    assert report.data_mismatches == 0
    assert report.leaks == []
    assert report.bit_errors_injected > 0  # the channels really corrupted the wire


@pytest.mark.parametrize(("fec", "planes"), [("kp4", 1), ("ll", 1), ("kp4", 4)])
def test_random_ops_ber_reduced(fec: str, planes: int) -> None:
    _acceptance(600, fec, planes)


@pytest.mark.slow
@pytest.mark.parametrize(("fec", "planes"), [("kp4", 1), ("ll", 1), ("kp4", 4), ("ll", 4)])
def test_random_ops_ber_10000(fec: str, planes: int) -> None:
    _acceptance(10_000, fec, planes)


@pytest.mark.parametrize("pattern", PATTERNS)
@pytest.mark.parametrize("flow_control", ["cbfc", "pfc"])
def test_every_pattern_and_flow_control(pattern: str, flow_control: str) -> None:
    cfg = FabricConfig(accelerators=6, flow_control=flow_control, seed=1)  # type: ignore[arg-type]
    work = fabric_workload(pattern, 240, 6, seed=1, load=0.7)  # type: ignore[arg-type]
    report = run_fabric(cfg, work, pattern=pattern, load=0.7)
    assert report.ok, (report.status, report.data_mismatches, report.leaks)


def _incast(n_ops: int, accelerators: int) -> None:
    cfg = FabricConfig(accelerators=accelerators, seed=2)
    work = fabric_workload("incast", n_ops, accelerators, seed=2, size=256,
                           kinds=("writefull",))
    report = run_fabric(cfg, work, pattern="incast")
    assert report.ok
    dest = report.ports[0]
    # The destination's link carries >= 90 % of its data rate while it is busy (R3).
    assert dest.to_acc_active_fraction >= 0.90, dest
    sources = [p.from_acc_fraction for p in report.ports[1:]]
    # Round robin: no source starved — each gets within 20 % of the fair share.
    fair = sum(sources) / len(sources)
    assert min(sources) > 0.8 * fair and max(sources) < 1.2 * fair, sources


def test_incast_reduced() -> None:
    _incast(1200, 8)


@pytest.mark.slow
def test_incast_15_to_1() -> None:
    _incast(4000, 16)


def test_pfc_pauses_under_overload_and_never_overruns() -> None:
    cfg = FabricConfig(accelerators=8, flow_control="pfc", seed=4, max_outstanding=256)
    work = fabric_workload("incast", 1500, 8, seed=4, size=256, kinds=("writefull",))
    report = run_fabric(cfg, work, pattern="incast")
    assert report.ok
    assert report.pauses > 0 and report.pause_ns > 0
    assert report.headroom_exceeded == 0


def test_stalled_bounded_run_raises() -> None:
    cfg = FabricConfig(accelerators=4, max_slots=5)
    with pytest.raises(LinkStalledError):
        Fabric(cfg).run(fabric_workload("uniform", 400, 4, seed=0))


def test_unroutable_request_answered_unsupported() -> None:
    # Destination 7 has no port in a 4-accelerator pod: the switch answers (rule S2).
    fabric = Fabric(FabricConfig(accelerators=4))
    ep = fabric.endpoints[0][0]
    handle = ep.read(7, 0x1000, 64)
    events = []
    for _ in range(200):
        events += [e for _, e in fabric.network.step() if hasattr(e, "status")]
        if events:
            break
    assert [(e.handle, e.status.name) for e in events] == [(handle, "UNSUPPORTED_REQUEST")]


def test_compressed_response_is_dropped_and_counted(monkeypatch: pytest.MonkeyPatch) -> None:
    """Rule H2 (S3): a compressed response names no originator: the switch drops it,
    counts it and returns its credits; the read it answered stays unanswered."""
    real = fabric_module.Endpoint

    def endpoint(acc: int, memory: Memory, *, config: EndpointConfig) -> Endpoint:
        if acc == 1:  # a completer that compresses its responses (a frozen TL option)
            config = replace(config, tl=replace(config.tl, compress=True))
        return real(acc, memory, config=config)

    monkeypatch.setattr(fabric_module, "Endpoint", endpoint)
    fabric = Fabric(FabricConfig(accelerators=2))
    fabric.endpoints[0][0].read(1, 0x1000, 64)
    for _ in range(400):
        fabric.network.step()
    assert fabric.switches[0].stats[1].bad_fields == 1
    assert fabric.endpoints[0][0].tl.outstanding == 1
    assert fabric.switches[0].agents[1].occupied_buffers == 0


def test_plane_by_region() -> None:
    fabric = Fabric(FabricConfig(accelerators=2, planes=4))
    assert [fabric.plane_of(a) for a in (0, 0xFC, 0x100, 0x2FF, 0x300, 0x400)] == [
        0, 0, 1, 2, 3, 0]


def test_deterministic_by_seed() -> None:
    cfg = FabricConfig(accelerators=4, ber=1e-4, seed=9)
    work = fabric_workload("hotspot", 200, 4, seed=9, load=0.5)
    assert run_fabric(cfg, work).as_dict() == run_fabric(cfg, work).as_dict()


def test_zero_load_load64_under_budget() -> None:
    z = zero_load_load64()
    # 4 link crossings of one 680-byte flit at 200 Gb/s, 4 x 15 ns of cable, 2 x 200 ns switch.
    assert z.model["serialization"] == pytest.approx(4 * 680 * 8 / 200)
    assert z.model["cable"] == 60 and z.model["switch"] == 400
    assert z.model["total"] <= z.simulated_ns < z.budget_ns


def test_static_latency_is_a_lower_bound_at_zero_load() -> None:
    cfg = FabricConfig(accelerators=2)
    warm = (FabricOp(0, 1, Op("a", "read", 0x2000, length=64), 10),)
    report = run_fabric(cfg, warm)
    assert report.dynamic_mean_ns == 0 and report.latency_max_ns == report.static_mean_ns
    # Issued at slot 0 the op waits for the switch's start-up credit grant (it crosses the
    # 1-slot link and lands on the next step edge: 2 slots), which is dynamic, not static.
    cold = (FabricOp(0, 1, Op("a", "read", 0x2000, length=64), 0),)
    report = run_fabric(cfg, cold)
    assert report.dynamic_mean_ns == pytest.approx(2 * 25.6)


def test_fixed_size_transfers_split_at_256_bytes_and_mixes() -> None:
    from ualink_ref.sim.workloads import MIXES, fabric_workload

    work = fabric_workload("uniform", 10, 4, seed=3, kinds=MIXES["writes"], size=1024)
    assert len(work) == 40 and all(op.op.kind == "write" and len(op.op.data) == 256
                                   for op in work)
    for i in range(0, 40, 4):  # each transfer: four consecutive regions, one source, one time
        group = work[i:i + 4]
        assert len({(op.src, op.dst, op.at) for op in group}) == 1
        assert [op.op.addr - group[0].op.addr for op in group] == [0, 256, 512, 768]
    reads = fabric_workload("uniform", 10, 4, seed=3, kinds=MIXES["reads"], size=512)
    assert all(op.op.kind == "read" and op.op.length == 256 for op in reads)
    report = run_fabric(FabricConfig(accelerators=4), work)
    assert report.ok and report.ops_completed == 40
