"""The Scapy layers build: defaults give valid bytes, fuzz() gives well-shaped frames.

Every layer built with Scapy's usual defaults is accepted by the model's decoders;
``fuzz()`` of every layer gives frames of the right size whose random fields the
model's decoders either accept or reject with a ``UALinkError`` (nothing else);
built packets written with ``wrpcap`` read back with the model and ``dissect``.
"""

from __future__ import annotations

import contextlib
import io
import random
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("scapy", reason="scapy is not installed (the `scapy` extra)")

from scapy.all import fuzz, raw, rdpcap, wrpcap
from scapy.packet import Packet

import ualink_ref.scapy_layers as sl
from ualink_ref.capture.dissect import dissect_records
from ualink_ref.capture.format import CaptureRecord, read_capture
from ualink_ref.cli import main
from ualink_ref.dl.flit import SEGMENT_LENGTHS, DLFlit
from ualink_ref.dl.formats import COMMAND_HEADER, EXPLICIT_HEADER, SEGMENT_HEADER, FlitOp
from ualink_ref.dl.messages import decode_message
from ualink_ref.errors import UALinkError
from ualink_ref.tl.fields import decode_field, field_sectors
from ualink_ref.tl.flit import decode_control_half, dissect


def test_default_record_is_a_valid_656_byte_record_whose_crc_checks() -> None:
    data = raw(sl.UALinkCapture() / sl.UALinkDLFlit())
    assert len(data) == 656
    rec = CaptureRecord.decode(data)
    assert rec.kind == "dl_flit" and len(rec.data) == 640
    # zlib is independent of the model's CRC (crcmod); stored big-endian at 636.
    assert int.from_bytes(rec.data[636:], "big") == zlib.crc32(rec.data[:636])
    assert DLFlit.decode(rec.data) == DLFlit(FlitOp.EXPLICIT)
    assert sl.UALinkCapture(data)[sl.UALinkDLFlit].crc_valid == 1


def test_payload_length_computed_unless_given() -> None:
    assert sl.UALinkCapture(raw(sl.UALinkCapture() / b"xyz")).payload_length == 3
    assert sl.UALinkCapture(raw(sl.UALinkCapture(payload_length=7) / b"xyz")).payload_length == 7


def test_built_flit_equals_the_codec() -> None:
    built = sl.UALinkDLFlit(header=sl.DLCommandHeader(op=2, ack_req_seq=5))
    assert raw(built) == DLFlit(FlitOp.ACK, ack_req_seq=5).encode()
    given = raw(sl.UALinkDLFlit(crc=0x12345678))
    assert given[636:] == bytes.fromhex("12345678")  # a given CRC is kept


def test_segment_bodies_padded_to_their_length() -> None:
    for cls, length in zip(sl.DL_SEGMENT_LAYERS, SEGMENT_LENGTHS, strict=True):
        assert len(raw(cls())) == 1 + length
        assert len(raw(cls(msg=1, body=b"\x01"))) == 1 + length


def test_wrpcap_of_built_packets_reads_back(tmp_path: Path) -> None:
    packets = [sl.UALinkCapture(slot=i, link_direction=i % 2)
               / sl.UALinkDLFlit(header=sl.DLCommandHeader(op=2, ack_req_seq=i))
               for i in range(3)]
    path = tmp_path / "built.pcap"
    wrpcap(str(path), packets)
    records = read_capture(path)
    assert [r.slot for r in records] == [0, 1, 2]
    assert [r.direction for r in records] == ["a_to_b", "b_to_a", "a_to_b"]
    assert [DLFlit.decode(r.data).ack_req_seq for r in records] == [0, 1, 2]
    assert all(f.flit is not None for f in dissect_records(records))
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["dissect", str(path)]) == 0
    assert "CRC errors 0, malformed 0" in out.getvalue() and "ack=2" in out.getvalue()
    assert [p.slot for p in rdpcap(str(path))] == [0, 1, 2]


def test_no_field_name_is_a_scapy_attribute() -> None:
    for cls in _all_layers():
        for field in cls.fields_desc:
            assert not hasattr(Packet, field.name), (cls.__name__, field.name)
            assert not field.name.endswith("_"), (cls.__name__, field.name)
    assert sl.UALinkCapture(link_direction=1).link_direction == 1


def test_addresses_shown_as_stored_and_as_hex_byte_addresses() -> None:
    req = sl.UPLIRequest(cmd=3, addr=0x400)
    assert "addr      = 0x400 (byte_addr=0x1000)" in req.show(dump=True)
    assert "addr=0x400 (byte_addr=0x1000)" in req.summary()
    creq = sl.TL_FIELD_LAYERS[3](addr_lo=0x10)
    assert "0x10 (byte_addr_lo=0x40)" in creq.show(dump=True)


def _all_layers() -> list[type[Packet]]:
    return [sl.UALinkCapture, sl.UALinkDLFlit, sl.DLExplicitHeader, sl.DLCommandHeader,
            *sl.DL_SEGMENT_LAYERS, sl.DLMessage, *sl.DL_MESSAGE_LAYERS.values(),
            *sl.TL_FIELD_LAYERS.values(), sl.TLControlHalf, sl.TLDataHalf, sl.TLFlit,
            sl.TLUnknownSector, sl.UPLIRequest, sl.UPLIResponse, sl.RETH, sl.AtomicETH,
            sl.AtomicAckETH, sl.AtomicAETH]


@pytest.mark.parametrize("cls", _all_layers(), ids=lambda c: c.__name__)
def test_summary_is_meaningful_on_every_layer(cls: type[Packet]) -> None:
    pkt = cls()
    assert pkt.mysummary()  # not Scapy's empty default
    nested = sl.TLFlit(raw(sl.TLFlit(halves=[sl.TLControlHalf(ctrl_fields=[
        sl.TL_FIELD_LAYERS[2](tag=9, rd_wr=1)])])))
    assert "tag=9" in nested.summary()


# -- fuzz() of every layer, fed to the model's decoders ---------------------------

def _capture(data: bytes) -> None:
    rec = CaptureRecord.decode(data)
    dissect_records([rec])
    DLFlit.decode(rec.data)


def _segment(length: int) -> Callable[[bytes], None]:
    def check(data: bytes) -> None:
        assert len(data) == 1 + length
        if SEGMENT_HEADER.unpack(data[:1])["msg"]:
            decode_message(data[1:5])
    return check


def _sized(size: int, decoder: Callable[[bytes], Any]) -> Callable[[bytes], None]:
    def check(data: bytes) -> None:
        assert len(data) == size
        decoder(data)
    return check


def _fuzz_cases() -> list[tuple[str, Callable[[], Packet], Callable[[bytes], None], int]]:
    cases: list[tuple[str, Callable[[], Packet], Callable[[bytes], None], int]] = [
        ("capture+flit", lambda: fuzz(sl.UALinkCapture() / sl.UALinkDLFlit()),
         lambda d: _capture(d) if len(d) == 656 else pytest.fail(f"{len(d)} bytes"), 2000),
        ("record/fuzzed flit", lambda: sl.UALinkCapture() / fuzz(sl.UALinkDLFlit()),
         _sized(656, _capture), 2000),
        ("flit", lambda: fuzz(sl.UALinkDLFlit()), _sized(640, DLFlit.decode), 1000),
        ("explicit", lambda: fuzz(sl.DLExplicitHeader()), _sized(3, EXPLICIT_HEADER.unpack),
         300),
        ("command", lambda: fuzz(sl.DLCommandHeader()), _sized(3, COMMAND_HEADER.unpack), 300),
        ("tl flit", lambda: fuzz(sl.TLFlit()), _sized(64, dissect), 1000),
        ("control half", lambda: fuzz(sl.TLControlHalf()), _sized(32, decode_control_half),
         500),
        ("data half", lambda: fuzz(sl.TLDataHalf()), _sized(32, bytes), 100),
        ("unknown sector", lambda: fuzz(sl.TLUnknownSector()), _sized(4, field_sectors), 100),
        ("upli request", lambda: fuzz(sl.UPLIRequest()),
         lambda d: decode_field(d[:16]), 300),
        ("upli response", lambda: fuzz(sl.UPLIResponse()),
         lambda d: decode_field(d[:8]), 300),
        ("dl message", lambda: fuzz(sl.DLMessage()), _sized(4, decode_message), 300),
    ]
    for i, (cls, length) in enumerate(zip(sl.DL_SEGMENT_LAYERS, SEGMENT_LENGTHS, strict=True)):
        cases.append((f"segment{i}", lambda c=cls: fuzz(c()), _segment(length), 200))
    for key, cls in sl.DL_MESSAGE_LAYERS.items():
        cases.append((f"message{key}", lambda c=cls: fuzz(c()), _sized(4, decode_message), 100))
    for ftype, cls in sl.TL_FIELD_LAYERS.items():
        size = len(raw(cls()))
        cases.append((f"tl field {ftype}", lambda c=cls: fuzz(c()), _sized(size, decode_field),
                      200))
    return cases


@pytest.mark.parametrize(("name", "make", "check", "count"), _fuzz_cases(),
                         ids=[c[0] for c in _fuzz_cases()])
def test_fuzz_feeds_the_decoders_only_ualink_errors(
        name: str, make: Callable[[], Packet], check: Callable[[bytes], None],
        count: int) -> None:
    random.seed(f"fuzz {name}")  # Scapy's random values come from the random module
    accepted = rejected = 0
    seen = set()
    for _ in range(count):
        data = raw(make())
        seen.add(data)
        try:
            check(data)
        except UALinkError:
            rejected += 1
        else:
            accepted += 1
    assert accepted + rejected == count
    assert len(seen) > count // 2  # the fields really are randomised


def test_default_parts_are_per_packet() -> None:
    first = sl.UALinkDLFlit()
    first.header.flit_seq = 5
    assert sl.UALinkDLFlit().header.flit_seq == 0
    assert raw(first)[:3] != raw(sl.UALinkDLFlit())[:3]
    copied = first.copy()
    copied.header.flit_seq = 7
    assert first.header.flit_seq == 5
