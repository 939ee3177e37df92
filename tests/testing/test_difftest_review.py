"""Review findings on difftest's targets and CLI (issue 27): each test failed before its fix."""

from __future__ import annotations

import sys
import time
from dataclasses import replace
from pathlib import Path

import pytest

from ualink_ref.cli import main
from ualink_ref.errors import TargetCrashed, TargetProtocolError
from ualink_ref.testing.difftest import CODECS, SubprocessTarget
from ualink_ref.testing.difftest.api import model_outcome

ECHO_TWICE_THEN_EXIT = ("import sys\nfor n, line in enumerate(sys.stdin):\n"
                        "    if n == 2:\n        sys.exit(5)\n    print('ERR', flush=True)\n")


def late_second_line(marker: Path) -> str:
    """A target answering its first request twice, the second line a moment after the first
    (so it arrives after the first was read); it creates ``marker`` once that line is written."""
    return ("import sys, time\nsys.stdin.readline(); print('ERR', flush=True)\n"
            "time.sleep(0.2); print('ERR', flush=True)\n"
            f"open({str(marker)!r}, 'w').close()\n"
            "for line in sys.stdin:\n    print('ERR', flush=True)\n")


def script(code: str) -> list[str]:
    return [sys.executable, "-c", code]


def test_a_discarded_process_has_answered_nothing() -> None:
    with SubprocessTarget(script(ECHO_TWICE_THEN_EXIT), timeout=10) as target:
        assert [target.exchange("00") for _ in range(2)] == ["ERR", "ERR"]
        assert target.answered == 2
        with pytest.raises(TargetCrashed, match="after answering 2 line"):
            target.exchange("00")
        # No process runs now; the next input goes to a fresh one, which has answered nothing.
        assert target.answered == 0
        target.restart()
        assert target.answered == 0


# -- the CLI ------------------------------------------------------------------------------------

MODEL = f"{sys.executable} -m ualink_ref.testing.difftest.reference_target --layer dl-message"


def status(argv: list[str]) -> int:
    """The exit status of ``ualink-ref ARGV`` (a usage error leaves the parser by SystemExit)."""
    try:
        return main(argv)
    except SystemExit as stop:
        return int(stop.code or 0)


def test_a_bad_out_is_a_usage_error_before_the_target_starts(tmp_path, capsys) -> None:
    started = tmp_path / "started"
    target = f"{sys.executable} -c \"open({str(started)!r}, 'w')\""
    not_a_dir = tmp_path / "a-file"
    not_a_dir.write_text("")
    for out in (not_a_dir, not_a_dir / "below"):
        assert status(["difftest", "--layer", "dl-message", "--target", target,
                       "--max-cases", "5", "--out", str(out)]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "--out" in err and str(out) in err, err
        assert not started.exists()  # refused before the target was started
    fresh = tmp_path / "new" / "dir"
    assert status(["difftest", "--layer", "dl-message", "--target", MODEL, "--max-cases", "5",
                   "--out", str(fresh)]) == 0
    assert fresh.is_dir()


@pytest.mark.parametrize(("argv", "missing"), [
    (["--target", "true"], "--layer"), (["--layer", "dl"], "--target"), ([], "--layer"),
])
def test_a_missing_option_is_one_line_naming_it(argv, missing, capsys) -> None:
    assert status(["difftest", *argv]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1, (out, err)
    assert f"{missing} is required" in err and "--list" in err, err


def test_replay_parses_the_file_before_starting_the_target(tmp_path, capsys) -> None:
    started = tmp_path / "started"
    target = f"{sys.executable} -c \"open({str(started)!r}, 'w')\""
    assert status(["difftest", "replay", str(tmp_path), "--target", target]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "not a file" in err and "no such file" not in err, err
    assert err.startswith("ualink-ref difftest replay: error:"), err
    assert status(["difftest", "replay", str(tmp_path / "none.json"), "--target", target]) == 2
    assert "no such file" in capsys.readouterr().err
    junk = tmp_path / "junk.json"
    junk.write_text("[1, 2]")
    assert status(["difftest", "replay", str(junk), "--target", target]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "not a difftest reproducer" in err, err
    assert err.startswith("ualink-ref difftest replay: error:"), err
    assert not started.exists()  # no bad file started the target


def test_a_late_second_answer_line_is_a_protocol_error(tmp_path) -> None:
    marker = tmp_path / "written"
    with SubprocessTarget(script(late_second_line(marker)), timeout=10) as target:
        assert target.exchange("00") == "ERR"
        while not marker.exists():  # the extra line is in the pipe once the marker exists
            time.sleep(0.01)
        with pytest.raises(TargetProtocolError, match="more than one line for one request"):
            target.exchange("00")  # before: the extra line was taken as this request's answer


def test_only_the_model_s_own_errors_are_verdicts() -> None:
    codec = CODECS["dl-message"]
    assert model_outcome(codec, b"\x00").error == "FieldRangeError"  # a UALinkError: a verdict

    def buggy(data: object) -> object:
        raise ZeroDivisionError("a bug in the model")

    broken = replace(codec, reference=buggy)
    with pytest.raises(ZeroDivisionError):  # before: Outcome("ZeroDivisionError"), a verdict
        model_outcome(broken, b"\x00")


def test_an_observed_process_target_stays_restartable() -> None:
    from ualink_ref.testing.coverage import Coverage, coverage_model
    from ualink_ref.testing.coverage.difftest_hook import observed
    from ualink_ref.testing.difftest import difftest
    from ualink_ref.testing.difftest.api import RestartableTarget

    faulty = Path(__file__).with_name("faulty_target.py")
    cov = Coverage(coverage_model())
    with SubprocessTarget([sys.executable, str(faulty), "dl", "segfault-short", "640"],
                          timeout=60) as target:
        wrapped = observed(target, cov, CODECS["dl"])
        assert isinstance(wrapped, RestartableTarget)
        result = difftest("dl", wrapped, seed=3, max_cases=300, max_restarts=2)
        # before: the wrapper hid the process, so the budget went unenforced and 0 was reported
        assert result.restarts == target.restarts and 0 < target.restarts <= 2 + 2, (
            target.restarts, result.summary())
        assert wrapped.answered == target.answered
    assert result.failure is not None and result.failure.kind == "TargetCrashed"
    assert "after 2 target restarts" in result.failure.note  # the budget was enforced
    assert cov.samples > 0
