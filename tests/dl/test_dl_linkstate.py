"""LinkManager's surface for the layer above (specs/dl.md section 8): events produced
while polling are handed over once, through ``take_events``."""

from __future__ import annotations

from ualink_ref.dl import DataLink
from ualink_ref.dl.config import LinkStateConfig
from ualink_ref.dl.linkstate import LinkManager, LinkState, LinkStateChanged


def test_take_events_hands_over_the_poll_events_once() -> None:
    # L1, L10: a quiet up link goes idle while polling; the change waits for the owner.
    manager = LinkManager(DataLink(), LinkStateConfig(idle_after=4))
    assert manager.take_events() == []
    for now in range(6):
        manager.poll(now)
    assert manager.state is LinkState.IDLE
    events = manager.take_events()
    assert [(e.old, e.new) for e in events if isinstance(e, LinkStateChanged)] == [
        (LinkState.UP, LinkState.IDLE)]
    assert manager.take_events() == []  # handed over once
