"""Endpoint configurations from the experiments' option names (the link run, captures).

The nodes take one :class:`~ualink_ref.node.config.EndpointConfig`; the link run and
the capture scenarios still name their options flat (``replay_timeout``,
``retrain_slots``, ``tl_options``, ...), as their CLI flags do. This module maps each
flat name to its place in the configuration once, and refuses a name it does not
know at construction (a misspelt option is a :class:`~ualink_ref.errors.ConfigError`,
never ignored).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import fields, replace
from typing import Any

from ualink_ref.dl.config import DLConfig, LinkStateConfig
from ualink_ref.errors import ConfigError
from ualink_ref.node.config import EndpointConfig, LinkConfig
from ualink_ref.phy.config import PhyConfig
from ualink_ref.sizes import FecMode
from ualink_ref.tl.config import TLConfig
from ualink_ref.tl.credits import CreditConfig

_DL_NAMES = frozenset(f.name for f in fields(DLConfig))
_LINK_STATE_NAMES = frozenset(f.name for f in fields(LinkStateConfig))
_TL_NAMES = frozenset(f.name for f in fields(TLConfig))


def endpoint_config(fec: FecMode, options: Mapping[str, Any], *,
                    credits: CreditConfig | None = None,
                    compress: bool = True) -> EndpointConfig:
    """The :class:`EndpointConfig` that ``options`` name (flat names: DL options,
    link-state options, ``interleave``, ``tl_backlog``, ``tl_limits``,
    ``fault_status`` and ``tl_options``, a mapping of TL option names)."""
    dl: dict[str, Any] = {}
    link_state: dict[str, Any] = {}
    tl: dict[str, Any] = {"compress": compress}
    if credits is not None:
        tl["credits"] = credits
    interleave = 1
    tl_backlog: int | None = None
    fault_status = None
    for name, value in options.items():
        if name in _DL_NAMES:
            dl[name] = value
        elif name in _LINK_STATE_NAMES:
            link_state[name] = value
        elif name == "interleave":
            interleave = value
        elif name == "tl_backlog":
            tl_backlog = value
        elif name == "tl_limits":
            tl["limits"] = value
        elif name == "fault_status":
            fault_status = value
        elif name == "tl_options":
            unknown = set(value) - _TL_NAMES
            if unknown:
                raise ConfigError("tl_options", f"unknown TL options {sorted(unknown)}")
            tl.update(value)
        else:
            raise ConfigError(name, "no such endpoint option")
    link = LinkConfig(phy=PhyConfig(fec, interleave), dl=DLConfig(**dl),
                      link_state=LinkStateConfig(**link_state))
    if tl_backlog is not None:
        link = replace(link, tl_backlog=tl_backlog)
    config = EndpointConfig(link=link, tl=TLConfig(**tl))
    return config if fault_status is None else replace(config, fault_status=fault_status)


__all__ = ["endpoint_config"]
