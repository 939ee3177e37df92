"""KP4 codec at batches of 1, 8 and 1,000, with 0 / 7 / 15 errors, numpy and fast paths.

Run: ``python -m pytest benchmarks/test_fec_small_bench.py --benchmark-enable``.
Each case is divided into reedsolo's per-codeword time for the same operation,
measured in the same run (first test of each case), and the ratio goes to
``benchmark.extra_info["ratio_vs_reedsolo"]`` and the "speed ratios" summary.
``python benchmarks/ratios.py`` prints the same table with interleaved rounds
and the issue-12 acceptance lines.
"""

from __future__ import annotations

from typing import Any

import pytest
from conftest import RATIOS
from fec_cases import BASE_COUNT, BATCHES, Data, make_data, ours_job, paths, reedsolo_job

CASES = [("encode", 0), ("decode", 0), ("decode", 7), ("decode", 15)]
BASELINE: dict[str, float] = {}


def _name(op: str, errors: int) -> str:
    return "encode" if op == "encode" else f"decode{errors}"


@pytest.fixture(scope="module")
def data() -> Data:
    return make_data()


@pytest.mark.parametrize(("op", "errors"), CASES)
def test_reedsolo(benchmark: Any, data: Data, op: str, errors: int) -> None:
    benchmark.group = f"kp4-{_name(op, errors)}"
    benchmark.pedantic(reedsolo_job(op, errors, data), rounds=3, iterations=1, warmup_rounds=1)
    if not benchmark.disabled and benchmark.stats is not None:
        BASELINE[_name(op, errors)] = benchmark.stats.stats.median / BASE_COUNT


@pytest.mark.parametrize("path", list(paths()))
@pytest.mark.parametrize("batch", BATCHES)
@pytest.mark.parametrize(("op", "errors"), CASES)
def test_ualink(benchmark: Any, data: Data, op: str, errors: int, batch: int, path: str) -> None:
    case = _name(op, errors)
    benchmark.group = f"kp4-{case}"
    job = ours_job(op, errors, batch, data)
    with paths()[path]():
        job()  # tables / kernels ready before timing
        result = benchmark(job)
    if op == "decode":
        assert not result.uncorrectable.any()
        assert (result.corrected == errors).all()
    if benchmark.disabled or benchmark.stats is None or case not in BASELINE:
        return
    ours = benchmark.stats.stats.median / batch
    ratio = BASELINE[case] / ours
    benchmark.extra_info.update({"us_per_cw": ours * 1e6, "ratio_vs_reedsolo": ratio})
    RATIOS[f"KP4 {case} b{batch} {path}"] = (ours, BASELINE[case], ratio)
