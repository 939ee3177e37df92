"""difftest against targets that crash, hang, exit, close a pipe or write garbage (issue 27,
item 2): each is a reported finding with its input, a reproducer and its documented exit
status (specs/difftest.md, "Target faults" and "Exit status"), never an internal error.

The targets are real subprocesses: ``faulty_target.py`` (the model, misbehaving on purpose)
and small ``python -c`` scripts.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("hypothesis")

from ualink_ref.cli import main
from ualink_ref.errors import (
    ConfigError,
    ProtocolError,
    TargetCrashed,
    TargetProtocolError,
    TargetTimeout,
    UALinkError,
)
from ualink_ref.testing import vectors
from ualink_ref.testing.difftest import CODECS, SubprocessTarget, difftest, replay_results

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals and pipes")

FAULTY = Path(__file__).with_name("faulty_target.py")
GUARD = 600  # seconds: a run still going after this is itself a hang (the bug under test)
FORBIDDEN = ("internal error", "Traceback", "Flaky", "Inconsistent results")


def faulty(codec: str, mode: str, arg: str) -> str:
    return f"{sys.executable} {FAULTY} {codec} {mode} {arg}"


def script(code: str) -> list[str]:
    return [sys.executable, "-c", code]


# -- the error classes ------------------------------------------------------------------


def test_fault_classes_sit_in_the_one_tree() -> None:
    for cls in (TargetCrashed, TargetTimeout):
        assert issubclass(cls, TargetProtocolError)
    assert issubclass(TargetProtocolError, ProtocolError) and issubclass(ProtocolError, UALinkError)
    crashed = TargetCrashed("t", -signal.SIGSEGV, 3)
    assert (crashed.status, crashed.signal, crashed.answered) == (None, signal.SIGSEGV, 3)
    assert "signal 11 (SIGSEGV)" in str(crashed) and "after answering 3 line(s)" in str(crashed)
    assert "exited with status 0" in str(TargetCrashed("t", 0, 100))


# -- SubprocessTarget on its own: every way a process can fail to answer ----------------------

ECHO = "import sys\nfor line in sys.stdin:\n    print('ERR', flush=True)\n"


@pytest.mark.parametrize(("code", "error", "words"), [
    ("pass", TargetCrashed, "exited with status 0 after answering 0"),
    ("import sys; sys.stdin.readline(); sys.exit(7)", TargetCrashed, "exited with status 7"),
    ("import os, signal, sys; sys.stdin.readline(); os.kill(os.getpid(), signal.SIGSEGV)",
     TargetCrashed, "killed by signal 11 (SIGSEGV)"),
    ("import os, sys, time; sys.stdin.readline(); os.close(1); time.sleep(60)",
     TargetProtocolError, "closed its output after answering 0 line(s) but kept running"),
    ("import sys, time; sys.stdin.readline(); time.sleep(60)", TargetTimeout,
     "no response from target"),
    ("import sys; sys.stdin.readline(); sys.stdout.buffer.write(b'\\xff\\n'); sys.stdout.flush()"
     "\nimport time; time.sleep(60)", TargetProtocolError, "not ASCII"),
    ("import sys; sys.stdin.readline(); print('ERR\\nERR', flush=True)\nimport time;"
     "time.sleep(60)", TargetProtocolError, "more than one line for one request"),
    ("import sys; sys.stdin.readline(); sys.stdout.write('0' * (2 << 20)); sys.stdout.flush()\n"
     "import time; time.sleep(60)", TargetProtocolError, "longer than"),
])
def test_each_failure_is_its_error_and_the_next_exchange_restarts(code, error, words) -> None:
    with SubprocessTarget(script(code), timeout=3) as target:
        with pytest.raises(error) as info:
            target.exchange("00")
        assert type(info.value) is error and words in str(info.value)
        # The broken process is gone; a new one (the same command) is started for the next line.
        target.argv = script(ECHO)
        assert target.exchange("00") == "ERR" and target.restarts == 1 and target.answered == 1


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="reads process states from /proc")
def test_a_hung_target_and_its_children_are_killed(tmp_path) -> None:
    pid_file = tmp_path / "child.pid"
    code = ("import subprocess, sys, time\n"
            f"child = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(120)'])\n"
            f"open({str(pid_file)!r}, 'w').write(str(child.pid))\n"
            "sys.stdin.readline(); time.sleep(120)\n")
    with SubprocessTarget(script(code), timeout=5) as target, pytest.raises(TargetTimeout):
        target.exchange("00")
    child = int(pid_file.read_text())
    for _ in range(100):  # the SIGKILL to the group is delivered at once; reaping may lag
        try:
            os.kill(child, 0)
        except ProcessLookupError:
            break
        with open(f"/proc/{child}/stat") as stat:  # a zombie awaiting init counts as gone
            if stat.read().split()[2] == "Z":
                break
        time.sleep(0.05)
    else:
        pytest.fail(f"child {child} of the hung target still runs")


def test_first_line_gets_the_startup_timeout() -> None:
    slow_start = "import time; time.sleep(1.5)\n" + ECHO
    with SubprocessTarget(script(slow_start), timeout=0.5, startup_timeout=30) as target:
        assert target.exchange("00") == "ERR"
    with SubprocessTarget(script(slow_start), timeout=0.5) as target, \
            pytest.raises(TargetTimeout):
        target.exchange("00")


def test_bad_commands_are_config_errors() -> None:
    with pytest.raises(ConfigError, match="empty"):
        SubprocessTarget("  ")
    with pytest.raises(ConfigError, match="closing quotation"):
        SubprocessTarget("python 'unbalanced")
    with pytest.raises(ConfigError, match="cannot start"):
        SubprocessTarget("/nonexistent/ualink-target")


# -- the hunt: findings, shrinking across restarts --------------------------------------------


def test_shrinking_restarts_the_target_and_keeps_the_crash() -> None:
    """A target crashing on every DL input shorter than 640 bytes: the shrunk input is the
    empty one, each try on a fresh process; what else it does wrong is not reported."""
    with SubprocessTarget(faulty("dl", "segfault-short", "640"), timeout=60) as target:
        result = difftest("dl", target, seed=3, max_cases=300)
    failure = result.failure
    assert failure is not None and failure.fault is not None, result.summary()
    assert failure.kind == "TargetCrashed" and failure.fault.recurs
    assert failure.request == ""  # shrunk to the smallest input that still crashes it
    assert isinstance(failure.fault.error, TargetCrashed)
    assert failure.fault.error.signal == signal.SIGSEGV
    assert result.restarts >= 2  # restarted after the crash, and to confirm it


def test_a_wrong_answer_shape_from_a_callable_is_a_protocol_fault() -> None:
    def hex_for_json(data: bytes) -> bytes:  # a decoder must answer fields, not bytes
        return data

    result = difftest("dl-message", hex_for_json, seed=1, max_cases=50)
    assert result.failure is not None and result.failure.kind == "TargetProtocolError"
    assert "answers a JSON object of fields, got hex" in result.failure.describe()


def test_an_answer_that_does_not_come_again_is_reported_not_flaky() -> None:
    """A callable that is wrong on its 20th call only: Hypothesis cannot replay it (the case
    that once raised FlakyFailure); the first disagreement is reported, with a note."""
    calls = [0]
    reference = CODECS["dl-message"].reference

    def wrong_once(data: bytes) -> Any:
        calls[0] += 1
        if calls[0] == 20:
            return {"type": "Nonsense"}
        return reference(data)

    result = difftest("dl-message", wrong_once, seed=2, max_cases=200)
    assert result.failure is not None and result.failure.kind == "disagreement"
    assert "did not fail again when replayed" in result.failure.note


# -- the command line: exit status, message, reproducer -----------------------------------


def run_cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parents[2]))
    return subprocess.run([sys.executable, "-m", "ualink_ref.cli", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=GUARD, check=False)


def assert_reported(proc: subprocess.CompletedProcess[str], headline: str, out: Path
                    ) -> dict[str, Any]:
    """Exit status 3, the headline, the input, a reproducer holding the fault and the input."""
    text = proc.stdout + proc.stderr
    assert proc.returncode == 3, text
    assert not any(bad in text for bad in FORBIDDEN), text
    assert f": {headline}" in proc.stdout and "input (" in proc.stdout, text
    [path] = out.glob("difftest-*.json")
    assert f"reproducer: {path}" in proc.stdout
    doc = json.loads(path.read_text())
    info = doc["cases"][0]["difftest"]
    assert info["fault"]["class"] in proc.stdout and info["target"] is None
    assert info["request"][:60] in proc.stdout  # the input printed is the input written
    if doc["format"] == vectors.VECTOR_FORMAT:  # in the vectors layout: verify accepts it
        report = vectors.verify_dir(out)
        assert report.ok, [str(m) for m in report.mismatches]
    return dict(info)


@pytest.mark.slow
def test_cli_target_segfaulting_on_one_percent_of_inputs(tmp_path) -> None:
    out = tmp_path / "out"
    proc = run_cli("difftest", "--layer", "dl", "--target", faulty("dl", "segfault", "0.01"),
                   "--out", str(out), cwd=tmp_path)
    info = assert_reported(proc, "TARGET CRASHED", out)
    fault = info["fault"]
    assert fault["signal"] == signal.SIGSEGV and fault["recurs"] is True
    assert "killed by signal 11 (SIGSEGV)" in proc.stdout
    # The reproducer replays the crash (exit 3) and the model itself agrees with it (exit 0).
    [path] = out.glob("difftest-*.json")
    again = run_cli("difftest", "replay", str(path), "--target",
                    faulty("dl", "segfault", "0.01"), cwd=tmp_path)
    assert again.returncode == 3 and "TargetCrashed" in again.stdout, again.stdout + again.stderr
    model = f"{sys.executable} -m ualink_ref.testing.difftest.reference_target --layer dl"
    assert run_cli("difftest", "replay", str(path), "--target", model,
                   cwd=tmp_path).returncode == 0


@pytest.mark.slow
def test_cli_target_that_hangs_once(tmp_path) -> None:
    out = tmp_path / "out"
    proc = run_cli("difftest", "--layer", "dl", "--target",
                   faulty("dl", "hang-once", str(tmp_path / "hung")), "--timeout", "2",
                   "--startup-timeout", "120", "--out", str(out), cwd=tmp_path)
    info = assert_reported(proc, "TARGET HUNG", out)
    assert info["fault"]["timeout"] == 2 and info["fault"]["answered_before"] == 29
    assert "no response from target" in proc.stdout and "within 2 s" in proc.stdout


@pytest.mark.slow
def test_cli_target_that_exits_after_100_lines(tmp_path) -> None:
    out = tmp_path / "out"
    proc = run_cli("difftest", "--layer", "dl", "--target", faulty("dl", "exit-after", "100"),
                   "--out", str(out), cwd=tmp_path)
    info = assert_reported(proc, "TARGET CRASHED", out)
    fault = info["fault"]
    assert (fault["status"], fault["signal"], fault["answered_before"]) == (0, None, 100)
    assert fault["recurs"] is False and fault["retry"] == "it was answered"
    assert "exited with status 0 after answering 100 line(s)" in proc.stdout
    assert "depends on the inputs before it" in proc.stdout


@pytest.mark.parametrize(("mode", "words"), [
    ("garbage-text", "neither ERR, JSON nor hex: 'Segmentation fault (core dumped)'"),
    ("garbage-binary", "not ASCII: '\\xff\\xfe\\x00garbage'"),
    ("two-lines", "more than one line for one request; the extra: 'ERR\\n'"),
    ("wrong-shape", "codec dl-message answers a JSON object of fields, got hex: '00ff'"),
])
def test_cli_target_writing_garbage(tmp_path, capsys, mode, words) -> None:
    out = tmp_path / "out"
    # A small restart budget keeps this quick (the segfault test runs the default budget).
    code = main(["difftest", "--layer", "dl-message", "--target",
                 faulty("dl-message", mode, "0.05"), "--max-restarts", "4", "--max-cases", "300",
                 "--out", str(out)])
    text = capsys.readouterr()
    assert code == 3, text
    assert "TARGET PROTOCOL ERROR" in text.out and words in text.out, text.out
    assert "shrinking stopped after 4 target restarts" in text.out
    assert not any(bad in text.out + text.err for bad in FORBIDDEN)
    [path] = out.glob("difftest-*.json")
    fault = json.loads(path.read_text())["cases"][0]["difftest"]["fault"]
    assert fault["class"] == "TargetProtocolError" and fault["recurs"] is True
    assert fault["line"]  # the bad line itself is kept


def status(argv: list[str]) -> int:
    """The exit status of ``ualink-ref ARGV`` (a usage error leaves the parser by SystemExit)."""
    try:
        return main(argv)
    except SystemExit as stop:
        return int(stop.code or 0)


def test_cli_exit_status_of_each_outcome(tmp_path, capsys) -> None:
    model = f"{sys.executable} -m ualink_ref.testing.difftest.reference_target --layer dl-message"
    liar = tmp_path / "liar.py"
    liar.write_text("import sys\nfor _ in sys.stdin:\n    print('{}', flush=True)\n")
    common = ["difftest", "--layer", "dl-message", "--max-cases", "30", "--out", str(tmp_path)]
    assert status([*common, "--target", model]) == 0  # agree
    assert status([*common, "--target", f"{sys.executable} {liar}"]) == 1  # disagreement
    assert status([*common, "--target", f"{sys.executable} -c pass"]) == 3  # target fault
    capsys.readouterr()
    for bad in (["--target", "/nonexistent/target"], ["--target", "'unbalanced"],
                ["--target", " "], ["--max-restarts", "-1", "--target", model]):
        assert status([*common, *bad]) == 2, bad  # usage error
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "error:" in err and "internal" not in err, err


def test_cli_replay_of_a_fault_reproducer_and_of_a_bad_file(tmp_path, capsys) -> None:
    assert main(["difftest", "--layer", "dl-message", "--target", f"{sys.executable} -c pass",
                 "--max-cases", "5", "--out", str(tmp_path)]) == 3
    [path] = tmp_path.glob("difftest-*.json")
    [item] = replay_results(path, CODECS["dl-message"].reference)
    assert item.agrees  # the model agrees with its own reproducer
    assert main(["difftest", "replay", str(path), "--target", f"{sys.executable} -c pass"]) == 3
    assert "TargetCrashed" in capsys.readouterr().out
    junk = tmp_path / "junk.json"
    junk.write_text("[1, 2]")
    assert main(["difftest", "replay", str(junk), "--target", "true"]) == 1
    err = capsys.readouterr().err
    assert "not a difftest reproducer" in err and "internal" not in err
    assert status(["difftest", "replay", str(tmp_path / "missing.json"), "--target", "true"]) == 2


# -- dependencies (issue 27, item 6) ----------------------------------------------------------


def _run_python(code: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parents[2]))
    return subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                          timeout=GUARD, check=False)


def test_difftest_help_and_list_do_not_import_hypothesis() -> None:
    code = ("import sys; from ualink_ref.cli import main\n"
            "for argv in (['difftest', '--help'], ['difftest', '--list']):\n"
            "    try:\n        main(argv)\n    except SystemExit:\n        pass\n"
            "print('LOADED' if 'hypothesis' in sys.modules else 'LIGHT', file=sys.stderr)")
    proc = _run_python(code)
    assert proc.stderr.strip().splitlines()[-1] == "LIGHT", proc.stderr


def test_without_hypothesis_one_line_names_what_to_install() -> None:
    code = ("import sys; sys.modules['hypothesis'] = None\n"  # as if it were not installed
            "from ualink_ref.cli import main\n"
            "sys.exit(main(['difftest', '--layer', 'dl', '--target', 'true']))")
    proc = _run_python(code)
    assert proc.returncode == 1 and proc.stderr.count("\n") == 1, proc.stderr
    assert "pip install hypothesis" in proc.stderr and "internal" not in proc.stderr
