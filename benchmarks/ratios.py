"""Print FEC speed ratios against reedsolo, all from one run, without pytest.

Usage: ``python benchmarks/ratios.py [--rounds N]`` from the repository root.
KP4 encode / decode with 0, 7, 15 errors per codeword at batches of 1, 8 and
1,000, on the numpy path and the compiled ("fast", numba) path when installed,
each divided into reedsolo's per-codeword time (interleaved rounds, medians);
then the small-call checks of issue 12 (one bad codeword in a batch of 8
against the same call clean; flits per call 1 vs 1,000) and the acceptance
targets with PASS / MISS. Absolute times depend on the machine and its load;
the ratios are what to compare. ``--clock cpu`` times this thread's CPU time
instead of wall time (for a loaded shared machine; say which one a figure used).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import numpy as np
from fec_cases import (
    BASE_COUNT,
    BATCHES,
    CLOCK,
    ERRORS,
    WINDOW,
    Data,
    make_data,
    ours_job,
    paths,
    per_call,
    reedsolo_job,
)
from timing import interleaved

from ualink_ref.phy import KP4, decode_flits, encode_flits

#: The statistic over rounds ("median" or "min"), set from the command line.
STAT = ["median"]


def _warm(d: Data) -> None:
    for enter in paths().values():
        with enter():  # build tables / load or compile kernels outside the timing
            KP4.encode(d.msgs[:2])
            KP4.decode(d.words[15][:2])
            decode_flits(encode_flits(bytes(1280), "kp4"), "kp4")


def codec_ratios(d: Data, rounds: int) -> dict[tuple[str, str, int], float]:
    """Print and return (path, case, batch) -> ratio vs reedsolo."""
    out: dict[tuple[str, str, int], float] = {}
    for op, errors in [("encode", 0)] + [("decode", e) for e in ERRORS]:
        case = "encode" if op == "encode" else f"decode{errors}"
        base_job = reedsolo_job(op, errors, d)
        jobs = {"reedsolo": lambda job=base_job: per_call(job, 0.0) / BASE_COUNT}
        for name, enter in paths().items():
            for batch in BATCHES:
                job = ours_job(op, errors, batch, d)

                def timing(job=job, enter=enter, batch=batch) -> float:  # type: ignore[no-untyped-def]
                    with enter():
                        return per_call(job) / batch

                jobs[f"{name}:{batch}"] = timing
        med = interleaved(jobs, rounds, STAT[0])
        base = med.pop("reedsolo")
        print(f"KP4 {case:<9} reedsolo {base * 1e6:9.1f} us/cw")
        for key, ours in med.items():
            name, batch = key.split(":")
            ratio = base / ours
            out[(name, case, int(batch))] = ratio
            print(f"    {name:<5} batch {batch:>5}: {ours * 1e6:9.2f} us/cw   ratio {ratio:8.1f}x")
    return out


def one_bad_in_eight(d: Data, rounds: int) -> dict[str, float]:
    """Print and return path -> time(batch 8 with 1 bad cw, 15 errors) / time(same call clean)."""
    clean = d.words[0][:8]
    mixed = clean.copy()
    mixed[3] = d.words[15][3]
    out = {}
    for name, enter in paths().items():

        def run(words: np.ndarray, enter=enter) -> float:  # type: ignore[no-untyped-def]
            with enter():
                return per_call(lambda: KP4.decode(words))

        med = interleaved(
            {"clean": lambda: run(clean), "mixed": lambda: run(mixed)}, rounds, STAT[0]
        )
        out[name] = med["mixed"] / med["clean"]
        print(
            f"batch 8, one codeword with 15 errors, {name:<5}: {med['mixed'] * 1e6:8.1f} us "
            f"vs clean {med['clean'] * 1e6:8.1f} us = {out[name]:.2f}x"
        )
    return out


def flit_calls(rounds: int) -> None:
    """Per-flit cost of encode_flits / decode_flits (BER 1e-4) at 1 and 1,000 flits per call."""
    from ualink_ref.phy import BitErrorChannel

    rng = np.random.default_rng(7)
    flits = rng.integers(0, 256, 640 * 1000, dtype=np.uint8).tobytes()
    wire = encode_flits(flits, "kp4")
    noisy = BitErrorChannel(1e-4, seed=7).apply(wire)
    for name, enter in paths().items():
        jobs = {}
        for count in (1, 1000):
            f, w = flits[: 640 * count], noisy[: 680 * count]

            def enc(f=f, count=count, enter=enter) -> float:  # type: ignore[no-untyped-def]
                with enter():
                    return per_call(lambda: encode_flits(f, "kp4")) / count

            def dec(w=w, count=count, enter=enter) -> float:  # type: ignore[no-untyped-def]
                with enter():
                    return per_call(lambda: decode_flits(w, "kp4")) / count

            jobs[f"encode_flits {count}"] = enc
            jobs[f"decode_flits {count}"] = dec
        med = interleaved(jobs, rounds, STAT[0])
        for op in ("encode_flits", "decode_flits"):
            one, many = med[f"{op} 1"], med[f"{op} 1000"]
            print(
                f"{op} kp4 {name:<5}: 1 flit/call {one * 1e6:7.1f} us, 1000 flits/call "
                f"{many * 1e6:6.2f} us/flit: single = {one / many:4.1f}x batched"
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7, help="interleaved rounds per case")
    parser.add_argument(
        "--stat",
        choices=("median", "min"),
        default="median",
        help="statistic over the rounds (min is less sensitive to other processes' load)",
    )
    parser.add_argument(
        "--clock",
        choices=("wall", "cpu"),
        default="wall",
        help="wall time, or this thread's CPU time (leaves out time other processes hold "
        "the core: on a loaded machine that hits reedsolo's long calls harder than ours)",
    )
    parser.add_argument(
        "--window",
        type=float,
        default=WINDOW[0],
        help="shortest timed window per sample, seconds (longer is steadier under load)",
    )
    args = parser.parse_args()
    STAT[0] = args.stat
    WINDOW[0] = args.window
    CLOCK[0] = time.thread_time if args.clock == "cpu" else time.perf_counter
    load = os.getloadavg()
    print(
        f"load average at start: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f} "
        f"on {os.cpu_count()} CPUs; paths: {', '.join(paths())}; statistic: {args.stat} "
        f"of {args.rounds} rounds; clock: {args.clock}; window {args.window * 1e3:.0f} ms"
    )
    d = make_data()
    _warm(d)
    ratios = codec_ratios(d, args.rounds)
    slow = one_bad_in_eight(d, args.rounds)
    flit_calls(args.rounds)
    print("acceptance (issue 12):")
    checks = [
        ("KP4 decode, 1 cw, 15 errors, numpy >= 50x", ratios[("numpy", "decode15", 1)], 50),
        ("KP4 encode, batch 1000, numpy >= 200x", ratios[("numpy", "encode", 1000)], 200),
    ]
    if ("fast", "encode", 1000) in ratios:
        checks += [
            ("KP4 decode, 1 cw, 15 errors, fast >= 100x", ratios[("fast", "decode15", 1)], 100),
            ("KP4 encode, batch 1000, fast >= 800x", ratios[("fast", "encode", 1000)], 800),
        ]
    for label, value, target in checks:
        print(f"  {label:<44} {value:8.1f}x  {'PASS' if value >= target else 'MISS'}")
    for name, value in slow.items():
        verdict = "PASS" if value <= 3 else "MISS"
        print(f"  {'batch 8, 1 bad <= 3x clean, ' + name:<44} {value:8.2f}x  {verdict}")
    load = os.getloadavg()
    print(f"load average at end: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")


if __name__ == "__main__":
    main()
