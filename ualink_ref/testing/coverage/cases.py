"""Sampling one golden-vector case: ``sample_case(cov, layer, case)`` (specs/coverage.md).

Each ``(layer, kind)`` of specs/vectors.md has a sampler that reads the case's
``inputs`` and ``expected`` — the file's own content, so a third party's vectors
are sampled as they are — and hits the fields, error classes, crosses and rule
facts it shows. A malformed case (wrong types, bad hex) samples what can be read
and nothing else: ``vectors verify`` is where it is reported.
"""

from __future__ import annotations

import json
import re
from collections import defaultdict
from collections.abc import Callable
from typing import Any

from ualink_ref.capture.run import SCENARIOS
from ualink_ref.dl.formats import FlitOp, header_payload
from ualink_ref.errors import UALinkError
from ualink_ref.phy.flits import MODES
from ualink_ref.testing.coverage.captures import sample_capture_bytes
from ualink_ref.testing.coverage.model import Coverage
from ualink_ref.testing.coverage.points import (
    ATOMIC_OP_SIZE,
    ERROR_COUNTS,
    ERROR_POINT,
    FLIT_CODEC,
    RS_DECODE,
)
from ualink_ref.testing.coverage.receive import sample_receive
from ualink_ref.testing.coverage.rules import fact
from ualink_ref.testing.coverage.wire import (
    sample_dl_flit,
    sample_message,
    sample_pseudo_header,
    sample_tl_field,
    sample_tl_flits,
)
from ualink_ref.tl.fields import FType

Sampler = Callable[[Coverage, dict[str, Any], dict[str, Any]], None]
_REPLAY = re.compile(r"ReplayStarted\(.*reason='(\w+)'\)")
_RESPONSES = (FType.RESPONSE, FType.COMPRESSED_RESPONSE_DATA, FType.COMPRESSED_RESPONSE_NODATA)


def error(cov: Coverage, name: object) -> None:
    """Hit the error class ``name`` (a class name as vectors and difftest record it)."""
    if isinstance(name, str) and cov.model.has(ERROR_POINT, name):
        cov.hit(ERROR_POINT, name)


def _hex(text: object) -> bytes:
    return bytes.fromhex(text) if isinstance(text, str) else b""


def _flit_list(value: object) -> list[bytes]:
    return [_hex(v) for v in value] if isinstance(value, list) else []


# -- PHY -------------------------------------------------------------------------------


def _phy_rs_decode(cov: Coverage, inputs: dict[str, Any], expected: dict[str, Any]) -> None:
    code = MODES[inputs["code"]].code
    assert code is not None
    t = (code.n - code.k) // 2
    count = len(inputs["error_positions"])
    index = 0 if count == 0 else 1 if count < t else 2 if count == t else \
        3 if count < 2 * t else 4
    cov.hit(RS_DECODE, f"{inputs['code']}/{ERROR_COUNTS[index]}")
    if expected.get("uncorrectable") is True:
        error(cov, "FecUncorrectableError")


def _phy_flit(kind: str) -> Sampler:
    def sample(cov: Coverage, inputs: dict[str, Any], expected: dict[str, Any]) -> None:
        name = f"{kind}/{inputs['mode']}/il{inputs['interleave']}"
        if cov.model.has(FLIT_CODEC, name):
            cov.hit(FLIT_CODEC, name)
        if any(v is True for v in expected.get("uncorrectable") or ()):
            error(cov, "FecUncorrectableError")
    return sample


# -- DL ----------------------------------------------------------------------------------


def _dl_flit_encode(cov: Coverage, inputs: dict[str, Any], expected: dict[str, Any]) -> None:
    sample_dl_flit(cov, _hex(expected.get("flit")))


def _dl_flit_decode(cov: Coverage, inputs: dict[str, Any], expected: dict[str, Any]) -> None:
    sample_dl_flit(cov, _hex(inputs.get("flit")))
    error(cov, expected.get("error"))


def _dl_message_encode(cov: Coverage, inputs: dict[str, Any], expected: dict[str, Any]) -> None:
    sample_message(cov, int(expected["word"], 16))


def _dl_message_decode(cov: Coverage, inputs: dict[str, Any], expected: dict[str, Any]) -> None:
    word = inputs["word"]
    if isinstance(word, int) and not isinstance(word, bool):
        sample_message(cov, word)
    error(cov, expected.get("error"))
    if (expected.get("message") or {}).get("type") == "unknown":
        fact(cov, "dl.vendor_or_unknown_message")


def _dl_retry(cov: Coverage, inputs: dict[str, Any], expected: dict[str, Any]) -> None:
    sent_requests = {"ab": 0, "ba": 0}
    for entry in expected["wire"]:
        data = _hex(entry["flit"])
        op = sample_dl_flit(cov, data)
        if op == FlitOp.REPLAY_REQUEST:
            sent_requests[entry["dir"]] += 1
        elif op == FlitOp.ACK and not header_payload(data):
            fact(cov, "dl.ack_only")
    for end, tx in (("a", "ab"), ("b", "ba")):
        for text in expected.get(f"events_{end}") or ():
            found = _REPLAY.search(str(text))
            if found and found.group(1) in ("request", "timeout"):
                fact(cov, f"dl.replay_on_{found.group(1)}" if found.group(1) == "request"
                     else "dl.replay_timeout")
        counters = expected.get(f"counters_{end}") or {}
        if counters.get("sequence_errors", 0) > 0 and expected.get(f"delivered_{end}_ok") is True:
            fact(cov, "dl.gap_dropped")
        if counters.get("crc_errors", 0) > 0 and sent_requests[tx] == 1:
            fact(cov, "dl.one_request")
        if inputs.get(f"{end}_tl_flits", 0) > 0 and sent_requests[tx] > 0:
            fact(cov, "dl.request_before_data")
    sample_receive(cov, inputs, expected)


# -- TL ----------------------------------------------------------------------------------


def _tl_field_encode(cov: Coverage, inputs: dict[str, Any], expected: dict[str, Any]) -> None:
    sample_tl_field(cov, _hex(expected.get("hex")))


def _tl_field_decode(cov: Coverage, inputs: dict[str, Any], expected: dict[str, Any]) -> None:
    data = _hex(inputs.get("hex"))
    sample_tl_field(cov, data)
    name = expected.get("error")
    error(cov, name)
    ftype = data[0] >> 4 if data else None
    if name == "ReservedBitsError" and ftype in _RESPONSES:
        fact(cov, "tl.spare_rejected")
    if name == "FieldRangeError" and ftype is not None and ftype not in set(FType):
        fact(cov, "tl.undecodable_field")


def _tl_control_half(cov: Coverage, inputs: dict[str, Any], expected: dict[str, Any]) -> None:
    half = _hex(expected.get("hex"))
    sample_tl_flits(cov, [half + bytes(64 - len(half))] if len(half) == 32 else [])


def _tl_dissect(cov: Coverage, inputs: dict[str, Any], expected: dict[str, Any]) -> None:
    sample_tl_flits(cov, [_hex(inputs.get("flit"))], pending=int(inputs.get("pending", 0)))


def _atomic(cov: Coverage, op: object) -> None:
    if isinstance(op, dict) and op.get("kind") == "atomic":
        name = f"{str(op.get('op', '')).upper()}/{op.get('size')}"
        if cov.model.has(ATOMIC_OP_SIZE, name):
            cov.hit(ATOMIC_OP_SIZE, name)


def _two_ways(cov: Coverage, expected: dict[str, Any], fec: str | None = None) -> None:
    for key in ("flits_a_to_b", "flits_b_to_a"):
        sample_tl_flits(cov, _flit_list(expected.get(key)), fec=fec)


def _tl_upli_op(cov: Coverage, inputs: dict[str, Any], expected: dict[str, Any]) -> None:
    _two_ways(cov, expected)
    _atomic(cov, inputs.get("op"))


def _tl_credit_grant(cov: Coverage, inputs: dict[str, Any], expected: dict[str, Any]) -> None:
    sample_tl_flits(cov, [_hex(expected.get("flit"))])


def _tl_trace(cov: Coverage, inputs: dict[str, Any], expected: dict[str, Any]) -> None:
    fec = inputs.get("fec")
    for side in ("a", "b"):
        tl: list[bytes] = []
        for slot in expected.get("slots") or ():
            entry = slot.get(side) or {}
            tl += _flit_list(entry.get("tl"))
            for flit in _flit_list(entry.get("dl")):
                sample_dl_flit(cov, flit)
        sample_tl_flits(cov, tl, fec=str(fec))
    for op in inputs.get("ops") or ():
        _atomic(cov, op)


def _tl_error_path(cov: Coverage, inputs: dict[str, Any], expected: dict[str, Any]) -> None:
    _two_ways(cov, expected)
    ops = inputs.get("ops") or []
    for op in ops:
        _atomic(cov, op)
    completions = expected.get("completions") or []
    responses = expected.get("responses") or []
    pieces: dict[int, list[dict[str, Any]]] = defaultdict(list)
    for r in responses:
        pieces[r["tag"]].append(r)
    split = inputs.get("split", "never")
    if split != "never" and any(r.get("last") == 0 for r in responses):
        fact(cov, "tl.split")
    if split == "random":
        fact(cov, "tl.split_random")
    if any([p["offset"] for p in ps] != sorted(p["offset"] for p in ps) for ps in pieces.values()):
        fact(cov, "tl.pieces_out_of_order")
    kinds = [op.get("kind") for op in ops]
    if split == "always" and "write" in kinds and any(
            len(ps) == 1 and ps[0]["offset"] == 0 and ps[0]["last"] == 1 for ps in pieces.values()):
        fact(cov, "tl.write_not_split")
    if any(len(ps) > 1 for ps in pieces.values()) and len(completions) == len(ops):
        fact(cov, "tl.split_completes_once")
    if inputs.get("poison") and any(c.get("poisoned") for c in completions):
        fact(cov, "tl.poisoned_read")
    if any(op.get("poison") for op in ops):
        fact(cov, "tl.poisoned_write_data")
        if expected.get("poisoned_after"):
            fact(cov, "tl.poison_stored")
    if any({p["status"] for p in ps} >= {0, 3} for ps in pieces.values()):
        fact(cov, "tl.poison_pieces")
    for op, c in zip(ops, completions, strict=False):
        if op.get("kind") == "atomic" and c.get("status") == "DATA_ERROR":
            fact(cov, "tl.atomic_poisoned")
    if inputs.get("timeout_slots") is not None:
        fact(cov, "tl.timeout_armed")
    if any(c.get("status") == "TIMEOUT" for c in completions):
        fact(cov, "tl.timeout")
    if expected.get("late_responses"):
        fact(cov, "tl.late_response")
    if (expected.get("counters") or {}).get("quarantined", 0) > 0:
        fact(cov, "tl.quarantine")
    if inputs.get("stop_tags"):
        fact(cov, "tl.stop_tag")


# -- capture and switch --------------------------------------------------------------------


def _capture_header(cov: Coverage, inputs: dict[str, Any], expected: dict[str, Any]) -> None:
    sample_pseudo_header(cov, _hex(expected.get("hex")))


def _capture_file(cov: Coverage, inputs: dict[str, Any], expected: dict[str, Any]) -> None:
    for key in ("pcap", "pcapng"):
        sample_capture_bytes(cov, _hex(expected.get(key)))


def _capture_scenario(cov: Coverage, inputs: dict[str, Any], expected: dict[str, Any]) -> None:
    messages = expected.get("dl_messages") or {}
    changes = expected.get("link_changes") or []
    if "TLRateNotification" in messages:
        fact(cov, "dl.pacing")
    if "VendorMessage" in messages or "UnknownMessage" in messages:
        fact(cov, "dl.vendor_or_unknown_message")
    if expected.get("uart_received"):
        fact(cov, "dl.uart")
    if changes:
        fact(cov, "dl.link_states")
    for change in changes:
        _slot, _end, old, new, reason = change
        if old == "training" and new == "up":
            fact(cov, "dl.retrained")
        if reason == "retrain needed":
            fact(cov, "dl.retrain_needed")
        if new == "training" and "ChannelNegotiation" in messages:
            fact(cov, "dl.training_negotiation")
        if new in ("fault", "idle"):
            fact(cov, f"dl.link_{new}" if new == "fault" else "dl.idle_probe")
    scenario = SCENARIOS.get(str(inputs.get("name")))
    plan = str(scenario.settings.get("faults") or "") if scenario is not None else ""
    for entry in plan.split(";"):
        word = entry.split()[0] if entry.split() else ""
        if word in ("down", "poison"):
            fact(cov, f"fault.{word}")
        elif word == "stop-tag":
            fact(cov, "fault.stop_tag")


def _switch_path(cov: Coverage, inputs: dict[str, Any], expected: dict[str, Any]) -> None:
    fec = str(inputs.get("fec"))
    fact(cov, "switch.path")
    requests = compressed = 0
    for port in expected.get("ports") or []:
        seen: dict[str, set[int]] = {}
        for way in ("in", "out"):
            fields = sample_tl_flits(cov, [_hex(e["flit"]) for e in port.get(way) or []],
                                     fec=fec)
            seen[way] = {f["ftype"] for f in fields}
            requests += sum(f["ftype"] == FType.REQUEST for f in fields)
            compressed += sum(f["ftype"] == FType.COMPRESSED_REQUEST for f in fields)
            if seen[way] & {FType.FLOW_CONTROL, FType.VC_FLOW_CONTROL}:
                fact(cov, "switch.credits")
        if FType.REQUEST in seen["out"] and seen["out"] & set(_RESPONSES):
            fact(cov, "switch.shared_egress")
    if requests and not compressed:
        fact(cov, "switch.uncompressed")
    if any(c.get("status") == "UNSUPPORTED_REQUEST" for c in expected.get("completions") or ()):
        fact(cov, "switch.unroutable")
    if isinstance(expected.get("switch_slots"), int) and expected["switch_slots"] > 0:
        fact(cov, "switch.latency")
    for op in inputs.get("ops") or ():
        _atomic(cov, op)


SAMPLERS: dict[tuple[str, str], Sampler] = {
    ("phy", "rs_decode"): _phy_rs_decode,
    ("phy", "flit_encode"): _phy_flit("flit_encode"),
    ("phy", "flit_decode"): _phy_flit("flit_decode"),
    ("dl", "flit_encode"): _dl_flit_encode,
    ("dl", "flit_decode"): _dl_flit_decode,
    ("dl", "message_encode"): _dl_message_encode,
    ("dl", "message_decode"): _dl_message_decode,
    ("dl", "retry_scenario"): _dl_retry,
    ("tl", "field_encode"): _tl_field_encode,
    ("tl", "field_decode"): _tl_field_decode,
    ("tl", "control_half"): _tl_control_half,
    ("tl", "dissect"): _tl_dissect,
    ("tl", "upli_op"): _tl_upli_op,
    ("tl", "credit_grant"): _tl_credit_grant,
    ("tl", "trace"): _tl_trace,
    ("tl", "error_path"): _tl_error_path,
    ("capture", "pseudo_header"): _capture_header,
    ("capture", "pcap_file"): _capture_file,
    ("capture", "scenario"): _capture_scenario,
    ("switch", "switch_path"): _switch_path,
}


def sample_case(cov: Coverage, layer: str, case: object) -> bool:
    """Sample one vector case of ``layer``; False when it was not sampled (not an object,
    a kind without a sampler, or contents too malformed to read)."""
    if not isinstance(case, dict):
        return False
    sampler = SAMPLERS.get((layer, str(case.get("kind"))))
    inputs, expected = case.get("inputs"), case.get("expected")
    if sampler is None or not isinstance(inputs, dict) or not isinstance(expected, dict):
        return False
    cov.samples += 1
    try:
        sampler(cov, inputs, expected)
    except (KeyError, TypeError, ValueError, AttributeError, IndexError, UALinkError,
            json.JSONDecodeError):
        return False  # what was read before the fault stays sampled
    return True


__all__ = ["SAMPLERS", "error", "sample_case"]
