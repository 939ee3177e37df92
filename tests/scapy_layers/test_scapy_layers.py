"""Every Scapy layer builds the codec's bytes and dissects them to the codec's values."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

pytest.importorskip("scapy")

from scapy.utils import rdpcap

from ualink_ref import scapy_layers as sl
from ualink_ref.bitfields import BitFormat
from ualink_ref.capture.format import PSEUDO_HEADER, CaptureRecord, write_capture
from ualink_ref.testing.strategies import format_values


def _fields(pkt: Any, fmt: BitFormat) -> dict[str, int]:
    return {name: pkt.getfieldval(sl.scapy_name(name)) for name in fmt.field_names}


def _kw(values: dict[str, int]) -> dict[str, int]:
    return {sl.scapy_name(k): v for k, v in values.items()}


@given(format_values(PSEUDO_HEADER))
def test_capture_header_layer(values: dict[str, int]) -> None:
    wire = PSEUDO_HEADER.pack(values)
    assert bytes(sl.UALinkCapture(**_kw(values))) == wire
    assert _fields(sl.UALinkCapture(wire), PSEUDO_HEADER) == values


def test_rdpcap_dissects_link_type_147(tmp_path: Path) -> None:
    rec = CaptureRecord(bytes(680), kind="fec_codewords", direction="b_to_a", slot=9,
                        symbols_corrected=4, uncorrectable=True)
    write_capture(tmp_path / "c.pcap", [rec])
    (pkt,) = rdpcap(str(tmp_path / "c.pcap"))
    assert isinstance(pkt, sl.UALinkCapture)
    assert pkt.slot == 9 and pkt.uncorrectable == 1 and pkt.symbols_corrected == 4
    shown = pkt.show(dump=True)
    assert "link_direction= b_to_a" in shown and "record_kind= fec_codewords" in shown


# -- data link layer ------------------------------------------------------------------

from ualink_ref.capture.dissect import dissect_records  # noqa: E402
from ualink_ref.capture.run import SCENARIOS, CaptureLink  # noqa: E402
from ualink_ref.dl import DLFlit  # noqa: E402
from ualink_ref.dl.flit import SEGMENT_LENGTHS, SEGMENT_OFFSETS  # noqa: E402
from ualink_ref.dl.formats import (  # noqa: E402
    COMMAND_HEADER,
    DL_MESSAGE,
    EXPLICIT_HEADER,
    SEGMENT_HEADER,
)
from ualink_ref.dl.messages import encode_message  # noqa: E402
from ualink_ref.errors import DecodeError  # noqa: E402
from ualink_ref.sim.workloads import random_workload  # noqa: E402
from ualink_ref.testing.strategies import (  # noqa: E402
    dl_flits,
    dl_messages,
    tl_fields,
    tl_flits,
)
from ualink_ref.tl.fields import FORMATS, REQUEST, RESPONSE, encode_field  # noqa: E402
from ualink_ref.tl.flit import dissect  # noqa: E402


def _raw_fields(fmt: BitFormat, word: int) -> dict[str, int]:
    return {p.field.name: word >> p.shift & p.field.max_value for p in fmt.positions}


def _message_format(word: int) -> BitFormat:
    """The declared format of a message word (independent of the Scapy dispatch)."""
    from ualink_ref.dl.formats import ALL_FORMATS

    try:
        common = DL_MESSAGE.from_int(word)
    except DecodeError:  # reserved bit set: not a known message
        return DL_MESSAGE
    if common["mclass"] == 0b1111 and not common["compressed"]:  # vendor: any type
        return next(f for f in ALL_FORMATS if f.name == "dl_msg_vendor")
    for fmt in ALL_FORMATS:
        if fmt.name.startswith("dl_msg_") and not common["compressed"] and (
                fmt.field("mclass").default, fmt.field("mtype").default) == (
                common["mclass"], common["mtype"]):
            return fmt
    return DL_MESSAGE


@given(dl_flits())
def test_dl_flit_layer_dissects_codec_bytes(flit: DLFlit) -> None:
    raw = flit.encode()
    pkt = sl.UALinkDLFlit(raw)
    assert bytes(pkt) == raw
    hdr_fmt = COMMAND_HEADER if flit.op.is_command else EXPLICIT_HEADER
    assert _fields(pkt.header, hdr_fmt) == hdr_fmt.unpack(raw[:3])
    for k, (hdr_off, body_off) in enumerate(SEGMENT_OFFSETS):
        seg = pkt.getfieldval(f"segment{k}")
        assert _fields(seg, SEGMENT_HEADER) == SEGMENT_HEADER.unpack(raw[hdr_off:hdr_off + 1])
        word = flit.messages[k]
        if word is None:
            assert seg.message is None
            assert seg.body == raw[body_off:body_off + SEGMENT_LENGTHS[k]]
        else:
            assert bytes(seg.message) == word.to_bytes(4, "big")
            fmt = _message_format(word)
            assert _fields(seg.message, fmt) == _raw_fields(fmt, word)
    assert pkt.crc == int.from_bytes(raw[636:], "big") and pkt.crc_valid == 1
    bad = bytearray(raw)
    bad[100] ^= 1
    assert sl.UALinkDLFlit(bytes(bad)).crc_valid == 0
    assert "INVALID" in sl.UALinkDLFlit(bytes(bad)).show(dump=True)


@given(dl_flits())
def test_dl_flit_layer_builds_codec_bytes(flit: DLFlit) -> None:
    raw = flit.encode()
    hdr_cls = sl.DLCommandHeader if flit.op.is_command else sl.DLExplicitHeader
    hdr_fmt = COMMAND_HEADER if flit.op.is_command else EXPLICIT_HEADER
    segments = {}
    for k, (hdr_off, body_off) in enumerate(SEGMENT_OFFSETS):
        values = SEGMENT_HEADER.unpack(raw[hdr_off:hdr_off + 1])
        word = flit.messages[k]
        start = body_off + (4 if word is not None else 0)
        body = raw[start:body_off + SEGMENT_LENGTHS[k]]
        msg = None if word is None else sl.DLMessage(word.to_bytes(4, "big"))
        segments[f"segment{k}"] = sl.DL_SEGMENT_LAYERS[k](**_kw(values), message=msg,
                                                                   body=body)
    built = sl.UALinkDLFlit(header=hdr_cls(**_kw(hdr_fmt.unpack(raw[:3]))), **segments)
    assert bytes(built) == raw  # CRC filled in by post_build


@given(dl_messages())
def test_dl_message_layers(message: object) -> None:
    raw = encode_message(message)  # type: ignore[arg-type]
    layer = sl.message_layer(raw)
    pkt = layer(raw)
    assert bytes(pkt) == raw
    fmt = getattr(message, "FORMAT", DL_MESSAGE)
    assert fmt is _message_format(int.from_bytes(raw, "big"))
    assert _fields(pkt, fmt) == fmt.from_int(int.from_bytes(raw, "big"))


# -- transaction layer ------------------------------------------------------------------


@given(tl_fields())
def test_tl_field_layers(field: tuple[int, dict[str, int]]) -> None:
    ftype, values = field
    raw = encode_field(ftype, values)
    layer = sl.TL_FIELD_LAYERS[ftype]
    assert bytes(layer(**_kw(values))) == raw
    assert _fields(layer(raw), FORMATS[ftype]) == values


@given(tl_flits())
def test_tl_flit_layer(flit: bytes) -> None:
    view = dissect(flit)
    pkt = sl.tl_flit(flit)
    assert bytes(pkt) == flit
    halves = pkt.halves
    assert [type(h).__name__ for h in halves] == [
        "TLControlHalf" if h.kind == "control" else "TLDataHalf" for h in view.halves]
    for h, v in zip(halves, view.halves, strict=True):
        if v.kind == "control":
            got = [(f.getfieldval("ftype"), _fields(f, c.format)) for f, c in
                   zip(h.ctrl_fields, v.fields, strict=True)]
            assert got == [(c.ftype, dict(c.values)) for c in v.fields]


def test_upli_views() -> None:
    req = {"cmd": 0x29, "tag": 7, "addr": 0x40, "len": 15, "numbeats": 0, "dst_acc": 1}
    raw = encode_field(1, req) + bytes(range(64))
    pkt = sl.UPLIRequest(raw)
    assert bytes(pkt) == raw and pkt.data == bytes(range(64)) and pkt.cmd == 0x29
    assert _fields(pkt, REQUEST) == REQUEST.unpack(raw[:16])
    rsp = {"tag": 7, "len": 0, "status": 0, "rd_wr": 0, "last": 1}
    raw = encode_field(2, rsp) + bytes(64)
    pkt = sl.UPLIResponse(raw)
    assert bytes(pkt) == raw and len(pkt.data) == 64
    assert _fields(pkt, RESPONSE) == RESPONSE.unpack(raw[:8])
    assert "cmd       = WriteFull" in sl.UPLIRequest(encode_field(1, req)).show(dump=True)


# -- whole captures ------------------------------------------------------------------------


def test_rdpcap_scenario_and_reassembly(tmp_path: Path) -> None:
    ops = random_workload(40, 11)
    result = CaptureLink(fec="ll", ber=2e-4, seed=11).run(ops)
    write_capture(tmp_path / "w.pcap", result.records)
    pkts = rdpcap(str(tmp_path / "w.pcap"))
    assert all(isinstance(p.payload, sl.UALinkDLFlit) for p in pkts)
    shown = pkts[3].show(dump=True)
    for name in ("record_kind= dl_flit", "crc_valid = valid", "tl_starts", "op        ="):
        assert name in shown
    flits = sl.reassemble_tl(pkts)
    for direction in ("a_to_b", "b_to_a"):
        mine = [bytes(t.flit) for t in flits if t.direction == direction]
        assert mine == result.delivered[direction]
    reqs = sl.list_requests(pkts)
    assert len(reqs) == len(ops)
    assert sorted(r[2].getfieldval("tag") for r in reqs if r[1] == "a_to_b") == sorted(
        op.values["tag"] for f in dissect_records(result.records) if f.direction == "a_to_b"
        for op in f.ops if op.kind == "request")


def test_every_scenario_reads_in_scapy(tmp_path: Path) -> None:
    import zlib

    for name, scenario in SCENARIOS.items():
        result = CaptureLink(**scenario.settings).run(scenario.ops())  # type: ignore[arg-type]
        write_capture(tmp_path / f"{name}.pcapng", result.records)
        pkts = rdpcap(str(tmp_path / f"{name}.pcapng"))
        assert len(pkts) == len(result.records)
        for pkt, rec in zip(pkts, result.records, strict=True):
            assert bytes(pkt.payload) == rec.data
            if rec.kind == "dl_flit":
                # zlib.crc32 is the IEEE 802.3 CRC-32: an independent check of crc_valid
                good = zlib.crc32(rec.data[:636]) == int.from_bytes(rec.data[636:], "big")
                assert pkt.payload.crc_valid == int(good), name
            else:
                assert pkt.getfieldval("record_kind") == 1


@given(st.binary(min_size=640, max_size=640))
def test_dl_flit_layer_dissects_any_640_bytes(raw: bytes) -> None:
    pkt = sl.UALinkDLFlit(raw)
    assert bytes(pkt) == raw and pkt.crc_valid in (0, 1)
    pkt.show(dump=True)


@given(st.binary(min_size=64, max_size=64))
def test_tl_flit_layer_dissects_any_64_bytes(raw: bytes) -> None:
    pkt = sl.tl_flit(raw)
    assert bytes(pkt) == raw
    pkt.show(dump=True)


# -- regressions (inputs found by the properties above) ------------------------------


def test_regression_message_word_with_reserved_bit() -> None:
    """Found by test_dl_flit_layer_dissects_codec_bytes: message word 2 (rsvd_c set) made
    the DL message dispatch raise ReservedBitsError inside Scapy."""
    from ualink_ref.dl.formats import FlitOp

    raw = DLFlit(FlitOp.EXPLICIT, messages=(None, None, None, None, 2)).encode()
    pkt = sl.UALinkDLFlit(raw)
    assert type(pkt.segment4.message) is sl.DLMessage and bytes(pkt) == raw


def test_regression_field_straddling_the_half_flit() -> None:
    """Found by test_tl_flit_layer_dissects_any_64_bytes: a request FTYPE in sector 7
    (4 sectors would straddle the half-flit) broke the control half-flit layer."""
    raw = bytes(28) + bytes([0x10]) + bytes(35)
    pkt = sl.tl_flit(raw)
    assert bytes(pkt) == raw
    assert type(pkt.halves[0].ctrl_fields[-1]) is sl.TLUnknownSector
