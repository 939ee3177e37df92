"""Drives the ualink_ref stack for :func:`ualink_side.measure_ualink`.

Transaction-layer measurement: two :class:`~ualink_ref.tl.TransactionLayer`
engines (requester, target) connected flit by flit with
:class:`~ualink_ref.tl.TLPair`, recording every 64-byte TL flit each way.
The link's start-up credit grants are exchanged first and not counted. The
recorded TL flits are then dissected field by field (the breakdown in the
report) and packed into DL flits: ``ceil(TL bytes / 628)`` per direction,
the whole 628-byte DL payload carrying TL bytes back to back.
"""

from __future__ import annotations

import importlib
import importlib.util
from collections import Counter
from collections.abc import Sequence
from typing import Any

from ualink_ref.compare.mapping import Op
from ualink_ref.compare.ualink_side import (
    DL_PAYLOAD_BYTES,
    MAX_REQUEST,
    TL_FLIT_BYTES,
    UalinkCount,
)

REQUESTER = 1
TARGET = 2
#: Each op of a stream works in its own 4 KiB region so none depends on another.
STRIDE = 4096

METHOD_TL = "TL engines (TLPair), DL flits = ceil(TL bytes / 628)"
METHOD_TL_DL = "TL engines (TLPair), TL flits packed by two DataLinks (DL flits counted)"


def _issue(tl: Any, ops: Sequence[Op]) -> int:
    """Queue every op on the requester; return how many UALink requests that made."""
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
    dissect_stream = _tl().dissect_stream
    counts: Counter[str] = Counter()
    for view in dissect_stream(flits):
        for half in view.halves:
            counts[f"{half.kind}_halves"] += 1
            for f in half.fields:
                counts["nop_sectors" if f.is_nop else f"field:{f.format.name}"] += 1
    return dict(sorted(counts.items()))


def pack_with_datalink(fwd: Sequence[bytes], rev: Sequence[bytes]) -> tuple[int, int, int, int]:
    """Send recorded TL flits through two connected DataLinks; count the DL flits each way.

    Returns ``(dl_fwd, dl_rev, data_fwd, data_rev)``: every DL flit each end
    sent (acks included) and those of them that carried TL bytes. All TL flits
    are queued at once, so this is the DL's tightest packing; checks that
    every TL flit is delivered, in order.
    """
    dl = importlib.import_module("ualink_ref.dl")
    a, b = dl.DataLink(), dl.DataLink()
    a.send(fwd)
    b.send(rev)
    sent = [0, 0]
    got: tuple[list[bytes], list[bytes]] = ([], [])
    slot = 0
    while not (a.idle and b.idle):
        for i, (src, dst) in enumerate(((a, b), (b, a))):
            flit = src.poll(slot)
            if flit is not None:
                sent[i] += 1
                for ev in dst.receive(flit, slot):
                    if isinstance(ev, dl.TLFlitDelivered):
                        got[1 - i].append(ev.data)
        slot += 1
        if slot > 100 * (len(fwd) + len(rev) + 10):
            raise RuntimeError("DataLink pair did not go idle")
    if got[1] != list(fwd) or got[0] != list(rev):
        raise RuntimeError("DataLink pair did not deliver the TL flits in order")
    ca, cb = a.counters, b.counters
    return sent[0], sent[1], ca.data_flits_sent, cb.data_flits_sent


def _has_dl() -> bool:
    return importlib.util.find_spec("ualink_ref.dl") is not None


def run_tl(ops: Sequence[Op], *, fec: str) -> tuple[UalinkCount, list[bytes], list[bytes]]:
    """Measure ``ops`` with two TL engines; also return the TL flits each way."""
    tl = _tl()
    Status, TLPair, TransactionLayer = tl.Status, tl.TLPair, tl.TransactionLayer
    a, b = TransactionLayer(REQUESTER), TransactionLayer(TARGET)
    pair = TLPair(a, b, record=True)
    pair.run()  # start-up credit grants: not part of any operation
    assert pair.trace is not None
    start = len(pair.trace)
    issued = _issue(a, ops)
    done, _ = pair.run()
    if len(done) != issued or any(c.status != Status.OKAY for c in done):
        raise RuntimeError(f"ualink stack: {len(done)}/{issued} requests completed OKAY")
    fwd = [f for _, name, f in pair.trace[start:] if name == "a->b"]
    rev = [f for _, name, f in pair.trace[start:] if name == "b->a"]
    ack_fwd = ack_rev = 0
    if _has_dl():
        dl_fwd, dl_rev, data_fwd, data_rev = pack_with_datalink(fwd, rev)
        ack_fwd, ack_rev = dl_fwd - data_fwd, dl_rev - data_rev
        method = METHOD_TL_DL
    else:
        dl_fwd = -(-len(fwd) * TL_FLIT_BYTES // DL_PAYLOAD_BYTES)
        dl_rev = -(-len(rev) * TL_FLIT_BYTES // DL_PAYLOAD_BYTES)
        method = METHOD_TL
    count = UalinkCount(
        ops=len(ops),
        tl_flits_fwd=len(fwd),
        tl_flits_rev=len(rev),
        dl_flits_fwd=dl_fwd,
        dl_flits_rev=dl_rev,
        fec=fec,
        method=method,
        ack_only_fwd=ack_fwd,
        ack_only_rev=ack_rev,
        breakdown_fwd=tuple(breakdown(fwd).items()),
        breakdown_rev=tuple(breakdown(rev).items()),
    )
    return count, fwd, rev


def run(ops: Sequence[Op], *, fec: str, seed: int) -> UalinkCount:
    """Run ``ops`` and count what leaves each side (``seed`` is for the full-stack path)."""
    return run_tl(ops, fec=fec)[0]


def _tl() -> Any:
    # Imported by name until the TL lands on this branch (keeps mypy clean meanwhile).
    try:
        return importlib.import_module("ualink_ref.tl")
    except ModuleNotFoundError as exc:
        if exc.name != "ualink_ref.tl":
            raise
        raise RuntimeError("the ualink_ref transaction layer is not available") from exc
