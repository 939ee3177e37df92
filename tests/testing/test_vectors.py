"""The vector framework, and the committed vectors against a fresh generation."""

from __future__ import annotations

import json
import sys
import types
from pathlib import Path
from typing import Any

import pytest

from ualink_ref.cli import main
from ualink_ref.testing import vectors

ROOT = Path(__file__).resolve().parents[2]


def _fake_source() -> types.ModuleType:
    module = types.ModuleType("fake_vector_source")
    module.LAYER = "fake"  # type: ignore[attr-defined]
    module.DESCRIPTION = "doubling"  # type: ignore[attr-defined]

    def vector_inputs() -> list[vectors.VectorInput]:
        return [vectors.VectorInput(f"double-{i}", "double", {"x": i}) for i in range(3)]

    def compute(kind: str, inputs: dict[str, Any]) -> dict[str, Any]:
        assert kind == "double"
        return {"y": 2 * inputs["x"]}

    module.vector_inputs = vector_inputs  # type: ignore[attr-defined]
    module.compute = compute  # type: ignore[attr-defined]
    return module


@pytest.fixture
def fake_layer(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "fake_vector_source", _fake_source())
    monkeypatch.setattr(vectors, "LAYER_MODULES", {"fake": "fake_vector_source"})


@pytest.mark.usefixtures("fake_layer")
def test_generate_verify_and_detect_tampering(tmp_path: Path) -> None:
    vectors.generate(tmp_path)
    first = (tmp_path / "fake.json").read_bytes()
    vectors.generate(tmp_path)
    assert (tmp_path / "fake.json").read_bytes() == first  # byte-identical
    report = vectors.verify_dir(tmp_path)
    assert report.ok and report.cases == 3
    doc = json.loads(first)
    doc["cases"][1]["expected"]["y"] = 5
    (tmp_path / "fake.json").write_text(json.dumps(doc))
    report = vectors.verify_dir(tmp_path)
    assert [(m.case, m.field, m.expected, m.actual) for m in report.mismatches] == [
        ("double-1", "y", 5, 2)
    ]
    assert main(["vectors", "verify", str(tmp_path)]) == 1


def test_verify_empty_directory_is_not_success(tmp_path: Path) -> None:
    assert not vectors.verify_dir(tmp_path).ok
    assert main(["vectors", "verify", str(tmp_path)]) == 2


def test_verify_reports_malformed_inputs_instead_of_crashing(tmp_path: Path) -> None:
    # Inputs of the wrong JSON type (a list where an object belongs) raised AttributeError
    # out of `vectors verify`; a third party's malformed file must be reported, not crash.
    import shutil

    shutil.copytree(Path(__file__).resolve().parents[2] / "vectors", tmp_path / "v")
    path = tmp_path / "v" / "tl.json"
    doc = json.loads(path.read_text())
    case = next(c for c in doc["cases"] if c["kind"] == "upli_op")
    key = next(k for k, v in case["inputs"].items() if isinstance(v, dict))
    case["inputs"][key] = [1, 2]
    path.write_text(json.dumps(doc))
    found = vectors.verify_dir(tmp_path / "v").mismatches
    assert [(m.file, m.case, m.field) for m in found] == [("tl.json", case["id"], "<compute>")]


@pytest.mark.parametrize("layer", [["phy"], {"x": 1}, None, 3])
def test_verify_reports_a_malformed_layer_field(tmp_path: Path, layer: Any) -> None:
    # Found in review: a list or object as "layer" crashed verify with TypeError.
    doc = {"format": vectors.VECTOR_FORMAT, "version": vectors.VECTOR_VERSION, "layer": layer,
           "cases": []}
    (tmp_path / "x.json").write_text(json.dumps(doc))
    report = vectors.verify_dir(tmp_path)
    assert [m.field for m in report.mismatches] == ["layer"]
    assert main(["vectors", "verify", str(tmp_path)]) != 0


def test_generate_into_a_file_path_is_a_clean_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Found in review: `vectors generate --out FILE` ended in a FileExistsError traceback.
    target = tmp_path / "not-a-dir"
    target.write_text("x")
    assert main(["vectors", "generate", "--out", str(target), "--layer", "phy"]) == 1
    assert "ualink-ref vectors: error:" in capsys.readouterr().err
