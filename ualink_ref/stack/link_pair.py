"""Two :class:`DataLink` ends over a seeded faulty channel (a test and simulation helper).

Like h11's ``ConnectionPair``: :class:`LinkPair` owns ends ``a`` and ``b`` and
one :class:`FaultyChannel` per direction, and advances them one flit slot at
a time: timers, then ``poll`` on both ends, then the channel, then
``receive``. Every random choice comes from ``random.Random(seed)``.
"""

from __future__ import annotations

import random
from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass, field

from ualink_ref.dl.datalink import DataLink
from ualink_ref.dl.events import DLEvent, TLFlitDelivered

#: Scripted fault kinds, by transmitted-flit index.
FAULTS = ("drop", "corrupt")


def carries_payload(flit: bytes) -> bool:
    """The payload bit of a flit's header (bit 4 of byte 0), read without decoding."""
    return bool(flit[0] & 0x10)


@dataclass
class FaultyChannel:
    """One direction of a link: fixed delay, random and scripted faults.

    ``drop`` / ``corrupt`` are per-flit probabilities for any flit;
    ``drop_commands`` drops only flits without TL bytes (acks, replay requests).
    A corrupted flit has 1 to 3 random bits flipped, which the CRC-32 always
    detects. ``script`` maps the index of a transmitted flit (0, 1, ...) to
    ``"drop"`` or ``"corrupt"`` (flip the least significant bit of byte 320).
    """

    drop: float = 0.0
    corrupt: float = 0.0
    drop_commands: float = 0.0
    seed: int = 0
    delay: int = 1
    script: Mapping[int, str] = field(default_factory=dict)
    transmitted: int = 0
    dropped: int = 0
    corrupted: int = 0

    def __post_init__(self) -> None:
        self._rng = random.Random(self.seed)
        bad = {v for v in self.script.values()} - set(FAULTS)
        if bad or self.delay < 0:
            raise ValueError(f"bad channel settings: faults {bad}, delay {self.delay}")

    @property
    def faulty(self) -> bool:
        """True while random faults are enabled."""
        return bool(self.drop or self.corrupt or self.drop_commands)

    def stop_faults(self) -> None:
        """Turn random faults off (scripted ones at future indices still apply)."""
        self.drop = self.corrupt = self.drop_commands = 0.0

    def apply(self, flit: bytes) -> bytes | None:
        """The flit as received (``None`` if lost)."""
        index = self.transmitted
        self.transmitted += 1
        action = self.script.get(index)
        if action is None:
            r = self._rng.random()
            if r < self.drop or (not carries_payload(flit) and r < self.drop + self.drop_commands):
                action = "drop"
            elif self._rng.random() < self.corrupt:
                action = "corrupt_random"
        if action == "drop":
            self.dropped += 1
            return None
        if action == "corrupt":
            self.corrupted += 1
            return flip_bits(flit, [320 * 8 + 7])
        if action == "corrupt_random":
            self.corrupted += 1
            nbits = self._rng.randint(1, 3)
            return flip_bits(flit, self._rng.sample(range(len(flit) * 8), nbits))
        return flit


def flip_bits(data: bytes, positions: list[int]) -> bytes:
    """``data`` with the given bits flipped (bit 0 = MSB of byte 0)."""
    out = bytearray(data)
    for p in positions:
        out[p // 8] ^= 0x80 >> (p % 8)
    return bytes(out)


class LinkPair:
    """Ends ``a`` and ``b`` joined by channels ``ab`` (a to b) and ``ba`` (b to a)."""

    def __init__(self, a: DataLink | None = None, b: DataLink | None = None,
                 ab: FaultyChannel | None = None, ba: FaultyChannel | None = None) -> None:
        self.a = a or DataLink()
        self.b = b or DataLink()
        self.ab = ab or FaultyChannel()
        self.ba = ba or FaultyChannel(seed=1)
        self.now = 0
        self.delivered: dict[str, list[bytes]] = {"a": [], "b": []}
        self.events: dict[str, list[DLEvent]] = {"a": [], "b": []}
        self.wire: list[tuple[int, str, bytes]] = []  # (slot, "ab"/"ba", flit as sent)
        self.record_wire = False
        self._pipes: dict[str, deque[tuple[int, bytes | None]]] = {"ab": deque(), "ba": deque()}

    def step(self) -> None:
        """Advance one flit slot."""
        now = self.now
        for name, end in (("a", self.a), ("b", self.b)):
            timer = end.next_timer()
            if timer is not None and now >= timer:
                self._record(name, end.handle_timer(now))
        for end, chan, pipe in ((self.a, self.ab, "ab"), (self.b, self.ba, "ba")):
            flit = end.poll(now)
            if flit is not None:
                if self.record_wire:
                    self.wire.append((now, pipe, flit))
                self._pipes[pipe].append((now + chan.delay, chan.apply(flit)))
        for pipe, dst, name in (("ab", self.b, "b"), ("ba", self.a, "a")):
            queue = self._pipes[pipe]
            while queue and queue[0][0] <= now:
                _, arrived = queue.popleft()
                if arrived is not None:
                    self._record(name, dst.receive(arrived, now))
        self.now += 1

    def _record(self, name: str, events: list[DLEvent]) -> None:
        self.events[name].extend(events)
        self.delivered[name].extend(e.data for e in events if isinstance(e, TLFlitDelivered))

    def idle(self) -> bool:
        """Nothing queued, unacknowledged, owed or on the wire at either end."""
        return (not self._pipes["ab"] and not self._pipes["ba"]
                and self.a.idle and self.b.idle)

    def run(self, slots: int) -> None:
        """Advance ``slots`` flit slots."""
        for _ in range(slots):
            self.step()

    def run_until_idle(self, max_slots: int = 100_000) -> int:
        """Step until :meth:`idle`; return the slots used (raise if ``max_slots`` pass)."""
        start = self.now
        while not self.idle():
            if self.now - start >= max_slots:
                raise TimeoutError(f"link not idle after {max_slots} slots")
            self.step()
        return self.now - start


__all__ = ["FAULTS", "FaultyChannel", "LinkPair", "carries_payload", "flip_bits"]
