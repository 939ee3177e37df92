"""DL golden vectors: committed file == fresh generation, and independent confirmation.

The confirmation does not use the model's encoder: each flit is rebuilt here
from its inputs with hand-packed header bits, a byte-by-byte walk of the
segments, and ``zlib.crc32`` over bytes 0..635. The first retry scenario is
checked against a sequence of flits derived by hand from the rules in
``specs/dl.md``.
"""

from __future__ import annotations

import json
import zlib
from pathlib import Path
from typing import Any

import pytest

from ualink_ref.testing import vectors
from ualink_ref.testing.vectors import dl as dl_vectors

ROOT = Path(__file__).resolve().parents[2]
COMMITTED = ROOT / "vectors" / "dl.json"

OPS = {"explicit": 0, "replay": 1, "ack": 2, "replay_request": 3}
SEGMENTS = (128, 128, 128, 124, 120)


def _doc() -> dict[str, Any]:
    doc: dict[str, Any] = json.loads(COMMITTED.read_text())
    return doc


def _cases(kind: str) -> list[dict[str, Any]]:
    return [c for c in _doc()["cases"] if c["kind"] == kind]


def test_committed_vectors_equal_fresh_generation(tmp_path: Path) -> None:
    vectors.generate(tmp_path, ["dl"])
    assert (tmp_path / "dl.json").read_bytes() == COMMITTED.read_bytes()


def test_verify_accepts_committed_and_catches_a_changed_byte(tmp_path: Path) -> None:
    doc = _doc()
    (tmp_path / "dl.json").write_text(json.dumps(doc))
    assert vectors.verify_dir(tmp_path).ok
    case = next(c for c in doc["cases"] if c["kind"] == "flit_encode")
    flit = bytearray.fromhex(case["expected"]["flit"])
    flit[100] ^= 0x01
    case["expected"]["flit"] = flit.hex()
    (tmp_path / "dl.json").write_text(json.dumps(doc))
    report = vectors.verify_dir(tmp_path)
    assert [m.field for m in report.mismatches] == ["flit"]


def hand_encode(inputs: dict[str, Any]) -> tuple[bytes, list[int], list[int]]:
    """Independent encoder: (flit bytes, segment header bytes, TL-flit start offsets)."""
    op = OPS[inputs["op"]]
    tl = bytes.fromhex(inputs["tl"])
    payload = 1 if tl else 0
    if op in (0, 1):  # op 3 | payload 1 | rsvd 3 | flit_seq 9 | rsvd 8
        header = (op << 21) | (payload << 20) | (inputs["flit_seq"] << 8)
    else:  # op 3 | payload 1 | ack_req_seq 9 | flit_seq_lo 3 | rsvd 8
        header = (op << 21) | (payload << 20) | (inputs["ack_req_seq"] << 11) | (
            inputs["flit_seq_lo"] << 8)
    out = bytearray(header.to_bytes(3, "big"))
    first = inputs["first_tl_start"]
    used = 0  # TL bytes placed so far
    seg_headers, starts = [], []
    for k, length in enumerate(SEGMENTS):
        hdr_pos = len(out)
        out.append(0)
        msg = inputs["messages"][k]
        if msg is not None:
            out += msg.to_bytes(4, "big")
            length -= 4
        body_start = len(out)
        boundaries = []  # body offsets that are TL-flit boundaries (real starts or fill)
        for i in range(length):
            stream = used + i
            at_boundary = stream >= first and (stream - first) % 64 == 0
            if at_boundary and (stream < len(tl) or stream == len(tl)):
                boundaries.append(i)
            out.append(tl[stream] if stream < len(tl) else 0)
        carried = max(0, min(length, len(tl) - used))
        real = [b for b in boundaries if b < carried]
        offset = boundaries[0] // 4 if carried and boundaries else 0
        seg_header = (len(real) << 6) | ((msg is not None) << 5) | (offset << 1)
        out[hdr_pos] = seg_header
        seg_headers.append(seg_header)
        starts += [body_start + b for b in real]
        used += carried
    assert len(out) == 636
    out += zlib.crc32(bytes(out)).to_bytes(4, "big")
    return bytes(out), seg_headers, starts


@pytest.mark.parametrize("case", _cases("flit_encode"), ids=lambda c: c["id"])
def test_flit_vectors_confirmed_independently(case: dict[str, Any]) -> None:
    flit, seg_headers, starts = hand_encode(case["inputs"])
    exp = case["expected"]
    assert bytes.fromhex(exp["flit"]) == flit
    assert exp["crc"] == f"{zlib.crc32(flit[:636]):08x}"
    assert exp["segment_headers"] == seg_headers
    assert exp["tl_flit_starts"] == starts


def test_bad_crc_vectors_really_have_bad_crcs() -> None:
    for case in _cases("flit_decode"):
        flit = bytes.fromhex(case["inputs"]["flit"])
        crc_ok = len(flit) == 640 and zlib.crc32(flit[:636]) == int.from_bytes(flit[636:], "big")
        assert (case["expected"]["error"] == "CrcError") == (not crc_ok and len(flit) == 640)


def test_message_words_hand_packed() -> None:
    # common fields: mtype [8:6], mclass [5:2], compressed [0]
    def common(mtype: int, mclass: int) -> int:
        return (mtype << 6) | (mclass << 2)

    expected = {
        "message-noop": 0,
        "message-tl-rate": (127 << 24) | common(0b100, 0b0000),
        "message-device-id-request": common(0b101, 0),
        "message-device-id-response": (1 << 31) | (0xBEEF << 9) | common(0b101, 0),
        "message-port-number-response": (1 << 31) | (200 << 9) | common(0b110, 0),
        "message-channel-online": (1 << 30) | common(0b100, 0b1000),
        "message-channel-offline-ack": (2 << 30) | common(0b100, 0b1000),
        "message-uart-two-bytes": (2 << 30) | (int.from_bytes(b"ok", "big") << 9)
        | common(0, 0b0001),
        "message-tl-rate-zero": common(0b100, 0),
        "message-tl-rate-one": (1 << 24) | common(0b100, 0),
        "message-tl-rate-max": (255 << 24) | common(0b100, 0),
        "message-device-id-one": (1 << 31) | (1 << 9) | common(0b101, 0),
        "message-device-id-max": (1 << 31) | (0xFFFF << 9) | common(0b101, 0),
        "message-port-number-one": (1 << 31) | (1 << 9) | common(0b110, 0),
        "message-port-number-max": (1 << 31) | (255 << 9) | common(0b110, 0),
        "message-channel-offline": common(0b100, 0b1000),
        "message-channel-nak": (3 << 30) | common(0b100, 0b1000),
        "message-uart-empty": common(0, 0b0001),
        "message-uart-one-byte": (1 << 30) | (ord("x") << 17) | common(0, 0b0001),
        "message-uart-data-one": (2 << 30) | (1 << 9) | common(0, 0b0001),
        "message-uart-data-max": (2 << 30) | (0xFFFF << 9) | common(0, 0b0001),
        # vendor: vendor_data [31:9], vendor type in mtype, class 1111
        "message-vendor-zero": common(0, 0b1111),
        "message-vendor-one": (1 << 9) | common(1, 0b1111),
        "message-vendor-max": (0x7F_FFFF << 9) | common(7, 0b1111),
    }
    got = {c["id"]: int(c["expected"]["word"], 16) for c in _cases("message_encode")}
    assert got == expected


def _header(flit_hex: str) -> tuple[str, int, int]:
    """(op name, payload bit, sequence field): explicit flit_seq or command (ack, lo)."""
    word = int(flit_hex[:6], 16)
    op = {v: k for k, v in OPS.items()}[word >> 21]
    if op in ("explicit", "replay"):
        return op, (word >> 20) & 1, (word >> 8) & 0x1FF
    return op, (word >> 20) & 1, ((word >> 11) & 0x1FF) * 10 + ((word >> 8) & 7)


def test_retry_scenario_matches_hand_derivation() -> None:
    # a sends 20 TL flits (1280 B = 628 + 628 + 24), delay 1 slot, a's 2nd flit corrupted.
    # Derived from the rules: fresh flits piggy-back ack 0 with implicit sequence (lo 1,2,3);
    # b acks seq 1, asks for a replay from 2 (one request only), a replays 2 (op replay)
    # and 3 (explicit), b acks 2 then 3. Command fields are shown as ack*10 + lo.
    case = next(c for c in _cases("retry_scenario") if c["id"] == "retry-corrupt-second-flit")
    wire = [(w["slot"], w["dir"], *_header(w["flit"])) for w in case["expected"]["wire"]]
    assert wire == [
        (0, "ab", "ack", 1, 1),
        (1, "ab", "ack", 1, 2),
        (2, "ab", "ack", 1, 3),
        (2, "ba", "ack", 0, 10),
        (3, "ba", "replay_request", 0, 20),
        (5, "ab", "replay", 1, 2),
        (6, "ab", "explicit", 1, 3),
        (7, "ba", "ack", 0, 20),
        (8, "ba", "ack", 0, 30),
    ]
    exp = case["expected"]
    assert exp["delivered_b"] == 20 and exp["delivered_b_ok"] and exp["idle_at_end"]
    # every flit on the wire carries a good CRC (zlib) and the pattern's TL bytes
    stream = bytes(i & 0xFF for i in range(1280))
    data_flits = [w for w in exp["wire"] if w["dir"] == "ab"]
    offsets = {1: 0, 2: 628, 3: 1256}
    for w, seq in zip(data_flits, [1, 2, 3, 2, 3], strict=True):
        flit = bytes.fromhex(w["flit"])
        assert zlib.crc32(flit[:636]) == int.from_bytes(flit[636:], "big")
        op, _, field = _header(w["flit"])
        inputs = {"op": op, "flit_seq": field if op in ("explicit", "replay") else 0,
                  "ack_req_seq": 0, "flit_seq_lo": field % 10 if op == "ack" else 0,
                  "tl": stream[offsets[seq]:offsets[seq] + 628].hex(),
                  "first_tl_start": (-offsets[seq]) % 64, "messages": [None] * 5}
        assert hand_encode(inputs)[0] == flit


def test_lost_request_scenario_recovers_by_timer() -> None:
    case = next(c for c in _cases("retry_scenario")
                if c["id"] == "retry-both-ways-lost-request")
    exp = case["expected"]
    ba = [w for w in exp["wire"] if w["dir"] == "ba"]
    assert _header(ba[4]["flit"])[0] == "replay_request"  # the dropped one (index 4)
    assert any("reason='timeout'" in e for e in exp["events_a"])
    assert exp["delivered_a_ok"] and exp["delivered_b_ok"] and exp["idle_at_end"]
    assert (exp["delivered_a"], exp["delivered_b"]) == (12, 30)
    for w in exp["wire"]:
        flit = bytes.fromhex(w["flit"])
        assert zlib.crc32(flit[:636]) == int.from_bytes(flit[636:], "big")


def test_tl_pattern_is_as_documented() -> None:
    assert dl_vectors.tl_pattern(0x80, 2, start=3)[1] == bytes(
        (0x80 + 64 * 4 + i) & 0xFF for i in range(64))


@pytest.mark.parametrize(("key", "value"), [("a_tl_flits", 10**12), ("slots", 10**12),
                                            ("delay", -1), ("replay_timeout", "soon")])
def test_verify_refuses_oversized_scenarios_quickly(tmp_path: Path, key: str, value: Any) -> None:
    # Found in review: an edited `slots` or `a_tl_flits` made `vectors verify` run for
    # hours or exhaust memory; scenario sizes are now bounded and checked first.
    doc = json.loads(COMMITTED.read_text())
    case = next(c for c in doc["cases"] if c["kind"] == "retry_scenario")
    case["inputs"][key] = value
    (tmp_path / "dl.json").write_text(json.dumps(doc))
    report = vectors.verify_dir(tmp_path)
    assert [(m.case, m.field) for m in report.mismatches] == [(case["id"], "<compute>")]
