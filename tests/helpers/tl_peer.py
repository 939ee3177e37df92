"""Test helpers: play the TL peer by hand — build TL flits from typed fields, open a TL's
credit books, and read what it sends. Shared by the peer-error tests and the
hostile-peer state machine."""

from __future__ import annotations

from collections.abc import Sequence

from ualink_ref.tl.codec import (
    FlowControl,
    Request,
    Response,
    TLField,
    pack_field,
)
from ualink_ref.tl.credits import NUM_VCS
from ualink_ref.tl.framing import TLDeframer
from ualink_ref.tl.transaction import TransactionLayer


def halves(fields: Sequence[TLField], data: Sequence[bytes] = ()) -> list[bytes]:
    """One control half-flit holding ``fields`` (zero padded), then ``data`` half-flits."""
    control = b"".join(pack_field(f) for f in fields)
    assert len(control) <= 32, "fields do not fit one control half-flit"
    return [control + bytes(32 - len(control)), *data]


def flits(stream: Sequence[bytes]) -> list[bytes]:
    """Half-flits paired into 64-byte TL flits (an odd tail is padded with a NOP half)."""
    items = list(stream)
    if len(items) % 2:
        items.append(bytes(32))
    return [items[i] + items[i + 1] for i in range(0, len(items), 2)]


def grant_all(tl: TransactionLayer, count: int = 63) -> None:
    """Give ``tl`` ``count`` pool credits of each command class (and 4x of data)."""
    tl.receive(flits(halves([FlowControl(count, count, min(255, 4 * count),
                                         min(255, 4 * count))]))[0])


def drain(tl: TransactionLayer, limit: int = 10_000) -> list[bytes]:
    """Every flit ``tl`` wants to send now."""
    out = []
    for _ in range(limit):
        flit = tl.poll()
        if flit is None:
            return out
        out.append(flit)
    raise AssertionError("TL never went quiet")


def requests_in(sent: Sequence[bytes], deframer: TLDeframer | None = None) -> list[Request]:
    """The uncompressed requests in ``sent`` (TL flits), read with the one framing walk."""
    walk = deframer or TLDeframer()
    found = []
    for flit in sent:
        for half in (flit[:32], flit[32:]):
            started, _ = walk.feed_half(half)
            found.extend(p.value for p in started if isinstance(p.value, Request))
    return found


def ok_response(req: Request, beats: int = 0, **changes: int) -> Response:
    """The response an honest completer gives ``req`` (OKAY), with ``changes``."""
    rd_wr = 0 if req.cmd in (0x03, 0x30) else 1
    values = {"vchan": req.vchan, "tag": req.tag, "pool": 1, "len": max(beats - 1, 0),
              "offset": 0, "status": 0, "rd_wr": rd_wr, "last": 1, "src_acc": req.dst_acc,
              "dst_acc": req.src_acc, "spare": 0}
    values.update(changes)
    return Response(**values)


def books_balance(tl: TransactionLayer) -> None:
    """The receive-side credit books: in use + owed + held by the peer = capacity, all >= 0;
    and the wire tags: free + outstanding + quarantined (an ended op whose last piece
    has not come, specs/tl.md rules S7, T4) = all, no tag in two of them."""
    rx = tl.credit_books().receiver
    for source in range(NUM_VCS + 1):
        cap = rx.capacity[source]
        for cls in range(4):
            parts = (rx.occupied[source][cls], rx.owed[source][cls], rx.outstanding[source][cls])
            assert min(parts) >= 0, (source, cls, parts)
            assert sum(parts) == cap[cls], (source, cls, parts, cap)
    tags = tl.tag_book()  # the engine's own books
    assert len(tags.outstanding) == tl.outstanding and len(tags.quarantined) == tl.quarantined
    assert not tags.free & tags.outstanding
    assert not tags.free & tags.quarantined and not tags.quarantined & tags.outstanding
    assert len(tags.free) + tl.outstanding + tl.quarantined == 2048
