"""Capture files: a versioned pseudo-header and Scapy-free pcap / pcapng codecs.

A capture record is one pcap packet of link type ``LINKTYPE_USER0`` (147):
a 16-byte pseudo-header (:data:`PSEUDO_HEADER`, declared as a
:class:`~ualink_ref.bitfields.BitFormat`) followed by either one 640-byte DL
flit as delivered by the FEC decoder (record kind ``dl_flit``, what a protocol
analyser exports) or the raw FEC codeword bytes of the wire before decoding
(record kind ``fec_codewords``). ``specs/capture.md`` documents the layout.

Everything here is pure: encoders return ``bytes``, decoders take ``bytes``
and raise only :class:`~ualink_ref.errors.DecodeError` subclasses, whatever
they are given. Length fields in file, block and record headers are checked
against the bytes actually present (and a fixed upper bound) before anything
is sliced or allocated from them.
"""

from __future__ import annotations

import io
import struct
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import IO, BinaryIO

from ualink_ref.bitfields import BitFormat, Field
from ualink_ref.errors import (
    CaptureFormatError,
    DecodeError,
    EncodeError,
    FieldRangeError,
    TruncatedError,
    UALinkError,
)
from ualink_ref.sizes import DL_FLIT_BYTES, WIRE_BYTES_PER_FLIT

#: pcap link type of every record (tcpdump.org: LINKTYPE_USER0, "reserved for private use").
LINKTYPE_USER0 = 147
#: Version of the pseudo-header written by this module (the ``version`` field).
CAPTURE_VERSION = 1
#: Value of the pseudo-header's ``magic`` field ("U").
CAPTURE_MAGIC = 0x55
#: Largest record (and pcap snap length) this module writes or accepts: a bound
#: checked before any length field is trusted (project choice: 64 flits of wire bytes).
MAX_RECORD_BYTES = 64 * 1024
#: Most packets a reader accepts from one capture by default (project choice: a
#: bound on what a hostile file can make a reader build; 100 x the largest
#: committed scenario; pass ``max_records`` to read more).
MAX_RECORDS = 1_000_000

RECORD_KINDS = {0: "dl_flit", 1: "fec_codewords"}
DIRECTIONS = {0: "a_to_b", 1: "b_to_a"}
FEC_MODES = {0: "none", 1: "kp4", 2: "ll"}

_PC = "project choice: capture pseudo-header (specs/capture.md)"

#: The capture pseudo-header: 16 bytes, MSB first, in front of every record.
PSEUDO_HEADER = BitFormat(
    "capture_header",
    [
        Field("magic", 8, "constant 0x55 ('U'): identifies a ualink_ref record", _PC,
              enum={CAPTURE_MAGIC: "ualink_ref"}, strict_enum=True, default=CAPTURE_MAGIC),
        Field("version", 8, "pseudo-header version; readers reject versions they do not know",
              _PC, enum={1: "v1"}, strict_enum=True, default=CAPTURE_VERSION),
        Field("header_length", 8, "pseudo-header length in bytes (16 in version 1)", _PC,
              default=16),
        Field("record_kind", 4, "what follows the pseudo-header", _PC,
              enum=RECORD_KINDS, strict_enum=True),
        Field("direction", 2, "which endpoint transmitted: A to B or B to A", _PC,
              enum=DIRECTIONS, strict_enum=True),
        Field("fec_mode", 2, "FEC mode of the link", _PC, enum=FEC_MODES, strict_enum=True),
        Field("port", 8, "port number of the transmitting endpoint", _PC),
        Field("lane", 8, "lane (or lane group) the record was observed on", _PC),
        Field("interleave", 4, "FEC symbol interleave depth (1, 2 or 4)", _PC, default=1),
        Field("uncorrectable", 1, "1: the FEC decoder flagged a codeword uncorrectable", _PC),
        Field("rsvd0", 3, "readers reject non-zero", _PC, reserved=True),
        Field("rsvd1", 8, "readers reject non-zero", _PC, reserved=True),
        Field("symbols_corrected", 16, "RS symbols the FEC decoder corrected in this flit "
              "(saturates at 65535)", _PC),
        Field("payload_length", 16, "bytes following the pseudo-header", _PC),
        Field("slot", 32, "simulation time of the record in flit slots (wraps at 2**32)", _PC),
    ],
    description="Project-defined pseudo-header in front of every LINKTYPE_USER0 record.",
    provenance=_PC,
)
PSEUDO_HEADER_BYTES = PSEUDO_HEADER.byte_length


def _check_length(what: str, expected: int, actual: int) -> None:
    if expected != actual:
        raise TruncatedError(what, expected, actual)


#: Interleave depths a record may declare (those of ``ualink_ref.phy``).
INTERLEAVES: tuple[int, ...] = (1, 2, 4)

@dataclass(frozen=True)
class CaptureRecord:
    """One capture record: pseudo-header fields plus the flit or codeword bytes.

    ``timestamp_ns`` is the pcap timestamp (not part of the pseudo-header);
    writers of deterministic captures derive it from ``slot``.
    """

    data: bytes
    kind: str = "dl_flit"
    direction: str = "a_to_b"
    fec_mode: str = "kp4"
    port: int = 0
    lane: int = 0
    interleave: int = 1
    symbols_corrected: int = 0
    uncorrectable: bool = False
    slot: int = 0
    timestamp_ns: int = 0

    def header_values(self) -> dict[str, int]:
        """The pseudo-header field values of this record."""
        return {
            "magic": CAPTURE_MAGIC,
            "version": CAPTURE_VERSION,
            "header_length": PSEUDO_HEADER_BYTES,
            "record_kind": _code(RECORD_KINDS, self.kind, "record_kind"),
            "direction": _code(DIRECTIONS, self.direction, "direction"),
            "fec_mode": _code(FEC_MODES, self.fec_mode, "fec_mode"),
            "port": self.port,
            "lane": self.lane,
            "interleave": self.interleave,
            "uncorrectable": int(self.uncorrectable),
            "symbols_corrected": min(self.symbols_corrected, 0xFFFF),
            "payload_length": len(self.data),
            "slot": self.slot & 0xFFFFFFFF,
        }

    def encode(self) -> bytes:
        """Pseudo-header followed by the data: the bytes of one pcap packet."""
        if self.interleave not in INTERLEAVES:
            raise EncodeError(f"interleave {self.interleave} is not one of {INTERLEAVES}",
                              "interleave")
        _check_payload(self.kind, self.fec_mode, len(self.data), EncodeError)
        return PSEUDO_HEADER.pack(self.header_values()) + bytes(self.data)

    @classmethod
    def decode(cls, packet: bytes, timestamp_ns: int = 0) -> CaptureRecord:
        """Parse one pcap packet body; raises only :class:`DecodeError`."""
        if not isinstance(packet, bytes | bytearray | memoryview):
            raise TruncatedError(PSEUDO_HEADER.name, PSEUDO_HEADER_BYTES, -1)
        if len(packet) < PSEUDO_HEADER_BYTES:
            raise TruncatedError(PSEUDO_HEADER.name, PSEUDO_HEADER_BYTES, len(packet))
        values = PSEUDO_HEADER.unpack(packet[:PSEUDO_HEADER_BYTES])
        if values["interleave"] not in INTERLEAVES:
            raise FieldRangeError(f"{PSEUDO_HEADER.name}.interleave", values["interleave"],
                                  "not 1, 2 or 4")
        if values["header_length"] != PSEUDO_HEADER_BYTES:
            raise CaptureFormatError(
                f"capture header_length {values['header_length']} is not {PSEUDO_HEADER_BYTES}"
            )
        data = bytes(packet[PSEUDO_HEADER_BYTES:])
        _check_length("capture record payload", values["payload_length"], len(data))
        kind = RECORD_KINDS[values["record_kind"]]
        fec = FEC_MODES[values["fec_mode"]]
        _check_payload(kind, fec, len(data), CaptureFormatError)
        return cls(
            data=data,
            kind=kind,
            direction=DIRECTIONS[values["direction"]],
            fec_mode=fec,
            port=values["port"],
            lane=values["lane"],
            interleave=values["interleave"],
            symbols_corrected=values["symbols_corrected"],
            uncorrectable=bool(values["uncorrectable"]),
            slot=values["slot"],
            timestamp_ns=timestamp_ns,
        )


def _code(table: dict[int, str], name: str, what: str) -> int:
    for code, label in table.items():
        if label == name:
            return code
    raise EncodeError(f"{what}: unknown value {name!r} (one of {sorted(table.values())})", what)


def _check_payload(kind: str, fec: str, length: int, error: type[UALinkError]) -> None:
    if kind == "dl_flit" and length != DL_FLIT_BYTES:
        raise error(f"dl_flit record must hold {DL_FLIT_BYTES} bytes, not {length}")
    if kind == "fec_codewords":
        unit = WIRE_BYTES_PER_FLIT[fec]
        if length == 0 or length % unit:
            raise error(f"fec_codewords record ({fec}) must be a multiple of {unit} bytes, "
                        f"not {length}")
    if length > MAX_RECORD_BYTES:
        raise error(f"record of {length} bytes exceeds {MAX_RECORD_BYTES}")


# -- pcap / pcapng container --------------------------------------------------


@dataclass(frozen=True)
class RawPacket:
    """One packet of a pcap or pcapng file: timestamp, link type and bytes."""

    timestamp_ns: int
    data: bytes
    linktype: int = LINKTYPE_USER0
    orig_len: int | None = None
    #: File offset of the packet's record or block header (-1: not read from a file).
    offset: int = field(default=-1, compare=False)


PCAP_MAGIC_US = 0xA1B2C3D4
PCAP_MAGIC_NS = 0xA1B23C4D
PCAPNG_SHB = 0x0A0D0D0A
PCAPNG_BOM = 0x1A2B3C4D
_PCAPNG_IDB, _PCAPNG_SPB, _PCAPNG_EPB = 1, 3, 6
_MAX_BLOCK = MAX_RECORD_BYTES + 4096  # block header, options, padding
_PCAP_MAX_TS = (1 << 32) * 1_000_000_000  # pcap seconds are 32 bits


def encode_pcap(packets: Iterable[RawPacket], *, linktype: int = LINKTYPE_USER0) -> bytes:
    """A classic pcap file (little-endian, nanosecond timestamps) of ``packets``."""
    out = [struct.pack("<IHHiIII", PCAP_MAGIC_NS, 2, 4, 0, 0, MAX_RECORD_BYTES, linktype)]
    for pkt in packets:
        _check_writable(pkt, linktype)
        if pkt.timestamp_ns >= _PCAP_MAX_TS:
            raise EncodeError(f"timestamp {pkt.timestamp_ns} ns does not fit a pcap file")
        sec, nsec = divmod(pkt.timestamp_ns, 1_000_000_000)
        orig = len(pkt.data) if pkt.orig_len is None else pkt.orig_len
        out.append(struct.pack("<IIII", sec, nsec, len(pkt.data), orig))
        out.append(bytes(pkt.data))
    return b"".join(out)


def encode_pcapng(packets: Iterable[RawPacket], *, linktype: int = LINKTYPE_USER0) -> bytes:
    """A pcapng file: one section, one interface (nanosecond resolution), EPBs."""
    shb_body = struct.pack("<IHHq", PCAPNG_BOM, 1, 0, -1)
    # if_tsresol (option 9) = 9: timestamps count nanoseconds; then opt_endofopt.
    idb_opts = struct.pack("<HHB3x", 9, 1, 9) + struct.pack("<HH", 0, 0)
    idb_body = struct.pack("<HHI", linktype, 0, MAX_RECORD_BYTES) + idb_opts
    out = [_ng_block(PCAPNG_SHB, shb_body), _ng_block(_PCAPNG_IDB, idb_body)]
    for pkt in packets:
        _check_writable(pkt, linktype)
        orig = len(pkt.data) if pkt.orig_len is None else pkt.orig_len
        ts = pkt.timestamp_ns
        pad = b"\0" * (-len(pkt.data) % 4)
        body = struct.pack("<IIIII", 0, ts >> 32, ts & 0xFFFFFFFF, len(pkt.data), orig)
        out.append(_ng_block(_PCAPNG_EPB, body + bytes(pkt.data) + pad))
    return b"".join(out)


def _ng_block(block_type: int, body: bytes) -> bytes:
    total = 12 + len(body)
    return struct.pack("<II", block_type, total) + body + struct.pack("<I", total)


def _check_writable(pkt: RawPacket, linktype: int) -> None:
    if pkt.linktype != linktype:
        raise EncodeError(f"packet link type {pkt.linktype} != file link type {linktype}")
    if len(pkt.data) > MAX_RECORD_BYTES:
        raise EncodeError(f"packet of {len(pkt.data)} bytes exceeds {MAX_RECORD_BYTES}")
    if not 0 <= pkt.timestamp_ns < 1 << 63:
        raise EncodeError(f"timestamp {pkt.timestamp_ns} out of range")


class _Reader:
    """A binary stream read in exact pieces, counting its offset (streaming decode)."""

    def __init__(self, stream: BinaryIO | IO[bytes]) -> None:
        self.stream = stream
        self.offset = 0
        #: File offset where the packet being read starts (what errors name).
        self.mark = 0

    def read(self, n: int, what: str, *, allow_eof: bool = False) -> bytes:
        """Exactly ``n`` bytes (``b""`` at a clean end of file if ``allow_eof``)."""
        chunks: list[bytes] = []
        want = n
        while want > 0:  # a pipe (stdin) may give short reads: read until n or the end
            try:
                chunk = self.stream.read(want)
            except OSError as exc:
                raise CaptureFormatError(f"cannot read the capture: {exc}") from None
            if not isinstance(chunk, bytes):
                raise CaptureFormatError("capture stream must give bytes")
            if not chunk:
                break
            chunks.append(chunk)
            want -= len(chunk)
        data = b"".join(chunks)
        self.offset += len(data)
        if allow_eof and not data:
            return data
        if len(data) != n:
            raise TruncatedError(what, n, len(data))
        return data


def _check_limits(max_records: int, max_record_bytes: int) -> None:
    for name, value in (("max_records", max_records), ("max_record_bytes", max_record_bytes)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise EncodeError(f"{name} must be an integer >= 0, got {value!r:.40}", name)
    if max_record_bytes > MAX_RECORD_BYTES:
        raise EncodeError(f"max_record_bytes above the format's bound {MAX_RECORD_BYTES}")


def iter_capture_file(
    source: bytes | bytearray | memoryview | BinaryIO | IO[bytes],
    *,
    max_records: int = MAX_RECORDS,
    max_record_bytes: int = MAX_RECORD_BYTES,
) -> Iterator[RawPacket]:
    """Stream the packets of a pcap or pcapng file (bytes, or a binary file object).

    Reads one record at a time: memory stays bounded by ``max_record_bytes`` (at
    most :data:`MAX_RECORD_BYTES`) whatever the file's size, and more than
    ``max_records`` packets is a :class:`CaptureFormatError` (rule C1 in
    ``specs/capture.md``). Raises only :class:`DecodeError` subclasses.
    """
    _check_limits(max_records, max_record_bytes)
    if isinstance(source, bytes | bytearray | memoryview):
        stream: BinaryIO | IO[bytes] = io.BytesIO(bytes(source))
    elif hasattr(source, "read") and not isinstance(source, str | Path | type):
        stream = source
    else:
        raise CaptureFormatError(f"capture data must be bytes or a binary file, got "
                                 f"{type(source).__name__}")
    reader = _Reader(stream)
    head = reader.read(4, "capture file header", allow_eof=True)
    if len(head) < 4:
        raise TruncatedError("capture file header", 24, len(head))
    if struct.unpack("<I", head)[0] == PCAPNG_SHB:
        packets = _pcapng_packets(reader, head, max_record_bytes)
    else:  # the file header is checked here: its errors name no packet
        packets = _pcap_packets(reader, _pcap_header(reader, head), max_record_bytes)
    count = 0
    try:
        for pkt in packets:
            count += 1
            if count > max_records:
                raise CaptureFormatError(f"capture holds more than max_records = {max_records} "
                                         "packets")
            yield pkt
    except DecodeError as exc:  # say where in the file
        exc.add_note(f"packet {count}, file offset {reader.mark}")
        raise


def decode_capture_file(data: bytes, *, max_records: int = MAX_RECORDS) -> list[RawPacket]:
    """Parse a pcap or pcapng file (either byte order); raises only DecodeError."""
    if not isinstance(data, bytes | bytearray | memoryview):
        raise CaptureFormatError("capture data must be bytes")
    return list(iter_capture_file(data, max_records=max_records))


def _pcap_header(reader: _Reader, head: bytes) -> tuple[str, int, int]:
    """``(byte order, timestamp fraction in ns, link type)`` of the pcap file header whose
    first 4 bytes are ``head``; :class:`CaptureFormatError` when it is not one (said from
    the magic alone: a short file that is not a capture is not "cut short")."""
    for endian in "<>":
        magic = struct.unpack(endian + "I", head)[0]
        if magic in (PCAP_MAGIC_US, PCAP_MAGIC_NS):
            break
    else:
        raise CaptureFormatError(f"not a pcap or pcapng file (magic {head.hex()})")
    data = head + reader.read(20, "pcap file header")
    scale = 1 if magic == PCAP_MAGIC_NS else 1000
    major, _minor, _zone, _sigfigs, _snap, linktype = struct.unpack_from(endian + "HHiIII", data, 4)
    if major != 2:
        raise CaptureFormatError(f"pcap major version {major} is not 2")
    return endian, scale, linktype & 0x0FFFFFFF  # the top bits carry FCS information


def _pcap_packets(reader: _Reader, file_header: tuple[str, int, int], limit: int
                  ) -> Iterator[RawPacket]:
    endian, scale, linktype = file_header
    while True:
        at = reader.mark = reader.offset
        header = reader.read(16, "pcap record header", allow_eof=True)
        if not header:
            return
        sec, frac, incl, orig = struct.unpack(endian + "IIII", header)
        if incl > limit:
            raise CaptureFormatError(f"pcap record length {incl} exceeds {limit}")
        if frac >= 1_000_000_000 // scale:
            raise CaptureFormatError(f"pcap timestamp fraction {frac} out of range")
        body = reader.read(incl, "pcap record")
        yield RawPacket(sec * 1_000_000_000 + frac * scale, body, linktype, orig, at)


def _pcapng_packets(reader: _Reader, head: bytes, limit: int) -> Iterator[RawPacket]:
    endian = "<"
    interfaces: list[tuple[int, int, int]] = []  # (linktype, if_tsresol, snaplen)
    first = True
    while True:
        at = reader.mark = reader.offset - 4 if first else reader.offset
        start = head if first else reader.read(4, "pcapng block header", allow_eof=True)
        if not start:
            return
        rest = reader.read(8, "pcapng block header")
        block_type = struct.unpack("<I", start)[0]
        if block_type == PCAPNG_SHB:
            bom = rest[4:8]
            if bom == struct.pack("<I", PCAPNG_BOM):
                endian = "<"
            elif bom == struct.pack(">I", PCAPNG_BOM):
                endian = ">"
            else:
                raise CaptureFormatError(f"pcapng byte-order magic {bom.hex()} not recognised")
            interfaces = []  # interface ids are per section
        elif first:
            raise CaptureFormatError("pcapng file does not start with a section header")
        first = False
        block_type, total = struct.unpack(endian + "II", start + rest[:4])
        if total < 12 or total % 4 or total > min(_MAX_BLOCK, limit + 4096):
            raise CaptureFormatError(f"pcapng block length {total} invalid")
        if block_type == PCAPNG_SHB and total < 28:
            raise TruncatedError("pcapng section header", 28, total)
        block = start + rest + reader.read(total - 12, "pcapng block")
        if struct.unpack_from(endian + "I", block, total - 4)[0] != total:
            raise CaptureFormatError("pcapng block trailing length does not match")
        body = block[8 : total - 4]
        if block_type == _PCAPNG_IDB:
            interfaces.append(_parse_idb(body, endian))
        elif block_type == _PCAPNG_EPB:
            yield replace(_parse_epb(body, endian, interfaces), offset=at)
        elif block_type == _PCAPNG_SPB:
            if not interfaces:
                raise CaptureFormatError("pcapng simple packet block before any interface")
            if len(body) < 4:
                raise TruncatedError("pcapng simple packet block", 4, len(body))
            orig = struct.unpack_from(endian + "I", body)[0]
            incl = min(orig, len(body) - 4, interfaces[0][2])
            yield RawPacket(0, body[4 : 4 + incl], interfaces[0][0], orig, at)
        # other block types (name resolution, statistics, ...) are skipped


def _parse_idb(body: bytes, endian: str) -> tuple[int, int, int]:
    if len(body) < 8:
        raise TruncatedError("pcapng interface description", 8, len(body))
    linktype, _reserved, snaplen = struct.unpack_from(endian + "HHI", body)
    return linktype, _tsresol(body[8:], endian), snaplen if snaplen else MAX_RECORD_BYTES


def _tsresol(options: bytes, endian: str) -> int:
    """The if_tsresol option byte of an interface (6, microseconds, when absent)."""
    resol = 6  # default: microseconds
    pos = 0
    while len(options) - pos >= 4:
        code, length = struct.unpack_from(endian + "HH", options, pos)
        pos += 4
        if code == 0:
            break
        if len(options) - pos < length:
            raise TruncatedError("pcapng option", length, len(options) - pos)
        if code == 9 and length >= 1:
            resol = options[pos]
        pos += length + (-length % 4)
    return resol


def _ticks_to_ns(ticks: int, resol: int) -> int:
    if resol & 0x80:  # power of two resolution
        exp = resol & 0x7F
        return (ticks * 1_000_000_000) >> exp if exp < 64 else 0
    if resol > 18:
        raise CaptureFormatError(f"pcapng if_tsresol {resol} not supported")
    if resol <= 9:
        return ticks * int(10 ** (9 - resol))
    return ticks // int(10 ** (resol - 9))


def _parse_epb(body: bytes, endian: str, interfaces: list[tuple[int, int, int]]) -> RawPacket:
    if len(body) < 20:
        raise TruncatedError("pcapng enhanced packet block", 20, len(body))
    iface, ts_hi, ts_lo, incl, orig = struct.unpack_from(endian + "IIIII", body)
    if iface >= len(interfaces):
        raise CaptureFormatError(f"pcapng packet names interface {iface} of {len(interfaces)}")
    if incl > len(body) - 20:
        raise TruncatedError("pcapng packet data", incl, len(body) - 20)
    linktype, resol, _snap = interfaces[iface]
    return RawPacket(_ticks_to_ns((ts_hi << 32) | ts_lo, resol), body[20 : 20 + incl],
                     linktype, orig)


# -- records <-> files ----------------------------------------------------------


def encode_capture(records: Iterable[CaptureRecord], *, fmt: str = "pcap") -> bytes:
    """A pcap (``fmt="pcap"``) or pcapng (``fmt="pcapng"``) file of ``records``."""
    packets = (RawPacket(r.timestamp_ns, r.encode()) for r in records)
    if fmt == "pcap":
        return encode_pcap(packets)
    if fmt == "pcapng":
        return encode_pcapng(packets)
    raise EncodeError(f"unknown capture format {fmt!r} (pcap or pcapng)")


def iter_capture(
    source: bytes | bytearray | memoryview | BinaryIO,
    *,
    max_records: int = MAX_RECORDS,
    max_record_bytes: int = MAX_RECORD_BYTES,
) -> Iterator[CaptureRecord]:
    """Stream the records of a pcap / pcapng capture (bytes or a binary file object),
    one at a time, within the limits of :func:`iter_capture_file`; raises only
    DecodeError. Packets of another link type are rejected: a ualink_ref capture
    holds only LINKTYPE_USER0 records.
    """
    packets = iter_capture_file(source, max_records=max_records,
                                max_record_bytes=max_record_bytes)
    for index, pkt in enumerate(packets):
        if pkt.linktype != LINKTYPE_USER0:
            raise CaptureFormatError(f"packet {index}: link type {pkt.linktype}, not 147")
        try:
            yield CaptureRecord.decode(pkt.data, pkt.timestamp_ns)
        except DecodeError as exc:  # say which record
            exc.add_note(f"packet {index}")
            raise


@dataclass(frozen=True)
class BadRecord:
    """A packet of a capture that is not a valid record (kept in place by
    :func:`iter_capture_tolerant`)."""

    index: int  # packet number in the file (0-based)
    offset: int  # file offset of its record / block header
    error: str  # why it was rejected


def iter_capture_tolerant(
    source: bytes | bytearray | memoryview | BinaryIO | IO[bytes], *,
    max_records: int = MAX_RECORDS,
) -> Iterator[tuple[int, CaptureRecord | BadRecord]]:
    """``(packet number, record)`` for each packet of a capture, tolerant per record.

    A packet whose pseudo-header or length is wrong, or of another link type,
    comes as a :class:`BadRecord` and reading goes on (what a dissector wants;
    :func:`iter_capture` stops instead). A framing error of the file itself
    (truncated, impossible length) still raises :class:`DecodeError`, noted
    with packet number and offset, after every record before it was yielded:
    nothing after it can be found reliably.
    """
    for index, pkt in enumerate(iter_capture_file(source, max_records=max_records)):
        if pkt.linktype != LINKTYPE_USER0:
            yield index, BadRecord(index, pkt.offset, f"link type {pkt.linktype}, not 147")
            continue
        try:
            yield index, CaptureRecord.decode(pkt.data, pkt.timestamp_ns)
        except DecodeError as exc:
            yield index, BadRecord(index, pkt.offset, str(exc))


def decode_capture(data: bytes, *, max_records: int = MAX_RECORDS) -> list[CaptureRecord]:
    """Every record of a pcap / pcapng capture; raises only DecodeError (see
    :func:`iter_capture`)."""
    if not isinstance(data, bytes | bytearray | memoryview):
        raise CaptureFormatError("capture data must be bytes")
    return list(iter_capture(data, max_records=max_records))


def write_capture(path: str | Path, records: Iterable[CaptureRecord]) -> int:
    """Write ``records`` to ``path`` (pcapng if the name ends in ``.pcapng``); return bytes."""
    fmt = "pcapng" if str(path).endswith(".pcapng") else "pcap"
    data = encode_capture(records, fmt=fmt)
    Path(path).write_bytes(data)
    return len(data)


def read_capture(path: str | Path, *, max_records: int = MAX_RECORDS) -> list[CaptureRecord]:
    """Read every record of the pcap / pcapng file at ``path``, streaming (a device
    or endless file fails at its first bad record or at ``max_records``, it is never
    read whole); an unreadable path is a :class:`CaptureFormatError`."""
    if not isinstance(path, str | Path):
        raise CaptureFormatError(f"capture path must be a str or Path, got {type(path).__name__}")
    try:
        with open(path, "rb") as stream:
            return list(iter_capture(stream, max_records=max_records))
    except (OSError, ValueError) as exc:  # ValueError: e.g. a NUL in the path
        if isinstance(exc, DecodeError):
            raise
        raise CaptureFormatError(f"cannot read capture {str(path)!r:.80}: {exc}") from None


__all__ = [
    "CAPTURE_MAGIC",
    "CAPTURE_VERSION",
    "DL_FLIT_BYTES",
    "INTERLEAVES",
    "LINKTYPE_USER0",
    "MAX_RECORDS",
    "MAX_RECORD_BYTES",
    "PSEUDO_HEADER",
    "PSEUDO_HEADER_BYTES",
    "BadRecord",
    "CaptureFormatError",
    "CaptureRecord",
    "RawPacket",
    "decode_capture",
    "decode_capture_file",
    "encode_capture",
    "encode_pcap",
    "encode_pcapng",
    "iter_capture",
    "iter_capture_file",
    "iter_capture_tolerant",
    "read_capture",
    "write_capture",
]
