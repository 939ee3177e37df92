"""tshark with the Lua dissector agrees with the model's own decoders.

For every committed capture and for fresh captures with errors, every field the
plugin shows (pseudo-header, DL header, segment headers, DL messages, TL-flit
starts, CRC and its status, the receiver's verdict, every TL control field of the
TL flits reassembled across DL flits, data half-flits) is compared, frame by frame
and in tree order, with what :mod:`ualink_ref.capture.format`, :mod:`ualink_ref.dl.flit`
and :mod:`ualink_ref.capture.dissect` make of the same bytes; the frames with an
error-severity expert info are exactly the DL flits the model rejects.

Skipped (with the reason) when tshark is not installed; ``.ci/run`` installs it.
"""

from __future__ import annotations

import contextlib
import io
import random
import shutil
import subprocess
import zlib
from collections import defaultdict
from pathlib import Path

import pytest

from ualink_ref.bitfields import BitFormat
from ualink_ref.capture.dissect import DissectedFlit, dissect_records
from ualink_ref.capture.format import PSEUDO_HEADER, CaptureRecord, read_capture, write_capture
from ualink_ref.capture.run import CaptureLink, run_scenario
from ualink_ref.dl import formats as dlf
from ualink_ref.dl.crc import crc32
from ualink_ref.dl.flit import SEGMENT_OFFSETS, DLFlit
from ualink_ref.sim.workloads import random_workload
from ualink_ref.tl.fields import FType
from ualink_ref.wireshark import plugin_path
from ualink_ref.wireshark.generate import (
    ADDRESS_FILTER,
    COMMON_FIELDS,
    FORMATS,
    IMPLIED_FIELDS,
    common_filter_name,
    filter_name,
)

TSHARK = shutil.which("tshark")
pytestmark = pytest.mark.skipif(TSHARK is None, reason="tshark is not installed "
                                "(apt-get install tshark; .ci/run does)")

ROOT = Path(__file__).resolve().parents[2]
CAPTURES = sorted((ROOT / "vectors" / "captures").glob("*.pcap*"))
EXPERT_ERROR = 0x00800000  # Wireshark's PI_ERROR (epan/proto.h)

EXTRA = ["ualink.dl.tl_start", "ualink.dl.crc", "ualink.dl.crc_status", "ualink.dl.rx_status",
         "ualink.dl.seq", "ualink.tl.req.byte_addr", "ualink.tl.creq.byte_addr_lo",
         "ualink.tl.data", ADDRESS_FILTER]
#: Common fields, one per concept across the forms (ualink.tl.cmd, ...).
COMMON = {name: common_filter_name(name) for name in COMMON_FIELDS}
NAMES = sorted({filter_name(fmt, f.name) for fmt in FORMATS for f in fmt.fields} | set(EXTRA)
               | set(COMMON.values()))


def tshark_fields(path: Path) -> list[dict[str, list[str]]]:
    """Per frame: filter name -> every value, in tree order; plus expert severities."""
    assert TSHARK is not None
    cmd = [TSHARK, "-n", "-X", f"lua_script:{plugin_path()}", "-r", str(path), "-T", "fields",
           "-E", "occurrence=a", "-E", "aggregator=,", "-E", "separator=/t",
           "-e", "_ws.expert.severity"]
    for name in NAMES:
        cmd += ["-e", name]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300, check=False)
    assert proc.returncode == 0, proc.stderr
    assert "Lua" not in proc.stderr, proc.stderr  # a Lua error is reported on stderr
    frames = []
    for line in proc.stdout.split("\n"):
        if not line:
            continue
        cells = line.split("\t")
        assert len(cells) == len(NAMES) + 1
        row = {name: (cell.split(",") if cell else []) for name, cell in zip(
            ["severity", *NAMES], cells, strict=True)}
        frames.append(row)
    return frames


def _raw_values(fmt: BitFormat, data: bytes) -> dict[str, int]:
    """Field values even when the bytes break the format's rules (broken flits)."""
    word = int.from_bytes(data, "big")
    return {p.field.name: (word >> p.shift) & p.field.max_value for p in fmt.positions}


def _add(out: dict[str, list[int | str]], fmt: BitFormat, data: bytes) -> dict[str, int]:
    values = _raw_values(fmt, data)
    for name, value in values.items():
        out[filter_name(fmt, name)].append(value)
        if fmt in COMMON_FIELDS.get(name, ()):
            out[COMMON[name]].append(value)
    for name, value in IMPLIED_FIELDS.get(fmt.name, {}).items():
        out[COMMON[name]].append(value)
    return values


def _message_format(word: int) -> BitFormat:
    """The specific message layout of a word (generic when compressed or unknown)."""
    v = _raw_values(dlf.DL_MESSAGE, word.to_bytes(4, "big"))
    if v["compressed"] or v["rsvd_c"]:
        return dlf.DL_MESSAGE
    if v["mclass"] == dlf.MessageClass.VENDOR:  # every type of the vendor class
        return dlf.VENDOR_MESSAGE
    for fmt in dlf.ALL_FORMATS:
        if fmt.name.startswith("dl_msg_") and (fmt.field("mclass").default,
                                               fmt.field("mtype").default) == (
                                                   v["mclass"], v["mtype"]):
            return fmt
    return dlf.DL_MESSAGE


def expected_fields(rec: CaptureRecord, f: DissectedFlit | None) -> dict[str, list[int | str]]:
    """What the model's decoders say the plugin must show for one record."""
    out: dict[str, list[int | str]] = defaultdict(list)
    _add(out, PSEUDO_HEADER, rec.encode()[:16])
    if f is None:  # fec_codewords: the plugin shows the pseudo-header only
        return out
    raw = f.raw
    op = raw[0] >> 5
    command = op in (dlf.FlitOp.ACK, dlf.FlitOp.REPLAY_REQUEST)
    _add(out, dlf.COMMAND_HEADER if command else dlf.EXPLICIT_HEADER, raw[:3])
    flit = f.flit
    starts = flit.tl_flit_starts() if flit is not None else []
    for k, (hdr_off, _body) in enumerate(SEGMENT_OFFSETS):
        seg = _add(out, dlf.SEGMENT_HEADER, raw[hdr_off:hdr_off + 1])
        if flit is None:
            continue
        if seg["msg"]:
            word = flit.messages[k]
            assert word is not None
            _add(out, _message_format(word), word.to_bytes(4, "big"))
        end = SEGMENT_OFFSETS[k + 1][0] if k + 1 < len(SEGMENT_OFFSETS) else 636
        out["ualink.dl.tl_start"] += [s for s in starts if hdr_off < s < end]
    stored = int.from_bytes(raw[636:], "big")
    out["ualink.dl.crc"].append(stored)
    # zlib is an independent CRC-32 implementation (the model uses crcmod).
    assert (crc32(raw[:636]) == stored) == (zlib.crc32(raw[:636]) == stored)
    out["ualink.dl.crc_status"].append(0 if f.crc_error else 1)
    if f.status:
        out["ualink.dl.rx_status"].append(f.status)
        if f.seq is not None:
            out["ualink.dl.seq"].append(f.seq)
    # The byte address as the target sees it: the model's own (TLOp.values resolves a
    # compressed request through the address cache; no "addr" while its way is unknown).
    out[ADDRESS_FILTER] = [op.values["addr"] << 2 for op in f.ops
                           if op.kind == "request" and "addr" in op.values]
    for view in f.tl_flits:
        for half in view.halves:
            if half.kind == "data":
                out["ualink.tl.data"].append(half.raw.hex())
                continue
            for field in half.fields:
                if field.is_nop:
                    continue
                values = field.format.pack(field.values)
                _add(out, field.format, values)
                if field.ftype == FType.REQUEST:
                    out["ualink.tl.req.byte_addr"].append(field.values["addr"] << 2)
                elif field.ftype == FType.COMPRESSED_REQUEST:
                    out["ualink.tl.creq.byte_addr_lo"].append(field.values["addr_lo"] << 2)
    return out


def _parse(name: str, text: str) -> int | str:
    if name in ("ualink.dl.rx_status", "ualink.tl.data"):
        return text.replace(":", "")
    return int(text, 0)


def check_agreement(path: Path) -> tuple[int, int, int]:
    """Compare every field of every record; return (records, values compared, rejected)."""
    records = read_capture(path)
    flits = dissect_records(records)
    by_record: dict[int, DissectedFlit] = {}
    for f in flits:
        if f.record.kind == "dl_flit":
            by_record[f.index] = f
    frames = tshark_fields(path)
    assert len(frames) == len(records)
    compared = rejected = 0
    for index, (rec, row) in enumerate(zip(records, frames, strict=True)):
        f = by_record.get(index)
        want = expected_fields(rec, f)
        for name in NAMES:
            got = [_parse(name, v) for v in row[name]]
            assert got == want.get(name, []), (path.name, index, name)
            compared += len(got)
        model_rejects = f is not None and f.flit is None
        tshark_error = any(int(s, 0) == EXPERT_ERROR for s in row["severity"])
        assert tshark_error == model_rejects, (path.name, index, f.error if f else "")
        rejected += model_rejects
    return len(records), compared, rejected


@pytest.mark.parametrize("path", CAPTURES, ids=[p.name for p in CAPTURES])
def test_committed_capture_agrees(path: Path) -> None:
    records, compared, _ = check_agreement(path)
    assert records > 0 and compared > records * 16


def _flip(records: list[CaptureRecord], index: int, byte: int, mask: int,
          recrc: bool = False) -> list[CaptureRecord]:
    """A copy of ``records`` with bits of record ``index``'s flit changed."""
    out = list(records)
    rec = out[index]
    data = bytearray(rec.data)
    data[byte] ^= mask
    if recrc:  # keep the CRC good: the flit is then malformed, not corrupted
        data[636:] = zlib.crc32(bytes(data[:636])).to_bytes(4, "big")
    out[index] = CaptureRecord(bytes(data), rec.kind, rec.direction, rec.fec_mode, rec.port,
                               rec.lane, rec.interleave, rec.symbols_corrected,
                               rec.uncorrectable, rec.slot, rec.timestamp_ns)
    return out


def test_flipped_bit_is_an_expert_error_and_a_crc_error(tmp_path: Path) -> None:
    from ualink_ref.cli import main

    records = read_capture(ROOT / "vectors" / "captures" / "clean.pcap")
    path = tmp_path / "flipped.pcap"
    write_capture(path, _flip(records, 2, 100, 0x10))
    frames = tshark_fields(path)
    bad = [i for i, row in enumerate(frames) if "0" in row["ualink.dl.crc_status"]]
    errors = [i for i, row in enumerate(frames)
              if any(int(s, 0) == EXPERT_ERROR for s in row["severity"])]
    assert bad == errors == [2]
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        main(["dissect", str(path)])
    lines = [ln for ln in buf.getvalue().splitlines() if ln.strip().startswith("2 ")]
    assert lines and "CRC error" in lines[0]
    check_agreement(path)


# Bits whose change (with the CRC made good again) the model rejects: a reserved bit of the
# command header (record 5 is an ack flit),
# an unknown op, the alt_sector bit of segment 2, a non-zero fill byte.
MALFORMED = [(2, 0x01), (0, 0xA0), (SEGMENT_OFFSETS[2][0], 0x01), (600, 0x01)]


@pytest.mark.parametrize(("byte", "mask"), MALFORMED)
def test_malformed_flits_flagged_exactly(tmp_path: Path, byte: int, mask: int) -> None:
    records = read_capture(ROOT / "vectors" / "captures" / "clean.pcap")
    path = tmp_path / "malformed.pcap"
    write_capture(path, _flip(records, 5, byte, mask, recrc=True))
    _, _, rejected = check_agreement(path)
    assert rejected == 1


@pytest.mark.parametrize("seed", [1, 2])
def test_fresh_captures_with_errors_agree(tmp_path: Path, seed: int) -> None:
    # No FEC, so channel bit errors reach the DL: CRC errors, replays, gaps, duplicates.
    link = CaptureLink(fec="none", ber=5e-5, seed=seed)
    result = link.run(list(random_workload(100, seed)))
    assert result.crc_errors > 0
    path = tmp_path / f"errors{seed}.pcap"
    write_capture(path, result.records)
    records, compared, rejected = check_agreement(path)
    assert rejected > 0 and compared > records


def test_fabric_capture_agrees_port_by_port(tmp_path: Path) -> None:
    # A switched pod: every accelerator link in one file, each port its own DL stream
    # (the model's Dissector keys its receivers on direction and port).
    from ualink_ref.cli import main

    path = tmp_path / "fabric.pcap"
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        assert main(["fabric", "--accelerators", "4", "--ops", "40", "--seed", "3",
                     "--no-progress", "--capture", str(path)]) == 0
    records = read_capture(path)
    assert len({r.port for r in records}) >= 4
    _, compared, _ = check_agreement(path)
    frames = tshark_fields(path)
    assert all(row["ualink.dl.rx_status"] in ([], ["accepted"]) for row in frames)
    assert compared > len(records) * 16


def test_compressed_requests_get_their_full_byte_address() -> None:
    # The committed captures use the address cache: some compressed requests resolve.
    path = ROOT / "vectors" / "captures" / "replay.pcap"
    frames = tshark_fields(path)
    creq = sum(len(row["ualink.tl.creq.cmd"]) for row in frames)
    addresses = sum(len(row[ADDRESS_FILTER]) for row in frames)
    assert creq > 0 and addresses == creq + sum(len(row["ualink.tl.req.cmd"]) for row in frames)


def test_replay_scenario_fresh_pcapng(tmp_path: Path) -> None:
    path = tmp_path / "replay.pcapng"
    write_capture(path, run_scenario("replay").records)
    _, _, rejected = check_agreement(path)
    assert rejected >= 1


def test_other_user0_traffic_is_left_alone(tmp_path: Path) -> None:
    from ualink_ref.capture.format import RawPacket, encode_pcap

    path = tmp_path / "other.pcap"
    path.write_bytes(encode_pcap([RawPacket(0, bytes(range(40))), RawPacket(1, b"\x55")]))
    assert TSHARK is not None
    out = subprocess.run([TSHARK, "-n", "-X", f"lua_script:{plugin_path()}", "-r", str(path),
                          "-T", "fields", "-e", "frame.protocols", "-e", "ualink.cap.magic"],
                         capture_output=True, text=True, check=True, timeout=60).stdout
    rows = [line.split("\t") for line in out.splitlines()]
    assert len(rows) == 2
    for protocols, magic in rows:
        # Handed to the dissector that held USER0 before (Wireshark's DLT_USER table);
        # Wireshark still lists "ualink" as the layer that passed the frame on.
        assert "user_dlt" in protocols.split(":")
        assert magic == ""


EXPERT_WARN = 0x00600000  # Wireshark's PI_WARN (epan/proto.h)


def test_dl_messages_agree_and_reserved_bits_warn(tmp_path: Path) -> None:
    # The committed captures carry no DL message: craft flits that carry every type,
    # an unknown class, a compressed word and a NoOp with reserved bits set.
    words = [
        dlf.TL_RATE_MESSAGE.pack(rate=7),
        dlf.DEVICE_ID_MESSAGE.pack(response=1, device_id=0xBEEF),
        dlf.PORT_NUMBER_MESSAGE.pack(response=1, port=3),
        dlf.CHANNEL_NEGOTIATION_MESSAGE.pack(command=2),
        dlf.UART_MESSAGE.pack(count=2, data=0x4142),
        dlf.DL_MESSAGE.pack(mclass=0b0010, mtype=1, body=5),  # unknown class
        dlf.DL_MESSAGE.pack(compressed=1, body=9),
        dlf.DL_MESSAGE.pack(body=1 << 22),  # NoOp layout with a reserved bit set
    ]
    ints = [int.from_bytes(w, "big") for w in words]
    flits = [
        DLFlit(dlf.FlitOp.ACK, ack_req_seq=1, messages=tuple(ints[:5])),
        DLFlit(dlf.FlitOp.EXPLICIT, flit_seq=1, tl=bytes(128),
               messages=(ints[5], None, ints[6], ints[7], None)),
    ]
    records = [CaptureRecord(f.encode(), slot=i) for i, f in enumerate(flits)]
    path = tmp_path / "messages.pcap"
    write_capture(path, records)
    _, compared, rejected = check_agreement(path)
    assert rejected == 0 and compared > 40
    frames = tshark_fields(path)
    assert len(frames[1]["ualink.dl.msg.mclass"]) == 3
    assert any(int(s, 0) == EXPERT_WARN for s in frames[1]["severity"])
    assert not any(int(s, 0) == EXPERT_WARN for s in frames[0]["severity"])
    assert TSHARK is not None
    messages = subprocess.run(
        [TSHARK, "-n", "-X", f"lua_script:{plugin_path()}", "-r", str(path), "-T", "fields",
         "-E", "aggregator=|", "-e", "_ws.expert.message"],
        capture_output=True, text=True, check=True, timeout=60).stdout.splitlines()
    assert messages[0] == ""
    assert sorted(messages[1].split("|")) == [
        "dl_message.mclass = 2: not a known value",
        f"dl_msg_noop.rsvd = {1 << 22}: reserved, must be zero",
    ]


def _random_flits(rng: random.Random, count: int) -> list[CaptureRecord]:
    """Records of random flit bytes, every other one with its CRC made good."""
    out = []
    for i in range(count):
        body = bytearray(rng.randbytes(640))
        if i % 2:
            body[636:] = zlib.crc32(bytes(body[:636])).to_bytes(4, "big")
        out.append(CaptureRecord(bytes(body), slot=i, direction=rng.choice(["a_to_b",
                                                                           "b_to_a"])))
    return out


def test_random_flits_rejected_exactly_as_the_model(tmp_path: Path) -> None:
    path = tmp_path / "random.pcap"
    write_capture(path, _random_flits(random.Random(11), 300))
    records, _, rejected = check_agreement(path)
    assert records == 300 and rejected >= 150


def test_random_records_never_raise_a_lua_error(tmp_path: Path) -> None:
    from ualink_ref.capture.format import RawPacket, encode_pcap

    rng = random.Random(12)
    packets = []
    for i in range(300):
        header = bytearray(rng.randbytes(16))
        header[0] = 0x55  # past the magic check, then anything
        packets.append(RawPacket(i, bytes(header) + rng.randbytes(
            rng.choice([0, 1, 100, 640, 680, 1360]))))
    path = tmp_path / "garbage.pcap"
    path.write_bytes(encode_pcap(packets))
    assert TSHARK is not None
    proc = subprocess.run([TSHARK, "-n", "-X", f"lua_script:{plugin_path()}", "-r", str(path),
                           "-V"], capture_output=True, text=True, check=True, timeout=120)
    assert "Lua Error" not in proc.stdout + proc.stderr
    assert proc.stdout.count("UALink capture record") == 300
