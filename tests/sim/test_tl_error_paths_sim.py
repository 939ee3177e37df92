"""Issue 13 (TL parts) end to end: split responses, poison and completion timeouts through
Endpoint, Simulation, the fault plan, ``simulate`` / ``capture`` and the scenario captures.

The sequential check of :class:`Simulation` knows poison and timeouts
(:mod:`ualink_ref.sim.model`); every expected count below is derived from
the run's inputs (which tag is stopped, which byte poisoned, the timeout against
the round trip), not from the model's counters.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ualink_ref.capture.dissect import dissect_records
from ualink_ref.capture.format import decode_capture
from ualink_ref.capture.run import SCENARIOS, run_scenario
from ualink_ref.cli import main
from ualink_ref.errors import FaultPlanError
from ualink_ref.net.harness import Network
from ualink_ref.node.config import EndpointConfig
from ualink_ref.node.endpoint import Endpoint
from ualink_ref.sim.config import SimConfig
from ualink_ref.sim.faults import FaultPlan
from ualink_ref.sim.link_run import Simulation, simulate
from ualink_ref.sim.workloads import Op, random_workload
from ualink_ref.tl import Status
from ualink_ref.tl.config import TLConfig
from ualink_ref.tl.events import Completion

VECTORS = Path(__file__).resolve().parents[2] / "vectors"


def test_endpoint_times_out_a_stopped_tag_once_and_the_others_complete() -> None:
    a = Endpoint(1, config=EndpointConfig(tl=TLConfig(timeout_slots=60)))
    b = Endpoint(2, config=EndpointConfig(tl=TLConfig(stop_tags=frozenset({2}))))
    net = Network(batch=4)
    net.add_port("a", a)
    net.add_port("b", b)
    net.connect("a", "b", latency=3)
    handles = [a.read(2, 0x1000 + 64 * i, 64) for i in range(4)]
    done: list[Completion] = []
    for _ in range(60):
        done += [e for _, e in net.step() if type(e) is Completion]
        done += [e for e in a.drain_events() if type(e) is Completion]
    assert sorted(c.handle for c in done) == handles  # each exactly once
    by = {c.handle: c for c in done}
    assert by[2].status == Status.TIMEOUT and by[2].data is None and "60 slots" in str(by[2].error)
    assert all(by[h].status == Status.OKAY for h in (0, 1, 3))
    assert a.tl.quarantined == 1 and b.tl.counters.requests_dropped == 1


def test_simulation_with_every_tl_error_path_matches_the_model() -> None:
    # The third request of either side uses wire tag 2 (fresh originators hand out tags
    # in order), which both targets drop: exactly two timeouts. Byte 0x100040 is
    # poisoned in both memories until a write covers it; each side reads it first.
    plan = FaultPlan.parse("stop-tag 2; poison 0x100040")
    first = [Op("a", "read", 0x100000, length=256), Op("b", "read", 0x100040, length=64)]
    report = simulate(first + list(random_workload(1500, 8, span=512)),
                      SimConfig(seed=8,
                                tl=TLConfig(split="random", timeout_slots=400)), fault_plan=plan)
    assert report.ops_completed == report.ops and report.data_mismatches == 0
    assert report.timeouts == 2 and report.late_responses == 0
    assert report.split_responses > 100 and report.poisoned_completions >= 2
    kinds = dict(report.failures)
    assert kinds["TIMEOUT (no response in time)"] == 2
    assert kinds.get("DATA_ERROR (poisoned data)") == report.poisoned_completions
    assert report.ops_okay + sum(kinds.values()) == report.ops
    text = report.format()
    assert "timeouts: 2" in text and "ops not OKAY:" in text and "tag 2" in text


def test_late_answers_are_discarded_and_the_model_still_holds() -> None:
    # A timeout shorter than the round trip (latency 20 each way): every op times out,
    # its answer arrives late, is discarded, and what it did to memory is still checked.
    sim = Simulation(random_workload(200, 3),
                     SimConfig(latency=20, seed=3, tl=TLConfig(timeout_slots=10)))
    report = sim.run()
    assert report.timeouts == report.ops == 200 and report.ops_okay == 0
    assert report.late_responses >= 200 and report.data_mismatches == 0
    assert sim.a.tl.quarantined == sim.b.tl.quarantined == 0


def test_stop_tag_without_a_timeout_is_refused() -> None:
    with pytest.raises(FaultPlanError, match="completion timeout"):
        Simulation([Op("a", "read", 0, length=4)], fault_plan=FaultPlan.parse("stop-tag 0"))


def test_poisoned_write_then_read_through_the_full_stack() -> None:
    sim = Simulation([])
    a, b = sim.a, sim.b
    h1 = a.write(2, 0x2000, bytes(range(128)), poison=0b10)
    h2 = a.read(2, 0x2000, 128)
    h3 = a.atomic(2, 0x2040, "ADD", 1)  # the poisoned beat: refused (rule P5)
    h4 = a.atomic(2, 0x2000, "ADD", 1, poison=True)  # a poisoned operand: refused
    done: dict[int, Completion] = {}
    for _ in range(20):
        for _name, e in sim.network.step():
            if type(e) is Completion:
                assert e.handle not in done
                done[e.handle] = e
    assert done[h1].status == Status.OKAY
    assert (done[h2].status, done[h2].poisoned) == (Status.DATA_ERROR, 0b10)
    assert done[h2].data == bytes(range(64)) + bytes(64)
    assert (done[h3].status, done[h3].poisoned) == (Status.DATA_ERROR, 1)
    assert (done[h4].status, done[h4].poisoned) == (Status.DATA_ERROR, 1)
    assert b.memory.peek(0x2000, 128) == bytes(range(128))  # the atomics changed nothing
    assert b.memory.poison_map(0x2000, 128) == ((1 << 64) - 1) << 64


def test_cli_simulate_split_timeout_and_tl_faults(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["simulate", "--ops", "300", "--split", "always", "--timeout", "300",
                 "--faults", "stop-tag 1", "--seed", "2", "--json", "--no-progress"])
    out = json.loads(capsys.readouterr().out)
    assert code == 1  # an op failed (timed out), and the report says so
    assert out["timeouts"] == 2 and out["data_mismatches"] == 0 and out["split"] == "always"
    assert out["split_responses"] > 0 and out["timeout_slots"] == 300
    assert dict(map(tuple, out["failures"])) == {"TIMEOUT (no response in time)": 2}
    code = main(["simulate", "--ops", "10", "--faults", "stop-tag 1", "--no-progress"])
    assert code == 2 and "completion timeout" in capsys.readouterr().err


def test_cli_capture_with_split_and_timeout(tmp_path: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "run.pcap"
    assert main(["capture", "--out", str(out), "--ops", "30", "--split", "random",
                 "--timeout", "500", "--no-progress"]) == 0
    assert out.stat().st_size > 0
    assert main(["capture", "--out", str(out), "--scenario", "split", "--split",
                 "always"]) != 0  # a scenario sets its own link
    capsys.readouterr()


def _pieces(name: str) -> list[dict[str, int]]:
    records = decode_capture((VECTORS / SCENARIOS[name].artifact).read_bytes())
    out = []
    for flit in dissect_records(records):
        for op in flit.ops:
            if op.kind == "response":
                out.append(dict(op.values))
    return out


def test_committed_split_capture_holds_out_of_order_pieces() -> None:
    pieces = _pieces("split")
    by_tag: dict[int, list[dict[str, int]]] = {}
    for p in pieces:
        by_tag.setdefault(p["tag"], []).append(p)
    reads = {tag: ps for tag, ps in by_tag.items() if len(ps) > 1 or ps[0]["len"] > 0}
    assert any(ps[0]["offset"] != 0 for ps in reads.values())  # out of beat order
    for ps in reads.values():  # every beat once, last only on the piece sent last
        beats = sorted(b for p in ps for b in range(p["offset"], p["offset"] + p["len"] + 1))
        assert beats == list(range(len(beats)))
        assert [p["last"] for p in ps] == [0] * (len(ps) - 1) + [1]
    result = run_scenario("split")
    assert all(c.status == Status.OKAY for c in result.completions["a"])


def test_committed_poison_and_timeout_captures() -> None:
    poison = _pieces("poison")
    assert any(p.get("status") == 3 and not p["last"] for p in poison)  # a DATA_ERROR piece
    result = run_scenario("poison")
    assert [c.poisoned for c in result.completions["a"]] == [0, 0b10, 1, 1, 0b10, 0, 0]
    timeout = run_scenario("timeout")
    [late] = [c for c in timeout.completions["a"] if c.status == Status.TIMEOUT]
    assert late.handle == 1  # wire tag 1 = A's second request
    assert len(_pieces("timeout")) == 3 + 0  # three answers, none for tag 1
    assert "tag 1" in str(late.error) and "40 slots" in str(late.error)
