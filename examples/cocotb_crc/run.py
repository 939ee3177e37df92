"""Build and run the cocotb example with Icarus Verilog (tests/testing/test_cocotb_example.py).

    python examples/cocotb_crc/run.py [--broken] [--cases N] [--seed N] [--out DIR]

Exports the dl vectors as memh into DIR (default ``cocotb-out`` in the current
directory), builds ``tb_dl`` (with ``-DSEEDED_BUG`` for ``--broken``) and runs the
``fuzz`` and ``vectors`` tests. Everything it writes - vectors, builds, simulator
and Hypothesis files, results - goes under DIR. Exit status 0: both tests pass;
1: a test failed; 2: a tool is missing (one line says what to install).
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import json
import shutil
import sys
from collections.abc import Callable
from pathlib import Path

HERE = Path(__file__).resolve().parent
#: What to install for each missing piece (checked in this order).
INSTALL_PYTHON = "pip install 'ualink_ref[cocotb]'"
INSTALL_ICARUS = "Icarus Verilog (e.g. apt-get install iverilog)"


class MissingTool(RuntimeError):
    """A Python package or simulator the example needs is not installed."""


def missing_tools() -> list[str]:
    """What to install before the example can run (empty when everything is there)."""
    need = []
    python = [name for name in ("ualink_ref", "cocotb", "hypothesis") if not _importable(name)]
    if python or not (_importable("cocotb_tools.runner") or _importable("cocotb.runner")):
        need.append(f"{INSTALL_PYTHON} (missing: {', '.join(python or ['cocotb runner'])})")
    if shutil.which("iverilog") is None or shutil.which("vvp") is None:
        need.append(INSTALL_ICARUS)
    return need


def _importable(module: str) -> bool:
    try:
        importlib.import_module(module)
    except ImportError:
        return False
    return True


def run(out: Path, *, broken: bool = False, cases: int = 200, seed: int = 0) -> tuple[int, int]:
    """Run both cocotb tests with every file under ``out``; return ``(tests, failures)``.

    Raises :class:`MissingTool` when cocotb, Hypothesis or Icarus Verilog is missing.
    """
    need = missing_tools()
    if need:
        raise MissingTool("needs " + " and ".join(need))
    from cocotb_tools.runner import get_results, get_runner  # cocotb 2.x (the extra's floor)

    from ualink_ref.testing.export import entries, export, model_documents

    # Absolute: the simulator runs in the build directory, not in the caller's.
    out = out.resolve()
    out.mkdir(parents=True, exist_ok=True)
    doc = model_documents(["dl"])["dl"]
    (out / "dl.json").write_text(json.dumps(doc))
    export(out, "memh", {"dl": doc})
    found = entries(doc)
    sizes = {"STIM_DEPTH": max(1, sum(len(e.words) for e in found if e.stream == 0)),
             "EXPECT_DEPTH": max(1, sum(len(e.words) for e in found if e.stream == 1)),
             "ENTRIES": max(1, len(found))}
    runner = get_runner("icarus")
    build = out / ("build-broken" if broken else "build-good")
    runner.build(sources=[HERE / "dl_flit_check.v", HERE / "tb_dl.v"], hdl_toplevel="tb_dl",
                 build_dir=build, parameters=sizes,
                 defines={"SEEDED_BUG": 1} if broken else {}, always=True,
                 timescale=("1ns", "1ps"))
    results = build / "results.xml"
    env = {"DIFFTEST_SEED": str(seed), "DIFFTEST_CASES": str(cases),
           "DIFFTEST_OUT": str(out / "difftest"), "VECTORS_JSON": str(out / "dl.json"),
           # cocotb builds a pytest Config (for assertion rewriting) inside the simulator,
           # which loads every installed pytest plugin; Hypothesis' plugin then believes
           # pytest is still initialising for the whole run and warns on each strategy
           # it resolves (HypothesisSideeffectWarning). The simulator needs no plugins.
           "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1",
           # Bytecode of the test module (and pytest's rewritten copy) under `out` too.
           "PYTHONPYCACHEPREFIX": str(out / "pycache"),
           "HYPOTHESIS_STORAGE_DIRECTORY": str(out / ".hypothesis")}
    # The runner hands the simulator this process's sys.path (cocotb 2.x) or PYTHONPATH
    # (1.x): put the test module's directory on both.
    sys.path.insert(0, str(HERE))
    try:
        # The runner exits non-zero when a test fails under pytest: read the results instead.
        with contextlib.suppress(SystemExit):
            runner.test(
                hdl_toplevel="tb_dl", test_module="test_dl_flit_check", test_dir=build,
                build_dir=build, results_xml=str(results),
                plusargs=[f"+stim={out / 'dl.stim.memh'}", f"+expect={out / 'dl.expect.memh'}",
                          f"+index={out / 'dl.index.memh'}"],
                extra_env={**env, "PYTHONPATH": str(HERE)})
    finally:
        sys.path.remove(str(HERE))
    tests, failed = get_results(results)
    return int(tests), int(failed)


def _at_least(low: int) -> Callable[[str], int]:
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"must be an integer, got {text!r:.40}") from None
        if value < low:
            raise argparse.ArgumentTypeError(f"must be >= {low}, got {value}")
        return value
    return parse


_at_least_one, _at_least_zero = _at_least(1), _at_least(0)


def main() -> int:
    """Command-line entry point."""
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--broken", action="store_true", help="build the seeded-bug variant")
    parser.add_argument("--cases", type=_at_least_one, default=200,
                        help="fuzz budget, cases >= 1 (default 200)")
    parser.add_argument("--seed", type=_at_least_zero, default=0, help="fuzz seed >= 0 (default 0)")
    parser.add_argument("--out", default="cocotb-out", metavar="DIR",
                        help="output folder (default: cocotb-out in the current directory)")
    args = parser.parse_args()
    try:
        tests, failed = run(Path(args.out), broken=args.broken, cases=args.cases,
                            seed=args.seed)
    except MissingTool as exc:
        print(f"run.py: {exc}", file=sys.stderr)
        return 2
    print(f"{tests} test(s), {failed} failed; files in {Path(args.out).resolve()}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
