"""How ``dissect_pinned.pcap`` and its expected outputs were made (kept for the record).

Run once, with the code *before* the issue-12 dissection speed-up (main at 69167b6):

    PYTHONPATH=<old checkout> python tests/capture/data/make_dissect_pinned.py OUT.pcap
    for m in "" -v --json: ualink-ref dissect $m OUT.pcap | gzip -9 -n > ...

The capture: 30 records from the start of a KP4 run at BER 2e-4 with addresses above
2**24 (corrected symbols, compressed requests whose address-cache way holds non-zero
bits, credit returns), with one data flit repeated (duplicate) and one dropped (gap);
20 records from the middle of another run on ports 5/6 (synchronisation, compressed
requests whose way is unknown); the first 14
records of the atomics scenario on ports 3/4; and 10 DL flits on port 7 whose TL bytes
are seeded random control half-flits (unknown FTYPEs and commands: TL flits that do not
decode, resynchronisation).
"""

from __future__ import annotations

import random
import sys
from dataclasses import replace
from pathlib import Path

from ualink_ref.capture.format import CaptureRecord, encode_capture
from ualink_ref.capture.run import capture_simulation, run_scenario
from ualink_ref.dl import DLFlit
from ualink_ref.dl.formats import FlitOp
from ualink_ref.phy.config import PhyConfig
from ualink_ref.sim.config import SimConfig
from ualink_ref.sim.workloads import random_workload


def _half(rng: random.Random) -> bytes:
    """A seeded half-flit: random bytes, or 8 sectors with mostly known FTYPEs."""
    if rng.random() < 0.3:
        return bytes(rng.randrange(256) for _ in range(32))
    out = bytearray()
    for _ in range(8):
        word = rng.getrandbits(28) | rng.choice([0, 0, 1, 1, 2, 3, 3, 4, 5, 6, 7]) << 28
        out += (word if rng.random() < 0.8 else 0).to_bytes(4, "big")
    return bytes(out)


def records() -> list[CaptureRecord]:
    """The pinned capture's records."""
    # from link start, addresses above 2**24: ways loaded and used with non-zero bits
    recs = capture_simulation(random_workload(200, 2, base=0x0500_0000),
                              SimConfig(phy=PhyConfig(fec="kp4"), ber=2e-4, seed=2))[0][:30]
    recs.insert(20, recs[14])  # a duplicate
    del recs[26]  # a gap (or a lost command flit)
    # from the middle of another run (ports 5/6): synchronisation, unknown ways
    middle = capture_simulation(random_workload(300, 2),
                                SimConfig(phy=PhyConfig(fec="kp4"), ber=2e-4, seed=2))[0][13:33]
    recs += [replace(r, port=5 if r.direction == "a_to_b" else 6) for r in middle]
    recs += [replace(r, port=3 if r.direction == "a_to_b" else 4)
             for r in run_scenario("atomics").records[:14]]
    rng = random.Random(12)
    for seq in range(1, 11):
        tl = b"".join(_half(rng) for _ in range(2 * rng.choice([1, 3, 5, 9])))
        flit = DLFlit(FlitOp.EXPLICIT, flit_seq=seq, tl=tl)
        recs.append(CaptureRecord(data=flit.encode(), kind="dl_flit", direction="a_to_b",
                                  port=7, fec_mode="kp4", slot=10_000 + seq))
    return recs


if __name__ == "__main__":
    Path(sys.argv[1]).write_bytes(encode_capture(records()))
