"""Full-stack measurement: two :class:`ualink_ref.Endpoint` s, counted by their own counters.

The ops run between a requester endpoint and a target endpoint, driven flit
slot by flit slot the way :mod:`ualink_ref.stack.sim` drives them: each endpoint
sends up to ``batch`` DL flits per step (one FEC encode), which arrive
``latency`` slots after the end of the step. The link first exchanges its
start-up credit grants until both ends are idle; the endpoints' counters are
read then and again when, after the last completion, both ends are idle once
more (trailing acks and credit returns included). The differences are what
the operations cost: DL flits, wire bytes (FEC codewords), TL flits, per
direction, and — from the DL counters — how many DL flits carried no TL
bytes (ack-only).

For the field-by-field breakdown the wire is tapped like a protocol
analyser would: each direction's wire bytes are FEC-decoded and fed to a
receive-only :class:`~ualink_ref.dl.DataLink`, whose delivered TL flits are
dissected.
"""

from __future__ import annotations

import importlib
import importlib.util
from collections import deque
from collections.abc import Sequence
from typing import TYPE_CHECKING

from ualink_ref.compare._ualink_driver import REQUESTER, TARGET, breakdown, issue_ops
from ualink_ref.compare.mapping import Op
from ualink_ref.compare.ualink_side import UalinkCount

if TYPE_CHECKING:
    from ualink_ref.stack.endpoint import Completion, Endpoint

#: Flit slots per step and one-way latency in slots: the defaults of ``ualink_ref.stack.sim``.
BATCH = 8
LATENCY = 8

METHOD_ENDPOINT = "two Endpoints (TL+DL+FEC), counted by the endpoints' own counters"


class _Link:
    """Two endpoints, wire bytes recorded per direction (``ab`` = requester -> target)."""

    def __init__(self, a: Endpoint, b: Endpoint) -> None:
        self.a, self.b = a, b
        self.now = 0
        self.wire: dict[str, list[bytes]] = {"ab": [], "ba": []}
        self._pipes: dict[str, deque[tuple[int, bytes]]] = {"ab": deque(), "ba": deque()}
        self.completions: list[Completion] = []

    def step(self) -> None:
        now = self.now
        for src, name in ((self.a, "ab"), (self.b, "ba")):
            wire, count = src.poll_many(now, BATCH)
            if count:
                self.wire[name].append(wire)
                self._pipes[name].append((now + BATCH + LATENCY, wire))
        self.now = now + BATCH
        for dst, name in ((self.b, "ab"), (self.a, "ba")):
            pipe = self._pipes[name]
            while pipe and pipe[0][0] <= self.now:
                dst.receive(pipe.popleft()[1], self.now)
        event = self.a.next_event()
        while event is not None:
            self.completions.append(event)
            event = self.a.next_event()

    def run_until_idle(self, want: int = 0, max_steps: int = 1_000_000) -> None:
        """Step until ``want`` completions arrived and both ends are idle, nothing in flight."""
        for _ in range(max_steps):
            self.step()
            if (len(self.completions) >= want and not self.a.busy and not self.b.busy
                    and not self._pipes["ab"] and not self._pipes["ba"]):
                return
        raise RuntimeError(f"endpoints still busy after {max_steps} steps")


def tap_tl_flits(wire: Sequence[bytes], fec: str) -> list[bytes]:
    """TL flits carried by one direction's wire bytes, read by a receive-only DataLink."""
    from ualink_ref.dl import DataLink, TLFlitDelivered
    from ualink_ref.phy import decode_flits

    tap = DataLink()
    out: list[bytes] = []
    data = b"".join(wire)
    flits = data if fec == "none" else decode_flits(data, fec).flits
    for i in range(0, len(flits), 640):
        for ev in tap.receive(flits[i : i + 640], 0):
            if isinstance(ev, TLFlitDelivered):
                out.append(ev.data)
    return out


def endpoint_available() -> bool:
    """True when the full-stack endpoint is part of this installation."""
    return importlib.util.find_spec("ualink_ref.stack.endpoint") is not None


def run(ops: Sequence[Op], *, fec: str) -> UalinkCount:
    """Run ``ops`` through two endpoints; count what left each one."""
    from ualink_ref.phy.flits import MODES
    from ualink_ref.stack.endpoint import Endpoint
    from ualink_ref.tl import Status

    a, b = Endpoint(REQUESTER, phy=fec), Endpoint(TARGET, phy=fec)
    link = _Link(a, b)
    link.run_until_idle()  # start-up credit grants
    a0, b0, da0, db0 = a.counters, b.counters, a.dl.counters, b.dl.counters
    issued = issue_ops(a, ops)
    link.run_until_idle(issued)
    done = link.completions
    if len(done) != issued or any(c.status != Status.OKAY for c in done):
        raise RuntimeError(f"ualink stack: {len(done)}/{issued} requests completed OKAY")
    a1, b1, da1, db1 = a.counters, b.counters, a.dl.counters, b.dl.counters
    tl_ab = tap_tl_flits(link.wire["ab"], fec)[a0.tl_flits_sent :]
    tl_ba = tap_tl_flits(link.wire["ba"], fec)[b0.tl_flits_sent :]
    flits_ab = a1.flits_sent - a0.flits_sent
    flits_ba = b1.flits_sent - b0.flits_sent
    per_flit = MODES[fec].codewords_per_flit
    return UalinkCount(
        ops=len(ops),
        tl_flits_fwd=a1.tl_flits_sent - a0.tl_flits_sent,
        tl_flits_rev=b1.tl_flits_sent - b0.tl_flits_sent,
        dl_flits_fwd=flits_ab,
        dl_flits_rev=flits_ba,
        fec=fec,
        method=METHOD_ENDPOINT,
        wire_bytes_fwd=a1.wire_bytes_sent - a0.wire_bytes_sent,
        wire_bytes_rev=b1.wire_bytes_sent - b0.wire_bytes_sent,
        codewords_fwd=flits_ab * per_flit if fec != "none" else 0,
        codewords_rev=flits_ba * per_flit if fec != "none" else 0,
        ack_only_fwd=flits_ab - (da1.data_flits_sent - da0.data_flits_sent),
        ack_only_rev=flits_ba - (db1.data_flits_sent - db0.data_flits_sent),
        breakdown_fwd=tuple(breakdown(tl_ab).items()),
        breakdown_rev=tuple(breakdown(tl_ba).items()),
    )
