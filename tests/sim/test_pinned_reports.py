"""Every report of the exact pod stays what it was before the speed-ups (issue 25, part 1).

The expected outputs in ``pinned_reports.json`` were recorded by the code of main at
commit 8f1b6d6 — before the idle-port skipping and the identity-FEC rule
(specs/fabric.md H8, H9) — not by the code under test:

    PYTHONPATH=<checkout of 8f1b6d6> python tests/sim/test_pinned_reports.py --record

Each case runs the ``ualink-ref`` CLI in this process and compares its exit status,
its whole stdout (text or JSON report) and the SHA-256 of every file it wrote (a
capture, i.e. a tap) with the recording. The cases cover CBFC and PFC, planes and
lanes, every FEC mode, a BER above zero (FEC corrections, replays), a dead link,
transfers at an offered load, batched steps, a capture of a pod, collectives, and the
two-endpoint link simulation.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import sys
import tempfile
from pathlib import Path

import pytest

FIXTURE = Path(__file__).with_name("pinned_reports.json")
#: The commit whose code produced the fixture.
RECORDED_AT = "8f1b6d6"

#: ``(name, argv)``; ``{out}`` stands for a file in a fresh temporary directory.
CASES: list[tuple[str, list[str]]] = [
    ("fabric_cbfc_text", ["fabric", "--accelerators", "8", "--ops", "200", "--seed", "3",
                          "--no-progress"]),
    ("fabric_planes_ber", ["fabric", "--accelerators", "8", "--planes", "2", "--ops", "150",
                           "--ber", "1e-4", "--seed", "2", "--json", "--no-progress"]),
    ("fabric_pfc_incast", ["fabric", "--accelerators", "8", "--flow-control", "pfc",
                           "--pattern", "incast", "--load", "0.8", "--ops", "150", "--seed",
                           "4", "--json", "--no-progress"]),
    ("fabric_pfc_ber_text", ["fabric", "--accelerators", "6", "--flow-control", "pfc",
                             "--ber", "2e-4", "--ops", "120", "--seed", "5", "--no-progress"]),
    ("fabric_transfers_load", ["fabric", "--accelerators", "16", "--lanes", "2", "--size",
                               "1024", "--ops", "12", "--load", "0.5", "--seed", "6",
                               "--json", "--no-progress"]),
    ("fabric_uniform_load", ["fabric", "--accelerators", "16", "--load", "0.5", "--ops",
                             "300", "--seed", "1", "--json", "--no-progress"]),
    ("fabric_link_down", ["fabric", "--accelerators", "4", "--ops", "60", "--link-down",
                          "0:2:10", "--seed", "7", "--json", "--no-progress"]),
    ("fabric_ll_batch", ["fabric", "--accelerators", "8", "--fec", "ll", "--batch", "4",
                         "--ops", "120", "--ber", "1e-4", "--seed", "8", "--json",
                         "--no-progress"]),
    ("fabric_fec_none", ["fabric", "--accelerators", "8", "--fec", "none", "--ops", "120",
                         "--pattern", "hotspot", "--seed", "9", "--json", "--no-progress"]),
    ("fabric_capture", ["fabric", "--accelerators", "4", "--ops", "40", "--ber", "1e-4",
                        "--seed", "10", "--capture", "{out}/pod.pcap", "--no-progress"]),
    ("collective_ring", ["collective", "--op", "all-reduce", "--algo", "ring",
                         "--accelerators", "8", "--size", "8192", "--json", "--no-progress"]),
    ("collective_a2a_pfc_planes_ber", ["collective", "--op", "all-to-all", "--accelerators",
                                       "8", "--size", "4096", "--flow-control", "pfc",
                                       "--planes", "2", "--ber", "1e-4", "--seed", "3",
                                       "--json", "--no-progress"]),
    ("simulate_ber", ["simulate", "--ops", "300", "--ber", "1e-4", "--seed", "2", "--json",
                      "--no-progress"]),
    ("capture_replay", ["capture", "--out", "{out}/replay.pcap", "--scenario", "replay"]),
]


def run_case(argv: list[str]) -> dict[str, object]:
    """Run one CLI case here; its exit status, stdout and written files' hashes."""
    from ualink_ref.cli import main

    with tempfile.TemporaryDirectory() as tmp:
        words = [w.replace("{out}", tmp) for w in argv]
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = main(words)
        files = {p.name: hashlib.sha256(p.read_bytes()).hexdigest()
                 for p in sorted(Path(tmp).iterdir())}
    # a message naming a written file names the directory as {out}
    return {"exit": code, "stdout": out.getvalue().replace(tmp, "{out}"), "files": files}


def _recorded() -> dict[str, dict[str, object]]:
    data = json.loads(FIXTURE.read_text())
    cases: dict[str, dict[str, object]] = data["cases"]
    return cases


@pytest.mark.parametrize(("name", "argv"), CASES, ids=[name for name, _ in CASES])
def test_report_as_recorded_at_main(name: str, argv: list[str]) -> None:
    """The CLI's output for this case is byte for byte what main (8f1b6d6) printed."""
    expected = _recorded()[name]
    assert expected["argv"] == argv, "the fixture was recorded for other arguments"
    got = run_case(argv)
    assert got["exit"] == expected["exit"]
    assert got["files"] == expected["files"]
    assert got["stdout"] == expected["stdout"]


def test_fixture_names_its_commit_and_every_case() -> None:
    """The fixture says which code produced it and holds every case, with output."""
    data = json.loads(FIXTURE.read_text())
    assert data["recorded_at"] == RECORDED_AT
    assert set(data["cases"]) == {name for name, _ in CASES}
    assert all(c["stdout"] for c in data["cases"].values())


def test_a_changed_figure_is_caught() -> None:
    """The comparison can fail: one report of a run with another seed differs."""
    name, argv = CASES[0]
    seeded = [("4" if w == "3" else w) for w in argv]  # same case, another seed
    assert run_case(seeded)["stdout"] != _recorded()[name]["stdout"]


def record() -> None:
    """Write the fixture from the ``ualink_ref`` on the path (run it at main, 8f1b6d6)."""
    cases = {name: {"argv": argv, **run_case(argv)} for name, argv in CASES}
    note = (f"Recorded by tests/sim/test_pinned_reports.py --record with the code of commit "
            f"{RECORDED_AT}, before issue 25's speed-ups (idle ports, identity FEC).")
    FIXTURE.write_text(json.dumps({"recorded_at": RECORDED_AT, "note": note,
                                   "cases": cases}, indent=1, sort_keys=True) + "\n")


if __name__ == "__main__":
    if sys.argv[1:] != ["--record"]:
        raise SystemExit("usage: python tests/sim/test_pinned_reports.py --record")
    record()
