"""`vectors verify` on hostile directories: bounded reads, one-line errors, exit status
2 for invalid input and 1 for a mismatch (specs/vectors.md, "Limits", rules V1-V4)."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from ualink_ref.cli import main
from ualink_ref.testing import vectors
from ualink_ref.testing.vectors import limits

COMMITTED = Path(__file__).resolve().parents[2] / "vectors"


@pytest.fixture
def vdir(tmp_path: Path) -> Path:
    shutil.copytree(COMMITTED, tmp_path / "v")
    return tmp_path / "v"


def _verify(path: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    code = main(["vectors", "verify", str(path)])
    captured = capsys.readouterr()
    return code, captured.err


def _header(layer: str = "dl") -> str:
    return (f'{{"format": "{vectors.VECTOR_FORMAT}", "version": {vectors.VECTOR_VERSION}, '
            f'"layer": "{layer}", "cases": ')


@pytest.mark.parametrize("name, text, words", [
    ("deep.json", _header() + "[" * 100_000 + "]" * 100_000 + "}", "nested 100001 deep"),
    ("digits.json", _header() + '[{"id": "x", "kind": "k", "inputs": {"n": ' + "9" * 5000
     + '}, "expected": {}}]}', "number of 5000 characters"),
    ("nan.json", _header() + '[{"x": NaN}]}', "NaN is not JSON"),
    ("broken.json", _header() + "[", "invalid JSON"),
    ("latin1.json", _header() + '["\xe9"]}', "not UTF-8"),
])
def test_bad_vector_files_are_one_line_errors_with_exit_2(
        vdir: Path, capsys: pytest.CaptureFixture[str], name: str, text: str, words: str) -> None:
    (vdir / name).write_bytes(text.encode("latin-1"))
    code, err = _verify(vdir, capsys)
    assert code == 2
    [line] = [x for x in err.splitlines() if x.startswith("invalid:")]
    assert name in line and words in line
    assert "Traceback" not in err


def test_too_many_cases(vdir: Path, capsys: pytest.CaptureFixture[str],
                        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(vectors, "MAX_CASES", 10)
    code, err = _verify(vdir, capsys)
    assert code == 2 and "56 cases (limit 10)" in err  # phy.json holds 56


def test_oversize_file_is_refused_without_reading_it(
        vdir: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(limits, "MAX_FILE_BYTES", 100_000)
    code, err = _verify(vdir, capsys)
    assert code == 2 and "phy.json" in err and "more than the limit 100000" in err


@pytest.mark.parametrize("target", ["/dev/zero", "/etc/hostname", "dir"])
def test_artifact_that_is_no_regular_file_inside_the_dir(
        vdir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], target: str) -> None:
    if not os.path.exists(target) and target.startswith("/"):
        pytest.skip(f"{target} not present here")
    artifact = vdir / "captures" / "clean.pcap"
    artifact.unlink()
    if target == "dir":
        artifact.mkdir()
    else:
        artifact.symlink_to(target)
    code, err = _verify(vdir, capsys)
    assert code == 2
    [line] = [x for x in err.splitlines() if x.startswith("invalid:")]
    assert "captures/clean.pcap" in line
    assert ("outside" in line) if target != "dir" else ("not a regular file" in line)


def test_mismatch_alone_is_exit_1_and_clean_is_0(
        vdir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert _verify(vdir, capsys)[0] == 0
    path = vdir / "dl.json"
    doc = json.loads(path.read_text())
    doc["cases"][0]["expected"][next(iter(doc["cases"][0]["expected"]))] = "tampered"
    path.write_text(json.dumps(doc))
    code, err = _verify(vdir, capsys)
    assert code == 1 and "invalid:" not in err


def test_unreadable_directory_is_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]
                                        ) -> None:
    (tmp_path / "f").write_text("x")
    for bad in (tmp_path / "missing", tmp_path / "f"):
        code, err = _verify(bad, capsys)
        assert code == 2 and len(err.strip().splitlines()) == 1


def test_json_depth_ignores_brackets_in_strings() -> None:
    assert limits.json_depth('{"a": "[[[[[[", "b": [[1]]}') == 3
    assert limits.json_depth('"\\"[["') == 0
