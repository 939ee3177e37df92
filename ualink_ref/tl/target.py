"""The completer side: execute one received request on a :class:`Memory`.

A request that is well framed but cannot be served gets a status, never an
exception: ``UNSUPPORTED_REQUEST`` for a non-zero ASI, a request addressed to
another accelerator, an invalid atomic encoding, inconsistent ``len`` /
``numbeats`` or a request crossing a 256-byte boundary; ``DECODE_ERROR`` /
``DATA_ERROR`` from the memory. Write Message data is appended to
``messages`` as ``(src_acc, addr, data)``.
"""

from __future__ import annotations

from ualink_ref.sizes import TL_HALF_BYTES
from ualink_ref.tl.codec import Request
from ualink_ref.tl.memory import Memory
from ualink_ref.tl.upli import REGION_BYTES, Command, Status, atomic_op_of, beats_for

_HALF = TL_HALF_BYTES
#: Read-type commands (a response's ``rd_wr`` = 0); every other command is write-type.
_READ_TYPE = frozenset((Command.READ, Command.ATOMIC_R))


def execute(
    memory: Memory,
    acc_id: int,
    messages: list[tuple[int, int, bytes]],
    request: Request,
    halves: list[bytes],
) -> tuple[int, int, list[bytes], int]:
    """Serve one request; return ``(status, rd_wr, response data half-flits, beats)``."""
    cmd, attr, addr, numbeats = request.cmd, request.attr, request.addr, request.numbeats
    nbytes = (request.len + 1) * 4
    rd_wr = 0 if cmd in _READ_TYPE else 1
    status = 0
    out: list[bytes] = []
    beats = 0
    if request.asi or request.dst_acc != acc_id:
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
            st, old = memory.atomic(op, size, addr, operand, compare)
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
        st, data = memory.read(addr, nbytes)
        status = st
        if data is not None:
            beats = numbeats + 1
            if nbytes % 64:
                data += bytes(beats * 64 - nbytes)
            out = [data[i : i + _HALF] for i in range(0, beats * 64, _HALF)]
    elif cmd == Command.WRITE_MESSAGE:
        messages.append((request.src_acc, addr, b"".join(halves)[:nbytes]))
    else:
        if cmd == Command.WRITE:
            mask = int.from_bytes(halves[0], "little") & ((1 << nbytes) - 1)
            payload = b"".join(halves[1:])[:nbytes]
            status = memory.write(addr, payload, mask)
        else:
            payload = halves[0] + halves[1] if len(halves) == 2 else b"".join(halves)
            status = memory.write(addr, payload[:nbytes])
    return int(status), rd_wr, out, beats




__all__ = ["execute"]
