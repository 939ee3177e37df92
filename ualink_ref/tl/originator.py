"""The originator's UPLI calls: ``read`` / ``write`` / ``atomic`` become queued requests.

:class:`OriginatorAPI` is the part of
:class:`~ualink_ref.tl.transaction.TransactionLayer` that checks a caller's
arguments (``EncodeError`` for anything illegal — the model never puts an illegal
request on the wire by itself) and queues an :class:`Op`; the engine sends it
when a tag and credits are free. Poisoned write data (``poison=``) is marked in
the request's ``attr`` (``specs/tl.md`` rule P2).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Sequence

from ualink_ref.errors import EncodeError, LinkFailedError
from ualink_ref.sizes import TL_HALF_BYTES
from ualink_ref.tl.credits import NUM_VCS
from ualink_ref.tl.upli import (
    ACC_BITS,
    AtomicOp,
    Command,
    atomic_attr,
    check_access,
    check_atomic,
)

_HALF = TL_HALF_BYTES
# Enum members read once: on Python 3.11 ``Enum.MEMBER`` costs several times a global.
_READ, _WRITE, _WRITE_FULL = Command.READ, Command.WRITE, Command.WRITE_FULL
_WRITE_MESSAGE, _ATOMIC_R, _ATOMIC_NR = Command.WRITE_MESSAGE, Command.ATOMIC_R, Command.ATOMIC_NR


class Op:
    """A queued or outstanding request (originator side)."""

    __slots__ = (
        "addr", "attr", "cmd", "data_credits", "dst", "halves", "handle", "len_field",
        "metadata", "nbytes", "numbeats", "rsp_beats", "stalled", "vc",
    )

    def __init__(
        self, handle: int, cmd: int, dst: int, addr: int, nbytes: int, len_field: int,
        numbeats: int, halves: list[bytes], data_credits: int, attr: int, vc: int, metadata: int,
        rsp_beats: int,
    ) -> None:
        self.handle = handle
        self.cmd = cmd
        self.dst = dst
        self.addr = addr
        self.nbytes = nbytes  # bytes returned on completion (read length / atomic size)
        # Data beats an OKAY answer carries (0 for a write-type operation): known when
        # queued, so checking each response against its request needs no arithmetic.
        self.rsp_beats = rsp_beats
        self.len_field = len_field
        self.numbeats = numbeats
        self.halves = halves
        self.data_credits = data_credits
        self.attr = attr
        self.vc = vc
        self.metadata = metadata
        self.stalled = False


class OriginatorAPI:
    """``read`` / ``write`` / ``atomic`` of the transaction layer (mixed into it)."""

    _failed: str | None
    _next_handle: int
    _req_q: deque[Op]

    def read(self, dst: int, addr: int, length: int, *, vc: int = 0, metadata: int = 0) -> int:
        """Queue a Read of ``length`` bytes; return the operation handle (``tag``)."""
        check_access(addr, length)
        beats = (length + 63) // 64  # beats_for(length), without a call on the hot path
        return self._queue(_READ, dst, addr, length, length // 4 - 1, beats - 1, [], 0,
                           0, vc, metadata, beats)

    def write(
        self,
        dst: int,
        addr: int,
        data: bytes | bytearray | memoryview,
        byte_enable: int | Sequence[int] | None = None,
        *,
        vc: int = 0,
        metadata: int = 0,
        message: bool = False,
        poison: int = 0,
    ) -> int:
        """Queue a write; return the handle.

        Without ``byte_enable`` this is a WriteFull (0x29); with it a Write
        (0x28) whose byte i is written when bit i of the integer mask (or item
        i of a per-byte sequence of flags) is set. ``message=True`` sends a
        Write Message (0x2A) instead. ``poison`` marks data beats poisoned (bit
        i = beat i, 64 bytes each): the target stores them and poisons the bytes
        it writes from them (rules P2, P4).
        """
        if type(data) is not bytes:
            data = memoryview(data).tobytes()  # a buffer's bytes; an int is no buffer
        length = len(data)
        check_access(addr, length)
        beats = (length + 63) // 64  # beats_for(length), without a call on the hot path
        # A bool is the int it is (True: beat 0), as the native build, which takes
        # ``int`` arguments as ints, makes it.
        if not isinstance(poison, int) or not 0 <= poison < (1 << beats):
            raise EncodeError(f"poison must be a mask of the {beats} data beat(s), "
                              f"got {poison!r:.40}", field="attr")
        if length == 64:  # the common single beat: two halves, no padding, no loop
            halves = [data[:_HALF], data[_HALF:]]
        else:
            padded = data + bytes(beats * 64 - length) if length % 64 else data
            halves = [padded[i : i + _HALF] for i in range(0, beats * 64, _HALF)]
        if message:
            if byte_enable is not None:
                raise EncodeError("a Write Message has no byte enables")
            cmd = _WRITE_MESSAGE
        elif byte_enable is None:
            cmd = _WRITE_FULL
        else:
            mask = _mask_of(byte_enable, length)
            halves.insert(0, mask.to_bytes(_HALF, "little"))
            cmd = _WRITE
        credits = beats + (1 if cmd == _WRITE else 0)
        return self._queue(cmd, dst, addr, 0, length // 4 - 1, beats - 1, halves, credits,
                           poison, vc, metadata, 0)

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
        poison: int = 0,
    ) -> int:
        """Queue an atomic (AtomicR when ``fetch``, else AtomicNR); return the handle.

        ``op`` is an :class:`AtomicOp`, its value or its name; ``operand`` and
        ``compare`` (CAS only) are unsigned or signed integers that fit in
        ``size`` bytes; they travel little-endian. ``poison`` true marks the
        operand poisoned (rule P2): the target then does not execute it (rule P5).
        """
        try:
            op_value = AtomicOp[op.upper()] if isinstance(op, str) else AtomicOp(op)
        except (KeyError, ValueError):
            raise EncodeError(f"unknown atomic op {op!r}", field="attr") from None
        check_atomic(addr, op_value, size)
        if (op_value == AtomicOp.CAS) != (compare is not None):
            raise EncodeError("compare is required for CAS and only for CAS", field="compare")
        payload = _le(operand, size) + (_le(compare, size) if compare is not None else b"")
        beat = payload + bytes(64 - len(payload))
        cmd = _ATOMIC_R if fetch else _ATOMIC_NR
        attr = atomic_attr(op_value) | (1 if poison else 0)
        return self._queue(cmd, dst, addr, size if fetch else 0, size // 4 - 1, 0,
                           [beat[:_HALF], beat[_HALF:]], 1, attr, vc, metadata, 1 if fetch else 0)

    def _queue(
        self, cmd: int, dst: int, addr: int, nbytes: int, len_field: int, numbeats: int,
        halves: list[bytes], data_credits: int, attr: int, vc: int, metadata: int,
        rsp_beats: int,
    ) -> int:
        if self._failed is not None:
            raise LinkFailedError(self._failed)
        if not 0 <= dst < (1 << ACC_BITS):
            raise EncodeError(f"destination {dst} does not fit in {ACC_BITS} bits", field="dst")
        if not 0 <= vc < NUM_VCS:
            raise EncodeError(f"virtual channel {vc} is not 0..3", field="vchan")
        if not 0 <= metadata < 256:
            raise EncodeError(f"metadata {metadata} does not fit in 8 bits", field="metadata")
        handle = self._next_handle
        self._next_handle += 1
        self._req_q.append(Op(handle, cmd, dst, addr, nbytes, len_field, numbeats, halves,
                              data_credits, attr, vc, metadata, rsp_beats))
        return handle


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


__all__ = ["Op", "OriginatorAPI"]
