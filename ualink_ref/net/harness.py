"""The one network harness: ports joined by links with latency, driven in flit slots.

Every use that drives stacks against each other in time — the link
simulation, captures, the comparison's measured side, the TL trace vectors,
the test pairs and the switched fabric — runs on :class:`Network`. It is
sans-IO like the layers: time (in flit slots) is a number it advances, nothing
sleeps, spawns or reads a clock.

Model (``specs/README.md``, "Architecture", gives the same rules):

* A **port** is anything with ``poll_many(now, max_flits) -> (wire, count)``
  (up to ``max_flits`` flits for slots ``now, now + 1, ...``, stopping at the
  first idle slot) and ``receive(wire, now) -> list[event]``. An
  :class:`~ualink_ref.node.endpoint.Endpoint` is one port; a switch has one
  per link; adapters turn a bare ``DataLink`` or ``TransactionLayer`` into one.
* A **link** joins two ports. Each direction has a latency ``latency`` (flit
  slots) and an optional :class:`Channel` that may corrupt or lose what crosses.
* A **step** covers ``batch`` slots starting at ``now``: every port, in the
  order the links were made, sends what it has for those slots (one chunk per
  port and step, so FEC runs batched); each chunk crosses its channel; then
  every chunk whose arrival has come is received; then ``now`` advances.
* **Timing.** A step's *edge* is the time at which it hands over: with
  ``edge="boundary"`` (the default) the slot boundary after the step,
  ``now + batch`` — what arrives is received before anything is sent in the
  next slot; with ``edge="last_slot"`` the step's last slot,
  ``now + batch - 1`` — what arrives is received after the sends of that slot
  (the slot-accurate convention the committed scenario captures and TL trace
  vectors were recorded with). A chunk sent in a step arrives ``latency``
  slots after that step's edge and is received, in sending order, at the
  edge of the first step whose edge is at or after its arrival; the edge
  time is the ``now`` its receiver is given.
* **Taps** see every chunk as sent and as received, with the events the
  receiver produced (what a capture records), without changing anything.
* **Identity line code** (``specs/fabric.md`` F14). A direction with no channel
  between two :class:`UncodedPort` ports of equal ``line_code`` carries, while no
  tap is attached, the flits before their line code: the sender's
  ``poll_uncoded`` and the receiver's ``receive_uncoded`` instead of ``poll_many``
  and ``receive``. Nothing but the receiver's decoder ever reads such a chunk, and
  the decode of an uncorrupted codeword is its data, so events, counters and
  timing are the same; only the encode and the decode are not done.

Nothing here knows what a flit means: the layers do.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from itertools import repeat
from typing import Any, Literal, Protocol, runtime_checkable

from ualink_ref.errors import LinkStalledError

#: How a step hands over (see the module docstring).
Edge = Literal["boundary", "last_slot"]


class Port(Protocol):
    """One end of a link, as the harness drives it."""

    def poll_many(self, now: float, max_flits: int) -> tuple[bytes, int]:
        """Up to ``max_flits`` flits' wire bytes for slots ``now, now + 1, ...``."""
        ...

    def receive(self, data: bytes, now: float) -> list[Any]:
        """Take wire bytes received at ``now``; return the events they produced."""
        ...

    @property
    def busy(self) -> bool:
        """True while this port has anything to send, resend or acknowledge."""
        ...


@runtime_checkable
class UncodedPort(Port, Protocol):
    """A port that can also send and take its flits before its line code (the FEC
    encode and decode): the identity line code of the module docstring."""

    @property
    def line_code(self) -> object:
        """A value naming the line code; two ports with equal values decode each
        other's uncorrupted wire bytes to exactly the flits sent."""
        ...

    def poll_uncoded(self, now: float, max_flits: int) -> tuple[bytes, int]:
        """:meth:`Port.poll_many`, the flits before the line code."""
        ...

    def receive_uncoded(self, data: bytes, now: float) -> list[Any]:
        """:meth:`Port.receive` of flits before the line code: the same events."""
        ...


class Channel(Protocol):
    """What one direction of a link does to the bytes crossing it."""

    def transmit(self, wire: bytes, first_flit: int, flits: int, now: float) -> bytes | None:
        """``wire`` (``flits`` flits, the first one the direction's ``first_flit``-th,
        sent in slots ``now, now + 1, ...``) as received, or ``None`` if it is lost."""
        ...


@dataclass(frozen=True)
class WireChunk:
    """One chunk on one direction of a link, as a tap sees it.

    ``sent`` is what the sender put on the wire in the step starting at
    ``sent_at``; ``received`` what the channel let through (``None``: lost) and
    ``received_at`` the time it was handed to the receiver; ``events`` what the
    receiver returned for it. ``first_flit`` counts the direction's flits.
    """

    link: str
    src: str
    dst: str
    sent_at: float
    received_at: float
    first_flit: int
    flits: int
    sent: bytes
    received: bytes | None
    events: tuple[Any, ...]


Tap = Callable[[WireChunk], None]


@dataclass
class _Direction:
    """One direction of a link: its latency, channel and chunks in flight."""

    name: str
    src_name: str
    dst_name: str
    src: Port
    dst: Port
    latency: int
    channel: Channel | None
    #: (sender, receiver) when the line code is the identity here (module docstring).
    uncoded: tuple[UncodedPort, UncodedPort] | None = None
    flits_sent: int = 0
    # (arrival, sent_at, first_flit, flits, sent, received, coded); not coded: the
    # chunk holds the flits before the line code (identity line code)
    in_flight: deque[tuple[float, float, int, int, bytes, bytes | None, bool]] = field(
        default_factory=deque
    )


@dataclass(frozen=True)
class Link:
    """A link between two named ports; ``ab`` / ``ba`` name its directions."""

    name: str
    a: str
    b: str


class Network:
    """Named ports, links between them with a latency each way, driven step by step.

    ``batch`` slots per step; ``edge`` as in the module docstring. Ports are
    added with :meth:`add_port` (or implicitly by :meth:`connect`).
    """

    def __init__(self, *, batch: int = 1, edge: Edge = "boundary", start: float = 0) -> None:
        if batch < 1:
            raise ValueError(f"batch must be >= 1, got {batch}")
        if edge not in ("boundary", "last_slot"):
            raise ValueError(f"edge must be 'boundary' or 'last_slot', got {edge!r}")
        self.batch = batch
        self.edge: Edge = edge
        self.now = start
        self.ports: dict[str, Port] = {}
        self.links: dict[str, Link] = {}
        self._directions: list[_Direction] = []
        self._by_link: dict[tuple[str, str], _Direction] = {}
        self._taps: list[Tap] = []

    # -- building ------------------------------------------------------------------

    def add_port(self, name: str, port: Port) -> None:
        """Register ``port`` under ``name`` (unique)."""
        if name in self.ports:
            raise ValueError(f"a port named {name!r} exists already")
        self.ports[name] = port

    def connect(
        self,
        a: str,
        b: str,
        *,
        latency: int = 0,
        latency_ba: int | None = None,
        channel_ab: Channel | None = None,
        channel_ba: Channel | None = None,
        name: str | None = None,
    ) -> Link:
        """Join ports ``a`` and ``b``; ``latency`` each way (``latency_ba`` if it differs)."""
        for port in (a, b):
            if port not in self.ports:
                raise ValueError(f"no port named {port!r}")
        back = latency if latency_ba is None else latency_ba
        if latency < 0 or back < 0:
            raise ValueError(f"link latency must be >= 0, got {latency} / {back}")
        link = Link(name or f"{a}-{b}", a, b)
        if link.name in self.links:
            raise ValueError(f"a link named {link.name!r} exists already")
        self.links[link.name] = link
        for key, src, dst, lat, chan in (("ab", a, b, latency, channel_ab),
                                         ("ba", b, a, back, channel_ba)):
            direction = _Direction(f"{link.name}:{key}", src, dst, self.ports[src],
                                   self.ports[dst], lat, chan,
                                   _uncoded(self.ports[src], self.ports[dst], chan))
            self._directions.append(direction)
            self._by_link[(link.name, key)] = direction
        return link

    def add_tap(self, tap: Tap) -> None:
        """Call ``tap`` with every :class:`WireChunk` once it has been received (or lost).

        Taps are added before the chunks they are to see are sent: a chunk sent without
        a tap may carry flits before their line code (the identity line code), so
        adding one while such a chunk is in flight is refused (``ValueError``)."""
        if any(not chunk[6] for d in self._directions for chunk in d.in_flight):
            raise ValueError("add taps before running: chunks sent without a tap are in "
                             "flight")
        self._taps.append(tap)

    # -- running -------------------------------------------------------------------

    def edge_of(self, start: float) -> float:
        """The edge time of a step starting at ``start``."""
        return start + self.batch - (1 if self.edge == "last_slot" else 0)

    def step(self) -> list[tuple[str, Any]]:
        """Advance one step; return ``(receiving port, event)`` pairs in delivery order."""
        now = self.now
        edge = self.edge_of(now)
        tapped = bool(self._taps)
        for d in self._directions:
            if d.uncoded is not None and not tapped:
                flits, count = d.uncoded[0].poll_uncoded(now, self.batch)
                if count:
                    d.in_flight.append((edge + d.latency, now, d.flits_sent, count, flits,
                                        flits, False))
                    d.flits_sent += count
                continue
            wire, count = d.src.poll_many(now, self.batch)
            if not count:
                continue
            received = (wire if d.channel is None
                        else d.channel.transmit(wire, d.flits_sent, count, now))
            d.in_flight.append((edge + d.latency, now, d.flits_sent, count, wire, received,
                                True))
            d.flits_sent += count
        out: list[tuple[str, Any]] = []
        for d in self._directions:
            queue = d.in_flight
            while queue and queue[0][0] <= edge:
                _arrival, sent_at, first, count, wire, received, coded = queue.popleft()
                if not coded and d.uncoded is not None:
                    events = d.uncoded[1].receive_uncoded(wire, edge)
                else:
                    events = d.dst.receive(received, edge) if received is not None else []
                out.extend(zip(repeat(d.dst_name), events))  # (port, event) pairs, in C
                if self._taps:
                    chunk = WireChunk(d.name.rsplit(":", 1)[0], d.src_name, d.dst_name, sent_at,
                                      edge, first, count, wire, received, tuple(events))
                    for tap in self._taps:
                        tap(chunk)
        self.now = now + self.batch
        return out

    @property
    def in_flight(self) -> int:
        """Chunks sent and not yet received, over every link."""
        return sum(len(d.in_flight) for d in self._directions)

    @property
    def busy(self) -> bool:
        """True while any port is busy or anything is on a wire."""
        return bool(self.in_flight) or any(p.busy for p in self.ports.values())

    def run(
        self,
        *,
        until: Callable[[], bool] | None = None,
        on_events: Callable[[list[tuple[str, Any]]], None] | None = None,
        max_slots: float = 1_000_000,
        quiet_steps: int = 1,
    ) -> int:
        """Step until ``until()`` holds (default: nothing busy for ``quiet_steps`` steps).

        ``on_events`` gets each step's events. Returns the slots used; raises
        :class:`~ualink_ref.errors.LinkStalledError` after ``max_slots``.
        """
        start = self.now
        quiet = 0
        while True:
            events = self.step()
            if on_events is not None:
                on_events(events)
            if until is not None:
                if until():
                    break
            else:
                quiet = 0 if self.busy else quiet + 1
                if quiet >= quiet_steps:
                    break
            if self.now - start >= max_slots:
                raise LinkStalledError(self.now - start, "network still busy")
        return int(self.now - start)


def _uncoded(src: Port, dst: Port,
             channel: Channel | None) -> tuple[UncodedPort, UncodedPort] | None:
    """``(src, dst)`` when the direction between them may carry flits before their line
    code (no channel; both ends :class:`UncodedPort` with equal line codes), else None."""
    if (channel is None and isinstance(src, UncodedPort) and isinstance(dst, UncodedPort)
            and src.line_code == dst.line_code):
        return src, dst
    return None


# -- channels ------------------------------------------------------------------------


@dataclass
class ChannelChain:
    """Channels applied one after the other (a lost chunk stays lost)."""

    channels: Sequence[Channel]

    def transmit(self, wire: bytes, first_flit: int, flits: int,
                 now: float = 0) -> bytes | None:
        """Pass ``wire`` through every channel in turn."""
        out: bytes | None = wire
        for channel in self.channels:
            if out is None:
                return None
            out = channel.transmit(out, first_flit, flits, now)
        return out


def chain(channels: Iterable[Channel | None]) -> Channel | None:
    """One channel doing all of ``channels`` (``None`` entries skipped; ``None`` if empty)."""
    present = [c for c in channels if c is not None]
    if not present:
        return None
    return present[0] if len(present) == 1 else ChannelChain(present)


__all__ = [
    "Channel",
    "ChannelChain",
    "Edge",
    "Link",
    "Network",
    "Port",
    "Tap",
    "UncodedPort",
    "WireChunk",
    "chain",
]
