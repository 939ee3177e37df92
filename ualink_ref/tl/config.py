"""The transaction layer's configuration (specs/tl.md; each option's rule named beside it)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from ualink_ref.errors import ConfigError
from ualink_ref.tl.completer import SPLIT_MODES, SplitMode
from ualink_ref.tl.credits import CreditConfig, check_option
from ualink_ref.tl.limits import TLLimits
from ualink_ref.tl.upli import NUM_TAGS, Status


@dataclass(frozen=True)
class TLConfig:
    """Options of one :class:`~ualink_ref.tl.transaction.TransactionLayer`.

    * ``credits``: receive buffers granted to the peer (credit rules);
    * ``compress``: use the address cache and compressed fields (compression rules);
    * ``batch_credit_returns``: return credits only when owed in bulk (credit rules);
    * ``limits``: what a peer can make this end hold (rules B1-B4);
    * ``split`` / ``split_seed``: how the completer answers multi-beat reads (rule 8);
    * ``timeout_slots``: an operation's deadline, ``None`` for none (rule 10);
    * ``stop_tags``: tags the completer never answers, to test timeouts (rule 10);
    * ``fault_status``: what every operation completes with once the link under this
      TL goes to fault (specs/dl.md L5).
    """

    credits: CreditConfig = field(default_factory=CreditConfig)
    compress: bool = True
    batch_credit_returns: bool = False
    limits: TLLimits = field(default_factory=TLLimits)
    split: SplitMode = "never"
    split_seed: int = 0
    timeout_slots: float | None = None
    stop_tags: frozenset[int] = frozenset()
    fault_status: Status = Status.DATA_ERROR

    def __post_init__(self) -> None:
        if not isinstance(self.fault_status, Status):
            raise ConfigError("fault_status", f"must be a Status, got {self.fault_status!r}")
        check_option("credits", self.credits)  # every VC can carry a maximal field
        if not isinstance(self.limits, TLLimits):
            raise ConfigError("limits", f"must be a TLLimits, got {self.limits!r}")
        for name in ("compress", "batch_credit_returns"):
            if not isinstance(getattr(self, name), bool):
                raise ConfigError(name, f"must be True or False, got {getattr(self, name)!r}")
        if self.split not in SPLIT_MODES:
            raise ConfigError("split", f"must be one of {SPLIT_MODES}, got {self.split!r}")
        if isinstance(self.split_seed, bool) or not isinstance(self.split_seed, int):
            raise ConfigError("split_seed", f"must be an integer, got {self.split_seed!r}")
        timeout = self.timeout_slots
        if timeout is not None and (
                isinstance(timeout, bool) or not isinstance(timeout, int | float)
                or not math.isfinite(timeout) or timeout <= 0):
            raise ConfigError("timeout_slots",
                              f"must be a positive number or None, got {timeout!r}")
        try:
            tags = frozenset(self.stop_tags)
        except TypeError:
            raise ConfigError("stop_tags",
                              f"must be a set of tags, got {self.stop_tags!r}") from None
        if any(isinstance(t, bool) or not isinstance(t, int) or not 0 <= t < NUM_TAGS
               for t in tags):
            raise ConfigError("stop_tags", f"must be tags 0..{NUM_TAGS - 1}")
        object.__setattr__(self, "stop_tags", tags)  # any iterable given, kept as a frozenset


#: The configuration a :class:`~ualink_ref.tl.transaction.TransactionLayer` gets by default.
DEFAULT_TL_CONFIG = TLConfig()

__all__ = ["DEFAULT_TL_CONFIG", "TLConfig"]
