"""SUE and UET frames: built as bytes, read back with the Scapy layers, sizes = the table.

Header sizes are checked against the publicly stated figures (UEC 1.0: PDS 12,
SES standard 44, ...; SUE: 46-byte Ethernet/IP/UDP/FCS overhead vs 10-byte
AFH), and a few fields are found at hand-computed byte offsets, independently
of the Scapy layers that built them.
"""

from __future__ import annotations

import shutil
import subprocess
from fractions import Fraction
from pathlib import Path

import pytest

from ualink_ref.compare import sue_uet as M
from ualink_ref.compare.mapping import ATOMIC_KINDS, PMTUS, CompareOp
from ualink_ref.sim import latency as L

ROOT = Path(__file__).resolve().parents[2]
OPS = ([CompareOp(k, n) for k in ("load", "store") for n in (8, 16, 64, 256, 1000, 1024, 4096)]
       + [CompareOp(k, n) for k in ATOMIC_KINDS for n in (4, 8)])


def test_header_sizes_match_the_public_figures() -> None:
    sizes = {f.name: f.byte_length for f in M.FORMATS}
    assert sizes["uet_pds_rud_req"] == sizes["uet_pds_ack"] == 12
    assert sizes["uet_ses_std"] == 44 and sizes["uet_ses_atomic"] == 4
    assert sizes["uet_ses_cas"] == 36 and sizes["uet_ses_resp"] == 12
    assert sizes["uet_ses_resp_data"] == 20 and sizes["uet_ses_resp_small"] == 12
    assert M.NETWORK_BYTES["eth_ipv4_udp"] == 46 and M.NETWORK_BYTES["afh"] == 10


def test_every_op_maps_with_its_useful_payload() -> None:
    for proto in M.PROTOCOLS:
        for op in OPS:
            m = M.map_op(op, proto, 1024)
            fwd = sum(p.payload for p in m.packets if p.direction == "fwd")
            rev = sum(p.payload for p in m.packets if p.direction == "rev")
            if proto == "uet" and op.kind == "cas":
                fwd = 2 * op.size  # compare and swap travel in the 36-byte extension
            assert (fwd, rev) == (op.useful_fwd, op.useful_rev), (proto, op)
    with pytest.raises(ValueError):
        M.map_op(CompareOp("load", 8), "nvlink")


@pytest.mark.parametrize("pmtu", PMTUS)
def test_every_frame_reads_back_with_the_table_size(pmtu: int) -> None:
    pytest.importorskip("scapy")
    from ualink_ref.scapy import scaleup as S

    for proto in M.PROTOCOLS:
        for op in OPS:
            m = M.map_op(op, proto, pmtu)
            built = S.build_mapping(m)  # raises unless every frame reads back and sizes agree
            assert len(built) == len(m.packets)
            fc = S.count_mapping(m)
            _, _, tf, tr = M.table_bytes(m)
            assert (fc.frame_bytes_fwd, fc.frame_bytes_rev) == (tf, tr)


def test_fields_at_hand_computed_offsets() -> None:
    pytest.importorskip("scapy")
    from ualink_ref.scapy import scaleup as S

    m = M.map_op(CompareOp("store", 64), "uet", 1024)
    frame = S.build_frame(m.packets[0], m)
    # Ethernet 14 + IPv4 20: UDP destination port at 36..37; PDS at 42; SES at 54.
    assert int.from_bytes(frame[36:38], "big") == 4793
    assert frame[42] >> 3 == 2 and (int.from_bytes(frame[42:44], "big") >> 7) & 0xF == 3
    assert frame[54] & 0x3F == 1  # SES opcode WRITE
    assert frame[54 + 44 : 54 + 44 + 64] == bytes(range(64))  # the data follows SES
    assert len(frame) == 46 + 12 + 44 + 64
    m = M.map_op(CompareOp("load", 64), "sue-afh", 1024)
    resp = S.build_frame(m.packets[1], m)
    assert resp[0] == 0xAF and resp[6] == 3  # AFH tag, then TH opcode GET_RESP
    assert int.from_bytes(resp[12:14], "big") == 64 and len(resp) == 10 + 8 + 64


def test_corrupted_frame_is_caught() -> None:
    pytest.importorskip("scapy")
    from ualink_ref.scapy import scaleup as S

    m = M.map_op(CompareOp("load", 64), "uet", 1024)
    frame = bytearray(S.build_frame(m.packets[0], m))
    frame[60] ^= 0x01
    with pytest.raises(ValueError):
        S.read_back(bytes(frame), m)


@pytest.mark.skipif(shutil.which("tshark") is None, reason="tshark is not installed")
def test_tshark_uet_dissector_reads_the_frames(tmp_path: Path) -> None:
    pytest.importorskip("scapy")
    from scapy.layers.l2 import Ether
    from scapy.utils import wrpcap

    from ualink_ref.scapy import scaleup as S

    frames = []
    for op in OPS:
        m = M.map_op(op, "uet", 1024)
        frames += [Ether(f[:-4]) for _, f in S.build_mapping(m)]
    pcap = tmp_path / "uet.pcap"
    wrpcap(str(pcap), frames)
    res = subprocess.run(["tshark", "-r", str(pcap), "-Y", "_ws.malformed"],
                         capture_output=True, text=True, check=True)
    assert res.stdout.strip() == ""


# -- latency model, against hand computations ---------------------------------


def test_latency_by_hand() -> None:
    link = L.Link()  # 4 x 200G = 800 bits/ns, KP4 codeword 5440 bits, 2 m at 5 ns/m
    one = L.link_time(680, link)  # one 640-byte flit as one KP4 codeword
    assert one.serialization == Fraction(680 * 8, 800) and one.fec_accumulation == 0
    assert one.cable == 10
    small = L.link_time(89, link)  # a small frame still waits for its whole codeword
    assert small.serialization + small.fec_accumulation == Fraction(5440, 800)
    proto = L.Protocol("ualink", Fraction(200))
    rt = L.round_trip(680, 680, link, proto, hops=1)
    assert rt.total == 4 * (Fraction(68, 10) + 10) + 2 * 200  # 467.2 ns
    assert L.loaded(rt, 30).total == rt.total + 30
    with pytest.raises(ValueError):
        L.loaded(rt, -1)
    with pytest.raises(ValueError):
        L.one_way(64, link, proto, hops=-1)


def test_cli_shows_four_protocols(capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("scapy")
    from ualink_ref.cli import main

    assert main(["compare", "--repeat", "2"]) == 0
    text = capsys.readouterr().out
    four = text[text.index("Four protocols"):]
    assert all(len(line) <= 100 for line in four.splitlines())
    assert "Mixed workload, four protocols" in four and "Zero-load latency" in four
    for label in ("RoCEv2", "SUE-AFH", "SUE-Eth", "UET", "UALink"):
        assert label in four


def test_spec_lists_the_sue_uet_formats() -> None:
    from ualink_ref.bitfields import formats_markdown

    text = (ROOT / "specs" / "comparison.md").read_text()
    start = text.index("<!-- generated: sue-uet-formats -->\n") + len(
        "<!-- generated: sue-uet-formats -->\n")
    assert text[start : text.index("<!-- end: sue-uet-formats -->")] == formats_markdown(
        M.FORMATS)
