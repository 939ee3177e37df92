"""Capture vectors: committed files equal a fresh generation, and independent checks."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from ualink_ref.capture.format import read_capture
from ualink_ref.testing import vectors

ROOT = Path(__file__).resolve().parents[2]
COMMITTED = ROOT / "vectors"


def test_committed_capture_vectors_match_fresh_generation(tmp_path: Path) -> None:
    written = vectors.generate(tmp_path, ["capture"])
    assert {p.relative_to(tmp_path).as_posix() for p in written} == {
        "capture.json", "captures/atomics.pcap", "captures/clean.pcap",
        "captures/credits.pcap", "captures/replay.pcap", "captures/fec_codewords.pcapng",
        "captures/retrain.pcap", "captures/pacing.pcap", "captures/uart.pcap",
        "captures/split.pcap", "captures/poison.pcap", "captures/timeout.pcap"}
    for path in written:
        rel = path.relative_to(tmp_path)
        assert (COMMITTED / rel).read_bytes() == path.read_bytes(), rel


def test_verify_accepts_committed_and_rejects_tampering(tmp_path: Path) -> None:
    vectors.generate(tmp_path, ["capture"])
    report = vectors.verify_dir(tmp_path)
    assert report.ok and report.cases >= 12
    pcap = tmp_path / "captures" / "clean.pcap"
    data = bytearray(pcap.read_bytes())
    data[-1] ^= 1
    pcap.write_bytes(bytes(data))
    assert [m.file for m in vectors.verify_dir(tmp_path).mismatches] == ["captures/clean.pcap"]


def test_header_vector_is_the_hand_derived_example() -> None:
    doc = json.loads((COMMITTED / "capture.json").read_text())
    case = next(c for c in doc["cases"] if c["id"] == "header-spec-example")
    # Derived by hand in specs/capture.md (and tests/test_capture.py).
    assert case["expected"]["hex"] == "550110050200100000030280000003e8"


def test_scenario_captures_read_independently() -> None:
    """Scapy (an independent pcap reader) sees the records the vectors describe."""
    pytest.importorskip("scapy")
    from scapy.utils import rdpcap

    from ualink_ref import scapy_layers  # importing it registers link type 147

    doc = json.loads((COMMITTED / "capture.json").read_text())
    for case in doc["cases"]:
        if case["kind"] != "scenario":
            continue
        path = COMMITTED / case["expected"]["artifact"]
        pkts = rdpcap(str(path))
        assert len(pkts) == case["expected"]["records"] == len(read_capture(path))
        flits = [p.payload for p in pkts if isinstance(p.payload, scapy_layers.UALinkDLFlit)]
        assert sum(1 for f in flits if f.crc_valid == 0) == case["expected"]["crc_errors"]
        raw = [p for p in pkts if p.getfieldval("record_kind") == 1]
        assert len(flits) + len(raw) == len(pkts)


def test_scenarios_show_what_they_promise() -> None:
    doc = json.loads((COMMITTED / "capture.json").read_text())
    got = {c["inputs"]["name"]: c["expected"] for c in doc["cases"] if c["kind"] == "scenario"}
    assert got["clean"]["crc_errors"] == 0 and got["clean"]["replay_flits"] == 0
    assert got["replay"]["crc_errors"] == 1 and got["replay"]["replay_flits"] >= 1
    assert set(got["atomics"]["requests_by_command"]) == {"AtomicR", "AtomicNR"}
    assert got["atomics"]["ops_completed"] == 40  # 10 ops x 2 sizes x R/NR
    # credit exhaustion: the same writes take far longer with B's small grants
    from ualink_ref.capture.run import SCENARIOS, CaptureLink

    unlimited = CaptureLink().run(SCENARIOS["credits"].ops()).slots
    assert got["credits"]["ops_completed"] == 10 and got["credits"]["slots"] > 2 * unlimited
    fec = got["fec_codewords"]
    assert fec["fec_symbols_corrected"] > 0 and fec["fec_uncorrectable"] > 0
    assert fec["crc_errors"] == fec["fec_uncorrectable"] and fec["ops_completed"] == 30


def _pcap_record_offsets(data: bytes) -> list[int]:
    """Byte offset of each record's pseudo-header in a classic pcap (hand-walked)."""
    out, pos = [], 24
    while pos < len(data):
        incl = int.from_bytes(data[pos + 8 : pos + 12], "little")
        out.append(pos + 16)
        pos += 16 + incl
    return out


def test_verify_names_record_and_field_of_a_changed_pcap_byte(tmp_path: Path) -> None:
    shutil.copytree(COMMITTED, tmp_path / "v")
    pcap = tmp_path / "v" / "captures" / "replay.pcap"
    data = bytearray(pcap.read_bytes())
    rec = _pcap_record_offsets(bytes(data))
    # record 2: symbols_corrected (pseudo-header bytes 8-9) and DL flit byte 3 + 1 + 130
    # (segment 1's body starts after header 3, segment 0 header 1 + body 128, its header 1)
    data[rec[2] + 9] ^= 0x01
    data[rec[5] + 16 + 3 + 1 + 128 + 1 + 7] ^= 0x80
    pcap.write_bytes(bytes(data))
    found = {(m.file, m.case, m.field) for m in vectors.verify_dir(tmp_path / "v").mismatches}
    assert found == {
        ("captures/replay.pcap", "record 2", "symbols_corrected"),
        ("captures/replay.pcap", "record 5", "flit.segment1.body[7]"),
    }


def test_verify_reports_a_missing_capture(tmp_path: Path) -> None:
    shutil.copytree(COMMITTED, tmp_path / "v")
    (tmp_path / "v" / "captures" / "atomics.pcap").unlink()
    report = vectors.verify_dir(tmp_path / "v")
    assert [(m.file, m.field) for m in report.mismatches] == [("captures/atomics.pcap", "<file>")]


def test_mismatch_text_shows_where_a_long_value_differs() -> None:
    text = str(vectors.Mismatch("x.json", "c", "wire", "ab" * 100, "ab" * 60 + "cd" + "ab" * 39))
    assert "first difference at index 120" in text
    assert "model gives [112:] 'ababababcd" in text
