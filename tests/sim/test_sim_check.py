"""The simulation's verification model counts what it must: wrong results, wrong bytes,
stray bytes — and nothing on a correct run.

``Simulation.check`` replays each side's ops on a plain sequential model and compares
results and final memories. These tests break a finished run on purpose and expect
the count to say exactly how much was broken.
"""

from __future__ import annotations

from ualink_ref.phy.config import PhyConfig
from ualink_ref.sim.config import SimConfig
from ualink_ref.sim.link_run import Simulation
from ualink_ref.sim.workloads import Op, random_workload
from ualink_ref.tl import Status

WORKLOAD = (
    Op("a", "write", 0x1000, data=bytes(range(1, 65))),
    Op("a", "write", 0x1100, data=bytes([0xAA]) * 32, byte_enable=0x0F0F0F0F),
    Op("a", "read", 0x1000, length=64),
    Op("a", "atomic", 0x1008, atomic_op=0, operand=5, size=8),  # ADD
    Op("b", "write", 0x2000, data=b"\x01\x02\x03\x04"),
    Op("b", "read", 0x2000, length=8),
)


def _run(workload: tuple[Op, ...] | object = WORKLOAD) -> Simulation:
    sim = Simulation(workload, SimConfig(phy=PhyConfig(fec="none")))  # type: ignore[arg-type]
    report = sim.run()
    assert report.data_mismatches == 0 and report.ops_okay == report.ops
    return sim


def test_a_correct_run_has_no_mismatch_on_random_ops() -> None:
    _run(random_workload(300, seed=7, span=2048))


def test_wrong_and_stray_bytes_are_counted_one_by_one() -> None:
    sim = _run()
    # b served a's ops: a byte a wrote, a byte a's Write left disabled, a stray byte.
    sim.b.memory.poke(0x1003, b"\xff")  # written as 4
    sim.b.memory.poke(0x1104, b"\x77")  # byte enable 0 there: stays zero
    sim.b.memory.poke(0x5000, b"\x01\x02")  # never written: two stray bytes
    assert sim.check() == 4
    sim.a.memory.poke(0x2002, b"\x03")  # the same value a's memory holds: no change
    assert sim.check() == 4


def test_a_wrong_result_is_counted() -> None:
    sim = _run()
    read = 2  # a's read of 0x1000
    done = sim.results[read]
    assert done is not None and done.data == bytes(range(1, 65))
    sim.results[read] = done._replace(data=bytes(64))
    assert sim.check() == 1
    sim.results[read] = done._replace(status=Status.DATA_ERROR)
    assert sim.check() == 1
    atomic = 3  # fetched the old bytes 9..16 at 0x1008
    fetched = sim.results[atomic]
    assert fetched is not None and fetched.data == bytes(range(9, 17))
    sim.results[read] = done
    sim.results[atomic] = fetched._replace(data=bytes(range(10, 18)))
    assert sim.check() == 1
