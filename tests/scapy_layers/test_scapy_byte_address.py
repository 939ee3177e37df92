"""Byte addresses in the Scapy layers: the ``byte_addr`` / ``byte_addr_lo`` aliases of the
bit-exact word-address fields ``addr`` (address bits 56..2) and ``addr_lo`` (23..2).

The codec's typed values (:mod:`ualink_ref.tl.codec`) take byte addresses and are an
independent encoder: ``TlRequest(byte_addr=A)`` must build what ``pack_field`` builds for
``Request(addr=A)`` (``specs/capture.md``, "Byte addresses").
"""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("scapy", reason="scapy is not installed (the `scapy` extra)")

from scapy.packet import Packet, fuzz, raw
from scapy.utils import rdpcap

import ualink_ref.scapy_layers as sl
from ualink_ref.capture.dissect import dissect_records
from ualink_ref.capture.format import read_capture
from ualink_ref.errors import EncodeError
from ualink_ref.scapy.sue import SueAddr
from ualink_ref.tl import codec as C
from ualink_ref.tl.fields import FType

ROOT = Path(__file__).resolve().parents[2]
REQUEST = sl.TL_FIELD_LAYERS[FType.REQUEST]
COMPRESSED = sl.TL_FIELD_LAYERS[FType.COMPRESSED_REQUEST]
TOP = (1 << 57) - 4  # the highest byte address addr (55 bits, bits 56..2) holds


def _request(addr: int) -> bytes:
    return C.pack_field(C.Request(cmd=3, vchan=1, asi=0, tag=7, pool=0, attr=0, len=15,
                                  metadata=0, addr=addr, src_acc=2, dst_acc=5, cload=0,
                                  cway=0, numbeats=0))


@pytest.mark.parametrize("byte_address", [0, 4, 0x4000, 0x10000, 0x123_4567_89AB_CDEC, TOP])
def test_byte_addr_builds_what_the_codec_builds_for_that_byte_address(byte_address: int) -> None:
    fields = {"cmd": 3, "vchan": 1, "tag": 7, "len": 15, "src_acc": 2, "dst_acc": 5}
    for cls in (REQUEST, sl.UPLIRequest):
        by_alias = cls(byte_addr=byte_address, **fields)
        assert raw(by_alias) == _request(byte_address)
        # the field stays bit-exact: addr= takes the stored value, address >> 2
        assert raw(cls(addr=byte_address >> 2, **fields)) == raw(by_alias)
        assert by_alias.addr == byte_address >> 2 and by_alias.byte_addr == byte_address
        assert cls(raw(by_alias)).byte_addr == byte_address  # dissected, read back


def test_byte_addr_lo_builds_what_the_codec_builds() -> None:
    want = C.pack_field(C.CompressedRequest(cmd=0x29, vchan=0, tag=3, pool=0, attr=0, len=63,
                                            cway=2, numbeats=3, addr_lo=0xABCDEC))
    pkt = COMPRESSED(cmd=0x29, tag=3, len=63, cway=2, numbeats=3, byte_addr_lo=0xABCDEC)
    assert raw(pkt) == want and pkt.addr_lo == 0xABCDEC >> 2
    assert COMPRESSED(want).byte_addr_lo == 0xABCDEC


def test_the_alias_reads_and_sets_the_field() -> None:
    pkt = REQUEST()
    pkt.byte_addr = 0x4000
    assert pkt.addr == 0x1000
    pkt.addr = 0x20
    assert pkt.byte_addr == 0x80
    assert pkt.copy().byte_addr == 0x80


def test_reprs_show_the_stored_value_and_the_byte_address() -> None:
    pkt = REQUEST(cmd=3, addr=0x1000)
    assert "addr=0x1000 (byte_addr=0x4000)" in repr(pkt)
    assert "addr=0x1000 (byte_addr=0x4000)" in pkt.summary()
    assert "addr      = 0x1000 (byte_addr=0x4000)" in pkt.show(dump=True)
    assert "addr_lo=0x10 (byte_addr_lo=0x40)" in repr(COMPRESSED(addr_lo=0x10))


@pytest.mark.parametrize("bad", [2, 0x4001, -4, TOP + 4, 1 << 60, "0x4000", 4.0, True, None])
def test_a_byte_address_the_field_cannot_hold_is_refused(bad: object) -> None:
    with pytest.raises(EncodeError, match="byte_addr"):
        REQUEST(byte_addr=bad)
    pkt = REQUEST(addr=5)
    with pytest.raises(EncodeError, match="byte_addr"):
        pkt.byte_addr = bad
    assert pkt.addr == 5  # unchanged
    with pytest.raises(EncodeError, match="byte_addr_lo"):
        COMPRESSED(byte_addr_lo=bad if bad != TOP + 4 else 1 << 24)


def test_giving_both_names_is_refused() -> None:
    with pytest.raises(EncodeError, match="not both"):
        REQUEST(addr=1, byte_addr=4)


def test_the_alias_is_not_a_field() -> None:
    # Building, fuzz() and the field list are those of the declaration alone.
    for cls in (REQUEST, COMPRESSED, sl.UPLIRequest):
        names = [f.name for f in cls.fields_desc]
        assert "byte_addr" not in names and "byte_addr_lo" not in names
    fuzzed: Packet = fuzz(REQUEST())
    assert len(raw(fuzzed)) == 16


def test_a_byte_address_of_another_protocol_is_not_scaled() -> None:
    # SUE's addr is a 64-bit byte address: shown and built as it is.
    pkt = SueAddr(addr=0x1000)
    assert "addr=4096" in repr(pkt) and raw(pkt) == (0x1000).to_bytes(8, "big")
    assert not hasattr(pkt, "byte_addr")


def test_dissected_requests_show_the_byte_addresses_dissect_shows() -> None:
    path = ROOT / "vectors" / "captures" / "replay.pcap"
    model = [op.field.addr for f in dissect_records(read_capture(path)) for op in f.ops
             if isinstance(op.field, C.Request)]
    layers = [req for _rec, _direction, req in sl.list_requests(rdpcap(str(path)))
              if req.getfieldval("ftype") == FType.REQUEST]
    assert model and [req.byte_addr for req in layers] == model
    assert f"(byte_addr={model[0]:#x})" in repr(layers[0])
