"""``--link-down PLANE:ACC:SLOT[:UNTIL[:DIRECTION]]`` of ``fabric`` and ``collective``: one
syntax, one parser (``cli.fabric.link_down_spec``), the same one-line usage error for each
bad part in both commands (specs/cli.md rules 1-2; specs/fabric.md F11)."""

from __future__ import annotations

from typing import Any

import pytest

import ualink_ref.cli.collective as collective_cli
from ualink_ref.cli import main
from ualink_ref.sim.fabric import LinkDown

COMMANDS = {
    "fabric": ["fabric", "--accelerators", "4", "--fec", "none", "--ops", "20", "--no-progress"],
    "collective": ["collective", "--accelerators", "4", "--size", "16K", "--no-progress"],
}

#: Each bad part of the value and the message both commands give for it.
BAD = [
    ("1:1:30", "PLANE must be 0..0 (--planes) and ACC 0..3 (--accelerators), got 1:1:30"),
    ("0:4:30", "PLANE must be 0..0 (--planes) and ACC 0..3 (--accelerators), got 0:4:30"),
    ("0:1", "expected PLANE:ACC:SLOT[:UNTIL[:DIRECTION]], got '0:1'"),
    ("x:1:30", "expected PLANE:ACC:SLOT[:UNTIL[:DIRECTION]], got 'x:1:30'"),
    ("0:y:30", "expected PLANE:ACC:SLOT[:UNTIL[:DIRECTION]], got '0:y:30'"),
    ("0:1:x", "expected PLANE:ACC:SLOT[:UNTIL[:DIRECTION]], got '0:1:x'"),
    ("0:1:30:30", "UNTIL must be a slot after SLOT, got '0:1:30:30'"),
    ("0:1:30:29", "UNTIL must be a slot after SLOT, got '0:1:30:29'"),
    ("0:1:30:soon", "UNTIL must be a slot after SLOT, got '0:1:30:soon'"),
    ("0:1:30:40:up", "DIRECTION must be one of both, to_switch, from_switch, got "
                     "'0:1:30:40:up'"),
    ("0:1:2:3:both:6", "expected PLANE:ACC:SLOT[:UNTIL[:DIRECTION]], got '0:1:2:3:both:6'"),
]


@pytest.mark.parametrize("command", sorted(COMMANDS))
@pytest.mark.parametrize(("spec", "message"), BAD, ids=[b[0] for b in BAD])
def test_each_bad_part_is_one_usage_line(command: str, spec: str, message: str,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        raise SystemExit(main([*COMMANDS[command], "--link-down", spec]))
    assert exit_info.value.code == 2
    assert capsys.readouterr().err == (f"ualink-ref {command}: error: argument --link-down: "
                                       f"{message} (see ualink-ref {command} --help)\n")


@pytest.mark.parametrize(("spec", "down"), [
    ("0:1:50", LinkDown(0, 1, 50)),
    ("0:1:50:", LinkDown(0, 1, 50)),
    ("0:1:50:300", LinkDown(0, 1, 50, 300)),
    ("0:2:50::to_switch", LinkDown(0, 2, 50, None, "to_switch")),
    ("0:2:50:300:from_switch", LinkDown(0, 2, 50, 300, "from_switch")),
])
def test_collective_runs_the_link_down_it_was_given(spec: str, down: LinkDown,
                                                    monkeypatch: pytest.MonkeyPatch,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    pods: list[Any] = []
    real = collective_cli.run_collective

    def recording(collective: Any, pod: Any, *rest: Any) -> Any:
        pods.append(pod)
        return real(collective, pod, *rest)

    monkeypatch.setattr(collective_cli, "run_collective", recording)
    code = main([*COMMANDS["collective"], "--link-down", spec])
    assert [p.links_down for p in pods] == [(down,)]
    err = capsys.readouterr().err
    if down.until is None:  # dead for good: the dead link's ops end DATA_ERROR (H7)
        assert code == 1 and "ended DATA_ERROR" in err
    else:  # an outage that ends: both ends retrain, the collective is exact
        assert code == 0 and err == ""


def test_an_outage_that_ends_is_replayed_through_not_ignored(
        capsys: pytest.CaptureFixture[str]) -> None:
    import json

    assert main([*COMMANDS["collective"], "--json"]) == 0
    clean = json.loads(capsys.readouterr().out)
    assert main([*COMMANDS["collective"], "--json", "--link-down", "0:1:50:300"]) == 0
    outage = json.loads(capsys.readouterr().out)
    assert clean["replays"] == 0 and outage["replays"] > 0
    assert outage["time_us"] > clean["time_us"]
