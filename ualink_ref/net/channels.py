"""Channels for the harness's links: what one direction does to the bytes crossing it.

Each implements :class:`ualink_ref.net.harness.Channel`
(``transmit(wire, first_flit, flits, now) -> bytes | None``) and counts what it
did. Every channel keeps its state from chunk to chunk (a random stream, a
burst in progress, an outage window in slots), so how the harness batches
slots never changes what a fault can be. The bit-level error models themselves live in the PHY
(:mod:`ualink_ref.phy.channel`); these adapters only apply them to chunks.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import NDArray

from ualink_ref.dl.formats import header_payload
from ualink_ref.errors import EncodeError
from ualink_ref.net.harness import Channel
from ualink_ref.phy import BitErrorChannel, apply_bit_errors


@dataclass
class RandomBitErrors:
    """Independent bit errors at ``ber`` (the PHY's :class:`BitErrorChannel`), seeded."""

    ber: float
    seed: int
    errors: int = 0

    def __post_init__(self) -> None:
        self._channel = BitErrorChannel(self.ber, self.seed)

    def transmit(self, wire: bytes, first_flit: int, flits: int, now: float = 0) -> bytes:
        """``wire`` with random bit errors (the stream continues across chunks)."""
        before = self._channel.errors
        out = self._channel.apply(wire)
        self.errors += self._channel.errors - before
        return out


@dataclass
class ErrorBursts:
    """Bursts of ``length_bits`` starting at each wire bit with probability ``rate``, seeded.

    The direction's wire is one continuous bit stream (chunk after chunk), so a
    burst may start anywhere and run on into later chunks for as long as it
    lasts: a burst longer than a chunk — or than many flits, an outage — is
    carried over, chunk after chunk, never refused (Faults rule F1 in
    ``specs/README.md``). As in the PHY's :class:`~ualink_ref.phy.BurstChannel`,
    the first and last bit of a burst are flipped and each bit between them with
    probability ``density``; overlapping bursts merge (a bit is flipped once).
    Memory stays bounded by the chunk size whatever the burst length: only
    ``(start, length)`` of each burst in progress is kept.
    """

    length_bits: int
    rate: float
    seed: int
    density: float = 0.5
    errors: int = 0
    bursts: int = 0

    def __post_init__(self) -> None:
        if isinstance(self.length_bits, bool) or not isinstance(self.length_bits, int) \
                or self.length_bits < 1:
            raise EncodeError(f"burst length must be an integer >= 1 bit, got {self.length_bits!r}")
        if not 0.0 <= self.rate <= 1.0 or not 0.0 <= self.density <= 1.0:
            raise EncodeError(
                f"burst rate and density must be in [0, 1], got {self.rate}, {self.density}")
        self._rng = np.random.default_rng(self.seed)
        # Bursts still in progress: start bit relative to the next chunk's first bit
        # (<= 0) and full length; carried from chunk to chunk (rule F1).
        self._active: list[tuple[int, int]] = []

    @property
    def in_progress(self) -> int:
        """Bursts that began in an earlier chunk and have not ended yet."""
        return len(self._active)

    def transmit(self, wire: bytes, first_flit: int, flits: int, now: float = 0) -> bytes:
        """``wire`` with the bursts that start in it and the ones carried over applied."""
        nbits = len(wire) * 8
        count = int(self._rng.binomial(nbits, self.rate)) if nbits else 0
        starts = np.sort(self._rng.integers(0, nbits, size=count)).tolist() if count else []
        self.bursts += count
        bursts = self._active + [(int(s), self.length_bits) for s in starts]
        parts: list[NDArray[np.int64]] = []
        carried: list[tuple[int, int]] = []
        for start, length in bursts:
            lo, hi = max(start, 0), min(start + length, nbits)
            # Bits lo..hi-1 of the burst fall in this chunk: draw them, force the ends.
            hit = self._rng.random(hi - lo) < self.density
            if start >= 0:
                hit[0] = True
            if start + length <= nbits:
                hit[-1] = True
            else:
                carried.append((start - nbits, length))
            parts.append(lo + np.flatnonzero(hit).astype(np.int64))
        self._active = carried
        if not parts:
            return wire
        positions = np.unique(np.concatenate(parts))
        self.errors += int(positions.size)
        return apply_bit_errors(wire, positions)


@dataclass
class Outage:
    """The direction is down from slot ``start`` up to (not including) slot ``end``
    (``None``: for good — a dead direction).

    Every flit sent in a slot while the link is down arrives as noise: its wire
    bytes are replaced by seeded random bytes (Faults rule F2 in
    ``specs/README.md``). The receiver's FEC finds it uncorrectable (or, without
    FEC, the DL's CRC rejects it), which is what a receiver of a failed lane
    sees; flits sent before or after the outage in the same chunk pass
    unchanged. A chunk's ``k``-th flit is the one for slot ``now + k`` (the
    harness's convention).
    """

    start: float
    end: float | None = None
    seed: int = 0
    garbled: int = 0

    def __post_init__(self) -> None:
        if self.end is not None and self.end < self.start:
            raise EncodeError(f"outage ends (slot {self.end}) before it starts ({self.start})")
        self._rng = random.Random(self.seed)

    def down(self, slot: float) -> bool:
        """True if the direction is down in ``slot``."""
        return self.start <= slot and (self.end is None or slot < self.end)

    def transmit(self, wire: bytes, first_flit: int, flits: int, now: float = 0) -> bytes:
        """``wire`` with the flits sent while down replaced by noise."""
        if flits < 1 or not any(self.down(now + k) for k in range(flits)):
            return wire
        per = len(wire) // flits
        out = bytearray(wire)
        for k in range(flits):
            if self.down(now + k):
                out[k * per:(k + 1) * per] = self._rng.randbytes(per)
                self.garbled += 1
        return bytes(out)


def dead(start: float = 0, seed: int = 0) -> Outage:
    """A direction that goes down at slot ``start`` and never comes back."""
    return Outage(start, None, seed)


@dataclass
class ScriptedFlips:
    """Flip given wire bits of given flits: ``flips[n]`` are bit positions (bit 0 = MSB of
    byte 0) in the wire bytes of the direction's ``n``-th flit (``flit_wire_bytes`` each)."""

    flips: Mapping[int, Sequence[int]]
    flit_wire_bytes: int
    flipped: int = 0

    def transmit(self, wire: bytes, first_flit: int, flits: int, now: float = 0) -> bytes:
        """``wire`` with the scripted flips of its flits applied."""
        positions: list[int] = []
        for n in range(first_flit, first_flit + flits):
            bits = self.flips.get(n)
            if bits:
                base = (n - first_flit) * self.flit_wire_bytes * 8
                positions.extend(base + b for b in bits)
                self.flipped += 1
        return apply_bit_errors(wire, positions) if positions else wire


#: Scripted per-flit faults of :class:`FaultyChannel`.
FAULTS = ("drop", "corrupt")


@dataclass
class Chain:
    """Two channels one after the other: what ``first`` delivers crosses ``second``."""

    first: Channel
    second: Channel

    def transmit(self, wire: bytes, first_flit: int, flits: int,
                 now: float = 0) -> bytes | None:
        """``wire`` as the second channel delivers what the first delivered."""
        out = self.first.transmit(wire, first_flit, flits, now)
        return None if out is None else self.second.transmit(out, first_flit, flits, now)


@dataclass
class FaultyChannel:
    """Per-flit loss and corruption on a bare DL link (no FEC), random and scripted.

    ``drop`` / ``corrupt`` are per-flit probabilities for any flit;
    ``drop_commands`` drops only flits without TL bytes (acks, replay requests).
    A corrupted flit has 1 to 3 random bits flipped, which the CRC-32 always
    detects. ``script`` maps the index of a transmitted flit (0, 1, ...) to
    ``"drop"`` or ``"corrupt"`` (flip the least significant bit of byte 320).
    Chunks must be single flits (a bare DL port sends one per slot). ``delay``
    is the one-way latency :class:`~ualink_ref.net.link_pair.LinkPair` gives
    the link this channel sits on.
    """

    drop: float = 0.0
    corrupt: float = 0.0
    drop_commands: float = 0.0
    seed: int = 0
    delay: int = 1
    script: Mapping[int, str] = field(default_factory=dict)
    dropped: int = 0
    corrupted: int = 0

    def __post_init__(self) -> None:
        self._rng = random.Random(self.seed)
        bad = set(self.script.values()) - set(FAULTS)
        if bad or self.delay < 0:
            raise ValueError(f"bad channel settings: faults {sorted(bad)} (use {FAULTS}), "
                             f"delay {self.delay}")

    @property
    def faulty(self) -> bool:
        """True while random faults are enabled."""
        return bool(self.drop or self.corrupt or self.drop_commands)

    def stop_faults(self) -> None:
        """Turn random faults off (scripted ones at future indices still apply)."""
        self.drop = self.corrupt = self.drop_commands = 0.0

    def transmit(self, wire: bytes, first_flit: int, flits: int,
                 now: float = 0) -> bytes | None:
        """The flit as received (``None`` if lost)."""
        action = self.script.get(first_flit)
        if action is None:
            r = self._rng.random()
            if r < self.drop or (not carries_payload(wire)
                                 and r < self.drop + self.drop_commands):
                action = "drop"
            elif self._rng.random() < self.corrupt:
                action = "corrupt_random"
        if action == "drop":
            self.dropped += 1
            return None
        if action == "corrupt":
            self.corrupted += 1
            return flip_bits(wire, [320 * 8 + 7])
        if action == "corrupt_random":
            self.corrupted += 1
            nbits = self._rng.randint(1, 3)
            return flip_bits(wire, self._rng.sample(range(len(wire) * 8), nbits))
        return wire


@dataclass
class PlanOutage:
    """A fault plan's ``down`` entry (``sim/faults.py``): the link is down from slot
    ``start`` up to (not including) ``end`` (``None``: for good): every flit sent in
    those slots is lost, the others pass.

    ``clock()`` gives the slot of a chunk's first flit when the harness hands it
    over (``lambda: network.now``); flit ``k`` of a chunk was sent in slot
    ``clock() + k``. ``flit_wire_bytes`` splits a chunk into flits. ``lost``
    counts the flits lost.
    """

    start: float
    end: float | None
    clock: Callable[[], float]
    flit_wire_bytes: int
    lost: int = 0

    def down_at(self, slot: float) -> bool:
        """True when slot ``slot`` lies in the outage."""
        return slot >= self.start and (self.end is None or slot < self.end)

    def transmit(self, wire: bytes, first_flit: int, flits: int,
                 now: float = 0) -> bytes | None:
        """``wire`` without the flits sent while the link was down (``None``: all lost)."""
        t0 = self.clock()
        if not any(self.down_at(t0 + k) for k in range(flits)):
            return wire
        per = self.flit_wire_bytes
        kept = [wire[k * per:(k + 1) * per] for k in range(flits) if not self.down_at(t0 + k)]
        self.lost += flits - len(kept)
        return b"".join(kept) or None


def carries_payload(flit: bytes) -> bool:
    """The payload bit of a DL flit's header, read without decoding."""
    return header_payload(flit)


def flip_bits(data: bytes, positions: list[int]) -> bytes:
    """``data`` with the given bits flipped (bit 0 = MSB of byte 0)."""
    out = bytearray(data)
    for p in positions:
        out[p // 8] ^= 0x80 >> (p % 8)
    return bytes(out)


__all__ = [
    "FAULTS",
    "Chain",
    "ErrorBursts",
    "FaultyChannel",
    "Outage",
    "PlanOutage",
    "RandomBitErrors",
    "ScriptedFlips",
    "carries_payload",
    "dead",
    "flip_bits",
]
