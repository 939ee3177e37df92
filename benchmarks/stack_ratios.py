"""Print the stack and dissection speed ratios, all from one run, without pytest.

Usage: ``python benchmarks/stack_ratios.py [--rounds N] [--ops N] [--stat min|median]
[--old PATH [--warm]] [--only dissect|rdpcap|endpoint]`` from the repository root.

* ``dissect`` per DL flit (:func:`ualink_ref.capture.dissect.dissect_records`: CRC, DL
  receiver state, TL reassembly, ops and credits) against a bare ``DLFlit.decode`` of
  the same flits; target <= 3x. For context, also with every flit's ops and credit
  returns read (what a listing reads first; the dissector builds them on first read).
* Scapy ``rdpcap`` of a capture, then the TL view of every record
  (``pkt.tl_flits``), against a plain ``rdpcap`` of the same file; target <= 2x. For
  context, also with every TL flit of the view dissected into its fields.
* Full stack: 64-byte WriteFull and Read ops per second through two Endpoints (KP4, no
  errors; ``benchmarks/test_endpoint_bench.py``'s run) against a Python dict-store
  loop of as many 64-byte stores; target ratio >= 0.0040.
* ``--old PATH``: the same endpoint runs and a ``simulate`` at BER 1e-4 for the
  checkout at PATH, each side in its own subprocess (``PYTHONPATH=PATH`` for the old
  one), rounds interleaved; new/old speed targets >= 2x (endpoint) and >= 3x
  (simulate). Each run is a fresh process by default; ``--warm`` keeps one process
  per side and alternates runs in them (after one uncounted warm-up run).
  ``UALINK_REF_NO_NUMBA=1`` in the environment measures both sides on numpy alone.

Every ratio's two sides are timed in the same run, rounds interleaved; ``--stat min``
(default) takes each side's least-disturbed round, the better figure on a shared
machine. Absolute times depend on the machine and its load; the load average is
printed at the start and the end.
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from timing import interleaved

ROOT = Path(__file__).resolve().parent.parent

#: The issue-12 acceptance targets: (label, comparison, value).
TARGETS = {
    "dissect": ("dissect per flit <= 3x DLFlit.decode", "<=", 3.0),
    "rdpcap": ("rdpcap + TL view <= 2x plain rdpcap", "<=", 2.0),
    "write": ("endpoint write / dict store >= 0.0040", ">=", 0.0040),
    "read": ("endpoint read / dict store >= 0.0040", ">=", 0.0040),
    # Against the checkout before the redesign (--old): the clearer engines keep >= 0.85x.
    "old_write": ("endpoint write new/old >= 0.85x", ">=", 0.85),
    "old_read": ("endpoint read new/old >= 0.85x", ">=", 0.85),
    "old_simulate": ("simulate --ber 1e-4 new/old >= 0.85x", ">=", 0.85),
}




def timed(job: Callable[[], Any]) -> Callable[[], float]:
    """A timing: the wall time of one call of ``job``, the garbage collector on (as a user
    runs it) after a full collection (so each round starts from the same heap)."""

    def run() -> float:
        gc.collect()
        start = time.perf_counter()
        job()
        return time.perf_counter() - start

    return run


# -- the worker: one endpoint or simulate run, old or new API --------------------------


def serve() -> None:
    """A long-lived worker: each stdin line ``WHAT OPS`` runs that once in this (warm)
    process and prints its seconds as JSON, like :func:`worker` (``--warm``)."""
    for line in sys.stdin:
        what, ops = line.split()
        worker(what, int(ops), warm_up=False)


def _layout() -> tuple[Callable[..., Any], Callable[..., Any], Any, Any, str]:
    """``(simulate, Simulation, random_workload, uniform_workload, module path)`` of the
    checkout on the path: the current layout (configuration objects) or the one before
    the redesign (``ualink_ref.stack.sim``, keyword options), so ``--old`` runs the same
    runs on both sides."""
    try:
        from ualink_ref.sim import link_run, workloads
        from ualink_ref.sim.config import SimConfig
    except ImportError:
        from ualink_ref.stack import sim  # type: ignore[import-not-found]
        return (sim.simulate, sim.Simulation, sim.random_workload, sim.uniform_workload,
                sim.__file__)

    def simulate(workload: Any, **options: Any) -> Any:
        return link_run.simulate(workload, SimConfig(**options))

    def simulation(workload: Any, **options: Any) -> Any:
        return link_run.Simulation(workload, SimConfig(**options))

    return (simulate, simulation, workloads.random_workload, workloads.uniform_workload,
            str(link_run.__file__))


def worker(what: str, ops: int, warm_up: bool = True) -> None:
    """Time one run in this process and print ``{"seconds": s, "module": path}`` as JSON.

    Works with both the current layout and the old one (see :func:`_layout`), so
    ``--old`` runs the same code on both sides. Both sides run KP4 (the default).
    """
    simulate, _simulation, random_workload, _uniform, module = _layout()
    if what == "simulate":
        # as `ualink-ref simulate --ber 1e-4 --ops N` runs it (verification included)
        if warm_up:
            simulate(random_workload(50, 1), ber=1e-4, seed=1)
        start = time.perf_counter()
        report = simulate(random_workload(ops, 0, span=1 << 16), ber=1e-4, seed=0)
        seconds = time.perf_counter() - start
        assert report.ops_okay == report.ops, "simulate did not complete every op OKAY"
    else:
        if warm_up:
            endpoint_run(what, 50)  # tables, caches
        seconds = endpoint_run(what, ops)
    print(json.dumps({"seconds": seconds, "module": module}), flush=True)


def endpoint_run(kind: str, ops: int) -> float:
    """Seconds for ``ops`` 64-byte ``kind`` ops through two Endpoints (KP4, no errors)."""
    _simulate, simulation, _random, uniform_workload, _module = _layout()
    run = simulation(uniform_workload(ops, kind), max_outstanding=256)
    start = time.perf_counter()
    run.run(verify=False)
    return time.perf_counter() - start


def dict_store(ops: int) -> None:
    """The baseline: ``ops`` 64-byte stores into a Python dict."""
    payload = bytes(range(64))
    store: dict[int, bytes] = {}
    for i in range(ops):
        store[i * 256] = payload


class WarmWorker:
    """One long-lived worker process with ``PYTHONPATH=path`` (``--warm``): the runs of a
    side share one process, as a user's long session would, and alternate with the other
    side's, round by round."""

    def __init__(self, path: Path) -> None:
        self.path = path
        env = {**os.environ, "PYTHONPATH": str(path)}
        self.proc = subprocess.Popen([sys.executable, __file__, "--worker", "serve"], env=env,
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                                     cwd=tempfile.gettempdir())

    def timing(self, what: str, ops: int) -> Callable[[], float]:
        """A timing: one run of ``what`` in this process (its own measured seconds)."""
        def run() -> float:
            assert self.proc.stdin is not None and self.proc.stdout is not None
            self.proc.stdin.write(f"{what} {ops}\n")
            self.proc.stdin.flush()
            return _seconds(self.proc.stdout.readline(), self.path)
        return run

    def close(self) -> None:
        """End the worker."""
        if self.proc.stdin is not None:
            self.proc.stdin.close()
        self.proc.wait()


def _seconds(line: str, path: Path) -> float:
    result = json.loads(line)
    if not str(result["module"]).startswith(str(path.resolve())):
        raise SystemExit(f"worker for {path} imported {result['module']}")
    return float(result["seconds"])


def in_subprocess(path: Path, what: str, ops: int) -> Callable[[], float]:
    """A timing: one worker run with ``PYTHONPATH=path`` (its own measured seconds)."""
    env = {**os.environ, "PYTHONPATH": str(path)}

    def run() -> float:
        out = subprocess.run([sys.executable, __file__, "--worker", what, "--ops", str(ops)],
                             env=env, check=True, capture_output=True, text=True,
                             cwd=tempfile.gettempdir())
        return _seconds(out.stdout.strip().splitlines()[-1], path)

    return run


# -- the figures -------------------------------------------------------------------------


def dissect_ratio(rounds: int, stat: str) -> float:
    """dissect per DL flit / bare DLFlit.decode per DL flit (the capture bench's records)."""
    from ualink_ref.capture.dissect import dissect_records
    from ualink_ref.dl import DLFlit
    from ualink_ref.errors import DecodeError

    records = bench_records()

    def bare() -> None:
        for r in records:
            with contextlib.suppress(DecodeError):
                DLFlit.decode(r.data)

    def listed() -> None:
        for f in dissect_records(records):
            f.ops, f.credits  # noqa: B018  (the reads build them)

    t = interleaved({"bare": timed(bare), "dissect": timed(lambda: dissect_records(records)),
                     "listed": timed(listed)}, rounds, stat)
    n = len(records)
    ratio = t["dissect"] / t["bare"]
    print(f"dissect ({n} DL flits): {t['dissect'] / n * 1e6:7.1f} us/flit; bare DLFlit.decode "
          f"{t['bare'] / n * 1e6:6.1f} us/flit: ratio {ratio:5.2f}x; with every flit's ops "
          f"and credits read (as a listing does) {t['listed'] / n * 1e6:7.1f} us/flit: ratio "
          f"{t['listed'] / t['bare']:5.2f}x (context)")
    return ratio


def rdpcap_ratio(rounds: int, stat: str) -> float | None:
    """(rdpcap + every record's TL view) / plain rdpcap of the same file; None without Scapy."""
    try:
        from scapy.utils import rdpcap

        import ualink_ref.scapy_layers  # noqa: F401  (registers link type 147)
    except ImportError:
        print("rdpcap: Scapy not installed (the scapy extra): skipped")
        return None
    from ualink_ref.capture.format import encode_capture

    records = bench_records()
    with tempfile.TemporaryDirectory() as tmp:
        path = str(Path(tmp) / "bench.pcap")
        Path(path).write_bytes(encode_capture(records))

        def view() -> None:
            for pkt in rdpcap(path):
                pkt.tl_flits  # noqa: B018  (the read computes the view)

        def fields() -> None:
            for pkt in rdpcap(path):
                for span in pkt.tl_flits or ():
                    if span.kind == 1:  # a whole TL flit: read its half-flits' fields
                        for half in span.flit.halves:
                            for f in getattr(half, "ctrl_fields", ()):
                                f.fields  # noqa: B018

        t = interleaved({"plain": timed(lambda: rdpcap(path)), "view": timed(view),
                         "fields": timed(fields)}, rounds, stat)
    n = len(records)
    ratio = t["view"] / t["plain"]
    print(f"rdpcap ({n} records): plain {t['plain'] / n * 1e6:7.1f} us/record; with the TL "
          f"view {t['view'] / n * 1e6:7.1f}: ratio {ratio:5.2f}x; with every TL flit's "
          f"fields {t['fields'] / n * 1e6:7.1f}: ratio {t['fields'] / t['plain']:5.2f}x (context)")
    return ratio


def bench_records() -> list[Any]:
    """The records of ``benchmarks/test_capture_bench.py``: 400 random ops, KP4, no errors."""
    if not _RECORDS:
        from ualink_ref.capture.run import capture_simulation
        from ualink_ref.sim.config import SimConfig
        from ualink_ref.sim.workloads import random_workload

        _RECORDS.extend(capture_simulation(random_workload(400, 1), SimConfig(seed=1))[0])
    return _RECORDS


_RECORDS: list[Any] = []


def endpoint_ratios(rounds: int, stat: str, ops: int) -> dict[str, float]:
    """Endpoint 64-byte ops/s for write and read / dict-store ops/s, in this process."""
    for kind in ("write", "read"):
        endpoint_run(kind, 50)  # warm up
    t = interleaved({"dict": timed(lambda: dict_store(ops)),
                     "write": lambda: endpoint_run("write", ops),
                     "read": lambda: endpoint_run("read", ops)}, rounds, stat)
    out = {}
    for kind in ("write", "read"):
        out[kind] = t["dict"] / t[kind]
        print(f"endpoint 64-byte {kind:<5} ({ops} ops): {ops / t[kind]:9,.0f} ops/s; dict store "
              f"{ops / t['dict']:12,.0f} ops/s: ratio {out[kind]:.4f}")
    return out


def old_ratios(old: Path, rounds: int, stat: str, ops: int, sim_ops: int,
               warm: bool = False) -> dict[str, float]:
    """new/old speed for the endpoint runs and simulate at BER 1e-4: each run in a fresh
    subprocess, or with ``warm`` in one long-lived process per side (after a warm-up run)."""
    out = {}
    workers = {"old": WarmWorker(old), "new": WarmWorker(ROOT)} if warm else {}
    for what, n in (("write", ops), ("read", ops), ("simulate", sim_ops)):
        if warm:
            for w in workers.values():
                w.timing(what, n)()  # the warm-up round, not counted
            jobs = {side: w.timing(what, n) for side, w in workers.items()}
        else:
            jobs = {"old": in_subprocess(old, what, n), "new": in_subprocess(ROOT, what, n)}
        t = interleaved(jobs, rounds, stat)
        out[f"old_{what}"] = t["old"] / t["new"]
        label = f"simulate --ber 1e-4 ({n} ops)" if what == "simulate" else \
            f"endpoint 64-byte {what} ({n} ops)"
        print(f"{label}: old {t['old']:6.2f} s, new {t['new']:6.2f} s: new/old speed "
              f"{out[f'old_{what}']:5.2f}x")
    for w in workers.values():
        w.close()
    return out


def verdicts(figures: dict[str, float | None]) -> None:
    """One PASS / MISS line per target that was measured."""
    print("acceptance:")
    for key, value in figures.items():
        if value is None:
            continue
        label, op, target = TARGETS[key]
        ok = value <= target if op == "<=" else value >= target
        shown = f"{value:8.4f}" if target < 0.1 else f"{value:7.2f}x"
        print(f"  {label:<44} {shown}  {'PASS' if ok else 'MISS'}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7, help="interleaved rounds per figure")
    parser.add_argument("--stat", choices=("min", "median"), default="min",
                        help="statistic over the rounds (min: least disturbed by other load)")
    parser.add_argument("--ops", type=int, default=5000, help="ops per endpoint run")
    parser.add_argument("--sim-ops", type=int, default=2000,
                        help="ops of the simulate --ber 1e-4 run (--old only)")
    parser.add_argument("--old", type=Path, metavar="PATH",
                        help="an old checkout (its repository root) to compare against")
    parser.add_argument("--only", choices=("dissect", "rdpcap", "endpoint"),
                        help="measure only this figure (--old still adds its own)")
    parser.add_argument("--warm", action="store_true",
                        help="with --old: one long-lived process per side, runs alternating")
    parser.add_argument("--worker", choices=("write", "read", "simulate", "serve"),
                        help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker == "serve":
        serve()
        return
    if args.worker:
        worker(args.worker, args.ops)
        return
    sys.path.insert(0, str(ROOT))
    load = os.getloadavg()
    print(f"load average at start: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f} on "
          f"{os.cpu_count()} CPUs; statistic: {args.stat} of {args.rounds} interleaved rounds")
    from ualink_ref.phy import accel

    print(f"compiled FEC (numba): {'active' if accel.kernels() is not None else 'inactive'}")
    figures: dict[str, float | None] = {}
    if args.only in (None, "dissect"):
        figures["dissect"] = dissect_ratio(max(args.rounds, 15), args.stat)
    if args.only in (None, "rdpcap"):
        figures["rdpcap"] = rdpcap_ratio(args.rounds, args.stat)
    if args.only in (None, "endpoint"):
        figures.update(endpoint_ratios(args.rounds, args.stat, args.ops))
    if args.old is not None:
        figures.update(old_ratios(args.old.resolve(), args.rounds, args.stat, args.ops,
                                  args.sim_ops, args.warm))
    verdicts(figures)
    load = os.getloadavg()
    print(f"load average at end: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")


if __name__ == "__main__":
    main()
