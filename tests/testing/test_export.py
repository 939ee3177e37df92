"""`vectors export`: memh and CSV files that reproduce the JSON vectors' bytes."""

from __future__ import annotations

import csv
import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from ualink_ref.cli import main
from ualink_ref.testing.export import BYTE_FIELDS, entries, memh_files, model_documents

ROOT = Path(__file__).resolve().parents[2]
COMMITTED = ROOT / "vectors"
LAYERS = ["phy", "dl", "tl", "capture"]


def _doc(layer: str) -> dict:
    return json.loads((COMMITTED / f"{layer}.json").read_text())


def _memh_words(text: str) -> list[tuple[int, str]]:
    """A small independent $readmemh reader: (address, word) pairs, comments and @ honoured."""
    out, addr = [], 0
    for line in text.splitlines():
        line = line.split("//", 1)[0].strip()
        for token in line.split():
            if token.startswith("@"):
                addr = int(token[1:], 16)
            else:
                out.append((addr, token))
                addr += 1
    return out


def test_export_matches_the_committed_vectors() -> None:
    """Exporting the model's documents equals exporting the committed JSON (same bytes)."""
    for doc in model_documents(["dl", "tl"]):
        assert memh_files(doc) == memh_files(_doc(doc["layer"]))


@pytest.mark.parametrize("layer", LAYERS)
def test_memh_reproduces_json_bytes_in_python(layer: str) -> None:
    doc = _doc(layer)
    files = memh_files(doc)
    stim = dict(_memh_words(files[f"{layer}.stim.memh"]))
    expd = dict(_memh_words(files[f"{layer}.expect.memh"]))
    index = [int(w, 16) for _, w in _memh_words(files[f"{layer}.index.memh"])]
    assert len(index) == len(entries(doc)) > 0
    seen_kinds = set()
    for word in index:
        case, stream, field = word >> 112, (word >> 104) & 0xFF, (word >> 96) & 0xFF
        offset, length = (word >> 32) & 0xFFFFFFFF, word & 0xFFFFFFFF
        c = doc["cases"][case]
        seen_kinds.add(c["kind"])
        ins, outs = BYTE_FIELDS[(layer, c["kind"])]
        name = (ins + outs)[field]
        want = (c["inputs"] if stream == 0 else c["expected"])[name]
        mem = stim if stream == 0 else expd
        assert "".join(mem[offset + i] for i in range(length)) == want
    assert seen_kinds == {k for (lay, k) in BYTE_FIELDS if lay == layer} & {
        c["kind"] for c in doc["cases"]}
    # The header comment names every exported case id.
    head = files[f"{layer}.index.memh"].split("\n")
    assert all(line.startswith("// ") for line in head[:3])
    for e in entries(doc):
        assert f"//   {e.case} {e.case_id}" in files[f"{layer}.stim.memh"]


def test_csv_rows_equal_json(tmp_path) -> None:
    assert main(["vectors", "export", "--format", "csv", "--out", str(tmp_path),
                 "--layer", "dl"]) == 0
    rows = list(csv.DictReader((tmp_path / "dl.csv").open()))
    doc = _doc("dl")
    assert len(rows) == len(entries(doc))
    for row in rows:
        c = doc["cases"][int(row["case"])]
        where = c["inputs"] if row["stream"] == "stim" else c["expected"]
        assert row["id"] == c["id"] and where[row["field"].split(".", 1)[1]] == row["hex"]
        assert int(row["length"]) == len(row["hex"]) // 2


@pytest.mark.skipif(shutil.which("iverilog") is None, reason="Icarus Verilog not installed")
@pytest.mark.parametrize("layer", LAYERS)
def test_memh_loads_in_icarus_and_reproduces_json_bytes(tmp_path, layer: str) -> None:
    assert main(["vectors", "export", "--format", "memh", "--out", str(tmp_path),
                 "--layer", layer]) == 0
    doc = json.loads(json.dumps(model_documents([layer])[0]))
    found = entries(doc)
    depth = {s: max(1, sum(len(e.data) for e in found if e.stream == s)) for s in (0, 1)}
    binary = tmp_path / "echo"
    subprocess.run(["iverilog", "-g2005", f"-Ptb_memh_echo.STIM_DEPTH={depth[0]}",
                    f"-Ptb_memh_echo.EXPECT_DEPTH={depth[1]}",
                    f"-Ptb_memh_echo.ENTRIES={len(found)}", "-o", str(binary),
                    str(ROOT / "examples" / "cocotb_crc" / "tb_memh_echo.v")], check=True)
    run = subprocess.run(["vvp", "-n", str(binary), f"+stim={tmp_path / f'{layer}.stim.memh'}",
                          f"+expect={tmp_path / f'{layer}.expect.memh'}",
                          f"+index={tmp_path / f'{layer}.index.memh'}"],
                         check=True, capture_output=True, text=True)
    lines = [m.groups() for m in re.finditer(r"^E (\d+) (\d+) (\d+) ([0-9a-fx]*)$",
                                             run.stdout, re.M)]
    assert len(lines) == len(found)
    for (case, stream, field, hexed), e in zip(lines, found, strict=True):
        c = doc["cases"][int(case)]
        ins, outs = BYTE_FIELDS[(layer, c["kind"])]
        where = c["inputs"] if int(stream) == 0 else c["expected"]
        assert hexed == where[(ins + outs)[int(field)]], (c["id"], e.field)
