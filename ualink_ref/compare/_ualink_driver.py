"""Drives the ualink_ref stack for :func:`ualink_side.measure_ualink` (filled in per stack)."""

from __future__ import annotations

from collections.abc import Sequence

from ualink_ref.compare.mapping import Op
from ualink_ref.compare.ualink_side import UalinkCount


def run(ops: Sequence[Op], *, fec: str, seed: int) -> UalinkCount:
    """Run ``ops`` and count what leaves each side."""
    raise RuntimeError("the ualink_ref transaction layer is not available on this branch yet")
