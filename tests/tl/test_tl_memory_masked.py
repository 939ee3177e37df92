"""Memory.write with byte enables (a masked merge) matches a per-byte reference model."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from ualink_ref.tl.memory import Memory

_WRITE = st.integers(0, 8).flatmap(
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
    assert mem.peek(0, 1600) == bytes(ref.get(a, 0) for a in range(1600))
    assert {a for a in range(1600) if ref.get(a, 0)} == {
        base + i for base, page in mem.snapshot().items() for i, b in enumerate(page) if b
    }
