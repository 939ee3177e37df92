"""Seeded, scriptable fault plans: what goes wrong on a link, and when.

A :class:`FaultPlan` is a list of entries, written as text (``;``-separated)
or JSON (a list of objects with the same keys as :class:`FaultEntry`)::

    corrupt ab 12        the 12th DL flit a->b (0-based) arrives corrupted (CRC fails)
    corrupt-rate ba 0.01 each flit b->a is corrupted with probability 0.01 (seeded)
    drop-ack ab 300      an ack-only flit a->b sent in slot 300 is lost
    down 200 400         the link is down in slots 200..399, both ways (flits lost)
    down 200             the link goes down in slot 200 and never comes back
    poison 0x1000        TL: byte A of both targets' memories is poisoned before slot 0
    stop-tag 5           TL: both targets never answer a request with wire tag T

Directions are ``ab`` (a to b) and ``ba``. :meth:`FaultPlan.channels` turns
the DL-side entries into one harness channel per direction (rules F1-F4 in
``specs/dl.md`` section 9). The TL-side entries act on the endpoints
(``specs/tl.md`` rules T5, P6): :meth:`FaultPlan.apply_tl` poisons the memories,
and :meth:`FaultPlan.checked_stop_tags` gives the ``stop_tags`` for each
TransactionLayer — a plan with ``stop-tag`` needs a completion timeout
(``timeout_slots``), else :class:`~ualink_ref.errors.FaultPlanError`: without one
the originator would wait for good.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from dataclasses import dataclass, field

from ualink_ref.dl.formats import FlitOp, header_op, header_payload
from ualink_ref.errors import FaultPlanError
from ualink_ref.net.channels import PlanOutage
from ualink_ref.net.harness import Channel
from ualink_ref.phy import decode_flits
from ualink_ref.sizes import DL_FLIT_BYTES, WIRE_BYTES_PER_FLIT, FecMode
from ualink_ref.tl.memory import Memory
from ualink_ref.tl.upli import ADDRESS_BITS, NUM_TAGS

#: Entry kinds: DL-side ones become channels, TL-side ones act on the endpoints.
DL_KINDS = ("corrupt", "corrupt-rate", "drop-ack", "down")
TL_KINDS = ("poison", "stop-tag")
DIRECTIONS = ("ab", "ba")


@dataclass(frozen=True)
class FaultEntry:
    """One fault: ``kind``, the ``direction`` it applies to (DL kinds but ``down``),
    a flit index or slot ``at``, an end slot ``until`` (``down``), a probability
    ``rate`` (``corrupt-rate``) or a TL ``value`` (address or tag)."""

    kind: str
    direction: str | None = None
    at: int | None = None
    until: int | None = None
    rate: float | None = None
    value: int | None = None

    def text(self) -> str:
        """The entry in the text form."""
        parts = [self.kind]
        if self.direction is not None:
            parts.append(self.direction)
        parts += [str(v) for v in (self.at, self.until, self.rate, self.value) if v is not None]
        return " ".join(parts)


def _entry(words: list[str], text: str) -> FaultEntry:
    kind, args = words[0], words[1:]
    try:
        if kind in ("corrupt", "drop-ack", "corrupt-rate"):
            if len(args) != 2 or args[0] not in DIRECTIONS:
                raise FaultPlanError(f"expected '{kind} ab|ba N'", text)
            if kind == "corrupt-rate":
                rate = float(args[1])
                if not 0.0 <= rate <= 1.0:
                    raise FaultPlanError("rate must be in 0..1", text)
                return FaultEntry(kind, args[0], rate=rate)
            at = int(args[1], 0)
            if at < 0:
                raise FaultPlanError("index or slot must be >= 0", text)
            return FaultEntry(kind, args[0], at=at)
        if kind == "down":
            if len(args) not in (1, 2):
                raise FaultPlanError("expected 'down S1 [S2]'", text)
            start = int(args[0], 0)
            end = int(args[1], 0) if len(args) == 2 else None
            if start < 0 or (end is not None and end <= start):
                raise FaultPlanError("need 0 <= S1 < S2", text)
            return FaultEntry(kind, at=start, until=end)
        if kind in TL_KINDS:
            if len(args) != 1:
                raise FaultPlanError(f"expected '{kind} N'", text)
            value = int(args[0], 0)
            bound = (1 << ADDRESS_BITS) if kind == "poison" else NUM_TAGS
            if not 0 <= value < bound:
                raise FaultPlanError(f"{'address' if kind == 'poison' else 'tag'} must be "
                                     f"in 0..{bound - 1}", text)
            return FaultEntry(kind, value=value)
    except ValueError as exc:
        if isinstance(exc, FaultPlanError):
            raise
        raise FaultPlanError(f"not a number: {exc}", text) from None
    raise FaultPlanError(f"unknown kind (use one of {DL_KINDS + TL_KINDS})", text)


@dataclass(frozen=True)
class FaultPlan:
    """Faults to inject (see the module docstring); ``seed`` drives ``corrupt-rate``."""

    entries: tuple[FaultEntry, ...] = ()
    seed: int = 0

    @classmethod
    def parse(cls, text: str, seed: int = 0) -> FaultPlan:
        """Read the text form (``;`` or newline separated) or a JSON list of entries."""
        text = text.strip()
        if text.startswith("["):
            try:
                items = json.loads(text)
                return cls(tuple(FaultEntry(**item) for item in items), seed)
            except (ValueError, TypeError) as exc:
                raise FaultPlanError(f"bad JSON fault plan: {exc}") from None
        entries = []
        for chunk in text.replace("\n", ";").split(";"):
            words = chunk.split()
            if words:
                entries.append(_entry(words, chunk.strip()))
        return cls(tuple(entries), seed)

    def text(self) -> str:
        """The plan in the text form."""
        return "; ".join(e.text() for e in self.entries)

    @property
    def down_windows(self) -> list[tuple[int, int | None]]:
        """The ``(start, end)`` slots of every ``down`` entry."""
        return [(e.at or 0, e.until) for e in self.entries if e.kind == "down"]

    @property
    def poisoned(self) -> tuple[int, ...]:
        """The byte addresses of every ``poison`` entry."""
        return tuple(e.value or 0 for e in self.entries if e.kind == "poison")

    @property
    def stop_tags(self) -> frozenset[int]:
        """The wire tags of every ``stop-tag`` entry."""
        return frozenset(e.value or 0 for e in self.entries if e.kind == "stop-tag")

    def checked_stop_tags(self, timeout_slots: float | None) -> frozenset[int]:
        """The tags the ``stop-tag`` entries stop (for ``TLConfig.stop_tags``); raises
        :class:`~ualink_ref.errors.FaultPlanError` for a ``stop-tag`` entry without a
        completion timeout (rule T5: the originator would otherwise wait for good)."""
        if not self.stop_tags:
            return frozenset()
        if timeout_slots is None:
            entry = next(e.text() for e in self.entries if e.kind == "stop-tag")
            raise FaultPlanError("a target that never answers needs a completion timeout at "
                                 "the originator (timeout_slots / --timeout SLOTS)", entry)
        return frozenset(self.stop_tags)

    def apply_tl(self, memories: list[Memory]) -> None:
        """Poison every ``poison`` byte in each target memory (before the first slot)."""
        for addr in self.poisoned:
            for memory in memories:
                memory.poison(addr)

    def channels(self, clock: Callable[[], float], fec: FecMode,
                 interleave: int = 1) -> dict[str, Channel | None]:
        """One channel per direction doing the DL-side entries (rules F1-F4); the
        TL-side entries are not channels (see :meth:`apply_tl`, :meth:`checked_stop_tags`)."""
        rng = random.Random(self.seed)
        out: dict[str, Channel | None] = {}  # PlanChannel or nothing, per direction
        for d in DIRECTIONS:
            mine = [e for e in self.entries if e.direction == d or e.kind == "down"]
            out[d] = PlanChannel(tuple(mine), clock, fec, interleave,
                                 rng.randrange(2**32)) if mine else None
        return out


@dataclass
class PlanChannel:
    """The DL-side entries of a plan for one direction, applied flit by flit."""

    entries: tuple[FaultEntry, ...]
    clock: Callable[[], float]
    fec: FecMode
    interleave: int
    seed: int
    corrupted: int = 0
    dropped: int = 0
    _outages: list[PlanOutage] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._rng = random.Random(self.seed)
        self._per = WIRE_BYTES_PER_FLIT[self.fec]
        self._outages = [PlanOutage(e.at or 0, e.until, self.clock, self._per)
                         for e in self.entries if e.kind == "down"]
        self._corrupt = {e.at for e in self.entries if e.kind == "corrupt"}
        self._drop_ack = {e.at for e in self.entries if e.kind == "drop-ack"}
        self._rate = max((e.rate or 0.0 for e in self.entries if e.kind == "corrupt-rate"),
                         default=0.0)

    def _ack_only(self, flit_wire: bytes) -> bool:
        flit = flit_wire if self.fec == "none" else decode_flits(
            flit_wire, self.fec, self.interleave).flits[:DL_FLIT_BYTES]
        return header_op(flit) == FlitOp.ACK and not header_payload(flit)

    def transmit(self, wire: bytes, first_flit: int, flits: int,
                 now: float = 0) -> bytes | None:
        """``wire`` with this direction's faults applied (lost flits removed)."""
        t0 = self.clock()
        per = self._per
        kept: list[bytes] = []
        for k in range(flits):
            flit = wire[k * per:(k + 1) * per]
            slot = t0 + k
            if any(o.down_at(slot) for o in self._outages):
                self.dropped += 1
                continue
            if slot in self._drop_ack and self._ack_only(flit):
                self.dropped += 1
                continue
            hit = (first_flit + k) in self._corrupt
            if self._rate and self._rng.random() < self._rate:
                hit = True
            if hit:  # F1: every byte inverted: beyond any FEC, the CRC rejects it
                self.corrupted += 1
                flit = bytes(b ^ 0xFF for b in flit)
            kept.append(flit)
        return b"".join(kept) or None


__all__ = ["DIRECTIONS", "DL_KINDS", "TL_KINDS", "FaultEntry", "FaultPlan", "PlanChannel"]
