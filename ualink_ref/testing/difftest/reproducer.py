"""Reproducers: a difftest failure as a golden-vector file, and its replay.

The file has the golden-vector layout of ``specs/vectors.md``: one case whose
``kind`` and ``inputs`` are the layer's own vector kind when the input maps
onto one (then ``ualink-ref vectors verify`` checks it and it can be committed
as a regression vector) with ``expected`` computed by the model. Each case
also carries a ``difftest`` object: codec, seed, the request line, both
response lines and the differing fields, or, when the target crashed, hung
or broke the line protocol, its ``fault``. When no vector kind fits (e.g. a
capture record, or a PHY wire of the wrong length) the file's ``format`` is
``ualink_ref-difftest`` instead, so ``vectors verify`` skips it; ``ualink-ref
difftest replay FILE --target CMD`` replays both kinds of file.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ualink_ref.errors import (
    TargetCrashed,
    TargetProtocolError,
    TargetTimeout,
    VectorFormatError,
)
from ualink_ref.testing.difftest.api import (
    Failure,
    Fault,
    LineTarget,
    TargetDriver,
    model_outcome,
)
from ualink_ref.testing.difftest.layers import CODECS, Codec
from ualink_ref.testing.difftest.lengths import length_error
from ualink_ref.testing.difftest.protocol import Difference, compare
from ualink_ref.testing.vectors import VECTOR_FORMAT, VECTOR_VERSION, dump_json, load_source

#: ``format`` of a reproducer whose case maps onto no golden-vector kind.
DIFFTEST_FORMAT = "ualink_ref-difftest"


def reproducer_document(codec_name: str, failure: Failure, seed: int) -> dict[str, Any]:
    """The golden-vector document of one failure (a disagreement or a target fault)."""
    codec = CODECS[codec_name]
    # A length difftest answers itself (lengths.py) is no vector case of the library function.
    mapped = None if length_error(codec_name, failure.case.data) else codec.vector(
        failure.case.data)
    expected: dict[str, Any] | None = None
    if mapped is not None:
        try:
            expected = load_source(codec.layer).compute(mapped[0], mapped[1])
        except Exception:  # the model cannot express this input as a vector case
            expected = None
    fmt = VECTOR_FORMAT if mapped is not None and expected is not None else DIFFTEST_FORMAT
    kind, inputs = mapped if fmt == VECTOR_FORMAT and mapped else (
        "difftest", {"request": failure.request})
    if expected is None:
        expected = {"response": failure.model.line()}
    if failure.fault is not None:
        what = f"target fault {failure.fault.line()}"
    else:
        what = "target differs in " + ", ".join(d.field for d in failure.differences)
    info: dict[str, Any] = {
        "codec": codec_name,
        "seed": seed,
        "source": failure.case.source,
        "request": failure.request,
        "model": failure.model.line(),
        "target": failure.target.line() if failure.target is not None else None,
        "differences": [{"field": d.field, "model": _jsonable(d.model),
                         "target": _jsonable(d.target)} for d in failure.differences],
    }
    if failure.fault is not None:
        info["fault"] = fault_document(failure.fault)
    if failure.note:
        info["note"] = failure.note
    case = {
        "id": f"difftest-{codec_name}-seed{seed}",
        "kind": kind,
        "inputs": inputs,
        "expected": expected,
        "note": f"difftest {codec_name} seed {seed}: {what}",
        "difftest": info,
    }
    return {"format": fmt, "version": VECTOR_VERSION, "layer": codec.layer,
            "description": f"difftest reproducer ({codec.summary})", "cases": [case]}


def fault_document(fault: Fault) -> dict[str, Any]:
    """The ``fault`` object of a reproducer case (``specs/difftest.md``, "Reproducer")."""
    error = fault.error
    doc: dict[str, Any] = {"class": fault.kind, "message": str(error), "line": error.line,
                           "answered_before": fault.answered_before, "recurs": fault.recurs}
    if fault.retry:
        doc["retry"] = fault.retry
    if isinstance(error, TargetCrashed):
        doc["status"], doc["signal"] = error.status, error.signal
    if isinstance(error, TargetTimeout):
        doc["timeout"] = error.seconds
    return doc


def _jsonable(value: Any) -> Any:
    try:
        json.dumps(value)
    except TypeError:
        return repr(value)
    return value


def write_reproducer(out_dir: Path, codec_name: str, failure: Failure, seed: int) -> Path:
    """Write the reproducer as ``<out_dir>/difftest-<codec>-seed<seed>.json``; return the path."""
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / f"difftest-{codec_name}-seed{seed}.json"
    path.write_text(dump_json(reproducer_document(codec_name, failure, seed)), encoding="ascii")
    return path


@dataclass(frozen=True)
class ReplayResult:
    """One replayed case: the differing fields, or the target's fault (``None``: none)."""

    case_id: str
    differences: tuple[Difference, ...]
    fault: TargetProtocolError | None = None

    @property
    def agrees(self) -> bool:
        """True when the target now answers the case as the model does."""
        return not self.differences and self.fault is None


#: One case of a reproducer: its id, its codec and its input value.
ReproducerCase = tuple[str, Codec, Any]


def read_reproducer(path: Path) -> list[ReproducerCase]:
    """(case id, codec, input) of each case of a reproducer file; ``VectorFormatError`` if it
    is not one (read before any target is started, so a bad file costs no start-up)."""
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
        out = []
        for n, case in enumerate(doc["cases"]):
            info = case["difftest"]
            codec = CODECS[str(info["codec"])]
            out.append((str(case.get("id", n)), codec, codec.parse_request(str(info["request"]))))
    except (ValueError, KeyError, TypeError, AttributeError) as exc:  # JSON, hex, shape
        raise VectorFormatError(f"not a difftest reproducer ({type(exc).__name__}: {exc})",
                                str(path)) from None
    return out


def replay_results(path: Path, target: Any | LineTarget) -> list[ReplayResult]:
    """Re-run every difftest case of a reproducer file against ``target``; a target
    that crashes, hangs or breaks the protocol on a case is that case's ``fault``
    (a subprocess target is restarted for the next case)."""
    return replay_cases(read_reproducer(path), target)


def replay_cases(cases: list[ReproducerCase], target: Any | LineTarget) -> list[ReplayResult]:
    """:func:`replay_results` for cases already read by :func:`read_reproducer`."""
    out = []
    for case_id, codec, data in cases:
        try:
            got = TargetDriver(codec, target).outcome(data)
        except TargetProtocolError as exc:
            out.append(ReplayResult(case_id, (), exc))
            continue
        out.append(ReplayResult(case_id, tuple(compare(model_outcome(codec, data), got,
                                                       codec.locate))))
    return out


def replay(path: Path, target: Any | LineTarget) -> list[tuple[str, list[Difference]]]:
    """Re-run every difftest case of a reproducer file against ``target``.

    Returns ``(case id, differences)`` per case; an empty list means the target
    now agrees with the model on that case. A target fault raises its
    :class:`~ualink_ref.errors.TargetProtocolError` (:func:`replay_results` reports it instead).
    """
    out = []
    for result in replay_results(path, target):
        if result.fault is not None:
            raise result.fault
        out.append((result.case_id, list(result.differences)))
    return out


__all__ = ["DIFFTEST_FORMAT", "ReplayResult", "ReproducerCase", "fault_document",
           "read_reproducer", "replay", "replay_cases", "replay_results", "reproducer_document",
           "write_reproducer"]
