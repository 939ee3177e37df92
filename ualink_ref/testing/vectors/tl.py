"""TL golden vectors: fields, control half-flits, dissection, UPLI ops, credits, a trace.

Kinds (documented in ``specs/vectors.md``, section TL):

* ``field_encode`` — a layout name and field values in; the field's bytes out;
* ``field_decode`` — bytes in; the layout and values, or the error class;
* ``control_half`` — a list of fields in; the 32-byte control half-flit out;
* ``dissect`` — a 64-byte TL flit and the data half-flits owed from before in;
  every half-flit's kind and fields, and the count owed after, out (or ``error``,
  the class, when the model rejects the flit);
* ``upli_op`` — memory bytes before, one UPLI operation in; the completion
  (status, data), the memory bytes after, and the TL flits each way after
  the initial credit grants (request side ``a``, accelerator 1, to ``b``, 2);
* ``credit_grant`` — a credit configuration in; the flow-control fields of
  the first flit a fresh TransactionLayer sends (its initial grant);
* ``trace`` — UPLI calls on two Endpoints in; per slot, for each side, the
  TL flits handed to the DL, the DL flits and the wire bytes, and the
  completions;
* ``error_path`` — split responses, poison and completion timeouts
  (:mod:`ualink_ref.testing.vectors.tl_errors`).
"""

from __future__ import annotations

from typing import Any

from ualink_ref.bitfields import BitFormat
from ualink_ref.errors import DecodeError, VectorFormatError
from ualink_ref.net.harness import Network
from ualink_ref.net.tl_pair import TLPair
from ualink_ref.node.config import EndpointConfig
from ualink_ref.node.endpoint import Endpoint
from ualink_ref.sizes import FEC_MODES, check_fec
from ualink_ref.testing.vectors import VectorInput, hexstr, tl_errors, unhex
from ualink_ref.tl import fields as F
from ualink_ref.tl.config import TLConfig
from ualink_ref.tl.credits import CreditConfig
from ualink_ref.tl.events import Completion
from ualink_ref.tl.flit import dissect, encode_control_half, view_to_json
from ualink_ref.tl.memory import Memory
from ualink_ref.tl.transaction import TransactionLayer
from ualink_ref.tl.upli import AtomicOp

LAYER = "tl"
DESCRIPTION = (
    "TL control fields (FTYPE 0-6), control half-flits, TL flit dissection, every UPLI "
    "command and every atomic op and size with memory before/after, initial credit grants, "
    "and an end-to-end trace (UPLI -> TL flits -> DL flits -> KP4 wire bytes)"
)

_BY_NAME = {fmt.name: fmt for fmt in F.ALL_FORMATS}

# One value set per layout that makes every field non-zero where it can be.
_FIELD_CASES: list[tuple[str, dict[str, int]]] = [
    ("tl_flow_control", {"req_cmd": 63, "rsp_cmd": 1, "req_data": 0x80, "rsp_data": 0x5A}),
    ("tl_vc_flow_control", {"vchan": 2, "req_cmd": 31, "rsp_cmd": 3, "req_data": 17,
                            "rsp_data": 255}),
    ("tl_request", {"cmd": 0x29, "vchan": 1, "asi": 0, "tag": 0x5A5, "pool": 1, "attr": 0,
                    "len": 15, "metadata": 0xC3, "addr": 0x0123_4567_89AB_CD >> 2,
                    "src_acc": 0x3FF, "dst_acc": 0x155, "cload": 1, "cway": 2, "numbeats": 0}),
    ("tl_request", {"cmd": 0x30, "vchan": 3, "tag": 1, "attr": 0x20, "len": 1,
                    "addr": 0x1000 >> 2, "src_acc": 1, "dst_acc": 2}),
    ("tl_response", {"vchan": 1, "tag": 0x7FF, "pool": 0, "len": 3, "offset": 0, "status": 0,
                     "rd_wr": 0, "last": 1, "src_acc": 2, "dst_acc": 1}),
    ("tl_response", {"vchan": 0, "tag": 9, "status": 2, "rd_wr": 1, "last": 1, "src_acc": 0x200,
                     "dst_acc": 0x001}),
    ("tl_compressed_request", {"cmd": 0x28, "vchan": 2, "tag": 0x123, "pool": 1, "attr": 0,
                               "len": 63, "cway": 3, "numbeats": 3, "addr_lo": 0x2AAAAA}),
    ("tl_compressed_response_with_data", {"vchan": 3, "tag": 0x400, "pool": 1, "len": 1,
                                          "last": 1}),
    ("tl_compressed_response_no_data", {"vchan": 1, "tag": 0x3, "last": 1}),
]

_DECODE_CASES: list[tuple[str, str]] = [
    ("unknown-ftype", "f0000000"),
    ("response-spare-set", "2000000000000001"),
    ("compressed-response-spare-set", "40000101"),
    ("wrong-length-request", "10" + "00" * 7),
    ("empty", ""),
]

_DECODE_CASES += [
    ("request-unknown-command", F.REQUEST.pack(ftype=1, cmd=0x3F).hex()),
    ("response-unknown-status", F.RESPONSE.pack(ftype=2, status=0xF).hex()),
    ("compressed-request-unknown-command", F.COMPRESSED_REQUEST.pack(ftype=3, cmd=0x3F).hex()),
    ("compressed-response-no-data-spare-set", "50000001"),
]

#: The named value an enum field takes in the all-max / all-one field cases.
_ENUM_PICK = {"max": {"cmd": 0x32, "status": 3}, "one": {"cmd": 0x2A, "status": 1}}


def _extreme(fmt: BitFormat, which: str) -> dict[str, int]:
    """Every field of ``fmt`` but FTYPE and the reserved ones at its largest value (or 1);
    an enum field at a named value (:data:`_ENUM_PICK`)."""
    out = {}
    for f in fmt.fields:
        if f.name == "ftype" or f.reserved:
            continue
        out[f.name] = _ENUM_PICK[which][f.name] if f.enum else (
            f.max_value if which == "max" else 1)
    return out


_ATOMIC_OLD = {4: 0x8000_0005, 8: 0xFFFF_FFFF_FFFF_FFF0}
_ATOMIC_OPERAND = {4: 0x7FFF_FFFF, 8: 0x0000_0000_0000_0020}


def vector_inputs() -> list[VectorInput]:
    """Every TL case, inputs only."""
    cases: list[VectorInput] = []
    for i, (name, values) in enumerate(_FIELD_CASES):
        cases.append(VectorInput(f"field-{name}-{i}", "field_encode",
                                 {"format": name, "values": values}))
    for fmt in F.ALL_FORMATS:  # every field at its largest value, then at one
        for which in ("max", "one"):
            cases.append(VectorInput(f"field-{fmt.name}-all-{which}", "field_encode",
                                     {"format": fmt.name, "values": _extreme(fmt, which)}))
    for case_id, raw in _DECODE_CASES:
        cases.append(VectorInput(f"field-decode-{case_id}", "field_decode", {"hex": raw}))
    cases.append(VectorInput("half-mixed", "control_half", {"fields": [
        {"ftype": 0, "values": {"req_cmd": 2, "req_data": 4}},
        {"ftype": 5, "values": {"tag": 7, "last": 1}},
        {"ftype": 2, "values": {"tag": 8, "status": 1, "rd_wr": 1, "last": 1, "dst_acc": 1}},
        {"ftype": 1, "values": {"cmd": 0x03, "tag": 9, "len": 3, "addr": 0x40, "dst_acc": 2}},
    ]}))
    write_half = encode_control_half([(1, {"cmd": 0x28, "len": 1, "numbeats": 0, "dst_acc": 2}),
                                      (3, {"cmd": 0x03, "tag": 1, "len": 0})])
    cases.append(VectorInput("dissect-control-then-be", "dissect",
                             {"flit": hexstr(write_half + b"\x0f" + bytes(31)), "pending": 0},
                             note="Write (0x28): byte-enable half-flit follows its control"))
    cases.append(VectorInput("dissect-data-then-control", "dissect",
                             {"flit": hexstr(bytes(range(32)) + encode_control_half([])),
                              "pending": 1}))
    cases.extend(_op_cases())
    for name, cfg in (("default", CreditConfig()),
                      ("small-vc-only", CreditConfig(per_vc=(1, 1, 5, 4), pool=(0, 0, 0, 0)))):
        cases.append(VectorInput(f"credit-grant-{name}", "credit_grant",
                                 {"per_vc": list(cfg.per_vc), "pool": list(cfg.pool)}))
    cases.append(VectorInput("trace-kp4-write-read-atomic", "trace", {
        "fec": "kp4",
        "slots": 6,
        "ops": [
            {"kind": "write", "addr": 0x2000, "data": hexstr(bytes(range(64)))},
            {"kind": "read", "addr": 0x2000, "length": 64},
            {"kind": "atomic", "addr": 0x2008, "op": "ADD", "operand": 5, "size": 8},
        ],
    }, note="UPLI calls on endpoint a (acc 1) towards b (acc 2), one flit slot per step"))
    for fec in FEC_MODES:
        cases.append(VectorInput(f"trace-{fec}-every-command", "trace",
                                 {"fec": fec, "slots": 8, "ops": _every_command()},
                                 note="every command at each request size class"))
    cases.extend(tl_errors.vector_inputs())  # split responses, poison, timeouts
    return cases


def _every_command() -> list[dict[str, Any]]:
    """Reads, Writes (byte enables), WriteFulls and Write Messages of 4-8, 64 and 128-256
    bytes, an AtomicR and an AtomicNR: every command at each size class."""
    ops: list[dict[str, Any]] = [{"kind": "read", "addr": 0x3000, "length": n}
                                 for n in (4, 64, 256)]
    ops += [{"kind": "write", "addr": 0x4000, "data": hexstr(bytes(range(n))),
             "byte_enable": (1 << n) - 2} for n in (8, 64, 128)]
    ops += [{"kind": "write", "addr": 0x5000, "data": hexstr(bytes(7 * i & 0xFF for i in
                                                                  range(n)))}
            for n in (8, 64, 256)]
    ops += [{"kind": "message", "addr": 0x6000, "data": hexstr(bytes(3 * i & 0xFF for i in
                                                                    range(n)))}
            for n in (4, 64, 256)]
    ops += [{"kind": "atomic", "addr": 0x7000, "op": "ADD", "operand": 3, "size": 4},
            {"kind": "atomic", "addr": 0x7008, "op": "XOR", "operand": 5, "size": 8,
             "fetch": False}]
    return ops


def _op_cases() -> list[VectorInput]:
    cases: list[VectorInput] = []
    before = {"0x1000": hexstr(bytes(range(0x10, 0x50)))}
    cases.append(VectorInput("op-read", "upli_op",
                             {"memory": before,
                              "op": {"kind": "read", "addr": 0x1004, "length": 24}}))
    cases.append(VectorInput("op-read-256", "upli_op",
                             {"memory": before, "op": {"kind": "read", "addr": 0x1000,
                                                       "length": 256}}))
    cases.append(VectorInput("op-writefull", "upli_op", {"memory": before, "op": {
        "kind": "write", "addr": 0x1008, "data": hexstr(b"\xaa" * 8)}}))
    cases.append(VectorInput("op-write-byte-enable", "upli_op", {"memory": before, "op": {
        "kind": "write", "addr": 0x1008, "data": hexstr(b"\xbb" * 8), "byte_enable": 0b10100101}}))
    cases.append(VectorInput("op-write-message", "upli_op", {"memory": before, "op": {
        "kind": "message", "addr": 0x1008, "data": hexstr(b"msg!")}}))
    cases.append(VectorInput("op-read-unmapped", "upli_op", {"memory": before, "op": {
        "kind": "read", "addr": 1 << 32, "length": 4}}))
    for op in AtomicOp:
        for size in (4, 8):
            for fetch in (True, False) if op == AtomicOp.ADD else (True,):
                old = _ATOMIC_OLD[size]
                spec: dict[str, Any] = {"kind": "atomic", "addr": 0x1010, "op": op.name,
                                        "operand": _ATOMIC_OPERAND[size], "size": size,
                                        "fetch": fetch}
                if op == AtomicOp.CAS:
                    spec["compare"] = old
                mem = {"0x1010": hexstr(old.to_bytes(size, "little"))}
                suffix = "" if fetch else "-nr"
                cases.append(VectorInput(f"op-atomic-{op.name.lower()}-{size}{suffix}", "upli_op",
                                         {"memory": mem, "op": spec}))
    return cases


def compute(kind: str, inputs: dict[str, Any]) -> dict[str, Any]:
    """Expected outputs of one TL case."""
    if kind == "field_encode":
        fmt = _BY_NAME[str(inputs["format"])]
        values = {"ftype": fmt.field("ftype").default, **inputs["values"]}
        return {"hex": hexstr(fmt.pack(values)), "text": fmt.describe(fmt.unpack(fmt.pack(values)))}
    if kind == "field_decode":
        try:
            fmt, values = F.decode_field(unhex(str(inputs["hex"])))
        except DecodeError as exc:
            return {"error": type(exc).__name__}
        return {"format": fmt.name, "values": values}
    if kind == "control_half":
        fields = [(int(f["ftype"]), f["values"]) for f in inputs["fields"]]
        return {"hex": hexstr(encode_control_half(fields))}
    if kind == "dissect":
        try:
            view = dissect(unhex(str(inputs["flit"])), int(inputs["pending"]))
        except DecodeError as exc:  # a rejection (e.g. a difftest reproducer's input)
            return {"error": type(exc).__name__}
        return {"halves": view_to_json(view), "pending_after": view.pending_after}
    if kind == "upli_op":
        return _upli_op(inputs)
    if kind == "credit_grant":
        per_vc, pool = (tuple(int(x) for x in inputs[k]) for k in ("per_vc", "pool"))
        cfg = CreditConfig(per_vc=per_vc, pool=pool)
        flit = TransactionLayer(1, config=TLConfig(credits=cfg)).poll()
        assert flit is not None
        view = dissect(flit)
        return {"flit": hexstr(flit), "halves": view_to_json(view)}
    if kind == "trace":
        return _trace(inputs)
    if kind == tl_errors.KIND:
        return tl_errors.compute(inputs)
    raise ValueError(f"unknown TL vector kind {kind!r}")


def _issue(tl: Any, dst: int, op: dict[str, Any]) -> int:
    k = op["kind"]
    if k == "read":
        return int(tl.read(dst, int(op["addr"]), int(op["length"])))
    if k in ("write", "message"):
        return int(tl.write(dst, int(op["addr"]), unhex(op["data"]), op.get("byte_enable"),
                            **({"message": True} if k == "message" else {})))
    if k != "atomic":
        raise ValueError(f"unknown op kind {k!r}")
    fetch = op.get("fetch", True)
    if not isinstance(fetch, bool):  # a vector edited to "false" must not read as True
        raise ValueError(f"op fetch must be true or false, got {fetch!r}")
    return int(tl.atomic(dst, int(op["addr"]), str(op["op"]), int(op["operand"]),
                         op.get("compare"), int(op.get("size", 8)), fetch))


def _completion_json(c: Completion) -> dict[str, Any]:
    data = None if c.data is None else hexstr(c.data)
    # The vectors' key stays "tag" (committed layout); it holds the operation's handle.
    return {"tag": c.handle, "status": c.status.name, "data": data}


def _upli_op(inputs: dict[str, Any]) -> dict[str, Any]:
    memory = Memory()
    for addr, raw in inputs["memory"].items():
        memory.poke(int(addr, 0), unhex(raw))
    a, b = TransactionLayer(1), TransactionLayer(2, memory)
    pair = TLPair(a, b, record=True)
    pair.run()  # initial credit grants
    assert pair.trace is not None
    start = len(pair.trace)
    op = inputs["op"]
    _issue(a, 2, op)
    got, _ = pair.run()
    flits = pair.trace[start:]
    addr = int(op["addr"])
    lo = min([addr] + [int(k, 0) for k in inputs["memory"]])
    span = max(64, max(int(k, 0) + len(unhex(v)) for k, v in inputs["memory"].items()) - lo)
    return {
        "completion": _completion_json(got[0]),
        "memory_after": {hex(lo): hexstr(memory.peek(lo, span))},
        "messages": [[src, hex(at), hexstr(data)] for src, at, data in b.messages],
        "flits_a_to_b": [hexstr(f) for _, d, f in flits if d == "a->b"],
        "flits_b_to_a": [hexstr(f) for _, d, f in flits if d == "b->a"],
    }


def _trace(inputs: dict[str, Any]) -> dict[str, Any]:
    """Two endpoints on the harness, one flit per slot, zero latency (received after the
    sends of the same slot): what each hands its DL, polls and sends, slot by slot."""
    fec = inputs["fec"]
    if fec not in FEC_MODES:
        raise VectorFormatError(f"unknown fec {fec!r}", "trace")
    config = EndpointConfig.with_fec(check_fec(fec))
    a, b = Endpoint(1, config=config), Endpoint(2, config=config)
    a.trace, b.trace = [], []
    network = Network(batch=1, edge="last_slot")
    network.add_port("a", a)
    network.add_port("b", b)
    network.connect("a", "b", latency=0)
    for op in inputs["ops"]:
        _issue(a, 2, op)
    slots: list[dict[str, Any]] = []
    completions: list[dict[str, Any]] = []
    for now in range(int(inputs["slots"])):
        marks = {"a": len(a.trace), "b": len(b.trace)}
        events = network.step()
        entry: dict[str, Any] = {"slot": now}
        for name, ep in (("a", a), ("b", b)):
            record = (ep.trace or [])[marks[name]:]
            entry[name] = {kind: [hexstr(x) for k, x in record if k == kind]
                           for kind in ("tl", "dl", "wire")}
        completions += [{"slot": now, **_completion_json(e)} for port, e in events
                        if port == "a" and isinstance(e, Completion)]
        slots.append(entry)
    return {"slots": slots, "completions": completions}


__all__ = ["DESCRIPTION", "LAYER", "compute", "vector_inputs"]
