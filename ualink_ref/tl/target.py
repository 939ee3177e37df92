"""The completer side: execute one received request on a :class:`Memory`.

A request that is well framed but cannot be served gets a status, never an
exception: ``UNSUPPORTED_REQUEST`` for a non-zero ASI, a request addressed to
another accelerator, an invalid atomic encoding, inconsistent ``len`` /
``numbeats`` or a request crossing a 256-byte boundary; ``DECODE_ERROR`` /
``DATA_ERROR`` from the memory. Write Message data is appended to
``messages`` as ``(src_acc, addr, data)`` while it holds fewer than
``max_messages``; past that a Write Message is answered ``DATA_ERROR`` and
dropped (project choice, ``specs/tl.md`` rule B3: bounded buffers).

Poison (``specs/tl.md`` rules P1-P5): a Read whose bytes are partly poisoned is
answered OKAY with every beat's data and a mask of the poisoned beats, which the
completer sends as DATA_ERROR pieces (no data) beside OKAY pieces for the clean
beats; a Read whose every beat is poisoned is answered DATA_ERROR as a whole. A
write whose ``attr`` marks data beats poisoned stores them and poisons the bytes
it wrote from them; an atomic touches no poisoned data: poisoned target bytes or a
poisoned operand (``attr`` bit 0) leave memory as it was and answer DATA_ERROR.
"""

from __future__ import annotations

from ualink_ref.sizes import TL_HALF_BYTES
from ualink_ref.tl.codec import Request
from ualink_ref.tl.memory import Memory
from ualink_ref.tl.upli import (
    BEAT_BYTES,
    POISON_ATTR_MASK,
    REGION_BYTES,
    Command,
    Status,
    atomic_op_of,
    atomic_poisoned,
)

_HALF = TL_HALF_BYTES
#: Read-type commands (a response's ``rd_wr`` = 0); every other command is write-type.
_READ_TYPE = frozenset((Command.READ, Command.ATOMIC_R))
_ATOMIC = frozenset((Command.ATOMIC_R, Command.ATOMIC_NR))


def execute(
    memory: Memory,
    acc_id: int,
    messages: list[tuple[int, int, bytes]],
    request: Request,
    halves: list[bytes],
    max_messages: int = 1024,
) -> tuple[int, int, list[bytes], int, int]:
    """Serve one request; return ``(status, rd_wr, response data half-flits, beats,
    poisoned)``; ``poisoned`` is the mask of the read-type answer's poisoned beats
    (the data of those beats is in the half-flits but must not be sent, rule P3)."""
    cmd, attr, addr, numbeats = request.cmd, request.attr, request.addr, request.numbeats
    nbytes = (request.len + 1) * 4
    rd_wr = 0 if cmd in _READ_TYPE else 1
    status = 0
    out: list[bytes] = []
    beats = 0
    poisoned = 0
    if request.asi or request.dst_acc != acc_id:
        status = Status.UNSUPPORTED_REQUEST
    elif cmd in _ATOMIC:
        op = atomic_op_of(attr & ~1)  # attr bit 0 marks the operand poisoned (rule P2)
        size = nbytes
        if op is None or numbeats or size not in (4, 8):
            status = Status.UNSUPPORTED_REQUEST
        elif atomic_poisoned(attr) and addr % size == 0 and memory.is_mapped(addr, size):
            # Rule P5: no atomic computes on poisoned data (a poisoned operand here; the
            # memory refuses poisoned target bytes itself); memory is left as it was.
            status = Status.DATA_ERROR
        else:
            payload = halves[0]
            operand = int.from_bytes(payload[:size], "little")
            compare = int.from_bytes(payload[size : 2 * size], "little")
            st, old = memory.atomic(op, size, addr, operand, compare)
            status = st
            if st == 0 and cmd == Command.ATOMIC_R and old is not None:
                beat = old.to_bytes(size, "little") + bytes(64 - size)
                out = [beat[:_HALF], beat[_HALF:]]
                beats = 1
        if status == Status.DATA_ERROR and cmd == Command.ATOMIC_R:
            poisoned = 1  # rule P5: the AtomicR's one beat of data is unusable
    # (nbytes - 1) // BEAT_BYTES is beats_for(nbytes) - 1 (nbytes >= 4), without a call.
    elif numbeats != (nbytes - 1) // BEAT_BYTES or addr // REGION_BYTES != (
        addr + nbytes - 1
    ) // REGION_BYTES:
        status = Status.UNSUPPORTED_REQUEST
    elif cmd == Command.READ:
        bad_beats = 0
        if memory.has_poison:
            st, data, byte_poison = memory.read_with_poison(addr, nbytes)
            if byte_poison:
                bad_beats = _poisoned_beats(byte_poison, numbeats + 1)
        else:
            st, data = memory.read(addr, nbytes)
        status = st
        if bad_beats == (1 << (numbeats + 1)) - 1:  # every beat poisoned: DATA_ERROR, whole
            status, data, poisoned = Status.DATA_ERROR, None, bad_beats
        elif data is not None:
            poisoned = bad_beats
            beats = numbeats + 1
            if nbytes % 64:
                data += bytes(beats * 64 - nbytes)
            out = [data[i : i + _HALF] for i in range(0, beats * 64, _HALF)]
    elif cmd == Command.WRITE_MESSAGE:
        if len(messages) >= max_messages or attr & POISON_ATTR_MASK:  # B3; P4: not delivered
            status = Status.DATA_ERROR
        else:
            messages.append((request.src_acc, addr, b"".join(halves)[:nbytes]))
    else:
        if cmd == Command.WRITE:
            enable: int | None = int.from_bytes(halves[0], "little") & ((1 << nbytes) - 1)
            payload = b"".join(halves[1:])[:nbytes]
            status = memory.write(addr, payload, enable)
        else:
            enable = None
            payload = halves[0] + halves[1] if len(halves) == 2 else b"".join(halves)
            status = memory.write(addr, payload[:nbytes])
        bad = attr & POISON_ATTR_MASK & ((1 << (numbeats + 1)) - 1)
        if bad and status == Status.OKAY:  # rule P4: the bytes written from poisoned beats
            memory.poison_bytes(addr, _beat_bytes(bad, nbytes) & (
                (1 << nbytes) - 1 if enable is None else enable))
    return int(status), rd_wr, out, beats, poisoned


def _poisoned_beats(byte_poison: int, beats: int) -> int:
    """Beat i is poisoned when any of its 64 bytes is (rule P3: poison travels per beat)."""
    full = (1 << 64) - 1
    return sum(1 << i for i in range(beats) if byte_poison >> (64 * i) & full)


def _beat_bytes(beat_mask: int, nbytes: int) -> int:
    """The byte mask (bit j = byte j, ``j < nbytes``) of the beats in ``beat_mask``."""
    full = (1 << 64) - 1
    out = sum(full << (64 * i) for i in range(4) if beat_mask >> i & 1)
    return out & ((1 << nbytes) - 1)


__all__ = ["execute"]
