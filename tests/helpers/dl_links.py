"""DataLink test helpers: TL flit sets, flit inspection and prepared ends (shared by the
tests/dl modules on the retry rules, specs/dl.md section 6)."""

from __future__ import annotations

import random

from ualink_ref.dl import (
    DataLink,
    DLFlit,
    FlitOp,
)
from ualink_ref.dl.config import DLConfig
from ualink_ref.net.channels import flip_bits


def random_tl_flits(seed: int, n: int) -> list[bytes]:
    """``n`` random TL flits from ``random.Random(seed)``."""
    rng = random.Random(seed)
    return [rng.randbytes(64) for _ in range(n)]


TL_256 = [bytes([i]) * 64 for i in range(256)]
NEVER = 10**9  # a replay timeout that never expires in a test


def header_fields(flit: bytes) -> tuple[FlitOp, bool, int]:
    word = int.from_bytes(flit[:3], "big")
    op = FlitOp(word >> 21)
    seq = (word >> 8) & 0x1FF if not op.is_command else (word >> 11) & 0x1FF
    return op, bool(word & (1 << 20)), seq


class WrapLossChannel:
    """Loses the first transmission of every data flit numbered 510, 511 or 1 (or ``seqs``)."""

    def __init__(self, sender: DataLink, seqs: tuple[int, ...] = (510, 511, 1),
                 silent: bool = False) -> None:
        self.sender = sender
        self.delay = 1
        self.fresh_seen = 0
        self.lost: list[int] = []
        self.seqs = seqs
        self.silent = silent

    def transmit(self, flit: bytes, first_flit: int, flits: int,
                 now: float = 0) -> bytes | None:
        fresh = self.sender.counters.data_flits_sent
        if fresh == self.fresh_seen:
            return flit  # not a new data flit
        self.fresh_seen = fresh
        seq = (fresh - 1) % 511 + 1
        if seq in self.seqs:
            self.lost.append(seq)
            return None if seq != 511 or self.silent else flip_bits(flit, [4000])
        return flit


def op_of(flit: bytes) -> FlitOp:
    return FlitOp(flit[0] >> 5)


def make_busy(link: DataLink, slots: int = 10) -> None:
    """Make ``link`` saturate its direction with explicit data flits (nothing acks them,
    so after a few slots its fresh flits cannot carry an ack: rule 4)."""
    link.send(random_tl_flits(99, 3000))
    for t in range(slots):
        assert link.poll(t) is not None
    assert link.in_flight >= 7


def poll_n(link: DataLink, n: int, start: int) -> list[bytes]:
    out = []
    for t in range(start, start + n):
        flit = link.poll(t)
        assert flit is not None
        out.append(flit)
    return out


def ack_value(flit: bytes) -> int:
    return DLFlit.decode(flit).ack_req_seq


def data_flits(n: int, seed: int = 0) -> list[bytes]:
    """``n`` consecutive data flits as a sender builds them (explicit headers, seq 1..n)."""
    rng = random.Random(seed)
    sender = DataLink(DLConfig(explicit_interval=1, replay_timeout=10**9))
    sender.send([rng.randbytes(64) for _ in range(10 * n + 10)])
    flits = []
    for t in range(n):
        flit = sender.poll(t)
        assert flit is not None
        flits.append(flit)
    return flits


def decoded_op(flit: bytes | None) -> FlitOp | None:
    return None if flit is None else DLFlit.decode(flit).op


def corrupt(flit: bytes) -> bytes:
    return flit[:100] + bytes([flit[100] ^ 1]) + flit[101:]


def busy_receiver(**options: float) -> DataLink:
    """A receiver with plenty of its own data, every data flit explicit (so it can never
    piggy-back an ack): acks leave only as ack-only flits, when rule 8 makes one due."""
    link = DataLink(DLConfig(explicit_interval=1, **options))  # type: ignore[arg-type]
    link.send(TL_256 * 4)
    return link


def replay_sender(max_replays: int, timeout: float = 10) -> tuple[DataLink, float]:
    link = DataLink(DLConfig(max_replays=max_replays, replay_timeout=timeout))
    link.send(TL_256[:40])
    for t in range(4):
        link.poll(t)
    return link, timeout


def expire(link: DataLink) -> list[object]:
    deadline = link.next_timer()
    assert deadline is not None
    return list(link.handle_timer(deadline))


TL_512 = TL_256 * 2  # 512 TL flits: about 52 full DL flits


def decode_flit(flit: bytes | None) -> DLFlit:
    assert flit is not None
    return DLFlit.decode(flit)


def data_sender(n: int = 512, **options: float) -> DataLink:
    link = DataLink(DLConfig(replay_timeout=NEVER, **options))  # type: ignore[arg-type]
    link.send(TL_512[:n])
    return link
