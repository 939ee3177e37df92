"""One operation of the originator, from issue to completion (``specs/tl.md`` rules 1, 2).

The :class:`~ualink_ref.tl.originator.Originator` makes an :class:`Op` when a
caller issues it and holds it while it is queued; the
:class:`~ualink_ref.tl.responses.ResponseTracker` holds it, under its wire tag, from
when its request is sent until its answer ends it.
"""

from __future__ import annotations

from typing import NamedTuple

from ualink_ref.tl.records import keyword_constructor


class Op(NamedTuple):
    """A queued or outstanding request (originator side): what sending it and checking
    its answer need. A value: its data half-flits stay with it until it ends."""

    handle: int
    cmd: int
    dst: int
    addr: int
    nbytes: int  # bytes returned on completion (read length / atomic size)
    len_field: int
    numbeats: int
    halves: list[bytes]  # data half-flits to send
    data_credits: int
    attr: int
    vc: int
    metadata: int
    # Data beats an OKAY answer carries (0 for a write-type operation): known when
    # queued, so checking each response against its request needs no arithmetic.
    rsp_beats: int


#: ``Op(**fields)`` at the cost of a plain call (:mod:`~ualink_ref.tl.records`).
new_op = keyword_constructor(Op)

__all__ = ["Op", "new_op"]
