"""The Scapy layer generator builds and dissects exactly what the codec does."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ualink_ref.bitfields import BitFormat, Field, enum_of

pytest.importorskip("scapy")

from ualink_ref.scapy_layers import packet_class

FMT = BitFormat(
    "demo_header",
    [
        Field("op", 3, "operation", "test", enum=enum_of("a", "b", "c")),
        Field("flag", 1, "flag", "test"),
        Field("rsvd", 3, "", "test", reserved=True),
        Field("seq", 9, "sequence", "test"),
        Field("tail", 16, "tail", "test"),
    ],
)
Demo = packet_class(FMT)


@given(op=st.integers(0, 7), flag=st.integers(0, 1), seq=st.integers(0, 511),
       tail=st.integers(0, 0xFFFF))
def test_scapy_matches_codec(op: int, flag: int, seq: int, tail: int) -> None:
    values = {"op": op, "flag": flag, "seq": seq, "tail": tail}
    wire = FMT.pack(values)
    assert bytes(Demo(**values)) == wire
    dissected = Demo(wire)
    assert {name: dissected.getfieldval(name) for name in values} == values


def test_enum_names_shown() -> None:
    shown = Demo(op=2).show(dump=True)
    assert "op        = c" in shown
    assert Demo.__name__ == "DemoHeader"


def test_roce_extension_headers_exported_with_their_sizes() -> None:
    # RETH 16, AtomicETH 28, AtomicAckETH 8 bytes (InfiniBand Architecture Spec vol. 1, 9.3.3).
    from ualink_ref.scapy_layers import RETH, AtomicAckETH, AtomicETH

    assert (len(bytes(RETH())), len(bytes(AtomicETH())), len(bytes(AtomicAckETH()))) == (16, 28, 8)
