"""Why the committed vectors leave a field, error or cross bin unhit (specs/coverage.md).

Point name -> bin -> reason. Rule waivers live beside the rules
(:mod:`~ualink_ref.testing.coverage.rules`). A waiver is a statement about the
committed ``vectors/``: the report flags any waiver whose bin is hit after all.
"""

from __future__ import annotations

WAIVERS: dict[str, dict[str, str]] = {}

__all__ = ["WAIVERS"]
