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

from ualink_ref.capture.dissect import dissect_records
from ualink_ref.capture.format import (
    PSEUDO_HEADER,
    CaptureRecord,
    decode_capture_file,
    encode_capture,
)
from ualink_ref.capture.run import SCENARIOS, run_scenario
from ualink_ref.dl.flit import FLIT_BYTES, HEADER_BYTES, SEGMENT_LENGTHS
from ualink_ref.dl.messages import decode_message
from ualink_ref.dl.segments import SEGMENT_OFFSETS
from ualink_ref.errors import UALinkError
from ualink_ref.testing.vectors import VectorInput

LAYER = "capture"
DESCRIPTION = (
    "Capture pseudo-header encodings, whole pcap / pcapng files, and the scripted scenario "
    "captures (clean traffic, a corrupted flit and its replay, credit exhaustion and "
    "recovery, every atomic kind, raw FEC codewords with errors, a link outage and "
    "retrain, TL-rate pacing, a long UART stream with vendor and unknown DL messages) "
    "written to captures/."
)

_RECORD_KEYS = ("kind", "direction", "fec_mode", "port", "lane", "interleave",
                "symbols_corrected", "uncorrectable", "slot", "timestamp_ns")


def _record(inputs: dict[str, Any]) -> CaptureRecord:
    fields = {k: inputs[k] for k in _RECORD_KEYS if k in inputs}
    return CaptureRecord(data=bytes.fromhex(inputs["data"]), **fields)


def vector_inputs() -> list[VectorInput]:
    """The capture layer's cases (inputs only)."""

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
        VectorInput("header-fields-max", "pseudo_header",
                    {"data": flit, "port": 255, "lane": 255, "symbols_corrected": 65535,
                     "slot": 2**32 - 1},
                    "port, lane, symbols_corrected and slot at their largest values"),
        VectorInput("header-fields-one", "pseudo_header",
                    {"data": flit, "port": 1, "lane": 1, "symbols_corrected": 1, "slot": 1}),
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
    scenario = SCENARIOS[name]
    result = run_scenario(name)
    pcap = encode_capture(result.records, fmt=scenario.container)
    flits = dissect_records(result.records)
    requests = Counter(op.command for f in flits for op in f.ops if op.kind == "request")
    extra: dict[str, Any] = {}  # only scenarios with link events or DL messages have these
    if result.link_changes:
        extra["link_changes"] = [list(c) for c in result.link_changes]
    if result.uart:
        extra["uart_received"] = {side: data.hex() for side, data in result.uart.items()}
    messages = Counter(type(m).__name__ for f in flits if f.flit is not None
                       for m in _messages(f.flit.messages))
    if messages:
        extra["dl_messages"] = dict(sorted(messages.items()))
    return {
        **extra,
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


def _messages(words: tuple[int | None, ...]) -> list[Any]:
    out: list[Any] = []
    for word in words:
        if word is None:
            continue
        try:
            out.append(decode_message(word))
        except UALinkError:
            out.append(None)
    return out


def artifacts() -> dict[str, bytes]:
    """The scenario captures, byte for byte."""

    return {s.artifact: encode_capture(run_scenario(name).records, fmt=s.container)
            for name, s in SCENARIOS.items()}


#: At most this many differing records are itemised per artifact.
_MAX_RECORDS_REPORTED = 20


def _flit_region(offset: int) -> str:
    """Name of the DL-flit field holding byte ``offset`` (specs/dl.md layout)."""

    if offset < HEADER_BYTES:
        return f"flit.header[{offset}]"
    if offset >= FLIT_BYTES - 4:
        return "flit.crc"
    for k, ((hdr, body), length) in enumerate(zip(SEGMENT_OFFSETS, SEGMENT_LENGTHS, strict=True)):
        if offset == hdr:
            return f"flit.segment{k}.header"
        if body <= offset < body + length:
            return f"flit.segment{k}.body[{offset - body}]"
    return f"flit[{offset}]"  # not reached: the regions above cover the flit


def _record_mismatches(index: int, mine: CaptureRecord,
                       model: CaptureRecord) -> list[tuple[str, str, Any, Any]]:
    case = f"record {index}"
    out: list[tuple[str, str, Any, Any]] = []
    if mine.timestamp_ns != model.timestamp_ns:
        out.append((case, "timestamp_ns", mine.timestamp_ns, model.timestamp_ns))
    a, b = mine.header_values(), model.header_values()
    out += [(case, k, a[k], b[k]) for k in a if a[k] != b[k]]
    if mine.data != model.data:
        diffs = [i for i in range(min(len(mine.data), len(model.data)))
                 if mine.data[i] != model.data[i]]
        name = _flit_region if mine.kind == model.kind == "dl_flit" else (
            lambda i: f"codewords[{i}]")
        seen: set[str] = set()
        for i in diffs:
            field = name(i)
            if field not in seen:  # one line per field, showing its first differing byte
                seen.add(field)
                out.append((case, field, f"{mine.data[i]:02x}", f"{model.data[i]:02x}"))
    return out


def artifact_mismatches(name: str, file_bytes: bytes,
                        model_bytes: bytes) -> list[tuple[str, str, Any, Any]]:
    """Where a capture artifact differs from the model's: ``(case, field, file, model)``.

    The case is ``record N`` (0-based, in file order) and the field a
    pseudo-header field, ``timestamp_ns``, or the DL-flit field holding the
    differing byte (``flit.header[i]``, ``flit.segmentK.header``,
    ``flit.segmentK.body[i]``, ``flit.crc``; ``codewords[i]`` for raw
    codeword records). A file that is not a readable capture is one mismatch.
    """

    del name
    model = [CaptureRecord.decode(p.data, p.timestamp_ns)
             for p in decode_capture_file(model_bytes)]
    try:
        packets = decode_capture_file(file_bytes)
    except UALinkError as exc:
        return [("-", "<capture>", f"unreadable: {exc}", "a capture file")]
    out: list[tuple[str, str, Any, Any]] = []
    if len(packets) != len(model):
        out.append(("-", "records", len(packets), len(model)))
    bad_records = 0
    for i, (pkt, want) in enumerate(zip(packets, model, strict=False)):
        try:
            mine = CaptureRecord.decode(pkt.data, pkt.timestamp_ns)
        except UALinkError as exc:
            found = [(f"record {i}", "<record>", f"unreadable: {exc}", "a capture record")]
        else:
            found = _record_mismatches(i, mine, want)
        if found:
            bad_records += 1
            if bad_records > _MAX_RECORDS_REPORTED:
                out.append(("-", "<more records>", "differ", "not itemised"))
                break
            out += found
    if not out and file_bytes != model_bytes:  # same records, different container bytes
        at = next(i for i in range(min(len(file_bytes), len(model_bytes)) + 1)
                  if i >= min(len(file_bytes), len(model_bytes))
                  or file_bytes[i] != model_bytes[i])
        out.append(("-", f"<container byte {at}>", "differs", "model bytes"))
    return out
