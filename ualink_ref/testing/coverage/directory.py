"""Sampling a vectors directory: ``sample_directory(path)`` (``vectors coverage DIR``).

The files are read as ``vectors verify`` reads them — within the limits of
:mod:`ualink_ref.testing.vectors.limits` (V1-V4), ignoring JSON that is not a
vector file — and every case is sampled with
:func:`~ualink_ref.testing.coverage.cases.sample_case`. The captures a
``capture.json`` scenario names (its ``artifact``) are read with the same bounds and
sampled too. Nothing is recomputed: coverage is of what the files hold (run
``vectors verify`` for whether it is right).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from ualink_ref.errors import VectorFormatError
from ualink_ref.testing.coverage.captures import sample_capture_bytes
from ualink_ref.testing.coverage.cases import sample_case
from ualink_ref.testing.coverage.model import Coverage
from ualink_ref.testing.coverage.points import coverage_model
from ualink_ref.testing.vectors import LAYER_MODULES, VECTOR_FORMAT
from ualink_ref.testing.vectors.limits import (
    MAX_ARTIFACT_BYTES,
    MAX_CASES,
    load_vector_json,
    read_bounded,
    vector_json_names,
)


@dataclass
class DirectorySample:
    """What :func:`sample_directory` read: the coverage, the files, and problems."""

    coverage: Coverage
    files: list[str] = field(default_factory=list)
    artifacts: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)  # unreadable files (one line each)
    unsampled: int = 0  # cases of a kind without a sampler, or too malformed to read


def sample_directory(directory: Path | str) -> DirectorySample:
    """Sample every vector file (and named capture) of ``directory``.

    A ``directory`` that is not a readable directory raises
    :class:`~ualink_ref.errors.VectorFormatError`.
    """
    path = Path(directory)
    names = vector_json_names(path)
    out = DirectorySample(Coverage(coverage_model()))
    for name in names:
        try:
            doc = load_vector_json(path, name)
        except VectorFormatError as exc:
            out.errors.append(str(exc))
            continue
        if not isinstance(doc, dict) or doc.get("format") != VECTOR_FORMAT:
            continue  # other JSON a user keeps there
        layer, cases = doc.get("layer"), doc.get("cases")
        if layer not in LAYER_MODULES or not isinstance(cases, list) or len(cases) > MAX_CASES:
            out.errors.append(f"{name}: not a readable vector file (layer or cases)")
            continue
        out.files.append(name)
        for case in cases:
            if not sample_case(out.coverage, str(layer), case):
                out.unsampled += 1
            artifact = _artifact(str(layer), case)
            if artifact:
                _sample_artifact(out, path, artifact)
    return out


def _artifact(layer: str, case: object) -> str:
    if layer != "capture" or not isinstance(case, dict):
        return ""
    expected = case.get("expected")
    name = expected.get("artifact") if isinstance(expected, dict) else None
    return name if isinstance(name, str) else ""


def _sample_artifact(out: DirectorySample, directory: Path, name: str) -> None:
    try:
        data = read_bounded(directory, name, MAX_ARTIFACT_BYTES)
    except VectorFormatError as exc:
        out.errors.append(str(exc))
        return
    out.artifacts.append(name)
    sample_capture_bytes(out.coverage, data)


__all__ = ["DirectorySample", "sample_directory"]
