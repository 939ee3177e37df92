"""The committed fuzz corpora and dictionaries equal what fuzz/make_corpus.py writes, and
each harness's structured mode gets past the checks its raw mode stops at."""

from __future__ import annotations

import contextlib
import importlib
import sys
import types
from collections.abc import Iterator
from pathlib import Path

import pytest

from ualink_ref.capture.format import CaptureRecord, decode_capture
from ualink_ref.dl import DLFlit
from ualink_ref.errors import CrcError, DecodeError

FUZZ = Path(__file__).resolve().parents[2] / "fuzz"


@pytest.fixture(scope="module")
def make_corpus() -> Iterator[types.ModuleType]:
    sys.path.insert(0, str(FUZZ))
    saved = sys.modules.get("atheris")
    fake = types.ModuleType("atheris")
    fake.instrument_imports = contextlib.nullcontext  # type: ignore[attr-defined]
    sys.modules["atheris"] = fake
    yield importlib.import_module("make_corpus")
    sys.path.remove(str(FUZZ))
    if saved is None:
        del sys.modules["atheris"]
    else:
        sys.modules["atheris"] = saved


def test_committed_corpus_is_generated(make_corpus: types.ModuleType, tmp_path: Path) -> None:
    make_corpus.write(tmp_path)
    want = {p.relative_to(tmp_path): p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()}
    have = {p.relative_to(FUZZ): p.read_bytes() for d in ("corpus", "dicts")
            for p in (FUZZ / d).rglob("*") if p.is_file()}
    assert have == want, "run `PYTHONPATH=. python fuzz/make_corpus.py` and commit"


def test_every_harness_has_a_corpus_and_a_dictionary(make_corpus: types.ModuleType) -> None:
    for name in make_corpus.harnesses():
        assert len(list((FUZZ / "corpus" / name).iterdir())) >= 2, name
        assert (FUZZ / "dicts" / f"{name}.dict").read_text().count("=") >= 3, name


def test_structured_mode_repairs_what_raw_mode_cannot_pass(make_corpus: types.ModuleType
                                                           ) -> None:
    harness = sys.modules["_harness"]
    junk = bytes(range(256)) * 3
    with pytest.raises(CrcError):
        DLFlit.decode(junk[:640])  # raw: stopped by the CRC
    with pytest.raises(DecodeError) as exc:  # repaired: the header parsers run and object
        DLFlit.decode(harness.with_crc(junk))
    assert not isinstance(exc.value, CrcError)
    header = CaptureRecord(bytes(640)).encode()[:16]
    # a record whose payload is 700 junk bytes: repaired to a 640-byte flit with its CRC
    records = decode_capture(harness.fix_capture(b"\x00" + header + b"\x07" * 700))
    assert len(records) == 1 and records[0].kind == "dl_flit"
