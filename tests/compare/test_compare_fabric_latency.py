"""The ualink column's fabric-measured latencies (compare/fabric_latency.py) and their CLI flags."""

from __future__ import annotations

import pytest

from ualink_ref.cli import build_parser
from ualink_ref.compare import fabric_latency as FL


def test_zero_load_beside_the_static_model_of_the_same_link() -> None:
    m = FL.measure(cable_m=2.0)
    assert [z.op for z in m.zero_load] == ["load", "store"] and not m.loaded
    for z in m.zero_load:
        s = z.static
        # By hand: 4 link crossings of one 680-byte flit on one 200 Gb/s lane, 4 x 2 m at
        # 5 ns/m, 2 switch hops of 200 ns; a 680-byte flit is exactly one RS(544,514) codeword.
        assert float(s.serialization) == pytest.approx(4 * 680 * 8 / 200)
        assert (float(s.cable), float(s.switch), float(s.fec_accumulation)) == (40, 400, 0)
        # The simulation adds its TL/DL pipeline on top, in whole 25.6 ns slots.
        assert float(s.total) <= z.simulated_ns < 1000
        assert z.simulated_ns / 25.6 == pytest.approx(round(z.simulated_ns / 25.6))
    text = FL.render_text(m)
    assert "simulated" in text and "--loaded" in text
    assert all(line == line.rstrip() and len(line) <= 100 for line in text.splitlines())


def test_loaded_percentiles_and_their_decomposition() -> None:
    m = FL.measure(loaded=True, load=0.8, accelerators=4, ops=200, seed=3)
    assert [x.op for x in m.loaded] == ["load", "store"]
    zero = {z.op: z.simulated_ns for z in m.zero_load}
    for x in m.loaded:
        assert x.ok and x.ops == 200
        assert x.p50_ns <= x.p99_ns <= x.p999_ns <= x.max_ns
        # No op beats the same op alone on a warm pod of the same links and switch, and
        # the breakdown's parts add up to the measured p99.
        assert x.static_ns == zero[x.op] <= x.p50_ns
        assert float(x.breakdown_p99.total) == pytest.approx(x.p99_ns)
        assert float(x.breakdown_p99.queueing) == pytest.approx(x.p99_ns - x.static_ns)
    doc = FL.as_json(m)
    assert doc["loaded"]["rows"][0]["p99_ns"] == m.loaded[0].p99_ns
    assert "Loaded (4 accelerators, uniform, load 0.8" in FL.render_text(m)


def test_compare_flags() -> None:
    args = build_parser().parse_args(["compare"])
    assert not args.loaded and args.load == 0.5 and args.loaded_accelerators == 8
    args = build_parser().parse_args(["compare", "--loaded", "--load", "0.9", "--pattern",
                                      "incast", "--flow-control", "pfc", "--loaded-ops", "50"])
    assert (args.loaded, args.load, args.pattern, args.flow_control, args.loaded_ops) == (
        True, 0.9, "incast", "pfc", 50)
    for bad in (["--load", "0"], ["--load", "5"], ["--loaded-accelerators", "1"],
                ["--pattern", "ring"]):
        with pytest.raises(SystemExit):
            build_parser().parse_args(["compare", *bad])
