"""Switch-path golden vectors: committed == fresh generation, and independent confirmation.

The confirmation reads only the vector file and the readable BitFormat codec
(``dissect_stream``): every request and response field that leaves the switch
on port j must be one that entered on the port its routing names, with the
same TL fields except those the switch is documented to change (specs/fabric.md
S3/S4: ``pool``, ``cload``, ``cway``), the same data half-flits, in order, no
earlier than the documented latency allows (S7, F3) — and every field in is
accounted for. Switch-generated answers (S2) are derived here from the request.
Read data, atomic results and memory after are re-derived from the inputs.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from ualink_ref.testing import vectors
from ualink_ref.tl.flit import dissect_stream

ROOT = Path(__file__).resolve().parents[2]
COMMITTED = ROOT / "vectors" / "switch.json"
# Fields a switch may change on egress (specs/fabric.md S3, S4).
CHANGED = {"request": {"pool", "cload", "cway"}, "response": {"pool"}}
FTYPE_KIND = {1: "request", 2: "response"}


def _cases() -> list[dict[str, Any]]:
    return list(json.loads(COMMITTED.read_text())["cases"])


def _fields(entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Requests and responses in stream order with their data half-flits and slot."""
    flits = [bytes.fromhex(e["flit"]) for e in entries]
    out: list[dict[str, Any]] = []
    waiting: list[dict[str, Any]] = []  # fields still owed data, in field order (tl.md rule 2)
    for entry, view in zip(entries, dissect_stream(flits), strict=True):
        for half in view.halves:
            if half.kind == "data":
                target = next(f for f in waiting if f["owed"])
                target["data"].append(half.raw)
                target["owed"] -= 1
                continue
            for f in half.fields:
                if f.ftype in FTYPE_KIND:
                    field = {"kind": FTYPE_KIND[f.ftype], "values": dict(f.values), "data": [],
                             "owed": f.data_halves, "slot": entry["slot"]}
                    out.append(field)
                    waiting.append(field)
                else:
                    assert f.ftype in (0, 6), f"unexpected field {f.describe()}"  # credits only
            waiting = [f for f in waiting if f["owed"]]
    assert not waiting
    return out


def _strip(field: dict[str, Any]) -> dict[str, int]:
    return {k: v for k, v in field["values"].items() if k not in CHANGED[field["kind"]]}


def test_committed_vectors_equal_fresh_generation(tmp_path: Path) -> None:
    vectors.generate(tmp_path, ["switch"])
    assert (tmp_path / "switch.json").read_bytes() == COMMITTED.read_bytes()


def test_verify_catches_a_changed_egress_flit(tmp_path: Path) -> None:
    doc = json.loads(COMMITTED.read_text())
    case = doc["cases"][0]
    flit = bytearray.fromhex(case["expected"]["ports"][1]["out"][1]["flit"])
    flit[5] ^= 0x01
    case["expected"]["ports"][1]["out"][1]["flit"] = flit.hex()
    (tmp_path / "switch.json").write_text(json.dumps(doc))
    assert [(m.case, m.field) for m in vectors.verify_dir(tmp_path).mismatches] == [
        (case["id"], "ports")]


def test_latencies_from_metres_and_ns() -> None:
    for case in _cases():
        inp, exp = case["inputs"], case["expected"]
        assert exp["link_slots"] == math.ceil(inp["cable_m"] * 5 / 25.6) == 1
        assert exp["switch_slots"] == math.ceil(inp["switch_ns"] / 25.6) == 8


def test_egress_is_ingress_routed_with_only_documented_changes() -> None:
    checked = 0
    for case in _cases():
        inp, exp = case["inputs"], case["expected"]
        n = inp["ports"]
        hop = 1 + exp["link_slots"] + exp["switch_slots"]  # arrival edge, link, switch (S7)
        ins = [_fields(p["in"]) for p in exp["ports"]]
        outs = [_fields(p["out"]) for p in exp["ports"]]
        remaining = [list(o) for o in outs]
        for i, fields in enumerate(ins):
            for f in fields:
                v = f["values"]
                assert v["src_acc"] == i  # what accelerator i sends names it as source
                if f["kind"] == "request":
                    assert v["cload"] == 0  # pod endpoints run compress=False (F5)
                if not 0 <= v["dst_acc"] < n:
                    # S2: the switch answers on the same port, without its own latency.
                    assert f["kind"] == "request"
                    want = {"ftype": 2, "vchan": v["vchan"], "tag": v["tag"], "len": 0,
                            "offset": 0, "status": 1, "last": 1, "src_acc": v["dst_acc"],
                            "dst_acc": i, "spare": 0,
                            "rd_wr": 0 if v["cmd"] in (0x03, 0x30) else 1}
                    got = remaining[i].pop(0)
                    assert got["kind"] == "response" and _strip(got) == want, case["id"]
                    assert got["data"] == [] and got["slot"] >= f["slot"] + 1 + exp["link_slots"]
                    checked += 1
                    continue
                out = remaining[v["dst_acc"]]
                # Per (ingress, class, VC) order is kept (S5): the first match is this one.
                k = next(k for k, g in enumerate(out)
                         if g["kind"] == f["kind"] and _strip(g) == _strip(f))
                got = out.pop(k)
                assert got["data"] == f["data"], case["id"]
                assert got["slot"] >= f["slot"] + hop, (case["id"], got["slot"], f["slot"])
                checked += 1
        assert remaining == [[] for _ in range(n)], f"{case['id']}: egress fields not from ingress"
    assert checked >= 14


def test_zero_load_request_leaves_exactly_one_hop_later() -> None:
    # A lone request meets an idle egress: it leaves as soon as it is eligible (S7, F3).
    for case in _cases():
        if len(case["inputs"]["ops"]) != 1:
            continue
        exp, op = case["expected"], case["inputs"]["ops"][0]
        (req,) = [f for f in _fields(exp["ports"][op["src"]]["in"]) if f["kind"] == "request"]
        (fwd,) = [f for f in _fields(exp["ports"][op["dst"]]["out"]) if f["kind"] == "request"]
        assert fwd["slot"] == req["slot"] + 1 + exp["link_slots"] + exp["switch_slots"]


def _memory(inp: dict[str, Any]) -> dict[tuple[int, int], int]:
    mem: dict[tuple[int, int], int] = {}
    for m in inp["memory"]:
        for k, b in enumerate(bytes.fromhex(m["data"])):
            mem[(m["acc"], int(m["addr"], 16) + k)] = b
    return mem


def test_completions_and_memory_by_hand() -> None:
    for case in _cases():
        inp, exp = case["inputs"], case["expected"]
        mem = _memory(inp)
        assert exp["unanswered_ops"] == []
        assert sorted(c["op"] for c in exp["completions"]) == list(range(len(inp["ops"])))
        want_after = []
        for index, op in enumerate(inp["ops"]):
            (comp,) = [c for c in exp["completions"] if c["op"] == index]
            assert comp["acc"] == op["src"]
            if not 0 <= op["dst"] < inp["ports"]:
                assert (comp["status"], comp["data"]) == ("UNSUPPORTED_REQUEST", None)
                continue
            assert comp["status"] == "OKAY"
            dst, addr = op["dst"], op["addr"]
            if op["kind"] == "read":
                want = bytes(mem.get((dst, addr + k), 0) for k in range(op["length"]))
                assert comp["data"] == want.hex()
            elif op["kind"] == "write":
                data = bytes.fromhex(op["data"])
                be = op.get("byte_enable")
                old = bytes(mem.get((dst, addr + k), 0) for k in range(len(data)))
                new = bytes(d if be is None or be >> k & 1 else o
                            for k, (d, o) in enumerate(zip(data, old, strict=True)))
                assert comp["data"] is None
                want_after.append({"acc": dst, "addr": hex(addr), "data": new.hex()})
            else:
                assert (op["op"], op["size"]) == ("ADD", 8)
                old_v = int.from_bytes(bytes(mem.get((dst, addr + k), 0) for k in range(8)),
                                       "little")
                assert comp["data"] == old_v.to_bytes(8, "little").hex()
                new_v = (old_v + op["operand"]) % 2**64
                want_after.append({"acc": dst, "addr": hex(addr),
                                   "data": new_v.to_bytes(8, "little").hex()})
        assert exp["memory_after"] == want_after, case["id"]


def test_read_response_carries_the_target_memory() -> None:
    (case,) = [c for c in _cases() if c["id"] == "read-0-from-1"]
    inp, exp = case["inputs"], case["expected"]
    (rsp,) = [f for f in _fields(exp["ports"][0]["out"]) if f["kind"] == "response"]
    assert b"".join(rsp["data"]) == bytes.fromhex(inp["memory"][0]["data"])
    assert (rsp["values"]["src_acc"], rsp["values"]["dst_acc"]) == (1, 0)
