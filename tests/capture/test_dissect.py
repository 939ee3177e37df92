"""The Scapy-free dissector against independent views of the same traffic.

Oracles: the TL flits the receiving DataLink delivered (its own reassembly),
and the operations the workload issued.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ualink_ref.capture.dissect import DissectedFlit, dissect_records
from ualink_ref.capture.format import CaptureRecord, read_capture
from ualink_ref.capture.listing import Filter, render, summarize
from ualink_ref.capture.run import SCENARIOS, CaptureLink, CaptureResult
from ualink_ref.cli import main
from ualink_ref.phy.config import PhyConfig
from ualink_ref.sim.config import SimConfig
from ualink_ref.sim.workloads import random_workload
from ualink_ref.testing.strategies import capture_records
from ualink_ref.tl.fields import COMMANDS


def _run(**kw: object) -> tuple[CaptureResult, list]:  # type: ignore[type-arg]
    ops = list(random_workload(int(kw.pop("n", 30)), int(kw.get("seed", 0))))  # type: ignore[call-overload]
    result = CaptureLink(**kw).run(ops)  # type: ignore[arg-type]
    return result, ops


def _tl_stream(flits: list[DissectedFlit], direction: str) -> list[bytes]:
    """TL flits as dissected (views), which must also equal the raw reassembled chunks."""
    views = [h.raw for f in flits if f.direction == direction for v in f.tl_flits
             for h in v.halves]
    raw = [c for f in flits if f.direction == direction for c in f.tl_raw]
    assert [views[i] + views[i + 1] for i in range(0, len(views), 2)] == raw
    return raw


@pytest.mark.parametrize(
    "settings",
    [
        {"fec": "kp4"},
        {"fec": "ll", "ber": 3e-4, "seed": 5},
        {"fec": "none", "ber": 5e-5, "seed": 2},
        {"fec": "none", "ber": 1e-4, "seed": 2},
    ],
    ids=["clean", "ll-ber", "none-ber", "none-heavy-ber"],
)
def test_reassembled_tl_flits_equal_datalink_delivery(settings: dict[str, object]) -> None:
    result, _ops = _run(n=60, **settings)
    flits = dissect_records(result.records)
    for direction in ("a_to_b", "b_to_a"):
        assert _tl_stream(flits, direction) == result.delivered[direction], settings


def test_none_ber_run_really_has_errors() -> None:
    result, _ = _run(n=60, fec="none", ber=5e-5, seed=2)
    flits = dissect_records(result.records)
    assert result.crc_errors > 0 and sum(f.crc_error for f in flits) == result.crc_errors
    assert result.replays > 0 and sum(f.replayed for f in flits) > 0


def test_listed_requests_are_the_issued_ops() -> None:
    result, ops = _run(n=50, seed=7)
    flits = dissect_records(result.records)
    for side, direction in (("a", "a_to_b"), ("b", "b_to_a")):
        issued = sorted(
            (_command(o), o.addr, o.size if o.kind == "atomic" else o.length or len(o.data))
            for o in ops if o.side == side)
        seen = sorted(
            (op.command, op.values["addr"] << 2, 4 * (op.values["len"] + 1))
            for f in flits if f.direction == direction for op in f.ops if op.kind == "request")
        assert seen == issued


def _command(op: object) -> str:
    kind = op.kind  # type: ignore[attr-defined]
    if kind == "read":
        return "Read"
    if kind == "write":
        return "WriteFull" if op.byte_enable is None else "Write"  # type: ignore[attr-defined]
    return "AtomicR" if op.fetch else "AtomicNR"  # type: ignore[attr-defined]


def test_replay_scenario() -> None:
    scenario = SCENARIOS["replay"]
    result = CaptureLink(**scenario.settings).run(scenario.ops())  # type: ignore[arg-type]
    flits = dissect_records(result.records)
    crc = [f for f in flits if f.crc_error]
    assert len(crc) == 1 and crc[0].uncorrectable and crc[0].direction == "a_to_b"
    replays = [f for f in flits if f.flit is not None and f.flit.op.name == "REPLAY"]
    assert len(replays) == 1 and replays[0].replayed
    assert any(f.status == "gap" for f in flits)
    text = summarize(flits)
    assert "CRC errors 1" in text and "replays started 1" in text
    assert _tl_stream(flits, "a_to_b") == result.delivered["a_to_b"]


@pytest.mark.parametrize("cut", [5, 12, 30])
def test_capture_starting_mid_stream_synchronises(cut: int) -> None:
    """Cut the first records off: the DL-level reassembly (64-byte TL flit boundaries)
    is exact from the synchronisation point on. (TL-level parsing of the first flits
    may be wrong: a flit that continues earlier data cannot be told apart without the
    earlier flits — specs/capture.md.)"""
    result, _ = _run(n=80, seed=3)
    flits = dissect_records(result.records[cut:])
    for direction in ("a_to_b", "b_to_a"):
        got = [c for f in flits if f.direction == direction for c in f.tl_raw]
        want = result.delivered[direction]
        assert got and want[-len(got):] == got  # a suffix of what the receiver got


def test_fec_codeword_records_dissect_like_flit_records() -> None:
    result, _ = _run(n=20, fec="ll", ber=1e-4, seed=1, raw_codewords=True)
    raw = [r for r in result.records if r.kind == "fec_codewords"]
    decoded = [r for r in result.records if r.kind == "dl_flit"]
    a, b = dissect_records(raw), dissect_records(decoded)
    assert [(f.raw, f.symbols_corrected, f.uncorrectable) for f in a] == [
        (f.raw, f.symbols_corrected, f.uncorrectable) for f in b]


@given(st.lists(capture_records(), max_size=4))
def test_arbitrary_records_never_raise(records: list[CaptureRecord]) -> None:
    flits = dissect_records(records)
    for f in flits:
        render(f, verbose=True)
    summarize(flits)


def test_filters() -> None:
    result, _ = _run(n=30, seed=4)
    flits = dissect_records(result.records)
    b = [f for f in flits if Filter(direction="b_to_a").matches(f)]
    assert b and all(f.direction == "b_to_a" for f in b)
    seq3 = [f for f in flits if Filter(seq=3).matches(f)]
    assert len(seq3) == 2 and all(f.seq == 3 for f in seq3)
    for name in ("Read", "atomicr"):
        hits = [f for f in flits if Filter(command=name).matches(f)]
        assert hits and all(any(o.command.lower() == name.lower() for o in f.ops) for f in hits)
    assert "Read" in COMMANDS.values()


def test_cli_capture_and_dissect(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "c.pcap"
    assert main(["capture", "--out", str(out)]) == 0
    first = out.read_bytes()
    assert main(["capture", "--out", str(out)]) == 0
    assert out.read_bytes() == first  # deterministic, byte for byte
    capsys.readouterr()
    assert main(["dissect", str(out)]) == 0
    text = capsys.readouterr().out
    lines, summary = text.split("\n\n")
    assert len(lines.splitlines()) == 1 + len(dissect_records(read_capture(out)))
    assert summary.startswith("summary:") and "requests by command" in summary
    assert main(["dissect", str(out), "-v", "--direction", "a_to_b", "--no-summary"]) == 0
    verbose = capsys.readouterr().out
    assert "B>A" not in verbose and "crc=0x" in verbose and "(valid)" in verbose
    assert "dl_segment_header" in verbose and "tl_request" in verbose
    assert main(["dissect", str(out), "--command", "WriteFull", "--summary-only"]) == 0
    assert "shown" in capsys.readouterr().out


def test_cli_scenario_pcapng(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "r.pcapng"
    assert main(["capture", "--out", str(out), "--scenario", "replay"]) == 0
    assert out.read_bytes()[:4] == b"\x0a\x0d\x0d\x0a"
    capsys.readouterr()
    assert main(["dissect", str(out), "--summary-only"]) == 0
    assert "CRC errors 1" in capsys.readouterr().out


@pytest.mark.parametrize("fec,ber,seed", [("none", 1e-4, 2), ("kp4", 3e-3, 4), ("ll", 3e-4, 1)])
def test_simulator_captures_dissect_to_the_sent_tl_flits(fec: str, ber: float, seed: int) -> None:
    """Captures of ualink_ref.sim.link_run runs: the dissector lists exactly the TL flits the
    receiving TL got — the sender's TL flits in order, as many as the receiver counted —
    even with many CRC errors and replays."""
    import ualink_ref.sim.link_run as sim_module
    from ualink_ref.capture.run import capture_simulation
    from ualink_ref.sim.workloads import random_workload

    sims: list = []  # type: ignore[type-arg]
    original = sim_module.Simulation.__init__

    def init(self: object, *args: object, **kwargs: object) -> None:
        original(self, *args, **kwargs)
        self.a.trace, self.b.trace = [], []  # type: ignore[attr-defined]
        sims.append(self)

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(sim_module.Simulation, "__init__", init)
        records, report = capture_simulation(random_workload(80, seed),
                                             SimConfig(phy=PhyConfig(fec=fec), ber=ber, seed=seed))
    sim = sims[0]
    flits = dissect_records(records)
    for direction, sender, receiver in (("a_to_b", sim.a, sim.b), ("b_to_a", sim.b, sim.a)):
        sent = [data for kind, data in sender.trace if kind == "tl"]
        got = _tl_stream(flits, direction)
        assert got == sent[:len(got)], (fec, ber, seed)
        assert len(got) == receiver.tl.counters.flits_received, (fec, ber, seed)
    assert sum(f.crc_error for f in flits) == report.crc_errors


def test_cli_dissect_bad_files(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["dissect", str(tmp_path / "missing.pcap")]) == 2
    (tmp_path / "g.pcap").write_bytes(b"garbage\n")
    assert main(["dissect", str(tmp_path / "g.pcap")]) == 1
    # not "cut short": the magic alone says it is not a capture (specs/capture.md D3)
    assert "not a pcap or pcapng file (magic 67617262)" in capsys.readouterr().err


def test_mixed_capture_dissects_each_flit_once() -> None:
    """Raw codewords next to their decoded flits: DL/TL state sees each flit once, and
    both views agree on the FEC outcome."""
    result, _ = _run(n=30, fec="ll", ber=2e-3, seed=3, raw_codewords=True)
    mixed = dissect_records(result.records)
    decoded_only = dissect_records([r for r in result.records if r.kind == "dl_flit"])
    state_view = [f for f in mixed if not f.fec_only]
    assert [(f.seq, f.status, f.tl_raw) for f in state_view] == [
        (f.seq, f.status, f.tl_raw) for f in decoded_only]
    raw_view = [f for f in mixed if f.fec_only]
    assert [(f.symbols_corrected, f.uncorrectable) for f in raw_view] == [
        (f.symbols_corrected, f.uncorrectable) for f in decoded_only]
    assert any(f.uncorrectable for f in raw_view) and summarize(mixed).count("FEC") >= 2


def test_cli_dissect_rejects_an_unknown_command_name(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # A misspelt --command silently matched nothing; it is now a usage error naming the choices.
    out = tmp_path / "c.pcap"
    assert main(["capture", "--out", str(out), "--ops", "4"]) == 0
    with pytest.raises(SystemExit) as exc:
        main(["dissect", str(out), "--command", "Reed"])
    assert exc.value.code == 2
    assert "unknown command 'Reed'" in capsys.readouterr().err
    for name in ("read", "ATOMICNR", "Response", "cmd0x05"):
        assert main(["dissect", str(out), "--command", name, "--summary-only"]) == 0


def test_cli_capture_of_a_dead_link_writes_what_it_carried(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # BER 1e-2 defeats KP4 on every flit. Issue 13: the link retrains, gives up (fault) and
    # fails every op in bounded slots; the capture is still written (a dead link is worth
    # reading), the summary says why, and the exit status is 1.
    out = tmp_path / "dead.pcap"
    assert main(["capture", "--out", str(out), "--ops", "3", "--ber", "1e-2"]) == 1
    err = capsys.readouterr().err
    assert "LINK FAULT" in err and "3 op(s) completed with an error status" in err
    assert "Traceback" not in err
    records = read_capture(out)
    assert records and all(r.uncorrectable for r in records)


def test_cli_capture_unwritable_path_is_a_clear_error(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["capture", "--out", str(tmp_path / "no-dir" / "c.pcap"), "--ops", "2"]) == 1
    assert "cannot write" in capsys.readouterr().err


def test_cli_dissect_names_the_bad_packet(tmp_path: Path,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    # A bad record deep in a long capture was reported without saying which one.
    good = tmp_path / "c.pcap"
    assert main(["capture", "--out", str(good), "--ops", "4"]) == 0
    data = good.read_bytes()
    third = 24 + 2 * (16 + 656) + 16  # pseudo-header of packet 2 (hand-walked pcap layout)
    bad = tmp_path / "bad.pcap"
    bad.write_bytes(data[:third] + b"\x00" + data[third + 1 :])  # magic 0x55 -> 0
    capsys.readouterr()
    assert main(["dissect", str(bad)]) == 1  # marked, named, skipped: the rest still shows
    out, err = capsys.readouterr()
    assert "magic" in err and f"packet 2 at file offset {third - 16}" in err
    lines = out.splitlines()
    listing = lines[1 : lines.index(next(x for x in lines if x.startswith("summary:"))) - 1]
    assert "BAD RECORD" in lines[3] and len(listing) == len(read_capture(good))
    (tmp_path / "cut.pcap").write_bytes(data[: third + 100])
    assert main(["dissect", str(tmp_path / "cut.pcap")]) == 1
    assert "(packet 2, file offset" in capsys.readouterr().err
