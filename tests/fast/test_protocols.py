"""Protocols side by side (ualink_ref.fast.protocols, specs/fast-protocols.md K1-K7).

The per-operation slots are recomputed here from the comparison's own functions (its
op mappings and header-size tables) and from hand-added header sizes, never from the
module under test; a seeded slip in the slot rule is shown to be caught.
"""

from __future__ import annotations

from fractions import Fraction

import pytest

from ualink_ref.collectives.algorithms import TimingOnly, schedule
from ualink_ref.compare import headers as H
from ualink_ref.compare import mapping as R
from ualink_ref.compare import sue_uet as M
from ualink_ref.compare.mapping import CompareOp
from ualink_ref.errors import ConfigError
from ualink_ref.fast import protocol_table as T
from ualink_ref.fast import protocols as P
from ualink_ref.fast.collective import FastConfig
from ualink_ref.sim.fabric import FabricConfig
from ualink_ref.sim.fabric_report import static_slots
from ualink_ref.sim.workloads import Op

POD = FabricConfig(accelerators=8, planes=1, lanes=1)
ETHERNET = ("roce", "sue-afh", "sue-eth", "uet")


def _roce_mac(op: CompareOp) -> tuple[int, int]:
    mapping = R.map_op(op, 1024)
    return tuple(sum(H.mac_bytes(H.frame_bytes(p.ext, p.payload)) for p in mapping.packets
                     if p.direction == d) for d in ("fwd", "rev"))  # type: ignore[return-value]


def _table_mac(op: CompareOp, protocol: str) -> tuple[int, int]:
    frames_fwd, frames_rev, fwd, rev = M.table_bytes(M.map_op(op, protocol, 1024))
    gap = H.size("preamble_sfd") + H.size("ifg")
    return fwd + frames_fwd * gap, rev + frames_rev * gap


def _slots(mac: int) -> float:
    """680 wire bytes a slot; wire = MAC x 257/256 x 544/514."""
    return float(Fraction(mac) * Fraction(257, 256) * Fraction(544, 514) / 680)


def test_roce_write_of_256_bytes_is_the_builders_bytes_over_680_a_slot() -> None:
    shape = P.protocol_calibration("roce", POD).shape("write", 256)
    fwd, rev = _roce_mac(CompareOp("store", 256))
    # by hand: Ethernet 14 + IPv4 20 + UDP 8 + BTH 12 + RETH 16 + 256 + ICRC 4 + FCS 4,
    # + preamble 8 + gap 12 (the 256/354 of specs/rocev2-comparison.md); the ACK: BTH +
    # AETH, padded to the 64-byte minimum frame, + 20
    assert (fwd, rev) == (354, 86)
    assert shape.request_up == shape.request_down == pytest.approx(_slots(354))
    assert shape.response_up == shape.response_down == pytest.approx(_slots(86))
    assert _slots(354) == pytest.approx(354 / 640)  # the PCS and FEC are exactly 17/16


@pytest.mark.parametrize("protocol", ETHERNET)
def test_every_shape_is_its_frames_over_680_a_slot(protocol: str) -> None:
    cal = P.protocol_calibration(protocol, POD)
    for (kind, beats), shape in cal.shapes.items():
        op = {"write": CompareOp("store", 64 * beats), "read": CompareOp("load", 64 * beats),
              "atomic": CompareOp("add", 8)}[kind]
        fwd, rev = _roce_mac(op) if protocol == "roce" else _table_mac(op, protocol)
        assert shape.request_up == pytest.approx(_slots(fwd)), (kind, beats)
        assert shape.request_down == pytest.approx(_slots(fwd)), (kind, beats)
        assert shape.response_up == pytest.approx(_slots(rev)), (kind, beats)
        assert shape.response_down == pytest.approx(_slots(rev)), (kind, beats)


def test_the_scapy_built_frames_give_the_same_bytes() -> None:
    pytest.importorskip("scapy")
    from ualink_ref.scapy import roce, scaleup

    for beats in (1, 4):
        op = CompareOp("store", 64 * beats)
        counted = roce.count_mapping(R.map_op(op, 1024))
        assert P.mac_bytes("roce", op).fwd == counted.mac_bytes_fwd
        for protocol in ("sue-afh", "sue-eth", "uet"):
            built = scaleup.count_op(op, protocol, 1024)
            assert P.mac_bytes(protocol, op).fwd == built.mac_bytes_fwd


def test_a_slip_in_the_slot_rule_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(P, "SLOT_WIRE_BYTES", 640)  # the seeded bug: MAC bytes per slot
    shape = P.protocol_calibration("roce", POD).shape("write", 256)
    assert shape.request_up != pytest.approx(_slots(354))


def test_latency_differs_from_ualink_by_the_public_switch_figures_only() -> None:
    # one switch each way: 2 x (250 - 200) ns; every frame here fits one RS(544,514)
    # codeword, as UALink's flit does, so serialization and FEC cost the same
    ualink = static_slots(POD, Op("a", "write", 0x1000, data=bytes(64)))
    for protocol in ETHERNET:
        shape = P.protocol_calibration(protocol, POD).shape("write", 64)
        assert shape.latency_slots - ualink == pytest.approx(100 / POD.slot_ns), protocol
        assert shape.latency_slots > ualink
        assert 0.4 < shape.one_way_slots / shape.latency_slots < 0.6


def test_the_engine_reproduces_each_shapes_zero_load_latency() -> None:
    cal = P.protocol_calibration("roce", POD)
    for kind, nbytes in (("write", 256), ("read", 64), ("atomic", 8)):
        assert T.one_op_ns(cal, POD, kind, nbytes) == pytest.approx(
            cal.shape(kind, nbytes).latency_slots * POD.slot_ns)


def test_fewer_header_bytes_never_lose_a_collective() -> None:
    # SUE-AFH frames are never larger than RoCEv2's and the latency is the same: its
    # all-reduce and all-to-all are at least as fast
    for op, algo, size in (("all-reduce", "ring", 65536), ("all-to-all", "direct", 65536)):
        plan = schedule(op, algo, 8, size)
        afh = P.run_protocol_collective("sue-afh", plan, POD)
        roce = P.run_protocol_collective("roce", plan, POD)
        assert afh.time_us <= roce.time_us, op
        assert roce.flow_control == "pfc"


def test_symmetric_run_equals_the_plain_run_on_a_protocol() -> None:
    plan = schedule("all-reduce", "ring", 8, 32768)
    one = schedule("all-reduce", "ring", 8, 32768, timing=TimingOnly((0,)))
    plain = P.run_protocol_collective("uet", plan, POD)
    folded = P.run_protocol_collective("uet", one, POD, FastConfig(symmetric=True))
    assert folded.time_us == pytest.approx(plain.time_us)


@pytest.mark.slow
def test_ualink_small_messages_beat_roce_on_the_same_pod() -> None:
    ualink = P.protocol_calibration("ualink", POD)  # measured on the exact pod (K2)
    roce = P.protocol_calibration("roce", POD)
    for kind, nbytes in (("write", 256), ("read", 64), ("atomic", 8)):
        assert T.one_op_ns(ualink, POD, kind, nbytes) < T.one_op_ns(roce, POD, kind, nbytes)
    plan = schedule("all-reduce", "one-shot", 8, 4096)
    assert (P.run_protocol_collective("ualink", plan, POD).time_us
            < P.run_protocol_collective("roce", plan, POD).time_us)


def test_a_protocol_name_typo_is_a_config_error() -> None:
    for bad in ("rocev2", "SUE", "ualink ", None):
        with pytest.raises(ConfigError, match="protocol"):
            P.protocol_calibration(bad, POD)  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="variants"):
        T.TableConfig(variants=("rcoe",))


def test_in_network_reduction_is_ualink_only() -> None:
    plan = schedule("all-reduce", "in-network", 8, 4096)
    with pytest.raises(ConfigError, match="UALink only"):
        P.run_protocol_collective("uet", plan, POD)


def test_the_table_command_rejects_a_bad_variant_in_one_line(
        capsys: pytest.CaptureFixture[str]) -> None:
    assert T.main(["--variants", "roce,rocee"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "rocee" in err[0]


def test_a_small_table_renders_and_plots(tmp_path: object) -> None:
    config = T.TableConfig(accelerators=(8,), sizes=(8192, 32768), variants=("roce", "sue-afh"))
    table = T.build_table(config)
    text = T.render_markdown(table, "python -m ualink_ref.fast.protocol_table")
    for label in ("RoCEv2", "SUE-AFH", "all-reduce (ring), 8 accelerators", "PFC"):
        assert label in text
    afh = table.point("sue-afh", "all-to-all", 8, 32768)
    roce = table.point("roce", "all-to-all", 8, 32768)
    assert afh.busbw_gbps >= roce.busbw_gbps
    pytest.importorskip("matplotlib")
    from pathlib import Path

    path = Path(str(tmp_path)) / "t.png"
    T.plot_table(table, path)
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
