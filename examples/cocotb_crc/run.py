"""Build and run the cocotb example with Icarus Verilog (used by tests/test_cocotb_example.py).

    python examples/cocotb_crc/run.py [--broken] [--cases N] [--seed N] [--out DIR]

Exports the dl vectors as memh into DIR, builds ``tb_dl`` (with ``-DSEEDED_BUG`` for
``--broken``) and runs the ``fuzz`` and ``vectors`` tests; exit status 0 when both pass.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


def run(out: Path, *, broken: bool = False, cases: int = 200, seed: int = 0) -> tuple[int, int]:
    """Run both cocotb tests; return ``(tests, failures)``."""
    try:
        from cocotb_tools.runner import get_results, get_runner  # cocotb 2.x
    except ImportError:
        from cocotb.runner import get_results, get_runner  # type: ignore[no-redef]  # 1.8+

    from ualink_ref.testing.export import entries, export, model_documents

    out.mkdir(parents=True, exist_ok=True)
    [doc] = model_documents(["dl"])
    (out / "dl.json").write_text(json.dumps(doc))
    export(out, "memh", [doc])
    found = entries(doc)
    sizes = {"STIM_DEPTH": max(1, sum(len(e.data) for e in found if e.stream == 0)),
             "EXPECT_DEPTH": max(1, sum(len(e.data) for e in found if e.stream == 1)),
             "ENTRIES": max(1, len(found))}
    runner = get_runner("icarus")
    build = out / ("build-broken" if broken else "build-good")
    runner.build(sources=[HERE / "dl_flit_check.v", HERE / "tb_dl.v"], hdl_toplevel="tb_dl",
                 build_dir=build, parameters=sizes,
                 defines={"SEEDED_BUG": 1} if broken else {}, always=True,
                 timescale=("1ns", "1ps"))
    results = build / "results.xml"
    # The runner exits non-zero when a test fails under pytest: read the results instead.
    with contextlib.suppress(SystemExit):
        runner.test(
            hdl_toplevel="tb_dl", test_module="test_dl_flit_check", test_dir=HERE,
            build_dir=build, results_xml=str(results),
            plusargs=[f"+stim={out / 'dl.stim.memh'}", f"+expect={out / 'dl.expect.memh'}",
                      f"+index={out / 'dl.index.memh'}"],
            extra_env={"DIFFTEST_SEED": str(seed), "DIFFTEST_CASES": str(cases),
                       "DIFFTEST_OUT": str(out / "difftest"),
                       "VECTORS_JSON": str(out / "dl.json"), "PYTHONPATH": str(HERE)})
    tests, failed = get_results(results)
    return int(tests), int(failed)


def main() -> int:
    """Command-line entry point."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--broken", action="store_true", help="build the seeded-bug variant")
    parser.add_argument("--cases", type=int, default=200)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", default="cocotb-out")
    args = parser.parse_args()
    tests, failed = run(Path(args.out), broken=args.broken, cases=args.cases, seed=args.seed)
    print(f"{tests} test(s), {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
