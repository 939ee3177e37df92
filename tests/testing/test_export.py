"""`vectors export` (memh layout v2, specs/difftest.md "Export"): the files say what the JSON
vectors say, laid out as the spec's tables declare.

The expected records are rebuilt here from the JSON and from the tables *parsed out of
specs/difftest.md* (kind codes, fields, index bit slices), with an independent memh
reader and symbol unpacker, so the spec, the code and the files are checked against each
other; a few seeded bugs show the check fails when the export is wrong.
"""

from __future__ import annotations

import csv
import json
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from ualink_ref.cli import main
from ualink_ref.testing import export_layout
from ualink_ref.testing.export import entries, memh_files, model_documents

ROOT = Path(__file__).resolve().parents[2]
COMMITTED = ROOT / "vectors"
SPEC = (ROOT / "specs" / "difftest.md").read_text(encoding="utf-8")
LAYERS = ["phy", "dl", "tl", "capture"]
# specs/difftest.md X2, X5, X9, written out from the prose.
STREAMS = {"stim": 0, "expect": 1, "stim.sym": 2, "expect.sym": 3}
DIGITS = {0: 2, 1: 2, 2: 3, 3: 3}
VERDICTS = {"TruncatedError": 1, "CrcError": 2, "FieldRangeError": 3, "ReservedBitsError": 4,
            "FecUncorrectableError": 5}
MODES = {"none": 0, "kp4": 1, "ll": 2}


def _spec_kinds() -> dict[tuple[str, str], tuple[int, list[tuple[int, int, str, bool]]]]:
    """(layer, kind) -> (kind code, [(field no, stream, JSON path, kp4/ll only)])."""
    out = {}
    for code, layer, kind, cell in re.findall(
            r"^\| `0x([0-9a-f]{2})` \| (\w+) \| `(\w+)` \| (.+) \|$", SPEC, re.M):
        fields = [(int(n), STREAMS[s], path, bool(fec)) for n, s, path, fec in
                  re.findall(r"(\d+) `([\w.]+)` `([\w.]+)`( \(kp4, ll\))?", cell)]
        out[(layer, kind)] = (int(code, 16), fields)
    return out


def _spec_index() -> dict[str, tuple[int, int]]:
    """Index field name -> (high bit, low bit), from the spec's index table."""
    rows = re.findall(r"^\| (\d+):(\d+) \| `?(\w+)`? \|", SPEC, re.M)
    return {name: (int(hi), int(lo)) for hi, lo, name in rows}


KINDS = _spec_kinds()
INDEX = _spec_index()


def test_spec_tables_parsed() -> None:
    assert len(KINDS) == 14 and sum(hi - lo + 1 for hi, lo in INDEX.values()) == 192
    assert INDEX["version"] == (191, 184) and INDEX["length"] == (31, 0)


@dataclass(frozen=True)
class Record:
    """What one index entry must say (offset aside), and its words."""

    case: int
    kind: int
    field: int
    stream: int
    mode: int
    interleave: int
    verdict: int
    corrected: int
    uncorrectable: int
    words: tuple[int, ...]


def _symbols(data: bytes) -> tuple[int, ...]:
    """10-bit symbols of LSB-first wire bytes, bit by bit (specs/difftest.md X8)."""
    bits = [(byte >> i) & 1 for byte in data for i in range(8)]
    return tuple(sum(bits[10 * s + k] << k for k in range(10)) for s in range(len(bits) // 10))


def _expected_records(doc: dict[str, Any]) -> list[Record]:
    """The entries the spec says a document exports, from its JSON alone."""
    out = []
    for number, case in enumerate(doc["cases"]):
        if (doc["layer"], case["kind"]) not in KINDS:
            continue
        code, fields = KINDS[(doc["layer"], case["kind"])]
        ins, exp = case["inputs"], case["expected"]
        mode_name = next((ins[k] for k in ("mode", "code", "fec_mode") if k in ins), None)
        flags = exp.get("uncorrectable", False)
        flagged = sum(flags) if isinstance(flags, list) else int(flags)
        fixed = exp.get("corrected", 0)
        corrected = sum(fixed) if isinstance(fixed, list) else fixed
        verdict = (VERDICTS.get(exp["error"], 255) if exp.get("error") else
                   5 if flagged else 0)
        for field, stream, path, fec_only in fields:
            if fec_only and mode_name == "none":
                continue
            source, key = path.split(".")
            value = (ins if source == "inputs" else exp)[key]
            if isinstance(value, list):
                words = tuple(value)
            elif stream >= 2:
                words = _symbols(bytes.fromhex(value))
            else:
                words = tuple(bytes.fromhex(value))
            out.append(Record(number, code, field, stream,
                              255 if mode_name is None else MODES[mode_name],
                              ins.get("interleave", 0), verdict, corrected, flagged, words))
    return out


def _memh_words(text: str, digits: int) -> dict[int, int]:
    """A small independent $readmemh reader: address -> word; checks the word width."""
    out, addr = {}, 0
    for line in text.splitlines():
        for token in line.split("//", 1)[0].split():
            if token.startswith("@"):
                addr = int(token[1:], 16)
                continue
            assert len(token) == digits, f"word {token!r} is not {digits} hex digits"
            assert addr not in out, f"address {addr:#x} written twice"
            out[addr] = int(token, 16)
            addr += 1
    return out


def _field(word: int, name: str) -> int:
    hi, lo = INDEX[name]
    return (word >> lo) & ((1 << (hi - lo + 1)) - 1)


def _read_memh(files: dict[str, str], name: str) -> list[Record]:
    """The records the memh files hold, read as a testbench would; checks the layout."""
    streams = {n: _memh_words(files[f"{name}.{s}.memh"], DIGITS[n])
               for s, n in STREAMS.items() if f"{name}.{s}.memh" in files}
    index = _memh_words(files[f"{name}.index.memh"], 48)
    assert set(files) == {f"{name}.index.memh"} | {f"{name}.{s}.memh" for s, n in
                                                   STREAMS.items() if n in streams}
    assert all(streams.values()), "a stream file with no words"
    out, next_offset = [], dict.fromkeys(STREAMS.values(), 0)
    for addr in range(len(index)):
        word = index[addr]
        assert _field(word, "version") == 2 and _field(word, "reserved") == 0
        stream, offset, length = (_field(word, "stream"), _field(word, "offset"),
                                  _field(word, "length"))
        assert offset == next_offset[stream], "entries are not back to back (X7)"
        next_offset[stream] += length
        words = tuple(streams[stream][offset + i] for i in range(length)) if length else ()
        out.append(Record(*(_field(word, n) for n in (
            "case", "kind", "field", "stream", "mode", "interleave", "verdict", "corrected",
            "uncorrectable")), words))
    for stream, words in streams.items():
        assert len(words) == next_offset[stream], "words no index entry points at"
    return out


def _doc(layer: str) -> dict[str, Any]:
    return json.loads((COMMITTED / f"{layer}.json").read_text())


@pytest.mark.parametrize("layer", LAYERS)
def test_memh_files_hold_what_the_spec_and_json_say(layer: str) -> None:
    doc = _doc(layer)
    want = _expected_records(doc)
    assert want and _read_memh(memh_files(doc), layer) == want
    # Every exported case is named in each file's header comment.
    for text in memh_files(doc).values():
        assert text.startswith("// ualink_ref vectors export (memh v2): ")
        assert all(f"//   {r.case} {doc['cases'][r.case]['id']}\n" in text for r in want)


def test_model_export_equals_committed_export() -> None:
    for layer, doc in model_documents(LAYERS).items():
        assert memh_files(doc) == memh_files(_doc(layer)), layer


def test_fec_kinds_have_symbols_and_decoders_their_received_word_as_stimulus() -> None:
    doc = _doc("phy")
    records = _read_memh(memh_files(doc), "phy")
    by_case: dict[int, list[Record]] = {}
    for r in records:
        by_case.setdefault(r.case, []).append(r)
    seen = set()
    for number, case in enumerate(doc["cases"]):
        mine, exp = by_case.get(number, []), case["expected"]
        if case["kind"] == "rs_encode":  # the codeword's symbols = message then parity
            [wire_symbols] = [r for r in mine if r.stream == 3 and r.field == 3]
            assert wire_symbols.words == tuple(case["inputs"]["message"] + exp["parity"])
        if case["kind"] == "flit_decode":
            stim = {r.stream: r.words for r in mine if r.stream in (0, 2)}
            assert stim[0] == tuple(bytes.fromhex(exp["wire"]))  # received, not sent
            # the only expected entry is the decoded flits (field 2), not the wire
            assert [r.field for r in mine if r.stream in (1, 3)] == [2]
            assert (2 in stim) == (case["inputs"]["mode"] != "none")
            if any(exp["uncorrectable"]):
                assert {r.verdict for r in mine} == {5} and mine[0].uncorrectable >= 1
                seen.add("flagged")
            if sum(exp["corrected"]):
                assert mine[0].corrected == sum(exp["corrected"]) > 0
                seen.add("corrected")
        if case["kind"] == "rs_decode" and exp["uncorrectable"]:
            assert {r.verdict for r in mine} == {5}
            seen.add("rs flagged")
    assert seen == {"flagged", "corrected", "rs flagged"}


def test_worked_example_in_the_spec_is_what_export_writes() -> None:
    block = re.search(r"Its three lines of `phy.index.memh`:\n\n```\n(.*?)```", SPEC, re.S)
    assert block is not None
    index = memh_files(_doc("phy"))["phy.index.memh"]
    lines = block.group(1).splitlines()
    assert len(lines) == 3 and all(line + "\n" in index for line in lines)
    sym = re.search(r"In `phy.stim.sym.memh` the entry opens with\n\n```\n(.*?)```", SPEC, re.S)
    assert sym is not None and sym.group(1) in memh_files(_doc("phy"))["phy.stim.sym.memh"]


def _seed_v1_decoder_layout(monkeypatch: pytest.MonkeyPatch) -> None:
    # version 1 put the received wire of flit_decode in the expected stream
    spec = export_layout.FieldSpec
    monkeypatch.setitem(export_layout.FIELDS, ("phy", "flit_decode"), (
        spec("inputs", "flits", 0), spec("expected", "wire", 1), spec("expected", "flits", 1)))


def _seed_flagged_verdict_zero(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(export_layout.VERDICT_CODES, "FecUncorrectableError", 0)


def _seed_mode_numbering(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(export_layout.MODE_CODES, "ll", 3)


def _seed_symbols_msb_first(monkeypatch: pytest.MonkeyPatch) -> None:
    # the wire's symbols read MSB first: 10-bit words in the wrong bit order
    from ualink_ref.testing import export as module

    real = module._words

    def reversed_bits(spec: Any, value: Any) -> tuple[int, ...]:
        words = real(spec, value)
        if isinstance(value, str) and export_layout.STREAMS[spec.stream].width == 10:
            return tuple(int(f"{w:010b}"[::-1], 2) for w in words)
        return words

    monkeypatch.setattr(module, "_words", reversed_bits)


@pytest.mark.parametrize("seed", [_seed_v1_decoder_layout, _seed_flagged_verdict_zero,
                                  _seed_mode_numbering, _seed_symbols_msb_first])
def test_a_seeded_export_bug_is_caught(monkeypatch: pytest.MonkeyPatch, seed: Any) -> None:
    doc = _doc("phy")
    seed(monkeypatch)
    try:
        got = _read_memh(memh_files(doc), "phy")
    except (AssertionError, KeyError):
        return  # the layout check itself failed
    assert got != _expected_records(doc)


def _export(*args: str) -> tuple[int, str, str]:
    out = subprocess.run([sys.executable, "-m", "ualink_ref.cli", "vectors", "export", *args],
                         capture_output=True, text=True, cwd=ROOT)
    return out.returncode, out.stdout, out.stderr


def test_default_export_writes_no_empty_file_and_counts_what_it_wrote(tmp_path: Path) -> None:
    code, out, err = _export("--format", "memh", "--out", str(tmp_path / "x"), "--from",
                             str(COMMITTED))
    assert (code, err) == (0, "")
    files = sorted((tmp_path / "x").iterdir())
    total = sum(len(entries(_doc(layer))) for layer in LAYERS)
    assert out == (f"wrote {len(files)} memh file(s) ({total} entries from 4 vector file(s)) "
                   f"to {tmp_path / 'x'}; nothing to export from switch\n")
    assert not any(p.name.startswith("switch.") for p in files)
    assert {p.name for p in files} >= {"phy.stim.sym.memh", "phy.expect.sym.memh"}
    for path in files:  # every file holds at least one word
        assert any(line.split("//")[0].strip() for line in path.read_text().splitlines())


def test_export_from_a_users_directory_exports_its_own_cases(tmp_path: Path) -> None:
    src = tmp_path / "mine"
    src.mkdir()
    doc = _doc("dl")
    [case] = [c for c in doc["cases"] if c["kind"] == "flit_decode"][:1]
    case["inputs"]["flit"] = "ab" * 640  # the user's own (unverified) case
    (src / "my_dl.json").write_text(json.dumps(doc))
    (src / "notes.json").write_text('{"not": "vectors"}')  # ignored, as by `vectors verify`
    code, out, err = _export("--format", "memh", "--out", str(tmp_path / "o"), "--from",
                             str(src))
    assert (code, err) == (0, "") and "from 1 vector file(s)" in out
    assert sorted(p.name for p in (tmp_path / "o").iterdir()) == [
        "my_dl.expect.memh", "my_dl.index.memh", "my_dl.stim.memh"]
    files = {p.name: p.read_text() for p in (tmp_path / "o").iterdir()}
    assert _read_memh(files, "my_dl") == _expected_records(doc)
    assert "(memh v2): my_dl (layer dl)" in files["my_dl.index.memh"]


@pytest.mark.parametrize("setup, message", [
    (lambda d: d.rmdir(), "cannot read vectors directory: not a directory"),
    (lambda d: None, "no vector files (ualink_ref-vectors) in"),
    (lambda d: (d / "dl.json").write_text(
        (COMMITTED / "dl.json").read_text().replace('"flit": "', '"flit": "zz', 1)),
     "dl: case "),
    (lambda d: (d / "dl.json").write_text(
        (COMMITTED / "dl.json").read_text().replace('"version": 1', '"version": 9', 1)),
     "dl.json: version 9"),
    (lambda d: (d / "switch.json").write_bytes((COMMITTED / "switch.json").read_bytes()),
     "nothing to export from switch"),
])
def test_export_bad_input_is_one_line_and_exit_2(tmp_path: Path, setup: Any,
                                                 message: str) -> None:
    src = tmp_path / "src"
    src.mkdir()
    setup(src)
    code, out, err = _export("--format", "csv", "--out", str(tmp_path / "o"), "--from",
                             str(src))
    assert code == 2 and out == "" and err.count("\n") == 1, err
    assert err.startswith("ualink-ref vectors export: error: ") and message in err, err
    assert not (tmp_path / "o").exists()


def test_csv_rows_equal_json(tmp_path: Path) -> None:
    assert main(["vectors", "export", "--format", "csv", "--out", str(tmp_path),
                 "--from", str(COMMITTED), "--layer", "phy"]) == 0
    assert [p.name for p in tmp_path.iterdir()] == ["phy.csv"]
    rows = list(csv.DictReader((tmp_path / "phy.csv").open()))
    want = _expected_records(_doc("phy"))
    assert len(rows) == len(want)
    for row, rec in zip(rows, want, strict=True):
        digits = DIGITS[rec.stream]
        words = tuple(int(row["hex"][i:i + digits], 16) for i in range(0, len(row["hex"]),
                                                                        digits))
        assert (int(row["case"]), int(row["kind_code"]), int(row["field_no"]),
                STREAMS[row["stream"]], int(row["mode"]), int(row["interleave"]),
                int(row["verdict"]), int(row["corrected"]), int(row["uncorrectable"]),
                words) == (rec.case, rec.kind, rec.field, rec.stream, rec.mode,
                           rec.interleave, rec.verdict, rec.corrected, rec.uncorrectable,
                           rec.words)
        assert int(row["width"]) == (8 if rec.stream < 2 else 10)


@pytest.mark.skipif(shutil.which("iverilog") is None, reason="Icarus Verilog not installed")
@pytest.mark.parametrize("layer", LAYERS)
def test_memh_loads_in_icarus_and_reproduces_json(tmp_path: Path, layer: str) -> None:
    assert main(["vectors", "export", "--format", "memh", "--out", str(tmp_path),
                 "--from", str(COMMITTED), "--layer", layer]) == 0
    want = _expected_records(_doc(layer))
    depth = {s: max(1, sum(len(r.words) for r in want if r.stream == s)) for s in range(4)}
    binary = tmp_path / "echo"
    params = [f"-Ptb_memh_echo.{name}={depth[s]}" for s, name in enumerate(
        ("STIM_DEPTH", "EXPECT_DEPTH", "STIM_SYM_DEPTH", "EXPECT_SYM_DEPTH"))]
    subprocess.run(["iverilog", "-g2005", *params, f"-Ptb_memh_echo.ENTRIES={len(want)}",
                    "-o", str(binary), str(ROOT / "examples" / "cocotb_crc" / "tb_memh_echo.v")],
                   check=True)
    plus = [f"+{arg}={tmp_path / f'{layer}.{suffix}.memh'}" for arg, suffix in (
        ("index", "index"), ("stim", "stim"), ("expect", "expect"), ("stim_sym", "stim.sym"),
        ("expect_sym", "expect.sym")) if (tmp_path / f"{layer}.{suffix}.memh").exists()]
    run = subprocess.run(["vvp", "-n", str(binary), *plus], check=True, capture_output=True,
                         text=True)
    assert "WARNING" not in run.stdout + run.stderr  # e.g. a file shorter than declared
    got = []
    for m in re.finditer(r"^E((?: \d+){9}) ([0-9a-f]*)$", run.stdout, re.M):
        case, kind, field, stream, *rest = (int(v) for v in m.group(1).split())
        digits = DIGITS[stream]
        hexed = m.group(2)
        words = tuple(int(hexed[i:i + digits], 16) for i in range(0, len(hexed), digits))
        got.append(Record(case, kind, field, stream, *rest, words))
    assert got == want
