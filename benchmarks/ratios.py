"""Print KP4 speed ratios against reedsolo without pytest (same data as test_rs_bench.py).

Usage: ``python benchmarks/ratios.py`` from the repository root. Medians of
several rounds; batches of 1,000 codewords for ualink_ref, 20 for reedsolo.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import numpy as np
import reedsolo
from conftest import median_time

from ualink_ref.phy import KP4

BATCH, BASE = 1000, 20


def main() -> None:
    rs = reedsolo.RSCodec(nsym=30, nsize=544, c_exp=10, prim=0x409, fcr=0, generator=2)
    rng = np.random.default_rng(2026)
    msgs = rng.integers(0, 1024, (BATCH, 514))
    clean = KP4.encode(msgs)
    bad = clean.copy()
    order = np.argsort(rng.random((BATCH, 544)), axis=1)[:, :15]
    bad[np.arange(BATCH)[:, None], order] ^= rng.integers(1, 1024, (BATCH, 15)).astype(np.uint16)
    cases: list[tuple[str, Callable[[], Any], Callable[[], Any]]] = [
        ("encode", lambda: KP4.encode(msgs), lambda: [rs.encode(m) for m in msgs_l]),
        ("decode, 0 errors", lambda: KP4.decode(clean), lambda: [rs.decode(w) for w in clean_l]),
        ("decode, 15 errors", lambda: KP4.decode(bad), lambda: [rs.decode(w) for w in bad_l]),
    ]
    msgs_l = [m.tolist() for m in msgs[:BASE]]
    clean_l = [w.tolist() for w in clean[:BASE]]
    bad_l = [w.tolist() for w in bad[:BASE]]
    for name, ours, theirs in cases:
        per_ours = median_time(ours, 15) / BATCH
        per_base = median_time(theirs, 5) / BASE
        print(
            f"KP4 {name:<18} ualink_ref {per_ours * 1e6:8.2f} us/cw  "
            f"reedsolo {per_base * 1e6:9.1f} us/cw  ratio {per_base / per_ours:7.1f}x"
        )


if __name__ == "__main__":
    main()
