"""TL golden vectors of the error paths: split responses, poison, completion timeouts.

One kind, ``error_path`` (``specs/vectors.md``, section TL): two
TransactionLayers on a :class:`~ualink_ref.net.tl_pair.TLPair` (``a`` is
accelerator 1, the originator; ``b`` is accelerator 2, whose memory target is
configured), after the initial credit grants. Inputs: ``memory`` (address string
-> bytes before), ``poison`` (byte addresses of ``b``'s memory poisoned before
the ops), ``split`` / ``split_seed`` (``b``'s target), ``timeout_slots`` (``a``),
``stop_tags`` (wire tags ``b`` never answers), ``latency`` (slots each way) and
``ops`` (UPLI calls on ``a``; a write may carry ``poison``, a beat mask, an atomic
``poison``: true). Expected: the completions in order (with ``poisoned`` and
``error``), the late responses ``a`` discarded, every response field ``b`` sent
(dissected from its flits: tag, status, offset, len, last), ``b``'s memory and
poisoned bytes after, the TL flits each way and the error-path counters.
"""

from __future__ import annotations

from typing import Any

from ualink_ref.net.tl_pair import TLPair
from ualink_ref.testing.vectors import VectorInput, hexstr, unhex
from ualink_ref.tl.config import TLConfig
from ualink_ref.tl.events import Completion, LateResponse
from ualink_ref.tl.flit import dissect_stream
from ualink_ref.tl.memory import Memory
from ualink_ref.tl.transaction import TransactionLayer

KIND = "error_path"

_PATTERN = hexstr(bytes((i * 7 + 3) & 0xFF for i in range(256)))
_MEM = {"0x1000": _PATTERN}


def _case(name: str, note: str, ops: list[dict[str, Any]], **inputs: Any) -> VectorInput:
    base: dict[str, Any] = {"memory": _MEM, "poison": [], "split": "never", "split_seed": 0,
                            "timeout_slots": None, "stop_tags": [], "latency": 0}
    return VectorInput(f"error-{name}", KIND, {**base, **inputs, "ops": ops}, note=note)


def vector_inputs() -> list[VectorInput]:
    """The error-path cases (inputs only)."""
    read = {"kind": "read", "addr": 0x1000, "length": 256}
    return [
        _case("split-always-256", "one piece per beat, in beat order, last on beat 3",
              [read], split="always"),
        _case("split-always-188", "3 beats from 0x1004: pieces of 64, 64 and 60 bytes",
              [{"kind": "read", "addr": 0x1004, "length": 188}], split="always"),
        _case("split-always-write-then-read", "a write's answer is never split",
              [{"kind": "write", "addr": 0x1000, "data": hexstr(bytes(range(128)))},
               {"kind": "read", "addr": 0x1000, "length": 128}], split="always"),
        _case("split-random", "seeded cuts, pieces in seeded random order",
              [read, {"kind": "read", "addr": 0x1040, "length": 192}], split="random",
              split_seed=7),
        _case("poison-read-beat-1", "byte 0x1050 poisoned: OKAY beat 0, DATA_ERROR beat 1, "
              "OKAY beats 2-3", [read], poison=[0x1050]),
        _case("poison-read-every-beat", "the one beat poisoned: one whole DATA_ERROR",
              [{"kind": "read", "addr": 0x1040, "length": 64}], poison=[0x107F]),
        _case("poison-split-always", "per-beat pieces, beats 0 and 2 poisoned",
              [read], poison=[0x1000, 0x10BC], split="always"),
        _case("poison-write-beat-1", "WriteFull with beat 1 poisoned, read back",
              [{"kind": "write", "addr": 0x1000, "data": hexstr(bytes(range(128))),
                "poison": 2}, {"kind": "read", "addr": 0x1000, "length": 128}]),
        _case("poison-write-byte-enable", "Write with byte enables, beat 0 poisoned: only "
              "the enabled bytes become poisoned",
              [{"kind": "write", "addr": 0x1000, "data": hexstr(bytes(8)),
                "byte_enable": 0x0F, "poison": 1},
               {"kind": "read", "addr": 0x1000, "length": 4},
               {"kind": "read", "addr": 0x1004, "length": 4}]),
        _case("poison-atomic-target", "AtomicR on a poisoned byte: refused, memory unchanged",
              [{"kind": "atomic", "addr": 0x1050, "op": "ADD", "operand": 1, "size": 8}],
              poison=[0x1053]),
        _case("poison-atomic-operand", "AtomicR with a poisoned operand: refused",
              [{"kind": "atomic", "addr": 0x1050, "op": "SWAP", "operand": 1, "size": 8,
                "poison": True},
               {"kind": "atomic", "addr": 0x1058, "op": "SWAP", "operand": 1, "size": 8,
                "fetch": False, "poison": True}]),
        _case("timeout-stop-tag", "b never answers tag 1: the second read times out",
              [{"kind": "read", "addr": 0x1000 + 64 * i, "length": 64} for i in range(3)],
              timeout_slots=40, stop_tags=[1]),
        _case("timeout-late", "timeout 6 slots, 4 slots each way: both reads time out, "
              "their answers arrive late and are discarded",
              [{"kind": "read", "addr": 0x1000, "length": 64},
               {"kind": "read", "addr": 0x1040, "length": 128}],
              timeout_slots=6, latency=4, split="always"),
    ]


def _issue(tl: TransactionLayer, op: dict[str, Any]) -> int:
    kind = op["kind"]
    if kind == "read":
        return tl.read(2, int(op["addr"]), int(op["length"]))
    if kind == "write":
        return tl.write(2, int(op["addr"]), unhex(op["data"]), op.get("byte_enable"),
                        poison=int(op.get("poison", 0)))
    if kind != "atomic":
        raise ValueError(f"unknown op kind {kind!r}")
    return tl.atomic(2, int(op["addr"]), str(op["op"]), int(op["operand"]), op.get("compare"),
                     int(op.get("size", 8)), bool(op.get("fetch", True)),
                     poison=bool(op.get("poison", False)))


def _completion(c: Completion) -> dict[str, Any]:
    return {"tag": c.handle, "status": c.status.name,
            "data": None if c.data is None else hexstr(c.data), "poisoned": c.poisoned,
            "error": c.error}


def compute(inputs: dict[str, Any]) -> dict[str, Any]:
    """Expected outputs of one ``error_path`` case."""
    memory = Memory()
    for addr, raw in inputs["memory"].items():
        memory.poke(int(addr, 0), unhex(raw))
    for addr in inputs["poison"]:
        memory.poison(int(addr))
    a = TransactionLayer(1, config=TLConfig(timeout_slots=inputs["timeout_slots"]))
    b = TransactionLayer(2, memory, config=TLConfig(
        split=inputs["split"], split_seed=int(inputs["split_seed"]),
        stop_tags=frozenset(int(t) for t in inputs["stop_tags"])))
    pair = TLPair(a, b, latency=int(inputs["latency"]), record=True)
    pair.run()  # initial credit grants
    assert pair.trace is not None
    start, done = len(pair.trace), len(pair.completions["a"])
    for op in inputs["ops"]:
        _issue(a, op)
    pair.run()
    flits = pair.trace[start:]
    to_a = [f for _, d, f in flits if d == "b->a"]
    # Dissect b's flits from link start (the half-flit walk carries state), keep the new.
    from_b = [(i, f) for i, (_, d, f) in enumerate(pair.trace) if d == "b->a"]
    views = dissect_stream([f for _, f in from_b])
    responses = [{"tag": f.values["tag"], "status": f.values.get("status", 0),
                  "offset": f.values["offset"], "len": f.values["len"],
                  "last": f.values["last"]}
                 for (i, _), view in zip(from_b, views, strict=True) if i >= start
                 for half in view.halves if half.kind == "control"
                 for f in half.fields if "offset" in f.values]
    late = [{"tag": e.handle, "wire_tag": e.tag, "after": e.after, "final": e.final}
            for e in pair.other_events["a"] if isinstance(e, LateResponse)]
    counters = a.counters
    return {
        "completions": [_completion(c) for c in pair.completions["a"][done:]],
        "late_responses": late,
        "responses": responses,
        "memory_after": {"0x1000": hexstr(memory.peek(0x1000, 256))},
        "poisoned_after": [hex(0x1000 + i) for i in range(256)
                           if memory.poison_map(0x1000, 256) >> i & 1],
        "flits_a_to_b": [hexstr(f) for _, d, f in flits if d == "a->b"],
        "flits_b_to_a": [hexstr(f) for f in to_a],
        "counters": {"timeouts": counters.timeouts, "late_responses": counters.late_responses,
                     "split_responses_received": counters.split_responses_received,
                     "poisoned_completions": counters.poisoned_completions,
                     "quarantined": a.quarantined},
    }


__all__ = ["KIND", "compute", "vector_inputs"]
