"""What the ualink_ref stack really sends for a workload: measured, not computed.

:func:`measure_ualink` runs a list of operations through the project's own
stack — one requester, one target — and counts everything that leaves each
side, in both directions: requests, write data, responses, read data, credit
returns, DL acks. The requester → target direction is ``fwd``, the way back
``rev`` (the same convention as the RoCEv2 mapping). It runs two full-stack
:class:`ualink_ref.Endpoint` s on the one harness
(:class:`~ualink_ref.net.harness.Network`, the simulator's defaults: 8 flit
slots a step, 8 slots of latency) and reads their own counters;
:func:`run_layers` measures layer by layer instead, as a cross-check (see
``specs/rocev2-comparison.md``).

Loads and stores larger than 256 bytes are split into 256-byte requests (the
largest a UALink request may be); atomics are AtomicR (the old value comes
back, as with a RoCEv2 atomic).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ualink_ref.compare.mapping import ZERO, CompareOp, FwdRev
from ualink_ref.dl import TLFlitDelivered
from ualink_ref.errors import LinkStalledError
from ualink_ref.net.harness import Network
from ualink_ref.net.link_pair import LinkPair
from ualink_ref.net.tl_pair import TLPair
from ualink_ref.node.config import EndpointConfig
from ualink_ref.node.endpoint import Endpoint
from ualink_ref.phy import MODES
from ualink_ref.sizes import DL_FLIT_BYTES, MAX_REQUEST_BYTES, WIRE_BYTES_PER_FLIT, FecMode
from ualink_ref.tl import Status, TransactionLayer, dissect_stream
from ualink_ref.tl.events import Completion

#: The largest single UALink request (declared in ualink_ref.sizes).
MAX_REQUEST = MAX_REQUEST_BYTES
#: Dissected TL flits of one direction: ``(what, count)`` by ``what`` (see :func:`breakdown`).
Breakdown = tuple[tuple[str, int], ...]
#: No TL flits dissected either way.
NO_BREAKDOWN: FwdRev[Breakdown] = FwdRev((), ())


@dataclass(frozen=True)
class UalinkCount:
    """Counts of what left each side of the link while a workload ran.

    ``method`` says how the DL flits were obtained (see
    ``specs/rocev2-comparison.md``): from the full-stack endpoint's own
    counters, or TL flits from two transaction-layer engines packed into DL
    flit payloads.
    """

    ops: int
    tl_flits: FwdRev[int]
    dl_flits: FwdRev[int]
    fec: FecMode
    method: str
    #: Bytes and codewords after FEC encoding of the DL flits sent (by ``ualink_ref.phy``).
    wire_bytes: FwdRev[int] = ZERO
    codewords: FwdRev[int] = ZERO
    #: DL flits that carried no TL bytes (ack-only / command flits), included above.
    ack_only: FwdRev[int] = ZERO
    #: TL flits dissected: half-flits by kind, control fields by format, NOP sectors.
    breakdown: FwdRev[Breakdown] = NO_BREAKDOWN

    @property
    def wire_bytes_per_flit(self) -> int:
        """Wire bytes of one DL flit in this count's FEC mode (``ualink_ref.sizes``)."""
        return WIRE_BYTES_PER_FLIT[self.fec]

    @property
    def mac_bytes(self) -> FwdRev[int]:
        """DL flit bytes each way (headers and CRC included)."""
        return self.dl_flits.map(lambda flits: flits * DL_FLIT_BYTES)


def ualink_requests(op: CompareOp) -> int:
    """How many UALink requests ``op`` becomes (loads/stores split at 256 bytes)."""
    if op.is_atomic:
        return 1
    return -(-op.size // MAX_REQUEST)


REQUESTER = 1
TARGET = 2
#: Each op of a stream works in its own 4 KiB region so none depends on another.
STRIDE = 4096
#: Flit slots per step and one-way latency in slots: the defaults of ``ualink_ref.sim``.
BATCH = 8
LATENCY = 8

METHOD_ENDPOINT = "two Endpoints (TL+DL+FEC), counted by the endpoints' own counters"
METHOD_TL_DL = (
    "TL engines (TLPair) -> TL flits packed by two DataLinks (LinkPair, DL flits counted) -> "
    "FEC wire bytes per flit"
)


def issue_ops(tl: TransactionLayer | Endpoint, ops: Sequence[CompareOp]) -> int:
    """Queue every op on the requester (TL engine or endpoint); return the request count."""
    issued = 0
    for i, op in enumerate(ops):
        base = i * STRIDE
        if op.is_atomic:
            compare = 0 if op.kind == "cas" else None
            tl.atomic(TARGET, base, op.kind, 1, compare, op.size, True)
            issued += 1
            continue
        for off in range(0, op.size, MAX_REQUEST):
            n = min(MAX_REQUEST, op.size - off)
            if op.kind == "store":
                data = bytes((base + off + j) & 0xFF for j in range(n))
                tl.write(TARGET, base + off, data)
            else:
                tl.read(TARGET, base + off, n)
            issued += 1
    return issued


def breakdown(flits: Sequence[bytes]) -> dict[str, int]:
    """Dissect a direction's TL flits: half-flits by kind, control fields by format."""
    counts: Counter[str] = Counter()
    for view in dissect_stream(flits):
        for half in view.halves:
            counts[f"{half.kind}_halves"] += 1
            for f in half.fields:
                counts["nop_sectors" if f.is_nop else f"field:{f.format.name}"] += 1
    return dict(sorted(counts.items()))


def _breakdown_items(flits: Sequence[bytes]) -> Breakdown:
    return tuple(breakdown(flits).items())


class EndpointLink:
    """A requester and a target endpoint on the harness; records what each one delivered.

    ``delivered["b"]`` are the TL flits the target's DL delivered (what the
    requester sent), ``delivered["a"]`` the way back; ``completions`` the
    requester's.
    """

    def __init__(self, a: Endpoint, b: Endpoint) -> None:
        self.a, self.b = a, b
        self.network = Network(batch=BATCH)
        self.network.add_port("a", a)
        self.network.add_port("b", b)
        self.network.connect("a", "b", latency=LATENCY)
        self.completions: list[Completion] = []
        self.delivered: dict[str, list[bytes]] = {"a": [], "b": []}

    def _record(self, events: list[tuple[str, Any]]) -> None:
        for port, event in events:
            if type(event) is TLFlitDelivered:
                self.delivered[port].append(event.data)
            elif port == "a" and type(event) is Completion:
                self.completions.append(event)

    def run_until_idle(self, want: int = 0, max_slots: int = 8_000_000) -> None:
        """Step until ``want`` completions arrived and nothing is busy or on the wire."""
        self.network.run(until=lambda: len(self.completions) >= want and not self.network.busy,
                         on_events=self._record, max_slots=max_slots)


def run_endpoints(ops: Sequence[CompareOp], *, fec: FecMode) -> UalinkCount:
    """Run ``ops`` through two endpoints on the harness; count what left each one."""
    config = EndpointConfig.with_fec(fec)
    a, b = Endpoint(REQUESTER, config=config), Endpoint(TARGET, config=config)
    link = EndpointLink(a, b)
    link.run_until_idle()  # start-up credit grants
    a0, b0, da0, db0 = a.counters, b.counters, a.dl.counters, b.dl.counters
    start_ab, start_ba = len(link.delivered["b"]), len(link.delivered["a"])
    issued = issue_ops(a, ops)
    link.run_until_idle(issued)
    done = link.completions
    if len(done) != issued or any(c.status != Status.OKAY for c in done):
        raise LinkStalledError(link.network.now, "ualink stack: not every request completed "
                               "OKAY", completed=len(done), total=issued)
    a1, b1, da1, db1 = a.counters, b.counters, a.dl.counters, b.dl.counters
    tl = FwdRev(link.delivered["b"][start_ab:], link.delivered["a"][start_ba:])
    flits = FwdRev(a1.flits_sent - a0.flits_sent, b1.flits_sent - b0.flits_sent)
    per_flit = MODES[fec].codewords_per_flit if fec != "none" else 0
    return UalinkCount(
        ops=len(ops),
        tl_flits=FwdRev(a1.tl_flits_sent - a0.tl_flits_sent, b1.tl_flits_sent - b0.tl_flits_sent),
        dl_flits=flits,
        fec=fec,
        method=METHOD_ENDPOINT,
        wire_bytes=FwdRev(a1.wire_bytes_sent - a0.wire_bytes_sent,
                          b1.wire_bytes_sent - b0.wire_bytes_sent),
        codewords=flits.map(lambda n: n * per_flit),
        ack_only=FwdRev(flits.fwd - (da1.data_flits_sent - da0.data_flits_sent),
                        flits.rev - (db1.data_flits_sent - db0.data_flits_sent)),
        breakdown=tl.map(_breakdown_items),
    )


def run_tl_pair(ops: Sequence[CompareOp]) -> tuple[list[bytes], list[bytes]]:
    """Run ``ops`` on two TL engines; return the TL flits sent each way (after start-up)."""
    a, b = TransactionLayer(REQUESTER), TransactionLayer(TARGET)
    pair = TLPair(a, b, record=True)
    pair.run()  # start-up credit grants: not part of any operation
    assert pair.trace is not None
    start = len(pair.trace)
    issued = issue_ops(a, ops)
    done, _ = pair.run()
    if len(done) != issued or any(c.status != Status.OKAY for c in done):
        raise LinkStalledError(pair.slot, "ualink TL pair: not every request completed OKAY",
                               completed=len(done), total=issued)
    fwd = [f for _, name, f in pair.trace[start:] if name == "a->b"]
    rev = [f for _, name, f in pair.trace[start:] if name == "b->a"]
    return fwd, rev


def run_layers(ops: Sequence[CompareOp], *, fec: FecMode) -> UalinkCount:
    """Layer by layer, a cross-check of :func:`run_endpoints`: the TL flits of two TL
    engines (:class:`TLPair`) go all at once to two DataLinks (:class:`LinkPair`), whose
    DL flits are counted; each costs the FEC mode's wire bytes."""
    fwd, rev = run_tl_pair(ops)
    pair = LinkPair()
    pair.a.send(fwd)
    pair.b.send(rev)
    pair.record_wire = True
    pair.run_until_idle()
    if pair.delivered["b"] != list(fwd) or pair.delivered["a"] != list(rev):
        raise LinkStalledError(pair.now, "DataLink pair did not deliver the TL flits in order")
    dl = FwdRev(sum(1 for _, d, _ in pair.wire if d == "ab"),
                sum(1 for _, d, _ in pair.wire if d == "ba"))
    per_flit = MODES[fec].codewords_per_flit if fec != "none" else 0
    wire = WIRE_BYTES_PER_FLIT[fec]
    tl = FwdRev(fwd, rev)
    return UalinkCount(
        ops=len(ops),
        tl_flits=tl.map(len),
        dl_flits=dl,
        fec=fec,
        method=METHOD_TL_DL,
        wire_bytes=dl.map(lambda n: n * wire),
        codewords=dl.map(lambda n: n * per_flit),
        ack_only=FwdRev(dl.fwd - pair.a.counters.data_flits_sent,
                        dl.rev - pair.b.counters.data_flits_sent),
        breakdown=tl.map(_breakdown_items),
    )


def measure_ualink(ops: Sequence[CompareOp], *, fec: FecMode = "kp4", seed: int = 0) -> UalinkCount:
    """Run ``ops`` through the ualink_ref stack (two endpoints) and count what leaves it,
    both ways. ``seed`` is accepted for symmetry with the other models (the run is
    deterministic)."""
    return run_endpoints(ops, fec=fec)
