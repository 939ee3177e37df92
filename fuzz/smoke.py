"""Run every harness without atheris: seeded random bytes and mutations of its seeds.

Not coverage-guided — a quick smoke campaign for machines without atheris::

    PYTHONPATH=. python fuzz/smoke.py [SECONDS_PER_HARNESS] [SEED]

Prints inputs tried and crashes (any exception escaping ``TestOneInput``) per
harness; exits 1 if anything crashed.
"""

from __future__ import annotations

import contextlib
import importlib
import random
import sys
import time
import types
from pathlib import Path

HERE = Path(__file__).resolve().parent


def _mutate(rng: random.Random, seed: bytes) -> bytes:
    data = bytearray(seed)
    for _ in range(rng.randint(1, 6)):
        op = rng.randrange(4)
        if op == 0 and data:
            data[rng.randrange(len(data))] ^= 1 << rng.randrange(8)
        elif op == 1 and data:
            del data[rng.randrange(len(data)):]
        elif op == 2:
            data += rng.randbytes(rng.randrange(1, 8))
        elif op == 3 and data:
            data[rng.randrange(len(data))] = rng.randrange(256)
    return bytes(data)


def main(seconds: float = 5.0, seed: int = 0) -> int:
    """Fuzz each harness for ``seconds``; return the number of crashing harnesses."""
    sys.path.insert(0, str(HERE))
    if "atheris" not in sys.modules:
        fake = types.ModuleType("atheris")
        fake.instrument_imports = contextlib.nullcontext  # type: ignore[attr-defined]
        sys.modules["atheris"] = fake
    rng = random.Random(seed)
    failed = 0
    for path in sorted(HERE.glob("fuzz_*.py")):
        module = importlib.import_module(path.stem)
        tried, crashes = 0, []
        end = time.perf_counter() + seconds
        while time.perf_counter() < end:
            if rng.random() < 0.3:
                data = rng.randbytes(rng.randrange(0, 80))
            else:
                data = _mutate(rng, rng.choice(module.SEEDS))
            try:
                module.TestOneInput(data)
            except Exception as exc:  # a crash: report it with its input
                crashes.append(f"{type(exc).__name__}: {exc} (input {data.hex()})")
            tried += 1
        failed += bool(crashes)
        print(f"{path.stem:28s} {tried:8d} inputs  {len(crashes)} crash(es)")
        for line in crashes[:3]:
            print("   ", line)
    return failed


if __name__ == "__main__":
    args = sys.argv[1:]
    sys.exit(1 if main(float(args[0]) if args else 5.0, int(args[1]) if len(args) > 1 else 0)
             else 0)
