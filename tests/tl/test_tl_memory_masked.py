"""Memory.write with byte enables (a masked merge) matches a per-byte reference model."""

from __future__ import annotations

from hypothesis import example, given
from hypothesis import strategies as st

from ualink_ref.tl.memory import Memory

_WRITE = st.integers(0, 9).flatmap(  # up to 512 bytes: a caller's write may span 3 pages
    lambda p: st.tuples(
        st.integers(0, 1200),  # address: writes may straddle a 256-byte page
        st.binary(min_size=1 << p, max_size=1 << p),
        st.one_of(st.none(), st.integers(0, (1 << ((1 << p) + 4)) - 1)),  # extra high bits too
    )
)


@given(st.lists(_WRITE, min_size=1, max_size=8))
def test_masked_writes_match_per_byte_model(writes: list[tuple[int, bytes, int | None]]) -> None:
    mem = Memory()
    ref: dict[int, int] = {}
    for addr, data, enable in writes:
        mem.write(addr, data, enable)
        for i, byte in enumerate(data):
            if enable is None or enable >> i & 1:
                ref[addr + i] = byte
    assert mem.peek(0, 1800) == bytes(ref.get(a, 0) for a in range(1800))
    assert {a for a in range(1800) if ref.get(a, 0)} == {
        base + i for base, page in mem.snapshot().items() for i, b in enumerate(page) if b
    }


@given(st.lists(_WRITE, min_size=1, max_size=10), st.integers(0, 4),
       st.lists(st.integers(0, 1799), max_size=6))
@example([(0, b"\x01" * 64, None), (256, bytes(64), None)], 0, [])  # the cap, zeros
@example([(0, b"\x01" * 64, None), (512, b"\x02" * 4, None)], 1, [2])  # poison, cap
# 3 pages, only the middle one missing, at the cap: DATA_ERROR, nothing written
@example([(0, b"\x01" * 4, None), (512, b"\x01" * 4, None), (200, b"\x03" * 400, None)], 2, [])
def test_page_cap_and_poison_match_per_byte_model(
    writes: list[tuple[int, bytes, int | None]], cap: int, poisoned: list[int],
) -> None:
    """Statuses, contents, allocated pages and poison after any writes (the WriteFull
    fast path and the general path alike) follow the rules in memory.py's docstring."""
    mem = Memory(max_pages=cap)
    for a in poisoned:
        mem.poison(a)
    ref: dict[int, int] = {}
    pages: set[int] = set()
    poison = set(poisoned)
    for addr, data, enable in writes:
        enabled = [i for i in range(len(data)) if enable is None or enable >> i & 1]
        needed = {(addr + i) >> 8 for i in enabled if data[i]} - pages
        want = 3 if len(pages) + len(needed) > cap else 0  # DATA_ERROR: nothing changes
        assert mem.write(addr, data, enable) == want
        if want:
            continue
        pages |= needed
        for i in enabled:
            ref[addr + i] = data[i]
            poison.discard(addr + i)
    assert mem.peek(0, 1800) == bytes(ref.get(a, 0) for a in range(1800))
    assert {base >> 8 for base in mem.snapshot()} <= pages
    assert [mem.read(a, 4)[0] == 3 for a in range(0, 1800, 4)] == [
        any(a + i in poison for i in range(4)) for a in range(0, 1800, 4)]
