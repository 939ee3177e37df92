"""Hypothesis strategies for DL values (needs the ``test`` extra: imports hypothesis).

Not imported by :mod:`ualink_ref.dl`; use ``from ualink_ref.dl.strategies import dl_flits``.
"""

from __future__ import annotations

from hypothesis import strategies as st

from ualink_ref.dl.flit import SEGMENTS, TL_FLIT_BYTES, DLFlit, capacity
from ualink_ref.dl.formats import FlitOp
from ualink_ref.dl.messages import (
    ChannelCommand,
    ChannelNegotiation,
    DeviceId,
    DLMessage,
    NoOp,
    PortNumber,
    TLRateNotification,
    UartData,
)


def dl_messages() -> st.SearchStrategy[DLMessage]:
    """Any DL message this model knows (no ``UnknownMessage``)."""
    return st.one_of(
        st.just(NoOp()),
        st.builds(TLRateNotification, st.integers(0, 255)),
        st.builds(DeviceId, st.booleans(), st.integers(0, 0xFFFF)),
        st.builds(PortNumber, st.booleans(), st.integers(0, 255)),
        st.builds(ChannelNegotiation, st.sampled_from(ChannelCommand)),
        st.builds(UartData, st.binary(max_size=2)),
    )


@st.composite
def dl_flits(draw: st.DrawFn, payload: bool | None = None) -> DLFlit:
    """Any valid :class:`DLFlit`: every op, full / partial / tail-only / empty TL bytes."""
    messages = tuple(draw(st.lists(st.none() | st.integers(0, 0xFFFFFFFF),
                                   min_size=SEGMENTS, max_size=SEGMENTS)))
    cap = capacity(messages)
    has_tl = draw(st.booleans()) if payload is None else payload
    if has_tl:
        first = 4 * draw(st.integers(0, 15))
        whole = (cap - first) // TL_FLIT_BYTES  # TL flits that fit after the first boundary
        length = draw(st.sampled_from([cap, first + TL_FLIT_BYTES * draw(st.integers(0, whole))]))
        if length == 0:
            length = cap
        tl = draw(st.binary(min_size=length, max_size=length))
        op = draw(st.sampled_from(FlitOp))
    else:
        first, tl = 0, b""
        op = draw(st.sampled_from([FlitOp.EXPLICIT, FlitOp.ACK, FlitOp.REPLAY_REQUEST]))
    if op.is_command:
        low = 1 if op is FlitOp.REPLAY_REQUEST else 0
        return DLFlit(op, ack_req_seq=draw(st.integers(low, 511)),
                      flit_seq_lo=draw(st.integers(0, 7)) if tl else 0, tl=tl,
                      first_tl_start=first, messages=messages)
    return DLFlit(op, flit_seq=draw(st.integers(1, 511)) if tl else 0, tl=tl,
                  first_tl_start=first, messages=messages)


__all__ = ["dl_flits", "dl_messages"]
