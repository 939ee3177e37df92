"""Bounded resources (``specs/tl.md`` rule 7): every resource a peer can grow is bounded by a
configured limit, with back-pressure or a clear error (``specs/tl.md`` rules B1-B4)."""

from __future__ import annotations

import pytest

from tests.helpers.tl_peer import books_balance, drain, flits, halves
from ualink_ref.errors import CreditError
from ualink_ref.net.tl_pair import TLPair
from ualink_ref.tl import Memory, Status, TransactionLayer
from ualink_ref.tl.codec import FlowControl, Request
from ualink_ref.tl.config import TLConfig
from ualink_ref.tl.credits import SenderCredits
from ualink_ref.tl.framing import TLDeframer
from ualink_ref.tl.limits import TLLimits


def _pool_returns(sent: list[bytes], walk: TLDeframer) -> int:
    """Pool request-command credits returned in ``sent``."""
    total = 0
    for flit in sent:
        for half in (flit[:32], flit[32:]):
            started, _ = walk.feed_half(half)
            total += sum(p.value.req_cmd for p in started if isinstance(p.value, FlowControl))
    return total


def test_peer_that_never_grants_response_credits_cannot_grow_the_response_queue() -> None:
    # Issue reproducer: 100,000 reads from a peer that never grants response credits
    # used to queue 100,000 responses. Now the queue stops at max_responses and the
    # peer runs out of request credits (they are returned only as requests are served).
    limit = 8
    tl = TransactionLayer(2, config=TLConfig(compress=False, limits=TLLimits(max_responses=limit)))
    walk = TLDeframer()
    held = _pool_returns(drain(tl), walk)  # the initial grant: 256 pool request credits
    sent = 0
    for _ in range(2000):
        if held < 2:
            held += _pool_returns(drain(tl), walk)
            if held < 2:
                break
        reads = [Request(cmd=0x03, vchan=0, asi=0, tag=(sent + i) % 2048, pool=1, attr=0,
                         len=0, metadata=0, addr=0x100, src_acc=1, dst_acc=2, cload=0, cway=0,
                         numbeats=0) for i in range(2)]
        tl.receive(flits(halves(reads))[0])
        held -= 2
        sent += 2
        assert tl.responses_queued <= limit
        books_balance(tl)
    assert tl.responses_queued == limit
    assert tl.requests_waiting == sent - limit
    assert sent <= limit + 256 + 2  # bounded by the credits, not by the attempts
    # Once the peer grants response credits, everything is answered, in order.
    tl.receive(flits(halves([FlowControl(0, 63, 0, 255)] * 8))[0])
    drain(tl)
    assert tl.counters.responses_sent == sent and tl.requests_waiting == 0
    assert tl.counters.requests_deferred == sent - limit


def test_memory_reads_and_zero_writes_do_not_allocate() -> None:
    mem = Memory()
    assert mem.read(0x1000, 64) == (Status.OKAY, bytes(64))
    assert mem.write(0x2000, bytes(64)) == Status.OKAY
    assert mem.write(0x3000, bytes(8), byte_enable=0xFF) == Status.OKAY
    assert mem.write(0x3000, b"\x01" * 8, byte_enable=0) == Status.OKAY  # nothing enabled
    assert mem.atomic(0, 8, 0x4000, 0) == (Status.OKAY, 0)  # ADD 0 stores nothing new
    assert mem.snapshot() == {} and len(mem._pages) == 0


def test_memory_page_cap_answers_data_error_and_changes_nothing() -> None:
    mem = Memory(max_pages=2)
    assert mem.write(0x000, b"\x01" * 4) == Status.OKAY
    assert mem.write(0x0F8, b"\x02" * 8, byte_enable=0xF0) == Status.OKAY  # same page
    assert mem.write(0x200, b"\x03" * 4) == Status.OKAY  # page 2 of 2
    assert mem.write(0x300, b"\x04" * 4) == Status.DATA_ERROR
    assert mem.atomic(0, 8, 0x400, 5) == (Status.DATA_ERROR, None)
    assert mem.write(0x500, bytes(4)) == Status.OKAY  # zeros need no page
    assert mem.write(0x204, b"\x05" * 4) == Status.OKAY  # an allocated page still takes writes
    assert mem.peek(0x300, 4) == bytes(4) and mem.peek(0x400, 8) == bytes(8)
    assert sorted(mem.snapshot()) == [0x000, 0x200]
    assert mem.peek(0xF8, 8) == bytes(4) + b"\x02" * 4
    assert len(mem._pages) == 2
    # A write spanning an allocated and a missing page (direct use; requests never do).
    assert mem.write(0x2FC, b"\x06" * 8) == Status.DATA_ERROR
    assert mem.peek(0x2FC, 8) == bytes(4) + bytes(4)
    with pytest.raises(ValueError):
        Memory(max_pages=-1)


def test_page_cap_through_the_link_and_zero_writes() -> None:
    a = TransactionLayer(1)
    b = TransactionLayer(2, Memory(max_pages=1))
    handles = [a.write(2, 0x1000, b"\x07" * 64), a.write(2, 0x2000, b"\x08" * 64),
               a.write(2, 0x3000, bytes(64)), a.read(2, 0x2000, 4), a.read(2, 0x1000, 4)]
    got, _ = TLPair(a, b).run()
    by = {c.handle: (c.status, c.data) for c in got}
    assert [by[h] for h in handles] == [
        (Status.OKAY, None), (Status.DATA_ERROR, None), (Status.OKAY, None),
        (Status.OKAY, bytes(4)), (Status.OKAY, b"\x07" * 4)]
    assert list(b.memory.snapshot()) == [0x1000]


def test_write_message_buffer_is_bounded() -> None:
    a = TransactionLayer(1)
    b = TransactionLayer(2, config=TLConfig(limits=TLLimits(max_messages=2)))
    handles = [a.write(2, 0x40 * i, bytes([i]) * 8, message=True) for i in range(4)]
    got, _ = TLPair(a, b).run()
    by = {c.handle: c.status for c in got}
    assert [by[h] for h in handles] == [Status.OKAY, Status.OKAY, Status.DATA_ERROR,
                                        Status.DATA_ERROR]
    assert b.messages == [(1, 0, bytes(8)), (1, 0x40, b"\x01" * 8)]
    b.messages.clear()  # the caller took them: room again
    h = a.write(2, 0x100, b"\x09" * 4, message=True)
    got, _ = TLPair(a, b).run()
    assert [(c.handle, c.status) for c in got] == [(h, Status.OKAY)]


def test_credit_counters_are_bounded() -> None:
    tx = SenderCredits(max_available=100)
    tx.grant_all(4, (60, 0, 100, 0))
    with pytest.raises(CreditError):
        tx.grant_all(4, (41, 1, 0, 0))
    assert tx.available[4] == [60, 0, 100, 0]  # all or nothing
    with pytest.raises(CreditError):
        tx.grant(4, 2, 1)
    tx.grant(4, 0, 40)
    assert tx.available[4][0] == 100


@pytest.mark.parametrize("field", ["max_responses", "max_messages", "max_credits"])
def test_limits_are_checked(field: str) -> None:
    with pytest.raises(ValueError):
        TLLimits(**{field: 0})
