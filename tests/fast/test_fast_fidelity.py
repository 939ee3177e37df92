"""The fast fidelity (specs/fast.md): against the exact pod, against itself in its large-pod
modes, and its rules on their own."""

from __future__ import annotations

import dataclasses
import math
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ualink_ref.collectives.algorithms import ALGORITHMS, TimingOnly, build, schedule
from ualink_ref.collectives.report import make_report
from ualink_ref.collectives.run import run_collective
from ualink_ref.errors import ConfigError
from ualink_ref.fast import validate as V
from ualink_ref.fast.calibrate import LinkCalibration, calibrate
from ualink_ref.fast.collective import (
    SYMMETRIC,
    FastCollective,
    FastConfig,
    Transfer,
    large_config,
    run_fast_collective,
)
from ualink_ref.fast.engine import Engine, Operation
from ualink_ref.fast.fabric import run_fast_fabric
from ualink_ref.sim.fabric import FabricConfig, LinkDown
from ualink_ref.sim.fabric_report import static_slots
from ualink_ref.sim.workloads import Op, fabric_workload
from ualink_ref.tl.upli import request_pieces

POD = FabricConfig(accelerators=8, max_outstanding=256)


@pytest.mark.parametrize("case", V.QUICK, ids=lambda c: c.name)
def test_quick_cases_agree_with_the_exact_pod(case: V.Case) -> None:
    """Rule V4 on the test subset: both fidelities run, the errors are within the bound."""
    result = V.run_case(case)
    assert not result.untrusted, result.untrusted
    assert result.within
    assert abs(result.time_error) <= V.BOUND, result
    assert result.busbw_error is None or abs(result.busbw_error) <= V.BOUND, result
    # p99 is reported, not bounded (V4): on these cases it is within two slots
    if result.p99_error is not None:
        assert result.fast_p99_ns is not None and result.exact_p99_ns is not None
        assert abs(result.fast_p99_ns - result.exact_p99_ns) <= 2 * case.pod.slot_ns


def _scaled(cal: LinkCalibration, factor: float) -> LinkCalibration:
    shapes = {key: dataclasses.replace(s, request_up=s.request_up * factor,
                                       request_down=s.request_down * factor)
              for key, s in cal.shapes.items()}
    return dataclasses.replace(cal, shapes=shapes)


def test_the_agreement_check_fails_on_a_wrong_link_cost() -> None:
    """The comparison can fail: a calibration 30 % too dear on the data's direction puts a
    bandwidth-bound collective well outside the bound."""
    exact = make_report(run_collective(build("all-reduce", "one-shot", 4, 65536), POD_4))
    plan = schedule("all-reduce", "one-shot", 4, 65536)
    right = run_fast_collective(plan, POD_4)
    wrong = run_fast_collective(plan, POD_4, calibration=_scaled(calibrate(POD_4), 1.3))
    assert abs(right.time_us / exact.time_us - 1) <= V.BOUND
    assert wrong.time_us / exact.time_us - 1 > 2 * V.BOUND


POD_4 = FabricConfig(accelerators=4, max_outstanding=256)


def test_schedule_programs_are_the_exact_runs_programs() -> None:
    """The fast fidelity times the very programs the exact pod runs."""
    for op, algos in ALGORITHMS.items():
        for algo in algos:
            size = 16384 if op != "moe" else 32768
            assert schedule(op, algo, 4, size).programs == build(op, algo, 4, size).programs
            one = schedule(op, algo, 4, size, timing=TimingOnly((0,)))
            assert one.programs[0] == build(op, algo, 4, size).programs[0]
            assert not any(one.programs[1:])


@pytest.mark.parametrize(("op", "algo"), sorted(SYMMETRIC))
def test_one_rank_of_a_symmetric_algorithm_times_the_whole_pod(op: str, algo: str) -> None:
    """Rule P5: folded onto rank 0, a symmetric algorithm takes the time the full run does
    (in-network within 3 %: the copies of one group operation, served side by side on the
    members' queues, fold onto one)."""
    pod = FabricConfig(accelerators=8, planes=2, max_outstanding=64)
    size = 8 * 8192
    full = run_fast_collective(schedule(op, algo, 8, size), pod)
    folded = run_fast_collective(schedule(op, algo, 8, size, timing=TimingOnly((0,))), pod,
                                 FastConfig(symmetric=True))
    tolerance = 0.03 if algo == "in-network" else 1e-9
    assert abs(folded.time_us / full.time_us - 1) <= tolerance


@pytest.mark.parametrize(("op", "algo", "planes"), [
    ("all-reduce", "ring", 4), ("all-to-all", "direct", 4), ("all-reduce", "one-shot", 1),
    ("all-reduce", "in-network", 2), ("broadcast", "ring", 1), ("moe", "direct", 2),
    ("all-gather", "ring", 4), ("reduce-scatter", "ring", 4)])
def test_bursts_time_like_piece_by_piece(op: str, algo: str, planes: int) -> None:
    """Rules E8-E10, P6: a large run's bursts (``large_config``) stay within 5 % of the
    piece-by-piece run, and say nothing against themselves (V3e)."""
    pod = FabricConfig(accelerators=8, planes=planes, max_outstanding=256)
    plan = schedule(op, algo, 8, 1 << 18)
    plain = run_fast_collective(plan, pod)
    burst = run_fast_collective(plan, pod, large_config(op, algo, symmetric=False))
    assert abs(burst.time_us / plain.time_us - 1) <= 0.05
    assert not burst.untrusted


def test_the_reduce_scatter_ring_in_bursts_keeps_within_the_limit() -> None:
    """Rule P6: the reduce-scatter ring whose whole batches ran 12 % fast (16 ranks x
    4 MiB, 4 planes of x4, bursts of 8: a rank issued each sub-chunk whole after its
    reduction) is within 5 % of the piece-by-piece run within the limit, its large run."""
    pod = FabricConfig(accelerators=16, planes=4, lanes=4, max_outstanding=256)
    plan = schedule("reduce-scatter", "ring", 16, 1 << 22, timing=TimingOnly((0,)))
    plain = run_fast_collective(plan, pod, FastConfig(symmetric=True))
    config = large_config("reduce-scatter", "ring", symmetric=True)
    assert config.within_limit and config.burst == 8
    within = run_fast_collective(plan, pod, config)
    whole = run_fast_collective(plan, pod, dataclasses.replace(config, within_limit=False))
    assert abs(within.time_us / plain.time_us - 1) <= 0.05
    # the case still shows what WITHIN_LIMIT mends (if whole batches ever run as close,
    # the choice is to be measured again: specs/fast.md, P6)
    assert whole.time_us / plain.time_us - 1 < -0.05


def test_bursts_other_than_the_validated_large_run_say_so() -> None:
    """Rule V3e: bursts other than the algorithm's large run (here whole batches of 16 on
    the reduce-scatter ring, which ran 7 % off) warn; the large run and piece by piece
    not."""
    pod = FabricConfig(accelerators=8, planes=2, max_outstanding=128)
    plan = schedule("reduce-scatter", "ring", 8, 1 << 16)
    assert not run_fast_collective(plan, pod).untrusted
    large = large_config("reduce-scatter", "ring", symmetric=False)
    assert not run_fast_collective(plan, pod, large).untrusted
    (reason,) = run_fast_collective(plan, pod, FastConfig(burst=16)).untrusted
    assert "not the validated large run" in reason and "reduce-scatter" in reason
    (reason,) = run_fast_collective(
        plan, pod, dataclasses.replace(large, admit_share=0.5)).untrusted
    assert "admit share 0.5 is not" in reason
    (reason,) = run_fast_collective(
        plan, pod, dataclasses.replace(large, within_limit=False)).untrusted
    assert "in whole batches at admit share 0.25 is not" in reason
    ring = schedule("all-reduce", "ring", 8, 1 << 16)
    (reason,) = run_fast_collective(ring, pod, FastConfig(burst=16, within_limit=True)).untrusted
    assert "within the in-flight limit at admit share 0.25 is not" in reason


def test_batches_larger_than_the_burst_table_measured_say_so() -> None:
    """Rule V3e: the validated large run on a pod whose batch (a burst on every plane) is
    more than a quarter of the in-flight limit warns (a limit of 16 at 4 planes ran 47-59 %
    fast); at a quarter (the burst table's 4 planes, bursts of 16, limit 256) not."""
    plan = schedule("all-reduce", "ring", 8, 1 << 16)
    large = large_config("all-reduce", "ring", symmetric=False)
    measured = FabricConfig(accelerators=8, planes=4, max_outstanding=256)
    assert not run_fast_collective(plan, measured, large).untrusted
    small = dataclasses.replace(measured, max_outstanding=16)
    (reason,) = run_fast_collective(plan, small, large).untrusted
    assert "a batch of 64 pieces" in reason and "max_outstanding 16" in reason
    wide = dataclasses.replace(measured, planes=16)
    (reason,) = run_fast_collective(plan, wide, large).untrusted
    assert "a batch of 256 pieces" in reason


@pytest.mark.parametrize("within_limit", [False, True])
def test_bursts_stay_large_under_the_in_flight_limit(within_limit: bool) -> None:
    """Rule P6: a data step held by the in-flight limit still goes in large bursts, and a
    burst goes once a quarter of it has room. Whole (the default): data bursts of 16
    average at least 12 pieces (issuing only what has room, with no share, they averaged
    1.3), and the count in flight rises past the limit (64) by up to three quarters of a
    burst, never more. Within the limit: at least a quarter of 16 on average, and the
    count never passes the limit."""
    pod = FabricConfig(accelerators=4, planes=1, max_outstanding=64)
    run = FastCollective(schedule("all-gather", "ring", 4, 1 << 18), pod,
                         FastConfig(burst=16, within_limit=within_limit))
    bursts: list[int] = []
    in_flight = [0, 0]  # now, peak (every rank's, summed: rank 0's alone is not public)
    issue = run.engine.issue

    def watched(*args: Any, **kwargs: Any) -> Operation:
        op = issue(*args, **kwargs)
        if op.kind == "write":
            bursts.append(op.pieces)
        in_flight[0] += op.pieces
        in_flight[1] = max(in_flight[1], in_flight[0])
        done, progress = op.done, op.progress

        def done_freeing(o: Operation, t: float) -> None:
            in_flight[0] -= 1
            done(o, t)

        def progress_freeing(o: Operation, t: float, n: int) -> None:
            in_flight[0] -= n
            assert progress is not None
            progress(o, t, n)

        if progress is None:
            op.done = done_freeing
        else:
            op.progress = progress_freeing
        return op

    run.engine.issue = watched  # type: ignore[method-assign]
    plain = run_fast_collective(schedule("all-gather", "ring", 4, 1 << 18), pod)
    report = run.run()
    if within_limit:
        assert sum(bursts) / len(bursts) >= 4
        assert in_flight[1] == 4 * 64
    else:
        assert sum(bursts) / len(bursts) >= 12
        assert 4 * 64 < in_flight[1] <= 4 * (64 + 12)
    assert abs(report.time_us / plain.time_us - 1) <= 0.05


@pytest.mark.parametrize(("planes", "limit", "burst"), [
    (8, 1, 1), (16, 1, 1), (16, 5, 1), (4, 8, 16), (1, 1, 2)])
def test_a_rank_with_nothing_in_flight_always_sends(planes: int, limit: int,
                                                    burst: int) -> None:
    """Rules C1, P6: piece by piece a rank sends whenever one place is free, on any number
    of planes; in bursts it needs at most the whole limit, so a limit below a quarter of a
    burst still runs to the end (and piece by piece takes no longer than one place at a
    time would: the limit of one is the slowest)."""
    pod = FabricConfig(accelerators=4, planes=planes, max_outstanding=limit)
    plan = schedule("all-reduce", "ring", 4, 1 << 16)
    report = run_fast_collective(plan, pod, FastConfig(burst=burst))
    one_at_a_time = run_fast_collective(
        plan, dataclasses.replace(pod, max_outstanding=1))
    assert report.time_us <= one_at_a_time.time_us


def test_a_symmetric_run_refuses_an_asymmetric_algorithm() -> None:
    with pytest.raises(ConfigError, match="symmetric"):
        run_fast_collective(schedule("broadcast", "ring", 4, 4096, timing=TimingOnly((0,))),
                            POD_4, FastConfig(symmetric=True))


@given(addr=st.integers(0, 1 << 16), nbytes=st.integers(1, 5000),
       planes=st.sampled_from([1, 2, 3, 4, 8]), count=st.integers(1, 40))
def test_transfer_takes_the_pieces_request_pieces_makes(addr: int, nbytes: int, planes: int,
                                                        count: int) -> None:
    """A counted :class:`Transfer` gives, per plane, the pieces the exact runner issues."""
    pieces = list(request_pieces(addr, nbytes))
    transfer = Transfer(addr, addr + nbytes)
    assert transfer.left == len(pieces)
    groups: dict[int, list[tuple[int, int]]] = {}
    for a, n in pieces[:count]:
        groups.setdefault((a >> 8) % planes, []).append((a, n))
    got = transfer.take(count, planes)
    assert [(a, k) for a, k, _ in got] == [(g[0][0], len(g)) for g in groups.values()]
    assert transfer.addr == (pieces[count][0] if count < len(pieces) else addr + nbytes)


@pytest.mark.parametrize("kind", ["write", "read", "atomic"])
def test_engine_zero_load_latency_is_the_exact_pods(kind: str) -> None:
    """Rule E3: one operation alone takes the exact pod's zero-load latency (rule R2)."""
    cal = calibrate(POD)
    op = {"write": Op("a", "write", 0x1000, data=bytes(256)),
          "read": Op("a", "read", 0x1000, length=256),
          "atomic": Op("a", "atomic", 0x1000, atomic_op=1, operand=1, size=8,
                       fetch=False)}[kind]
    engine = Engine(2, 1, cal)
    ends: list[float] = []
    engine.issue(0, 1, 0, kind, op.nbytes, 0x1000, lambda o, t: ends.append(t))
    engine.run()
    assert ends == [pytest.approx(static_slots(POD, op))]


def test_offered_loads_near_saturation_are_flagged() -> None:
    """Rule V3b: an incast at 0.9 of the target's link is not trusted (the exact pod's
    queues decide its latency there); at 0.5 it is."""
    pod = FabricConfig(accelerators=8, seed=1)
    busy = run_fast_fabric(pod, fabric_workload("incast", 600, 8, seed=1, load=0.9))
    calm = run_fast_fabric(pod, fabric_workload("incast", 600, 8, seed=1, load=0.5,
                                                size=256, kinds=("read", "writefull")))
    assert any("busy" in why for why in busy.untrusted)
    assert not calm.untrusted


def test_what_the_engine_does_not_model_is_said_or_refused() -> None:
    """Rules V3c, V3d and E6: bit errors and pods past the table are flagged; link faults
    are refused."""
    plan = schedule("all-reduce", "ring", 4, 4096)
    noisy = run_fast_collective(plan, dataclasses.replace(POD_4, ber=1e-6))
    assert any("bit errors" in why for why in noisy.untrusted)
    big = run_fast_collective(schedule("all-reduce", "ring", 128, 1 << 14,
                                       timing=TimingOnly((0,))),
                              FabricConfig(accelerators=128), FastConfig(symmetric=True))
    assert any("extrapolated" in why for why in big.untrusted)
    with pytest.raises(ConfigError, match="links_down"):
        run_fast_collective(plan, dataclasses.replace(POD_4, links_down=(LinkDown(0, 1, 5),)))


def test_one_calibration_serves_every_pod_with_the_same_links() -> None:
    """Rule Q1: the figures depend on the links only, so pods of other sizes, planes,
    seeds or in-flight limits share one calibration; other links get their own."""
    small = FabricConfig(accelerators=8, planes=2, max_outstanding=64)
    large = FabricConfig(accelerators=512, planes=4, max_outstanding=256, seed=3)
    assert calibrate(small) is calibrate(large)
    assert calibrate(small) is not calibrate(dataclasses.replace(small, lanes=4))


def test_fast_fabric_counts_the_data_the_exact_switch_delivers() -> None:
    """Rule R3's count: the fast report's throughput, rescaled to the exact run's length,
    is the exact report's (reads, partial and full writes, atomics of mixed sizes)."""
    from ualink_ref.sim.fabric_report import run_fabric

    pod = FabricConfig(accelerators=4)
    workload = tuple(fabric_workload("uniform", 120, 4, seed=5))
    assert {f.op.kind for f in workload} == {"read", "write", "atomic"}
    assert {f.op.fetch for f in workload if f.op.kind == "atomic"} == {True, False}
    assert any(f.op.byte_enable is not None for f in workload)
    assert any(f.op.kind == "write" and f.op.byte_enable is None for f in workload)
    exact = run_fabric(pod, workload)
    fast = run_fast_fabric(pod, workload)
    rescaled = fast.throughput_total_gbps * max(fast.slots, 1.0) / exact.slots
    assert math.isclose(rescaled, exact.throughput_total_gbps, rel_tol=1e-9)


@pytest.mark.parametrize(("field", "value"), [
    ("burst", 0), ("burst", True), ("burst", 1.5), ("symmetric", "yes"),
    ("admit_share", 0), ("admit_share", 1.5), ("admit_share", True),
    ("within_limit", 1), ("reduce_bytes_per_ns", 0), ("reduce_bytes_per_ns", math.inf)])
def test_a_fast_config_refuses_a_bad_field(field: str, value: object) -> None:
    """:class:`FastConfig` names the field it refuses (a configuration error, not a
    ``TypeError`` or a wrong run)."""
    with pytest.raises(ConfigError, match=field):
        FastConfig(**{field: value})  # type: ignore[arg-type]
