"""DL golden vectors: flit encodes, decode errors, DL messages, a scripted retry.

Kinds (documented in ``specs/vectors.md``, section DL):

* ``flit_encode`` — header fields, TL bytes, first TL-flit offset and message
  words in; the 640 flit bytes, header, segment headers, CRC and TL-flit start
  offsets out (or ``error``, the class, when the model refuses the fields);
* ``flit_decode`` — 640 (or other) bytes in; either the decoded fields or the
  error class (bad CRC, reserved bits, unknown op, non-zero fill, length);
* ``message_encode`` / ``message_decode`` — DL message values <-> 32-bit words;
* ``retry_scenario`` — two DataLinks over a scripted channel (one flit
  corrupted): every flit put on the wire each way, per slot, and the events.

TL payload in the scenarios follows :func:`tl_pattern` so a third party can
rebuild it: TL flit ``k`` of an end with ``base`` b has byte ``i`` equal to
``(b + 64*k + i) mod 256``.
"""

from __future__ import annotations

import math
from dataclasses import asdict, fields
from typing import Any

from ualink_ref.dl import messages as dlm
from ualink_ref.dl.config import DLConfig
from ualink_ref.dl.datalink import DataLink
from ualink_ref.dl.events import TLFlitDelivered
from ualink_ref.dl.flit import DLFlit
from ualink_ref.dl.formats import FlitOp
from ualink_ref.errors import DecodeError, EncodeError
from ualink_ref.net.channels import FaultyChannel, flip_bits
from ualink_ref.net.link_pair import LinkPair
from ualink_ref.testing.vectors import VectorInput, hexstr, unhex

LAYER = "dl"
DESCRIPTION = (
    "DL flits (640 B: header, 5 segment headers, 628 B payload, CRC-32), DL messages, "
    "decode errors, and a scripted go-back-N retry scenario"
)

_MESSAGE_TYPES: dict[str, type] = {
    "noop": dlm.NoOp,
    "tl_rate": dlm.TLRateNotification,
    "device_id": dlm.DeviceId,
    "port_number": dlm.PortNumber,
    "channel_negotiation": dlm.ChannelNegotiation,
    "uart_data": dlm.UartData,
    "vendor": dlm.VendorMessage,
    "unknown": dlm.UnknownMessage,
}


def tl_pattern(base: int, count: int, start: int = 0) -> list[bytes]:
    """TL flits ``start .. start+count-1`` of the scenario pattern with ``base``."""
    return [bytes((base + 64 * k + i) & 0xFF for i in range(64))
            for k in range(start, start + count)]


def _stream(base: int, offset: int, length: int) -> bytes:
    """Bytes ``offset .. offset+length-1`` of the concatenated pattern stream."""
    return bytes((base + i) & 0xFF for i in range(offset, offset + length))


def _flit_inputs(op: str, *, tl: bytes = b"", first: int = 0, seq: int = 0, ack: int = 0,
                 lo: int = 0, messages: list[int | None] | None = None) -> dict[str, Any]:
    return {"op": op, "flit_seq": seq, "ack_req_seq": ack, "flit_seq_lo": lo,
            "tl": hexstr(tl), "first_tl_start": first,
            "messages": messages if messages is not None else [None] * 5}


def _flit_from(inputs: dict[str, Any]) -> DLFlit:
    op = FlitOp.__members__.get(str(inputs["op"]).upper())
    if op is None:
        raise EncodeError(f"DLFlit: unknown op {inputs['op']!r}", field="op")
    return DLFlit(op, int(inputs["flit_seq"]),
                  int(inputs["ack_req_seq"]), int(inputs["flit_seq_lo"]), unhex(inputs["tl"]),
                  int(inputs["first_tl_start"]),
                  tuple(None if m is None else int(m) for m in inputs["messages"]))


def _flit_fields(f: DLFlit) -> dict[str, Any]:
    return {"op": f.op.name.lower(), "flit_seq": f.flit_seq, "ack_req_seq": f.ack_req_seq,
            "flit_seq_lo": f.flit_seq_lo, "tl": hexstr(f.tl),
            "first_tl_start": f.first_tl_start, "messages": list(f.messages)}


def _message_json(m: dlm.DLMessage) -> dict[str, Any]:
    out: dict[str, Any] = {"type": next(k for k, v in _MESSAGE_TYPES.items() if v is type(m))}
    for fld in fields(m):
        value = getattr(m, fld.name)
        out[fld.name] = hexstr(value) if isinstance(value, bytes) else (
            int(value) if not isinstance(value, bool) else value)
    return out


def _message_from(inputs: dict[str, Any]) -> dlm.DLMessage:
    kind = _MESSAGE_TYPES[str(inputs["type"])]
    args = {k: v for k, v in inputs.items() if k != "type"}
    if kind is dlm.UartData:
        args["data"] = unhex(args.get("data", ""))
    if kind is dlm.ChannelNegotiation:
        args["command"] = dlm.ChannelCommand(int(args.get("command", 1)))
    message: dlm.DLMessage = kind(**args)
    return message


def _encode_case(name: str, note: str, op: str, **flit: Any) -> VectorInput:
    """A ``flit_encode`` case: the flit :func:`_flit_inputs` builds from ``op`` and ``flit``."""
    return VectorInput(name, "flit_encode", _flit_inputs(op, **flit), note)


def _good_flit() -> bytes:
    return _flit_from(_flit_inputs("explicit", seq=1, tl=_stream(0, 0, 628))).encode()


def _with_crc(data: bytearray) -> str:
    import zlib  # the flit CRC is the IEEE CRC-32; zlib is fine for building bad inputs

    data[636:] = zlib.crc32(bytes(data[:636])).to_bytes(4, "big")
    return hexstr(bytes(data))


def vector_inputs() -> list[VectorInput]:
    """Every DL case (inputs only)."""
    rate = dlm.TLRateNotification(rate=127).encode()
    dev = dlm.DeviceId(response=True, device_id=0xBEEF).encode()
    noop = dlm.NoOp().encode()
    cases = [
        _encode_case("flit-explicit-seq1-full",
                     "628 TL bytes from a TL-flit boundary: 9 whole TL flits and 52 bytes",
                     "explicit", seq=1, tl=_stream(0, 0, 628)),
        _encode_case("flit-explicit-seq511-phase12",
                     "the next 628 bytes of the stream: 12 finish a TL flit begun earlier",
                     "explicit", seq=511, tl=_stream(0, 628, 628), first=12),
        _encode_case("flit-replay-seq2", "first flit of a replay",
                     "replay", seq=2, tl=_stream(0x40, 0, 628)),
        _encode_case("flit-ack-piggyback-partial",
                     "3 TL flits then zero fill; acknowledgement piggy-backed",
                     "ack", ack=5, lo=3, tl=_stream(0x80, 0, 192)),
        _encode_case("flit-ack-only", "no TL bytes: consumes no sequence number", "ack", ack=17),
        _encode_case("flit-ack-none-yet", "ack_req_seq 0: nothing received yet", "ack"),
        _encode_case("flit-replay-request-42", "asks for a replay from 42",
                     "replay_request", ack=42),
        _encode_case("flit-explicit-messages",
                     "three DL message words take the start of segments 0, 2, 4",
                     "explicit", seq=300, tl=_stream(7, 0, 616), first=20,
                     messages=[noop, None, rate, None, dev]),
        _encode_case("flit-ack-messages-only", "message words in every segment, no TL bytes",
                     "ack", ack=1, messages=[
                         dlm.PortNumber(True, 9).encode(), dlm.ChannelNegotiation().encode(),
                         dlm.UartData(b"hi").encode(), dlm.PortNumber().encode(), noop]),
        _encode_case("flit-explicit-tail-only", "only the 40-byte end of a TL flit, then fill",
                     "explicit", seq=9, tl=_stream(3, 0, 40), first=40),
        _encode_case("flit-explicit-ends-at-segment-2",
                     "six TL flits fill segments 0-2 exactly; segments 3-4 are fill",
                     "explicit", seq=256, tl=_stream(9, 0, 384)),
        _encode_case("flit-ack-511", "ack_req_seq at its largest value", "ack", ack=511),
    ]
    good = _good_flit()
    bad_crc = bytearray(good)
    bad_crc[639] ^= 1
    three = flip_bits(good, [5, 2500, 5000])
    rsvd = bytearray(good)
    rsvd[3] |= 1  # segment 0 header: alt_sector (reserved) set
    bad_op = bytearray(good)
    bad_op[0] |= 0xE0
    fill = bytearray(_flit_from(_flit_inputs("ack", ack=5, lo=3,
                                             tl=_stream(0x80, 0, 192))).encode())
    fill[300] = 0xFF  # inside the zero fill of segment 2
    seq_zero = bytearray(good)
    seq_zero[1] = 0  # header byte 1 = flit_seq [7:0] (it was 1): a data flit numbered 0
    cmd_rsvd = bytearray(_flit_from(_flit_inputs("ack", ack=17)).encode())
    cmd_rsvd[2] |= 1  # command header: the reserved byte
    starts = bytearray(good)
    starts[3] |= 0xC0  # segment 0 header: tl_starts = 3
    cases += [
        VectorInput("decode-good", "flit_decode", {"flit": hexstr(good)}),
        VectorInput("decode-bad-crc-lsb", "flit_decode", {"flit": hexstr(bytes(bad_crc))},
                    "last CRC bit flipped"),
        VectorInput("decode-bad-crc-3-bits", "flit_decode", {"flit": hexstr(three)},
                    "bits 5, 2500, 5000 flipped: CRC-32 detects every 3-bit error"),
        VectorInput("decode-reserved-bit", "flit_decode", {"flit": _with_crc(rsvd)},
                    "good CRC, segment header reserved bit set"),
        VectorInput("decode-unknown-op", "flit_decode", {"flit": _with_crc(bad_op)},
                    "good CRC, op 7"),
        VectorInput("decode-nonzero-fill", "flit_decode", {"flit": _with_crc(fill)},
                    "good CRC, a fill byte not zero"),
        VectorInput("decode-truncated", "flit_decode", {"flit": hexstr(good[:639])}),
        VectorInput("decode-seq-zero", "flit_decode", {"flit": _with_crc(seq_zero)},
                    "good CRC, an explicit data flit with flit_seq 0"),
        VectorInput("decode-command-reserved", "flit_decode", {"flit": _with_crc(cmd_rsvd)},
                    "good CRC, an ack-only flit with a reserved header bit set"),
        VectorInput("decode-three-tl-starts", "flit_decode", {"flit": _with_crc(starts)},
                    "good CRC, segment 0 header tl_starts = 3"),
    ]
    for name, msg in (("noop", dlm.NoOp()), ("tl-rate", dlm.TLRateNotification(127)),
                      ("device-id-request", dlm.DeviceId()),
                      ("device-id-response", dlm.DeviceId(True, 0xBEEF)),
                      ("port-number-response", dlm.PortNumber(True, 200)),
                      ("channel-online", dlm.ChannelNegotiation(dlm.ChannelCommand.REQUEST_ONLINE)),
                      ("channel-offline-ack", dlm.ChannelNegotiation(dlm.ChannelCommand.ACK)),
                      ("uart-two-bytes", dlm.UartData(b"ok")),
                      ("tl-rate-zero", dlm.TLRateNotification(0)),
                      ("tl-rate-one", dlm.TLRateNotification(1)),
                      ("tl-rate-max", dlm.TLRateNotification(255)),
                      ("device-id-one", dlm.DeviceId(True, 1)),
                      ("device-id-max", dlm.DeviceId(True, 0xFFFF)),
                      ("port-number-one", dlm.PortNumber(True, 1)),
                      ("port-number-max", dlm.PortNumber(True, 255)),
                      ("channel-offline", dlm.ChannelNegotiation(
                          dlm.ChannelCommand.REQUEST_OFFLINE)),
                      ("channel-nak", dlm.ChannelNegotiation(dlm.ChannelCommand.NAK)),
                      ("uart-empty", dlm.UartData(b"")),
                      ("uart-one-byte", dlm.UartData(b"x")),
                      ("uart-data-one", dlm.UartData(b"\x00\x01")),
                      ("uart-data-max", dlm.UartData(b"\xff\xff")),
                      ("vendor-zero", dlm.VendorMessage(0, 0)),
                      ("vendor-one", dlm.VendorMessage(1, 1)),
                      ("vendor-max", dlm.VendorMessage(7, 0x7F_FFFF))):
        cases.append(VectorInput(f"message-{name}", "message_encode", _message_json(msg)))
    for name, word in (("unknown-class", 0x0000_0008), ("compressed", 0x0000_0001),
                       ("noop-reserved-set", 0x8000_0000), ("tl-rate", rate),
                       ("bit1-set", 0x0000_0002), ("basic-type-1", 0x0000_0040),
                       ("basic-type-7", 0x0000_01C0), ("body-max", 0xFFFF_FE00),
                       ("tl-rate-reserved-set", rate | 1 << 9),
                       ("device-id-reserved-set", dev | 1 << 25),
                       ("port-number-reserved-set", dlm.PortNumber(True, 9).encode() | 1 << 17),
                       ("channel-reserved-set", dlm.ChannelNegotiation().encode() | 1 << 9),
                       ("uart-reserved-set", dlm.UartData(b"hi").encode() | 1 << 25),
                       ("uart-count-3", dlm.UartData(b"hi").encode() | 1 << 30),
                       ("vendor", dlm.VendorMessage(3, 0x12345).encode())):
        cases.append(VectorInput(f"message-decode-{name}", "message_decode", {"word": word}))
    cases.append(VectorInput(
        "retry-corrupt-second-flit", "retry_scenario",
        {"a_tl_flits": 20, "b_tl_flits": 0, "delay": 1, "slots": 12,
         "faults_ab": {"1": "corrupt"}, "faults_ba": {}},
        "a's second DL flit is corrupted; b asks for a replay from seq 2"))
    cases.append(VectorInput(
        "retry-both-ways-lost-request", "retry_scenario",
        {"a_tl_flits": 30, "b_tl_flits": 12, "delay": 2, "slots": 40,
         "faults_ab": {"2": "corrupt"}, "faults_ba": {"4": "drop"},
         "replay_timeout": 16},
        "both ends send; a's third flit is corrupted and b's replay request is lost, "
        "so a's replay timer recovers"))
    cases.append(VectorInput(
        "retry-acks-lost-duplicates", "retry_scenario",
        {"a_tl_flits": 30, "b_tl_flits": 0, "delay": 3, "slots": 60,
         "faults_ab": {"2": "corrupt"},
         "faults_ba": {str(i): "drop" for i in range(5)}, "replay_timeout": 6},
        "a's third flit is corrupted and b's first five flits (its acks and its replay "
        "request) are lost: a's timer replays flits b already holds, which b drops as "
        "duplicates before and after its request"))
    return cases


def compute(kind: str, inputs: dict[str, Any]) -> dict[str, Any]:
    """Expected outputs of one DL case."""
    if kind == "flit_encode":
        try:
            flit = _flit_from(inputs)
        except EncodeError as exc:  # a rejection (e.g. a difftest reproducer's input)
            return {"error": type(exc).__name__}
        data = flit.encode()
        return {"flit": hexstr(data), "header": hexstr(data[:3]),
                "segment_headers": [s.header for s in flit.segments()],
                "crc": hexstr(data[636:]), "tl_flit_starts": flit.tl_flit_starts()}
    if kind == "flit_decode":
        data = unhex(inputs["flit"])
        try:
            return {"error": None, "fields": _flit_fields(DLFlit.decode(data))}
        except DecodeError as exc:
            return {"error": type(exc).__name__}
    if kind == "message_encode":
        word = _message_from(inputs).encode()
        return {"word": f"{word:08x}"}
    if kind == "message_decode":
        try:
            message = dlm.decode_message(int(inputs["word"]))
        except DecodeError as exc:
            return {"error": type(exc).__name__}
        return {"error": None, "message": _message_json(message)}
    if kind == "retry_scenario":
        return _scenario(inputs)
    raise ValueError(f"unknown DL vector kind {kind!r}")


#: Bounds on a scenario's size, checked before anything is built: a vector file
#: may have been edited, and verification must not run for hours or fill memory.
SCENARIO_LIMITS = {"a_tl_flits": 100_000, "b_tl_flits": 100_000, "slots": 100_000,
                   "delay": 10_000}


def _bounded(inputs: dict[str, Any], key: str) -> int:
    value = inputs[key]
    if isinstance(value, bool) or not isinstance(value, int) or not (
            0 <= value <= SCENARIO_LIMITS[key]):
        raise EncodeError(f"scenario {key} must be an integer in 0..{SCENARIO_LIMITS[key]}, "
                          f"got {value!r:.40}")
    return value


def _scenario(inputs: dict[str, Any]) -> dict[str, Any]:
    sizes = {key: _bounded(inputs, key) for key in SCENARIO_LIMITS}
    timeout = inputs.get("replay_timeout", 128)
    if isinstance(timeout, bool) or not isinstance(timeout, int | float) or not (
            0 < timeout < math.inf):
        raise EncodeError(f"scenario replay_timeout must be a positive number, got {timeout!r:.40}")
    pair = LinkPair(
        DataLink(DLConfig(replay_timeout=timeout)), DataLink(DLConfig(replay_timeout=timeout)),
        FaultyChannel(delay=sizes["delay"],
                      script={int(k): v for k, v in inputs["faults_ab"].items()}),
        FaultyChannel(delay=sizes["delay"],
                      script={int(k): v for k, v in inputs["faults_ba"].items()}))
    pair.record_wire = True
    pair.a.send(tl_pattern(0x00, sizes["a_tl_flits"]))
    pair.b.send(tl_pattern(0x80, sizes["b_tl_flits"]))
    pair.run(sizes["slots"])
    out: dict[str, Any] = {
        "wire": [{"slot": slot, "dir": d, "flit": hexstr(f)} for slot, d, f in pair.wire],
        "idle_at_end": pair.idle(),
    }
    for end in ("a", "b"):
        out[f"delivered_{end}"] = len(pair.delivered[end])
        out[f"delivered_{end}_ok"] = pair.delivered[end] == tl_pattern(
            0x80 if end == "a" else 0x00, len(pair.delivered[end]))
        out[f"events_{end}"] = [repr(e) for e in pair.events[end]
                                if not isinstance(e, TLFlitDelivered)]
        out[f"counters_{end}"] = asdict(getattr(pair, end).counters)
    return out


__all__ = ["DESCRIPTION", "LAYER", "compute", "tl_pattern", "vector_inputs"]
