"""Shared data and timing for the FEC speed ratios (ratios.py and test_fec_small_bench.py).

Cases: KP4 encode and decode with 0, 7 and 15 symbol errors per codeword, at
batches of 1, 8 and 1,000 codewords, on the numpy path and on the compiled
path (numba, when installed), each against reedsolo timed in the same run.
Timing is by interleaved rounds: every round times reedsolo and each of our
variants once, so a change in machine load hits both sides of a ratio.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass
from typing import Any

import numpy as np
import reedsolo

from ualink_ref.phy import KP4
from ualink_ref.phy.accel import compiled_available, use_compiled

BATCHES = (1, 8, 1000)
ERRORS = (0, 7, 15)
#: Codewords per reedsolo round (pure Python: milliseconds per codeword).
BASE_COUNT = 8

#: The clock of :func:`per_call`: wall time by default; ``time.thread_time`` (CPU time of
#: this thread) leaves out the time other processes on a shared machine hold the core,
#: which otherwise hits a long reedsolo call harder than our short ones.
CLOCK: list[Callable[[], float]] = [time.perf_counter]
#: Shortest timed window of :func:`per_call`, seconds. On a loaded shared machine a short
#: window is either untouched or hit by a whole time slice of another process, so its
#: median swings several-fold; windows of tens of ms average that out like reedsolo's
#: long calls do (measured: 1,000-call windows give the same wall/CPU ratio for both).
WINDOW = [0.05]

RS = reedsolo.RSCodec(nsym=30, nsize=544, c_exp=10, prim=0x409, fcr=0, generator=2)


@dataclass(frozen=True)
class Data:
    """1,000 random KP4 messages, their codewords, and the codewords with e errors each."""

    msgs: np.ndarray
    words: dict[int, np.ndarray]  # errors per codeword -> (1000, 544) received words


def make_data(seed: int = 2026) -> Data:
    """The benchmark inputs (deterministic by seed)."""
    rng = np.random.default_rng(seed)
    msgs = rng.integers(0, 1024, (max(BATCHES), 514))
    with use_compiled(False):
        clean = KP4.encode(msgs)
    words = {0: clean}
    for count in ERRORS[1:]:
        bad = clean.copy()
        order = np.argsort(rng.random(bad.shape), axis=1)[:, :count]
        rows = np.arange(bad.shape[0])[:, None]
        bad[rows, order] ^= rng.integers(1, 1024, (bad.shape[0], count)).astype(np.uint16)
        words[count] = bad
    return Data(msgs, words)


def paths() -> dict[str, Callable[[], AbstractContextManager[None]]]:
    """Engine name -> context that selects it ("fast" only when numba imports)."""
    out: dict[str, Callable[[], AbstractContextManager[None]]] = {
        "numpy": lambda: use_compiled(False)
    }
    if compiled_available():
        out["fast"] = nullcontext
    return out


def ours_job(op: str, errors: int, batch: int, d: Data) -> Callable[[], Any]:
    """One call of our codec on ``batch`` codewords."""
    if op == "encode":
        msgs = d.msgs[:batch]
        return lambda: KP4.encode(msgs)
    words = d.words[errors][:batch]
    return lambda: KP4.decode(words)


def reedsolo_job(op: str, errors: int, d: Data) -> Callable[[], Any]:
    """reedsolo on BASE_COUNT codewords, one at a time (it has no batch API)."""
    if op == "encode":
        items = [m.tolist() for m in d.msgs[:BASE_COUNT]]
        return lambda: [RS.encode(m) for m in items]
    words = [w.tolist() for w in d.words[errors][:BASE_COUNT]]
    return lambda: [RS.decode(w) for w in words]


def per_call(job: Callable[[], Any], min_seconds: float | None = None) -> float:
    """Seconds per call of ``job``, from a loop of at least ``WINDOW`` seconds (one round)."""
    if min_seconds is None:
        min_seconds = WINDOW[0]
    reps = 1
    clock = CLOCK[0]
    while True:
        start = clock()
        for _ in range(reps):
            job()
        elapsed = clock() - start
        if elapsed >= min_seconds:
            return elapsed / reps
        reps *= 4


