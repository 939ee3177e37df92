"""The sans-IO transaction-layer engine: UPLI operations in, 64-byte TL flits out.

A :class:`TransactionLayer` is both an *originator* (``read`` / ``write`` /
``atomic`` queue requests and later yield :class:`Completion` events) and a
*completer* (requests from the peer execute on its own :class:`Memory` and
answer with responses). It never touches I/O or time:

* ``poll_flit()`` returns the next TL flit to send, or ``None``;
* ``receive_flit(flit)`` takes one TL flit from the peer (in order, exactly
  once — the DL's guarantee);
* ``next_event()`` returns the next :class:`Completion`, or ``None``.

Rules kept here (``specs/tl.md`` and ``specs/upli.md`` give provenance):

1. Requests leave in the order they were issued (one FIFO; a request that
   lacks a tag or credits blocks those behind it). The completer executes
   them in arrival order. This is stricter than the public ordering rule
   (same source, destination, 256-byte region and VC), so any sequential
   model of the issue order is exact.
2. The handle returned by ``read``/``write``/``atomic`` is a local operation
   number; the 11-bit wire tag is taken from the free pool when the request
   is sent (a caller out of wire tags sees back-pressure, not an error) and
   returned to the pool by the response.
3. Each control half-flit is filled as: urgent credit returns, responses,
   requests, then any other owed credit returns; unused sectors are zero.
   Data half-flits follow their control half-flit in field order.
4. Credits (see :mod:`ualink_ref.tl.credits`): a request or response is
   sent only with credits; received fields are checked against what was
   granted; buffers are freed (and credits owed back) as soon as a field
   is processed. A flit carrying only credit returns is sent when some
   class owes at least half its capacity (or enough that the peer could
   otherwise be short of one maximal field), so returns are batched without
   risking a credit deadlock.
5. Compressed fields (``compress=True``): a request whose ASI, destination,
   metadata and address bits 56..24 match an address-cache way is sent as
   a 2-sector compressed request; otherwise it is sent uncompressed with
   ``cload`` set, loading the next way (round robin). OKAY responses are sent
   as 1-sector compressed responses.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass

from ualink_ref.errors import (
    DecodeError,
    EncodeError,
    FieldRangeError,
    ProtocolError,
    ReservedBitsError,
    TagError,
    TruncatedError,
)
from ualink_ref.tl import fields as F
from ualink_ref.tl.credits import (
    NUM_VCS,
    POOL,
    REQ_CMD,
    REQ_DATA,
    RSP_CMD,
    RSP_DATA,
    CreditConfig,
    ReceiverCredits,
    SenderCredits,
)
from ualink_ref.tl.memory import Memory
from ualink_ref.tl.upli import (
    ACC_BITS,
    NUM_TAGS,
    REGION_BYTES,
    AtomicOp,
    Command,
    Status,
    atomic_attr,
    atomic_op_of,
    beats_for,
    check_access,
    check_atomic,
)

_STATUS = tuple(Status)
_HALF = 32
_ZERO_HALF = bytes(_HALF)

# Shifts taken from the one declaration of each layout (fields.py).
_S = F.shift_of
_RQ = F.REQUEST
RQ_FTYPE, RQ_CMD, RQ_VC, RQ_ASI = (_S(_RQ, n) for n in ("ftype", "cmd", "vchan", "asi"))
RQ_TAG = _S(_RQ, "tag")
RQ_POOL, RQ_ATTR, RQ_LEN, RQ_META = (_S(_RQ, n) for n in ("pool", "attr", "len", "metadata"))
RQ_ADDR, RQ_SRC, RQ_DST = (_S(_RQ, n) for n in ("addr", "src_acc", "dst_acc"))
RQ_CLOAD, RQ_CWAY, RQ_BEATS = (_S(_RQ, n) for n in ("cload", "cway", "numbeats"))
_CQ = F.COMPRESSED_REQUEST
CQ_FTYPE, CQ_CMD, CQ_VC, CQ_TAG = (_S(_CQ, n) for n in ("ftype", "cmd", "vchan", "tag"))
CQ_POOL, CQ_ATTR, CQ_LEN = (_S(_CQ, n) for n in ("pool", "attr", "len"))
CQ_CWAY, CQ_BEATS, CQ_ADDR = (_S(_CQ, n) for n in ("cway", "numbeats", "addr_lo"))
_RS = F.RESPONSE
RS_FTYPE, RS_VC, RS_TAG, RS_POOL = (_S(_RS, n) for n in ("ftype", "vchan", "tag", "pool"))
RS_LEN, RS_OFF, RS_STATUS, RS_RDWR = (_S(_RS, n) for n in ("len", "offset", "status", "rd_wr"))
RS_LAST, RS_SRC, RS_DST, RS_SPARE = (_S(_RS, n) for n in ("last", "src_acc", "dst_acc", "spare"))
_CS = F.COMPRESSED_RESPONSE_DATA
CS_FTYPE, CS_VC, CS_TAG, CS_POOL = (_S(_CS, n) for n in ("ftype", "vchan", "tag", "pool"))
CS_LEN, CS_OFF, CS_LAST, CS_SPARE = (_S(_CS, n) for n in ("len", "offset", "last", "spare"))
_FC = F.FLOW_CONTROL
FC_SHIFTS = tuple(_S(_FC, n) for n in ("req_cmd", "rsp_cmd", "req_data", "rsp_data"))
FC_MASKS = tuple(_FC.field(n).max_value for n in ("req_cmd", "rsp_cmd", "req_data", "rsp_data"))
_VF = F.VC_FLOW_CONTROL
VF_VC = _S(_VF, "vchan")
VF_SHIFTS = tuple(_S(_VF, n) for n in ("req_cmd", "rsp_cmd", "req_data", "rsp_data"))
VF_MASKS = tuple(_VF.field(n).max_value for n in ("req_cmd", "rsp_cmd", "req_data", "rsp_data"))
_ADDR_LO_BITS = F.COMPRESSED_REQUEST.field("addr_lo").width + 2  # address bits 23..0
_RD_WR_READ = {Command.READ: 0, Command.ATOMIC_R: 0}
_DATA_COMMANDS = frozenset(
    (Command.WRITE_FULL, Command.WRITE_MESSAGE, Command.ATOMIC_R, Command.ATOMIC_NR)
)
_MAX_NEED = (1, 1, 5, 4)  # most credits of each class one field can need


@dataclass(frozen=True, slots=True)
class Completion:
    """The end of one operation: its handle, status and returned data (or ``None``)."""

    tag: int
    status: Status
    data: bytes | None


@dataclass
class TLCounters:
    """Running totals of one TransactionLayer (mutable; read them any time)."""

    flits_sent: int = 0
    flits_received: int = 0
    requests_sent: int = 0
    requests_received: int = 0
    responses_sent: int = 0
    responses_received: int = 0
    compressed_requests: int = 0
    compressed_responses: int = 0
    credit_returns_sent: int = 0
    credit_only_halves: int = 0
    credit_stalls: int = 0
    tag_stalls: int = 0


class _Op:
    """A queued or outstanding request (originator side)."""

    __slots__ = (
        "addr", "attr", "cmd", "data_credits", "dst", "halves", "handle", "len_field",
        "metadata", "nbytes", "numbeats", "stalled", "vc",
    )

    def __init__(
        self, handle: int, cmd: int, dst: int, addr: int, nbytes: int, len_field: int,
        numbeats: int, halves: list[bytes], data_credits: int, attr: int, vc: int, metadata: int,
    ) -> None:
        self.handle = handle
        self.cmd = cmd
        self.dst = dst
        self.addr = addr
        self.nbytes = nbytes  # bytes returned on completion (read length / atomic size)
        self.len_field = len_field
        self.numbeats = numbeats
        self.halves = halves
        self.data_credits = data_credits
        self.attr = attr
        self.vc = vc
        self.metadata = metadata
        self.stalled = False


class _Rsp:
    """A queued response (completer side)."""

    __slots__ = ("beats", "dst", "halves", "rd_wr", "status", "tag", "vc")

    def __init__(
        self, tag: int, vc: int, status: int, rd_wr: int, dst: int, halves: list[bytes], beats: int
    ) -> None:
        self.tag = tag
        self.vc = vc
        self.status = status
        self.rd_wr = rd_wr
        self.dst = dst
        self.halves = halves
        self.beats = beats


class TransactionLayer:
    """Sans-IO TL engine of accelerator ``acc_id`` (see the module docstring)."""

    def __init__(
        self,
        acc_id: int,
        memory: Memory | None = None,
        *,
        credits: CreditConfig | None = None,
        compress: bool = True,
    ) -> None:
        if not 0 <= acc_id < (1 << ACC_BITS):
            raise EncodeError(f"accelerator ID {acc_id} does not fit in {ACC_BITS} bits")
        self.acc_id = acc_id
        self.memory = memory if memory is not None else Memory()
        self.compress = compress
        self.credit_config = credits or CreditConfig()
        _check_config(self.credit_config)
        self.counters = TLCounters()
        self.messages: list[tuple[int, int, bytes]] = []  # Write Message: (src, addr, data)
        self.tx_credits = SenderCredits()
        self.rx_credits = ReceiverCredits(self.credit_config)
        self._thresholds = _thresholds(self.credit_config)
        self._next_handle = 0
        self._free_tags: deque[int] = deque(range(NUM_TAGS))
        self._req_q: deque[_Op] = deque()
        self._rsp_q: deque[_Rsp] = deque()
        self._outstanding: dict[int, _Op] = {}
        self._events: deque[Completion] = deque()
        self._tx_data: deque[bytes] = deque()
        self._tx_ways: list[tuple[int, int, int, int] | None] = [None] * 4
        self._tx_next_way = 0
        self._rx_ways: list[tuple[int, int, int, int, int] | None] = [None] * 4
        # Received fields waiting for (or processed in order after) their data.
        self._rx_items: deque[list[object]] = deque()

    # -- originator API -----------------------------------------------------------

    def read(self, dst: int, addr: int, length: int, *, vc: int = 0, metadata: int = 0) -> int:
        """Queue a Read of ``length`` bytes; return the operation handle (``tag``)."""
        check_access(addr, length)
        beats = beats_for(length)
        return self._queue(Command.READ, dst, addr, length, length // 4 - 1, beats - 1, [], 0,
                           0, vc, metadata)

    def write(
        self,
        dst: int,
        addr: int,
        data: bytes,
        byte_enable: int | Sequence[int] | None = None,
        *,
        vc: int = 0,
        metadata: int = 0,
        message: bool = False,
    ) -> int:
        """Queue a write; return the handle.

        Without ``byte_enable`` this is a WriteFull (0x29); with it a Write
        (0x28) whose byte i is written when bit i of the integer mask (or item
        i of a per-byte sequence of flags) is set. ``message=True`` sends a
        Write Message (0x2A) instead.
        """
        data = bytes(data)
        length = len(data)
        check_access(addr, length)
        beats = beats_for(length)
        padded = data + bytes(beats * 64 - length) if length % 64 else data
        halves = [padded[i : i + _HALF] for i in range(0, beats * 64, _HALF)]
        if message:
            if byte_enable is not None:
                raise EncodeError("a Write Message has no byte enables")
            cmd = Command.WRITE_MESSAGE
        elif byte_enable is None:
            cmd = Command.WRITE_FULL
        else:
            mask = _mask_of(byte_enable, length)
            halves.insert(0, mask.to_bytes(_HALF, "little"))
            cmd = Command.WRITE
        credits = beats + (1 if cmd == Command.WRITE else 0)
        return self._queue(cmd, dst, addr, 0, length // 4 - 1, beats - 1, halves, credits, 0,
                           vc, metadata)

    def atomic(
        self,
        dst: int,
        addr: int,
        op: AtomicOp | int | str,
        operand: int,
        compare: int | None = None,
        size: int = 8,
        fetch: bool = True,
        *,
        vc: int = 0,
        metadata: int = 0,
    ) -> int:
        """Queue an atomic (AtomicR when ``fetch``, else AtomicNR); return the handle.

        ``op`` is an :class:`AtomicOp`, its value or its name; ``operand`` and
        ``compare`` (CAS only) are unsigned or signed integers that fit in
        ``size`` bytes; they travel little-endian.
        """
        op_value = AtomicOp[op.upper()] if isinstance(op, str) else AtomicOp(op)
        check_atomic(addr, op_value, size)
        if (op_value == AtomicOp.CAS) != (compare is not None):
            raise EncodeError("compare is required for CAS and only for CAS", field="compare")
        payload = _le(operand, size) + (_le(compare, size) if compare is not None else b"")
        beat = payload + bytes(64 - len(payload))
        cmd = Command.ATOMIC_R if fetch else Command.ATOMIC_NR
        return self._queue(cmd, dst, addr, size if fetch else 0, size // 4 - 1, 0,
                           [beat[:_HALF], beat[_HALF:]], 1, atomic_attr(op_value), vc, metadata)

    def _queue(
        self, cmd: int, dst: int, addr: int, nbytes: int, len_field: int, numbeats: int,
        halves: list[bytes], data_credits: int, attr: int, vc: int, metadata: int,
    ) -> int:
        if not 0 <= dst < (1 << ACC_BITS):
            raise EncodeError(f"destination {dst} does not fit in {ACC_BITS} bits", field="dst")
        if not 0 <= vc < NUM_VCS:
            raise EncodeError(f"virtual channel {vc} is not 0..3", field="vchan")
        if not 0 <= metadata < 256:
            raise EncodeError(f"metadata {metadata} does not fit in 8 bits", field="metadata")
        handle = self._next_handle
        self._next_handle += 1
        self._req_q.append(_Op(handle, cmd, dst, addr, nbytes, len_field, numbeats, halves,
                               data_credits, attr, vc, metadata))
        return handle

    def next_event(self) -> Completion | None:
        """The next completion, or ``None`` when there is none."""
        return self._events.popleft() if self._events else None

    # -- state --------------------------------------------------------------------

    @property
    def queued(self) -> int:
        """Requests issued but not yet sent (waiting for tags or credits)."""
        return len(self._req_q)

    @property
    def outstanding(self) -> int:
        """Requests sent and not yet answered."""
        return len(self._outstanding)

    @property
    def busy(self) -> bool:
        """True while anything is queued, outstanding, owed as data, or to be answered."""
        return bool(self._req_q or self._outstanding or self._rsp_q or self._tx_data
                    or self._rx_items)

    # -- flit output --------------------------------------------------------------

    def poll_flit(self) -> bytes | None:
        """The next 64-byte TL flit to send, or ``None`` when there is nothing to send."""
        first = self._tx_data.popleft() if self._tx_data else self._control_half()
        if first is None:
            return None
        second = self._tx_data.popleft() if self._tx_data else self._control_half()
        self.counters.flits_sent += 1
        return first + (second if second is not None else _ZERO_HALF)

    def _control_half(self) -> bytes | None:
        room = 8
        parts: list[bytes] = []
        rx = self.rx_credits
        counters = self.counters
        if rx.owed_any and self._urgent():
            room -= self._emit_returns(parts, room)
        # Responses first: they free the peer's tags and never wait on our requests.
        rsp_q = self._rsp_q
        tx = self.tx_credits
        while rsp_q and room:
            rsp = rsp_q[0]
            compressed = self.compress and rsp.status == 0
            size = 1 if compressed else 2
            if size > room:
                break
            source = tx.take(rsp.vc, RSP_CMD, RSP_DATA, rsp.beats)
            if source < 0:
                counters.credit_stalls += 1
                break
            rsp_q.popleft()
            pool = 1 if source == POOL else 0
            len_field = rsp.beats - 1 if rsp.beats else 0
            if compressed:
                ftype = 4 if rsp.beats else 5
                word = (ftype << CS_FTYPE | rsp.vc << CS_VC | rsp.tag << CS_TAG
                        | pool << CS_POOL | len_field << CS_LEN | 1 << CS_LAST)
                parts.append(word.to_bytes(4, "big"))
                counters.compressed_responses += 1
            else:
                word = (2 << RS_FTYPE | rsp.vc << RS_VC | rsp.tag << RS_TAG | pool << RS_POOL
                        | len_field << RS_LEN | rsp.status << RS_STATUS | rsp.rd_wr << RS_RDWR
                        | 1 << RS_LAST | self.acc_id << RS_SRC | rsp.dst << RS_DST)
                parts.append(word.to_bytes(8, "big"))
            room -= size
            counters.responses_sent += 1
            if rsp.halves:
                self._tx_data.extend(rsp.halves)
        req_q = self._req_q
        while req_q and room >= 2:
            op = req_q[0]
            way = -1
            key = (0, op.dst, op.metadata, op.addr >> _ADDR_LO_BITS)
            if self.compress:
                ways = self._tx_ways
                way = ways.index(key) if key in ways else -1
            size = 2 if way >= 0 else 4
            if size > room:
                break
            if not self._free_tags:
                if not op.stalled:
                    op.stalled = True
                    counters.tag_stalls += 1
                break
            source = tx.take(op.vc, REQ_CMD, REQ_DATA, op.data_credits)
            if source < 0:
                if not op.stalled:
                    op.stalled = True
                    counters.credit_stalls += 1
                break
            req_q.popleft()
            tag = self._free_tags.popleft()
            self._outstanding[tag] = op
            pool = 1 if source == POOL else 0
            if way >= 0:
                word = (3 << CQ_FTYPE | op.cmd << CQ_CMD | op.vc << CQ_VC | tag << CQ_TAG
                        | pool << CQ_POOL | op.attr << CQ_ATTR | op.len_field << CQ_LEN
                        | way << CQ_CWAY | op.numbeats << CQ_BEATS
                        | ((op.addr & ((1 << _ADDR_LO_BITS) - 1)) >> 2) << CQ_ADDR)
                parts.append(word.to_bytes(8, "big"))
                counters.compressed_requests += 1
            else:
                cload = 0
                cway = 0
                if self.compress:
                    cload = 1
                    cway = self._tx_next_way
                    self._tx_ways[cway] = key
                    self._tx_next_way = (cway + 1) & 3
                word = (1 << RQ_FTYPE | op.cmd << RQ_CMD | op.vc << RQ_VC | tag << RQ_TAG
                        | pool << RQ_POOL | op.attr << RQ_ATTR | op.len_field << RQ_LEN
                        | op.metadata << RQ_META | (op.addr >> 2) << RQ_ADDR
                        | self.acc_id << RQ_SRC | op.dst << RQ_DST | cload << RQ_CLOAD
                        | cway << RQ_CWAY | op.numbeats << RQ_BEATS)
                parts.append(word.to_bytes(16, "big"))
            room -= size
            counters.requests_sent += 1
            if op.halves:
                self._tx_data.extend(op.halves)
                op.halves = []  # the data is in flight; keep only what completion needs
        if rx.owed_any and room and (parts or self._urgent()):
            if not parts:
                counters.credit_only_halves += 1
            room -= self._emit_returns(parts, room)
        if not parts:
            return None
        if room:
            parts.append(bytes(4 * room))
        return b"".join(parts)

    def _urgent(self) -> bool:
        owed = self.rx_credits.owed
        for source, limits in enumerate(self._thresholds):
            row = owed[source]
            for cls in range(4):
                if limits[cls] and row[cls] >= limits[cls]:
                    return True
        return False

    def _emit_returns(self, parts: list[bytes], room: int) -> int:
        returns = self.rx_credits.take_returns(room)
        for source, counts in returns:
            if source == POOL:
                word = 0
                for cls in range(4):
                    word |= counts[cls] << FC_SHIFTS[cls]
            else:
                word = 6 << 28 | source << VF_VC
                for cls in range(4):
                    word |= counts[cls] << VF_SHIFTS[cls]
            parts.append(word.to_bytes(4, "big"))
        self.counters.credit_returns_sent += len(returns)
        return len(returns)

    # -- flit input ---------------------------------------------------------------

    def receive_flit(self, flit: bytes | bytearray | memoryview) -> None:
        """Take one TL flit from the peer.

        Raises :class:`~ualink_ref.errors.DecodeError` for malformed fields and
        :class:`~ualink_ref.errors.ProtocolError` (``CreditError``,
        ``TagError``) when the peer breaks a rule.
        """
        if not isinstance(flit, bytes | bytearray | memoryview) or len(flit) != 64:
            raise TruncatedError("TL flit", 64, len(flit) if hasattr(flit, "__len__") else -1)
        self.counters.flits_received += 1
        flit = bytes(flit)
        self._receive_half(flit[:_HALF])
        self._receive_half(flit[_HALF:])

    def _receive_half(self, half: bytes) -> None:
        items = self._rx_items
        if items:
            items[0][2].append(half)  # type: ignore[attr-defined]
            self._drain()
            return
        sector = 0
        while sector < 8:
            start = sector * 4
            if not half[start:].strip(b"\x00"):
                break  # the rest is NOP padding
            ftype = half[start] >> 4
            if ftype == 0 or ftype == 6:
                self._rx_flow_control(ftype, int.from_bytes(half[start : start + 4], "big"))
                sector += 1
            elif ftype == 1:
                if sector > 4:
                    raise DecodeError(f"TL request at sector {sector} straddles the half-flit")
                self._rx_request(int.from_bytes(half[start : start + 16], "big"), False)
                sector += 4
            elif ftype == 3:
                if sector > 6:
                    raise DecodeError(f"TL compressed request at sector {sector} straddles")
                self._rx_request(int.from_bytes(half[start : start + 8], "big"), True)
                sector += 2
            elif ftype == 2:
                if sector > 6:
                    raise DecodeError(f"TL response at sector {sector} straddles the half-flit")
                self._rx_response(int.from_bytes(half[start : start + 8], "big"), False)
                sector += 2
            elif ftype == 4 or ftype == 5:
                self._rx_response(int.from_bytes(half[start : start + 4], "big"), True)
                sector += 1
            else:
                raise FieldRangeError("ftype", ftype, f"unknown TL field type at sector {sector}")
        self._drain()

    def _rx_flow_control(self, ftype: int, word: int) -> None:
        tx = self.tx_credits
        if ftype == 0:
            for cls in range(4):
                count = word >> FC_SHIFTS[cls] & FC_MASKS[cls]
                if count:
                    tx.grant(POOL, cls, count)
        else:
            vc = word >> VF_VC & 3
            for cls in range(4):
                count = word >> VF_SHIFTS[cls] & VF_MASKS[cls]
                if count:
                    tx.grant(vc, cls, count)

    def _rx_request(self, word: int, compressed: bool) -> None:
        if compressed:
            cmd = word >> CQ_CMD & 0x3F
            vc = word >> CQ_VC & 3
            tag = word >> CQ_TAG & 0x7FF
            pool = word >> CQ_POOL & 1
            attr = word >> CQ_ATTR & 0xFF
            len_field = word >> CQ_LEN & 0x3F
            numbeats = word >> CQ_BEATS & 3
            cached = self._rx_ways[word >> CQ_CWAY & 3]
            if cached is None:
                raise ProtocolError("compressed request names an empty address-cache way")
            asi, src, dst, metadata, hi = cached
            addr = hi << _ADDR_LO_BITS | (word >> CQ_ADDR & 0x3FFFFF) << 2
        else:
            cmd = word >> RQ_CMD & 0x3F
            vc = word >> RQ_VC & 3
            asi = word >> RQ_ASI & 3
            tag = word >> RQ_TAG & 0x7FF
            pool = word >> RQ_POOL & 1
            attr = word >> RQ_ATTR & 0xFF
            len_field = word >> RQ_LEN & 0x3F
            metadata = word >> RQ_META & 0xFF
            addr = (word >> RQ_ADDR & ((1 << 55) - 1)) << 2
            src = word >> RQ_SRC & 0x3FF
            dst = word >> RQ_DST & 0x3FF
            numbeats = word >> RQ_BEATS & 3
            if word >> RQ_CLOAD & 1:
                self._rx_ways[word >> RQ_CWAY & 3] = (
                    asi, src, dst, metadata, addr >> _ADDR_LO_BITS
                )
        if cmd == Command.READ:
            halves = 0
        elif cmd == Command.WRITE:
            halves = 2 * (numbeats + 1) + 1  # byte-enable half-flit, then the beats
        elif cmd in _DATA_COMMANDS:
            halves = 2 * (numbeats + 1)
        else:
            raise FieldRangeError("cmd", cmd, "unknown command: data length unknown")
        data_credits = (halves + 1) // 2
        source = POOL if pool else vc
        self.rx_credits.consume(source, REQ_CMD, REQ_DATA, data_credits)
        self.counters.requests_received += 1
        self._rx_items.append(
            [halves, 0, [], (cmd, vc, asi, tag, attr, len_field, metadata, addr, src, dst,
                             numbeats, source, data_credits)]
        )

    def _rx_response(self, word: int, compressed: bool) -> None:
        if compressed:
            if word >> CS_SPARE & 0x1FF:
                raise ReservedBitsError("tl_compressed_response.spare", word >> CS_SPARE & 0x1FF)
            ftype = word >> CS_FTYPE
            vc = word >> CS_VC & 3
            tag = word >> CS_TAG & 0x7FF
            pool = word >> CS_POOL & 1
            len_field = word >> CS_LEN & 3
            offset = word >> CS_OFF & 3
            last = word >> CS_LAST & 1
            status = 0
            beats = len_field + 1 if ftype == 4 else 0
            dst = self.acc_id
        else:
            if word >> RS_SPARE & 0xFFFF:
                raise ReservedBitsError("tl_response.spare", word >> RS_SPARE & 0xFFFF)
            vc = word >> RS_VC & 3
            tag = word >> RS_TAG & 0x7FF
            pool = word >> RS_POOL & 1
            len_field = word >> RS_LEN & 3
            offset = word >> RS_OFF & 3
            status = word >> RS_STATUS & 0xF
            rd_wr = word >> RS_RDWR & 1
            last = word >> RS_LAST & 1
            dst = word >> RS_DST & 0x3FF
            beats = len_field + 1 if rd_wr == 0 and status == 0 else 0
        source = POOL if pool else vc
        self.rx_credits.consume(source, RSP_CMD, RSP_DATA, beats)
        if offset or not last:
            raise ProtocolError("split responses (offset != 0 or last == 0) are not modelled")
        if dst != self.acc_id:
            raise ProtocolError(f"response for accelerator {dst} arrived at {self.acc_id}")
        if status >= len(_STATUS):
            raise FieldRangeError("status", status, "unknown status code")
        self.counters.responses_received += 1
        self._rx_items.append([2 * beats, 1, [], (tag, status, source, beats)])

    def _drain(self) -> None:
        """Process received fields, in order, as soon as their data is complete."""
        items = self._rx_items
        while items:
            item = items[0]
            halves: list[bytes] = item[2]  # type: ignore[assignment]
            if len(halves) < item[0]:  # type: ignore[operator]
                return
            items.popleft()
            if item[1]:
                self._complete(item[3], halves)  # type: ignore[arg-type]
            else:
                self._execute(item[3], halves)  # type: ignore[arg-type]

    def _complete(self, info: tuple[int, int, int, int], halves: list[bytes]) -> None:
        tag, status, source, beats = info
        self.rx_credits.free(source, RSP_CMD, RSP_DATA, beats)
        op = self._outstanding.pop(tag, None)
        if op is None:
            raise TagError(f"response for tag {tag}, which is not outstanding")
        self._free_tags.append(tag)
        data: bytes | None = None
        if status == 0 and op.nbytes:
            if beats != beats_for(op.nbytes):
                raise ProtocolError(f"response for tag {tag} carries {beats} beats")
            data = b"".join(halves)[: op.nbytes]
        elif status == 0 and beats:
            raise ProtocolError(f"response for tag {tag} carries unexpected data")
        self._events.append(Completion(op.handle, _STATUS[status], data))

    def _execute(self, info: tuple[int, ...], halves: list[bytes]) -> None:
        (cmd, vc, asi, tag, attr, len_field, _metadata, addr, src, dst,
         numbeats, source, data_credits) = info
        self.rx_credits.free(source, REQ_CMD, REQ_DATA, data_credits)
        nbytes = (len_field + 1) * 4
        rd_wr = _RD_WR_READ.get(cmd, 1)  # type: ignore[call-overload]
        status = 0
        out: list[bytes] = []
        beats = 0
        if asi or dst != self.acc_id:
            status = Status.UNSUPPORTED_REQUEST
        elif cmd == Command.ATOMIC_R or cmd == Command.ATOMIC_NR:
            op = atomic_op_of(attr)
            size = nbytes
            if op is None or numbeats or size not in (4, 8):
                status = Status.UNSUPPORTED_REQUEST
            else:
                payload = halves[0]
                operand = int.from_bytes(payload[:size], "little")
                compare = int.from_bytes(payload[size : 2 * size], "little")
                st, old = self.memory.atomic(op, size, addr, operand, compare)
                status = st
                if st == 0 and cmd == Command.ATOMIC_R and old is not None:
                    beat = old.to_bytes(size, "little") + bytes(64 - size)
                    out = [beat[:_HALF], beat[_HALF:]]
                    beats = 1
        elif numbeats != beats_for(nbytes) - 1 or addr // REGION_BYTES != (
            addr + nbytes - 1
        ) // REGION_BYTES:
            status = Status.UNSUPPORTED_REQUEST
        elif cmd == Command.READ:
            st, data = self.memory.read(addr, nbytes)
            status = st
            if data is not None:
                beats = numbeats + 1
                if nbytes % 64:
                    data += bytes(beats * 64 - nbytes)
                out = [data[i : i + _HALF] for i in range(0, beats * 64, _HALF)]
        elif cmd == Command.WRITE_MESSAGE:
            self.messages.append((src, addr, b"".join(halves)[:nbytes]))
        else:
            if cmd == Command.WRITE:
                mask = int.from_bytes(halves[0], "little") & ((1 << nbytes) - 1)
                payload = b"".join(halves[1:])[:nbytes]
                status = self.memory.write(addr, payload, mask)
            else:
                payload = halves[0] + halves[1] if len(halves) == 2 else b"".join(halves)
                status = self.memory.write(addr, payload[:nbytes])
        self._rsp_q.append(_Rsp(tag, vc, int(status), rd_wr, src, out, beats))


def _check_config(config: CreditConfig) -> None:
    for cls, need in enumerate(_MAX_NEED):
        if max(config.capacity(s)[cls] for s in range(NUM_VCS + 1)) < need:
            raise ValueError(
                f"credit config cannot carry a maximal field: class {cls} needs {need}"
            )


def _thresholds(config: CreditConfig) -> list[tuple[int, int, int, int]]:
    """Owed count per (source, class) that makes a credit-only flit worth sending."""
    rows = []
    for source in range(NUM_VCS + 1):
        cap = config.capacity(source)
        row = []
        for cls in range(4):
            if cap[cls] <= 0:
                row.append(0)
            else:
                row.append(max(1, min(cap[cls] // 2, cap[cls] - _MAX_NEED[cls] + 1)))
        rows.append((row[0], row[1], row[2], row[3]))
    return rows


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


__all__ = ["Completion", "TLCounters", "TransactionLayer"]
