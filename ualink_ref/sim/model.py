"""The sequential model that checks a simulation's results, with poison and timeouts.

:meth:`ualink_ref.sim.link_run.Simulation.check` replays each side's ops in issue
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
from ualink_ref.tl.memory import Memory, byte_mask
from ualink_ref.tl.upli import Status, apply_atomic

_BEAT = 64


#: The model keeps 256-byte pages of plain bytes (a dict entry per byte cost more than
#: the run it checks); it shares nothing with :class:`~ualink_ref.tl.Memory` but the idea.
PAGE = 256

#: A model memory: page base address -> the page's bytes (absent pages read zero).
ModelMemory = dict[int, bytearray]


def model_read(mem: ModelMemory, addr: int, length: int) -> bytes:
    """``length`` bytes of the model from ``addr``."""
    off = addr % PAGE
    if length >= 0 and off + length <= PAGE:  # one page: every op (each lies in a region)
        page = mem.get(addr - off)
        return bytes(page[off : off + length]) if page is not None else bytes(length)
    out = bytearray()
    while length > 0:
        base, off = addr - addr % PAGE, addr % PAGE
        n = min(length, PAGE - off)
        page = mem.get(base)
        out += page[off : off + n] if page is not None else bytes(n)
        addr, length = addr + n, length - n
    return bytes(out)


def _page(mem: ModelMemory, base: int) -> bytearray:
    page = mem.get(base)
    if page is None:
        page = mem[base] = bytearray(PAGE)
    return page


def model_write(mem: ModelMemory, addr: int, data: bytes, byte_enable: int | None = None) -> None:
    """Store ``data`` at ``addr`` (only the bytes whose ``byte_enable`` bit is set)."""
    off = addr % PAGE
    if byte_enable is None and 0 < len(data) <= PAGE - off:  # one page, every byte: a slice
        _page(mem, addr - off)[off : off + len(data)] = data
        return
    pos = 0
    while pos < len(data):  # a slice (or one masked merge) per page
        at = addr + pos
        off = at % PAGE
        n = min(len(data) - pos, PAGE - off)
        chunk = data[pos : pos + n]
        if byte_enable is None:
            _page(mem, at - off)[off : off + n] = chunk
        else:
            mask = byte_mask(byte_enable >> pos, n)
            if mask:
                page = _page(mem, at - off)
                old = int.from_bytes(page[off : off + n], "little")
                new = int.from_bytes(chunk, "little")
                page[off : off + n] = ((old & ~mask) | (new & mask)).to_bytes(n, "little")
        pos += n


def model_step(mem: ModelMemory, op: Any) -> bytes | None:
    """Apply ``op`` (a :class:`~ualink_ref.sim.link_run.Op`) to a model without poison; return
    what the op should return (the fabric's check)."""
    if op.kind == "read":
        return model_read(mem, op.addr, op.length)
    if op.kind == "write":
        model_write(mem, op.addr, op.data, op.byte_enable)
        return None
    old_bytes = model_read(mem, op.addr, op.size)
    old = int.from_bytes(old_bytes, "little")
    new = apply_atomic(op.atomic_op, op.size, old, op.operand, op.compare or 0)
    model_write(mem, op.addr, new.to_bytes(op.size, "little"))
    return old_bytes if op.fetch else None


def expected(mem: ModelMemory, poisoned: set[int], op: Any) -> tuple[Status, bytes | None, int]:
    """Apply ``op`` (a :class:`~ualink_ref.sim.link_run.Op`) to the model; return the
    ``(status, data, poisoned beats)`` its completion should have."""
    if not poisoned:  # the common case: no poison anywhere
        return Status.OKAY, model_step(mem, op), 0
    if op.kind == "read":
        n = op.length
        beats = (n + _BEAT - 1) // _BEAT
        bad = sum(1 << i for i in range(beats)
                  if any(op.addr + j in poisoned
                         for j in range(_BEAT * i, min(_BEAT * (i + 1), n))))
        data = model_read(mem, op.addr, n)
        if not bad:
            return Status.OKAY, data, 0
        data = b"".join(bytes(len(data[i:i + _BEAT])) if bad >> (i // _BEAT) & 1
                        else data[i:i + _BEAT] for i in range(0, n, _BEAT))
        return Status.DATA_ERROR, None if bad == (1 << beats) - 1 else data, bad
    if op.kind == "write":
        model_write(mem, op.addr, op.data, op.byte_enable)
        for i in range(len(op.data)):
            if op.byte_enable is None or op.byte_enable >> i & 1:
                poisoned.discard(op.addr + i)
        return Status.OKAY, None, 0
    if any(op.addr + i in poisoned for i in range(op.size)):
        return Status.DATA_ERROR, None, 1 if op.fetch else 0
    return Status.OKAY, model_step(mem, op), 0


def memory_mismatches(memory: Memory, model: ModelMemory) -> int:
    """Bytes where ``memory`` differs from ``model`` (absent = zero) — including
    stray bytes written where the model never wrote."""
    want_pages: ModelMemory = dict(model)
    for base, data in memory.snapshot().items():  # every page holding a non-zero byte
        for off in range(0, len(data), PAGE):
            if any(data[off : off + PAGE]):
                want_pages.setdefault(base + off, bytearray(PAGE))
    bad = 0
    for base, want in want_pages.items():
        got = memory.peek(base, PAGE)
        if got != want:
            bad += sum(1 for x, y in zip(got, want, strict=True) if x != y)
    return bad


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
    """The TL error-path fields of a :class:`~ualink_ref.sim.link_run.SimReport`: split
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
