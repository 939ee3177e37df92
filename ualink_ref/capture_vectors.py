"""Golden vectors of the capture format, and the scripted scenario captures.

Kinds:

* ``pseudo_header`` — record fields -> the 16 pseudo-header bytes (hex);
* ``pcap_file`` — one record -> the whole pcap and pcapng file bytes (hex);
* ``scenario`` — a scripted scenario name -> what its capture holds (record
  count, CRC errors, replays, requests by command) and the SHA-256 of the
  capture written as an artifact (``captures/<name>.pcap`` or ``.pcapng``).

The artifacts are deterministic byte for byte: timestamps derive from flit
slots, never from the clock.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from typing import Any

from ualink_ref.capture import PSEUDO_HEADER, CaptureRecord, encode_capture
from ualink_ref.vectors import VectorInput

LAYER = "capture"
DESCRIPTION = (
    "Capture pseudo-header encodings, whole pcap / pcapng files, and the scripted scenario "
    "captures (clean traffic, a corrupted flit and its replay, credit exhaustion and "
    "recovery, every atomic kind, raw FEC codewords with errors) written to captures/."
)

_RECORD_KEYS = ("kind", "direction", "fec_mode", "port", "lane", "interleave",
                "symbols_corrected", "uncorrectable", "slot", "timestamp_ns")


def _record(inputs: dict[str, Any]) -> CaptureRecord:
    fields = {k: inputs[k] for k in _RECORD_KEYS if k in inputs}
    return CaptureRecord(data=bytes.fromhex(inputs["data"]), **fields)


def vector_inputs() -> list[VectorInput]:
    """The capture layer's cases (inputs only)."""
    from ualink_ref.capture_run import SCENARIOS

    flit = bytes(640).hex()
    cases = [
        VectorInput("header-spec-example", "pseudo_header",
                    {"data": flit, "direction": "b_to_a", "fec_mode": "kp4", "port": 2,
                     "symbols_corrected": 3, "slot": 1000},
                    "specs/capture.md example, derived by hand"),
        VectorInput("header-codewords-ll-uncorrectable", "pseudo_header",
                    {"data": bytes(1360).hex(), "kind": "fec_codewords", "fec_mode": "ll",
                     "interleave": 2, "uncorrectable": True, "symbols_corrected": 70000,
                     "lane": 3, "port": 1, "slot": 2**32 + 5},
                    "symbols_corrected saturates at 65535; slot wraps modulo 2**32"),
        VectorInput("header-none-fec", "pseudo_header",
                    {"data": bytes(640).hex(), "kind": "fec_codewords", "fec_mode": "none"}),
        VectorInput("file-one-record", "pcap_file",
                    {"data": bytes(range(256)).hex() * 2 + bytes(128).hex(), "slot": 7,
                     "timestamp_ns": 179}),
    ]
    cases += [VectorInput(f"scenario-{name}", "scenario", {"name": name}, s.description)
              for name, s in SCENARIOS.items()]
    return cases


def compute(kind: str, inputs: dict[str, Any]) -> dict[str, Any]:
    """The model's outputs for one case."""
    if kind == "pseudo_header":
        record = _record(inputs)
        header = record.encode()[: PSEUDO_HEADER.byte_length]
        return {"hex": header.hex(), "fields": PSEUDO_HEADER.unpack(header)}
    if kind == "pcap_file":
        record = _record(inputs)
        return {"pcap": encode_capture([record]).hex(),
                "pcapng": encode_capture([record], fmt="pcapng").hex()}
    if kind == "scenario":
        return _scenario(str(inputs["name"]))
    raise ValueError(f"unknown capture vector kind {kind!r}")


def _scenario(name: str) -> dict[str, Any]:
    from ualink_ref.capture_run import SCENARIOS, run_scenario
    from ualink_ref.dissect import dissect_records

    scenario = SCENARIOS[name]
    result = run_scenario(name)
    pcap = encode_capture(result.records, fmt=scenario.container)
    flits = dissect_records(result.records)
    requests = Counter(op.command for f in flits for op in f.ops if op.kind == "request")
    return {
        "records": len(result.records),
        "slots": result.slots,
        "crc_errors": sum(f.crc_error for f in flits),
        "replay_flits": sum(f.replayed for f in flits),
        "ops_completed": sum(len(c) for c in result.completions.values()),
        "requests_by_command": dict(sorted(requests.items())),
        "fec_symbols_corrected": sum(r.symbols_corrected for r in result.records
                                     if r.kind == "dl_flit"),
        "fec_uncorrectable": sum(r.uncorrectable for r in result.records if r.kind == "dl_flit"),
        "pcap_sha256": hashlib.sha256(pcap).hexdigest(),
        "artifact": scenario.artifact,
    }


def artifacts() -> dict[str, bytes]:
    """The scenario captures, byte for byte."""
    from ualink_ref.capture_run import SCENARIOS, run_scenario

    return {s.artifact: encode_capture(run_scenario(name).records, fmt=s.container)
            for name, s in SCENARIOS.items()}
