"""``ualink-ref dl decode``: read one 640-byte DL flit, field by field."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from ualink_ref.cli.commands import add_action, add_actions
from ualink_ref.cli.options import USAGE, fail
from ualink_ref.dl.flit import HEADER_BYTES, DLFlit
from ualink_ref.dl.formats import COMMAND_HEADER, EXPLICIT_HEADER, SEGMENT_HEADER
from ualink_ref.dl.messages import decode_message
from ualink_ref.dl.segments import SEGMENT_OFFSETS
from ualink_ref.errors import DecodeError


def describe_flit(data: bytes) -> str:
    """Every field of one DL flit, one per line (raises ``DecodeError`` on a bad flit)."""

    flit = DLFlit.decode(data)
    fmt = COMMAND_HEADER if flit.op.is_command else EXPLICIT_HEADER
    lines = [f"header   {fmt.describe(fmt.unpack(data[:HEADER_BYTES]))}",
             f"crc      {data[636:].hex()} (good)"]
    for k, (seg, word) in enumerate(zip(flit.segments(), flit.messages, strict=True)):
        values = SEGMENT_HEADER.unpack(data[SEGMENT_OFFSETS[k][0]:SEGMENT_OFFSETS[k][0] + 1])
        line = f"seg{k}     {SEGMENT_HEADER.describe(values)} tl_bytes={seg.tl_bytes}"
        if word is not None:
            try:
                line += f" message={decode_message(word)!r}"
            except DecodeError as exc:
                line += f" message={word:#010x} ({exc})"
        lines.append(line)
    starts = flit.tl_flit_starts()
    lines.append(f"tl       {len(flit.tl)} bytes; TL flits start at byte offsets {starts}")
    return "\n".join(lines)


def _hex_or_raw(raw: bytes) -> bytes:
    """Hex text (whitespace allowed) decoded, else the bytes themselves (a binary flit)."""
    try:
        return bytes.fromhex("".join(raw.decode("ascii").split()))
    except (UnicodeDecodeError, ValueError):
        # Not hex text: the flit bytes themselves. (Binary flits can be all-ASCII
        # bytes, so a failed ASCII decode is not the test.)
        return raw


def _read(source: str) -> bytes:
    compact = "".join(source.split())
    if source == "-":
        return _hex_or_raw(sys.stdin.buffer.read())
    if all(c in "0123456789abcdefABCDEF" for c in compact) and len(compact) > 64:
        text = compact  # hex given on the command line
    else:
        path = Path(source)
        if path.is_file():
            return _hex_or_raw(path.read_bytes())
        text = source
    return bytes.fromhex("".join(text.split()))


def _cmd_decode(args: argparse.Namespace) -> int:
    try:
        data = _read(args.flit)
    except ValueError as exc:
        return fail("dl decode", f"not hex: {exc}", USAGE)
    print(describe_flit(data))
    return 0


def register(sub: Any) -> None:
    """Add the ``dl`` command to the ``ualink-ref`` parser."""

    dec = add_action(
        add_actions(sub, "dl", "Data link layer tools (specs/dl.md)."), "decode", _cmd_decode,
        "show every field of one DL flit",
        "Decode one 640-byte DL flit given as hex, a hex or binary file, or - "
        "(stdin). Exit 1 with the error on a bad CRC or malformed flit.")
    dec.add_argument("flit", metavar="HEX|FILE|-")


__all__ = ["describe_flit", "register"]
