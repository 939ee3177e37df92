"""cocotb testbench: the RTL DL-flit checker against the ualink_ref model.

Two tests, both run by ``run.py`` (and by ``tests/test_cocotb_example.py``):

* ``fuzz``: the ``dl-header`` codec of ``ualink_ref.testing.difftest`` drives the RTL
  through a Python callable (inputs from the public strategies, shrinking on
  disagreement); writes ``summary.json`` and, on a disagreement, a reproducer
  into ``$DIFFTEST_OUT`` and fails with the field-level difference;
* ``vectors``: every 640-byte DL flit of the exported ``dl`` vectors, loaded by
  the Verilog top with ``$readmemh``, is selected, read back (it must equal
  the JSON bytes) and checked against the model and the exported verdict.

Environment: ``DIFFTEST_SEED``, ``DIFFTEST_CASES``, ``DIFFTEST_OUT``,
``VECTORS_JSON`` (the dl.json the memh files were exported from).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import cocotb
from cocotb.task import bridge, resume  # cocotb 2.x (the `cocotb` extra's floor)
from cocotb.triggers import Timer

from ualink_ref.testing.difftest import difftest, write_reproducer
from ualink_ref.testing.difftest.layers import CODECS
from ualink_ref.testing.difftest.protocol import Outcome, compare
from ualink_ref.testing.export import entries
from ualink_ref.testing.export_layout import VERDICT_CODES

FLIT_BYTES = 640


def response_line(out: dict[str, int]) -> str:
    """The RTL's outputs as a line-protocol response, in the model's check order."""
    if not out["crc_ok"]:
        return "ERR CrcError"
    if not out["op_ok"]:
        return "ERR FieldRangeError"
    if not out["rsvd_ok"]:
        return "ERR ReservedBitsError"
    fields = {k: out[k] for k in ("op", "payload", "flit_seq", "ack_req_seq", "flit_seq_lo")}
    return json.dumps(fields, sort_keys=True)


async def settle_and_read(dut: Any) -> dict[str, int]:
    """Let the combinational logic settle, then read every output of the checker."""
    await Timer(1, "ns")
    return {name: int(getattr(dut, name).value)
            for name in ("crc_ok", "op_ok", "rsvd_ok", "op", "payload", "flit_seq",
                         "ack_req_seq", "flit_seq_lo")}


@cocotb.test()
async def fuzz(dut: Any) -> None:
    """Differential fuzzing of the RTL through the Python-callable API."""
    seed = int(os.environ.get("DIFFTEST_SEED", "0"))
    cases = int(os.environ.get("DIFFTEST_CASES", "200"))
    out_dir = Path(os.environ.get("DIFFTEST_OUT", "difftest-out"))
    dut.use_mem.value = 0

    @resume
    async def drive(data: bytes) -> dict[str, int]:
        dut.flit_in.value = int.from_bytes(data, "big")
        return await settle_and_read(dut)

    def rtl(data: bytes) -> str:
        # The port is exactly 640 bytes wide: other lengths are rejected by this wrapper.
        if len(data) != FLIT_BYTES:
            return "ERR TruncatedError"
        return response_line(drive(data))

    result = await bridge(lambda: difftest("dl-header", rtl, seed=seed,
                                                  max_cases=cases))()
    out_dir.mkdir(parents=True, exist_ok=True)
    summary = {"cases": result.coverage.cases, "by_source": dict(result.coverage.by_source),
               "by_verdict": dict(result.coverage.by_verdict), "ok": result.ok}
    if result.failure is not None:
        path = write_reproducer(out_dir, "dl-header", result.failure, seed)
        summary["reproducer"] = str(path)
        summary["differences"] = [str(d) for d in result.failure.differences]
    (out_dir / "summary.json").write_text(json.dumps(summary, indent=1, sort_keys=True))
    dut._log.info(result.summary())
    assert result.failure is None, "RTL disagrees with the model:\n" + result.failure.describe()


@cocotb.test()
async def vectors(dut: Any) -> None:
    """Every exported 640-byte DL flit, loaded with $readmemh, checked against the model."""
    doc = json.loads(Path(os.environ["VECTORS_JSON"]).read_text())
    dut.use_mem.value = 1
    dut.load.value = 0
    codec = CODECS["dl-header"]
    checked = 0
    for number, entry in enumerate(entries(doc)):
        if len(entry.data) != FLIT_BYTES:
            continue
        dut.sel.value = number
        await Timer(1, "ns")
        dut.load.value = 1
        await Timer(1, "ns")
        dut.load.value = 0
        loaded = int(dut.flit.value).to_bytes(FLIT_BYTES, "big")
        assert loaded == entry.data, f"{entry.case_id} {entry.field}: memh bytes differ from JSON"
        out = await settle_and_read(dut)
        model = Outcome(None, None)
        try:
            model = Outcome(None, codec.reference(entry.data))
        except Exception as exc:
            model = Outcome(type(exc).__name__)
        diffs = compare(model, _parse(response_line(out)))
        assert not diffs, f"{entry.case_id} {entry.field}: " + "; ".join(map(str, diffs))
        # The exported verdict: a flit the vectors call a CRC error must fail the RTL's check.
        assert bool(out["crc_ok"]) == (entry.verdict != VERDICT_CODES["CrcError"]), entry.case_id
        checked += 1
    dut._log.info("checked %d exported DL flits", checked)
    assert checked > 0


def _parse(line: str) -> Outcome:
    from ualink_ref.testing.difftest.protocol import parse_response

    return parse_response(line)
