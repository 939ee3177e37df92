"""Switch-path golden vectors: bytes in on port i, bytes out on port j, per scripted case.

Kind ``switch_path`` (documented in ``specs/vectors.md``, section Switch, and
``specs/fabric.md``): a small pod — accelerators ``0 .. ports-1``, one
:class:`~ualink_ref.node.switch.Switch` built by
:class:`~ualink_ref.sim.fabric.Fabric` with its defaults (switch buffer,
replay timeout, ``compress=False`` endpoints), the given cable length and
switch latency (``cable_m``, ``switch_ns``; rule F3 turns them into
``link_slots`` and ``switch_slots``, also in the expected outputs) — runs on
the harness for ``slots`` slots, one slot a step. ``ops`` are UPLI calls
issued on accelerator ``src``'s endpoint at slot ``at`` towards ``dst`` (a
``dst`` no switch port reaches is answered by the switch with
UNSUPPORTED_REQUEST, rule S2). Expected, per switch port:

* ``in``: every TL flit the port received from its accelerator, ``out``: every
  TL flit it sent to it, each as ``{"slot", "flit"}`` — ``slot`` is the slot
  in which the DL flit that completed the TL flit was sent on that link;
* ``dl_flits_in`` / ``dl_flits_out`` and ``wire_in_sha256`` /
  ``wire_out_sha256``: the DL flits each way and the SHA-256 of the wire bytes
  (FEC codewords) each way, so the PHY + DL path is pinned without storing it.

Also every completion (accelerator, slot, status, data) and the target
memory bytes after the run.
"""

from __future__ import annotations

import hashlib
from typing import Any

from ualink_ref.dl import TLFlitDelivered
from ualink_ref.net.harness import WireChunk
from ualink_ref.sim.fabric import Fabric, FabricConfig
from ualink_ref.sizes import FEC_MODES, check_fec
from ualink_ref.testing.vectors import VectorInput, hexstr, unhex
from ualink_ref.tl.events import Completion

LAYER = "switch"
DESCRIPTION = (
    "Switch path through a 3-accelerator pod on one switch (kp4, 3 m links, 200 ns switch): "
    "per switch port the TL flits in from and out to its accelerator with their slots, the "
    "DL flit counts and wire-byte SHA-256 each way, completions and target memory after, for "
    "a read, a write, an atomic, crossing requests and responses, and unroutable requests."
)

#: The pod every case runs on unless its inputs say otherwise: the fabric defaults
#: (3 m cable -> 1 slot, 200 ns switch -> 8 slots, rule F3).
_POD = {"fec": "kp4", "ports": 3, "cable_m": 3, "switch_ns": 200}


def _mem(acc: int, addr: int, data: bytes) -> dict[str, Any]:
    return {"acc": acc, "addr": hex(addr), "data": hexstr(data)}


def vector_inputs() -> list[VectorInput]:
    """The switch-path cases (inputs only)."""
    pattern = bytes(range(0x40, 0x80))
    old = (0x1122_3344_5566_7788).to_bytes(8, "little")
    return [
        VectorInput("read-0-from-1", "switch_path", {
            **_POD, "slots": 40,
            "memory": [_mem(1, 0x1000, pattern)],
            "ops": [{"at": 0, "src": 0, "dst": 1, "kind": "read", "addr": 0x1000, "length": 64}],
        }, "a 64-byte Read: request port 0 -> port 1, response port 1 -> port 0"),
        VectorInput("write-1-to-2", "switch_path", {
            **_POD, "slots": 40,
            "memory": [],
            "ops": [{"at": 0, "src": 1, "dst": 2, "kind": "write", "addr": 0x2000,
                     "data": hexstr(bytes(range(128)))},
                    {"at": 2, "src": 1, "dst": 2, "kind": "write", "addr": 0x2080,
                     "data": hexstr(b"\xa5" * 8), "byte_enable": 0b1100_0011}],
        }, "a 128-byte WriteFull then a Write with byte enables, port 1 -> port 2"),
        VectorInput("atomic-2-on-0", "switch_path", {
            **_POD, "slots": 40,
            "memory": [_mem(0, 0x3000, old)],
            "ops": [{"at": 0, "src": 2, "dst": 0, "kind": "atomic", "addr": 0x3000,
                     "op": "ADD", "operand": 0x10, "size": 8}],
        }, "a fetching 8-byte atomic ADD, port 2 -> port 0, old value back"),
        VectorInput("crossing-requests-and-responses", "switch_path", {
            **_POD, "slots": 48,
            "memory": [_mem(0, 0x4000, pattern), _mem(2, 0x5000, pattern[::-1])],
            "ops": [{"at": 0, "src": 0, "dst": 2, "kind": "read", "addr": 0x5000,
                     "length": 64},
                    {"at": 0, "src": 2, "dst": 0, "kind": "read", "addr": 0x4000,
                     "length": 64},
                    {"at": 1, "src": 1, "dst": 0, "kind": "write", "addr": 0x4100,
                     "data": hexstr(b"\x5a" * 64)}],
        }, "responses and requests share links both ways; port 0 egress carries both"),
        VectorInput("unroutable-destination", "switch_path", {
            **_POD, "slots": 40,
            "memory": [],
            "ops": [{"at": 0, "src": 0, "dst": 5, "kind": "read", "addr": 0x1000,
                     "length": 64},
                    {"at": 0, "src": 0, "dst": 0x3FF, "kind": "write", "addr": 0x1000,
                     "data": hexstr(bytes(64))}],
        }, "IDs 5 and 1023 reach no port: the switch answers UNSUPPORTED_REQUEST itself"),
    ]


def compute(kind: str, inputs: dict[str, Any]) -> dict[str, Any]:
    """Expected outputs of one switch-path case."""
    if kind == "switch_path":
        return _switch_path(inputs)
    raise ValueError(f"unknown switch vector kind {kind!r}")


def _issue(ep: Any, op: dict[str, Any]) -> int:
    k, dst, addr = op["kind"], int(op["dst"]), int(op["addr"])
    if k == "read":
        return int(ep.read(dst, addr, int(op["length"])))
    if k == "write":
        be = op.get("byte_enable")
        return int(ep.write(dst, addr, unhex(op["data"]), None if be is None else int(be)))
    if k == "atomic":
        return int(ep.atomic(dst, addr, str(op["op"]), int(op["operand"]), op.get("compare"),
                             int(op.get("size", 8)), bool(op.get("fetch", True))))
    raise ValueError(f"unknown op kind {k!r}")


class _PortRecorder:
    """A harness tap collecting, per switch port and direction, TL flits and wire bytes."""

    def __init__(self, ports: int) -> None:
        self.tl: dict[tuple[int, str], list[dict[str, Any]]] = {
            (i, d): [] for i in range(ports) for d in ("in", "out")}
        self.wire: dict[tuple[int, str], Any] = {
            (i, d): hashlib.sha256() for i in range(ports) for d in ("in", "out")}
        self.dl_flits: dict[tuple[int, str], int] = {
            (i, d): 0 for i in range(ports) for d in ("in", "out")}

    def __call__(self, chunk: WireChunk) -> None:
        # Port names are "p0.acc{i}" and "p0.sw{i}" (Fabric, rule F1).
        into_switch = ".sw" in chunk.dst
        index = int(chunk.dst.rsplit("sw" if into_switch else "acc", 1)[1])
        key = (index, "in" if into_switch else "out")
        self.wire[key].update(chunk.sent)
        self.dl_flits[key] += chunk.flits
        self.tl[key].extend({"slot": int(chunk.sent_at), "flit": hexstr(e.data)}
                            for e in chunk.events if type(e) is TLFlitDelivered)


def _switch_path(inputs: dict[str, Any]) -> dict[str, Any]:
    fec = inputs["fec"]
    if fec not in FEC_MODES:
        raise ValueError(f"unknown fec {fec!r}")
    ports = int(inputs["ports"])
    # The pod exactly as Fabric builds it (rule F3 turns metres and ns into slots).
    config = FabricConfig(accelerators=ports, fec=check_fec(fec),
                          cable_m=float(inputs["cable_m"]), switch_ns=float(inputs["switch_ns"]))
    fabric = Fabric(config)
    for entry in inputs["memory"]:
        fabric.memories[int(entry["acc"])].poke(int(entry["addr"], 0), unhex(entry["data"]))
    recorder = _PortRecorder(ports)
    net = fabric.network
    net.add_tap(recorder)
    eps = fabric.endpoints[0]
    ops = sorted(enumerate(inputs["ops"]), key=lambda p: (int(p[1]["at"]), p[0]))
    handles: dict[tuple[int, int], int] = {}
    completions: list[dict[str, Any]] = []
    for now in range(int(inputs["slots"])):
        while ops and int(ops[0][1]["at"]) <= now:
            index, op = ops.pop(0)
            src = int(op["src"])
            handles[(src, _issue(eps[src], op))] = index
        for name, event in net.step():
            if type(event) is Completion:
                acc = fabric.port_of[name][1]
                completions.append({
                    "op": handles.pop((acc, event.handle)), "acc": acc, "slot": now,
                    "status": event.status.name,
                    "data": None if event.data is None else hexstr(event.data)})
    memory_after = []
    for op in inputs["ops"]:
        dst = int(op["dst"])
        if 0 <= dst < ports and op["kind"] in ("write", "atomic"):
            addr = int(op["addr"])
            size = len(unhex(op["data"])) if op["kind"] == "write" else int(op.get("size", 8))
            memory_after.append(_mem(dst, addr, fabric.memories[dst].peek(addr, size)))
    return {
        "link_slots": config.link_slots,
        "switch_slots": config.switch_slots,
        "ports": [{
            "in": recorder.tl[(i, "in")],
            "out": recorder.tl[(i, "out")],
            "dl_flits_in": recorder.dl_flits[(i, "in")],
            "dl_flits_out": recorder.dl_flits[(i, "out")],
            "wire_in_sha256": recorder.wire[(i, "in")].hexdigest(),
            "wire_out_sha256": recorder.wire[(i, "out")].hexdigest(),
        } for i in range(ports)],
        "completions": completions,
        "memory_after": memory_after,
        "unanswered_ops": sorted(handles.values()),
    }


__all__ = ["DESCRIPTION", "LAYER", "compute", "vector_inputs"]
