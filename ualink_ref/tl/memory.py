"""A sparse, byte-addressable memory target that executes UPLI requests.

* Sparse: storage is allocated in 256-byte pages on first write — one page
  per touched 256-byte region, which is exactly what one request can reach
  (requests never cross a 256-byte boundary) — and a never-written byte
  reads as zero, so examples need no setup.
* Mapped ranges (default: the first 4 GiB) decide which addresses exist; an
  access touching an unmapped byte returns :attr:`Status.DECODE_ERROR` —
  never an exception — and changes nothing.
* Bounded (project choice, ``specs/tl.md`` rule B2): at most ``max_pages``
  pages are allocated. Reads never allocate, and a write that leaves a
  never-written page all zero allocates nothing; a write that would need a
  page past the cap returns :attr:`Status.DATA_ERROR` and changes nothing.
  (:meth:`Memory.poke`, the caller's own setup, is not capped.)
* Bytes can be marked poisoned (:meth:`Memory.poison`); a read or atomic
  touching one returns :attr:`Status.DATA_ERROR`. Writing a byte clears it.

Methods check only target-side conditions; request well-formedness (length,
alignment, 256-byte boundary) is the transaction layer's job.
"""

from __future__ import annotations

import operator
from bisect import bisect_right
from collections.abc import Iterable

from ualink_ref.tl.upli import ATOMIC_SIZES, Status, apply_atomic

PAGE_BITS = 8  # 256-byte pages: one request touches exactly one
PAGE_SIZE = 1 << PAGE_BITS
DEFAULT_MAPPED: tuple[tuple[int, int], ...] = ((0, 1 << 32),)
#: Default page cap: 64 MiB of written data (about 100 MiB of Python objects).
DEFAULT_MAX_PAGES = 1 << 18



#: Entry ``b``: eight mask bytes, byte i = 0xFF where bit i of ``b`` is set.
_EXPAND = tuple(bytes(0xFF if b >> i & 1 else 0 for i in range(8)) for b in range(256))


def byte_mask(byte_enable: int, length: int) -> int:
    """Little-endian mask with byte i = 0xFF where bit i of ``byte_enable`` is set (i < length).

    One table lookup per 8 enable bits (a byte loop cost ~50 us for 256 bytes, more than
    the request it served).
    """
    enabled = (byte_enable & ((1 << length) - 1)).to_bytes((length + 7) // 8, "little")
    return int.from_bytes(b"".join([_EXPAND[b] for b in enabled]), "little")


# A model target users extend (a device's registers, say).
class Memory:
    """Sparse memory of one accelerator; ``mapped`` is a list of ``(start, end)``;
    ``max_pages`` caps the 256-byte pages writes may allocate."""

    __slots__ = ("_ends", "_pages", "_poisoned", "_starts", "mapped", "max_pages")

    def __init__(
        self, mapped: Iterable[tuple[int, int]] | None = None, *,
        max_pages: int = DEFAULT_MAX_PAGES,
    ) -> None:
        if not isinstance(max_pages, int) or max_pages < 0:
            raise ValueError(f"max_pages must be a non-negative integer, not {max_pages!r}")
        self.max_pages = max_pages
        ranges = sorted(DEFAULT_MAPPED if mapped is None else mapped)
        merged: list[tuple[int, int]] = []
        for start, end in ranges:
            if start < 0 or end < start:
                raise ValueError(f"bad mapped range {start:#x}..{end:#x}")
            if merged and start <= merged[-1][1]:
                merged[-1] = (merged[-1][0], max(end, merged[-1][1]))
            else:
                merged.append((start, end))
        self.mapped: tuple[tuple[int, int], ...] = tuple(merged)
        self._starts = [s for s, _ in merged]
        self._ends = [e for _, e in merged]
        self._pages: dict[int, bytearray] = {}
        self._poisoned: set[int] = set()

    # -- mapping -----------------------------------------------------------------

    def is_mapped(self, addr: int, length: int) -> bool:
        """True when every byte of ``[addr, addr + length)`` is mapped."""
        i = bisect_right(self._starts, addr) - 1
        return i >= 0 and addr + length <= self._ends[i]

    def poison(self, addr: int, length: int = 1) -> None:
        """Mark bytes as poisoned: reads touching them return DATA_ERROR."""
        self._poisoned.update(range(addr, addr + length))

    def _is_poisoned(self, addr: int, length: int) -> bool:
        return bool(self._poisoned) and any(
            a in self._poisoned for a in range(addr, addr + length)
        )

    # -- poison per byte, as the TL's poison rules need it (specs/tl.md P1-P5) ---------

    @property
    def has_poison(self) -> bool:
        """True while any byte is poisoned (the TL then reads with :meth:`read_with_poison`)."""
        return bool(self._poisoned)

    def poison_map(self, addr: int, length: int) -> int:
        """Bit i set when byte ``addr + i`` (``i < length``) is poisoned."""
        poisoned = self._poisoned
        if not poisoned:
            return 0
        return sum(1 << i for i in range(length) if addr + i in poisoned)

    def poison_bytes(self, addr: int, byte_mask: int) -> None:
        """Poison byte ``addr + i`` for every bit i set in ``byte_mask`` (poisoned data
        written, specs/tl.md rule P4)."""
        if byte_mask < 0:  # all bits set, without end: would never finish
            raise ValueError(f"byte_mask must be a non-negative bit mask, got {byte_mask}")
        i = 0
        while byte_mask:
            if byte_mask & 1:
                self._poisoned.add(addr + i)
            byte_mask >>= 1
            i += 1

    def read_with_poison(self, addr: int, length: int) -> tuple[Status, bytes | None, int]:
        """A Read that returns poisoned bytes too: ``(OKAY, data, poison_map)``, or
        ``(DECODE_ERROR, None, 0)`` when a byte is not mapped. The transaction layer
        sends the poisoned beats as such (rule P3) instead of failing the whole read."""
        if not self.is_mapped(addr, length):
            return Status.DECODE_ERROR, None, 0
        return Status.OKAY, self._peek(addr, length), self.poison_map(addr, length)

    # -- raw access (never-written bytes are zero; no mapping check) -------------

    def peek(self, addr: int, length: int) -> bytes:
        """Raw bytes, ignoring mapping and poison (for tests and inspection)."""
        # An integer: a float (infinity) would never end.
        return self._peek(operator.index(addr), operator.index(length))

    def _peek(self, addr: int, length: int) -> bytes:
        out = bytearray()
        while length > 0:
            page = self._pages.get(addr >> PAGE_BITS)
            off = addr & (PAGE_SIZE - 1)
            n = min(length, PAGE_SIZE - off)
            out += page[off : off + n] if page is not None else bytes(n)
            addr += n
            length -= n
        return bytes(out)

    def poke(self, addr: int, data: bytes | bytearray | memoryview) -> None:
        """Raw write, ignoring mapping (for setup)."""
        if type(data) is not bytes:
            data = memoryview(data).tobytes()  # a buffer's bytes; an int is no buffer
        pos = 0
        while pos < len(data):
            page = self._page(addr)
            off = addr & (PAGE_SIZE - 1)
            n = min(len(data) - pos, PAGE_SIZE - off)
            page[off : off + n] = data[pos : pos + n]
            addr += n
            pos += n

    def _page(self, addr: int) -> bytearray:
        key = addr >> PAGE_BITS
        page = self._pages.get(key)
        if page is None:
            page = self._pages[key] = bytearray(PAGE_SIZE)
        return page

    def snapshot(self) -> dict[int, bytes]:
        """Every allocated page that holds a non-zero byte: ``{page_base: bytes}``."""
        return {
            key << PAGE_BITS: bytes(page) for key, page in sorted(self._pages.items()) if any(page)
        }

    # -- UPLI execution ----------------------------------------------------------

    def read(self, addr: int, length: int) -> tuple[Status, bytes | None]:
        """Execute a Read: ``(OKAY, data)`` or ``(error status, None)``."""
        if not self.is_mapped(addr, length):
            return Status.DECODE_ERROR, None
        if self._poisoned and self._is_poisoned(addr, length):
            return Status.DATA_ERROR, None
        off = addr & (PAGE_SIZE - 1)
        if off + length <= PAGE_SIZE:  # the common case: one page
            page = self._pages.get(addr >> PAGE_BITS)
            return Status.OKAY, bytes(page[off : off + length]) if page else bytes(length)
        return Status.OKAY, self._peek(addr, length)

    def write(self, addr: int, data: bytes, byte_enable: int | None = None) -> Status:
        """Execute a Write / WriteFull; ``byte_enable`` bit i enables ``data[i]``."""
        length = len(data)
        if not self.is_mapped(addr, length):
            return Status.DECODE_ERROR
        off = addr & (PAGE_SIZE - 1)
        if off + length > PAGE_SIZE:  # only a caller's own write crosses a page
            return self._write_pages(addr, data, byte_enable)
        # One page (every request): the enabled bytes merged as one masked integer.
        # A page is allocated only for a non-zero enabled byte, and none past the cap.
        key = addr >> PAGE_BITS
        page = self._pages.get(key)
        if byte_enable is None or byte_enable == (1 << length) - 1:
            if page is None:
                if not any(data):
                    self._clear_poison(addr, length, None)
                    return Status.OKAY
                if len(self._pages) >= self.max_pages:
                    return Status.DATA_ERROR
                page = self._pages[key] = bytearray(PAGE_SIZE)
            if self._poisoned:
                self._clear_poison(addr, length, None)
            page[off : off + length] = data
            return Status.OKAY
        mask = byte_mask(byte_enable, length)
        new = int.from_bytes(data, "little") & mask
        if page is None:
            if new and len(self._pages) >= self.max_pages:
                return Status.DATA_ERROR
            if self._poisoned:
                self._clear_poison(addr, length, byte_enable)
            if not new:  # zeros into a never-written page: it already reads as zero
                return Status.OKAY
            page = self._pages[key] = bytearray(PAGE_SIZE)
        elif self._poisoned:
            self._clear_poison(addr, length, byte_enable)
        if mask:
            old = int.from_bytes(page[off : off + length], "little")
            page[off : off + length] = ((old & ~mask) | new).to_bytes(length, "little")
        return Status.OKAY

    def _write_pages(self, addr: int, data: bytes, byte_enable: int | None) -> Status:
        """A write that crosses pages: byte by byte, with the same page rules."""
        enabled = [
            (addr + i, value) for i, value in enumerate(data)
            if byte_enable is None or byte_enable >> i & 1
        ]
        needed = {a >> PAGE_BITS for a, value in enabled if value} - self._pages.keys()
        if len(self._pages) + len(needed) > self.max_pages:
            return Status.DATA_ERROR
        self._clear_poison(addr, len(data), byte_enable)
        for key in sorted(needed):
            self._pages[key] = bytearray(PAGE_SIZE)
        for a, value in enabled:
            page = self._pages.get(a >> PAGE_BITS)
            if page is not None:  # absent: zeros into a never-written page
                page[a & (PAGE_SIZE - 1)] = value
        return Status.OKAY

    def _clear_poison(self, addr: int, length: int, byte_enable: int | None) -> None:
        if self._poisoned:
            self._poisoned.difference_update(
                a for i, a in enumerate(range(addr, addr + length))
                if byte_enable is None or byte_enable >> i & 1
            )

    def atomic(
        self, op: int, size: int, addr: int, operand: int, compare: int = 0
    ) -> tuple[Status, int | None]:
        """Execute an atomic: ``(OKAY, old value)`` or ``(error status, None)``."""
        if size not in ATOMIC_SIZES or addr % size:
            return Status.UNSUPPORTED_REQUEST, None
        status, raw = self.read(addr, size)
        if raw is None:
            return status, None
        old = int.from_bytes(raw, "little")
        new = apply_atomic(op, size, old, operand, compare)
        if new != old:
            written = self.write(addr, new.to_bytes(size, "little"))
            if written != Status.OKAY:  # no page left for the new value: nothing changed
                return written, None
        return Status.OKAY, old


__all__ = ["DEFAULT_MAPPED", "DEFAULT_MAX_PAGES", "PAGE_SIZE", "Memory", "byte_mask"]
