"""`ualink-ref dissect` streams, tolerates bad records, scripts (JSON Lines, fields, filters),
and captures are in time order."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

import pytest

from ualink_ref.capture.dissect import dissect_records
from ualink_ref.capture.format import read_capture
from ualink_ref.capture.run import SCENARIOS, capture_simulation
from ualink_ref.cli import main
from ualink_ref.phy.config import PhyConfig
from ualink_ref.sim.config import SimConfig
from ualink_ref.sim.workloads import random_workload

ROOT = Path(__file__).resolve().parents[2]
PCAP_HEADER, RECORD_HEADER, RECORD = 24, 16, 16 + 640  # hand-walked pcap layout


@pytest.fixture(scope="module")
def noisy(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, int]:
    """A capture with CRC errors (FEC off, bit errors), and the receivers' CRC-error count."""
    path = tmp_path_factory.mktemp("cap") / "noisy.pcap"
    assert main(["capture", "--out", str(path), "--ops", "120", "--fec", "none", "--ber", "5e-5",
                 "--seed", "2", "--no-progress"]) == 0
    _records, report = capture_simulation(random_workload(120, 2),
                                          SimConfig(phy=PhyConfig(fec="none"), ber=5e-5, seed=2))
    assert report.crc_errors > 0
    return path, report.crc_errors


def _dissect(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    capsys.readouterr()
    code = main(["dissect", *args])
    out, err = capsys.readouterr()
    return code, out, err


def test_truncated_fifth_record_prints_the_first_four_then_the_error(
        noisy: tuple[Path, int], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = noisy[0].read_bytes()
    fifth = PCAP_HEADER + 4 * (RECORD_HEADER + RECORD)  # file offset of record 5's header
    cut = tmp_path / "cut.pcap"
    cut.write_bytes(data[: fifth + 100])
    code, out, err = _dissect([str(cut), "--no-summary"], capsys)
    assert code == 1
    assert [int(line.split()[0]) for line in out.splitlines()[1:]] == [0, 1, 2, 3]
    assert err.count("\n") == 1 and str(cut) in err and f"file offset {fifth}" in err
    assert "cut short" in err and "Traceback" not in err


def test_bad_record_is_marked_counted_and_reading_goes_on(
        noisy: tuple[Path, int], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = bytearray(noisy[0].read_bytes())
    total = len(read_capture(noisy[0]))
    for k in (2, 6):  # zero the magic of records 2 and 6
        data[PCAP_HEADER + k * (RECORD_HEADER + RECORD) + RECORD_HEADER] = 0
    bad = tmp_path / "bad.pcap"
    bad.write_bytes(bytes(data))
    code, out, err = _dissect([str(bad), "--json"], capsys)
    rows = [json.loads(line) for line in out.splitlines()]
    assert code == 1 and len(rows) == total
    assert [r["index"] for r in rows if r.get("bad_record")] == [2, 6]
    assert f"packet 6 at file offset {PCAP_HEADER + 6 * (RECORD_HEADER + RECORD)}" in err
    assert "2 bad record(s)" in err
    code, out, _ = _dissect([str(bad), "--strict", "--json"], capsys)
    assert code == 1 and [json.loads(line)["index"] for line in out.splitlines()] == [0, 1, 2]


def test_json_lines_parse_and_agree_with_the_dissector(
        noisy: tuple[Path, int], capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _dissect([str(noisy[0]), "--json"], capsys)
    rows = [json.loads(line) for line in out.splitlines()]
    flits = dissect_records(read_capture(noisy[0]))
    assert code == 0 and len(rows) == len(flits)
    assert [(r["index"], r["seq"], r["crc_error"], r["status"]) for r in rows] == [
        (f.index, f.seq, f.crc_error, f.status) for f in flits]
    assert [len(r["ops"]) for r in rows] == [len(f.ops) for f in flits]


def test_filters_and_fields(noisy: tuple[Path, int], capsys: pytest.CaptureFixture[str]) -> None:
    path, crc_errors = noisy
    records = read_capture(path)
    _, out, _ = _dissect([str(path), "--crc-errors", "--fields", "index,crc_error"], capsys)
    rows = [line.split("\t") for line in out.splitlines()]
    assert len(rows) == crc_errors and all(r[1] == "1" for r in rows)  # the receivers' count
    lo, hi = records[10].slot, records[30].slot
    _, out, _ = _dissect([str(path), "--slots", f"{lo}:{hi}", "--fields", "slot"], capsys)
    assert [int(s) for s in out.split()] == [r.slot for r in records if lo <= r.slot <= hi]
    _, out, _ = _dissect([str(path), "--port", "1", "--fields", "direction,port"], capsys)
    assert out.splitlines() == ["b_to_a\t1"] * sum(r.port == 1 for r in records)
    _, out, _ = _dissect([str(path), "-c", "3", "--fields", "index"], capsys)
    assert out.split() == ["0", "1", "2"]


def test_reads_stdin_and_streams(noisy: tuple[Path, int], monkeypatch: pytest.MonkeyPatch,
                                 capsys: pytest.CaptureFixture[str]) -> None:
    data = noisy[0].read_bytes()
    _, from_file, _ = _dissect([str(noisy[0]), "--json"], capsys)

    class Stdin:
        def __init__(self, limit: int) -> None:
            self.buffer = _Limited(data, limit)

    monkeypatch.setattr(sys, "stdin", Stdin(len(data)))
    _, from_stdin, _ = _dissect(["-", "--json"], capsys)
    assert from_stdin == from_file
    # -c 2 must not read the file to the end: a stream that fails past record 3 is enough.
    monkeypatch.setattr(sys, "stdin", Stdin(PCAP_HEADER + 3 * (RECORD_HEADER + RECORD)))
    code, out, _ = _dissect(["-", "-c", "2", "--json"], capsys)
    assert code == 0 and len(out.splitlines()) == 2


class _Limited(io.BytesIO):
    """A byte stream that fails when read beyond ``limit``: proof of not reading ahead."""

    def __init__(self, data: bytes, limit: int) -> None:
        super().__init__(data)
        self.limit = limit

    def read(self, n: int | None = -1) -> bytes:
        if n is None or n < 0 or self.tell() + n > self.limit:
            raise AssertionError("read beyond what the output needed")
        return super().read(n)


def test_head_closes_the_pipe_quietly(noisy: tuple[Path, int]) -> None:
    cmd = f'"{sys.executable}" -m ualink_ref.cli dissect "{noisy[0]}" -v | head -1'
    result = subprocess.run(["bash", "-o", "pipefail", "-c", cmd], capture_output=True,
                            text=True, check=False)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("  rec") and result.stderr == ""


def test_capinfos_every_capture_is_in_time_order(noisy: tuple[Path, int]) -> None:
    """Timestamps never go back: committed captures, CLI captures, simulator captures."""
    files = [ROOT / "vectors" / s.artifact for s in SCENARIOS.values()] + [noisy[0]]
    runs = [read_capture(f) for f in files]
    runs.append(capture_simulation(random_workload(200, 4),
                                   SimConfig(phy=PhyConfig(fec="ll"), ber=1e-3, seed=4,
                                             batch=16), raw_codewords=True)[0])
    for records in runs:
        stamps = [r.timestamp_ns for r in records]
        assert stamps == sorted(stamps)
        assert len({r.direction for r in records}) == 2
