"""How each memory operation maps to RoCEv2 packets, the way an RDMA NIC would.

Rules (each is also a row of ``specs/rocev2-comparison.md``):

* **Store** of ``n`` bytes → one RDMA WRITE message: WRITE ONLY (BTH + RETH +
  data) when ``n`` ≤ path MTU, else WRITE FIRST (BTH + RETH + PMTU bytes),
  WRITE MIDDLE (BTH + PMTU bytes)…, WRITE LAST (BTH + rest); the responder
  returns one ACKNOWLEDGE (BTH + AETH) for the message (acks coalesced to one
  per message — the fewest a reliable-connection responder may send).
* **Load** of ``n`` bytes → READ REQUEST (BTH + RETH), answered by READ
  RESPONSE ONLY (BTH + AETH + data) or FIRST (BTH + AETH), MIDDLE (BTH),
  LAST (BTH + AETH) packets of at most one PMTU each.
* **Atomic ADD / CAS on 8 bytes** → FETCH_ADD / COMPARE_SWAP (BTH +
  AtomicETH), answered by ATOMIC ACKNOWLEDGE (BTH + AETH + AtomicAckETH).
* **Every other atomic** (SWAP, AND, OR, XOR, MIN, MAX, and any 4-byte
  operand — RoCEv2 atomics are 8-byte FETCH_ADD and COMPARE_SWAP only) →
  what software must do instead: an RDMA READ of the aligned 8 bytes, then a
  COMPARE_SWAP with the computed value; this counts one CAS attempt (no
  contention), i.e. one extra round trip, the minimum.

``fwd`` is the requester → responder direction, ``rev`` the way back. The
useful payload of an op (identical for both stacks) is the data the
application asked to move: store data forward, load data back, an atomic's
operand(s) forward (compare + swap for CAS) and its old value back.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from types import MappingProxyType
from typing import Generic, TypeVar

T_co = TypeVar("T_co", covariant=True)
U = TypeVar("U")

ATOMIC_KINDS: tuple[str, ...] = (
    "add", "swap", "cas", "and", "or", "xor", "smin", "smax", "umin", "umax",
)
OP_KINDS: tuple[str, ...] = ("load", "store", *ATOMIC_KINDS)
ATOMIC_SIZES: tuple[int, ...] = (4, 8)
#: Path MTUs an InfiniBand / RoCEv2 port may use (IBA Vol. 1 MTU sizes).
PMTUS: tuple[int, ...] = (256, 512, 1024, 2048, 4096)

#: RC opcode -> (value, extension headers after the BTH, carries payload).
#: Source: InfiniBand Architecture Specification Vol. 1, §9.2 opcode table.
RC_OPCODES: MappingProxyType[str, tuple[int, tuple[str, ...], bool]] = MappingProxyType({
    "RDMA_WRITE_FIRST": (0x06, ("reth",), True),
    "RDMA_WRITE_MIDDLE": (0x07, (), True),
    "RDMA_WRITE_LAST": (0x08, (), True),
    "RDMA_WRITE_ONLY": (0x0A, ("reth",), True),
    "RDMA_READ_REQUEST": (0x0C, ("reth",), False),
    "RDMA_READ_RESPONSE_FIRST": (0x0D, ("aeth",), True),
    "RDMA_READ_RESPONSE_MIDDLE": (0x0E, (), True),
    "RDMA_READ_RESPONSE_LAST": (0x0F, ("aeth",), True),
    "RDMA_READ_RESPONSE_ONLY": (0x10, ("aeth",), True),
    "ACKNOWLEDGE": (0x11, ("aeth",), False),
    "ATOMIC_ACKNOWLEDGE": (0x12, ("aeth", "atomic_ack_eth"), False),
    "COMPARE_SWAP": (0x13, ("atomic_eth",), False),
    "FETCH_ADD": (0x14, ("atomic_eth",), False),
})

#: RoCEv2 atomics operate on this many bytes only.
ROCE_ATOMIC_BYTES = 8

#: The directions a figure can be asked for: one way, or both added.
DIRECTIONS: tuple[str, ...] = ("fwd", "rev", "both")


@dataclass(frozen=True)
class FwdRev(Generic[T_co]):
    """One quantity in each direction: ``fwd`` requester → responder, ``rev`` the way back.

    Unpacks as ``fwd, rev = pair``. Every per-direction figure of the comparison
    is one of these, so "which direction" is answered in one place (:meth:`of`).
    """

    fwd: T_co
    rev: T_co

    def __iter__(self) -> Iterator[T_co]:
        return iter((self.fwd, self.rev))

    def of(self: FwdRev[float], direction: str) -> float:
        """The value in ``direction``: ``"fwd"``, ``"rev"``, or ``"both"`` (their sum)."""
        if direction == "both":
            return self.fwd + self.rev
        if direction not in DIRECTIONS:
            raise ValueError(f"direction must be one of {DIRECTIONS}, not {direction!r}")
        return self.fwd if direction == "fwd" else self.rev

    def map(self, fn: Callable[[T_co], U]) -> FwdRev[U]:
        """``fn`` applied to each direction."""
        return FwdRev(fn(self.fwd), fn(self.rev))

    def per(self: FwdRev[float], n: int) -> FwdRev[float]:
        """Each direction divided by ``n`` (a per-op average of ``n`` ops)."""
        return FwdRev(self.fwd / n, self.rev / n)

    def columns(self, name: str) -> dict[str, T_co]:
        """``{name_fwd: fwd, name_rev: rev}``: the flat columns of CSV and JSON output."""
        return {f"{name}_fwd": self.fwd, f"{name}_rev": self.rev}


#: Nothing either way: the default of per-direction counts (immutable, so shared).
ZERO: FwdRev[int] = FwdRev(0, 0)


@dataclass(frozen=True)
class CompareOp:
    """One memory operation: ``kind`` in :data:`OP_KINDS`, ``size`` in bytes."""

    kind: str
    size: int

    def __post_init__(self) -> None:
        if self.kind not in OP_KINDS:
            raise ValueError(f"unknown op kind {self.kind!r}; expected one of {OP_KINDS}")
        if self.is_atomic:
            if self.size not in ATOMIC_SIZES:
                raise ValueError(f"atomic size must be 4 or 8, not {self.size}")
        elif self.size <= 0:
            raise ValueError("size must be positive")

    @property
    def is_atomic(self) -> bool:
        """True for the atomic kinds."""
        return self.kind in ATOMIC_KINDS

    @property
    def label(self) -> str:
        """Short name for tables, e.g. ``store``, ``atomic-cas``."""
        return f"atomic-{self.kind}" if self.is_atomic else self.kind

    @property
    def useful_fwd(self) -> int:
        """Application bytes moved requester → responder."""
        if self.kind == "store":
            return self.size
        if self.kind == "cas":
            return 2 * self.size  # compare value and swap value
        return self.size if self.is_atomic else 0

    @property
    def useful_rev(self) -> int:
        """Application bytes moved responder → requester (load data, atomic old value)."""
        return 0 if self.kind == "store" else self.size

    @property
    def useful(self) -> FwdRev[int]:
        """Application bytes moved each way."""
        return FwdRev(self.useful_fwd, self.useful_rev)


@dataclass(frozen=True)
class RocePacket:
    """One RoCEv2 packet of a mapped operation (IB payload before padding)."""

    opcode: str
    direction: str  # "fwd" or "rev"
    payload: int = 0

    @property
    def ext(self) -> tuple[str, ...]:
        """Extension headers after the BTH, from the opcode table."""
        return RC_OPCODES[self.opcode][1]

    @property
    def opcode_value(self) -> int:
        """The RC opcode byte."""
        return RC_OPCODES[self.opcode][0]


@dataclass(frozen=True)
class RoceMapping:
    """The packets an operation becomes, its round trips, and how it was modelled."""

    op: CompareOp
    pmtu: int
    packets: tuple[RocePacket, ...]
    round_trips: int
    emulated: bool
    note: str

    def packets_in(self, direction: str) -> tuple[RocePacket, ...]:
        """The packets sent in ``direction`` ("fwd" or "rev")."""
        return tuple(p for p in self.packets if p.direction == direction)


def _segments(n: int, pmtu: int) -> list[int]:
    """Split ``n`` payload bytes into PMTU-sized packets (the last one shorter)."""
    full, rest = divmod(n, pmtu)
    sizes = [pmtu] * full
    if rest or not sizes:
        sizes.append(rest)
    return sizes


def _write(n: int, pmtu: int) -> list[RocePacket]:
    parts = _segments(n, pmtu)
    if len(parts) == 1:
        return [RocePacket("RDMA_WRITE_ONLY", "fwd", n)]
    names = ["RDMA_WRITE_FIRST"] + ["RDMA_WRITE_MIDDLE"] * (len(parts) - 2) + ["RDMA_WRITE_LAST"]
    return [RocePacket(name, "fwd", p) for name, p in zip(names, parts, strict=True)]


def _read(n: int, pmtu: int) -> list[RocePacket]:
    parts = _segments(n, pmtu)
    out = [RocePacket("RDMA_READ_REQUEST", "fwd", 0)]
    if len(parts) == 1:
        return [*out, RocePacket("RDMA_READ_RESPONSE_ONLY", "rev", n)]
    names = (
        ["RDMA_READ_RESPONSE_FIRST"]
        + ["RDMA_READ_RESPONSE_MIDDLE"] * (len(parts) - 2)
        + ["RDMA_READ_RESPONSE_LAST"]
    )
    return out + [RocePacket(name, "rev", p) for name, p in zip(names, parts, strict=True)]


def map_op(op: CompareOp, pmtu: int = 1024) -> RoceMapping:
    """Map ``op`` to the RoCEv2 packets an RDMA NIC (or its software) would send."""
    if pmtu not in PMTUS:
        raise ValueError(f"path MTU must be one of {PMTUS}, not {pmtu}")
    if op.kind == "store":
        pkts = [*_write(op.size, pmtu), RocePacket("ACKNOWLEDGE", "rev")]
        return RoceMapping(op, pmtu, tuple(pkts), 1, False, "RDMA WRITE + ACK")
    if op.kind == "load":
        return RoceMapping(op, pmtu, tuple(_read(op.size, pmtu)), 1, False, "RDMA READ")
    native = {"add": "FETCH_ADD", "cas": "COMPARE_SWAP"}.get(op.kind)
    if native is not None and op.size == ROCE_ATOMIC_BYTES:
        pkts = [RocePacket(native, "fwd"), RocePacket("ATOMIC_ACKNOWLEDGE", "rev")]
        return RoceMapping(op, pmtu, tuple(pkts), 1, False, f"{native} + ATOMIC ACK")
    why = "4-byte operand" if op.size != ROCE_ATOMIC_BYTES else "no RoCEv2 opcode"
    pkts = [
        *_read(ROCE_ATOMIC_BYTES, pmtu),
        RocePacket("COMPARE_SWAP", "fwd"),
        RocePacket("ATOMIC_ACKNOWLEDGE", "rev"),
    ]
    return RoceMapping(
        op, pmtu, tuple(pkts), 2, True,
        f"emulated ({why}): READ 8 B + COMPARE_SWAP, +1 round trip (1 CAS try)",
    )
