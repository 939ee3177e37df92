"""A collective as programs of steps, one program per rank (``specs/collectives.md`` C1-C4).

Each rank runs its steps in order. A data step (:class:`Put`, :class:`Get`) issues UPLI
Writes / Reads of at most 256 bytes each and is done once they are all issued; a
:class:`Signal` is issued once every operation the rank issued before it has
completed (C3: the only ordering it relies on is completion), without holding up the
steps after it; a :class:`Wait` holds the rank until a flag in its own memory reaches
a count (C2); :class:`Reduce` and :class:`Copy` work on the rank's own memory and take
time (C4).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Put:
    """Write ``nbytes`` of this rank's memory at ``src`` to ``peer``'s memory at ``dst``."""

    peer: int
    src: int
    dst: int
    nbytes: int


@dataclass(frozen=True, slots=True)
class Get:
    """Read ``nbytes`` of ``peer``'s memory at ``src`` into this rank's memory at ``dst``."""

    peer: int
    src: int
    dst: int
    nbytes: int


@dataclass(frozen=True, slots=True)
class Signal:
    """Add one to the 8-byte flag at ``flag`` in ``peer``'s memory (an AtomicNR ADD) behind
    every operation this rank issued to ``peer`` before it (rule C3)."""

    peer: int
    flag: int


@dataclass(frozen=True, slots=True)
class Wait:
    """Hold this rank until its own 8-byte flag at ``flag`` is at least ``count`` (C2)."""

    flag: int
    count: int


@dataclass(frozen=True, slots=True)
class Reduce:
    """``dst = ((srcs[0] + srcs[1]) + srcs[2]) + ...`` elementwise over ``nbytes`` of this
    rank's memory in the collective's dtype, in exactly that order (rule C4)."""

    dst: int
    srcs: tuple[int, ...]
    nbytes: int


@dataclass(frozen=True, slots=True)
class Copy:
    """Copy ``nbytes`` of this rank's memory from ``src`` to ``dst`` (rule C4)."""

    dst: int
    src: int
    nbytes: int


#: Any step of a rank's program.
Step = Put | Get | Signal | Wait | Reduce | Copy

__all__ = ["Copy", "Get", "Put", "Reduce", "Signal", "Step", "Wait"]
