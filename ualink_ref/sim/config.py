"""The configuration of one link run: two endpoints over one link (specs/tl.md,
"Simulation"; the stall rule S2 in specs/README.md, "Faults")."""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import get_args

from ualink_ref.dl.config import DLConfig, LinkStateConfig
from ualink_ref.errors import ConfigError
from ualink_ref.net.harness import Edge
from ualink_ref.net.timeouts import replay_timeout_for, stall_slots_for
from ualink_ref.node.config import EndpointConfig, LinkConfig
from ualink_ref.phy.config import PhyConfig
from ualink_ref.tl.config import TLConfig
from ualink_ref.tl.credits import CreditConfig, check_option
from ualink_ref.tl.upli import ACC_BITS


def _whole(option: str, value: object, low: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < low:
        raise ConfigError(option, f"must be an integer >= {low}, got {value!r}")


def _rate(option: str, value: object) -> None:
    if (isinstance(value, bool) or not isinstance(value, int | float)
            or not 0 <= value <= 1):
        raise ConfigError(option, f"must be a probability in [0, 1], got {value!r}")


@dataclass(frozen=True)
class Burst:
    """Error bursts on top of random bit errors: ``length_bits`` long (any length: a
    burst carries over from one batch to the next), starting at each bit with
    probability ``rate``, each bit in a burst flipped with probability ``density``
    (see :class:`~ualink_ref.net.channels.ErrorBursts`)."""

    length_bits: int = 20
    rate: float = 1e-5
    density: float = 0.5

    def __post_init__(self) -> None:
        _whole("length_bits", self.length_bits, 1)
        _rate("rate", self.rate)
        _rate("density", self.density)


@dataclass(frozen=True)
class SimConfig:
    """One link run between endpoints ``acc_ids`` (a, b).

    * Both ends' layers: ``phy``, ``dl`` (``None``, the usual case: the default DL with
      the replay timeout this run's latency and batch need,
      :func:`~ualink_ref.net.timeouts.replay_timeout_for`; a ``DLConfig`` given here is
      used as it is, its own ``replay_timeout`` included, so set that too when the
      latency is long), ``link_state``, ``tl``;
      ``credits_b`` replaces end b's receive buffers when they differ.
    * ``ber`` / ``burst``: the random channel of each direction; ``seed`` seeds it,
      the workload's draws and each end's split-response draws.
    * ``latency`` (one-way, slots), ``batch`` (slots per harness step), ``edge``
      (the harness's arrival rule), ``max_outstanding`` (ops in flight per end).
    * ``stall_slots``: the watchdog (rule S2; ``None``: 16 replay timeouts plus the
      completion timeout); ``max_slots``: an absolute bound, or ``None``.
    """

    phy: PhyConfig = field(default_factory=PhyConfig)
    dl: DLConfig | None = None
    link_state: LinkStateConfig = field(default_factory=LinkStateConfig)
    tl: TLConfig = field(default_factory=TLConfig)
    credits_b: CreditConfig | None = None
    ber: float = 0.0
    burst: Burst | None = None
    seed: int = 0
    latency: int = 8
    batch: int = 8
    edge: Edge = "boundary"
    max_outstanding: int = 64
    stall_slots: int | None = None
    max_slots: int | None = None
    acc_ids: tuple[int, int] = (1, 2)

    def __post_init__(self) -> None:
        for name, kind in (("phy", PhyConfig), ("link_state", LinkStateConfig),
                           ("tl", TLConfig)):
            if not isinstance(getattr(self, name), kind):
                raise ConfigError(name, f"must be a {kind.__name__}, got {getattr(self, name)!r}")
        if self.dl is not None and not isinstance(self.dl, DLConfig):
            raise ConfigError("dl", f"must be a DLConfig or None, got {self.dl!r}")
        if self.credits_b is not None:
            check_option("credits_b", self.credits_b)  # every VC can carry a maximal field
        if isinstance(self.seed, bool) or not isinstance(self.seed, int):
            raise ConfigError("seed", f"must be an integer, got {self.seed!r}")
        _rate("ber", self.ber)
        if self.burst is not None and not isinstance(self.burst, Burst):
            raise ConfigError("burst", f"must be a Burst, got {self.burst!r}")
        _whole("latency", self.latency, 0)
        _whole("batch", self.batch, 1)
        _whole("max_outstanding", self.max_outstanding, 1)
        if self.edge not in get_args(Edge):
            raise ConfigError("edge", f"must be one of {get_args(Edge)}, got {self.edge!r}")
        if self.stall_slots is not None:
            _whole("stall_slots", self.stall_slots, 1)
        if self.max_slots is not None:
            _whole("max_slots", self.max_slots, 0)
        ids = self.acc_ids
        if (not isinstance(ids, tuple) or len(ids) != 2 or ids[0] == ids[1]
                or any(isinstance(i, bool) or not isinstance(i, int)
                       or not 0 <= i < 1 << ACC_BITS for i in ids)):
            raise ConfigError("acc_ids", f"must be two distinct accelerator IDs "
                                         f"0..{(1 << ACC_BITS) - 1}, got {ids!r}")

    @property
    def dl_config(self) -> DLConfig:
        """``dl``, or the default DL with this run's replay timeout."""
        if self.dl is not None:
            return self.dl
        return DLConfig(replay_timeout=replay_timeout_for(self.latency, self.batch))

    @property
    def endpoint_config(self) -> EndpointConfig:
        """End a's configuration."""
        link = LinkConfig(phy=self.phy, dl=self.dl_config, link_state=self.link_state)
        return EndpointConfig(link=link, tl=self.tl)

    @property
    def endpoint_config_b(self) -> EndpointConfig:
        """End b's configuration: end a's, with ``credits_b`` when given."""
        config = self.endpoint_config
        if self.credits_b is None:
            return config
        return replace(config, tl=replace(config.tl, credits=self.credits_b))

    @property
    def watchdog_slots(self) -> int:
        """``stall_slots``, or its default: 16 replay timeouts (rule S2) plus the
        completion timeout (an op waiting for it makes no progress by design)."""
        if self.stall_slots is not None:
            return self.stall_slots
        return (stall_slots_for(self.dl_config.replay_timeout)
                + math.ceil(self.tl.timeout_slots or 0))


__all__ = ["Burst", "SimConfig"]
