"""RoCEv2 frames built with Scapy: ICRC, bindings, and byte counts against the table."""

from __future__ import annotations

import zlib

import pytest
from hypothesis import given
from hypothesis import strategies as st

pytest.importorskip("scapy")

from scapy.contrib.roce import AETH, BTH
from scapy.layers.inet import IP
from scapy.layers.l2 import Ether
from scapy.packet import Raw

from ualink_ref.compare import headers as H
from ualink_ref.compare.mapping import ATOMIC_KINDS, RC_OPCODES, CompareOp, RocePacket, map_op
from ualink_ref.scapy import roce as S

# ---------------------------------------------------------------------------
# An independent ICRC, written from the rule (IBA Vol. 1 §7.8.1 + Annex A17):
# CRC-32 over 8 bytes of 0xFF, then the IP header onwards up to the ICRC with
# the variant fields (IPv4 TOS, TTL, header checksum; IPv6 traffic class,
# flow label, hop limit; UDP checksum; BTH byte 4, the FECN/BECN/reserved
# byte) set to all ones. Sent least significant byte first, like the FCS.
# ---------------------------------------------------------------------------


def independent_icrc(frame_without_fcs: bytes) -> bytes:
    pkt = bytearray(frame_without_fcs[14:-4])  # from the IP header, without the ICRC
    if pkt[0] >> 4 == 4:
        ihl = (pkt[0] & 0xF) * 4
        pkt[1] = 0xFF  # TOS (DSCP + ECN)
        pkt[8] = 0xFF  # TTL
        pkt[10:12] = b"\xff\xff"  # header checksum
        udp = ihl
    else:
        pkt[0] |= 0x0F  # traffic class, high nibble
        pkt[1:4] = b"\xff\xff\xff"  # traffic class low nibble + flow label
        pkt[7] = 0xFF  # hop limit
        udp = 40
    pkt[udp + 6 : udp + 8] = b"\xff\xff"  # UDP checksum
    pkt[udp + 8 + 4] = 0xFF  # BTH FECN, BECN, reserved 6
    return zlib.crc32(b"\xff" * 8 + bytes(pkt)).to_bytes(4, "little")


# A CNP captured on a ConnectX-4 Lx (the frame, without FCS, ICRC 82 fd 00 2a),
# as published in Scapy's RoCE regression tests: secdev/scapy,
# test/contrib/roce.uts, "RoCE CNP captured on ConnectX-4 Lx".
CAPTURED_CNP = bytes.fromhex(
    "e41d 2dab 2bc2 7cfe 9064 3b32 0800 45c2"
    "003c 718c 4000 4011 9161 0a00 1101 0a00"
    "1201 0000 12b7 0028 0000 8100 ffff 4000"
    "0118 0000 0000 0000 0000 0000 0000 0000"
    "0000 0000 0000 82fd 002a".replace(" ", "")
)


def test_independent_icrc_matches_the_capture() -> None:
    assert len(CAPTURED_CNP) == 74
    assert independent_icrc(CAPTURED_CNP) == bytes.fromhex("82fd002a")
    assert CAPTURED_CNP[-4:] == bytes.fromhex("82fd002a")


def test_scapy_recomputes_the_captured_icrc() -> None:
    pkt = Ether(CAPTURED_CNP)
    del pkt[BTH].icrc
    rebuilt = bytes(Ether(bytes(pkt)))
    assert rebuilt[-4:] == bytes.fromhex("82fd002a")


def _all_specs() -> list[RocePacket]:
    specs = []
    for name, (_, _, carries) in RC_OPCODES.items():
        sizes = (0, 1, 2, 3, 4, 255, 1024) if carries else (0,)
        for n in sizes:
            specs.append(RocePacket(name, "fwd", n))
    return specs


@pytest.mark.parametrize("ip", ["ipv4", "ipv6"])
def test_icrc_of_every_built_opcode_matches_independent(ip: str) -> None:
    for spec in _all_specs():
        frame = S.build_frame(spec, ip=ip, dma_len=spec.payload)
        body = frame[:-4]
        # the FCS is the 802.3 CRC-32 of everything before it
        assert frame[-4:] == zlib.crc32(body).to_bytes(4, "little")
        if len(body) > 60 or spec.payload:  # no minimum-frame padding after the ICRC
            assert body[-4:] == independent_icrc(body), (spec, ip)


@given(payload=st.binary(max_size=300), tos=st.integers(0, 255), ttl=st.integers(1, 255),
       psn=st.integers(0, (1 << 24) - 1), becn=st.integers(0, 1))
def test_icrc_ignores_variant_fields(payload: bytes, tos: int, ttl: int, psn: int,
                                     becn: int) -> None:
    spec = RocePacket("RDMA_WRITE_MIDDLE", "fwd", 0)
    base = S.build_packet(spec, psn=psn) / Raw(payload + bytes(H.pad_count(len(payload))))
    icrc = bytes(base)[-4:]
    varied = base.copy()
    varied[IP].tos, varied[IP].ttl, varied[BTH].becn = tos, ttl, becn
    varied[BTH].icrc = None
    out = bytes(varied)
    assert out[-4:] == icrc == independent_icrc(out)


def test_bindings_dissect_every_extension_header() -> None:
    expect = {"reth": S.RETH, "atomic_eth": S.AtomicETH, "aeth": AETH,
              "atomic_ack_eth": S.AtomicAckETH}
    for spec in _all_specs():
        frame = Ether(S.build_frame(spec, dma_len=77)[:-4])
        for name in spec.ext:
            assert frame.haslayer(expect[name]), (spec, name)
        if "reth" in spec.ext:
            assert frame[S.RETH].dma_len == 77
        if spec.payload:
            pad = frame[BTH].padcount
            assert pad == -spec.payload % 4
            assert len(frame[Raw].load) == spec.payload + pad
        assert frame[BTH].opcode == spec.opcode_value


def test_atomic_ack_carries_orig_data() -> None:
    frame = Ether(S.build_frame(RocePacket("ATOMIC_ACKNOWLEDGE", "rev"))[:-4])
    assert frame[AETH].msn == 1
    assert frame[S.AtomicAckETH].orig_data == 0x0123456789ABCDEF
    assert not frame.haslayer(Raw)


def test_scapy_layers_are_the_declared_formats() -> None:
    for cls, fmt in ((S.RETH, H.RETH), (S.AtomicETH, H.ATOMIC_ETH),
                     (S.AtomicAckETH, H.ATOMIC_ACK_ETH)):
        values = {f.name: (i + 1) * 0x0101 for i, f in enumerate(fmt.fields)}
        assert bytes(cls(**values)) == fmt.pack(values)
        assert len(cls()) == H.size(fmt.name)


SIZES = [1, 3, 4, 8, 16, 32, 64, 128, 256, 512, 1000, 1024, 1025, 2048, 4096, 5000]


@pytest.mark.parametrize("ip", ["ipv4", "ipv6"])
@pytest.mark.parametrize("pmtu", [1024, 4096])
def test_built_frames_equal_the_header_table(ip: str, pmtu: int) -> None:
    ops = [CompareOp(k, n) for k in ("load", "store") for n in SIZES]
    ops += [CompareOp(k, n) for k in ATOMIC_KINDS for n in (4, 8)]
    for op in ops:
        mapping = map_op(op, pmtu)
        for spec, frame in S.build_mapping(mapping, ip=ip):
            assert len(frame) == H.frame_bytes(spec.ext, spec.payload, ip), (op, spec)
            assert len(frame) >= 64
        count = S.count_mapping(mapping, ip=ip)
        assert count.frames_fwd + count.frames_rev == len(mapping.packets)


def test_full_rdma_write_of_256_bytes() -> None:
    # 14 + 20 + 8 + 12 + 16 (RETH) + 256 + 4 (ICRC) + 4 (FCS) = 334; + 8 + 12 = 354
    count = S.count_mapping(map_op(CompareOp("store", 256)))
    assert count.frame_bytes_fwd == 334
    assert count.mac_bytes_fwd == 354
    assert round(256 / count.mac_bytes_fwd, 3) == 0.723
