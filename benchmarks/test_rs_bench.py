"""KP4 codec speed against reedsolo, in the same run (batches of 1,000 codewords).

Run: ``python -m pytest benchmarks --benchmark-enable``. Each ``ualink_ref``
benchmark divides reedsolo's per-codeword time (measured by the matching
``reedsolo`` benchmark earlier in this file, or inline when run alone) by its
own, stores the ratio in ``benchmark.extra_info["ratio_vs_reedsolo"]`` and
prints it in the "speed ratios" section of the terminal summary.
Targets (issue 2): encode >= 200x, decode with 15 errors per codeword >= 50x.
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import reedsolo
from conftest import RATIOS

from ualink_ref.phy import KP4, decode_flits, encode_flits
from ualink_ref.phy.gf import mul_table
from ualink_ref.phy.reedsolomon import code_tables

BATCH = 1000
#: Codewords per reedsolo round (pure Python: a few ms per codeword).
BASE_COUNT = 20
ROOT = Path(__file__).resolve().parent.parent

RS = reedsolo.RSCodec(nsym=30, nsize=544, c_exp=10, prim=0x409, fcr=0, generator=2)
BASELINE: dict[str, float] = {}  # case -> reedsolo seconds per codeword


@dataclass(frozen=True)
class Data:
    msgs: np.ndarray
    clean: np.ndarray
    bad15: np.ndarray


@pytest.fixture(scope="module")
def data() -> Data:
    rng = np.random.default_rng(2026)
    msgs = rng.integers(0, 1024, (BATCH, 514))
    clean = KP4.encode(msgs)
    order = np.argsort(rng.random((BATCH, 544)), axis=1)[:, :15]
    bad = clean.copy()
    rows = np.arange(BATCH)[:, None]
    bad[rows, order] ^= rng.integers(1, 1024, (BATCH, 15)).astype(np.uint16)
    return Data(msgs, clean, bad)


def _reedsolo_job(case: str, d: Data) -> Callable[[], Any]:
    if case == "encode":
        items = [m.tolist() for m in d.msgs[:BASE_COUNT]]
        return lambda: [RS.encode(m) for m in items]
    words = d.clean if case == "decode0" else d.bad15
    items = [w.tolist() for w in words[:BASE_COUNT]]
    return lambda: [RS.decode(w) for w in items]


def _inline_baseline(case: str, d: Data) -> float:
    job = _reedsolo_job(case, d)
    times = []
    for _ in range(3):
        start = time.perf_counter()
        job()
        times.append(time.perf_counter() - start)
    return statistics.median(times) / BASE_COUNT


def _record(benchmark: Any, case: str, d: Data) -> None:
    if benchmark.disabled or benchmark.stats is None:
        return
    ours = benchmark.stats.stats.median / BATCH
    base = BASELINE.get(case) or _inline_baseline(case, d)
    ratio = base / ours
    benchmark.extra_info.update(
        {"ours_us_per_cw": ours * 1e6, "reedsolo_us_per_cw": base * 1e6, "ratio_vs_reedsolo": ratio}
    )
    RATIOS[f"KP4 {case}"] = (ours, base, ratio)


CASES = ["encode", "decode0", "decode15"]


@pytest.mark.parametrize("case", CASES)
def test_reedsolo(benchmark: Any, data: Data, case: str) -> None:
    benchmark.group = f"kp4-{case}"
    benchmark.extra_info["codewords_per_round"] = BASE_COUNT
    benchmark.pedantic(_reedsolo_job(case, data), rounds=5, iterations=1, warmup_rounds=1)
    if not benchmark.disabled and benchmark.stats is not None:
        BASELINE[case] = benchmark.stats.stats.median / BASE_COUNT


def test_ualink_encode(benchmark: Any, data: Data) -> None:
    benchmark.group = "kp4-encode"
    out = benchmark(KP4.encode, data.msgs)
    assert out.shape == (BATCH, 544)
    _record(benchmark, "encode", data)


def test_ualink_decode0(benchmark: Any, data: Data) -> None:
    benchmark.group = "kp4-decode0"
    result = benchmark(KP4.decode, data.clean)
    assert result.ok
    _record(benchmark, "decode0", data)


def test_ualink_decode15(benchmark: Any, data: Data) -> None:
    benchmark.group = "kp4-decode15"
    result = benchmark(KP4.decode, data.bad15)
    assert result.ok and (result.corrected == 15).all()
    _record(benchmark, "decode15", data)


def test_flits_round_trip_at_ber_1e3(benchmark: Any) -> None:
    # 1,000 flits through encode + BER 1e-3 errors + decode (no baseline: context).
    from ualink_ref.phy import BitErrorChannel

    flits = np.random.default_rng(1).integers(0, 256, 640 * BATCH, dtype=np.uint8).tobytes()
    wire = BitErrorChannel(1e-3, seed=1).apply(encode_flits(flits, "kp4"))
    benchmark.group = "kp4-flits"
    result = benchmark(decode_flits, wire, "kp4")
    assert result.flits[:640] == flits[:640] or result.uncorrectable[0]


def test_table_build(benchmark: Any) -> None:
    # First-use cost of every KP4 table (numpy path: encoder, syndrome, Chien byte tables
    # and the GF product table; compiled path: the 64 KB shift-register table).
    def build() -> None:
        code_tables.cache_clear()
        mul_table.cache_clear()
        tables = KP4.tables
        _ = (tables.encoder, tables.syndrome, tables.chien, tables.lanes)
        mul_table()

    benchmark.group = "first-use"
    benchmark.pedantic(build, rounds=3, iterations=1)


def test_cold_import(benchmark: Any) -> None:
    # `import ualink_ref` in a fresh interpreter, minus a bare interpreter start.
    def run(code: str) -> float:
        start = time.perf_counter()
        subprocess.run([sys.executable, "-c", code], cwd=ROOT, check=True)
        return time.perf_counter() - start

    benchmark.group = "first-use"
    benchmark.pedantic(run, args=("import ualink_ref",), rounds=5, iterations=1)
    if not benchmark.disabled and benchmark.stats is not None:
        bare = statistics.median(run("pass") for _ in range(5))
        benchmark.extra_info["import_seconds_over_bare"] = benchmark.stats.stats.median - bare
