"""Measure the coverage each atheris harness reaches (libFuzzer's ``cov`` / ``ft``).

    PYTHONPATH=. python fuzz/measure_coverage.py [--runs N] [--seed S] [--raw] [HARNESS ...]

Each harness runs from a fresh copy of its committed corpus (``fuzz/corpus/<name>/``)
with its dictionary, for exactly ``--runs`` inputs (default 20,000) at libFuzzer seed
``--seed`` (default 1), so two versions of a harness compare at the same seed and run
count. ``--raw`` sets ``UALINK_FUZZ_RAW=1`` (no structured repair). Prints one line per
harness: inputs run, ``cov``, ``ft``, corpus size and seconds. Needs atheris.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
STATS = re.compile(r"#(\d+)\s+DONE\s+cov: (\d+) ft: (\d+) corp: (\d+)")


def measure(name: str, runs: int, seed: int, raw: bool = False) -> dict[str, float]:
    """Run harness ``name`` once; return ``{runs, cov, ft, corp, seconds}``."""
    with tempfile.TemporaryDirectory() as tmp:
        corpus = Path(tmp) / "corpus"
        shutil.copytree(HERE / "corpus" / name, corpus)
        cmd = [sys.executable, str(HERE / f"{name}.py"), str(corpus), f"-runs={runs}",
               f"-seed={seed}", f"-dict={HERE / 'dicts' / f'{name}.dict'}",
               "-close_fd_mask=1", f"-artifact_prefix={tmp}/"]
        env = {**os.environ, "PYTHONPATH": str(HERE.parent)}
        if raw:
            env["UALINK_FUZZ_RAW"] = "1"
        start = time.perf_counter()
        proc = subprocess.run(cmd, capture_output=True, text=True, env=env, check=False)
        seconds = time.perf_counter() - start
    found = STATS.search(proc.stderr)
    if proc.returncode or not found:
        raise SystemExit(f"{name}: exit {proc.returncode}\n{proc.stderr[-3000:]}")
    n, cov, ft, corp = (int(x) for x in found.groups())
    return {"runs": n, "cov": cov, "ft": ft, "corp": corp, "seconds": seconds}


def main(argv: list[str] | None = None) -> int:
    """Command line (module docstring)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("harness", nargs="*", help="harness names (default: all)")
    parser.add_argument("--runs", type=int, default=20_000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--raw", action="store_true", help="UALINK_FUZZ_RAW=1")
    args = parser.parse_args(argv)
    names = args.harness or sorted(p.stem for p in HERE.glob("fuzz_*.py"))
    for name in names:
        r = measure(name, args.runs, args.seed, args.raw)
        print(f"{name:26s} runs {r['runs']:7d}  cov {r['cov']:5d}  ft {r['ft']:5d}  "
              f"corpus {r['corp']:4d}  {r['seconds']:6.1f} s", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
