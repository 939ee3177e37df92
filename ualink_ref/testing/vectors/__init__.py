"""Golden test vectors: generation and verification for every layer.

Each layer contributes a *vector source* module (listed in
:data:`LAYER_MODULES`) that exposes:

* ``LAYER: str`` and ``DESCRIPTION: str``;
* ``vector_inputs() -> list[VectorInput]``: the cases, as inputs only;
* ``compute(kind: str, inputs: dict) -> dict``: the model's expected outputs
  for one case (JSON-ready values);
* optionally ``artifacts() -> dict[str, bytes]``: extra files (e.g. pcaps);
* optionally ``artifact_mismatches(name, file_bytes, model_bytes)``: where an
  artifact differs, as ``(case, field, file value, model value)`` tuples, so
  that ``verify`` reports an artifact by case and field, not just "differs".

Generation runs ``compute`` on every input and writes one canonical JSON file
per layer (``<layer>.json``); verification re-runs ``compute`` on the inputs
found in a directory and reports every field that differs. Because both paths
share ``compute``, a vector directory produced by someone else's RTL or
firmware (same layout, their outputs) is checked field by field against the
model. The layout is documented in ``specs/vectors.md``.
"""

from __future__ import annotations

import importlib
import json
import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any, Protocol, cast

from ualink_ref.errors import VectorFormatError
from ualink_ref.testing.vectors.limits import (
    MAX_ARTIFACT_BYTES,
    MAX_CASES,
    load_vector_json,
    read_bounded,
    vector_json_names,
)

#: Value of the ``format`` key of every vector file.
VECTOR_FORMAT = "ualink_ref-vectors"
#: Layout version; bumped on any incompatible change to the JSON layout.
VECTOR_VERSION = 1

#: Layer name -> module providing its vector source. Order is generation order.
LAYER_MODULES: dict[str, str] = {
    "phy": "ualink_ref.testing.vectors.phy",
    "dl": "ualink_ref.testing.vectors.dl",
    "tl": "ualink_ref.testing.vectors.tl",
    "capture": "ualink_ref.testing.vectors.capture",
    "switch": "ualink_ref.testing.vectors.switch",
}


@dataclass(frozen=True)
class VectorInput:
    """One golden-vector case before its expected outputs are computed."""

    id: str
    kind: str
    inputs: dict[str, Any]
    note: str = ""


@dataclass(frozen=True)
class Mismatch:
    """One difference between a vector file and the model."""

    file: str
    case: str
    field: str
    expected: Any
    actual: Any

    def __str__(self) -> str:
        at = _first_difference(self.expected, self.actual)
        where = f" (first difference at index {at})" if at is not None else ""
        return (
            f"{self.file}: case {self.case!r} field {self.field!r}{where}: "
            f"file has {_short(self.expected, at)}, model gives {_short(self.actual, at)}"
        )


class VectorSource(Protocol):
    """What a layer's vector module provides (see the module docstring)."""

    LAYER: str
    DESCRIPTION: str

    def vector_inputs(self) -> list[VectorInput]:
        """The layer's cases, inputs only."""

    def compute(self, kind: str, inputs: dict[str, Any]) -> dict[str, Any]:
        """Expected outputs of one case."""


@dataclass
class VerifyReport:
    """Outcome of :func:`verify_dir`: cases checked, every mismatch found, and every
    file that could not be read as vectors (``errors``: one line each)."""

    files: list[str] = field(default_factory=list)  # vector (JSON) files
    cases: int = 0  # JSON cases plus artifacts, each artifact one case
    artifacts: list[str] = field(default_factory=list)  # artifact files (pcaps) checked
    mismatches: list[Mismatch] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """True when at least one case was checked and nothing differed or failed."""
        return self.cases > 0 and not self.mismatches and not self.errors

    @property
    def exit_status(self) -> int:
        """0: all match; 1: mismatches (and every file was valid); 2: invalid input (an
        unreadable or over-limit file or artifact) or nothing found — the check is
        incomplete, whatever else was found."""
        if self.errors or self.cases == 0:
            return 2
        return 1 if self.mismatches else 0


def hexstr(data: bytes) -> str:
    """Bytes as a lowercase hex string: the JSON encoding of every byte field."""
    return data.hex()


def unhex(text: str) -> bytes:
    """Inverse of :func:`hexstr`; raises ``ValueError`` on bad hex."""
    return bytes.fromhex(text)


def dump_json(doc: Any) -> str:
    """Canonical JSON text: sorted keys, fixed indent, ASCII, trailing newline.

    Canonical so that two generations are byte-identical and diffs are small.
    """
    return json.dumps(doc, sort_keys=True, indent=1, ensure_ascii=True) + "\n"


def load_source(layer: str) -> VectorSource:
    """Import the vector source module of ``layer``."""
    module: ModuleType = importlib.import_module(LAYER_MODULES[layer])
    return cast(VectorSource, module)


def build_document(source: VectorSource) -> dict[str, Any]:
    """Compute every case of ``source`` into a vector document."""
    cases = []
    seen: set[str] = set()
    for case in source.vector_inputs():
        if case.id in seen:
            raise ValueError(f"duplicate vector id {case.id!r} in layer {source.LAYER}")
        seen.add(case.id)
        entry: dict[str, Any] = {
            "id": case.id,
            "kind": case.kind,
            "inputs": case.inputs,
            "expected": source.compute(case.kind, case.inputs),
        }
        if case.note:
            entry["note"] = case.note
        cases.append(entry)
    return {
        "format": VECTOR_FORMAT,
        "version": VECTOR_VERSION,
        "layer": source.LAYER,
        "description": source.DESCRIPTION,
        "cases": cases,
    }


def generate(out_dir: Path, layers: Iterable[str] | None = None) -> list[Path]:
    """Write every layer's vectors (and artifacts) into ``out_dir``; return the paths."""
    out_dir.mkdir(parents=True, exist_ok=True)
    written = []
    for layer in layers or LAYER_MODULES:
        source = load_source(layer)
        path = out_dir / f"{layer}.json"
        path.write_text(dump_json(build_document(source)), encoding="ascii")
        written.append(path)
        artifacts = cast(Callable[[], dict[str, bytes]] | None, getattr(source, "artifacts", None))
        if artifacts is not None:
            for name, data in sorted(artifacts().items()):
                target = out_dir / name
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(data)
                written.append(target)
    return written


def verify_dir(directory: Path) -> VerifyReport:
    """Check every vector file (and known artifact) in ``directory`` against the model.

    Files are read within the limits of :mod:`ualink_ref.testing.vectors.limits`;
    a file that cannot be read is recorded in ``errors`` (one line) and the others
    are still checked. A ``directory`` that is not a readable directory raises
    :class:`~ualink_ref.errors.VectorFormatError`.
    """
    if not isinstance(directory, str | Path):
        raise VectorFormatError(f"vectors directory must be a path, got "
                                f"{type(directory).__name__}")
    directory = Path(directory)
    names = vector_json_names(directory)
    report = VerifyReport()
    for name in names:
        try:
            doc = load_vector_json(directory, name)
            if not isinstance(doc, dict) or doc.get("format") != VECTOR_FORMAT:
                continue  # not a vector file: ignore other JSON a user keeps there
            cases = doc.get("cases")
            if isinstance(cases, list) and len(cases) > MAX_CASES:
                raise VectorFormatError(f"{len(cases)} cases (limit {MAX_CASES})", name)
        except VectorFormatError as exc:
            report.errors.append(str(exc))
            continue
        report.files.append(name)
        _verify_document(name, doc, directory, report)
    return report


def _verify_document(name: str, doc: dict[str, Any], directory: Path, report: VerifyReport) -> None:
    layer = doc.get("layer")
    if doc.get("version") != VECTOR_VERSION:
        report.mismatches.append(
            Mismatch(name, "-", "version", doc.get("version"), VECTOR_VERSION)
        )
        return
    if not isinstance(layer, str) or layer not in LAYER_MODULES:
        report.mismatches.append(Mismatch(name, "-", "layer", layer, sorted(LAYER_MODULES)))
        return
    source = load_source(str(layer))
    cases = doc.get("cases")
    if not isinstance(cases, list):
        report.mismatches.append(Mismatch(name, "-", "cases", cases, "a list"))
        return
    for index, case in enumerate(cases):
        report.cases += 1
        report.mismatches.extend(_verify_case(name, index, case, source))
    artifacts = cast(Callable[[], dict[str, bytes]] | None, getattr(source, "artifacts", None))
    if artifacts is not None:
        for art_name, data in sorted(artifacts().items()):
            report.cases += 1
            report.artifacts.append(art_name)
            if not os.path.lexists(directory / art_name):
                # the layer's JSON names its artifacts: one missing is a finding
                report.mismatches.append(
                    Mismatch(art_name, "-", "<file>", "missing", "present"))
                continue
            try:
                file_bytes = read_bounded(directory, art_name, MAX_ARTIFACT_BYTES)
            except VectorFormatError as exc:  # a device, a directory, outside, too big
                report.errors.append(str(exc))
                continue
            if file_bytes != data:
                report.mismatches.extend(_artifact_mismatches(source, art_name, file_bytes, data))


def _artifact_mismatches(source: VectorSource, name: str, file_bytes: bytes,
                         model_bytes: bytes) -> list[Mismatch]:
    explain = cast(
        Callable[[str, bytes, bytes], list[tuple[str, str, Any, Any]]] | None,
        getattr(source, "artifact_mismatches", None),
    )
    found = explain(name, file_bytes, model_bytes) if explain is not None else []
    if not found:  # no layer-specific diff: name the first differing byte
        n = min(len(file_bytes), len(model_bytes))
        at = next((i for i in range(n) if file_bytes[i] != model_bytes[i]), n)
        found = [("-", f"<byte {at}>", file_bytes[at:at + 8].hex(), model_bytes[at:at + 8].hex())]
    return [Mismatch(name, case, fld, exp, act) for case, fld, exp, act in found]


def _verify_case(name: str, index: int, case: Any, source: VectorSource) -> list[Mismatch]:
    if not isinstance(case, dict):
        return [Mismatch(name, f"#{index}", "<case>", case, "an object")]
    case_id = str(case.get("id", f"#{index}"))
    expected = case.get("expected")
    if not isinstance(expected, dict):
        return [Mismatch(name, case_id, "expected", expected, "an object")]
    try:
        actual = source.compute(str(case.get("kind")), dict(case.get("inputs") or {}))
    except Exception as exc:
        # Edited inputs may break compute in any way (bad hex, huge ints, wrong
        # types): whatever happens is this case's mismatch, never a traceback.
        return [Mismatch(name, case_id, "<compute>", "outputs", f"{type(exc).__name__}: {exc}")]
    found = []
    for key in sorted(set(expected) | set(actual)):
        # Compare as canonical JSON, so `true` is not taken for `1`, nor `1.0` for `1`.
        if _canonical(expected.get(key)) != _canonical(actual.get(key)):
            found.append(Mismatch(name, case_id, key, expected.get(key), actual.get(key)))
    return found


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True)


def _first_difference(a: Any, b: Any) -> int | None:
    """Index of the first differing item of two long strings or lists, else None.

    Long hex strings and symbol lists differ deep inside; printing only their
    first 80 characters would show two identical prefixes.
    """
    if type(a) is not type(b) or not isinstance(a, str | list) or a == b:
        return None
    if len(json.dumps(a)) <= 80 and len(json.dumps(b)) <= 80:
        return None
    n = min(len(a), len(b))
    return next((i for i in range(n) if a[i] != b[i]), n)


def _short(value: Any, at: int | None = None, limit: int = 80) -> str:
    if at and isinstance(value, str | list) and at > 8:  # show the neighbourhood of index `at`
        lead = at - 8
        rest = value[lead:]
        text = json.dumps(rest) if not isinstance(rest, str) else repr(rest)
        text = f"[{lead}:] " + text
    else:
        text = json.dumps(value) if not isinstance(value, str) else repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."
