"""The link-state rules (specs/dl.md L2-L6, L8-L10) pinned at their edges, on one
``LinkManager`` whose peer is silent or answers by hand.

Each test names the developer's bug it catches (issue 26); ``fuzz/mutation_sample.py
--hand`` replays the hand-made ones.
"""

from __future__ import annotations

import pytest

from ualink_ref.dl import DataLink
from ualink_ref.dl import messages as dlm
from ualink_ref.dl.config import LinkStateConfig
from ualink_ref.dl.events import DLMessageReceived, RetrainNeeded
from ualink_ref.dl.linkstate import LinkInput, LinkManager, LinkState

IDLE_AFTER, RETRAIN = 16, 40


def _run(manager: LinkManager, until: int, *, waiting: bool = True,
         ack_at: tuple[int, ...] = ()) -> list[tuple[float, LinkState, LinkState]]:
    """Drive ``manager`` alone, one slot a step (timer, then poll); the peer says nothing
    except an ACK at the slots in ``ack_at``. Returns (slot, old, new) of every change."""
    for now in range(until + 1):
        t = manager.next_timer()
        if t is not None and t <= now:
            manager.run_timer(float(now))
        if now in ack_at:
            manager.handle(LinkInput.PEER_ACK, float(now), "peer answered")
        manager.poll(float(now), waiting=waiting)
    return [(c.now, c.old, c.new) for c in manager.changes]


def _manager(**kw: float) -> LinkManager:
    config = LinkStateConfig(**{"idle_after": IDLE_AFTER, "retrain_slots": RETRAIN, **kw})
    return LinkManager(DataLink(), config)


def test_l10_a_silent_peer_is_found_retrain_slots_after_the_first_probe() -> None:
    # Bug caught: every probe re-arms the deadline, so with probes every idle_after
    # (< retrain_slots) slots a silent peer is never detected.
    manager = _manager()
    first_probe = IDLE_AFTER  # quiet from slot 0; idle (and the first probe) at 16
    changes = _run(manager, first_probe + RETRAIN)
    assert changes == [(first_probe, LinkState.UP, LinkState.IDLE),
                       (first_probe + RETRAIN, LinkState.IDLE, LinkState.TRAINING)]
    assert manager.changes[-1].cause == "retrain needed: no answer to the idle probe"
    # Probes at 16, 32, 48 (every idle_after while waiting), none after the training began.
    assert manager.counters.probes_sent == 3


def test_l10_one_slot_before_the_deadline_the_end_is_still_idle() -> None:
    manager = _manager()
    _run(manager, IDLE_AFTER + RETRAIN - 1)
    assert manager.state is LinkState.IDLE


def test_l10_an_ack_clears_the_deadline_and_the_next_probe_arms_a_new_one() -> None:
    manager = _manager()
    changes = _run(manager, 100, ack_at=(20,))
    # The probe at 32 is the first after the ACK: its deadline is 32 + 40.
    assert changes[1] == (32 + RETRAIN, LinkState.IDLE, LinkState.TRAINING)


def test_l10_not_waiting_the_end_probes_once() -> None:
    manager = _manager()
    changes = _run(manager, IDLE_AFTER + RETRAIN - 1, waiting=False)
    assert manager.counters.probes_sent == 1
    assert changes == [(IDLE_AFTER, LinkState.UP, LinkState.IDLE)]


@pytest.mark.parametrize(("idle_after", "idle_at"), [(1, 1), (5, 5)])
def test_l10_up_becomes_idle_after_exactly_idle_after_quiet_slots(idle_after: int,
                                                                   idle_at: int) -> None:
    manager = _manager(idle_after=idle_after, retrain_slots=1000)
    changes = _run(manager, idle_at)
    assert changes == [(idle_at, LinkState.UP, LinkState.IDLE)]
    manager2 = _manager(idle_after=idle_after, retrain_slots=1000)
    assert _run(manager2, idle_at - 1) == []


def test_l5_a_silent_peer_takes_the_end_to_fault_after_max_retrains_trainings() -> None:
    # L3-L5: each training lasts retrain_slots; at max_retrains (3) failed ones, fault.
    manager = _manager()
    start = IDLE_AFTER + RETRAIN
    changes = _run(manager, start + 3 * RETRAIN)
    assert changes[-1] == (start + 3 * RETRAIN, LinkState.TRAINING, LinkState.FAULT)
    assert manager.counters.trainings == 3 and manager.counters.trainings_failed == 3
    assert manager.state is LinkState.FAULT


def test_l5_one_slot_before_the_third_training_ends_the_end_is_training() -> None:
    manager = _manager()
    _run(manager, IDLE_AFTER + 4 * RETRAIN - 1)
    assert manager.state is LinkState.TRAINING and manager.counters.trainings == 3


def test_l3_l4_an_ack_during_training_brings_the_link_up_at_its_end() -> None:
    manager = LinkManager(DataLink(), LinkStateConfig(start_up=False, retrain_slots=RETRAIN,
                                                      idle_after=1000))
    manager.start(0.0)
    changes = _run(manager, RETRAIN, ack_at=(RETRAIN - 1,))
    assert changes == [(0.0, LinkState.DOWN, LinkState.TRAINING),
                       (RETRAIN, LinkState.TRAINING, LinkState.UP)]
    # L3: an online request at the start and every request_interval (16) slots.
    assert manager.counters.requests_sent == len(range(0, RETRAIN, 16))


def test_l6_an_up_end_answers_an_online_request_and_stays_up() -> None:
    manager = _manager(idle_after=1000)
    manager.handle(LinkInput.PEER_REQUEST, 0.0, "peer asked to train")
    assert manager.state is LinkState.UP and manager.counters.acks_sent == 1


def test_l9_unknown_and_vendor_messages_are_counted_exactly_and_change_nothing() -> None:
    manager = _manager(idle_after=1000)
    events: list[object] = [DLMessageReceived(dlm.UnknownMessage(0xF0F0F0F0)),
                            DLMessageReceived(dlm.UnknownMessage(0x0F0F0F0F)),
                            DLMessageReceived(dlm.VendorMessage(3, 5))]
    manager.on_events(events, 1.0)  # type: ignore[arg-type]
    assert (manager.counters.unknown_messages, manager.counters.vendor_messages) == (2, 1)
    assert manager.state is LinkState.UP and manager.changes == []
    assert len(events) == 3  # nothing added


def test_l8_uart_bytes_sent_counted_in_two_byte_words() -> None:
    manager = _manager(idle_after=1000)
    manager.uart_send(b"abcde")
    manager.uart_send(b"")
    assert manager.counters.uart_bytes_sent == 5
    manager.on_events([DLMessageReceived(dlm.UartData(b"xy")),  # type: ignore[list-item]
                       DLMessageReceived(dlm.UartData(b""))], 0.0)
    assert manager.counters.uart_bytes_received == 2


def test_l2_retrain_needed_starts_a_training_with_its_cause() -> None:
    manager = _manager(idle_after=1000)
    events: list[object] = [RetrainNeeded(4)]
    manager.on_events(events, 3.0)  # type: ignore[arg-type]
    assert manager.state is LinkState.TRAINING and manager.counters.trainings == 1
    assert [(c.now, c.cause) for c in manager.changes] == [(3.0, "retrain needed")]
    assert len(events) == 2  # the state change is appended after the DL's event


def test_l5_retrain_needed_at_max_retrains_attempts_is_a_fault_naming_the_count() -> None:
    manager = _manager(idle_after=1000, max_retrains=1)
    manager.on_events([RetrainNeeded(4)], 0.0)  # type: ignore[list-item]
    manager.run_timer(float(RETRAIN))  # no ACK: the one training fails -> fault
    assert manager.state is LinkState.FAULT
    assert manager.fault_reason == "1 training(s) without progress, no answer from the peer"


def test_l3_a_training_timer_run_early_changes_nothing() -> None:
    manager = LinkManager(DataLink(), LinkStateConfig(start_up=False, retrain_slots=RETRAIN))
    manager.start(0.0)
    assert manager.next_timer() == RETRAIN
    assert manager.run_timer(RETRAIN - 1.0) == []
    assert manager.state is LinkState.TRAINING and manager.counters.trainings_failed == 0
    manager.run_timer(float(RETRAIN))  # at the end: no ACK came, a second training
    assert manager.counters.trainings_failed == 1 and manager.counters.trainings == 2


def test_l1_a_manager_takes_only_a_link_state_config() -> None:
    with pytest.raises(TypeError, match="LinkStateConfig"):
        LinkManager(DataLink(), {"idle_after": 4})  # type: ignore[arg-type]
