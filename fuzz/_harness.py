"""Shared plumbing of the atheris harnesses: every decoder may raise only DecodeError.

A harness module defines ``DECODE`` (the target), ``SEEDS`` (valid inputs, written to
the committed corpus ``fuzz/corpus/<harness>/`` by ``fuzz/make_corpus.py``), optionally
``FIXUP`` (structure-aware mode) and ``TestOneInput``; it calls :func:`main` when run as
a script. Anything but a ``DecodeError`` escaping the decoder is a crash that atheris
reports (and that becomes a regression test in ``tests/``).

**Structure-aware and raw modes.** A mutated flit almost never keeps a valid CRC-32, so
a raw-byte fuzzer stops at the CRC check. With ``FIXUP``, the first input byte selects
the mode: odd — *structured*: the rest of the input is repaired by ``FIXUP`` (CRC
recomputed, length fields and magic values set, containers rebuilt around mutated
records) before decoding, so mutations reach the parsers behind the checks; even —
*raw*: the rest is decoded as it is. The committed seeds are structured inputs (first
byte 1). ``UALINK_FUZZ_RAW=1`` turns the repair off (raw bytes only, the old harness).
"""

from __future__ import annotations

import contextlib
import os
import struct
import sys
import zlib
from collections.abc import Callable
from typing import Any

from ualink_ref.errors import DecodeError

FLIT = 640
HEADER = 16  # capture pseudo-header
RAW_ONLY = os.environ.get("UALINK_FUZZ_RAW") == "1"


def with_crc(flit: bytes) -> bytes:
    """``flit`` cut or zero-padded to 640 bytes with a correct CRC-32 (IEEE 802.3)."""
    body = (flit[: FLIT - 4] + bytes(FLIT - 4))[: FLIT - 4]
    return body + struct.pack(">I", zlib.crc32(body))


def flits_with_crc(data: bytes) -> bytes:
    """Every 640-byte piece of ``data`` with its CRC repaired (at least one flit)."""
    pieces = [data[i : i + FLIT] for i in range(0, max(len(data), 1), FLIT)]
    return b"".join(with_crc(p) for p in pieces)


def fix_record(data: bytes) -> bytes:
    """A capture record whose pseudo-header agrees with its payload: magic, version and
    header length set, payload_length = the bytes present, a DL flit's CRC repaired;
    every other field (kind, direction, FEC mode, flags, reserved bits) left mutated."""
    head = bytearray((data[:HEADER] + bytes(HEADER))[:HEADER])
    payload = data[HEADER:]
    if head[3] >> 4 == 0:  # record kind dl_flit: the flit behind the CRC
        payload = with_crc(payload)
    head[0], head[1], head[2] = 0x55, 0x01, HEADER
    head[10:12] = struct.pack(">H", min(len(payload), 0xFFFF))
    return bytes(head) + payload


def fix_capture(data: bytes) -> bytes:
    """A pcap or pcapng file (chosen by the first byte) of records cut from ``data`` at
    0xFF 0xFF markers, each repaired by :func:`fix_record`."""
    from ualink_ref.capture.format import RawPacket, encode_pcap, encode_pcapng

    fmt, body = (data[:1] or b"\x00"), data[1:]
    packets = [RawPacket(n, fix_record(chunk)[:65536])
               for n, chunk in enumerate(body.split(b"\xff\xff")[:64])]
    return (encode_pcapng if fmt[0] & 1 else encode_pcap)(packets)


def with_mode(decode: Callable[[bytes], Any], fixup: Callable[[bytes], bytes] | None
              ) -> Callable[[bytes], Any]:
    """``decode`` behind the mode byte (module docstring)."""
    if fixup is None:
        return decode

    def run(data: bytes) -> Any:
        if data and data[0] & 1 and not RAW_ONLY:
            return decode(fixup(data[1:]))
        return decode(data[1:])

    return run


def only_decode_errors(decode: Callable[[bytes], Any],
                       fixup: Callable[[bytes], bytes] | None = None) -> Callable[[bytes], None]:
    """A ``TestOneInput`` that feeds the fuzzer's bytes to ``decode`` (through ``fixup``
    in structured mode)."""
    target = with_mode(decode, fixup)

    def test_one_input(data: bytes) -> None:
        with contextlib.suppress(DecodeError):
            target(data)

    return test_one_input


def structured(seed: bytes) -> bytes:
    """A seed as a structured-mode input (mode byte 1)."""
    return b"\x01" + seed


def main(test_one_input: Callable[[bytes], None]) -> None:
    """Run ``test_one_input`` under atheris with the command line's libFuzzer options."""
    import atheris

    atheris.Setup(sys.argv, test_one_input)
    atheris.Fuzz()
