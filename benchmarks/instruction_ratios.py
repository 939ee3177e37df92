"""Instruction counts of the engines against an older checkout, under valgrind's callgrind.

Usage: ``python benchmarks/instruction_ratios.py --old PATH [--ops N]`` from the repository
root (needs ``valgrind``). Timing on a shared machine swings by a quarter from run to run;
instruction counts do not: each side's run is counted twice (N ops, and the same start-up
with no timed ops) and the difference is the work of the N ops. Reported: new/old speed
(old instructions over new) for

* ``endpoint`` / ``endpoint_read``: N 64-byte WriteFulls / Reads through two Endpoints
  (kp4, no errors, the simulation of ``stack_ratios.py --only endpoint``);
* ``simulate``: ``ualink-ref simulate --ber 1e-4 --ops N`` as ``stack_ratios.py`` runs
  it (random ops, BER 1e-4 on both directions, the run's check included);
* ``tl``: N 64-byte WriteFulls between two bare TransactionLayers (the harness's
  ``TLPair``);
* ``dl``: N TL flits through two bare DataLinks (the harness's ``LinkPair``, a clean
  channel).

Both sides run on numpy alone (``UALINK_REF_NO_NUMBA=1``: numba's compiler under valgrind
takes minutes), the old one with ``PYTHONPATH=PATH``; the workload code below works with
the layout before the redesign (``ualink_ref.stack``) and the current one.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

_ENDPOINT = '''
try:
    from ualink_ref.sim.config import SimConfig
    from ualink_ref.sim.link_run import Simulation
    from ualink_ref.sim.workloads import uniform_workload
    make = lambda n: Simulation(uniform_workload(n, "KIND"), SimConfig(max_outstanding=256))
except ImportError:
    from ualink_ref.stack.sim import Simulation, uniform_workload
    make = lambda n: Simulation(uniform_workload(n, "KIND"), max_outstanding=256)
make(50).run(verify=False)
if N:
    make(N).run(verify=False)
'''

RUNS = {
    "endpoint": _ENDPOINT.replace("KIND", "write"),
    "endpoint_read": _ENDPOINT.replace("KIND", "read"),
    "simulate": '''
try:
    from ualink_ref.sim.config import SimConfig
    from ualink_ref.sim.link_run import simulate as run_simulate
    from ualink_ref.sim.workloads import random_workload
    simulate = lambda ops, **kw: run_simulate(ops, SimConfig(**kw))
except ImportError:
    from ualink_ref.stack.sim import random_workload, simulate
simulate(random_workload(50, 1), ber=1e-4, seed=1)
if N:
    report = simulate(random_workload(N, 0, span=1 << 16), ber=1e-4, seed=0)
    assert report.ops_okay == report.ops
''',
    "tl": '''
from ualink_ref.tl.transaction import TransactionLayer
try:
    from ualink_ref.net.tl_pair import TLPair
except ImportError:
    from ualink_ref.stack.tl_pair import TLPair
def run(n):
    a, b = TransactionLayer(1), TransactionLayer(2)
    for i in range(n):
        a.write(2, 0x1000 + 256 * (i % 64), bytes(range(64)))
    TLPair(a, b).run()
run(50)
if N:
    run(N)
''',
    "dl": '''
try:
    from ualink_ref.net.link_pair import LinkPair
except ImportError:
    from ualink_ref.stack.link_pair import LinkPair
def run(n):
    pair = LinkPair()
    pair.a.send([bytes([i % 256]) * 64 for i in range(n)])
    pair.run_until_idle()
run(50)
if N:
    run(N)
''',
}


def count(path: Path, code: str, ops: int) -> int:
    """Instructions of one run of ``code`` with ``N = ops`` and ``PYTHONPATH=path``."""
    env = {**os.environ, "PYTHONPATH": str(path), "UALINK_REF_NO_NUMBA": "1",
           "UALINK_REF_NO_NATIVE": "1", "PYTHONHASHSEED": "0"}
    proc = subprocess.run(
        ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", sys.executable,
         "-c", f"N = {ops}\n{code}"], env=env, capture_output=True, text=True,
        cwd=tempfile.gettempdir(), check=True)
    found = re.search(r"Collected : (\d+)", proc.stderr)
    if found is None:
        raise SystemExit(f"no instruction count in valgrind's output:\n{proc.stderr[-500:]}")
    return int(found.group(1))


def main() -> int:
    """Print each run's instructions per op, old and new, and the new/old speed."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--old", type=Path, required=True, help="an old checkout's root")
    parser.add_argument("--ops", type=int, default=3000, help="ops (flits for dl) per run")
    parser.add_argument("--only", choices=sorted(RUNS), help="count only this run")
    args = parser.parse_args()
    for name, code in RUNS.items():
        if args.only and name != args.only:
            continue
        old = count(args.old, code, args.ops) - count(args.old, code, 0)
        new = count(ROOT, code, args.ops) - count(ROOT, code, 0)
        print(f"{name:8} old {old / args.ops:9,.0f} instructions/op, new {new / args.ops:9,.0f}:"
              f" new/old speed {old / new:.3f}x", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
