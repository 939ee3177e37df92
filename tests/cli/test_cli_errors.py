"""No tracebacks from the CLI: every bad value is one line naming the problem, exit 2 or 1.

Each case runs the real entry point (:func:`ualink_ref.cli.main`) in-process; a
few run the console command in a subprocess, where a traceback would show.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from ualink_ref.capture.format import read_capture
from ualink_ref.cli import main

#: (arguments, words the one error line must contain). ``{out}`` is a file in tmp_path.
BAD: list[tuple[list[str], str]] = [
    (["capture", "--out", "{out}", "--batch", "0"], "--batch"),
    (["capture", "--out", "{out}", "--latency", "-1"], "--latency"),
    (["capture", "--out", "{out}", "--max-outstanding", "0"], "--max-outstanding"),
    (["capture", "--out", "{out}", "--ops", "-5"], "--ops"),
    (["capture", "--out", "{out}", "--span", "10"], "--span"),
    (["capture", "--out", "{out}", "--ops", "1000000000"], "--ops"),
    (["capture", "--out", "{out}", "--ber", "2"], "--ber"),
    (["capture", "--out", "{out}", "--ber", "nan"], "--ber"),
    (["capture", "--out", "{out}", "--seed", "-1"], "--seed"),
    (["capture", "--out", "{out}", "--burst", "0:1e-5"], "--burst"),
    (["capture", "--out", "{out}", "--scenario", "replay", "--ops", "5"], "--ops"),
    (["capture", "--out", "{out}", "--scenario", "clean", "--fec", "kp4"], "--fec"),
    (["simulate", "--batch", "0"], "--batch"),
    (["simulate", "--latency", "-1"], "--latency"),
    (["simulate", "--max-outstanding", "0"], "--max-outstanding"),
    (["simulate", "--ops", "-5"], "--ops"),
    (["simulate", "--span", "10"], "--span"),
    (["simulate", "--ops", "1000000000"], "--ops"),
    (["simulate", "--ops", "many"], "--ops"),
    (["dissect", "{missing}"], "cannot read"),
    (["dissect", "{out}", "-c", "0"], "-c"),
    (["dissect", "{out}", "--slots", "9:3"], "--slots"),
    (["dissect", "{out}", "--port", "300"], "--port"),
    (["dissect", "{out}", "--fields", "slot,nope"], "nope"),
    (["dissect", "{out}", "--json", "--fields", "slot"], "--fields"),
    (["compare", "--repeat", "0"], "--repeat"),
    (["compare", "--cable-m", "-1"], "--cable-m"),
    (["compare", "--hops", "9"], "--hops"),
    (["fec", "table", "--ber", "-1"], "--ber"),
    (["fec", "table", "--lane-gbps", "0"], "--lane-gbps"),
    (["vectors", "verify", "{tmp}", "--max-report", "-1"], "--max-report"),
    (["vectors", "verify", "{tmp}"], "no vector files"),
    (["dl", "decode", "zz"], "not hex"),
    (["difftest", "--layer", "nope", "--target", "true"], "--layer"),
    (["difftest", "--max-cases", "0"], "--max-cases"),
    (["difftest"], "--layer is required"),
    (["difftest", "--layer", "dl"], "--target is required"),
    (["nonsense"], "nonsense"),
]


@pytest.mark.parametrize("argv,words", BAD, ids=[" ".join(a) for a, _ in BAD])
def test_bad_value_is_one_line_naming_the_problem(
        argv: list[str], words: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    names = {"out": str(tmp_path / "c.pcap"), "missing": str(tmp_path / "none.pcap"),
             "tmp": str(tmp_path)}
    argv = [a.format(**names) for a in argv]
    try:
        code = main(argv)
    except SystemExit as exc:  # argparse's usage errors
        code = exc.code  # type: ignore[assignment]
    out, err = capsys.readouterr()
    lines = err.strip().splitlines()
    assert code in (1, 2), (argv, code, err)
    assert "Traceback" not in err + out
    assert len(lines) == 1, err
    assert lines[0].startswith("ualink-ref") and ": error: " in lines[0], lines[0]
    assert words in lines[0], lines[0]
    assert not (tmp_path / "c.pcap").exists()  # nothing ran


def test_usage_errors_exit_2_and_failures_1(tmp_path: Path) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["simulate", "--batch", "0"])
    assert exc.value.code == 2
    (tmp_path / "g.pcap").write_bytes(b"garbage\n")
    assert main(["dissect", str(tmp_path / "g.pcap")]) == 1


def test_scenario_fec_codewords_writes_its_158_records(tmp_path: Path) -> None:
    # The CLI's --raw-codewords default used to switch the scenario's raw records off (79).
    out = tmp_path / "f.pcapng"
    assert main(["capture", "--scenario", "fec_codewords", "--out", str(out)]) == 0
    committed = Path(__file__).resolve().parents[2] / "vectors" / "captures" / (
        "fec_codewords.pcapng")
    assert out.read_bytes() == committed.read_bytes()
    records = read_capture(out)
    assert len(records) == 158
    assert sum(r.kind == "fec_codewords" for r in records) == 79


def _console(*args: str) -> list[str]:
    return [sys.executable, "-m", "ualink_ref.cli", *args]


def test_subprocess_bad_value_has_no_traceback(tmp_path: Path) -> None:
    result = subprocess.run(_console("capture", "--out", str(tmp_path / "c.pcap"), "--batch",
                                     "0"), capture_output=True, text=True, check=False)
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert result.stderr.count("\n") == 1 and "--batch" in result.stderr


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
def test_ctrl_c_during_simulate_exits_130_quietly() -> None:
    # The child starts with SIGINT at its default, as a terminal's foreground job does:
    # a parent run in the background (nohup, `&`) has it ignored, and a child inheriting
    # that would never see Ctrl-C.
    proc = subprocess.Popen(_console("simulate", "--ops", "2000000", "--no-progress"),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    # Wait until it is past start-up (imports) and into the run, then interrupt.
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.5)
        if _cpu_seconds(proc.pid) > 2.0:
            break
    os.kill(proc.pid, signal.SIGINT)
    _out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert "Traceback" not in err and "KeyboardInterrupt" not in err


def _cpu_seconds(pid: int) -> float:
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
