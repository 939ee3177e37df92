"""The Scapy-free RoCEv2 model: header table, op mapping, accounting, literature figures."""

from __future__ import annotations

from fractions import Fraction

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ualink_ref.compare import headers as H
from ualink_ref.compare.mapping import ATOMIC_KINDS, PMTUS, CompareOp, map_op
from ualink_ref.compare.report import literature_figures


def test_table_sizes_follow_the_declared_formats() -> None:
    assert H.size("reth") == H.RETH.byte_length == 16
    assert H.size("atomic_eth") == H.ATOMIC_ETH.byte_length == 28
    assert H.size("atomic_ack_eth") == H.ATOMIC_ACK_ETH.byte_length == 8
    # the fixed sizes, from the standards named in the table
    expect = {"ethernet": 14, "ipv4": 20, "ipv6": 40, "udp": 8, "bth": 12, "aeth": 4,
              "icrc": 4, "fcs": 4, "preamble_sfd": 8, "ifg": 12, "min_frame": 64}
    for name, n in expect.items():
        assert H.size(name) == n, name
    for entry in H.HEADER_SIZES.values():
        assert entry.source.startswith(("IEEE 802.3", "public:")), entry


def test_pad_and_frame_arithmetic() -> None:
    assert [H.pad_count(n) for n in range(6)] == [0, 3, 2, 1, 0, 3]
    # RDMA WRITE ONLY, 256 B: 14 + 20 + 8 + 12 + 16 + 256 + 4 + 4
    assert H.frame_bytes(("reth",), 256) == 334
    assert H.frame_bytes(("reth",), 256, "ipv6") == 354
    assert H.frame_bytes(("aeth",), 0) == 66  # the ACK: the smallest RoCEv2 frame
    assert H.mac_bytes(334) == 354
    assert H.wire_bytes(354) == Fraction(354) * 257 / 256 * 544 / 514
    with pytest.raises(ValueError):
        H.frame_bytes((), -1)
    with pytest.raises(ValueError):
        H.ip_header("ipx")


def test_literature_figures() -> None:
    eth, nvlink, write = literature_figures()
    # Ethernet "about 82%": 256 / (256 + 14 + 20 + 8 + 12 + 4)
    assert eth.payload + eth.overhead == 314
    assert round(eth.efficiency * 100, 1) == 81.5
    # NVLink "about 94%": 256 / (256 + 16)
    assert nvlink.payload + nvlink.overhead == 272
    assert round(nvlink.efficiency * 100, 1) == 94.1
    # a full RDMA WRITE ONLY with preamble/SFD and IFG: 256 / 354
    assert write.payload + write.overhead == 354
    assert round(write.efficiency * 100, 1) == 72.3


def test_literature_from_built_frames_agrees() -> None:
    pytest.importorskip("scapy")
    from ualink_ref.scapy.roce import count_mapping

    assert literature_figures(count_mapping) == literature_figures()


def test_store_mapping() -> None:
    m = map_op(CompareOp("store", 8), 1024)
    assert [p.opcode for p in m.packets] == ["RDMA_WRITE_ONLY", "ACKNOWLEDGE"]
    assert [p.direction for p in m.packets] == ["fwd", "rev"]
    m = map_op(CompareOp("store", 3000), 1024)
    assert [(p.opcode, p.payload) for p in m.packets] == [
        ("RDMA_WRITE_FIRST", 1024), ("RDMA_WRITE_MIDDLE", 1024), ("RDMA_WRITE_LAST", 952),
        ("ACKNOWLEDGE", 0)]
    assert [p.opcode for p in map_op(CompareOp("store", 3000), 4096).packets] == [
        "RDMA_WRITE_ONLY", "ACKNOWLEDGE"]
    assert [p.opcode for p in map_op(CompareOp("store", 2048), 1024).packets] == [
        "RDMA_WRITE_FIRST", "RDMA_WRITE_LAST", "ACKNOWLEDGE"]


def test_load_mapping() -> None:
    m = map_op(CompareOp("load", 4096), 1024)
    assert [p.opcode for p in m.packets] == [
        "RDMA_READ_REQUEST", "RDMA_READ_RESPONSE_FIRST", "RDMA_READ_RESPONSE_MIDDLE",
        "RDMA_READ_RESPONSE_MIDDLE", "RDMA_READ_RESPONSE_LAST"]
    assert m.packets[0].ext == ("reth",)
    assert m.packets[2].ext == ()
    assert [p.opcode for p in map_op(CompareOp("load", 4096), 4096).packets] == [
        "RDMA_READ_REQUEST", "RDMA_READ_RESPONSE_ONLY"]


def test_atomic_mapping() -> None:
    for kind, native in (("add", "FETCH_ADD"), ("cas", "COMPARE_SWAP")):
        m = map_op(CompareOp(kind, 8))
        assert [p.opcode for p in m.packets] == [native, "ATOMIC_ACKNOWLEDGE"]
        assert m.round_trips == 1 and not m.emulated
        assert m.packets[1].ext == ("aeth", "atomic_ack_eth")
    for kind in ATOMIC_KINDS:
        for n in (4, 8):
            m = map_op(CompareOp(kind, n))
            if kind in ("add", "cas") and n == 8:
                continue
            assert m.emulated and m.round_trips == 2
            assert [p.opcode for p in m.packets] == [
                "RDMA_READ_REQUEST", "RDMA_READ_RESPONSE_ONLY", "COMPARE_SWAP",
                "ATOMIC_ACKNOWLEDGE"]
            assert "round trip" in m.note


def test_useful_payload_convention() -> None:
    assert (CompareOp("store", 64).useful_fwd, CompareOp("store", 64).useful_rev) == (64, 0)
    assert (CompareOp("load", 64).useful_fwd, CompareOp("load", 64).useful_rev) == (0, 64)
    assert (CompareOp("add", 8).useful_fwd, CompareOp("add", 8).useful_rev) == (8, 8)
    assert (CompareOp("cas", 4).useful_fwd, CompareOp("cas", 4).useful_rev) == (8, 4)
    for bad in (("nop", 8), ("add", 16), ("load", 0)):
        with pytest.raises(ValueError):
            CompareOp(*bad)
    with pytest.raises(ValueError):
        map_op(CompareOp("load", 8), 1000)


@given(kind=st.sampled_from(["load", "store"]), size=st.integers(1, 20000),
       pmtu=st.sampled_from(PMTUS))
def test_segmentation_moves_every_byte(kind: str, size: int, pmtu: int) -> None:
    m = map_op(CompareOp(kind, size), pmtu)
    data_dir = "fwd" if kind == "store" else "rev"
    data = [p for p in m.packets if p.direction == data_dir]
    assert sum(p.payload for p in data) == size
    assert all(0 < p.payload <= pmtu for p in data)
    assert all(p.payload == pmtu for p in data[:-1])
    assert len(data) == -(-size // pmtu)
    assert sum(p.payload for p in m.packets if p.direction != data_dir) == 0
