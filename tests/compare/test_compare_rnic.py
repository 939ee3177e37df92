"""RoCEv2 frames as an RNIC sends them: PSNs per direction, ACK PSNs, MSN, one atomic address.

Every frame of every operation kind at every PMTU is read back with Scapy and
the rules are checked from the parsed fields, derived here from the
InfiniBand rules (IBA Vol. 1 §9.7), not from the builder's own numbering.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

pytest.importorskip("scapy")

from scapy.contrib.roce import AETH, BTH
from scapy.layers.l2 import Ether

from ualink_ref.compare.mapping import ATOMIC_KINDS, PMTUS, CompareOp, map_op
from ualink_ref.scapy import roce as S

_STARTS = {"RDMA_WRITE_FIRST", "RDMA_WRITE_ONLY", "RDMA_READ_REQUEST", "COMPARE_SWAP",
           "FETCH_ADD"}
_SIZES = (8, 256, 1000, 1024, 4096)


def _ops() -> list[CompareOp]:
    ops = [CompareOp(k, n) for k in ("load", "store") for n in _SIZES]
    return ops + [CompareOp(k, n) for k in ATOMIC_KINDS for n in (4, 8)]


def _parsed(op: CompareOp, pmtu: int) -> list[tuple[str, str, Ether]]:
    mapping = map_op(op, pmtu)
    return [(spec.opcode, spec.direction, Ether(frame[:-4]))
            for spec, frame in S.build_mapping(mapping)]


def _va(pkt: Ether) -> int | None:
    for layer in (S.RETH, S.AtomicETH):
        if pkt.haslayer(layer):
            return int(pkt[layer].va)
    return None


@pytest.mark.parametrize("pmtu", PMTUS)
def test_psn_msn_and_address_rules_for_every_op(pmtu: int) -> None:
    for op in _ops():
        frames = _parsed(op, pmtu)
        expected_req_psn = 0
        last_req_psn = -1
        read_queue: list[int] = []
        messages = 0
        msns: list[int] = []
        vas = set()
        for opcode, direction, pkt in frames:
            psn = int(pkt[BTH].psn)
            if (va := _va(pkt)) is not None:
                vas.add(va)
            if direction == "fwd":
                assert psn == expected_req_psn, (op, pmtu, opcode, psn)
                last_req_psn = psn
                if opcode == "RDMA_READ_REQUEST":
                    length = int(pkt[S.RETH].dma_len)
                    n = max(1, -(-length // pmtu))
                    read_queue += list(range(psn, psn + n))
                    expected_req_psn += n
                else:
                    expected_req_psn += 1
                messages += opcode in _STARTS
                continue
            if opcode.startswith("RDMA_READ_RESPONSE"):
                assert psn == read_queue.pop(0), (op, pmtu, opcode, psn)
            else:  # ACK and ATOMIC ACK carry the last request PSN they acknowledge
                assert psn == last_req_psn, (op, pmtu, opcode, psn)
            if pkt.haslayer(AETH):
                msns.append(int(pkt[AETH].msn))
        assert not read_queue, (op, pmtu, "read PSNs without a response")
        assert msns == sorted(msns) and msns[-1] == messages, (op, pmtu, msns)
        assert len(vas) == 1, (op, pmtu, vas)  # an emulated atomic's READ and CAS: one address


def test_issue_examples() -> None:
    # An ACK for WRITE PSNs 0-3 carries 3; READ responses start at the request's PSN.
    frames = _parsed(CompareOp("store", 4096), 1024)
    assert [int(p[BTH].psn) for _, _, p in frames] == [0, 1, 2, 3, 3]
    frames = _parsed(CompareOp("load", 4096), 1024)
    assert [int(p[BTH].psn) for _, _, p in frames] == [0, 0, 1, 2, 3]
    assert [int(p[AETH].msn) for _, _, p in frames if p.haslayer(AETH)] == [0, 1]
    frames = _parsed(CompareOp("swap", 8), 1024)  # emulated: READ 8 B at PSN 0, CAS at PSN 1
    assert [int(p[BTH].psn) for _, _, p in frames] == [0, 0, 1, 1]
    assert [int(p[AETH].msn) for _, _, p in frames if p.haslayer(AETH)] == [1, 2]
    assert {int(p[BTH].dqpn) for o, d, p in frames if d == "rev"} == {0x12}


@pytest.mark.skipif(shutil.which("tshark") is None, reason="tshark is not installed")
def test_tshark_reads_the_same_psns(tmp_path: Path) -> None:
    from scapy.utils import wrpcap

    frames = _parsed(CompareOp("load", 4096), 1024) + _parsed(CompareOp("store", 4096), 1024)
    pcap = tmp_path / "rnic.pcap"
    wrpcap(str(pcap), [p for _, _, p in frames])
    out = subprocess.run(
        ["tshark", "-r", str(pcap), "-d", "udp.port==4791,infiniband", "-T", "fields",
         "-e", "infiniband.bth.psn"], capture_output=True, text=True, check=True).stdout
    assert [int(x) for x in out.split()] == [int(p[BTH].psn) for _, _, p in frames]
