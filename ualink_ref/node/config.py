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
class SwitchConfig:
    """A switch: ``ports`` link ends (each a ``link``), ``latency`` port-to-port slots
    (S7), ``buffer`` the credits each ingress grants (S4), ``pfc`` pause thresholds (S8)
    or ``None`` for credit-based flow control only."""

    ports: int
    latency: int = 0
    buffer: CreditConfig = field(default_factory=CreditConfig)
    pfc: PfcConfig | None = None
    link: LinkConfig = field(default_factory=lambda: LinkConfig(tl_backlog=10))

    def __post_init__(self) -> None:
        _whole("ports", self.ports, 1)
        _whole("latency", self.latency, 0)
        check_option("buffer", self.buffer)  # every VC can carry a maximal field
        if self.pfc is not None and not isinstance(self.pfc, PfcConfig):
            raise ConfigError("pfc", f"must be a PfcConfig or None, got {self.pfc!r}")
        if not isinstance(self.link, LinkConfig):
            raise ConfigError("link", f"must be a LinkConfig, got {self.link!r}")


__all__ = ["EndpointConfig", "LinkConfig", "PfcConfig", "SwitchConfig"]
