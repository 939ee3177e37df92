"""Configuration of the nodes: one link end, an endpoint, a switch (specs/fabric.md)."""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from ualink_ref.dl.config import DLConfig, LinkStateConfig
from ualink_ref.errors import ConfigError
from ualink_ref.phy.config import PhyConfig
from ualink_ref.sizes import FecMode
from ualink_ref.tl.config import TLConfig
from ualink_ref.tl.credits import CreditConfig, check_option


def _whole(option: str, value: object, low: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < low:
        raise ConfigError(option, f"must be an integer >= {low}, got {value!r}")


@dataclass(frozen=True)
class LinkConfig:
    """One link end below its upper layer: PHY, DL, link states, and ``tl_backlog``,
    the unpacked TL flits the DL may hold before the link end stops taking more from
    the layer above (project choice: back-pressure on the TL, specs/tl.md)."""

    phy: PhyConfig = field(default_factory=PhyConfig)
    dl: DLConfig = field(default_factory=DLConfig)
    link_state: LinkStateConfig = field(default_factory=LinkStateConfig)
    tl_backlog: int = 20

    def __post_init__(self) -> None:
        for name, kind in (("phy", PhyConfig), ("dl", DLConfig),
                           ("link_state", LinkStateConfig)):
            if not isinstance(getattr(self, name), kind):
                raise ConfigError(name, f"must be a {kind.__name__}, got {getattr(self, name)!r}")
        _whole("tl_backlog", self.tl_backlog, 1)

    def with_fec(self, fec: FecMode) -> LinkConfig:
        """This configuration with the PHY's FEC mode ``fec`` (the knob most runs turn)."""
        return replace(self, phy=replace(self.phy, fec=fec))


@dataclass(frozen=True)
class EndpointConfig:
    """One accelerator's endpoint: its link end and its TL (``tl.fault_status`` is what
    every operation completes with when the link goes to fault, specs/dl.md L5)."""

    link: LinkConfig = field(default_factory=LinkConfig)
    tl: TLConfig = field(default_factory=TLConfig)

    def __post_init__(self) -> None:
        if not isinstance(self.link, LinkConfig):
            raise ConfigError("link", f"must be a LinkConfig, got {self.link!r}")
        if not isinstance(self.tl, TLConfig):
            raise ConfigError("tl", f"must be a TLConfig, got {self.tl!r}")

    @classmethod
    def with_fec(cls, fec: FecMode) -> EndpointConfig:
        """The default endpoint with FEC mode ``fec``."""
        return cls(link=LinkConfig().with_fec(fec))


@dataclass(frozen=True)
class PfcConfig:
    """Pause thresholds of one switch ingress port, in buffers (command + 64-byte data)
    occupied (specs/fabric.md S8).

    ``xoff``: pause the peer when this many buffers are occupied; ``xon``: resume at or
    below this; ``delay``: slots until the peer obeys (the link's one-way latency plus
    the pause frame's own time); ``limit``: the physical buffer — a field that finds
    more occupied is counted in ``SwitchPortStats.headroom_exceeded`` (where Ethernet
    would drop it).
    """

    xoff: int
    xon: int
    delay: int = 1
    limit: int = 1 << 30

    def __post_init__(self) -> None:
        for name in ("xoff", "xon", "delay", "limit"):
            _whole(name, getattr(self, name), 0)
        if not self.xon < self.xoff <= self.limit:
            raise ConfigError("xoff", f"needs xon < xoff <= limit, got {self}")


@dataclass(frozen=True)
class MulticastGroup:
    """A multicast group of the switch (specs/fabric.md S9): requests addressed to
    accelerator ID ``group`` reach every accelerator in ``members`` at the same address;
    a reduce-load is answered with the reduction of every member's data, in member order."""

    group: int
    members: tuple[int, ...]

    def __post_init__(self) -> None:
        _whole("multicast", self.group, 0)
        if self.group >= 1 << 10:
            raise ConfigError("multicast", f"group ID {self.group} does not fit in 10 bits")
        if (not isinstance(self.members, tuple) or not self.members
                or len(set(self.members)) != len(self.members)):
            raise ConfigError("multicast", f"members must be a tuple of distinct IDs, got "
                                           f"{self.members!r}")
        for member in self.members:
            _whole("multicast", member, 0)
        if self.group in self.members:
            raise ConfigError("multicast", f"group {self.group} is one of its own members")


@dataclass(frozen=True)
class SwitchConfig:
    """A switch: ``ports`` link ends (each a ``link``), ``latency`` port-to-port slots
    (S7), ``buffer`` the credits each ingress grants (S4), ``pfc`` pause thresholds (S8)
    or ``None`` for credit-based flow control only, ``multicast`` its multicast groups
    and ``multicast_ops`` how many multicast operations it works on at once (S9),
    ``stall_slots`` how long an egress may hold fields without sending one before the
    switch faults the port (H6)."""

    ports: int
    latency: int = 0
    buffer: CreditConfig = field(default_factory=CreditConfig)
    pfc: PfcConfig | None = None
    link: LinkConfig = field(default_factory=lambda: LinkConfig(tl_backlog=10))
    multicast: tuple[MulticastGroup, ...] = ()
    multicast_ops: int = 2048
    stall_slots: int = 4096

    def __post_init__(self) -> None:
        _whole("ports", self.ports, 1)
        _whole("stall_slots", self.stall_slots, 1)
        _whole("multicast_ops", self.multicast_ops, 1)
        if self.multicast_ops > 1 << 11:
            raise ConfigError("multicast_ops", f"at most {1 << 11} (tags), got "
                                               f"{self.multicast_ops}")
        if not isinstance(self.multicast, tuple) or not all(
                isinstance(g, MulticastGroup) for g in self.multicast):
            raise ConfigError("multicast", "must be a tuple of MulticastGroup")
        if len({g.group for g in self.multicast}) != len(self.multicast):
            raise ConfigError("multicast", "two groups share an ID")
        _whole("latency", self.latency, 0)
        check_option("buffer", self.buffer)  # every VC can carry a maximal field
        if self.pfc is not None and not isinstance(self.pfc, PfcConfig):
            raise ConfigError("pfc", f"must be a PfcConfig or None, got {self.pfc!r}")
        if not isinstance(self.link, LinkConfig):
            raise ConfigError("link", f"must be a LinkConfig, got {self.link!r}")


__all__ = ["EndpointConfig", "LinkConfig", "MulticastGroup", "PfcConfig", "SwitchConfig"]
