"""Functional coverage (specs/coverage.md): the model, the samplers, ``vectors coverage``."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from ualink_ref.cli import main
from ualink_ref.dl import formats as dlf
from ualink_ref.testing.coverage import Coverage, CoverageModel, CoverPoint, coverage_model
from ualink_ref.testing.coverage.cases import sample_case
from ualink_ref.testing.coverage.directory import sample_directory
from ualink_ref.testing.coverage.fields import FORMATS, bins_of, sample_word
from ualink_ref.testing.coverage.points import DL_RECEIVE, ERROR_CLASSES, FLIT_CODEC
from ualink_ref.testing.coverage.wire import sample_dl_flit

VECTORS = Path(__file__).resolve().parents[2] / "vectors"


@pytest.fixture(scope="module")
def committed() -> Coverage:
    return sample_directory(VECTORS).coverage


def _cli(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    try:
        code = main(argv)
    except SystemExit as exc:  # argparse usage errors
        code = int(exc.code or 0)
    out = capsys.readouterr()
    return code, out.out, out.err


# -- the model -------------------------------------------------------------------------


def test_model_counts_hits_refuses_unknown_bins_and_flags_stale_waivers() -> None:
    model = CoverageModel([CoverPoint("field:x", "field", ("zero", "one", "max"),
                                      waivers={"max": "why"})])
    cov = Coverage(model)
    cov.hit("field:x", "zero")
    with pytest.raises(KeyError, match="field:x:seven"):
        cov.hit("field:x", "seven")
    report = cov.report()
    assert report.holes == (("field:x", "one"),)
    assert (report.hit, report.waived, report.bins) == (1, 1, 3)
    assert round(report.closure_percent, 1) == 66.7 and round(report.hit_percent, 1) == 33.3
    cov.hit("field:x", "max")
    assert cov.report().rows[0].stale_waivers == ("max",)
    assert cov.report(use_waivers=False).holes == (("field:x", "one"),)
    with pytest.raises(ValueError, match="waivers for no bin"):
        CoverPoint("field:y", "field", ("zero",), waivers={"one": "x"})


def test_field_bins_come_from_the_declarations() -> None:
    assert bins_of(dlf.EXPLICIT_HEADER.field("rsvd_a")) == ("zero", "reserved_nonzero")
    assert bins_of(dlf.SEGMENT_HEADER.field("msg")) == ("zero", "one")
    assert bins_of(dlf.EXPLICIT_HEADER.field("flit_seq")) == ("zero", "one", "max")
    assert bins_of(dlf.EXPLICIT_HEADER.field("op"))[-1] == "unknown_enum"
    cov = Coverage(coverage_model())
    # op 7 with reserved bits set, read raw: the decode input a decoder must reject
    sample_word(cov, dlf.EXPLICIT_HEADER, 0xFF_FFFF)
    assert cov.hits("field:dl_header.op", "unknown_enum") == 1
    assert cov.hits("field:dl_explicit_header.rsvd_a", "reserved_nonzero") == 1
    assert cov.hits("field:dl_explicit_header.flit_seq", "max") == 1


def test_fields_are_those_the_dissector_is_generated_from() -> None:
    from ualink_ref.wireshark.generate import FORMATS as WIRESHARK

    assert {f.name for f in FORMATS} == {f.name for f in WIRESHARK}


def test_every_error_class_has_a_bin() -> None:
    from ualink_ref import errors

    defined = {n for n, o in vars(errors).items()
               if isinstance(o, type) and issubclass(o, errors.UALinkError)}
    assert set(ERROR_CLASSES) == defined and "ConfigError" in defined


# -- the committed vectors ----------------------------------------------------------------


def test_committed_vectors_reach_full_closure_with_no_stale_waiver(committed: Coverage) -> None:
    report = committed.report()
    assert report.holes == ()
    assert [(r.point.name, r.stale_waivers) for r in report.rows if r.stale_waivers] == []
    assert report.closure_percent == 100.0
    # every crossed FEC codec operation and the duplicate cells of the receive table are hit
    assert committed.hits(FLIT_CODEC, "flit_decode/ll/il4") > 0
    assert committed.hits(DL_RECEIVE, "request_sent/duplicate") > 0


def test_receive_probe_refuses_a_case_it_does_not_reproduce() -> None:
    doc = json.loads((VECTORS / "dl.json").read_text())
    case = next(c for c in doc["cases"] if c["id"] == "retry-acks-lost-duplicates")
    cov = Coverage(coverage_model())
    sample_case(cov, "dl", case)
    hit = {b for b in coverage_model().points[DL_RECEIVE].bins if cov.hits(DL_RECEIVE, b)}
    assert {"in_sequence/duplicate", "request_sent/duplicate", "request_sent/error"} <= hit
    case["expected"]["counters_b"]["duplicates"] += 1  # the file no longer matches the replay
    cov = Coverage(coverage_model())
    sample_case(cov, "dl", case)
    assert not any(cov.hits(DL_RECEIVE, b) for b in ("in_sequence/duplicate",
                                                     "request_sent/duplicate"))


def test_a_removed_class_is_a_hole_and_the_command_exits_1(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    vdir = tmp_path / "v"
    shutil.copytree(VECTORS, vdir)
    for name, drop in (("phy.json", "ll-flit-decode-burst280-il4"),
                       ("dl.json", "retry-both-ways-lost-request")):
        doc = json.loads((vdir / name).read_text())
        doc["cases"] = [c for c in doc["cases"] if c["id"] != drop]
        (vdir / name).write_text(json.dumps(doc))
    code, out, _ = _cli(["vectors", "coverage", str(vdir)], capsys)
    assert code == 1
    holes = out.split("holes (")[1].split("waived")[0]
    assert "cross:phy.flit_codec flit_decode/ll/il4" in holes
    assert "rule:dl.md 7" in holes  # the only end with data that sent a replay request
    assert "below the threshold 100 %" in out
    code, out, _ = _cli(["vectors", "coverage", str(vdir), "--threshold", "99"], capsys)
    assert code == 0, out.splitlines()[-1]


def test_committed_vectors_pass_the_command(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = _cli(["vectors", "coverage", str(VECTORS), "--select", "cross:"], capsys)
    assert code == 0 and err == ""
    assert "holes: none" in out and "cross:dl.receive" in out
    assert "closure 100.0 %" in out.splitlines()[-1]


def test_bad_input_is_one_line_and_exit_2(tmp_path: Path,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = _cli(["vectors", "coverage", str(tmp_path / "nothing")], capsys)
    assert code == 2 and err.count("\n") == 1 and "not a directory" in err
    code, _, err = _cli(["vectors", "coverage", str(tmp_path)], capsys)
    assert code == 2 and "no vector files found" in err
    (tmp_path / "dl.json").write_text("[" * 100)
    code, _, err = _cli(["vectors", "coverage", str(tmp_path)], capsys)
    assert code == 2 and err.startswith("invalid: dl.json")
    code, _, err = _cli(["vectors", "coverage", str(VECTORS), "--threshold", "200"], capsys)
    assert code == 2 and "threshold" in err and err.count("\n") == 1


def test_malformed_cases_are_not_sampled_and_never_raise() -> None:
    cov = Coverage(coverage_model())
    for case in ({"kind": "flit_decode", "inputs": {"flit": "zz"}, "expected": {}},
                 {"kind": "retry_scenario", "inputs": {}, "expected": {"wire": 5}},
                 {"kind": "nope", "inputs": {}, "expected": {}}, "not a case"):
        assert sample_case(cov, "dl", case) is False
    sample_dl_flit(cov, b"\x00")  # shorter than a header: nothing
    assert not cov.counts


# -- difftest and cocotb -------------------------------------------------------------------


def test_difftest_hook_samples_every_input_it_passes_on() -> None:
    pytest.importorskip("hypothesis")
    from ualink_ref.testing.coverage.difftest_hook import observed
    from ualink_ref.testing.difftest.api import difftest
    from ualink_ref.testing.difftest.layers import CODECS

    codec = CODECS["dl"]
    calls = []

    def target(data: bytes) -> object:
        calls.append(data)
        return codec.reference(data)

    cov = Coverage(coverage_model())
    result = difftest("dl", observed(target, cov, codec), max_cases=40, seed=3)
    assert result.ok and cov.samples == len(calls) > 0
    assert cov.hits("error:class", "CrcError") > 0  # bit flips without a new CRC
    assert cov.hits("field:dl_header.op", "explicit") > 0

    class Lines:
        def exchange(self, line: str) -> str:
            return "ok"

    cov = Coverage(coverage_model())
    observed(Lines(), cov, codec).exchange(codec.request_line(bytes(640)))  # type: ignore[union-attr]
    assert cov.samples == 1 and cov.hits("error:class", "CrcError") >= 1


def test_cocotb_coverage_sees_the_same_points() -> None:
    pytest.importorskip("cocotb_coverage")
    from cocotb_coverage.coverage import coverage_db

    from ualink_ref.testing.coverage.cocotb_adapter import cocotb_name, mirrored_coverage

    cov = mirrored_coverage(prefix="ualink_test")
    doc = json.loads((VECTORS / "dl.json").read_text())
    for case in doc["cases"]:
        if case["kind"] == "flit_encode":
            sample_dl_flit(cov, bytes.fromhex(case["expected"]["flit"]))
    point = coverage_db[cocotb_name("ualink_test", "field", "field:dl_header.op")]
    ours = {b: cov.hits("field:dl_header.op", b) for b in
            coverage_model().points["field:dl_header.op"].bins}
    assert dict(point.detailed_coverage) == ours
    assert ours["explicit"] > 0 and ours["unknown_enum"] == 0
