"""A plain sequential model of UPLI ops, written independently of ualink_ref.tl.

Used by the TL, endpoint and simulation tests as the oracle: a dict of bytes
for memory, Python integers for atomics.
"""

from __future__ import annotations

import random

from ualink_ref.tl import AtomicOp, TransactionLayer


def ref_atomic(op: int, size: int, old: int, operand: int, compare: int) -> int:
    """Plain reference, written independently of upli.apply_atomic (signed via ctypes-like math)."""
    bits = 8 * size
    m = (1 << bits) - 1

    def signed(x: int) -> int:
        return x - (1 << bits) if x >> (bits - 1) else x

    table = {
        AtomicOp.ADD: lambda: (old + operand) % (1 << bits),
        AtomicOp.SWAP: lambda: operand,
        AtomicOp.CAS: lambda: operand if old == compare else old,
        AtomicOp.AND: lambda: old & operand,
        AtomicOp.OR: lambda: old | operand,
        AtomicOp.XOR: lambda: old ^ operand,
        AtomicOp.SMIN: lambda: min(signed(old), signed(operand)) & m,
        AtomicOp.SMAX: lambda: max(signed(old), signed(operand)) & m,
        AtomicOp.UMIN: lambda: min(old, operand),
        AtomicOp.UMAX: lambda: max(old, operand),
    }
    return table[AtomicOp(op)]()


class Model:
    """A plain bytearray-backed sequential memory model."""

    def __init__(self) -> None:
        self.mem: dict[int, int] = {}

    def read(self, addr: int, n: int) -> bytes:
        return bytes(self.mem.get(addr + i, 0) for i in range(n))

    def write(self, addr: int, data: bytes, mask: int | None = None) -> None:
        for i, b in enumerate(data):
            if mask is None or mask >> i & 1:
                self.mem[addr + i] = b


def random_ops(rng: random.Random, n: int, base: int, span: int) -> list[tuple]:
    ops: list[tuple] = []
    for _ in range(n):
        kind = rng.choice(["read", "write", "writefull", "atomic"])
        if kind == "atomic":
            size = rng.choice([4, 8])
            addr = base + rng.randrange(0, span, size)
            op = rng.choice(list(AtomicOp))
            operand = rng.getrandbits(8 * size)
            compare = rng.getrandbits(8 * size) if op == AtomicOp.CAS else None
            ops.append(("atomic", addr, op, operand, compare, size, rng.random() < 0.7))
            continue
        length = 4 * rng.randint(1, 64)
        region = base + rng.randrange(0, span, 256)
        off = 4 * rng.randrange(0, (256 - length) // 4 + 1)
        addr = region + off
        if kind == "read":
            ops.append(("read", addr, length))
        else:
            data = rng.randbytes(length)
            mask = rng.getrandbits(length) if kind == "write" else None
            ops.append(("write", addr, data, mask))
    return ops


def issue(tl: TransactionLayer, dst: int, op: tuple) -> int:
    if op[0] == "read":
        return tl.read(dst, op[1], op[2])
    if op[0] == "write":
        return tl.write(dst, op[1], op[2], byte_enable=op[3])
    _, addr, aop, operand, compare, size, fetch = op
    return tl.atomic(dst, addr, aop, operand, compare=compare, size=size, fetch=fetch)


def expect(model: Model, op: tuple) -> bytes | None:
    if op[0] == "read":
        return model.read(op[1], op[2])
    if op[0] == "write":
        model.write(op[1], op[2], op[3])
        return None
    _, addr, aop, operand, compare, size, fetch = op
    old = int.from_bytes(model.read(addr, size), "little")
    new = ref_atomic(aop, size, old, operand, compare or 0)
    model.write(addr, new.to_bytes(size, "little"))
    return old.to_bytes(size, "little") if fetch else None
