"""Drives the ualink_ref stack for :func:`ualink_side.measure_ualink`.

:func:`run` uses the full-stack endpoints (:mod:`._endpoint_driver`) when they
are installed. :func:`run_layers` measures layer by layer instead — the
method used before the endpoint existed, kept as a cross-check (see
``specs/rocev2-comparison.md``):

1. two :class:`~ualink_ref.tl.TransactionLayer` engines (requester, target)
   connected flit by flit with :class:`~ualink_ref.tl.TLPair` run the ops;
   every 64-byte TL flit each way is recorded (the link's start-up credit
   grants are exchanged first and not counted) and dissected field by field;
2. the recorded TL flits are sent through two connected
   :class:`~ualink_ref.dl.DataLink` ends, and every 640-byte DL flit each end
   sends is counted (data flits and ack-only flits);
3. those DL flits are FEC-encoded with :func:`ualink_ref.phy.encode_flits`
   and the wire bytes and codewords counted.

The TL flits reach the DL all at once, so step 2 is the DL's tightest
packing (a TL engine and a DL running slot by slot together — the full-stack
endpoint — may send partly filled DL flits when the TL has little to send).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import TYPE_CHECKING

from ualink_ref.compare.mapping import Op
from ualink_ref.compare.ualink_side import MAX_REQUEST, UalinkCount

if TYPE_CHECKING:
    from ualink_ref.stack.endpoint import Endpoint
    from ualink_ref.tl import TransactionLayer

REQUESTER = 1
TARGET = 2
#: Each op of a stream works in its own 4 KiB region so none depends on another.
STRIDE = 4096

METHOD_TL_DL = (
    "TL engines (TLPair) -> TL flits packed by two DataLinks (DL flits counted) -> "
    "FEC encoded (codewords counted)"
)


def issue_ops(tl: TransactionLayer | Endpoint, ops: Sequence[Op]) -> int:
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
    from ualink_ref.tl import dissect_stream

    counts: Counter[str] = Counter()
    for view in dissect_stream(flits):
        for half in view.halves:
            counts[f"{half.kind}_halves"] += 1
            for f in half.fields:
                counts["nop_sectors" if f.is_nop else f"field:{f.format.name}"] += 1
    return dict(sorted(counts.items()))


def run_tl_pair(ops: Sequence[Op]) -> tuple[list[bytes], list[bytes]]:
    """Run ``ops`` on two TL engines; return the TL flits sent each way (after start-up)."""
    from ualink_ref.stack.tl_pair import TLPair
    from ualink_ref.tl import Status, TransactionLayer

    a, b = TransactionLayer(REQUESTER), TransactionLayer(TARGET)
    pair = TLPair(a, b, record=True)
    pair.run()  # start-up credit grants: not part of any operation
    assert pair.trace is not None
    start = len(pair.trace)
    issued = issue_ops(a, ops)
    done, _ = pair.run()
    if len(done) != issued or any(c.status != Status.OKAY for c in done):
        raise RuntimeError(f"ualink stack: {len(done)}/{issued} requests completed OKAY")
    fwd = [f for _, name, f in pair.trace[start:] if name == "a->b"]
    rev = [f for _, name, f in pair.trace[start:] if name == "b->a"]
    return fwd, rev


def pack_with_datalink(
    fwd: Sequence[bytes], rev: Sequence[bytes]
) -> tuple[list[bytes], list[bytes], int, int]:
    """Send recorded TL flits through two connected DataLinks.

    Returns the DL flits each end sent (acks included) and how many of them
    carried TL bytes. Checks that every TL flit is delivered, in order.
    """
    from ualink_ref.dl import DataLink, TLFlitDelivered

    a, b = DataLink(), DataLink()
    a.send(fwd)
    b.send(rev)
    sent: tuple[list[bytes], list[bytes]] = ([], [])
    got: tuple[list[bytes], list[bytes]] = ([], [])
    slot = 0
    while not (a.idle and b.idle):
        for i, (src, dst) in enumerate(((a, b), (b, a))):
            flit = src.poll(slot)
            if flit is not None:
                sent[i].append(flit)
                for ev in dst.receive(flit, slot):
                    if isinstance(ev, TLFlitDelivered):
                        got[1 - i].append(ev.data)
        slot += 1
        if slot > 100 * (len(fwd) + len(rev) + 10):
            raise RuntimeError("DataLink pair did not go idle")
    if got[1] != list(fwd) or got[0] != list(rev):
        raise RuntimeError("DataLink pair did not deliver the TL flits in order")
    return sent[0], sent[1], a.counters.data_flits_sent, b.counters.data_flits_sent


def fec_encode(flits: Sequence[bytes], fec: str) -> tuple[int, int]:
    """FEC-encode DL flits as the PHY would; return (wire bytes, codewords)."""
    from ualink_ref.phy import encode_flits
    from ualink_ref.phy.flits import MODES

    if not flits:
        return 0, 0
    wire = encode_flits(b"".join(flits), fec)
    return len(wire), len(flits) * MODES[fec].codewords_per_flit


def run(ops: Sequence[Op], *, fec: str, seed: int) -> UalinkCount:
    """Run ``ops`` through the full-stack endpoints when present, else :func:`run_layers`."""
    from ualink_ref.compare import _endpoint_driver

    if _endpoint_driver.endpoint_available():
        return _endpoint_driver.run(ops, fec=fec)
    return run_layers(ops, fec=fec)


def run_layers(ops: Sequence[Op], *, fec: str) -> UalinkCount:
    """TL engines -> DataLink pair -> FEC encoder (see the module docstring)."""
    fwd, rev = run_tl_pair(ops)
    dl_fwd, dl_rev, data_fwd, data_rev = pack_with_datalink(fwd, rev)
    wire_fwd, cw_fwd = fec_encode(dl_fwd, fec)
    wire_rev, cw_rev = fec_encode(dl_rev, fec)
    return UalinkCount(
        ops=len(ops),
        tl_flits_fwd=len(fwd),
        tl_flits_rev=len(rev),
        dl_flits_fwd=len(dl_fwd),
        dl_flits_rev=len(dl_rev),
        fec=fec,
        method=METHOD_TL_DL,
        wire_bytes_fwd=wire_fwd,
        wire_bytes_rev=wire_rev,
        codewords_fwd=cw_fwd,
        codewords_rev=cw_rev,
        ack_only_fwd=len(dl_fwd) - data_fwd,
        ack_only_rev=len(dl_rev) - data_rev,
        breakdown_fwd=tuple(breakdown(fwd).items()),
        breakdown_rev=tuple(breakdown(rev).items()),
    )


