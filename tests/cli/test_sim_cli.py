"""`ualink-ref simulate`: text and JSON output, exit status."""

from __future__ import annotations

import json

import pytest

from ualink_ref.cli import main


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


def test_simulate_stuck_link_is_a_clear_error(capsys: pytest.CaptureFixture[str]) -> None:
    # BER 1e-2 corrupts nearly every KP4 codeword beyond t = 15: no op can complete.
    assert main(["simulate", "--ops", "3", "--ber", "1e-2", "--no-progress"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("ualink-ref simulate: error: stalled after")
    assert "(0/3 ops completed)" in err
    assert "seed 0" in err


def test_stalled_simulation_raises_the_project_error() -> None:
    from ualink_ref import LinkStalledError, UALinkError
    from ualink_ref.stack.sim import random_workload, simulate

    with pytest.raises(LinkStalledError) as exc:
        simulate(random_workload(3, 0), ber=1e-2, seed=0)
    assert isinstance(exc.value, UALinkError)


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
