"""DL flit encode and decode (with CRC check) in flits/s, against zlib.crc32 in the same run.

Run: ``python -m pytest benchmarks/test_dl_bench.py --benchmark-enable``. The
baseline is ``zlib.crc32`` over the same 636 bytes (the CRC alone, in C): the
ratio says how many bare CRCs one full encode or decode costs. Figures go to
``benchmark.extra_info`` (``flits_per_s``, ``cost_in_zlib_crcs``) and the
"speed ratios" terminal summary (``ours`` / ``baseline`` there are per flit, and
``ratio`` is our time / zlib's time: how many bare CRCs one encode or decode costs).
``python benchmarks/dl_rates.py`` prints the same figures without pytest.
"""

from __future__ import annotations

import random
import statistics
import time
import zlib
from typing import Any

import pytest
from conftest import RATIOS

from ualink_ref.dl import DataLink, DLFlit, FlitOp
from ualink_ref.net.link_pair import LinkPair

BATCH = 200


def _flits() -> list[DLFlit]:
    rng = random.Random(2026)
    out = []
    for i in range(BATCH):
        tl = rng.randbytes(628)
        if i % 2:
            out.append(DLFlit(FlitOp.EXPLICIT, flit_seq=i % 511 + 1, tl=tl,
                              first_tl_start=4 * (i % 16)))
        else:
            out.append(DLFlit(FlitOp.ACK, ack_req_seq=i % 511, flit_seq_lo=i % 8, tl=tl,
                              first_tl_start=4 * (i % 16)))
    return out


FLITS = _flits()
WIRE = [f.encode() for f in FLITS]


def _zlib_per_flit() -> float:
    times = []
    for _ in range(20):
        start = time.perf_counter()
        for w in WIRE:
            zlib.crc32(w[:636])
        times.append(time.perf_counter() - start)
    return statistics.median(times) / BATCH


def _record(benchmark: Any, name: str, per_round: int) -> None:
    if benchmark.disabled or benchmark.stats is None:
        return
    ours = benchmark.stats.stats.median / per_round
    base = _zlib_per_flit()
    benchmark.extra_info.update({"flits_per_s": 1 / ours, "us_per_flit": ours * 1e6,
                                 "zlib_crc_us_per_flit": base * 1e6,
                                 "cost_in_zlib_crcs": ours / base})
    RATIOS[name] = (ours, base, ours / base)


def test_encode(benchmark: Any) -> None:
    benchmark.group = "dl-flit"
    benchmark(lambda: [f.encode() for f in FLITS])
    _record(benchmark, "DL encode, time / zlib.crc32", BATCH)


def test_decode_with_crc(benchmark: Any) -> None:
    benchmark.group = "dl-flit"
    result = benchmark(lambda: [DLFlit.decode(w) for w in WIRE])
    assert result == FLITS
    _record(benchmark, "DL decode+CRC, time / zlib.crc32", BATCH)


@pytest.mark.parametrize("loaded", [True], ids=["both-ends-saturated"])
def test_link_pair_slots(benchmark: Any, loaded: bool) -> None:
    """Two DataLinks exchanging full flits both ways: slots per second (2 flits a slot)."""
    slots = 100

    def job() -> None:
        pair = LinkPair(DataLink(), DataLink())
        tl = bytes(64)
        pair.a.send([tl] * 1000)
        pair.b.send([tl] * 1000)
        pair.run(slots)

    benchmark.group = "dl-link"
    benchmark(job)
    if not benchmark.disabled and benchmark.stats is not None:
        benchmark.extra_info["slots_per_s"] = slots / benchmark.stats.stats.median
