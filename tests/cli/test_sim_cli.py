"""`ualink-ref simulate`: text and JSON output, exit status."""

from __future__ import annotations

import json

import pytest

from ualink_ref.cli import main
from ualink_ref.sim.config import SimConfig


def test_simulate_json(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["simulate", "--ops", "300", "--fec", "ll", "--ber", "1e-4", "--seed", "4",
                 "--burst", "120:1e-5", "--json", "--no-progress"])
    out = json.loads(capsys.readouterr().out)
    assert code == 0
    assert out["ops"] == out["ops_completed"] == out["ops_okay"] == 300
    assert out["data_mismatches"] == 0 and out["fec"] == "ll" and out["seed"] == 4
    assert out["wire_bytes_ab"] == 680 * out["flits_ab"]
    assert out["bit_errors_injected"] > 0


def test_simulate_text(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["simulate", "--ops", "100", "--fec", "none", "--no-progress"]) == 0
    text = capsys.readouterr().out
    assert text.startswith("ops: 100/100 completed, 100 OKAY, 0 data mismatch(es)")
    assert "latency (flit slots)" in text


def test_simulate_bad_burst() -> None:
    with pytest.raises(SystemExit):
        main(["simulate", "--burst", "nonsense"])


def test_simulate_stuck_link_fails_every_op_in_bounded_slots(
        capsys: pytest.CaptureFixture[str]) -> None:
    # BER 1e-2 corrupts nearly every KP4 codeword beyond t = 15: no op can complete OKAY.
    # Issue 13: the link retrains, gives up (fault), every op completes with an error
    # status in bounded slots, and the report says why; the exit status is 1.
    assert main(["simulate", "--ops", "3", "--ber", "1e-2", "--no-progress", "--json"]) == 1
    report = json.loads(capsys.readouterr().out)
    assert report["ops_completed"] == 3 and report["ops_okay"] == 0
    assert report["ops_failed_by_fault"] == 3
    assert "without progress" in report["link_fault"]
    # specs/dl.md L5: before the first retrain at most max_replays (4) replay timeouts
    # (128), then max_retrains (3) trainings (128) each, plus a round trip of slack.
    assert report["slots"] <= 4 * 128 + 3 * 128 + 4 * 128 + 64
    assert main(["simulate", "--ops", "3", "--ber", "1e-2", "--no-progress"]) == 1
    text = capsys.readouterr().out
    assert "LINK FAULT" in text and "3 op(s) completed with an error status" in text


def test_dead_link_simulation_completes_every_op_with_the_fault_status() -> None:
    from ualink_ref.sim.link_run import Simulation
    from ualink_ref.sim.workloads import random_workload
    from ualink_ref.tl import Status

    sim = Simulation(random_workload(3, 0), SimConfig(ber=1e-2, seed=0))
    report = sim.run()
    assert report.ops_completed == 3 and report.link_fault is not None
    assert [r.status for r in sim.results if r is not None] == [Status.DATA_ERROR] * 3
    assert all(r.data is None for r in sim.results if r is not None)


def test_text_progress_bar_without_tqdm() -> None:
    import io

    from ualink_ref.cli.simulate import TextProgress

    stream = io.StringIO()
    bar = TextProgress(200, stream, width=10)
    for _ in range(200):
        bar.update(1)
    bar.close()
    frames = stream.getvalue().split("\r")
    assert "[#####.....] 100/200 ops (50%)" in frames
    assert "[##########] 200/200 ops (100%)" in frames
    assert len([f for f in frames if "ops (" in f]) == 101  # one redraw per percent
