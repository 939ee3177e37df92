"""UPLI memory semantics: commands, lengths and beats, status codes, atomics.

Rules (``specs/upli.md`` gives provenance for each):

* cmd[5:4] is the command class: 00 read, 10 write, 11 atomic (public).
* A request moves 4..256 bytes in 4-byte words (``len`` = words - 1), at a
  4-byte aligned address below 2**57, and never crosses a 256-byte boundary
  (public). Its data travels in 64-byte beats, packed from the first byte
  (``numbeats`` = beats - 1; project choice: packed, not address-aligned).
* Atomics operate on one 4- or 8-byte little-endian operand at a naturally
  aligned address, with wrapping arithmetic; AtomicR returns the old value,
  AtomicNR returns nothing. The op is ``attr[7:4]`` (project choice).
"""

from __future__ import annotations

from collections.abc import Iterator
from enum import IntEnum

from ualink_ref.errors import EncodeError


class Command(IntEnum):
    """UPLI request commands (the ``cmd`` field)."""

    READ = 0x03
    WRITE = 0x28  # partial write: a byte-enable half-flit precedes the data
    WRITE_FULL = 0x29
    WRITE_MESSAGE = 0x2A
    ATOMIC_R = 0x30  # atomic, returns the value before the operation
    ATOMIC_NR = 0x32  # atomic, no data returned


class Status(IntEnum):
    """Completion status (the response ``status`` field)."""

    OKAY = 0
    UNSUPPORTED_REQUEST = 1  # unknown command, asi != 0, bad atomic op or size
    DECODE_ERROR = 2  # address not mapped at the target
    DATA_ERROR = 3  # the data read is poisoned
    #: Local only (``specs/tl.md`` rule T2): the originator's completion timer expired.
    #: 16 does not fit the 4-bit wire field, so it can never be sent or received.
    TIMEOUT = 16


#: The statuses a response can carry on the wire (``Status.TIMEOUT`` is local only).
WIRE_STATUSES: tuple[Status, ...] = tuple(s for s in Status if s < 16)


class AtomicOp(IntEnum):
    """Atomic operations, encoded in ``attr[7:4]`` (project choice)."""

    ADD = 0
    SWAP = 1
    CAS = 2
    AND = 3
    OR = 4
    XOR = 5
    SMIN = 6
    SMAX = 7
    UMIN = 8
    UMAX = 9


CLASS_READ = 0b00
CLASS_WRITE = 0b10
CLASS_ATOMIC = 0b11

MAX_REQUEST_BYTES = 256
BEAT_BYTES = 64
HALF_FLIT_BYTES = 32
REGION_BYTES = 256
ADDRESS_BITS = 57
TAG_BITS = 11
ACC_BITS = 10
NUM_TAGS = 1 << TAG_BITS
ATOMIC_SIZES = (4, 8)


def command_class(cmd: int) -> int:
    """cmd[5:4]: 0 read, 2 write, 3 atomic."""
    return (cmd >> 4) & 0b11


def is_known(cmd: int) -> bool:
    """True when ``cmd`` is one of the modelled commands."""
    return cmd in _KNOWN


_KNOWN = frozenset(int(c) for c in Command)


def request_has_data(cmd: int) -> bool:
    """True when the request carries data beats (writes and atomics)."""
    return command_class(cmd) in (CLASS_WRITE, CLASS_ATOMIC)


def beats_for(nbytes: int) -> int:
    """Number of 64-byte beats needed for ``nbytes`` bytes of data."""
    return (nbytes + BEAT_BYTES - 1) // BEAT_BYTES


def request_data_halves(cmd: int, numbeats: int) -> int:
    """Data half-flits following a request header: BE half-flit + 2 per beat."""
    if not request_has_data(cmd):
        return 0
    return (1 if cmd == Command.WRITE else 0) + 2 * (numbeats + 1)


def request_data_credits(cmd: int, numbeats: int) -> int:
    """Request-data credits (64-byte buffers) a request consumes; BE takes one."""
    if not request_has_data(cmd):
        return 0
    return (1 if cmd == Command.WRITE else 0) + numbeats + 1


#: Request-data credits of every (known command, numbeats) a request can carry on the
#: wire (numbeats is 2 bits), read from :func:`request_data_credits` once, for hot paths.
REQUEST_DATA_CREDITS: dict[tuple[int, int], int] = {
    (int(cmd), beats): request_data_credits(cmd, beats) for cmd in Command for beats in range(4)
}


def check_access(addr: int, length: int) -> None:
    """Raise :class:`EncodeError` unless ``addr``/``length`` form a legal request."""
    if not isinstance(addr, int) or not isinstance(length, int):
        raise EncodeError("address and length must be integers")
    if not 0 <= addr < (1 << ADDRESS_BITS):
        raise EncodeError(f"address {addr:#x} does not fit in {ADDRESS_BITS} bits", field="addr")
    if addr % 4:
        raise EncodeError(f"address {addr:#x} is not 4-byte aligned", field="addr")
    if not 4 <= length <= MAX_REQUEST_BYTES or length % 4:
        raise EncodeError(f"length {length} is not a multiple of 4 in 4..256", field="len")
    if addr // REGION_BYTES != (addr + length - 1) // REGION_BYTES:
        raise EncodeError(
            f"request {addr:#x}+{length} crosses a 256-byte boundary", field="addr"
        )


def request_pieces(addr: int, nbytes: int) -> Iterator[tuple[int, int]]:
    """``(addr, length)`` of the requests that carry a transfer of ``nbytes`` at ``addr``:
    at most 256 bytes each and none across a 256-byte region (:func:`check_access`), as a
    copy engine splits a larger transfer."""
    end = addr + nbytes
    while addr < end:
        length = min(MAX_REQUEST_BYTES, REGION_BYTES - addr % REGION_BYTES, end - addr)
        yield addr, length
        addr += length


def check_atomic(addr: int, op: int, size: int) -> None:
    """Raise :class:`EncodeError` unless the atomic is well formed."""
    if size not in ATOMIC_SIZES:
        raise EncodeError(f"atomic size {size} is not 4 or 8", field="len")
    if op not in _ATOMIC_OPS:
        raise EncodeError(f"unknown atomic op {op}", field="attr")
    check_access(addr, size)
    if addr % size:
        raise EncodeError(f"atomic address {addr:#x} is not {size}-byte aligned", field="addr")


_ATOMIC_OPS = frozenset(int(o) for o in AtomicOp)


def atomic_attr(op: int) -> int:
    """The ``attr`` value that encodes atomic ``op``."""
    return (int(op) & 0xF) << 4


#: ``attr`` bits of a write or atomic that mark its data beats poisoned (``specs/tl.md``
#: rule P2, project choice): bit i = beat i for writes, bit 0 = the operand for atomics.
POISON_ATTR_MASK = 0xF


def atomic_poisoned(attr: int) -> bool:
    """True when an atomic's ``attr`` marks its operand beat poisoned (bit 0, rule P2)."""
    return bool(attr & 1)


def atomic_op_of(attr: int) -> int | None:
    """The atomic op encoded in ``attr``, or ``None`` when attr is not a valid encoding."""
    op = attr >> 4
    if attr & 0xF or op not in _ATOMIC_OPS:
        return None
    return op


def apply_atomic(op: int, size: int, old: int, operand: int, compare: int = 0) -> int:
    """New value stored by atomic ``op`` on unsigned ``size``-byte values.

    Arithmetic wraps modulo 2**(8*size); SMIN/SMAX compare as two's complement.
    CAS stores ``operand`` when ``old == compare``, else leaves ``old``. A
    negative ``operand`` / ``compare`` is taken as two's complement (as the
    TL API does); one outside ``[-2**(8*size-1), 2**(8*size))`` raises
    :class:`EncodeError`.
    """
    bits = 8 * size
    mask = (1 << bits) - 1
    if not (0 <= operand <= mask and 0 <= compare <= mask):
        low = -(1 << (bits - 1))
        for name, value in (("operand", operand), ("compare", compare)):
            if not low <= value <= mask:
                raise EncodeError(f"atomic {name} {value} does not fit in {size} bytes",
                                  field=name)
        operand &= mask
        compare &= mask
    if op == AtomicOp.ADD:
        return (old + operand) & mask
    if op == AtomicOp.SWAP:
        return operand & mask
    if op == AtomicOp.CAS:
        return operand & mask if old == compare else old
    if op == AtomicOp.AND:
        return old & operand
    if op == AtomicOp.OR:
        return old | operand
    if op == AtomicOp.XOR:
        return old ^ operand
    if op in (AtomicOp.UMIN, AtomicOp.UMAX):
        pick_old = old <= operand if op == AtomicOp.UMIN else old >= operand
        return old if pick_old else operand
    if op in (AtomicOp.SMIN, AtomicOp.SMAX):
        sign = 1 << (bits - 1)
        s_old = old - (1 << bits) if old & sign else old
        s_opd = operand - (1 << bits) if operand & sign else operand
        pick_old = s_old <= s_opd if op == AtomicOp.SMIN else s_old >= s_opd
        return old if pick_old else operand
    raise EncodeError(f"unknown atomic op {op}", field="attr")


__all__ = [
    "ACC_BITS",
    "ADDRESS_BITS",
    "ATOMIC_SIZES",
    "BEAT_BYTES",
    "HALF_FLIT_BYTES",
    "MAX_REQUEST_BYTES",
    "NUM_TAGS",
    "POISON_ATTR_MASK",
    "REGION_BYTES",
    "REQUEST_DATA_CREDITS",
    "TAG_BITS",
    "WIRE_STATUSES",
    "AtomicOp",
    "Command",
    "Status",
    "apply_atomic",
    "atomic_attr",
    "atomic_op_of",
    "atomic_poisoned",
    "beats_for",
    "check_access",
    "check_atomic",
    "command_class",
    "is_known",
    "request_data_credits",
    "request_data_halves",
    "request_has_data",
    "request_pieces",
]
