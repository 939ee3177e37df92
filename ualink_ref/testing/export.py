"""Golden vectors as files an HDL testbench reads: ``$readmemh`` (memh) and CSV.

For each layer, every byte-string field of every case (table :data:`BYTE_FIELDS`)
becomes one *entry*: the case's input bytes go to the stimulus stream, its
expected output bytes to the expected-response stream. memh output per layer:

* ``<layer>.stim.memh`` / ``<layer>.expect.memh`` — one byte (2 hex digits)
  per line; each entry starts with a comment naming the case and field and an
  ``@address`` line (the byte offset);
* ``<layer>.index.memh`` — one 128-bit word (32 hex digits) per entry:
  ``case[127:112] stream[111:104] field[103:96] verdict[95:88] 0[87:64]
  offset[63:32] length[31:0]`` (stream 0 stimulus, 1 expected; verdict codes
  in :data:`VERDICT_CODES`).

Every file opens with a comment header naming the layer, the word width and
every case id with its number. CSV output is one ``<layer>.csv`` with a row
per entry (the bytes as hex). The layout is specified in ``specs/difftest.md``.
"""

from __future__ import annotations

import csv
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ualink_ref.testing.vectors import LAYER_MODULES, build_document, load_source

#: (layer, kind) -> (input keys, expected keys) holding byte strings as hex.
BYTE_FIELDS: dict[tuple[str, str], tuple[tuple[str, ...], tuple[str, ...]]] = {
    ("phy", "rs_encode"): ((), ("wire",)),
    ("phy", "flit_encode"): (("flits",), ("wire",)),
    ("phy", "flit_decode"): (("flits",), ("wire", "flits")),
    ("dl", "flit_encode"): (("tl",), ("flit", "header", "crc")),
    ("dl", "flit_decode"): (("flit",), ()),
    ("dl", "message_encode"): ((), ("word",)),
    ("tl", "field_encode"): ((), ("hex",)),
    ("tl", "field_decode"): (("hex",), ()),
    ("tl", "control_half"): ((), ("hex",)),
    ("tl", "dissect"): (("flit",), ()),
    ("tl", "credit_grant"): ((), ("flit",)),
    ("capture", "pseudo_header"): (("data",), ("hex",)),
    ("capture", "pcap_file"): (("data",), ("pcap", "pcapng")),
}

#: Verdict code of a case, from its expected ``error`` (0: accepted or not a decoder).
VERDICT_CODES: dict[str, int] = {"TruncatedError": 1, "CrcError": 2, "FieldRangeError": 3,
                                 "ReservedBitsError": 4}
#: Verdict code of an error class not in :data:`VERDICT_CODES`.
OTHER_ERROR = 0xFF
STIM, EXPECT = 0, 1
FORMATS = ("memh", "csv")


@dataclass(frozen=True)
class Entry:
    """One byte string of one case, placed in a stream."""

    case: int
    case_id: str
    stream: int
    field_no: int
    field: str
    verdict: int
    offset: int
    data: bytes

    def index_word(self) -> str:
        """The 128-bit index word as 32 hex digits."""
        word = ((self.case << 112) | (self.stream << 104) | (self.field_no << 96)
                | (self.verdict << 88) | (self.offset << 32) | len(self.data))
        return f"{word:032x}"


def verdict_code(expected: dict[str, Any]) -> int:
    """The verdict code of a case's expected outputs."""
    error = expected.get("error")
    if not error:
        return 0
    return VERDICT_CODES.get(str(error), OTHER_ERROR)


def entries(doc: dict[str, Any]) -> list[Entry]:
    """Every exported byte string of a vector document, with stream offsets."""
    layer = str(doc["layer"])
    out: list[Entry] = []
    offsets = [0, 0]
    for number, case in enumerate(doc["cases"]):
        keys = BYTE_FIELDS.get((layer, str(case["kind"])))
        if keys is None:
            continue
        verdict = verdict_code(case["expected"])
        for stream, (where, names) in enumerate(((case["inputs"], keys[0]),
                                                 (case["expected"], keys[1]))):
            for name in names:
                if name not in where:
                    continue
                data = bytes.fromhex(str(where[name]))
                prefix = "inputs" if stream == STIM else "expected"
                field_no = (keys[0] + keys[1]).index(name)
                out.append(Entry(number, str(case["id"]), stream, field_no, f"{prefix}.{name}",
                                 verdict, offsets[stream], data))
                offsets[stream] += len(data)
    return out


def _header(doc: dict[str, Any], what: str, width: int) -> list[str]:
    lines = [f"// ualink_ref vectors export (memh v1): layer {doc['layer']}, {what}",
             f"// word width {width} bits; layout in specs/difftest.md",
             "// cases (number id):"]
    lines += [f"//   {n} {c['id']}" for n, c in enumerate(doc["cases"])
              if (doc["layer"], c["kind"]) in BYTE_FIELDS]
    return lines


def memh_files(doc: dict[str, Any]) -> dict[str, str]:
    """The three memh files of one layer's vector document, by file name."""
    layer = doc["layer"]
    found = entries(doc)
    texts: dict[str, str] = {}
    for stream, name in ((STIM, "stim"), (EXPECT, "expect")):
        lines = _header(doc, f"{'stimulus' if stream == STIM else 'expected response'} bytes", 8)
        for e in (e for e in found if e.stream == stream):
            lines.append(f"// case {e.case} {e.case_id} {e.field} offset {e.offset} "
                         f"length {len(e.data)}")
            if e.data:
                lines.append(f"@{e.offset:x}")
                lines.extend(f"{b:02x}" for b in e.data)
        texts[f"{layer}.{name}.memh"] = "\n".join(lines) + "\n"
    index = _header(doc, "index: case stream field verdict 0 offset length", 128)
    for e in found:
        index.append(f"{e.index_word()} // case {e.case} {e.case_id} {e.field}")
    texts[f"{layer}.index.memh"] = "\n".join(index) + "\n"
    return texts


def write_csv(doc: dict[str, Any], path: Path) -> None:
    """One row per entry: case, id, kind, stream, field, verdict, offset, length, hex."""
    with path.open("w", newline="", encoding="ascii") as f:
        out = csv.writer(f, lineterminator="\n")
        out.writerow(["case", "id", "kind", "stream", "field", "verdict", "offset", "length",
                      "hex"])
        for e in entries(doc):
            out.writerow([e.case, e.case_id, doc["cases"][e.case]["kind"],
                          "stim" if e.stream == STIM else "expect", e.field, e.verdict,
                          e.offset, len(e.data), e.data.hex()])


def export(out_dir: Path, fmt: str, docs: Iterable[dict[str, Any]]) -> list[Path]:
    """Write ``fmt`` (``memh`` or ``csv``) files for each vector document; return the paths."""
    if fmt not in FORMATS:
        raise ValueError(f"unknown export format {fmt!r} (choose from {', '.join(FORMATS)})")
    out_dir.mkdir(parents=True, exist_ok=True)
    written = []
    for doc in docs:
        if fmt == "csv":
            path = out_dir / f"{doc['layer']}.csv"
            write_csv(doc, path)
            written.append(path)
            continue
        for name, text in memh_files(doc).items():
            path = out_dir / name
            path.write_text(text, encoding="ascii")
            written.append(path)
    return written


def model_documents(layers: Iterable[str] | None = None) -> list[dict[str, Any]]:
    """The golden-vector documents the model generates (as ``vectors generate`` writes)."""

    return [build_document(load_source(layer)) for layer in (layers or LAYER_MODULES)]


__all__ = ["BYTE_FIELDS", "FORMATS", "OTHER_ERROR", "VERDICT_CODES", "Entry", "entries",
           "export", "memh_files", "model_documents", "verdict_code", "write_csv"]
