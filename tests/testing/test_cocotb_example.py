"""The worked cocotb example (examples/cocotb_crc): good RTL passes, seeded bug is caught.

Needs Icarus Verilog and cocotb; skips with a reason otherwise (.ci/run installs iverilog).
"""

from __future__ import annotations

import importlib.util
import json
import shutil
import sys
from pathlib import Path

import pytest

pytest.importorskip("hypothesis")
if shutil.which("iverilog") is None:
    pytest.skip("Icarus Verilog (iverilog) not installed", allow_module_level=True)
if importlib.util.find_spec("cocotb") is None:
    pytest.skip("cocotb not installed (pip install 'ualink_ref[cocotb]')", allow_module_level=True)

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "cocotb_crc"
CASES = 200  # fuzz budget for the RTL


def _run(out: Path, broken: bool) -> tuple[int, int]:
    sys.path.insert(0, str(EXAMPLE))
    try:
        from run import run  # type: ignore[import-not-found]
    finally:
        sys.path.remove(str(EXAMPLE))
    return run(out, broken=broken, cases=CASES, seed=0)  # type: ignore[no-any-return]


def test_good_rtl_passes_fuzz_budget_and_every_exported_vector(tmp_path) -> None:
    tests, failed = _run(tmp_path, broken=False)
    assert (tests, failed) == (2, 0)
    summary = json.loads((tmp_path / "difftest" / "summary.json").read_text())
    assert summary["ok"] and summary["cases"] == CASES
    assert {"accept", "CrcError", "ReservedBitsError", "FieldRangeError"} <= set(
        summary["by_verdict"])


def test_broken_rtl_is_caught_and_shrunk_to_one_field(tmp_path) -> None:
    tests, failed = _run(tmp_path, broken=True)
    assert (tests, failed) == (2, 2)  # the fuzzer and the exported vectors both catch it
    summary = json.loads((tmp_path / "difftest" / "summary.json").read_text())
    assert not summary["ok"]
    [difference] = summary["differences"]  # one field
    assert difference.startswith("ack_req_seq:")
    doc = json.loads(Path(summary["reproducer"]).read_text())
    [case] = doc["cases"]
    assert [d["field"] for d in case["difftest"]["differences"]] == ["ack_req_seq"]
    assert case["kind"] == "flit_decode"  # replayable and `vectors verify`-compatible
