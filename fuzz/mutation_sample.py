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
Modules whose mutants have not been generated (no ``mutants/<module>.meta``) are skipped.

    PYTHONPATH=. python fuzz/mutation_sample.py --hand [NAME ...]

replays the hand-made mutants of issue 26 (``HAND``): each is applied to a copy of the
tree in a temporary directory and the tests of its area are run there, first without
the test file written to catch it ("before": the mutant should survive), then with it
("after": it must be caught). Prints one line per mutant; exit status 1 if any mutant
survives the "after" run.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
#: Every n-th mutant per module (1: all). See fuzz/README.md "Mutation testing".
STEP = {
    # Issue 26 (the modules `[tool.mutmut] only_mutate` names now).
    "ualink_ref/node/switch.py": 34,
    "ualink_ref/sim/fabric.py": 38,
    "ualink_ref/sim/fabric_report.py": 36,
    "ualink_ref/tl/reassembly.py": 10,
    "ualink_ref/tl/completer.py": 28,
    "ualink_ref/tl/responses.py": 28,
    "ualink_ref/dl/linkstate.py": 24,
    "ualink_ref/testing/difftest/protocol.py": 16,
    # Earlier rounds (fuzz/README.md): mutmut only_mutate named these then.
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


@dataclass(frozen=True)
class HandMutant:
    """A plausible developer's bug: ``old`` replaced by ``new`` (once) in ``module``; the
    tests of its area (``area``) should miss it and ``catcher`` must catch it."""

    name: str
    module: str
    old: str
    new: str
    area: tuple[str, ...]
    catcher: str


#: The five survivors issue 26 names, written by hand before the tests that catch them.
HAND = (
    HandMutant("S6 round robin: the ingress just served goes to the front again",
               "ualink_ref/node/arbiter.py",
               "ring.append(ingress)  # round robin", "ring.appendleft(ingress)  # round robin",
               ("tests/node/", "tests/sim/test_fabric.py"), "tests/node/test_switch_rules.py"),
    HandMutant("F7 leak audit skips the shared credit pool", "ualink_ref/sim/fabric.py",
               "for source in (*range(NUM_VCS), POOL):", "for source in range(NUM_VCS):",
               ("tests/sim/",),
               "tests/sim/test_fabric_rules.py"),
    HandMutant("R3 active share ignores planes (plane 0's switch only)",
               "ualink_ref/sim/fabric_report.py",
               # Since the report reads each switch's stats once (round 9): the port's
               # active window taken from plane 0's stats only.
               "_active_fraction([st[a] for st in stats])",
               "_active_fraction([stats[0][a]])",
               ("tests/sim/", "tests/cli/test_sim_cli.py"),
               "tests/sim/test_fabric_rules.py"),
    HandMutant("S4 reassembly overlap checked on the first beat only",
               "ualink_ref/tl/reassembly.py",
               "if partial.got & mask:  # S4: overlap",
               "if partial.got & (1 << offset):  # S4: overlap",
               ("tests/tl/",), "tests/tl/test_tl_rule_boundaries.py"),
    HandMutant("L10 every idle probe re-arms its own deadline", "ualink_ref/dl/linkstate.py",
               "            if self._probe_deadline is None:\n"
               "                self._probe_deadline = now + self._retrain_slots",
               "            self._probe_deadline = now + self._retrain_slots",
               ("tests/dl/", "tests/node/test_link_states.py"),
               "tests/dl/test_linkstate_rules.py"),
)


def _pytest(tree: Path, tests: list[str]) -> tuple[int, str]:
    """Run ``tests`` in ``tree`` (stop at the first failure); exit code and that test."""
    env = {**os.environ, "PYTHONPATH": str(tree), "HYPOTHESIS_PROFILE": "ci"}
    cmd = [sys.executable, "-m", "pytest", "-q", "-x", "-rf", "-p", "no:cacheprovider", "-m",
           "not slow", *tests]
    done = subprocess.run(cmd, cwd=tree, env=env, capture_output=True, text=True, check=False)
    failed = [line.split()[1] for line in done.stdout.splitlines()
              if line.startswith("FAILED ")]
    return done.returncode, failed[0] if failed else ""


def run_hand(names: list[str]) -> int:
    """Replay the hand-made mutants (module docstring); 1 if one survives its catcher."""
    failed = 0
    for mutant in HAND:
        if names and not any(n.lower() in mutant.name.lower() for n in names):
            continue
        with tempfile.TemporaryDirectory() as tmp:
            tree = Path(tmp)
            for part in ("ualink_ref", "tests", "vectors", "specs", "docs", "fuzz"):
                shutil.copytree(ROOT / part, tree / part,
                                ignore=shutil.ignore_patterns("__pycache__"))
            for top in ("pyproject.toml", "README.md"):
                shutil.copy(ROOT / top, tree / top)
            source = tree / mutant.module
            text = source.read_text()
            if text.count(mutant.old) != 1:
                print(f"{mutant.name}: the code to mutate is not found once (stale mutant)")
                failed = 1
                continue
            source.write_text(text.replace(mutant.old, mutant.new))
            catcher = tree / mutant.catcher
            kept = catcher.read_text()
            catcher.unlink()
            before, by = _pytest(tree, [t for t in mutant.area if (tree / t).exists()])
            catcher.write_text(kept)
            after, by_new = _pytest(tree, [mutant.catcher])
        caught = after not in (0, 5)
        failed |= not caught
        print(f"{mutant.name}: area tests {f'caught it ({by})' if before else 'missed it'}; "
              f"{f'caught by {by_new}' if caught else f'MISSED by {mutant.catcher}'}")
    return failed


def sample(module: str) -> dict[str, int | None]:
    """The sampled mutants of ``module`` -> last exit code (``None``: not run yet)."""
    meta = json.loads((ROOT / "mutants" / f"{module}.meta").read_text())
    codes: dict[str, int | None] = meta["exit_code_by_key"]
    return {name: codes[name] for name in list(codes)[:: STEP[module]]}


def main(argv: list[str]) -> int:
    """Command line (module docstring)."""
    if "--hand" in argv:
        return run_hand([a for a in argv if a != "--hand"])
    for module in STEP:
        if not (ROOT / "mutants" / f"{module}.meta").exists() or not STEP[module]:
            continue
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
