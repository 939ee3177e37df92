"""Reproducers: a difftest disagreement as a golden-vector file, and its replay.

The file has the golden-vector layout of ``specs/vectors.md``: one case whose
``kind`` and ``inputs`` are the layer's own vector kind when the input maps
onto one (then ``ualink-ref vectors verify`` checks it and it can be committed
as a regression vector) with ``expected`` computed by the model. Each case
also carries a ``difftest`` object: codec, seed, the request line, both
response lines and the differing fields. When no vector kind fits (e.g. a
capture record, or a PHY wire of the wrong length) the file's ``format`` is
``ualink_ref-difftest`` instead, so ``vectors verify`` skips it; ``ualink-ref
difftest replay FILE --target CMD`` replays both kinds of file.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ualink_ref.testing.difftest.api import Failure, LineTarget, check_one, target_runner
from ualink_ref.testing.difftest.layers import CODECS, Case
from ualink_ref.testing.difftest.protocol import Difference
from ualink_ref.testing.vectors import VECTOR_FORMAT, VECTOR_VERSION, dump_json, load_source

#: ``format`` of a reproducer whose case maps onto no golden-vector kind.
DIFFTEST_FORMAT = "ualink_ref-difftest"


def reproducer_document(codec_name: str, failure: Failure, seed: int) -> dict[str, Any]:
    """The golden-vector document of one disagreement."""
    codec = CODECS[codec_name]
    mapped = codec.vector(failure.case.data)
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
    fields = ", ".join(d.field for d in failure.differences)
    case = {
        "id": f"difftest-{codec_name}-seed{seed}",
        "kind": kind,
        "inputs": inputs,
        "expected": expected,
        "note": f"difftest {codec_name} seed {seed}: target differs in {fields}",
        "difftest": {
            "codec": codec_name,
            "seed": seed,
            "source": failure.case.source,
            "request": failure.request,
            "model": failure.model.line(),
            "target": failure.target.line(),
            "differences": [{"field": d.field, "model": _jsonable(d.model),
                             "target": _jsonable(d.target)} for d in failure.differences],
        },
    }
    return {"format": fmt, "version": VECTOR_VERSION, "layer": codec.layer,
            "description": f"difftest reproducer ({codec.summary})", "cases": [case]}


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


def replay(path: Path, target: Any | LineTarget) -> list[tuple[str, list[Difference]]]:
    """Re-run every difftest case of a reproducer file against ``target``.

    Returns ``(case id, differences)`` per case; an empty list means the target
    now agrees with the model on that case.
    """
    doc = json.loads(path.read_text(encoding="utf-8"))
    out = []
    for case in doc.get("cases", []):
        info = case.get("difftest") or {}
        codec = CODECS[str(info["codec"])]
        data = codec.parse_request(str(info["request"]))
        _, failure = check_one(codec, target_runner(codec, target), Case("replay", data))
        out.append((str(case.get("id")), list(failure.differences) if failure else []))
    return out


__all__ = ["DIFFTEST_FORMAT", "replay", "reproducer_document", "write_reproducer"]
