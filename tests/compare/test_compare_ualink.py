"""The ualink side is measured by running the stack; the report combines both sides honestly."""

from __future__ import annotations

import json
from collections import Counter
from fractions import Fraction
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

pytest.importorskip("ualink_ref.tl")
pytest.importorskip("scapy")

from ualink_ref.cli import main
from ualink_ref.compare import headers as H
from ualink_ref.compare import report as R
from ualink_ref.compare.mapping import ATOMIC_KINDS, CompareOp, FwdRev, map_op
from ualink_ref.compare.ualink_side import (
    UalinkCount,
    measure_ualink,
    run_endpoints,
    run_layers,
    ualink_requests,
)

REPEAT = 8
OPS = [CompareOp("store", 8), CompareOp("store", 100), CompareOp("store", 256),
       CompareOp("store", 1024),
       CompareOp("load", 8), CompareOp("load", 256), CompareOp("load", 4096),
       CompareOp("add", 8), CompareOp("cas", 4), CompareOp("umax", 8)]


def _beats(n: int) -> int:
    return -(-n // 64)


def _measure(method: str, ops: list[CompareOp], fec: str = "kp4") -> UalinkCount:
    if method == "endpoint":
        return run_endpoints(ops, fec=fec)
    return run_layers(ops, fec=fec)


METHODS = ["endpoint", "layers"]
_ids = {"ids": lambda op: f"{op.kind}{op.size}"}


def test_measure_uses_the_endpoints() -> None:
    c = measure_ualink([CompareOp("load", 64)])
    assert "Endpoints" in c.method


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("op", OPS, **_ids)
def test_counts_come_from_the_flits(op: CompareOp, method: str) -> None:
    c = _measure(method, [op] * REPEAT)
    fwd, rev = Counter(dict(c.breakdown.fwd)), Counter(dict(c.breakdown.rev))
    # every byte counted is a whole flit: TL flits are two half-flits (here read back from
    # the wire, against the TL counters), DL flits 640 B, a kp4 codeword 680 B per DL flit
    assert fwd["control_halves"] + fwd["data_halves"] == 2 * c.tl_flits.fwd
    assert rev["control_halves"] + rev["data_halves"] == 2 * c.tl_flits.rev
    assert c.mac_bytes.fwd == c.dl_flits.fwd * 640 and c.mac_bytes.rev == c.dl_flits.rev * 640
    assert c.wire_bytes.fwd == c.dl_flits.fwd * 680 and c.wire_bytes.rev == c.dl_flits.rev * 680
    assert (c.codewords.fwd, c.codewords.rev) == (c.dl_flits.fwd, c.dl_flits.rev)
    # DL flits that carry TL bytes hold 628 of them at most; the layered run queues all
    # TL flits at once, so there the DL packs them back to back: exactly ceil(bytes/628)
    data_fwd = c.dl_flits.fwd - c.ack_only.fwd
    data_rev = c.dl_flits.rev - c.ack_only.rev
    assert data_fwd * 628 >= c.tl_flits.fwd * 64 and data_rev * 628 >= c.tl_flits.rev * 64
    if method == "layers":
        assert c.tl_flits.fwd * 64 > (data_fwd - 1) * 628
        assert c.tl_flits.rev * 64 > (data_rev - 1) * 628
    assert c.ack_only.fwd >= 0 and c.ack_only.rev >= 0


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("op", OPS, **_ids)
def test_fields_and_data_match_the_public_rules(op: CompareOp, method: str) -> None:
    # Derived by hand from the TL rules (64-byte beats = two 32-byte data half-flits;
    # one request field and one response field per UALink request of <= 256 B).
    c = _measure(method, [op] * REPEAT)
    fwd, rev = Counter(dict(c.breakdown.fwd)), Counter(dict(c.breakdown.rev))
    requests = REPEAT * ualink_requests(op)
    assert fwd["field:tl_request"] + fwd["field:tl_compressed_request"] == requests
    responses = sum(v for k, v in rev.items() if "response" in k)
    assert responses == requests
    chunks = [min(256, op.size - off) for off in range(0, op.size, 256)]
    if op.kind == "store":
        assert fwd["data_halves"] == REPEAT * sum(2 * _beats(n) for n in chunks)
        assert rev["data_halves"] == 0
    elif op.kind == "load":
        assert fwd["data_halves"] == 0
        assert rev["data_halves"] == REPEAT * sum(2 * _beats(n) for n in chunks)
    else:  # an atomic: operand(s) in one beat, the old value back in one beat
        assert fwd["data_halves"] == rev["data_halves"] == REPEAT * 2


def test_endpoint_counts_are_its_own_counters() -> None:
    # Drive two endpoints by hand, independently of the driver, and compare totals.
    from ualink_ref.compare import ualink_side as D
    from ualink_ref.node.endpoint import Endpoint

    ops = [CompareOp("store", 256)] * REPEAT
    a, b = Endpoint(D.REQUESTER), Endpoint(D.TARGET)
    link = D.EndpointLink(a, b)
    sent: list[bytes] = []
    link.network.add_tap(lambda chunk: sent.append(chunk.sent) if chunk.src == "a" else None)
    link.run_until_idle()
    before = a.counters.flits_sent, b.counters.flits_sent, a.counters.wire_bytes_sent
    D.issue_ops(a, ops)
    link.run_until_idle(REPEAT)
    c = D.run_endpoints(ops, fec="kp4")
    assert c.dl_flits.fwd == a.counters.flits_sent - before[0]
    assert c.dl_flits.rev == b.counters.flits_sent - before[1]
    assert c.wire_bytes.fwd == a.counters.wire_bytes_sent - before[2] == c.dl_flits.fwd * 680
    assert sum(len(w) for w in sent) == a.counters.wire_bytes_sent


@pytest.mark.parametrize(("fec", "per_flit", "codewords"),
                         [("kp4", 680, 1), ("ll", 680, 2), ("none", 640, 1)])
@pytest.mark.parametrize("method", METHODS)
def test_wire_bytes_are_the_encoded_codewords(fec: str, per_flit: int, codewords: int,
                                              method: str) -> None:
    c = _measure(method, [CompareOp("store", 256)] * REPEAT, fec=fec)
    assert c.wire_bytes.fwd == c.dl_flits.fwd * per_flit
    assert c.wire_bytes.rev == c.dl_flits.rev * per_flit
    if fec != "none":
        assert c.codewords.fwd == c.dl_flits.fwd * codewords
        assert c.codewords.rev == c.dl_flits.rev * codewords


def test_report_rows_combine_the_two_counts() -> None:
    from ualink_ref.scapy.roce import count_mapping

    rep = R.build_report(count_mapping, ops=OPS, repeat=REPEAT)
    for op, row in zip(OPS, rep.rows, strict=True):
        m = map_op(op, rep.pmtu)
        fwd = sum(H.mac_bytes(H.frame_bytes(p.ext, p.payload)) for p in m.packets_in("fwd"))
        rev = sum(H.mac_bytes(H.frame_bytes(p.ext, p.payload)) for p in m.packets_in("rev"))
        assert (row.roce_mac.fwd, row.roce_mac.rev) == (fwd, rev)
        assert row.roce_wire.fwd == pytest.approx(float(Fraction(fwd) * 17 / 16))
        fc = count_mapping(m)
        assert (fc.mac_bytes_fwd, fc.mac_bytes_rev) == (fwd, rev)
        c = measure_ualink([op] * REPEAT)
        assert row.ualink_mac.fwd == c.mac_bytes.fwd / REPEAT
        assert row.ualink_wire.rev == c.wire_bytes.rev / REPEAT
        useful = op.useful_fwd + op.useful_rev
        for level in R.LEVELS:
            roce = useful / (row.bytes("roce", level, "fwd") + row.bytes("roce", level, "rev"))
            assert row.efficiency("roce", level) == pytest.approx(roce)
            assert row.ratio(level) == pytest.approx(row.efficiency("ualink", level) / roce)
        # both PHYs cost exactly 17/16, so the ratio does not depend on the level
        assert row.ratio("wire") == pytest.approx(row.ratio("mac"))


def test_fwd_rev_picks_a_direction_or_adds_both() -> None:
    pair = FwdRev(3, 5)
    assert (pair.of("fwd"), pair.of("rev"), pair.of("both")) == (3, 5, 8)
    fwd, rev = pair
    assert (fwd, rev) == (3, 5) and sum(pair) == 8
    assert pair.map(str) == FwdRev("3", "5")
    assert pair.per(2) == FwdRev(1.5, 2.5)
    assert pair.columns("x") == {"x_fwd": 3, "x_rev": 5}
    with pytest.raises(ValueError, match="direction"):
        pair.of("up")


def test_csv_columns_are_flat_fwd_rev_pairs() -> None:
    # The column names and order the CSV and JSON rows have always had (typed by hand).
    from ualink_ref.scapy.roce import count_mapping

    rep = R.build_report(count_mapping, ops=[CompareOp("store", 64)], repeat=2)
    header = R.render_csv(rep).splitlines()[0].split(",")
    assert header[:25] == [
        "op", "size", "useful_fwd", "useful_rev", "roce_packets", "roce_round_trips",
        "roce_note", "roce_mac_fwd", "roce_mac_rev", "roce_wire_fwd", "roce_wire_rev",
        "ualink_requests", "ualink_tl_flits_fwd", "ualink_tl_flits_rev", "ualink_dl_flits_fwd",
        "ualink_dl_flits_rev", "ualink_mac_fwd", "ualink_mac_rev", "ualink_wire_fwd",
        "ualink_wire_rev", "ualink_ack_only_fwd", "ualink_ack_only_rev",
        "ualink_flit_wire_bytes", "ualink_breakdown_fwd", "ualink_breakdown_rev"]
    row = R.render_csv(rep).splitlines()[1].split(",")
    assert row[:4] == ["store", "64", "64", "0"]


def test_mix_is_the_documented_mix() -> None:
    ops = R.mix_ops(200, seed=3)
    got = Counter(ops)
    for op, share in R.MIX:
        assert got[op] == round(200 * share)
    assert sum(share for _, share in R.MIX) == pytest.approx(1.0)
    assert R.mix_ops(200, seed=3) == ops != R.mix_ops(200, seed=4)


def test_headline_counts_the_same_ops_on_both_stacks() -> None:
    from ualink_ref.scapy.roce import count_mapping

    h = R.headline(count_mapping, count=40)
    ops = R.mix_ops(40)
    assert h.ops == 40
    assert h.useful == sum(op.useful_fwd + op.useful_rev for op in ops)
    mac = 0
    for op in ops:
        fc = count_mapping(map_op(op))
        mac += fc.mac_bytes_fwd + fc.mac_bytes_rev
    assert h.roce_mac == mac
    c = measure_ualink(ops)
    assert h.ualink_mac == c.mac_bytes.fwd + c.mac_bytes.rev
    assert h.ualink_wire == (c.dl_flits.fwd + c.dl_flits.rev) * 680


def test_cli_json_csv_text(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    assert main(["compare", "--json", "--repeat", "4"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert len(doc["rows"]) == len(R.default_ops()) == 40
    assert "after FEC" in doc["levels"]["wire"] and "MAC" in doc["levels"]["mac"]
    assert {f["name"] for f in doc["literature"]} >= {"NVLink"}
    assert main(["compare", "--csv", "--repeat", "4", "--pmtu", "4096"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 41 and lines[0].startswith("op,size,")
    assert main(["compare", "--repeat", "4", "--level", "mac"]) == 0
    text = capsys.readouterr().out
    assert "MAC level" in text and "Mixed workload" in text and "81.5%" in text


def test_cli_plot(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("matplotlib")
    out = tmp_path / "eff.png"
    assert main(["compare", "--repeat", "4", "--plot", str(out)]) == 0
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


_op = st.one_of(
    st.builds(CompareOp, st.sampled_from(["load", "store"]),
              st.integers(1, 128).map(lambda w: 4 * w)),
    st.builds(CompareOp, st.sampled_from(list(ATOMIC_KINDS)), st.sampled_from([4, 8])),
)


@given(ops=st.lists(_op, min_size=1, max_size=6))
def test_any_workload_moves_exactly_its_data(ops: list[CompareOp]) -> None:
    c = measure_ualink(ops)
    fwd, rev = Counter(dict(c.breakdown.fwd)), Counter(dict(c.breakdown.rev))
    want_fwd = want_rev = 0
    for op in ops:
        chunks = [min(256, op.size - off) for off in range(0, op.size, 256)]
        if op.kind == "store":
            want_fwd += sum(2 * _beats(n) for n in chunks)
        elif op.kind == "load":
            want_rev += sum(2 * _beats(n) for n in chunks)
        else:
            want_fwd += 2
            want_rev += 2
    assert (fwd["data_halves"], rev["data_halves"]) == (want_fwd, want_rev)
    assert c.wire_bytes.fwd == c.dl_flits.fwd * 680
    assert c.dl_flits.fwd - c.ack_only.fwd >= -(-c.tl_flits.fwd * 64 // 628)
    assert c.dl_flits.rev - c.ack_only.rev >= -(-c.tl_flits.rev * 64 // 628)


@pytest.mark.parametrize("ext,magic", [(".png", b"\x89PNG\r\n\x1a\n"), (".svg", b"<?xml"),
                                       (".pdf", b"%PDF")])
def test_cli_plot_writes_the_format_its_extension_names(ext: str, magic: bytes,
                                                         tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    out = tmp_path / f"eff{ext}"
    assert main(["compare", "--repeat", "2", "--plot", str(out)]) == 0
    data = out.read_bytes()
    assert data.startswith(magic)
    if ext == ".png":  # print resolution: 13 x 9 inches at 300 dpi
        width, height = int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")
        assert (width, height) == (3900, 2700)
    if ext == ".svg":  # text kept as text: the headline, the atomics panel, percent ticks
        text = data.decode()
        for words in ("UALink vs RoCEv2, SUE and UET", "Atomics, 8-byte operand", "60%",
                      "cas", "SUE-AFH"):
            assert words in text, words
