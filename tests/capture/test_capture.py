"""Capture pseudo-header and the pcap / pcapng codecs."""

from __future__ import annotations

import contextlib
import struct
import tracemalloc
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ualink_ref.capture import format as capture
from ualink_ref.capture.format import (
    PSEUDO_HEADER,
    CaptureFormatError,
    CaptureRecord,
    RawPacket,
    decode_capture,
    decode_capture_file,
    encode_capture,
    encode_pcap,
    read_capture,
    write_capture,
)
from ualink_ref.errors import DecodeError, EncodeError, FieldRangeError, ReservedBitsError
from ualink_ref.testing.strategies import (
    capture_records,
    format_bytes,
    mutations,
    reserved_bits_set,
    unknown_enum_values,
)

ROOT = Path(__file__).resolve().parents[2]

# Hand-derived (specs/capture.md, "Example"): kind dl_flit (0), direction b_to_a (1),
# fec kp4 (1) -> byte 0b0000_01_01; port 2; lane 0; interleave 1 / uncorrectable 0 ->
# 0b0001_0_000; 3 symbols corrected; 640 = 0x0280 payload bytes; slot 1000 = 0x3e8.
EXAMPLE_HEADER = bytes.fromhex("55011005 02001000 00030280 000003e8")


def _example() -> CaptureRecord:
    return CaptureRecord(bytes(640), direction="b_to_a", fec_mode="kp4", port=2,
                         symbols_corrected=3, slot=1000, timestamp_ns=25_600)


def test_hand_derived_example_header() -> None:
    assert _example().encode()[:16] == EXAMPLE_HEADER
    assert CaptureRecord.decode(EXAMPLE_HEADER + bytes(640), 25_600) == _example()


def test_spec_shows_the_declared_table_and_example() -> None:
    spec = (ROOT / "specs" / "capture.md").read_text()
    assert PSEUDO_HEADER.markdown_table() in spec
    assert "55 01 10 05 02 00 10 00 00 03 02 80 00 00 03 e8" in spec


@given(st.lists(capture_records(), max_size=4), st.sampled_from(["pcap", "pcapng"]))
def test_roundtrip(records: list[CaptureRecord], fmt: str) -> None:
    assert decode_capture(encode_capture(records, fmt=fmt)) == records


def test_write_and_read_files(tmp_path: Path) -> None:
    recs = [_example(), CaptureRecord(bytes(1360), kind="fec_codewords", fec_mode="ll")]
    for name in ("a.pcap", "a.pcapng"):
        write_capture(tmp_path / name, recs)
        assert read_capture(tmp_path / name) == recs
    assert (tmp_path / "a.pcapng").read_bytes()[:4] == b"\x0a\x0d\x0d\x0a"


def test_scapy_reads_our_files(tmp_path: Path) -> None:
    """Independent reader: Scapy's rdpcap sees our timestamps, link type and bytes."""
    pytest.importorskip("scapy")
    from scapy.utils import PcapNgReader, PcapReader

    flit = bytes(range(256)) * 2 + bytes(128)
    recs = [_example(), CaptureRecord(flit, timestamp_ns=3 * 10**9 + 7)]
    for name, reader in (("s.pcap", PcapReader), ("s.pcapng", PcapNgReader)):
        write_capture(tmp_path / name, recs)
        with reader(str(tmp_path / name)) as rd:
            pkts = list(rd)
        assert [bytes(p) for p in pkts] == [r.encode() for r in recs]
        assert [int(p.time * 10**9 + 0.5) for p in pkts] == [25_600, 3 * 10**9 + 7]
        if reader is PcapReader:
            assert rd.linktype == 147


def test_we_read_scapy_files(tmp_path: Path) -> None:
    """Independent writer: files Scapy writes (microsecond pcap, pcapng) parse here."""
    pytest.importorskip("scapy")
    from scapy.packet import Raw
    from scapy.utils import PcapNgWriter, wrpcap

    body = _example().encode()
    pkt = Raw(body)
    pkt.time = 12.000034
    wrpcap(str(tmp_path / "w.pcap"), [pkt], linktype=147)
    with PcapNgWriter(str(tmp_path / "w.pcapng")) as w:
        w.linktype = 147
        w.write(pkt)
    for name in ("w.pcap", "w.pcapng"):
        (raw,) = decode_capture_file((tmp_path / name).read_bytes())
        assert raw.data == body and raw.linktype == 147
        assert abs(raw.timestamp_ns - 12_000_034_000) < 1_000
    assert read_capture(tmp_path / "w.pcap")[0].slot == 1000


def test_big_endian_pcap() -> None:
    body = _example().encode()
    data = struct.pack(">IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 147)
    data += struct.pack(">IIII", 1, 5, len(body), len(body)) + body
    (raw,) = decode_capture_file(data)
    assert raw.timestamp_ns == 1_000_005_000 and raw.data == body


@given(st.binary(max_size=200))
def test_arbitrary_bytes_only_decode_error(data: bytes) -> None:
    for decoder in (decode_capture_file, decode_capture, CaptureRecord.decode):
        with contextlib.suppress(DecodeError):
            decoder(data)
    # still usable: pure functions, but check a valid input decodes right after
    assert decode_capture(encode_capture([_example()])) == [_example()]


_VALID_FILE = encode_capture([_example(), _example()])
_VALID_NG = encode_capture([_example()], fmt="pcapng")


@given(mutations(st.sampled_from([_VALID_FILE, _VALID_NG]), max_flips=4))
def test_mutated_files_only_decode_error(m: object) -> None:
    from ualink_ref.testing.strategies import Mutation

    assert isinstance(m, Mutation)
    with contextlib.suppress(DecodeError):
        decode_capture(m.data)


@given(reserved_bits_set(PSEUDO_HEADER))
def test_reserved_bits_rejected(header: bytes) -> None:
    with pytest.raises(ReservedBitsError):
        PSEUDO_HEADER.unpack(header)


@given(unknown_enum_values(PSEUDO_HEADER))
def test_unknown_enum_rejected(header: bytes) -> None:
    with pytest.raises(FieldRangeError):
        PSEUDO_HEADER.unpack(header)


@given(format_bytes(PSEUDO_HEADER), st.binary(max_size=700))
def test_payload_length_is_checked(header: bytes, payload: bytes) -> None:
    values = PSEUDO_HEADER.unpack(header)
    try:
        rec = CaptureRecord.decode(header + payload)
    except DecodeError:
        assert values["payload_length"] != len(payload) or values["header_length"] != 16 or (
            values["record_kind"] == 0 and len(payload) != 640) or values["record_kind"] == 1 or (
            values["interleave"] not in (1, 2, 4))
    else:
        assert len(rec.data) == values["payload_length"]


@pytest.mark.parametrize(
    "data",
    [
        # classic pcap record header claiming 4 GiB
        encode_pcap([]) + struct.pack("<IIII", 0, 0, 0xFFFFFFFF, 0xFFFFFFFF),
        # pcapng block claiming a huge length
        _VALID_NG[:28] + struct.pack("<III", 6, 0xFFFFFFF0, 0),
    ],
)
def test_huge_length_fields_rejected_without_allocating(data: bytes) -> None:
    tracemalloc.start()
    try:
        with pytest.raises(CaptureFormatError):
            decode_capture_file(data)
        _current, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 1 << 20


def test_encode_errors() -> None:
    with pytest.raises(EncodeError):
        CaptureRecord(bytes(639)).encode()
    with pytest.raises(EncodeError):
        CaptureRecord(bytes(640), kind="fec_codewords").encode()  # kp4 wants 680 per flit
    with pytest.raises(EncodeError):
        CaptureRecord(bytes(640), direction="sideways").encode()
    with pytest.raises(EncodeError):
        encode_capture([_example()], fmt="erf")
    with pytest.raises(EncodeError):
        encode_pcap([RawPacket(0, b"x", linktype=1)])


def test_foreign_link_type_rejected() -> None:
    data = encode_pcap([RawPacket(0, b"abc", linktype=1)], linktype=1)
    assert decode_capture_file(data)[0].linktype == 1
    with pytest.raises(CaptureFormatError, match="link type 1"):
        decode_capture(data)


def test_module_has_no_scapy_or_hypothesis_import() -> None:
    source = Path(capture.__file__).read_text()
    assert "scapy" not in source.split('"""', 2)[2].replace("Scapy-free", "")
    assert "hypothesis" not in source


def test_interleave_outside_1_2_4_is_refused_both_ways() -> None:
    # specs/capture.md: interleave is 1, 2 or 4; writing 3 or reading 0 / 3 was accepted.
    with pytest.raises(EncodeError):
        CaptureRecord(bytes(640), interleave=3).encode()
    good = CaptureRecord(bytes(640), interleave=2).encode()
    assert CaptureRecord.decode(good).interleave == 2
    for bad in (0, 3, 15):
        data = bytearray(good)
        data[6] = (data[6] & 0x0F) | bad << 4  # interleave: the high nibble of byte 6
        with pytest.raises(FieldRangeError):
            CaptureRecord.decode(bytes(data))
