"""The originator: UPLI calls in, queued requests out (``specs/tl.md`` rules 1, 2, 5).

:class:`Originator` checks a caller's ``read`` / ``write`` / ``atomic`` arguments
(``EncodeError`` for anything illegal: the model never puts an illegal request on
the wire by itself), numbers each operation with a handle, queues it in issue order
and, when the engine builds a control half-flit, packs the requests at the head of
the queue that have a tag and credits (rule 1), compressed through its transmit
address cache when it can (rule 5). Poisoned write data (``poison=``) is marked in
the request's ``attr`` (rule P2). Tags are the
:class:`~ualink_ref.tl.responses.ResponseTracker`'s: it lends one per request sent.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass

from ualink_ref.errors import EncodeError, LinkFailedError
from ualink_ref.sizes import TL_HALF_BYTES
from ualink_ref.tl.codec import ADDR_LO_BITS
from ualink_ref.tl.credits import NUM_VCS, POOL, REQ_CMD, REQ_DATA, SenderCredits
from ualink_ref.tl.events import TLCounters
from ualink_ref.tl.field_code import encode_compressed_request, encode_request
from ualink_ref.tl.op import Op, new_op
from ualink_ref.tl.responses import ResponseTracker
from ualink_ref.tl.upli import (
    ACC_BITS,
    AtomicOp,
    Command,
    atomic_attr,
    check_access,
    check_atomic,
)

_ADDR_LO_MASK = (1 << ADDR_LO_BITS) - 1
#: An address-cache way's key: (asi, dst_acc, metadata, address bits above addr_lo).
CacheKey = tuple[int, int, int, int]


@dataclass(frozen=True, slots=True)
class QueuedRequest:
    """A request issued and not yet sent (:meth:`Originator.queued_requests`)."""

    handle: int
    cmd: Command
    dst: int
    addr: int
    vc: int
    metadata: int


class Originator:
    """Issues operations and packs their requests (see the module docstring)."""

    def __init__(self, acc_id: int, compress: bool, counters: TLCounters) -> None:
        self._acc_id = acc_id
        self._compress = compress
        self._counters = counters
        self._next_handle = 0
        self._queue: deque[Op] = deque()
        self._head_stalled = False  # the head of the queue counted as a stall, once
        self._refusal: str | None = None  # why new operations are refused (rule 6)
        # Rule 5: the transmit address cache, by way and by key (keys are distinct: a
        # key is loaded only when absent, so a request finds its way with one lookup).
        self._ways: list[CacheKey | None] = [None] * 4
        self._way_of: dict[CacheKey, int] = {}
        self._next_way = 0

    @property
    def queued(self) -> int:
        """Requests issued but not yet sent (waiting for tags or credits)."""
        return len(self._queue)

    def queued_requests(self) -> tuple[QueuedRequest, ...]:
        """The requests issued and not yet sent, in issue order."""
        return tuple(QueuedRequest(op.handle, Command(op.cmd), op.dst, op.addr, op.vc,
                                   op.metadata) for op in self._queue)

    # -- UPLI calls ---------------------------------------------------------------

    # The UPLI calls below take every argument by keyword and have no defaults: the
    # public calls (TransactionLayer.read / write / atomic) state them, once.

    def read(self, *, dst: int, addr: int, length: int, vc: int, metadata: int) -> int:
        """Queue a Read (:meth:`~ualink_ref.tl.transaction.TransactionLayer.read`)."""
        check_access(addr, length)
        beats = (length + 63) // 64
        return self._enqueue(new_op(
            handle=self._next_handle, cmd=Command.READ, dst=dst, addr=addr, nbytes=length,
            len_field=length // 4 - 1, numbeats=beats - 1, halves=[], data_credits=0, attr=0,
            vc=vc, metadata=metadata, rsp_beats=beats))

    def write(self, *, dst: int, addr: int, data: bytes | bytearray | memoryview,
              byte_enable: int | Sequence[int] | None, vc: int, metadata: int,
              message: bool, poison: int) -> int:
        """Queue a write (:meth:`TransactionLayer.write
        <ualink_ref.tl.transaction.TransactionLayer.write>` says what each argument does)."""
        if type(data) is not bytes:
            data = memoryview(data).tobytes()  # a buffer's bytes; an int is no buffer
        length = len(data)
        check_access(addr, length)
        beats = (length + 63) // 64
        # A bool is the int it is (True: beat 0).
        if not isinstance(poison, int) or not 0 <= poison < (1 << beats):
            raise EncodeError(f"poison must be a mask of the {beats} data beat(s), "
                              f"got {poison!r:.40}", field="attr")
        padded = data + bytes(beats * 64 - length) if length % 64 else data
        halves = [padded[i : i + TL_HALF_BYTES] for i in range(0, beats * 64, TL_HALF_BYTES)]
        if message:
            if byte_enable is not None:
                raise EncodeError("a Write Message has no byte enables")
            cmd = Command.WRITE_MESSAGE
        elif byte_enable is None:
            cmd = Command.WRITE_FULL
        else:
            mask = _mask_of(byte_enable, length)
            halves.insert(0, mask.to_bytes(TL_HALF_BYTES, "little"))
            cmd = Command.WRITE
        credits = beats + (1 if cmd == Command.WRITE else 0)  # the byte-enable buffer
        return self._enqueue(new_op(
            handle=self._next_handle, cmd=cmd, dst=dst, addr=addr, nbytes=0,
            len_field=length // 4 - 1, numbeats=beats - 1, halves=halves, data_credits=credits,
            attr=poison, vc=vc, metadata=metadata, rsp_beats=0))

    def atomic(self, *, dst: int, addr: int, op: AtomicOp | int | str, operand: int,
               compare: int | None, size: int, fetch: bool, vc: int, metadata: int,
               poison: int) -> int:
        """Queue an atomic (:meth:`TransactionLayer.atomic
        <ualink_ref.tl.transaction.TransactionLayer.atomic>` says what each argument does)."""
        try:
            op_value = AtomicOp[op.upper()] if isinstance(op, str) else AtomicOp(op)
        except (KeyError, ValueError):
            raise EncodeError(f"unknown atomic op {op!r}", field="attr") from None
        check_atomic(addr, op_value, size)
        if (op_value == AtomicOp.CAS) != (compare is not None):
            raise EncodeError("compare is required for CAS and only for CAS", field="compare")
        payload = _le(operand, size) + (_le(compare, size) if compare is not None else b"")
        beat = payload + bytes(64 - len(payload))
        return self._enqueue(new_op(
            handle=self._next_handle, cmd=Command.ATOMIC_R if fetch else Command.ATOMIC_NR,
            dst=dst, addr=addr, nbytes=size if fetch else 0, len_field=size // 4 - 1,
            numbeats=0, halves=[beat[:TL_HALF_BYTES], beat[TL_HALF_BYTES:]], data_credits=1,
            attr=atomic_attr(op_value) | (1 if poison else 0), vc=vc, metadata=metadata,
            rsp_beats=1 if fetch else 0))

    def _enqueue(self, op: Op) -> int:
        """Queue ``op`` (numbered with the next handle) once its route is valid; return
        its handle."""
        if self._refusal is not None:
            raise LinkFailedError(self._refusal)
        if not 0 <= op.dst < (1 << ACC_BITS):
            raise EncodeError(f"destination {op.dst} does not fit in {ACC_BITS} bits",
                              field="dst")
        if not 0 <= op.vc < NUM_VCS:
            raise EncodeError(f"virtual channel {op.vc} is not 0..3", field="vchan")
        if not 0 <= op.metadata < 256:
            raise EncodeError(f"metadata {op.metadata} does not fit in 8 bits",
                              field="metadata")
        self._next_handle += 1
        self._queue.append(op)
        return op.handle

    # -- sending --------------------------------------------------------------------

    def pack_requests(
        self, parts: list[bytes], room: int, credits: SenderCredits, tracker: ResponseTracker,
        data_out: deque[bytes], now: float,
    ) -> int:
        """Pack queued requests into ``parts`` (``room`` sectors free) in issue order, each
        with a tag from ``tracker`` and credits from ``credits``; their data half-flits go
        to ``data_out``. The first request that does not fit or lacks a tag or credits
        stops the packing (rule 1). Return the sectors still free."""
        queue = self._queue
        counters = self._counters
        while queue and room >= 2:
            op = queue[0]
            key = (0, op.dst, op.metadata, op.addr >> ADDR_LO_BITS)
            way = self._way_of.get(key, -1) if self._compress else -1
            size = 2 if way >= 0 else 4
            if size > room:
                break
            if not tracker.has_free_tag:
                if not self._head_stalled:
                    self._head_stalled = True
                    counters.tag_stalls += 1
                break
            source = credits.take(op.vc, REQ_CMD, REQ_DATA, op.data_credits)
            if source < 0:
                if not self._head_stalled:
                    self._head_stalled = True
                    counters.credit_stalls += 1
                break
            queue.popleft()
            self._head_stalled = False
            tag = tracker.start(op, now)
            pool = 1 if source == POOL else 0
            if way >= 0:
                parts.append(encode_compressed_request(
                    cmd=op.cmd, vchan=op.vc, tag=tag, pool=pool, attr=op.attr,
                    len=op.len_field, cway=way, numbeats=op.numbeats,
                    addr_lo=op.addr & _ADDR_LO_MASK))
                counters.compressed_requests += 1
            else:
                cload = cway = 0
                if self._compress:  # rule 5: load the next way, round robin
                    cload, cway = 1, self._next_way
                    self._load_way(cway, key)
                parts.append(encode_request(
                    cmd=op.cmd, vchan=op.vc, asi=0, tag=tag, pool=pool, attr=op.attr,
                    len=op.len_field, metadata=op.metadata, addr=op.addr, src_acc=self._acc_id,
                    dst_acc=op.dst, cload=cload, cway=cway, numbeats=op.numbeats))
            room -= size
            counters.requests_sent += 1
            data_out.extend(op.halves)
        return room

    def _load_way(self, way: int, key: CacheKey) -> None:
        """Rule 5: ``key`` replaces whatever address-cache way ``way`` held."""
        old = self._ways[way]
        if old is not None:
            del self._way_of[old]
        self._ways[way] = key
        self._way_of[key] = way
        self._next_way = (way + 1) & 3

    # -- ending -----------------------------------------------------------------------

    def refuse(self, reason: str) -> None:
        """From now on new operations raise :class:`LinkFailedError` (rule 6)."""
        self._refusal = reason

    def drain(self) -> list[Op]:
        """Take every queued (unsent) operation out of the queue, oldest first."""
        ops = list(self._queue)
        self._queue.clear()
        self._head_stalled = False
        return ops


def _mask_of(byte_enable: int | Sequence[int], length: int) -> int:
    if isinstance(byte_enable, int):
        if not 0 <= byte_enable < (1 << length):
            raise EncodeError(f"byte_enable mask does not fit {length} bytes", field="byte_enable")
        return byte_enable
    flags = list(byte_enable)
    if len(flags) != length:
        raise EncodeError(f"byte_enable has {len(flags)} flags for {length} bytes")
    return sum(1 << i for i, flag in enumerate(flags) if flag)


def _le(value: int, size: int) -> bytes:
    bits = 8 * size
    if not -(1 << (bits - 1)) <= value < (1 << bits):
        raise EncodeError(f"atomic operand {value} does not fit in {size} bytes", field="operand")
    return (value & ((1 << bits) - 1)).to_bytes(size, "little")


__all__ = ["CacheKey", "Originator", "QueuedRequest"]
