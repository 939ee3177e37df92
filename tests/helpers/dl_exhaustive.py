"""Exhaustive exploration of the go-back-N retry over the real DataLink (specs/dl.md).

Two ``DataLink`` ends, a FIFO channel each way holding at most ``capacity`` flits,
and discrete time. From every state, every action is tried on a deep copy:

* ``poll a`` / ``poll b`` — each end sends (or not) in the current slot, once per slot;
  end ``a`` is fed one TL flit whenever it has none queued, until ``flits`` are given;
* ``deliver``, ``corrupt`` or ``lose`` the oldest flit on either direction (corrupt and
  lose spend one unit of the ``faults`` budget);
* ``tick`` — the slot ends (both ends polled), time advances one slot, and every
  expired replay timer runs (timer expiry is thus explored at every point the
  time-out can fall, relative to polls and deliveries).

States are deduplicated on a canonical key: every field of both ends, with times
relative to ``now`` (the machine is time-shift invariant), the channels, the budget
and the delivery count. Checked:

* **safety** on every delivery: end ``b`` delivers exactly the next TL flit fed to
  ``a`` — exactly once, in order (nothing dropped, duplicated or reordered);
* **no deadlock**: from every reachable state, the fault-free schedule (both ends
  poll, every flit delivered intact, tick) completes — all flits delivered, both ends
  idle, channels empty — within ``bound`` slots.
"""

from __future__ import annotations

import copy
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from ualink_ref.dl import DataLink, TLFlitDelivered
from ualink_ref.dl.config import DLConfig
from ualink_ref.dl.receive import Receiver
from ualink_ref.dl.transmit import Transmitter


def tl_flit(n: int) -> bytes:
    """The ``n``-th TL flit fed to end ``a`` (distinct for every ``n``)."""
    return (n + 1).to_bytes(4, "big") * 16


@dataclass
class World:
    """The whole system: two ends, two channels, time, budget, progress."""

    a: DataLink
    b: DataLink
    ab: tuple[bytes, ...] = ()
    ba: tuple[bytes, ...] = ()
    now: int = 0
    polled: tuple[bool, bool] = (False, False)
    fed: int = 0
    delivered: int = 0
    faults: int = 0
    trace: list[str] = field(default_factory=list)


class SafetyViolation(AssertionError):
    """A delivery out of order, twice, or of data never sent."""


#: The halves' mutable containers (copied by :func:`clone_link`; everything else is
#: immutable and shared). The test fails loudly if a half grows another one.
_MUTABLE = ("_txq", "_msgq", "_buffer", "_rx_partial", "_ctlq", "_rmsgq")
#: Absolute times, made relative to ``now`` in the state key (the machine is
#: time-shift invariant).
_TIMES = ("_deadline", "_pace_next", "_unacked_since")
#: Not explored: the counters only count.
_IGNORED = ("_counters",)
_HALVES = (Transmitter, Receiver)


def _halves(link: DataLink) -> dict[str, Any]:
    """The link's transmitter and receiver by attribute name (a DataLink holds its
    configuration, which never changes, and these two, which own all its state)."""
    return {name: part for name, part in vars(link).items() if isinstance(part, _HALVES)}


def _clone_half(part: Any) -> Any:
    new = type(part).__new__(type(part))
    state = dict(vars(part))
    for name in _MUTABLE:
        if name in state:
            state[name] = copy.copy(state[name])
    vars(new).update(state)
    return new


def clone_link(link: DataLink) -> DataLink:
    """A copy of ``link`` sharing nothing mutable that affects behaviour (much faster
    than ``deepcopy``). Replay-buffer entries are shared (frozen); so are the counters,
    which only count and are not explored."""
    new = DataLink.__new__(DataLink)
    vars(new).update(vars(link))
    for name, part in _halves(link).items():
        vars(new)[name] = _clone_half(part)
    return new


def clone(w: World) -> World:
    """A copy of the world sharing nothing mutable."""
    return World(clone_link(w.a), clone_link(w.b), w.ab, w.ba, w.now, w.polled, w.fed,
                 w.delivered, w.faults, list(w.trace))


def _value_key(name: str, value: Any, now: int) -> Any:
    if name in _TIMES:
        return None if value is None else value - now
    if name in _MUTABLE:
        return (bytes(value) if isinstance(value, bytearray)
                else tuple((e.tl, e.first_tl_start, e.messages) if hasattr(e, "tl") else e
                           for e in value))
    return value


def _link_key(link: DataLink, now: int) -> tuple[Any, ...]:
    return tuple(_value_key(name, value, now)
                 for part in _halves(link).values()
                 for name, value in sorted(vars(part).items()) if name not in _IGNORED)


def check_fields() -> None:
    """Every mutable field of either half is known to :func:`clone_link` (a new
    container field would otherwise be shared between explored states), and the
    DataLink keeps its state in its two halves only."""
    link = DataLink()
    assert len(_halves(link)) == 2, "DataLink should be a transmitter and a receiver"
    for name, value in vars(link).items():
        assert name in _halves(link) or isinstance(value, DLConfig), f"DataLink.{name}"
    for part in _halves(link).values():
        for name, value in vars(part).items():
            mutable = isinstance(value, bytearray | deque | list | dict | set)
            assert not mutable or name in _MUTABLE or name in _IGNORED, (
                f"{type(part).__name__}.{name} is mutable: add it to _MUTABLE")


def key(w: World) -> tuple[Any, ...]:
    """Canonical state key (see the module docstring)."""
    return (_link_key(w.a, w.now), _link_key(w.b, w.now), w.ab, w.ba, w.polled, w.fed,
            w.delivered, w.faults)


def _corrupt(flit: bytes) -> bytes:
    return flit[:200] + bytes([flit[200] ^ 0x10]) + flit[201:]


def _receive(w: World, side: str, flit: bytes, flits: int) -> None:
    if side == "b":
        for event in w.b.receive(flit, w.now):
            if isinstance(event, TLFlitDelivered):
                if w.delivered >= flits or event.data != tl_flit(w.delivered):
                    raise SafetyViolation(f"delivered {event.data[:4].hex()} as TL flit "
                                          f"{w.delivered}: {' '.join(w.trace)}")
                w.delivered += 1
    else:
        for event in w.a.receive(flit, w.now):
            if isinstance(event, TLFlitDelivered):
                raise SafetyViolation("a delivered data b never sent")


def _poll(w: World, side: str, flits: int, capacity: int) -> bool:
    if side == "a":
        if w.polled[0] or len(w.ab) >= capacity:
            return False
        if w.fed < flits and w.a.tx_backlog == 0:
            w.a.send([tl_flit(w.fed)])
            w.fed += 1
        out = w.a.poll(w.now)
        w.polled = (True, w.polled[1])
        if out is not None:
            w.ab += (out,)
    else:
        if w.polled[1] or len(w.ba) >= capacity:
            return False
        out = w.b.poll(w.now)
        w.polled = (w.polled[0], True)
        if out is not None:
            w.ba += (out,)
    return True


def _tick(w: World) -> bool:
    if w.polled != (True, True):
        return False
    w.now += 1
    w.polled = (False, False)
    for link in (w.a, w.b):
        deadline = link.next_timer()
        if deadline is not None and deadline <= w.now:
            link.handle_timer(w.now)
    return True


def successors(w: World, flits: int, capacity: int, budget: int) -> Iterator[World]:
    """Every world one action away from ``w``."""
    for side in ("a", "b"):
        n = clone(w)
        if _poll(n, side, flits, capacity):
            n.trace.append(f"poll-{side}")
            yield n
    for direction, dst in (("ab", "b"), ("ba", "a")):
        queue: tuple[bytes, ...] = getattr(w, direction)
        if not queue:
            continue
        for action in ("deliver", "corrupt", "lose"):
            if action != "deliver" and w.faults >= budget:
                continue
            n = clone(w)
            head, rest = queue[0], queue[1:]
            setattr(n, direction, rest)
            n.trace.append(f"{action}-{direction}")
            if action != "deliver":
                n.faults += 1
            if action != "lose":
                _receive(n, dst, head if action == "deliver" else _corrupt(head), flits)
            yield n
    n = clone(w)
    if _tick(n):
        n.trace.append("tick")
        yield n


def done(w: World, flits: int) -> bool:
    """Everything delivered, nothing owed, nothing in flight."""
    return (w.delivered == flits and w.fed == flits and not w.ab and not w.ba
            and w.a.idle and w.b.idle)


def settle(w: World, flits: int, capacity: int, bound: int) -> Iterator[World]:
    """The fault-free schedule from ``w``: yields the world after each slot; raises
    AssertionError if it has not finished after ``bound`` slots (a deadlock)."""
    w = clone(w)
    for _ in range(bound):
        for side in ("a", "b"):
            _poll(w, side, flits, capacity)
            while w.ab or w.ba:  # deliver everything intact
                if w.ab:
                    head, w.ab = w.ab[0], w.ab[1:]
                    _receive(w, "b", head, flits)
                if w.ba:
                    head, w.ba = w.ba[0], w.ba[1:]
                    _receive(w, "a", head, flits)
        _tick(w)
        yield w
        if done(w, flits):
            return
    raise AssertionError(f"no progress to completion within {bound} fault-free slots after "
                         f"{' '.join(w.trace)}")


@dataclass
class Result:
    """What one exploration covered."""

    states: int
    transitions: int
    max_depth: int
    completed_states: int


def explore(*, window: int, flits: int, budget: int, capacity: int = 2, warmup: int = 0,
            replay_timeout: int = 4, bound: int = 200, max_states: int = 300_000,
            **options: int) -> Result:
    """Explore every interleaving (see the module docstring); return the counts.

    With ``warmup``, the first ``warmup`` TL flits go through fault-free first and the
    exploration starts from there with ``flits`` more: e.g. ``warmup=509`` puts the
    explored flits at sequence numbers 510, 511, 1, ... (across the wrap). More than
    ``max_states`` distinct states is a failure: the correct machine's state space is
    finite (times are relative), so an unbounded one is itself a bug (e.g. a timer
    that never re-arms).
    """
    config = DLConfig(window=window, replay_timeout=replay_timeout, **options)  # type: ignore[arg-type]
    start = World(DataLink(config), DataLink(config))
    if warmup:
        *_, start = settle(start, warmup, capacity, bound + 4 * warmup)
        start.trace = []
    flits += warmup
    seen = {key(start)}
    live: set[tuple[Any, ...]] = set()
    stack = [(start, 0)]
    transitions = max_depth = completed = 0
    while stack:
        w, depth = stack.pop()
        max_depth = max(max_depth, depth)
        if done(w, flits):
            completed += 1
        _check_live(w, flits, capacity, bound, live)
        for n in successors(w, flits, capacity, budget):
            transitions += 1
            k = key(n)
            if k not in seen:
                seen.add(k)
                if len(seen) > max_states:
                    raise AssertionError(f"more than {max_states} states: unbounded? after "
                                         f"{' '.join(n.trace[-40:])}")
                n.trace = n.trace[-40:]  # keep the counter-example trail short
                stack.append((n, depth + 1))
    return Result(len(seen), transitions, max_depth, completed)


def _check_live(w: World, flits: int, capacity: int, bound: int,
                live: set[tuple[Any, ...]]) -> None:
    """No deadlock from ``w``: its fault-free continuation reaches a finished world
    (memoized: a slot boundary already known to finish ends the walk)."""
    k = key(w)
    if k in live:
        return
    path = [k]
    for n in settle(w, flits, capacity, bound):
        nk = key(n)
        if nk in live:
            break
        path.append(nk)
    live.update(path)
