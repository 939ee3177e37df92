"""The sequential model that checks a simulation's results, with poison and timeouts.

:meth:`ualink_ref.stack.sim.Simulation.check` replays each side's ops in issue
order on a plain byte dict (the TL executes requests in arrival order, which is
issue order, ``specs/tl.md`` rule 1) and compares every result. Beside the
bytes the model keeps the poisoned addresses (``specs/tl.md`` rules P3-P6):

* a read returns DATA_ERROR with the mask of its poisoned 64-byte beats; the
  data of the clean beats, zero in the poisoned ones — or ``None`` when every
  beat is poisoned;
* a write stores its enabled bytes and clears their poison;
* an atomic touching a poisoned byte changes nothing and answers DATA_ERROR
  (an AtomicR reports its one beat poisoned).

A timed-out operation (``Status.TIMEOUT``) is accepted as such — when it times
out is a matter of timing, not of the model — and its effect is applied only if
its late response arrived (the target executed it); a request the target never
answered (``stop-tag``) was dropped unexecuted.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

from ualink_ref.tl.events import Completion, TLCounters
from ualink_ref.tl.upli import Status, apply_atomic

_BEAT = 64


def expected(mem: dict[int, int], poisoned: set[int], op: Any) -> tuple[Status, bytes | None,
                                                                          int]:
    """Apply ``op`` (a :class:`~ualink_ref.stack.sim.Op`) to the model; return the
    ``(status, data, poisoned beats)`` its completion should have."""
    if op.kind == "read":
        n = op.length
        beats = (n + _BEAT - 1) // _BEAT
        bad = 0
        if poisoned:
            bad = sum(1 << i for i in range(beats)
                      if any(op.addr + j in poisoned for j in range(_BEAT * i,
                                                                     min(_BEAT * (i + 1), n))))
        data = bytes(0 if bad >> (i // _BEAT) & 1 else mem.get(op.addr + i, 0)
                     for i in range(n))
        if not bad:
            return Status.OKAY, data, 0
        return Status.DATA_ERROR, None if bad == (1 << beats) - 1 else data, bad
    if op.kind == "write":
        for i, byte in enumerate(op.data):
            if op.byte_enable is None or op.byte_enable >> i & 1:
                mem[op.addr + i] = byte
                poisoned.discard(op.addr + i)
        return Status.OKAY, None, 0
    if any(op.addr + i in poisoned for i in range(op.size)):
        return Status.DATA_ERROR, None, 1 if op.fetch else 0
    old_bytes = bytes(mem.get(op.addr + i, 0) for i in range(op.size))
    old = int.from_bytes(old_bytes, "little")
    new = apply_atomic(op.atomic_op, op.size, old, op.operand, op.compare or 0)
    for i, byte in enumerate(new.to_bytes(op.size, "little")):
        mem[op.addr + i] = byte
    return Status.OKAY, old_bytes if op.fetch else None, 0


def failure_kind(status: Status, error: str | None, poisoned: int) -> str:
    """A short category for a completion that was not OKAY (the report's "why")."""
    if status == Status.TIMEOUT:
        return "TIMEOUT (no response in time)"
    if poisoned:
        return "DATA_ERROR (poisoned data)"
    if error is not None:
        return f"{status.name} ({error.split(':', 1)[0]})"
    return f"{status.name} (from the completer)"


def tl_report(results: Sequence[Completion | None], workload: Sequence[Any],
              counters: tuple[TLCounters, TLCounters], split: str,
              timeout_slots: float | None) -> dict[str, Any]:
    """The TL error-path fields of a :class:`~ualink_ref.stack.sim.SimReport`: split
    pieces, timeouts, late responses, poisoned completions, and why ops failed."""
    ta, tb = counters
    kinds: Counter[str] = Counter()
    first: list[tuple[int, str, str, str, str]] = []
    for index, r in enumerate(results):
        if r is None or r.status == Status.OKAY:
            continue
        kind = failure_kind(r.status, r.error, r.poisoned)
        kinds[kind] += 1
        if len(first) < 5:
            why = r.error or (f"poisoned beats {r.poisoned:#x}" if r.poisoned
                              else "answered so by the completer")
            first.append((index, workload[index].side, kind, r.status.name, why))
    return {
        "split": split, "timeout_slots": timeout_slots,
        "split_responses": ta.split_responses_received + tb.split_responses_received,
        "timeouts": ta.timeouts + tb.timeouts,
        "late_responses": ta.late_responses + tb.late_responses,
        "poisoned_completions": ta.poisoned_completions + tb.poisoned_completions,
        "failures": tuple(kinds.most_common()), "first_failures": tuple(first),
    }


def tl_lines(report: Any) -> list[str]:
    """The report lines of the TL error paths (none when they were all off and quiet)."""
    lines = []
    if report.split != "never" or report.timeout_slots is not None or report.split_responses \
            or report.timeouts or report.poisoned_completions:
        timeout = "off" if report.timeout_slots is None else f"{report.timeout_slots:g} slots"
        lines.append(f"TL: split {report.split}, timeout {timeout}; split response pieces: "
                     f"{report.split_responses}  timeouts: {report.timeouts}  late responses: "
                     f"{report.late_responses}  poisoned completions: "
                     f"{report.poisoned_completions}")
    if report.failures:
        lines.append("ops not OKAY: " + ", ".join(f"{n} {kind}" for kind, n in report.failures))
        lines += [f"  op {i} ({side}): {status}: {why}"
                  for i, side, _kind, status, why in report.first_failures]
    return lines


__all__ = ["expected", "failure_kind", "tl_lines", "tl_report"]
