"""Where the exact pod's time goes, by layer, and the most any bypass of the bit-level
coding could give (issue 25, part 1).

Usage: ``python benchmarks/pod_shares.py [--accelerators N] [--ops N] [--load L]``
from the repository root (default: ``pod_ratio.py``'s run — 64 accelerators, 20,000
uniform ops at load 0.5, ``seed=1``, after the same 50-op warm-up).

The run goes under :mod:`cProfile`. Each function's own time is charged to the module
that defines it; any other function's (``len``, ``bytes.join``, crcmod's C kernel, the
``tuple.__new__`` under a NamedTuple's ``_replace``...) to the ``ualink_ref`` modules that
called it, through any calls outside ``ualink_ref`` between them
(:func:`module_times`).
Modules fall in four groups:

* **coding** — the bit-level work: DL flit build and parse, CRC, TL field packing and
  unpacking, framing, the FEC (which a clean pod skips: specs/fabric.md F14). A link
  that handed values across instead of bytes could at best skip all of it;
* **DL protocol** — the DL transmitter, receiver and link-state machines (sequence
  numbers, acknowledgements, replay: they set the timing, so they must run);
* **TL and switch** — transactions, credits, tags, memory, the switch's routing and
  arbitration: the protocol's own logic;
* **glue** — the link ends, harness, fabric loop, workload.

It prints the shares and Amdahl's ceiling ``1 / (1 - coding share)``: the speed-up of
this code if the coding cost nothing at all. Profiling inflates many small calls more
than few large ones, so the shares are an estimate; the ceiling is what the issue's
ratio (``pod_ratio.py``) could at most be multiplied by.
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
from collections import Counter
from typing import Any

from ualink_ref.sim.fabric import Fabric, FabricConfig
from ualink_ref.sim.workloads import fabric_workload

#: Module (path under ``ualink_ref/``) prefixes of each group; the first that matches wins.
GROUPS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("coding", ("dl/flit.py", "dl/crc.py", "dl/segments.py", "dl/formats.py",
                "tl/framing.py", "tl/codec.py", "tl/field_code.py", "tl/fields.py",
                "tl/flit.py", "phy/", "bitfields.py")),
    ("DL protocol", ("dl/",)),
    ("TL and switch", ("tl/", "node/switch.py", "node/arbiter.py", "node/outstanding.py",
                       "node/multicast.py", "node/pause.py")),
    ("glue", ("",)),
)


def _module(filename: str) -> str | None:
    """The path under ``ualink_ref/`` of a profiled function's file (None outside it)."""
    marker = "ualink_ref/"
    at = filename.rfind(marker)
    return filename[at + len(marker):] if at >= 0 else None


#: A profiled function's key in :mod:`pstats`: (file, line, name).
Function = tuple[str, int, str]


def module_times(stats: pstats.Stats) -> tuple[Counter[str], float]:
    """Seconds of own time per ``ualink_ref`` module, and the seconds left unattributed.

    A function of ``ualink_ref`` keeps its own time. Any other (a built-in, the standard
    library, a NamedTuple's generated ``__new__``) passes its own time to its callers in
    proportion to the time it spent under each; a caller that is not ``ualink_ref``'s
    either passes its share on up its own callers, in proportion to its cumulative time
    under each, until a ``ualink_ref`` function takes it (or no caller is left: the
    unattributed rest, e.g. the profiler's own entry).
    """
    table: dict[Function, Any] = stats.stats  # type: ignore[attr-defined]  # untyped
    times: Counter[str] = Counter()
    lost = 0.0

    def pass_up(function: Function, seconds: float, by_edge: int, seen: frozenset[Function]
                ) -> None:
        """Share ``seconds`` of ``function`` among its callers by edge field ``by_edge``
        (2: own time under the caller, 3: cumulative time under it)."""
        nonlocal lost
        callers = table[function][4] if function in table else {}
        weights = {caller: edge[by_edge] for caller, edge in callers.items()
                   if caller not in seen}
        total = sum(weights.values())
        if total <= 0:
            lost += seconds
            return
        for caller, weight in weights.items():
            share = seconds * weight / total
            module = _module(caller[0])
            if module is not None:
                times[module] += share
            else:
                pass_up(caller, share, 3, seen | {caller})

    for function, (_cc, _nc, own, _cum, _callers) in table.items():
        module = _module(function[0])
        if module is not None:
            times[module] += own
        elif own > 0:
            pass_up(function, own, 2, frozenset({function}))
    return times, lost


def group_of(module: str) -> str:
    """The group of ``module`` (see :data:`GROUPS`)."""
    for name, prefixes in GROUPS:
        if any(module.startswith(prefix) for prefix in prefixes):
            return name
    raise AssertionError("the last group matches every module")


def main() -> int:
    """Profile one pod run; print the shares per group and per module, and the ceiling."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--accelerators", type=int, default=64)
    parser.add_argument("--ops", type=int, default=20_000)
    parser.add_argument("--load", type=float, default=0.5)
    args = parser.parse_args()
    Fabric(FabricConfig(accelerators=4, seed=1)).run(
        fabric_workload("uniform", 50, 4, seed=1))  # warm-up, as pod_ratio.py's
    fabric = Fabric(FabricConfig(accelerators=args.accelerators, seed=1))
    work = fabric_workload("uniform", args.ops, args.accelerators, seed=1, load=args.load)
    profile = cProfile.Profile()
    profile.enable()
    fabric.run(work)
    profile.disable()
    times, lost = module_times(pstats.Stats(profile))
    total = sum(times.values())
    groups: Counter[str] = Counter()
    for module, seconds in times.items():
        groups[group_of(module)] += seconds
    print(f"{args.accelerators} accelerators, {args.ops} uniform ops, load {args.load}: "
          f"{total:.2f} s of own time under cProfile charged to ualink_ref modules "
          f"({lost:.2f} s left unattributed)")
    for name, _prefixes in GROUPS:
        print(f"  {name:<14} {100 * groups[name] / total:5.1f} %")
    print("by module:")
    for module, seconds in times.most_common():
        print(f"  {100 * seconds / total:5.1f} %  {group_of(module):<14} {module}")
    coding = groups["coding"] / total
    print(f"ceiling if the coding cost nothing: 1 / (1 - {coding:.3f}) = "
          f"{1 / (1 - coding):.2f}x this code")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
