"""The data link layer's configuration: the retry engine and the link state machine.

Each option's rule and provenance is in specs/dl.md (the rule named beside it).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from ualink_ref.errors import ConfigError
from ualink_ref.sizes import MAX_WINDOW


def _positive_int(option: str, value: object, low: int = 1, high: int | None = None) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < low or (
            high is not None and value > high):
        bound = f"{low}..{high}" if high is not None else f"at least {low}"
        raise ConfigError(option, f"must be an integer {bound}, got {value!r}")


def _positive_real(option: str, value: object) -> None:
    if (isinstance(value, bool) or not isinstance(value, int | float)
            or not math.isfinite(value) or value <= 0):
        raise ConfigError(option, f"must be a positive number of flit slots, got {value!r}")


@dataclass(frozen=True)
class DLConfig:
    """Options of one :class:`~ualink_ref.dl.datalink.DataLink` (specs/dl.md §6, rules 2-8).

    * ``window``: data flits unacknowledged at most (rule 2; 1..``MAX_WINDOW``);
    * ``replay_timeout``: slots without an ack before a replay (rule 6);
    * ``max_replays``: futile replays before the link asks for a retrain (rule 6);
    * ``explicit_interval``: data flits between explicit sequence numbers (rule 4; 1..32);
    * ``ack_interval`` / ``ack_delay``: acks every so many flits or slots (rule 8);
      ``ack_delay`` ``None`` is a quarter of ``replay_timeout``.
    """

    window: int = MAX_WINDOW
    replay_timeout: float = 128.0
    max_replays: int = 4
    explicit_interval: int = 32
    ack_interval: int = 32
    ack_delay: float | None = None

    def __post_init__(self) -> None:
        _positive_int("window", self.window, 1, MAX_WINDOW)
        _positive_real("replay_timeout", self.replay_timeout)
        _positive_int("max_replays", self.max_replays)
        _positive_int("explicit_interval", self.explicit_interval, 1, 32)
        _positive_int("ack_interval", self.ack_interval)
        if self.ack_delay is not None:
            _positive_real("ack_delay", self.ack_delay)

    @property
    def effective_ack_delay(self) -> float:
        """``ack_delay``, or a quarter of the replay timeout when unset (rule 8)."""
        return self.ack_delay if self.ack_delay is not None else self.replay_timeout / 4


@dataclass(frozen=True)
class LinkStateConfig:
    """Options of one :class:`~ualink_ref.dl.linkstate.LinkManager` (specs/dl.md §8, L1-L10).

    * ``retrain_slots``: how long a retrain takes;
    * ``max_retrains``: retrains without progress before the link faults;
    * ``request_interval``: slots between REQUEST_ONLINE messages while training;
    * ``idle_after``: quiet slots before an up link is idle and starts probing;
    * ``start_up``: begin up (True) or in training (False).
    """

    retrain_slots: float = 128
    max_retrains: int = 3
    request_interval: float = 16
    idle_after: float = 256
    start_up: bool = True

    def __post_init__(self) -> None:
        _positive_real("retrain_slots", self.retrain_slots)
        _positive_int("max_retrains", self.max_retrains)
        _positive_real("request_interval", self.request_interval)
        _positive_real("idle_after", self.idle_after)
        if not isinstance(self.start_up, bool):
            raise ConfigError("start_up", f"must be True or False, got {self.start_up!r}")


__all__ = ["DLConfig", "LinkStateConfig"]
