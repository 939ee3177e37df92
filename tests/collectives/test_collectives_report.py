"""Metrics (nccl-tests' definitions), MoE routing, pod lanes and the CLI."""

from __future__ import annotations

import json

import pytest

from ualink_ref.cli import main
from ualink_ref.collectives.algorithms import build
from ualink_ref.collectives.moe import route_tokens
from ualink_ref.collectives.report import make_report, sweep_table
from ualink_ref.collectives.run import run_collective
from ualink_ref.errors import ConfigError
from ualink_ref.sim.fabric import FabricConfig
from ualink_ref.sizes import SLOT_NS


def test_bus_bandwidth_follows_nccl_tests() -> None:
    pod = FabricConfig(accelerators=4, max_outstanding=256)
    for op, factor in (("all-reduce", 2 * 3 / 4), ("all-gather", 3 / 4), ("broadcast", 1.0)):
        rep = make_report(run_collective(build(op, "", 4, 8192, "int32"), pod))
        assert rep.exact
        seconds = rep.time_us * 1e-6
        assert rep.algbw_gbps == pytest.approx(8192 / seconds / 1e9)
        assert rep.busbw_gbps == pytest.approx(rep.algbw_gbps * factor)
        assert 0 < max(u.up for u in rep.links) <= 1 and sum(rep.phases.values()) <= 1.0001
    table = sweep_table([rep]).splitlines()
    assert table[0].split()[:8] == ["size", "count", "type", "redop", "time", "algbw",
                                    "busbw", "#wrong"]
    assert table[2].split()[0] == "8192"


def test_moe_routing_is_seeded_and_skewed() -> None:
    a = route_tokens(8, 256 * 1024, seed=4)
    assert a == route_tokens(8, 256 * 1024, seed=4) and a != route_tokens(8, 256 * 1024, seed=5)
    assert a.tokens * a.top_k * a.token_bytes == 256 * 1024
    load = a.expert_load()
    assert sum(load) == 8 * a.tokens * a.top_k and max(load) > 2 * sum(load) / len(load)
    assert all(len(set(experts)) == a.top_k for rank in a.choices for experts in rank)
    slots = sorted(slot for src in range(8) for _, _, slot in a.sent(src, 3))
    assert slots == list(range(sum(a.pairs(src, 3) for src in range(8))))


def test_lanes_scale_the_slot() -> None:
    assert FabricConfig(lanes=4).slot_ns == SLOT_NS / 4
    assert FabricConfig(lanes=4, switch_ns=200).switch_slots == 32
    with pytest.raises(ConfigError):
        FabricConfig(lanes=3)


def test_bad_sizes_are_config_errors() -> None:
    with pytest.raises(ConfigError):
        build("all-to-all", "direct", 8, 1000, "int32")
    with pytest.raises(ConfigError):
        build("all-reduce", "tree", 8, 4096, "int32")
    with pytest.raises(ConfigError):
        build("all-reduce", "ring", 8, 4098, "float32")


def test_cli_collective_json_and_usage_errors(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["collective", "--op", "all-to-all", "--accelerators", "4", "--size", "4K",
                 "--json", "--no-progress"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["exact"] is True and out["op"] == "all-to-all" and out["size"] == 4096
    assert main(["collective", "--size", "1001", "--no-progress"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "multiple of 4" in err[0]


def test_cli_sweep_table_plot_and_link_failure(tmp_path, capsys: pytest.CaptureFixture[str]
                                               ) -> None:
    pytest.importorskip("matplotlib", reason="matplotlib (the 'plot' extra) not installed")
    plot = tmp_path / "busbw.png"
    assert main(["collective", "--accelerators", "4", "--algo", "ring,two-shot", "--sweep",
                 "4K:16K:4", "--flow-control", "cbfc,pfc", "--plot", str(plot),
                 "--no-progress"]) == 0
    rows = [line.split() for line in capsys.readouterr().out.splitlines()[2:]]
    assert [(r[0], r[8]) for r in rows] == [("4096", "ring,"), ("16384", "ring,"),
                                            ("4096", "two-shot,"), ("16384", "two-shot,")] * 2
    assert plot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert main(["collective", "--accelerators", "4", "--size", "64K", "--link-down",
                 "0:1:100", "--no-progress"]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    # The switch answers the dead link's outstanding ops DATA_ERROR (fabric.md H7), which
    # ends the collective before the 64-slot fault check sees the link (C7).
    assert len(err) == 1 and "link p0.link1" in err[0] and "all 4 ranks" in err[0]
    assert main(["collective", "--algo", "ring,one-shot", "--no-progress"]) == 2


def test_sweep_sizes_fit_each_operation() -> None:
    from ualink_ref.collectives.algorithms import fit_size

    assert fit_size("all-reduce", 8, 8) == 8 and fit_size("all-reduce", 8, 6) == 4
    assert fit_size("all-gather", 8, 100) == 96 and fit_size("all-gather", 8, 16) is None
    assert fit_size("reduce-scatter", 8, 30) is None and fit_size("reduce-scatter", 8, 34) == 32
    for size in (16, 100, 4096, 20000, 1 << 20):
        fitted = fit_size("moe", 8, size)
        assert fitted is not None and fitted <= size
        build("moe", "direct", 8, fitted, "int32")  # accepted as it is
