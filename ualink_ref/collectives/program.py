"""A collective as programs of steps, one program per rank (``specs/collectives.md`` C1-C4).

Each rank runs its steps in order. A data step (:class:`Put`, :class:`Get`; to a
multicast group a multicast store and a reduce-load) issues UPLI Writes / Reads of at
most 256 bytes each and is done once they are all issued; a :class:`Signal` is issued behind
every operation the rank issued to the same peer before it (C3: on its own plane the
TL and switch keep that order; an earlier operation on another plane, or through a
multicast group, must have completed first), without holding up the steps after it;
a :class:`Wait` holds the rank until a flag in its own memory reaches a count (C2); a
:class:`Fence` until an earlier data step's operations have completed (C3);
:class:`Reduce` and :class:`Copy` work on the rank's own memory and take time (C4).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Put:
    """Write ``nbytes`` of this rank's memory at ``src`` to ``peer``'s memory at ``dst``;
    to every member's when ``peer`` is a multicast group (a multicast store, switch rule
    S9)."""

    peer: int
    src: int
    dst: int
    nbytes: int


@dataclass(frozen=True, slots=True)
class Get:
    """Read ``nbytes`` of ``peer``'s memory at ``src`` into this rank's memory at ``dst``;
    when ``peer`` is a multicast group, the members' data summed by the switch (a
    reduce-load in the collective's dtype, switch rule S9)."""

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
    """Hold this rank until its own 8-byte flag at ``flag`` is at least ``count``: read in
    its own memory, no fabric operation (rule C2)."""

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
class Fence:
    """Hold this rank until every operation of its program step ``step`` (an earlier data
    step) has completed (rule C3)."""

    step: int


@dataclass(frozen=True, slots=True)
class Copy:
    """Copy ``nbytes`` of this rank's memory from ``src`` to ``dst`` (rule C4)."""

    dst: int
    src: int
    nbytes: int


#: Any step of a rank's program.
Step = Put | Get | Signal | Wait | Fence | Reduce | Copy

__all__ = ["Copy", "Fence", "Get", "Put", "Reduce", "Signal", "Step", "Wait"]
