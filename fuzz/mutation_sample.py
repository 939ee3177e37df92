"""Print the names of the mutants in the documented mutation-testing sample.

    PYTHONPATH=. python fuzz/mutation_sample.py [--survivors] > /tmp/names
    mutmut run --max-children 2 $(cat /tmp/names)

Reads the mutant lists mutmut wrote under ``mutants/`` (any ``mutmut run`` generates
them first) and prints every ``STEP[module]``-th mutant of each module in mutmut's
order, starting with the first — a deterministic sample, the same on every machine for
the same source. ``--survivors`` prints only the sampled mutants that survived the last
run (mutmut exit code 0, or no covering test): re-run them after adding tests for the
"after" figure.
``--summary`` prints, per module, the sample size, survivors and survival rate.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
#: Every n-th mutant per module (1: all). See fuzz/README.md "Mutation testing".
STEP = {
    "ualink_ref/dl/datalink.py": 4,
    "ualink_ref/dl/transmit.py": 4,  # datalink.py's transmit half since round 4
    "ualink_ref/tl/credits.py": 4,
    "ualink_ref/tl/transaction.py": 8,
    "ualink_ref/phy/decoder.py": 3,
}


#: mutmut exit codes: survived (0) and no covering test (5, 33) count as alive; timeouts
#: (a mutant that hangs the tests is detected) count as killed, and are shown apart.
ALIVE = (0, 5, 33)
TIMEOUT = (24, -24, 36, 152, 255)


def sample(module: str) -> dict[str, int | None]:
    """The sampled mutants of ``module`` -> last exit code (``None``: not run yet)."""
    meta = json.loads((ROOT / "mutants" / f"{module}.meta").read_text())
    codes: dict[str, int | None] = meta["exit_code_by_key"]
    return {name: codes[name] for name in list(codes)[:: STEP[module]]}


def main(argv: list[str]) -> int:
    """Command line (module docstring)."""
    for module in STEP:
        picked = sample(module)
        if "--summary" in argv:
            ran = [c for c in picked.values() if c is not None]
            alive = sum(c in ALIVE for c in ran)
            slow = sum(c in TIMEOUT for c in ran)
            rate = f"{100 * alive / len(ran):.1f} %" if ran else "-"
            print(f"{module:32s} sample {len(picked):4d}  run {len(ran):4d}  "
                  f"survived {alive:4d} ({rate})  timeouts {slow}")
            continue
        for name, code in picked.items():
            if "--survivors" not in argv or code in ALIVE:
                print(name)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
