"""UPLI rules, atomics against a plain reference, and the sparse Memory target
(``tl/upli.py``, ``tl/memory.py``, ``specs/upli.md``), including masked writes against a
per-byte reference model.
"""

from __future__ import annotations

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from tests.helpers.atomics_oracle import ctypes_reference
from ualink_ref.errors import EncodeError
from ualink_ref.net.tl_pair import TLPair
from ualink_ref.tl import AtomicOp, Memory, Status, TransactionLayer
from ualink_ref.tl.upli import apply_atomic, atomic_attr, atomic_op_of, check_access, command_class

# -- UPLI rules, atomics against a plain reference, and the sparse Memory target

EDGE = [0, 1, 2, 0x7F, 0x80, 0xFF, 0x7FFFFFFF, 0x80000000, 0xFFFFFFFF,
        0x7FFFFFFFFFFFFFFF, 0x8000000000000000, 0xFFFFFFFFFFFFFFFF]


@pytest.mark.parametrize("size", [4, 8])
@pytest.mark.parametrize("op", list(AtomicOp))
def test_atomics_match_c_semantics_on_edges(op: AtomicOp, size: int) -> None:
    mask = (1 << (8 * size)) - 1
    vals = sorted({v & mask for v in EDGE})
    for old in vals:
        for operand in vals:
            for compare in (old, operand ^ 1):
                assert apply_atomic(op, size, old, operand, compare) == ctypes_reference(
                    op, size, old, operand, compare
                ), (op, size, old, operand, compare)


@given(st.sampled_from(list(AtomicOp)), st.sampled_from([4, 8]), st.data())
def test_atomics_match_c_semantics_random(op: AtomicOp, size: int, data: st.DataObject) -> None:
    word = st.integers(0, (1 << (8 * size)) - 1)
    old, operand, compare = data.draw(word), data.draw(word), data.draw(word)
    assert apply_atomic(op, size, old, operand, compare) == ctypes_reference(
        op, size, old, operand, compare
    )


def test_atomic_attr_encoding() -> None:
    for op in AtomicOp:
        assert atomic_op_of(atomic_attr(op)) == op
    assert atomic_op_of(0x0F) is None and atomic_op_of(0xF0) is None


def test_command_classes_are_public_values() -> None:
    assert command_class(0x03) == 0b00
    assert command_class(0x28) == command_class(0x29) == command_class(0x2A) == 0b10
    assert command_class(0x30) == command_class(0x32) == 0b11


@pytest.mark.parametrize(
    ("addr", "length"), [(2, 4), (0, 0), (0, 3), (0, 260), (0xF8, 16), (1 << 57, 4), (-4, 4)]
)
def test_illegal_requests_raise_encode_error(addr: int, length: int) -> None:
    with pytest.raises(EncodeError):
        check_access(addr, length)
    with pytest.raises(EncodeError):
        TransactionLayer(1).read(2, addr, length)


def test_memory_defaults_and_unmapped() -> None:
    mem = Memory()
    assert mem.read(0x1234_5670, 16) == (Status.OKAY, bytes(16))
    assert mem.read((1 << 32) - 4, 4)[0] == Status.OKAY
    assert mem.read(1 << 32, 4) == (Status.DECODE_ERROR, None)
    assert mem.read((1 << 32) - 4, 8) == (Status.DECODE_ERROR, None)
    assert mem.write(1 << 40, b"abcd") == Status.DECODE_ERROR
    assert mem.atomic(AtomicOp.ADD, 8, 1 << 40, 1) == (Status.DECODE_ERROR, None)
    assert mem.snapshot() == {}


def test_memory_sparse_byte_enable_and_poison() -> None:
    mem = Memory(mapped=[(0x1000, 0x2000), (0x2000, 0x3000)])
    assert mem.mapped == ((0x1000, 0x3000),)
    assert mem.write(0x1FFC, b"\x01\x02\x03\x04\x05\x06\x07\x08") == Status.OKAY  # spans a page
    assert mem.read(0x1FFC, 8) == (Status.OKAY, bytes(range(1, 9)))
    assert mem.write(0x1100, b"\xaa" * 4, 0b0101) == Status.OKAY
    assert mem.peek(0x1100, 4) == b"\xaa\x00\xaa\x00"
    mem.poison(0x1102)
    assert mem.read(0x1100, 4) == (Status.DATA_ERROR, None)
    assert mem.atomic(AtomicOp.ADD, 4, 0x1100, 1) == (Status.DATA_ERROR, None)
    assert mem.write(0x1100, b"\xbb" * 4) == Status.OKAY  # writing clears poison
    assert mem.read(0x1100, 4) == (Status.OKAY, b"\xbb" * 4)
    # three touched 256-byte pages: the straddling write's two, and 0x1100's
    assert sorted(mem.snapshot()) == [0x1100, 0x1F00, 0x2000]


def test_error_statuses_reach_the_originator() -> None:
    a = TransactionLayer(1)
    b = TransactionLayer(2, Memory(mapped=[(0, 0x1000)]))
    b.memory.poison(0x100, 4)
    tags = {
        a.read(2, 0x2000, 4): (Status.DECODE_ERROR, None),
        a.read(2, 0x100, 8): (Status.DATA_ERROR, None),
        a.write(2, 0x3000, b"1234"): (Status.DECODE_ERROR, None),
        a.read(3, 0x0, 4): (Status.UNSUPPORTED_REQUEST, None),  # not addressed to b
        a.atomic(2, 0x40, "umax", 7, size=4): (Status.OKAY, bytes(4)),
        a.atomic(2, 0x40, "add", 1, size=4, fetch=False): (Status.OKAY, None),
        a.read(2, 0x40, 4): (Status.OKAY, (8).to_bytes(4, "little")),
    }
    got, _ = TLPair(a, b, latency=4).run()
    assert {c.handle: (c.status, c.data) for c in got} == tags


def test_write_message_is_delivered_not_stored() -> None:
    a, b = TransactionLayer(1), TransactionLayer(2)
    tag = a.write(2, 0x80, b"hello!!!", message=True)
    got, _ = TLPair(a, b).run()
    assert [(c.handle, c.status) for c in got] == [(tag, Status.OKAY)]
    assert b.messages == [(1, 0x80, b"hello!!!")]
    assert b.memory.peek(0x80, 8) == bytes(8)


def test_atomic_argument_errors() -> None:
    tl = TransactionLayer(1)
    with pytest.raises(EncodeError):
        tl.atomic(2, 0x4, "add", 1, size=8)  # misaligned
    with pytest.raises(EncodeError):
        tl.atomic(2, 0x8, "cas", 1)  # CAS without compare
    with pytest.raises(EncodeError):
        tl.atomic(2, 0x8, "add", 1, compare=3)
    with pytest.raises(EncodeError):
        tl.atomic(2, 0x8, "add", 1 << 64)
    with pytest.raises(EncodeError):
        tl.atomic(2, 0x8, "nand", 1)
    with pytest.raises(EncodeError):
        tl.atomic(2, 0x8, 15, 1)
    assert tl.atomic(2, 0x8, "add", -1, size=4) == 0  # negative operands are two's complement


def test_scattered_writes_cost_little_memory() -> None:
    # "Sparse — only touched bytes cost memory": 2,000 4-byte writes scattered over
    # the 4 GiB default map must not allocate a 4 KiB page each (8 MB); with one
    # 256-byte region per touched request they cost well under 1.5 MB.
    import random
    import tracemalloc

    rng = random.Random(3)
    addrs = [rng.randrange(0, 1 << 32, 256) for _ in range(2000)]
    tracemalloc.start()
    try:
        mem = Memory()
        before = tracemalloc.get_traced_memory()[0]
        for addr in addrs:
            assert mem.write(addr, b"\x01\x02\x03\x04") == Status.OKAY
        used = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert used < 1_500_000, f"{used} bytes for 2,000 scattered 4-byte writes"
    assert all(mem.read(addr, 4) == (Status.OKAY, b"\x01\x02\x03\x04") for addr in addrs)
    assert mem.read(addrs[0] + 4, 252) == (Status.OKAY, bytes(252))


def test_apply_atomic_operands_outside_the_size() -> None:
    # Memory.atomic / apply_atomic are public: a negative operand means two's
    # complement (as in TransactionLayer.atomic); one that does not fit is an
    # EncodeError. OR/UMIN used to return out-of-range values, and Memory.atomic
    # then crashed with OverflowError.
    assert apply_atomic(AtomicOp.OR, 4, 0, -1) == 0xFFFF_FFFF
    assert apply_atomic(AtomicOp.UMIN, 8, 5, -1) == 5
    assert apply_atomic(AtomicOp.CAS, 4, 0xFFFF_FFFF, 7, -1) == 7
    with pytest.raises(EncodeError):
        apply_atomic(AtomicOp.OR, 4, 0, 1 << 32)
    with pytest.raises(EncodeError):
        apply_atomic(AtomicOp.CAS, 4, 0, 1, -(1 << 31) - 1)
    mem = Memory()
    assert mem.atomic(AtomicOp.XOR, 4, 0x40, -1) == (Status.OKAY, 0)
    assert mem.peek(0x40, 8) == b"\xff" * 4 + bytes(4)



# -- Memory.write with byte enables (a masked merge) matches a per-byte reference model

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


def test_request_pieces_cover_a_transfer_in_legal_requests() -> None:
    from itertools import pairwise

    from ualink_ref.tl.upli import check_access, request_pieces

    pieces = list(request_pieces(0x1F0, 600))
    assert pieces == [(0x1F0, 16), (0x200, 256), (0x300, 256), (0x400, 72)]
    for start, nbytes in ((0, 4), (0x100, 256), (0x104, 1020), (0x3FC, 8)):
        got = list(request_pieces(start, nbytes))
        assert sum(n for _, n in got) == nbytes and got[0][0] == start
        assert all(a + n == b for (a, n), (b, _) in pairwise(got))
        for addr, length in got:
            check_access(addr, length)  # raises for an illegal request
