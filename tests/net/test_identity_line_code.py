"""The identity line code (specs/fabric.md F14): a clean, untapped link skips the FEC
encode and decode and changes nothing else.

A tap that does nothing forces the coded path (a tapped chunk must carry wire bytes),
so the same pod run with and without one compares the two paths: every event the
harness hands out (the ``FecDecoded`` of each chunk included), every link end's
counters and every op's result and timing must be equal.
"""

from __future__ import annotations

from typing import Any

import pytest

from ualink_ref.net.harness import Network, WireChunk
from ualink_ref.node import linkend
from ualink_ref.node.config import EndpointConfig, LinkConfig
from ualink_ref.node.endpoint import Endpoint
from ualink_ref.node.linkend import LinkEnd
from ualink_ref.phy.config import PhyConfig
from ualink_ref.sim.fabric import Fabric, FabricConfig
from ualink_ref.sim.workloads import fabric_workload
from ualink_ref.tl import Memory


def _no_op_tap(chunk: WireChunk) -> None:
    """A tap that records nothing (it only forces the coded path)."""


def pod_snapshot(config: FabricConfig, *, tapped: bool) -> dict[str, Any]:
    """Everything observable of one pod run: events per step, counters, results."""
    fabric = Fabric(config)
    if tapped:
        fabric.network.add_tap(_no_op_tap)
    events: list[str] = []
    step = fabric.network.step

    def recording_step() -> list[tuple[str, Any]]:
        out = step()
        events.extend(f"{name} {event!r}" for name, event in out)
        return out

    fabric.network.step = recording_step  # type: ignore[method-assign]
    work = fabric_workload("uniform", 120, config.accelerators, seed=3, load=0.6)
    run = fabric.run(work)
    ends = [ep.link_end for eps in fabric.endpoints for ep in eps]
    ends += [port for sw in fabric.switches for port in sw.ports]
    return {
        "events": events,
        "counters": [end.counters for end in ends],
        "results": [repr(r) for r in run.results],
        "times": (run.issued_at, run.done_at, run.slots),
    }


def count_decodes(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Count the link ends' FEC decodes from now on."""
    calls = [0]
    decode = linkend.decode_wire

    def counted(*args: Any) -> linkend.FecDecoded:
        calls[0] += 1
        return decode(*args)

    monkeypatch.setattr(linkend, "decode_wire", counted)
    return calls


@pytest.mark.parametrize("config", [
    FabricConfig(accelerators=4, seed=2),
    FabricConfig(accelerators=4, planes=2, flow_control="pfc", seed=2),
    FabricConfig(accelerators=4, fec="ll", batch=3, seed=2),
], ids=["kp4", "pfc-planes", "ll-batch"])
def test_uncoded_run_equals_coded_run(config: FabricConfig,
                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """Same events, counters, results and times with the line code skipped; and it is
    skipped (no decode at all untapped, decodes tapped)."""
    calls = count_decodes(monkeypatch)
    plain = pod_snapshot(config, tapped=False)
    assert calls[0] == 0
    coded = pod_snapshot(config, tapped=True)
    assert calls[0] > 0
    assert plain["events"]  # the run did something
    assert plain == coded


def test_a_channel_keeps_the_code(monkeypatch: pytest.MonkeyPatch) -> None:
    """A link with a bit-error channel is decoded (corrections must be made)."""
    calls = count_decodes(monkeypatch)
    pod_snapshot(FabricConfig(accelerators=3, ber=1e-5, seed=1), tapped=False)
    assert calls[0] > 0


def test_different_line_codes_keep_the_code(monkeypatch: pytest.MonkeyPatch) -> None:
    """Ends whose line codes differ (interleave 1 and 2) are never given flits uncoded."""
    calls = count_decodes(monkeypatch)
    net = Network()
    for name, interleave in (("a", 1), ("b", 2)):
        config = EndpointConfig(link=LinkConfig(phy=PhyConfig("ll", interleave)))
        net.add_port(name, Endpoint(1 if name == "a" else 2, Memory(), config=config))
    net.connect("a", "b", latency=1)
    for _ in range(20):  # link training sends flits both ways (and never completes)
        net.step()
    assert calls[0] > 0


def test_seeded_bug_in_the_uncoded_path_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    """The comparison can fail: an uncoded poll that forgets the wire bytes it stands for
    is told apart from the coded run."""
    config = FabricConfig(accelerators=3, seed=4)
    coded = pod_snapshot(config, tapped=True)

    def forgetful(self: LinkEnd, now: float, max_flits: int) -> tuple[bytes, int]:
        flits, count = self._poll_flits(now, max_flits)
        return flits, count  # no flits_sent / wire_bytes_sent

    monkeypatch.setattr(LinkEnd, "poll_uncoded", forgetful)
    assert pod_snapshot(config, tapped=False)["counters"] != coded["counters"]


def test_a_tap_added_with_uncoded_chunks_in_flight_is_refused() -> None:
    """A tap must see wire bytes, so it cannot be added while flits are in flight uncoded."""
    fabric = Fabric(FabricConfig(accelerators=2, cable_m=30.0))
    fabric.network.step()  # link training: flits in flight on a 30 m link
    assert fabric.network.in_flight
    with pytest.raises(ValueError, match="add taps before running"):
        fabric.network.add_tap(_no_op_tap)
