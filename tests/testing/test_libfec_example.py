"""examples/libfec: Debian's libfec, through the C harness written here, against the model.

Needs gcc and libfec-dev (.ci/run installs them); skips with a reason otherwise.
The binaries are built into pytest's temporary directories, never the source tree.
"""

from __future__ import annotations

import importlib.util
import json
import shlex
import sys
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("hypothesis")

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "libfec"
# Loaded under its own name: the cocotb example has a run.py too.
_SPEC = importlib.util.spec_from_file_location("libfec_example_run", EXAMPLE / "run.py")
assert _SPEC is not None and _SPEC.loader is not None
libfec = importlib.util.module_from_spec(_SPEC)
sys.modules[_SPEC.name] = libfec  # dataclasses look their module up while being built
_SPEC.loader.exec_module(libfec)

from ualink_ref.cli import main as cli  # noqa: E402
from ualink_ref.phy import KP4, LL, gf  # noqa: E402

_MISSING = libfec.missing_tools()
if _MISSING:
    pytest.skip(_MISSING, allow_module_level=True)

CASES = 300  # per codec here; the >= 2,000-case runs are in examples/libfec/README.md


@pytest.fixture(scope="module")
def harness(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return libfec.build(tmp_path_factory.mktemp("libfec"))  # type: ignore[no-any-return]


@pytest.fixture(scope="module")
def seeded(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return libfec.build(tmp_path_factory.mktemp("libfec-bug"),  # type: ignore[no-any-return]
                        seeded_bug=True)


@pytest.mark.parametrize("codec", libfec.HARNESS_CODECS)
def test_libfec_agrees_with_the_model_on_every_class(harness: Path, codec: str) -> None:
    result, counts = libfec.run_codec(harness, codec, cases=CASES, seed=0)
    assert result.ok, result.summary()
    assert result.coverage.cases == CASES
    if codec.endswith("-decode"):
        # Reached: clean words, corrected ones, flagged ones (> t errors, garbage), bad lengths.
        assert {"clean", "corrected", "flagged", "rejected"} <= set(counts), counts
        assert result.coverage.by_source["symbol_errors"] > 0
    else:
        assert counts == {"encoded": CASES}


def _syndromes(full: np.ndarray, two_t: int) -> list[int]:
    """full(alpha^j), j < 2t; full[0] is the coefficient of x^1022."""
    out = []
    for j in range(two_t):
        root = int(gf.alpha_pow(j))
        acc = 0
        for c in full:
            acc = gf.mul_scalar(acc, root) ^ int(c)
        out.append(acc)
    return out


@pytest.mark.parametrize(("mode", "code"), [("kp4", KP4), ("ll", LL)])
def test_pad_region_words_are_within_t_of_a_full_length_codeword(mode: str, code) -> None:
    t, pad = code.t, gf.ORDER - code.n
    for word in libfec.pad_region_words(mode, 4, seed=3):
        assert _syndromes(word.full, 2 * t) == [0] * (2 * t)  # a full-length codeword ...
        assert np.count_nonzero(word.full[:pad]) == 1  # ... with one pad symbol set
        assert 1 + np.count_nonzero(word.full[pad:] != word.received) <= t
        assert np.count_nonzero(word.sent != word.received) > t  # beyond t of the sent one
        cws = gf.bytes_to_symbols(np.frombuffer(word.wire, np.uint8).reshape(
            -1, code.codeword_bytes), code.n)
        assert any(np.array_equal(row, word.received) for row in cws)


@pytest.mark.parametrize("mode", ["kp4", "ll"])
def test_debian_libfec_flags_corrections_into_the_pad_region(harness: Path, mode: str) -> None:
    # The finding of issue 27 for an older libfec release does not hold for Debian's
    # 1.0-26-gc5d935f: decode_rs_int refuses these words, as the model does.
    probe = libfec.pad_probe(harness, mode, count=40, seed=0)
    assert probe.model_flagged == probe.words == 40
    assert probe.agreed == 40, probe.first_failure and probe.first_failure.describe()


@pytest.mark.slow  # ~10 s of CPU: the shrink of a 680-byte input
def test_seeded_bug_is_caught_shrunk_and_replayed(harness: Path, seeded: Path, tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    def target(exe: Path) -> str:
        return f"{shlex.quote(str(exe))} phy-kp4-decode"

    # The CLI's default budget (1000 cases, seed 0); it stops at the first disagreement.
    status = cli(["difftest", "--layer", "phy-kp4-decode", "--target", target(seeded),
                  "--out", str(tmp_path)])
    out = capsys.readouterr().out
    assert status == 1, out
    assert "DISAGREEMENT" in out and "differs: uncorrectable: model true, target false" in out
    [repro] = tmp_path.glob("difftest-phy-kp4-decode-seed0.json")
    [case] = json.loads(repro.read_text())["cases"]
    assert [d["field"] for d in case["difftest"]["differences"]] == ["uncorrectable"]
    assert cli(["vectors", "verify", str(tmp_path)]) == 0
    assert cli(["difftest", "replay", str(repro), "--target", target(harness)]) == 0
    assert cli(["difftest", "replay", str(repro), "--target", target(seeded)]) == 1
    # The pad-region probe catches the same bug on every word.
    assert libfec.pad_probe(seeded, "kp4", count=5, seed=0).agreed == 0
