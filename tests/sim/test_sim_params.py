"""Simulation parameters: bad values are refused up front, never a hang or silent nonsense."""

from __future__ import annotations

from dataclasses import replace

import pytest

from ualink_ref.cli import main
from ualink_ref.dl.config import DLConfig
from ualink_ref.phy.config import PhyConfig
from ualink_ref.sim.config import SimConfig
from ualink_ref.sim.link_run import Simulation, simulate
from ualink_ref.sim.workloads import Op, random_workload, uniform_workload


@pytest.mark.parametrize(
    "options",
    [{"batch": 0}, {"batch": -1}, {"latency": -1}, {"max_outstanding": 0}],
    ids=lambda o: "-".join(f"{k}{v}" for k, v in o.items()),
)
def test_bad_simulation_parameters_raise(options: dict[str, int]) -> None:
    # batch=0 used to loop forever (time never advanced); the others ran with
    # packets arriving before they were sent, or stalled until max_slots. Refused now
    # when the configuration is made, before any run.
    with pytest.raises(ValueError):
        Simulation(uniform_workload(3, "read"), SimConfig(**options))  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "kwargs", [{"n": -1}, {"n": 5, "span": 0}, {"n": 5, "span": 255}, {"n": 5, "base": 4}]
)
def test_bad_workload_parameters_raise(kwargs: dict[str, int]) -> None:
    # span 0 used to raise a bare randrange error; base 4 produced requests that
    # cross 256-byte boundaries and failed at issue time, mid-run.
    n = kwargs.pop("n")
    with pytest.raises(ValueError):
        random_workload(n, 0, **kwargs)


@pytest.mark.parametrize(
    "args",
    [["--batch", "0"], ["--max-outstanding", "0"], ["--latency", "-3"], ["--ops", "-5"],
     ["--span", "0"]],
)
def test_cli_rejects_bad_numbers(args: list[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["simulate", "--no-progress", *args])
    assert exc.value.code == 2  # argparse usage error, before anything runs


@pytest.mark.parametrize("latency", [60, 200])
def test_error_free_link_never_replays_at_long_latency(latency: int) -> None:
    # The DL's default replay timeout (128 slots) is shorter than the round trip
    # once latency is a few dozen slots; the simulation must size the timer to its
    # own round trip, or a clean link reports (spurious) replays.
    report = simulate(random_workload(100, 1),
                      SimConfig(phy=PhyConfig(fec="none"), latency=latency))
    assert report.ops_okay == 100 and report.data_mismatches == 0
    assert report.replays == 0 and report.crc_errors == 0, report


def test_explicit_replay_timeout_is_kept() -> None:
    sim = Simulation(uniform_workload(3, "read"),
                     SimConfig(latency=200, dl=DLConfig(replay_timeout=50)))
    assert sim.a.dl.config.replay_timeout == sim.b.dl.config.replay_timeout == 50


def test_check_counts_stray_bytes_outside_the_model() -> None:
    # The final-memory comparison must cover every byte, not only those the
    # model wrote: a stray write elsewhere is a mismatch.
    sim = Simulation(random_workload(50, 8), SimConfig(phy=PhyConfig(fec="none")))
    assert sim.run().data_mismatches == 0
    sim.b.memory.poke(0x7000_0000, b"\x01")  # far from the workload's span
    assert sim.check() == 1
    sim.a.memory.poke(0x7000_0100, b"\x02\x03")
    assert sim.check() == 3


def test_unknown_op_kind_is_refused() -> None:
    # kind "writefull" (the name random_workload's `kinds` uses) used to run
    # silently as an atomic ADD of 0 -- and the model agreed, so nothing failed.
    with pytest.raises(ValueError):
        Op("a", "writefull", 0x100, data=b"abcd")
    with pytest.raises(ValueError):
        Op("c", "read", 0x100, length=4)
    op = Op("a", "read", 0x100, length=4)
    assert replace(op, addr=0x200) == Op("a", "read", 0x200, length=4)
    with pytest.raises(ValueError):  # a changed copy is checked like a new op
        replace(op, side="c")
    with pytest.raises(ValueError):
        Op(*("a", "fetch", 0x100))
    with pytest.raises(ValueError):
        random_workload(5, 0, kinds=("read", "fetch"))
    with pytest.raises(ValueError):
        uniform_workload(5, "atomic")  # used to give writes


def test_check_expects_decode_error_at_unmapped_addresses() -> None:
    # The target answers DECODE_ERROR (and changes nothing) outside its mapped
    # 4 GiB; the sequential model must expect exactly that, not count the right
    # answer as thousands of data mismatches.
    ops = (
        Op("a", "write", 1 << 32, data=b"\x55" * 64),
        Op("a", "read", 1 << 32, length=64),
        Op("a", "atomic", (1 << 32) + 64, atomic_op=0, operand=1),
        Op("a", "write", 0x100, data=b"\x66" * 8),
        Op("b", "read", 1 << 32, length=4),
        Op("b", "read", (1 << 32) - 8, length=8),
    )
    sim = Simulation(ops, SimConfig(phy=PhyConfig(fec="none")))
    report = sim.run()
    assert [r.status.name for r in sim.results if r is not None] == [
        "DECODE_ERROR", "DECODE_ERROR", "DECODE_ERROR", "OKAY", "DECODE_ERROR", "OKAY"]
    assert report.ops_okay == 2 and report.data_mismatches == 0
    sim.b.memory.poke(1 << 32, b"\x01")  # a byte the model says was never written
    assert sim.check() == 1
