"""Where a collective keeps its buffers in each rank's memory (``specs/collectives.md`` C5).

Project choice: fixed, far-apart regions, so that a stray write anywhere else is seen
by the untouched-memory check (:func:`regions`).
"""

from __future__ import annotations

#: 8-byte flags (counters), flag ``i`` at ``FLAGS + 8 * i``.
FLAGS = 0x0000_1000
#: Most flags a program may use (they fill 32 KiB).
MAX_FLAGS = 4096
#: The rank's input buffer.
INPUT = 0x0100_0000
#: The rank's output buffer.
OUTPUT = 0x4000_0000
#: Partial sums a ring keeps while it reduces (never written by a peer).
ACCUMULATOR = 0x6000_0000
#: Where peers' data lands before it is reduced or forwarded.
SCRATCH = 0x8000_0000
#: The largest buffer a region holds.
REGION_LIMIT = 0x2000_0000


def flag(i: int) -> int:
    """The address of flag ``i``."""
    if not 0 <= i < MAX_FLAGS:
        raise ValueError(f"flag {i} is not 0..{MAX_FLAGS - 1}")
    return FLAGS + 8 * i


def regions() -> tuple[tuple[int, int], ...]:
    """Every address range a collective may write, as ``(start, end)``."""
    return ((FLAGS, FLAGS + 8 * MAX_FLAGS), (INPUT, INPUT + REGION_LIMIT),
            (OUTPUT, OUTPUT + REGION_LIMIT), (ACCUMULATOR, ACCUMULATOR + REGION_LIMIT),
            (SCRATCH, SCRATCH + 2 * REGION_LIMIT))


__all__ = ["ACCUMULATOR", "FLAGS", "INPUT", "MAX_FLAGS", "OUTPUT", "REGION_LIMIT", "SCRATCH",
           "flag", "regions"]
