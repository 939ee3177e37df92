"""difftest: the line protocol, the model as a subprocess target, the CLI."""

from __future__ import annotations

import json
import sys

import pytest

pytest.importorskip("hypothesis")

from ualink_ref.cli import main
from ualink_ref.errors import CrcError, TargetProtocolError
from ualink_ref.testing.difftest import CODECS, SubprocessTarget, difftest
from ualink_ref.testing.difftest.protocol import Outcome, compare, outcome_of, parse_response

REFERENCE = [sys.executable, "-m", "ualink_ref.testing.difftest.reference_target", "--layer"]
BUDGET = 150  # cases per codec for the known-good target


def test_parse_response_forms() -> None:
    assert parse_response("ERR CrcError") == Outcome("CrcError")
    assert parse_response("ERR") == Outcome("")
    assert parse_response('{"a": 1}') == Outcome(None, {"a": 1})
    assert parse_response("00ff\n") == Outcome(None, {"bytes": "00ff"})
    assert parse_response("") == Outcome(None, {"bytes": ""})
    for bad in ("hello", "{not json", "[1, 2]", "0"):
        with pytest.raises(TargetProtocolError):
            parse_response(bad)


def test_compare_verdicts_and_fields() -> None:
    assert compare(Outcome("CrcError"), Outcome("")) == []  # unnamed ERR matches any error
    [d] = compare(Outcome("CrcError"), Outcome("ReservedBitsError"))
    assert (d.field, d.model, d.target) == ("verdict", "CrcError", "ReservedBitsError")
    [d] = compare(Outcome(None, {"x": 1}), Outcome("CrcError"))
    assert d.target == "CrcError" and d.model == "accept"
    diffs = compare(Outcome(None, {"f": {"a": 1, "b": [1, 2]}}),
                    Outcome(None, {"f": {"a": 1, "b": [1, 3]}}))
    assert [(d.field, d.model, d.target) for d in diffs] == [("f.b[1]", 2, 3)]
    assert compare(Outcome(None, {"v": True}), Outcome(None, {"v": 1}))  # true is not 1


def test_outcome_of_python_callables() -> None:
    def boom(_: bytes) -> bytes:
        raise CrcError(1, 2)

    assert outcome_of(boom, b"").error == "CrcError"
    assert outcome_of(lambda b: b[5], b"").error == "IndexError"  # a foreign exception class
    assert outcome_of(lambda b: b + b"\x01", b"\x00").value == {"bytes": "0001"}


@pytest.mark.parametrize("codec", sorted(CODECS))
def test_model_through_subprocess_agrees(codec: str) -> None:
    """The model as a line-protocol subprocess passes a fixed budget with zero disagreements."""
    with SubprocessTarget([*REFERENCE, codec], timeout=60) as target:
        result = difftest(codec, target, seed=7, max_cases=BUDGET)
        assert target.exchanges >= result.coverage.cases
    assert result.ok, result.summary()
    assert result.coverage.cases == BUDGET
    assert sum(result.coverage.by_verdict.values()) == BUDGET


def test_coverage_reaches_every_error_class_of_the_dl_decoder() -> None:
    result = difftest("dl", CODECS["dl"].reference, seed=7, max_cases=400)
    assert {"accept", "CrcError", "TruncatedError", "ReservedBitsError",
            "FieldRangeError"} <= set(result.coverage.by_verdict)


def test_time_budget_stops_generation() -> None:
    ticks = iter(range(10**6))
    result = difftest("dl-message", CODECS["dl-message"].reference, seed=1, max_cases=100,
                      max_seconds=5, clock=lambda: float(next(ticks)))
    assert result.stopped_by_time and result.coverage.cases < 100


def test_target_that_exits_is_a_protocol_error() -> None:
    with SubprocessTarget([sys.executable, "-c", "pass"], timeout=30) as target, \
            pytest.raises(TargetProtocolError):
        target.exchange("00")


def test_cli_run_agree_and_disagree(tmp_path, capsys) -> None:
    cmd = " ".join([*REFERENCE, "dl-message"])
    assert main(["difftest", "--layer", "dl-message", "--target", cmd, "--max-cases", "50",
                 "--out", str(tmp_path)]) == 0
    assert "agree" in capsys.readouterr().out
    # A target answering every request with "accept, no fields" is caught and reproduced.
    liar = tmp_path / "liar.py"
    liar.write_text("import sys\nfor _ in sys.stdin:\n    print('{}', flush=True)\n")
    code = main(["difftest", "--layer", "dl-message", "--target",
                 f"{sys.executable} {liar}", "--max-cases", "50", "--out", str(tmp_path)])
    out = capsys.readouterr().out
    assert code == 1 and "DISAGREEMENT" in out and "differs:" in out
    [path] = tmp_path.glob("difftest-*.json")
    doc = json.loads(path.read_text())
    assert doc["cases"][0]["difftest"]["target"] == "{}"
    assert main(["difftest", "replay", str(path), "--target", cmd]) == 0
    assert main(["difftest", "replay", str(path), "--target",
                 f"{sys.executable} {liar}"]) == 1


def test_cli_lists_codecs(capsys) -> None:
    assert main(["difftest", "--list"]) == 0
    out = capsys.readouterr().out
    assert all(name in out for name in CODECS)
