"""Wireshark's tshark reads our captures as link type 147 (USER0): an independent reader.

Skipped when tshark is not installed (it is not a dependency). tshark names
LINKTYPE_USER0 "USER 0" (its internal encapsulation number 45); it must see
every record with the length, and the slot x 25.6 ns timestamp, we wrote.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from ualink_ref.capture.format import read_capture, write_capture
from ualink_ref.capture.run import run_scenario

TSHARK = shutil.which("tshark")
pytestmark = pytest.mark.skipif(TSHARK is None, reason="tshark is not installed")

WTAP_ENCAP_USER0 = "45"  # Wireshark's number for pcap link type 147 (wiretap/wtap.h)


@pytest.mark.parametrize("name", ["replay.pcap", "fec_codewords.pcapng"])
def test_tshark_reads_every_record(tmp_path: Path, name: str) -> None:
    scenario = name.split(".")[0]
    path = tmp_path / name
    write_capture(path, run_scenario(scenario).records)
    records = read_capture(path)
    assert TSHARK is not None
    out = subprocess.run(
        [TSHARK, "-r", str(path), "-T", "fields", "-e", "frame.len", "-e", "frame.encap_type",
         "-e", "frame.time_epoch"],
        capture_output=True, text=True, check=True, timeout=120,
    ).stdout.split("\n")
    rows = [line.split("\t") for line in out if line.strip()]
    assert len(rows) == len(records) > 0
    for (length, encap, epoch), rec in zip(rows, records, strict=True):
        assert int(length) == len(rec.encode())
        assert encap == WTAP_ENCAP_USER0
        assert abs(float(epoch) * 1e9 - rec.slot * 25.6) < 1.0
