"""Print DL flit encode / decode rates against zlib.crc32 without pytest.

Usage: ``python benchmarks/dl_rates.py`` from the repository root (medians of 15 rounds).
"""

from __future__ import annotations

import sys
import zlib
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from conftest import median_time
from test_dl_bench import BATCH, FLITS, WIRE

from ualink_ref.dl import DataLink, DLFlit
from ualink_ref.net.link_pair import LinkPair


def main() -> None:
    base = median_time(lambda: [zlib.crc32(w[:636]) for w in WIRE]) / BATCH
    for name, job in (("encode", lambda: [f.encode() for f in FLITS]),
                      ("decode+CRC", lambda: [DLFlit.decode(w) for w in WIRE])):
        per = median_time(job) / BATCH
        print(f"DL flit {name:<11} {1 / per:10.0f} flits/s  {per * 1e6:7.2f} us/flit   "
              f"zlib.crc32 {base * 1e6:5.2f} us/flit   ours/zlib {per / base:6.1f}x")

    def link() -> None:
        pair = LinkPair(DataLink(), DataLink())
        pair.a.send([bytes(64)] * 1000)
        pair.b.send([bytes(64)] * 1000)
        pair.run(100)

    per_slot = median_time(link, 5) / 100
    print(f"LinkPair, both ends saturated: {1 / per_slot:8.0f} slots/s (2 DL flits per slot)")


if __name__ == "__main__":
    main()
