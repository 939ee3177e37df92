"""``fabric --link-down PLANE:ACC:SLOT[:UNTIL[:DIRECTION]]`` and the dead links in the
report (specs/fabric.md F11, H6, H7; specs/cli.md rules 1-3): a dead link and the
switch's H-rule counters are printed when not zero; a bad value is one usage line."""

from __future__ import annotations

import json

import pytest

from ualink_ref.cli import main
from ualink_ref.sim.fabric import Fabric, FabricConfig, LinkDown
from ualink_ref.sim.fabric_report import make_report
from ualink_ref.sim.workloads import fabric_workload

POD = ["fabric", "--accelerators", "4", "--fec", "none", "--ops", "200", "--load", "0.3",
       "--seed", "2", "--no-progress"]


def test_a_dead_link_and_its_fault_answers_are_reported() -> None:
    config = FabricConfig(accelerators=4, fec="none", links_down=(LinkDown(0, 1, 30),))
    fabric = Fabric(config)
    report = make_report(fabric, fabric.run(fabric_workload("uniform", 200, 4, seed=2,
                                                            load=0.3)))
    assert report.faulted_links == ((0, 1, "switch port: link in fault"),)
    answers = sum(st.fault_answers for st in fabric.switches[0].stats)
    assert answers > 0 and report.hostile == {"fault_answers": answers}
    text = report.format()
    assert "faulted links (plane:accelerator): 0:1 (switch port: link in fault)" in text
    assert f"switch H-rule counters: fault_answers {answers}" in text


def test_a_healthy_pod_prints_neither_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(POD) == 0
    out = capsys.readouterr().out
    assert "faulted links" not in out and "H-rule" not in out


@pytest.mark.parametrize(("spec", "dead"), [("0:1:30", True), ("0:1:30:", True),
                                            ("0:1:30::from_switch", True),
                                            ("0:1:30:70", False)])
def test_link_down_option(spec: str, dead: bool, capsys: pytest.CaptureFixture[str]) -> None:
    code = main([*POD, "--json", "--link-down", spec])
    report = json.loads(capsys.readouterr().out)
    assert (report["faulted_links"] == [[0, 1, "switch port: link in fault"]]) is dead
    assert code == (1 if dead else 0)  # a dead link's ops end DATA_ERROR: not all OKAY
    assert report["ops_completed"] == 200


@pytest.mark.parametrize(("spec", "message"), [
    ("1:1:30", "PLANE must be 0..0 (--planes) and ACC 0..3 (--accelerators), got 1:1:30"),
    ("0:4:30", "PLANE must be 0..0 (--planes) and ACC 0..3 (--accelerators), got 0:4:30"),
    ("0:1", "expected PLANE:ACC:SLOT[:UNTIL[:DIRECTION]], got '0:1'"),
    ("0:1:x", "expected PLANE:ACC:SLOT[:UNTIL[:DIRECTION]], got '0:1:x'"),
    ("0:1:30:30", "UNTIL must be a slot after SLOT, got '0:1:30:30'"),
    ("0:1:30:40:up", "DIRECTION must be one of both, to_switch, from_switch, got '0:1:30:40:up'"),
    ("0:1:2:3:both:6", "expected PLANE:ACC:SLOT[:UNTIL[:DIRECTION]], got '0:1:2:3:both:6'"),
])
def test_bad_link_down_is_one_usage_line(spec: str, message: str,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        code = main([*POD, "--link-down", spec])
        raise SystemExit(code)
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert err == (f"ualink-ref fabric: error: argument --link-down: {message} "
                   "(see ualink-ref fabric --help)\n")
