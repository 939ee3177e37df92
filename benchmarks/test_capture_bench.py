"""Capture reading and dissection, against baselines timed in the same run.

Run: ``python -m pytest benchmarks/test_capture_bench.py --benchmark-enable``.

* ``read``: :func:`ualink_ref.capture.format.decode_capture` (container + pseudo-headers)
  against Scapy's ``rdpcap`` of the same file with the ualink_ref layers registered
  (full Scapy dissection): ratio = our time / Scapy's, per record.
* ``dissect``: :func:`ualink_ref.capture.dissect.dissect_records` (CRC, DL state, TL
  reassembly and field decode) against a bare ``DLFlit.decode`` of the same flits:
  ratio = how many bare DL decodes one dissected flit costs (issue 12: <= 3).
* ``scapy view``: Scapy's ``rdpcap`` with the TL view of every record read
  (``pkt.tl_flits``) against a plain ``rdpcap`` of the same file (issue 12: <= 2).

``benchmarks/stack_ratios.py`` prints the same ratios (and the endpoint's) without pytest.
"""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Any

import pytest
from conftest import RATIOS, median_time

from ualink_ref.capture.dissect import dissect_records
from ualink_ref.capture.format import decode_capture, encode_capture
from ualink_ref.capture.run import capture_simulation
from ualink_ref.dl import DLFlit
from ualink_ref.errors import DecodeError
from ualink_ref.phy.config import PhyConfig
from ualink_ref.sim.config import SimConfig
from ualink_ref.sim.workloads import random_workload

RECORDS, _REPORT = capture_simulation(random_workload(400, 1),
                                      SimConfig(phy=PhyConfig(fec="kp4"), ber=0.0, seed=1))
DATA = encode_capture(RECORDS)


def _bare_decode() -> None:
    for r in RECORDS:
        with contextlib.suppress(DecodeError):
            DLFlit.decode(r.data)


def _record(benchmark: Any, name: str, baseline: float) -> None:
    if benchmark.disabled or benchmark.stats is None:
        return
    n = len(RECORDS)
    ours = benchmark.stats.stats.median / n
    base = baseline / n
    benchmark.extra_info.update({"records_per_s": 1 / ours, "ratio": ours / base})
    RATIOS[name] = (ours, base, ours / base)


def test_read(benchmark: Any, tmp_path: Path) -> None:
    pytest.importorskip("scapy")
    from scapy.utils import rdpcap

    import ualink_ref.scapy_layers  # noqa: F401  (registers link type 147)

    path = tmp_path / "bench.pcap"
    path.write_bytes(DATA)
    benchmark.group = "capture"
    result = benchmark(lambda: decode_capture(DATA))
    assert result == RECORDS
    scapy_time = median_time(lambda: rdpcap(str(path)), 5, warm_up=False)
    _record(benchmark, "capture read, time / Scapy rdpcap", scapy_time)


def test_dissect(benchmark: Any) -> None:
    benchmark.group = "capture"
    flits = benchmark(lambda: dissect_records(RECORDS))
    assert len(flits) == len(RECORDS)
    _record(benchmark, "dissect, time / DLFlit.decode", median_time(_bare_decode, 5, warm_up=False))


def test_scapy_view(benchmark: Any, tmp_path: Path) -> None:
    pytest.importorskip("scapy")
    from scapy.utils import rdpcap

    import ualink_ref.scapy_layers  # noqa: F401  (registers link type 147)

    path = tmp_path / "bench.pcap"
    path.write_bytes(DATA)

    def view() -> int:
        pkts = rdpcap(str(path))
        return sum(len(p.tl_flits or ()) for p in pkts)

    benchmark.group = "capture"
    assert benchmark(view) > len(RECORDS)
    _record(benchmark, "rdpcap + TL view, time / rdpcap",
            median_time(lambda: rdpcap(str(path)), 5, warm_up=False))
