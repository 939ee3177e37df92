"""Two TransactionLayers flit by flit: every op completes once, memory matches a model."""

from __future__ import annotations

import random

import pytest

from ualink_ref.tl import AtomicOp, CreditConfig, Status, TLPair, TransactionLayer
from ualink_ref.tl.flit import dissect_stream


def _ref_atomic(op: int, size: int, old: int, operand: int, compare: int) -> int:
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
    new = _ref_atomic(aop, size, old, operand, compare or 0)
    model.write(addr, new.to_bytes(size, "little"))
    return old.to_bytes(size, "little") if fetch else None


@pytest.mark.parametrize(
    ("seed", "latency", "compress", "credits"),
    [
        (1, 0, True, None),
        (2, 5, False, None),
        (3, 17, True, CreditConfig(per_vc=(1, 1, 5, 4), pool=(0, 0, 0, 0))),
        (4, 3, True, CreditConfig(per_vc=(0, 0, 0, 0), pool=(2, 2, 6, 5))),
    ],
)
def test_random_ops_both_directions_match_sequential_model(
    seed: int, latency: int, compress: bool, credits: CreditConfig | None
) -> None:
    rng = random.Random(seed)
    a = TransactionLayer(1, compress=compress, credits=credits)
    b = TransactionLayer(2, compress=compress, credits=credits)
    pair = TLPair(a, b, latency=latency)
    ops_a = random_ops(rng, 400, 0x10000, 4096)
    ops_b = random_ops(rng, 400, 0x7000_0000, 1024)
    tags_a = [issue(a, 2, op) for op in ops_a]
    tags_b = [issue(b, 1, op) for op in ops_b]
    got_a, got_b = pair.run()
    for ops, tags, got, target in ((ops_a, tags_a, got_a, b), (ops_b, tags_b, got_b, a)):
        model = Model()
        by_tag = {c.tag: c for c in got}
        assert len(by_tag) == len(got) == len(ops), f"seed {seed}"
        for tag, op in zip(tags, ops, strict=True):
            want = expect(model, op)
            c = by_tag[tag]
            assert c.status == Status.OKAY, f"seed {seed} op {op}"
            assert c.data == want, f"seed {seed} op {op}"
        for addr, value in model.mem.items():
            assert target.memory.peek(addr, 1)[0] == value, f"seed {seed} addr {addr:#x}"
    # No credit leak: once quiet, every credit granted is back with the sender.
    for tx, rx in ((a.tx_credits, b.rx_credits), (b.tx_credits, a.rx_credits)):
        for source in range(5):
            cap = rx.config.capacity(source)
            owed = rx.owed[source]
            assert [tx.available[source][c] + owed[c] for c in range(4)] == list(cap)


def test_flits_dissect_as_a_stream() -> None:
    a, b = TransactionLayer(1), TransactionLayer(2)
    pair = TLPair(a, b, latency=2, record=True)
    rng = random.Random(9)
    for op in random_ops(rng, 60, 0, 2048):
        issue(a, 2, op)
    pair.run()
    assert pair.trace is not None
    views = dissect_stream([f for _, d, f in pair.trace if d == "a->b"])
    assert views and views[-1].pending_after == 0
    kinds = {h.kind for v in views for h in v.halves}
    assert kinds == {"control", "data"}
