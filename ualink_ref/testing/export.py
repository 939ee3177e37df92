"""Golden vectors as files an HDL testbench reads: ``$readmemh`` (memh) and CSV.

Every exported field of every case (table :data:`~ualink_ref.testing.export_layout.FIELDS`)
becomes one *entry* in one of four streams: stimulus or expected response, as
bytes (8-bit words) or as Reed-Solomon symbols (10-bit words). memh output for
a vector file ``<name>.json`` (layout version 2, ``specs/difftest.md`` "Export"):

* ``<name>.stim.memh`` / ``<name>.expect.memh``: one byte per line;
* ``<name>.stim.sym.memh`` / ``<name>.expect.sym.memh``: one 10-bit symbol per line;
* ``<name>.index.memh``: one 192-bit word per entry naming its case, kind, FEC mode,
  interleave, field, stream, verdict, FEC outcome, offset and length.

A stream with no words is not written, nor are the files of a document with no
entries. CSV output is one ``<name>.csv`` with a row per entry.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ualink_ref.errors import VectorFormatError
from ualink_ref.testing.export_layout import (
    FIELDS,
    INDEX_BITS,
    KIND_CODES,
    MEMH_VERSION,
    MODE_CODES,
    MODE_KEYS,
    NO_MODE,
    OTHER_ERROR,
    STREAMS,
    VERDICT_CODES,
    FieldSpec,
    pack_index,
)
from ualink_ref.testing.vectors import (
    LAYER_MODULES,
    VECTOR_FORMAT,
    VECTOR_VERSION,
    build_document,
    load_source,
)
from ualink_ref.testing.vectors.limits import MAX_CASES, load_vector_json, vector_json_names

#: Output formats of :func:`export`.
FORMATS = ("memh", "csv")
#: Largest RS symbol value (10-bit symbols, GF(2^10)).
SYMBOL_MAX = 0x3FF


@dataclass(frozen=True)
class Entry:
    """One exported field of one case, placed in a stream at ``offset`` (in words).

    The case-level values (``kind_code``, ``mode``, ``interleave``, ``verdict``,
    ``corrected``, ``uncorrectable``) are the same for every entry of a case.
    """

    case: int
    case_id: str
    kind: str
    kind_code: int
    field_no: int
    field: str
    stream: int
    mode: int
    interleave: int
    verdict: int
    corrected: int
    uncorrectable: int
    offset: int
    words: tuple[int, ...]

    @property
    def width(self) -> int:
        """Bits per word of this entry's stream (8 or 10)."""
        return STREAMS[self.stream].width

    @property
    def data(self) -> bytes:
        """The words as bytes (byte streams only)."""
        if self.width != 8:
            raise ValueError(f"{self.case_id} {self.field}: a symbol entry has no bytes")
        return bytes(self.words)

    def hex(self) -> str:
        """The words as fixed-width hex digits, concatenated (2 per byte, 3 per symbol)."""
        digits = STREAMS[self.stream].digits
        return "".join(f"{w:0{digits}x}" for w in self.words)

    def index_word(self) -> int:
        """The 192-bit index word (specs/difftest.md X6)."""
        try:
            return pack_index({
                "version": MEMH_VERSION, "kind": self.kind_code, "case": self.case,
                "field": self.field_no, "stream": self.stream, "mode": self.mode,
                "interleave": self.interleave, "verdict": self.verdict,
                "uncorrectable": self.uncorrectable, "corrected": self.corrected,
                "offset": self.offset, "length": len(self.words)})
        except ValueError as exc:
            raise VectorFormatError(str(exc), f"case {self.case_id}") from None


def verdict_code(expected: Mapping[str, Any]) -> int:
    """The verdict code of a case's expected outputs (specs/difftest.md X5)."""
    error = expected.get("error")
    if error:
        return VERDICT_CODES.get(str(error), OTHER_ERROR)
    if _count_flagged(expected.get("uncorrectable", False)):
        return VERDICT_CODES["FecUncorrectableError"]
    return 0


def _count_flagged(value: Any) -> int:
    flags = value if isinstance(value, list) else [value]
    if not all(isinstance(f, bool) for f in flags):
        raise VectorFormatError(f"uncorrectable must be a bool or a list of bools, "
                                f"got {value!r:.60}")
    return sum(flags)


def _total_corrected(value: Any) -> int:
    counts = value if isinstance(value, list) else [value]
    if not all(isinstance(c, int) and not isinstance(c, bool) and c >= 0 for c in counts):
        raise VectorFormatError(f"corrected must be a count or a list of counts, "
                                f"got {value!r:.60}")
    return sum(counts)


def _mode(inputs: Mapping[str, Any]) -> tuple[int, bool]:
    """(index mode code, True when the mode codes RS symbols) of a case's inputs."""
    for key in MODE_KEYS:
        if key in inputs:
            name = inputs[key]
            if name not in MODE_CODES:
                raise VectorFormatError(f"inputs.{key}: unknown FEC mode {name!r:.40} "
                                        f"(choose from {', '.join(MODE_CODES)})")
            return MODE_CODES[name], name != "none"
    return NO_MODE, False


def _interleave(inputs: Mapping[str, Any]) -> int:
    value = inputs.get("interleave", 0)
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= 0xFF:
        raise VectorFormatError(f"inputs.interleave must be an int 0..255, got {value!r:.40}")
    return value


def _words(spec: FieldSpec, value: Any) -> tuple[int, ...]:
    """A field's value as stream words: bytes of a hex string, or 10-bit symbols of a
    symbol list or of a hex string of packed symbols (LSB first, specs/phy.md)."""
    if isinstance(value, list):
        if STREAMS[spec.stream].width != 10 or not all(
                isinstance(s, int) and not isinstance(s, bool) and 0 <= s <= SYMBOL_MAX
                for s in value):
            raise VectorFormatError(f"{spec.name}: expected a list of 10-bit symbols")
        return tuple(value)
    if not isinstance(value, str):
        raise VectorFormatError(f"{spec.name}: expected hex, got {type(value).__name__}")
    try:
        data = bytes.fromhex(value)
    except ValueError:
        raise VectorFormatError(f"{spec.name}: not hex: {value!r:.40}") from None
    if STREAMS[spec.stream].width == 8:
        return tuple(data)
    bits = 8 * len(data)
    if bits % 10:
        raise VectorFormatError(f"{spec.name}: {len(data)} bytes is not a whole number of "
                                f"10-bit symbols")
    packed = int.from_bytes(data, "little")  # wire bit 10 i + b is bit b of symbol i
    return tuple((packed >> (10 * i)) & SYMBOL_MAX for i in range(bits // 10))


def entries(doc: Mapping[str, Any]) -> list[Entry]:
    """Every exported field of a vector document, in case then field order, with the
    offset of each in its stream. Raises :class:`VectorFormatError` for a case whose
    exported fields are missing or malformed."""
    layer = str(doc.get("layer"))
    cases = doc.get("cases")
    if not isinstance(cases, list):
        raise VectorFormatError("cases must be a list")
    out: list[Entry] = []
    offsets = dict.fromkeys(STREAMS, 0)
    for number, case in enumerate(cases):
        if not isinstance(case, dict):
            raise VectorFormatError("a case must be an object", f"case #{number}")
        kind = str(case.get("kind"))
        specs = FIELDS.get((layer, kind))
        if specs is None:
            continue
        case_id = str(case.get("id", f"#{number}"))
        try:
            out.extend(_case_entries(number, case_id, kind, layer, case, specs, offsets))
        except VectorFormatError as exc:
            raise VectorFormatError(str(exc), f"case {case_id}") from None
    return out


def _case_entries(number: int, case_id: str, kind: str, layer: str, case: Mapping[str, Any],
                  specs: tuple[FieldSpec, ...], offsets: dict[int, int]) -> list[Entry]:
    inputs, expected = case.get("inputs"), case.get("expected")
    if not isinstance(inputs, dict) or not isinstance(expected, dict):
        raise VectorFormatError("inputs and expected must be objects")
    if number > 0xFFFF:
        raise VectorFormatError(f"case number {number} does not fit the 16-bit index field")
    mode, coded = _mode(inputs)
    interleave, verdict = _interleave(inputs), verdict_code(expected)
    corrected = _total_corrected(expected.get("corrected", 0))
    flagged = _count_flagged(expected.get("uncorrectable", False))
    out = []
    for field_no, spec in enumerate(specs):
        if spec.fec_only and not coded:
            continue
        where = inputs if spec.source == "inputs" else expected
        if spec.key not in where:
            raise VectorFormatError(f"{spec.name} is missing")
        words = _words(spec, where[spec.key])
        out.append(Entry(number, case_id, kind, KIND_CODES[(layer, kind)], field_no,
                         spec.name, spec.stream, mode, interleave, verdict, corrected,
                         flagged, offsets[spec.stream], words))
        offsets[spec.stream] += len(words)
    return out


def _header(doc: Mapping[str, Any], name: str, what: str, width: int,
            found: list[Entry]) -> list[str]:
    lines = [f"// ualink_ref vectors export (memh v{MEMH_VERSION}): {name} "
             f"(layer {doc.get('layer')}), {what}",
             f"// word width {width} bits; layout in specs/difftest.md (Export)",
             "// cases (number id):"]
    seen: dict[int, str] = {}
    for e in found:
        seen.setdefault(e.case, e.case_id)
    lines += [f"//   {n} {case_id}" for n, case_id in seen.items()]
    return lines


def memh_files(doc: Mapping[str, Any], name: str | None = None) -> dict[str, str]:
    """The memh files of one vector document, by file name (``name`` defaults to the
    layer): the index and every stream holding at least one word; none when the
    document has no entries."""
    stem = str(doc.get("layer")) if name is None else name
    found = entries(doc)
    if not found:
        return {}
    texts: dict[str, str] = {}
    for number, stream in STREAMS.items():
        mine = [e for e in found if e.stream == number]
        if not any(e.words for e in mine):
            continue
        kind = "expected response" if stream.expected else "stimulus"
        unit = "bytes" if stream.width == 8 else "10-bit symbols"
        lines = _header(doc, stem, f"{kind} {unit}", stream.width, found)
        for e in mine:
            lines.append(f"// case {e.case} {e.case_id} {e.field} offset {e.offset} "
                         f"length {len(e.words)}")
            if e.words:
                lines.append(f"@{e.offset:x}")
                lines.extend(f"{w:0{stream.digits}x}" for w in e.words)
        texts[f"{stem}.{stream.suffix}.memh"] = "\n".join(lines) + "\n"
    index = _header(doc, stem, "index: one word per entry", INDEX_BITS, found)
    index += [f"{e.index_word():0{INDEX_BITS // 4}x} // case {e.case} {e.case_id} "
              f"{STREAMS[e.stream].suffix} {e.field}" for e in found]
    texts[f"{stem}.index.memh"] = "\n".join(index) + "\n"
    return texts


#: CSV columns, one row per entry.
CSV_COLUMNS = ("case", "id", "kind", "kind_code", "field_no", "field", "stream", "width",
               "mode", "interleave", "verdict", "corrected", "uncorrectable", "offset",
               "length", "hex")


def csv_text(doc: Mapping[str, Any]) -> str:
    """The CSV of one vector document (header and one row per entry); ``""`` when it has
    no entries. ``hex`` is the words as 2 (bytes) or 3 (symbols) hex digits each."""
    found = entries(doc)
    if not found:
        return ""
    buffer = io.StringIO()
    out = csv.writer(buffer, lineterminator="\n")
    out.writerow(CSV_COLUMNS)
    for e in found:
        out.writerow([e.case, e.case_id, e.kind, e.kind_code, e.field_no, e.field,
                      STREAMS[e.stream].suffix, e.width, e.mode, e.interleave, e.verdict,
                      e.corrected, e.uncorrectable, e.offset, len(e.words), e.hex()])
    return buffer.getvalue()


@dataclass(frozen=True)
class ExportResult:
    """What :func:`export` wrote: the files, the entries, and the documents with none."""

    paths: tuple[Path, ...]
    entries: int
    skipped: tuple[str, ...]


def export(out_dir: Path, fmt: str, docs: Mapping[str, Mapping[str, Any]]) -> ExportResult:
    """Write ``fmt`` (``memh`` or ``csv``) files for each vector document, by output name;
    a document with no entries writes nothing and is listed in ``skipped``. Every
    document is checked before the first file is written."""
    if fmt not in FORMATS:
        raise ValueError(f"unknown export format {fmt!r} (choose from {', '.join(FORMATS)})")
    texts: dict[str, str] = {}
    count = 0
    skipped = []
    for name, doc in docs.items():  # everything is checked before the first file is written
        try:
            found = len(entries(doc))
            files = memh_files(doc, name) if fmt == "memh" else {f"{name}.csv": csv_text(doc)}
        except VectorFormatError as exc:
            raise VectorFormatError(str(exc), name) from None
        if not found:
            skipped.append(name)
            continue
        count += found
        texts.update(files)
    if texts:  # nothing to write: not even the directory
        out_dir.mkdir(parents=True, exist_ok=True)
    paths = []
    for file_name, text in texts.items():
        path = out_dir / file_name
        path.write_text(text, encoding="ascii")
        paths.append(path)
    return ExportResult(tuple(paths), count, tuple(skipped))


def model_documents(layers: Iterable[str] | None = None) -> dict[str, dict[str, Any]]:
    """The golden-vector documents the model generates, by layer (the committed
    ``vectors/`` hold the same, as ``vectors generate`` writes them)."""
    return {layer: build_document(load_source(layer)) for layer in (layers or LAYER_MODULES)}


def read_documents(directory: Path, layers: Iterable[str] | None = None
                   ) -> dict[str, dict[str, Any]]:
    """The vector documents of ``directory`` (``*.json`` of format ``ualink_ref-vectors``,
    read within the limits of ``specs/vectors.md``), by file stem, optionally only
    those of ``layers``. Other JSON is ignored. Raises :class:`VectorFormatError` for an
    unreadable directory or file, a wrong version, or when no document is found."""
    wanted = set(layers) if layers else None
    names = vector_json_names(directory)
    docs: dict[str, dict[str, Any]] = {}
    for name in names:
        doc = load_vector_json(directory, name)
        if not isinstance(doc, dict) or doc.get("format") != VECTOR_FORMAT:
            continue  # not a vector file (a difftest reproducer, the user's own JSON)
        if doc.get("version") != VECTOR_VERSION:
            raise VectorFormatError(f"version {doc.get('version')!r:.20} (this model reads "
                                    f"{VECTOR_VERSION})", name)
        cases = doc.get("cases")
        if isinstance(cases, list) and len(cases) > MAX_CASES:
            raise VectorFormatError(f"{len(cases)} cases (limit {MAX_CASES})", name)
        if wanted is None or doc.get("layer") in wanted:
            docs[name.removesuffix(".json")] = doc
    if not docs:
        only = f" of layer {', '.join(sorted(wanted))}" if wanted else ""
        raise VectorFormatError(f"no vector files{only} ({VECTOR_FORMAT}) in {directory}")
    return docs


__all__ = ["CSV_COLUMNS", "FORMATS", "SYMBOL_MAX", "Entry", "ExportResult", "csv_text",
           "entries", "export", "memh_files", "model_documents", "read_documents",
           "verdict_code"]
