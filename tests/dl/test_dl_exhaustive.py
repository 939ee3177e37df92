"""Exhaustive check of the go-back-N retry over the real DataLink (tests/helpers).

Bounds run here (CI): windows 2 and 4, three data flits, every interleaving of polls,
deliveries, timer expiries, and one loss or corruption anywhere on either direction,
channels of two flits each way; the second run places the three flits across the
511 -> 1 sequence wrap. State counts are asserted so that a change in what is explored
shows up (specs/dl.md, "Exhaustive check", gives them and the larger offline runs).
"""

from __future__ import annotations

import pytest

from tests.helpers import dl_exhaustive as exhaustive


def test_clone_knows_every_mutable_field() -> None:
    exhaustive.check_fields()


@pytest.mark.parametrize("window, warmup, states", [(2, 0, 25_864), (4, 509, 23_872)])
def test_every_interleaving_delivers_exactly_once_in_order_and_finishes(
        window: int, warmup: int, states: int) -> None:
    result = exhaustive.explore(window=window, flits=3, budget=1, warmup=warmup,
                                ack_interval=2, ack_delay=2, max_replays=2)
    # safety and liveness are asserted inside explore (SafetyViolation / AssertionError)
    assert result.states == states
    assert result.completed_states > 0
