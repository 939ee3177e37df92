"""Independent confirmation of the committed ``error_path`` TL vectors (specs/vectors.md).

Every expected value below is derived from the case's inputs by this file's own
reading of specs/tl.md — never by the model: which pieces the completer sends
(offset, len, last, status) for the split mode and the poisoned beats; what each
completion holds (status, data, poisoned beats); which operation times out (the
wire tag a fresh originator gives the i-th request is i; a timeout shorter than
the round trip of 2 x latency slots ends every operation); the late pieces
reported; the target's bytes and poisoned bytes afterwards. Only then is each
compared with the committed vector — and the vector with the model, by
``vectors verify`` (``tests/testing/test_vectors_committed.py``).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

VECTORS = Path(__file__).resolve().parents[2] / "vectors" / "tl.json"
_CASES = [c for c in json.loads(VECTORS.read_text())["cases"] if c["kind"] == "error_path"]
_BEAT = 64


def _beats(length: int) -> int:
    return -(-length // _BEAT)


class _Target:
    """The memory as this test reads the rules: bytes, poisoned addresses (P1-P5)."""

    def __init__(self, inputs: dict[str, Any]) -> None:
        self.mem = bytearray(512)  # 0x1000..0x11ff
        for addr, raw in inputs["memory"].items():
            data = bytes.fromhex(raw)
            self.mem[int(addr, 0) - 0x1000 : int(addr, 0) - 0x1000 + len(data)] = data
        self.poison = {int(a) for a in inputs["poison"]}

    def bad_beats(self, addr: int, length: int) -> int:
        return sum(1 << i for i in range(_beats(length))
                   if any(addr + j in self.poison
                          for j in range(_BEAT * i, min(_BEAT * (i + 1), length))))

    def run(self, op: dict[str, Any]) -> tuple[str, bytes | None, int, list[tuple[int, int]]]:
        """(status, data, poisoned beats, [(beat, poisoned?)]) for one op; applies it."""
        addr = op["addr"]
        at = addr - 0x1000
        if op["kind"] == "read":
            n = op["length"]
            bad = self.bad_beats(addr, n)
            beats = [(i, bad >> i & 1) for i in range(_beats(n))]
            if not bad:
                return "OKAY", bytes(self.mem[at : at + n]), 0, beats
            if bad == (1 << _beats(n)) - 1:
                return "DATA_ERROR", None, bad, beats
            data = bytes(0 if bad >> (i // _BEAT) & 1 else self.mem[at + i] for i in range(n))
            return "DATA_ERROR", data, bad, beats
        if op["kind"] == "write":
            data = bytes.fromhex(op["data"])
            enable = op.get("byte_enable")
            for i, byte in enumerate(data):
                if enable is None or enable >> i & 1:
                    self.mem[at + i] = byte
                    self.poison.discard(addr + i)
                    if op.get("poison", 0) >> (i // _BEAT) & 1:  # P4
                        self.poison.add(addr + i)
            return "OKAY", None, 0, []
        size = op["size"]
        fetch = op.get("fetch", True)
        if op.get("poison") or any(addr + i in self.poison for i in range(size)):  # P5
            return "DATA_ERROR", None, 1 if fetch else 0, []
        old = int.from_bytes(self.mem[at : at + size], "little")
        new = {"ADD": old + op["operand"], "SWAP": op["operand"]}[op["op"]] % (1 << 8 * size)
        self.mem[at : at + size] = new.to_bytes(size, "little")
        return "OKAY", old.to_bytes(size, "little") if fetch else None, 0, []


def _pieces(split: str, beats: list[tuple[int, int]]) -> list[tuple[int, int, int]]:
    """(status, offset, len) of the pieces of a read's answer, in sending order, for the
    deterministic modes (rules S2, P3); the last one carries last = 1."""
    n = len(beats)
    if all(bad for _, bad in beats):
        return [(3, 0, 0)]  # every beat poisoned: one whole DATA_ERROR (len 0)
    if n == 1 or (split == "never" and not any(bad for _, bad in beats)):
        return [(0, 0, n - 1)]
    runs: list[list[int]] = []
    for i, bad in beats:
        if runs and split != "always" and beats[runs[-1][0]][1] == bad:
            runs[-1].append(i)
        else:
            runs.append([i])
    return [(3 if beats[r[0]][1] else 0, r[0], len(r) - 1) for r in runs]


@pytest.mark.parametrize("case", _CASES, ids=[c["id"] for c in _CASES])
def test_error_path_vector_matches_the_rules(case: dict[str, Any]) -> None:
    inputs, got = case["inputs"], case["expected"]
    target = _Target(inputs)
    stop = set(inputs["stop_tags"])
    timeout = inputs["timeout_slots"]
    all_late = timeout is not None and timeout < 2 * inputs["latency"] + 1
    completions, responses, late = [], [], []
    for tag, op in enumerate(inputs["ops"]):  # a fresh originator: request i gets tag i
        if tag in stop:  # T5: never executed, never answered
            completions.append({"tag": tag, "status": "TIMEOUT", "data": None, "poisoned": 0})
            continue
        status, data, poisoned, beats = target.run(op)
        if beats:
            pieces = _pieces(inputs["split"], beats)
        else:  # writes and atomics: one whole answer
            pieces = [(3 if status == "DATA_ERROR" else 0, 0, 0)]
        if inputs["split"] == "random" and beats:
            # Random order: check the structure, take the engine's order for the rest.
            mine = [r for r in got["responses"] if r["tag"] == tag]
            covered = sorted(b for r in mine for b in range(r["offset"],
                                                           r["offset"] + r["len"] + 1))
            assert covered == list(range(len(beats)))  # every beat once: no gap, no overlap
            assert [r["last"] for r in mine] == [0] * (len(mine) - 1) + [1]
            assert all(r["status"] == 3 * beats[r["offset"]][1] for r in mine)
            pieces = [(r["status"], r["offset"], r["len"]) for r in mine]
        for k, (st, offset, length) in enumerate(pieces):
            final = int(k == len(pieces) - 1)
            responses.append({"tag": tag, "status": st, "offset": offset, "len": length,
                              "last": final})
            if all_late:
                late.append({"tag": tag, "wire_tag": tag, "after": "timeout",
                             "final": bool(final)})
        if all_late:
            completions.append({"tag": tag, "status": "TIMEOUT", "data": None, "poisoned": 0})
        else:
            completions.append({"tag": tag, "status": status,
                                "data": None if data is None else data.hex(),
                                "poisoned": poisoned})
    got_done = sorted(({k: c[k] for k in ("tag", "status", "data", "poisoned")}
                       for c in got["completions"]), key=lambda c: c["tag"])
    assert got_done == completions
    for c in got["completions"]:  # an error text only where this end ended the op itself
        assert (c["error"] is not None) == (c["status"] == "TIMEOUT")
    assert got["responses"] == responses
    assert got["late_responses"] == late
    assert got["memory_after"] == {"0x1000": target.mem[:256].hex()}
    assert got["poisoned_after"] == [hex(a) for a in sorted(target.poison)
                                     if 0x1000 <= a < 0x1100]
    timeouts = sum(c["status"] == "TIMEOUT" for c in completions)
    assert got["counters"]["timeouts"] == timeouts
    assert got["counters"]["late_responses"] == len(late)
    assert got["counters"]["quarantined"] == len(stop & set(range(len(inputs["ops"]))))


def test_every_error_path_rule_family_has_a_vector() -> None:
    ids = {c["id"] for c in _CASES}
    for family in ("split-always", "split-random", "poison-read", "poison-write",
                   "poison-atomic", "timeout-stop-tag", "timeout-late"):
        assert any(i.startswith(f"error-{family}") for i in ids), family
