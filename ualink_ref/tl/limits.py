"""Resource limits of one transaction layer: what a peer can make it hold.

Each is a project choice (``specs/tl.md``, "Bounded resources", rules B1-B4): a
model that a careless or hostile peer can grow without bound is no model of a
hardware buffer. Memory pages are capped by :class:`~ualink_ref.tl.memory.Memory`
(``max_pages``), which the caller owns.
"""

from __future__ import annotations

from dataclasses import dataclass

from ualink_ref.errors import ConfigError


@dataclass(frozen=True)
class TLLimits:
    """Configurable bounds of a :class:`~ualink_ref.tl.transaction.TransactionLayer`.

    * ``max_responses``: responses the completer holds waiting for the peer's
      response credits; past it, received requests wait unserved and keep their
      request credits (back-pressure on the peer).
    * ``max_messages``: Write Message payloads kept in ``messages`` until the
      caller takes them; past it, a Write Message is answered DATA_ERROR.
    * ``max_credits``: credits of one class the peer may have granted and this end
      not yet spent, per source; a grant beyond it is rejected (``CreditError``).
    """

    max_responses: int = 1024
    max_messages: int = 1024
    max_credits: int = 1 << 16

    def __post_init__(self) -> None:
        for name in ("max_responses", "max_messages", "max_credits"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ConfigError(name, f"must be a positive integer, got {value!r}")


__all__ = ["TLLimits"]
