"""Every Scapy layer builds the codec's bytes and dissects them to the codec's values."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import given

pytest.importorskip("scapy")

from scapy.utils import rdpcap

from ualink_ref import scapy_layers as sl
from ualink_ref.bitfields import BitFormat
from ualink_ref.capture import PSEUDO_HEADER, CaptureRecord, write_capture
from ualink_ref.strategies import format_values


def _fields(pkt: Any, fmt: BitFormat) -> dict[str, int]:
    return {name: pkt.getfieldval(name) for name in fmt.field_names}


@given(format_values(PSEUDO_HEADER))
def test_capture_header_layer(values: dict[str, int]) -> None:
    wire = PSEUDO_HEADER.pack(values)
    assert bytes(sl.UALinkCapture(**values)) == wire
    assert _fields(sl.UALinkCapture(wire), PSEUDO_HEADER) == values


def test_rdpcap_dissects_link_type_147(tmp_path: Path) -> None:
    rec = CaptureRecord(bytes(680), kind="fec_codewords", direction="b_to_a", slot=9,
                        symbols_corrected=4, uncorrectable=True)
    write_capture(tmp_path / "c.pcap", [rec])
    (pkt,) = rdpcap(str(tmp_path / "c.pcap"))
    assert isinstance(pkt, sl.UALinkCapture)
    assert pkt.slot == 9 and pkt.uncorrectable == 1 and pkt.symbols_corrected == 4
    shown = pkt.show(dump=True)
    assert "direction = b_to_a" in shown and "record_kind= fec_codewords" in shown
