"""The TL view dissects each TL flit on first read; what it shows is what eager dissection
showed, and its framing count agrees with the TLFlit layers' own rule."""

from __future__ import annotations

import pickle
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

pytest.importorskip("scapy")

from scapy.utils import rdpcap

from ualink_ref import scapy_layers as sl
from ualink_ref.scapy.tl import TLControlHalf, control_half_data_halves, pending_after, tl_flit
from ualink_ref.scapy.tlview import WHOLE, DLTLSpan, UndissectedTLFlit
from ualink_ref.testing.strategies import tl_stream_halves

CAPTURES = Path(__file__).resolve().parents[2] / "vectors" / "captures"


def _pending_after_layers(flit: Any, pending: int) -> int:
    """The oracle: data half-flits owed after a TL flit, read from its built layers (how the
    view counted before the TL flits became lazy)."""
    for half in flit.getfieldval("halves"):
        pending = half.data_halves() if isinstance(half, TLControlHalf) else max(0, pending - 1)
    return pending


#: Half-flits for TL streams (valid control halves, odd sectors, arbitrary bytes).
HALVES = tl_stream_halves()


@given(HALVES)
def test_control_half_count_matches_the_layer(half: bytes) -> None:
    assert control_half_data_halves(half) == TLControlHalf(half).data_halves()


@given(HALVES, HALVES, st.integers(0, 40))
def test_pending_after_matches_the_layers(first: bytes, second: bytes, pending: int) -> None:
    data = first + second
    assert pending_after(data, pending) == _pending_after_layers(tl_flit(data, pending), pending)


def _eager(span: Any, stored: UndissectedTLFlit) -> Any:
    """The span as the view built it before: the TL flit dissected at once."""
    return DLTLSpan(kind=WHOLE, offset=span.offset, length=span.length,
                    pending_before=span.pending_before,
                    flit=tl_flit(stored.data, stored.pending))


@pytest.mark.parametrize("name", ["clean.pcap", "credits.pcap"])
def test_lazy_tl_flits_read_like_eager_ones(name: str) -> None:
    """Every way Scapy reads a field (repr, build, show, copy, compare, pickle, attribute)
    gives what the eagerly dissected span gave, each tried on a span still undissected."""
    whole = owed = 0
    for pkt in rdpcap(str(CAPTURES / name)):
        for span in pkt.tl_flits:
            if span.kind != WHOLE:
                continue
            stored = span.fields["flit"]
            assert isinstance(stored, UndissectedTLFlit)  # reading the view dissected nothing
            assert stored.pending == span.pending_before
            eager = _eager(span, stored)
            assert repr(span.copy()) == repr(eager)
            assert bytes(span.copy()) == bytes(eager)
            assert span.copy().show(dump=True) == eager.show(dump=True)
            # (a pickled span comes back dissected from its bytes, the lazy one as the eager)
            assert pickle.loads(pickle.dumps(span.copy())).show(dump=True) == \
                pickle.loads(pickle.dumps(eager)).show(dump=True)
            assert span.copy() == eager
            flit = span.flit  # attribute access dissects and keeps the TL flit
            assert isinstance(flit, sl.TLFlit) and span.fields["flit"] is flit
            assert flit.parent is span and span.flit is flit
            assert bytes(flit) == stored.data and flit.show(dump=True) == \
                eager.getfieldval("flit").show(dump=True)
            whole += 1
            owed += stored.pending > 0
    assert whole > 0 and owed > 0  # both cases seen: nothing owed, and data owed before
