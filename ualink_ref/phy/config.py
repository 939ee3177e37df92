"""The physical layer's configuration: FEC mode and symbol interleave (specs/phy.md)."""

from __future__ import annotations

from dataclasses import dataclass

from ualink_ref.errors import ConfigError
from ualink_ref.phy.flits import MODES
from ualink_ref.sizes import FecMode, check_fec


@dataclass(frozen=True)
class PhyConfig:
    """How one link end codes its flits on the wire.

    * ``fec``: ``"kp4"`` (RS(544,514)), ``"ll"`` (RS(272,258)) or ``"none"``;
    * ``interleave``: codewords per interleave group, dividing the codewords of one
      flit (project choice: each poll encodes whole flits, so a group lies in one flit).
    """

    fec: FecMode = "kp4"
    interleave: int = 1

    def __post_init__(self) -> None:
        try:
            check_fec(self.fec)
        except ValueError as exc:
            raise ConfigError("fec", str(exc)) from None
        per_flit = MODES[self.fec].codewords_per_flit
        if (isinstance(self.interleave, bool) or not isinstance(self.interleave, int)
                or self.interleave < 1 or per_flit % self.interleave):
            raise ConfigError(
                "interleave",
                f"{self.interleave!r} needs groups of that many codewords; a {self.fec} flit "
                f"has {per_flit} (use 1, or 2 with ll)")


__all__ = ["PhyConfig"]
