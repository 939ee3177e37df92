"""ualink_ref: a packet-level reference model of a UALink-style scale-up interconnect.

Layers (each a subpackage, each sans-IO):

* :mod:`ualink_ref.phy` — Reed–Solomon FEC (RS(544,514) "KP4", RS(272,258) "LL"),
  flit <-> codeword mapping, interleave, error channels, error-rate model;
* :mod:`ualink_ref.dl` — 640-byte DL flits, CRC-32, DL messages, go-back-N retry;
* :mod:`ualink_ref.tl` — TL flits and fields, UPLI commands, credits, memory target.

Heavy submodules are imported lazily so that ``import ualink_ref`` stays cheap.
"""

from __future__ import annotations

import importlib
from typing import Any

from ualink_ref.errors import (
    ConfigError,
    CrcError,
    CreditError,
    DecodeError,
    EncodeError,
    FecUncorrectableError,
    FieldRangeError,
    LinkStalledError,
    ProtocolError,
    ReservedBitsError,
    SequenceError,
    TagError,
    TruncatedError,
    UALinkError,
)

__version__ = "0.1.0"

# Public names that live in submodules, loaded on first use (see __getattr__).
_LAZY: dict[str, str] = {
    "Endpoint": "ualink_ref.node.endpoint",
    "EndpointConfig": "ualink_ref.node.config",
    "Completion": "ualink_ref.tl.events",
}


def __getattr__(name: str) -> Any:
    """Load lazily exported names (PEP 562) so the package imports fast."""
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'ualink_ref' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


__all__ = [
    "Completion",
    "ConfigError",
    "CrcError",
    "CreditError",
    "DecodeError",
    "EncodeError",
    "Endpoint",
    "EndpointConfig",
    "FecUncorrectableError",
    "FieldRangeError",
    "LinkStalledError",
    "ProtocolError",
    "ReservedBitsError",
    "SequenceError",
    "TagError",
    "TruncatedError",
    "UALinkError",
    "__version__",
]
