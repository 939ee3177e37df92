"""Fault plans (specs/dl.md section 9) in the simulator, pacing, UART, vendor and unknown
DL messages end to end (section 8, rules L7-L9)."""

from __future__ import annotations

from itertools import pairwise

import pytest

from ualink_ref.dl import DLMessageReceived
from ualink_ref.dl.messages import UnknownMessage, VendorMessage, decode_message
from ualink_ref.errors import FaultPlanError
from ualink_ref.net.harness import Network
from ualink_ref.node.config import EndpointConfig
from ualink_ref.node.endpoint import Endpoint
from ualink_ref.sim.config import SimConfig
from ualink_ref.sim.faults import FaultEntry, FaultPlan
from ualink_ref.sim.link_run import Simulation, simulate
from ualink_ref.sim.workloads import random_workload, uniform_workload
from ualink_ref.tl import Status


def test_link_down_and_back_every_op_okay_once_and_memory_matches() -> None:
    report = simulate(random_workload(2000, 1), fault_plan=FaultPlan.parse("down 200 800"))
    assert report.ops_completed == report.ops_okay == 2000
    assert report.data_mismatches == 0
    assert report.link_fault is None
    kinds = {(old, new) for _slot, _side, old, new, _cause in report.link_changes}
    assert ("up", "training") in kinds and ("training", "up") in kinds
    assert report.slots_down_a > 0 and report.slots_down_b > 0


def test_link_never_back_every_op_fails_in_bounded_slots_and_the_report_says_why() -> None:
    sim = Simulation(random_workload(2000, 1), fault_plan=FaultPlan.parse("down 200"))
    report = sim.run()
    assert report.ops_completed == 2000  # each exactly once (the simulator asserts it)
    failed = [r for r in sim.results if r is not None and r.status == Status.DATA_ERROR]
    assert len(failed) == report.ops_failed_by_fault > 0
    assert report.ops_okay + len(failed) == 2000
    assert report.link_fault is not None and "without progress" in report.link_fault
    assert "LINK FAULT" in report.format()
    # bound: the outage start, then replays and max_retrains trainings (rule L5)
    assert report.slots < 200 + 4 * 128 + 3 * 128 + 400


def test_corrupt_and_drop_ack_entries_cost_replays_not_data() -> None:
    plan = FaultPlan.parse("corrupt ab 5; corrupt ba 9; drop-ack ab 40; corrupt-rate ba 0.02",
                           seed=7)
    report = simulate(random_workload(1000, 2), fault_plan=plan)
    assert report.ops_okay == 1000 and report.data_mismatches == 0
    assert report.crc_errors >= 2 and report.replays >= 2


def test_plan_text_and_json_forms_agree() -> None:
    plan = FaultPlan.parse("corrupt ab 12; down 5 9; down 30\n drop-ack ba 0x10; poison 0x40")
    assert plan.entries[0] == FaultEntry("corrupt", "ab", at=12)
    assert plan.entries[1] == FaultEntry("down", at=5, until=9)
    assert plan.entries[2] == FaultEntry("down", at=30)
    assert plan.entries[3] == FaultEntry("drop-ack", "ba", at=16)
    assert plan.entries[4] == FaultEntry("poison", value=64)
    assert FaultPlan.parse(plan.text()) == plan
    assert FaultPlan.parse('[{"kind": "down", "at": 5, "until": 9}]').entries == (
        FaultEntry("down", at=5, until=9),)


@pytest.mark.parametrize("text", ["explode ab 1", "corrupt xy 1", "down 9 5", "corrupt ab",
                                  "corrupt-rate ab 2", "down x", "[{]",
                                  "[{\"kind\": 1, \"x\": 2}]"])
def test_bad_plans_raise_fault_plan_error(text: str) -> None:
    with pytest.raises(FaultPlanError):
        FaultPlan.parse(text)


def test_tl_entries_are_not_channels_and_stop_tag_needs_a_timeout() -> None:
    # TL entries act on the endpoints (specs/tl.md T5, P6), not on the wire.
    plan = FaultPlan.parse("poison 0x1000; stop-tag 5")
    assert plan.channels(lambda: 0, "kp4") == {"ab": None, "ba": None}
    assert plan.poisoned == (0x1000,) and plan.stop_tags == frozenset({5})
    with pytest.raises(FaultPlanError, match="needs a completion timeout"):
        plan.checked_stop_tags(None)
    assert plan.checked_stop_tags(100) == frozenset({5})
    for bad in ("stop-tag 2048", "poison -4", f"poison {1 << 57}"):
        with pytest.raises(FaultPlanError):
            FaultPlan.parse(bad)


def test_pacing_spaces_new_data_flits_by_256_over_rate_plus_one() -> None:
    sent: list[float] = []
    sim = Simulation(uniform_workload(120, "write", 256), SimConfig(latency=4, batch=1))
    sim.b.notify_rate(31)  # 32/256: one data flit per 8 slots

    def tap(chunk):  # type: ignore[no-untyped-def]
        if chunk.src == "a" and chunk.sent[0] & 0x10 and chunk.sent_at > 20:
            sent.append(chunk.sent_at)
    sim.add_tap(tap)
    paced = sim.run()
    free = simulate(uniform_workload(120, "write", 256), SimConfig(latency=4, batch=1))
    assert sim.a.dl.tx_rate == 31
    gaps = [b - a for a, b in pairwise(sent)]
    replays = sim.a.dl.counters.flits_replayed
    assert replays == 0 and gaps and min(gaps) >= 8
    assert paced.ops_okay == 120 and paced.data_mismatches == 0
    assert paced.slots > 4 * free.slots  # the pace, not the wire, sets the run's length


def test_uart_vendor_and_unknown_messages_end_to_end() -> None:
    config = EndpointConfig.with_fec("none")
    a, b = Endpoint(1, config=config), Endpoint(2, config=config)
    net = Network(batch=2)
    net.add_port("a", a)
    net.add_port("b", b)
    net.connect("a", "b", latency=3)
    stream = bytes((7 * i) & 0xFF for i in range(1001))
    a.uart_send(stream)
    a.send_vendor(VendorMessage(6, 0x7ABCD))
    a.dl.send_message(UnknownMessage(0b0101 << 2))
    seen: list[object] = []
    net.run(on_events=lambda evs: seen.extend(e for _n, e in evs))
    assert bytes(b.uart_received) == stream
    messages = [e.message for e in seen if isinstance(e, DLMessageReceived)]
    assert VendorMessage(6, 0x7ABCD) in messages
    assert b.link.counters.vendor_messages == 1
    assert b.link.counters.unknown_messages == 1
    assert b.link.counters.uart_bytes_received == 1001


def test_vendor_message_round_trip_and_class_code() -> None:
    word = VendorMessage(3, 0x1F).encode()
    assert (word >> 2) & 0xF == 0b1111 and (word >> 6) & 7 == 3 and word >> 9 == 0x1F
    assert decode_message(word) == VendorMessage(3, 0x1F)
