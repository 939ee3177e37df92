"""`ualink-ref dissect` on input that holds no record (not a capture, empty, cut inside
its first record): the error line alone, exit status 1 (specs/capture.md D3 and C1,
specs/cli.md rule 3), with no heading and no empty summary beside it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from ualink_ref.capture.format import encode_pcap, encode_pcapng
from ualink_ref.cli import main

ROOT = Path(__file__).resolve().parents[2]
REPLAY = ROOT / "vectors" / "captures" / "replay.pcap"
FIRST_RECORD = 24 + 16 + 656  # pcap header, record header, record (hand-walked)

NO_RECORD = {
    "text": (b"hello, this is not a capture\n", "not a pcap or pcapng file (magic 68656c6c)"),
    "short text": (b"hello", "not a pcap or pcapng file (magic 68656c6c)"),
    "png": (b"\x89PNG\r\n\x1a\n" + bytes(40), "not a pcap or pcapng file (magic 89504e47)"),
    "empty": (b"", "file cut short: capture file header"),
    "pcap header cut": (REPLAY.read_bytes()[:10], "file cut short: pcap file header"),
    "first record cut": (REPLAY.read_bytes()[:100], "file cut short: pcap record"),
}
FORMS = [[], ["--summary-only"], ["--json"], ["--fields", "slot,op"], ["-v"], ["--no-summary"]]


def _dissect(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    capsys.readouterr()
    code = main(["dissect", *args])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("case", sorted(NO_RECORD))
@pytest.mark.parametrize("form", FORMS, ids=lambda f: " ".join(f) or "text")
def test_no_record_gives_the_error_alone(case: str, form: list[str], tmp_path: Path,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    data, why = NO_RECORD[case]
    path = tmp_path / "input.pcap"
    path.write_bytes(data)
    code, out, err = _dissect([str(path), *form], capsys)
    assert (code, out) == (1, "")
    line = f"ualink-ref dissect: error: {path}: {why}"
    if why.startswith("not a pcap"):  # the file header: no packet to name
        assert err == line + "\n"
    else:
        assert err.startswith(line) and err.count("\n") == 1


def test_the_error_alone_from_stdin_and_the_exit_status(tmp_path: Path) -> None:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    proc = subprocess.run([sys.executable, "-m", "ualink_ref.cli", "dissect", "-"],
                          input=b"GET / HTTP/1.1\r\n\r\n", capture_output=True, env=env,
                          timeout=60, check=False)
    assert proc.returncode == 1 and proc.stdout == b""
    assert proc.stderr == (b"ualink-ref dissect: error: <stdin>: not a pcap or pcapng file "
                           b"(magic 47455420)\n")


@pytest.mark.parametrize("encode", [encode_pcap, encode_pcapng])
def test_a_capture_without_records_still_gets_its_table_and_summary(
        encode: object, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "zero.pcap"
    path.write_bytes(encode([]))  # type: ignore[operator]
    code, out, err = _dissect([str(path)], capsys)
    assert (code, err) == (0, "")
    lines = out.splitlines()
    assert lines[0].split()[:3] == ["rec", "slot", "dir"] and lines[1] == ""
    assert lines[2] == "summary: 0 DL flits"


def test_a_file_cut_after_records_prints_them_the_summary_then_the_error(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "cut.pcap"
    path.write_bytes(REPLAY.read_bytes()[:FIRST_RECORD + 100])
    code, out, err = _dissect([str(path)], capsys)
    assert code == 1 and err.count("\n") == 1
    assert f"(packet 1, file offset {FIRST_RECORD})" in err
    lines = out.splitlines()
    assert lines[0].split()[:3] == ["rec", "slot", "dir"] and lines[1].split()[0] == "0"
    assert "summary: 1 DL flits (a_to_b 1)" in out


def test_a_filter_that_shows_nothing_keeps_the_heading(
        capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _dissect([str(REPLAY), "--seq", "500"], capsys)
    assert code == 0
    assert out.splitlines()[0].split()[:3] == ["rec", "slot", "dir"]
    assert "0 shown" in out
