"""Reading dissected flits: one-line and field-by-field rendering, filters, JSON fields, summary.

The views of :mod:`ualink_ref.capture.dissect`'s :class:`DissectedFlit` values that
``ualink-ref dissect`` prints (text, ``--json``, ``--fields``) and filters by.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from ualink_ref.bitfields import BitFormat
from ualink_ref.capture.dissect import DissectedFlit
from ualink_ref.capture.dissect_tl import TLOp
from ualink_ref.capture.format import PSEUDO_HEADER
from ualink_ref.dl.crc import CRC_COVERAGE, crc32
from ualink_ref.dl.formats import COMMAND_HEADER, EXPLICIT_HEADER, SEGMENT_HEADER, FlitOp, header_op
from ualink_ref.dl.messages import ChannelNegotiation, UartData, decode_message
from ualink_ref.dl.segments import SEGMENT_OFFSETS
from ualink_ref.errors import DecodeError
from ualink_ref.tl.fields import STATUS_NAMES

# -- rendering, filters, summary -------------------------------------------------

_ARROW = {"a_to_b": "A>B", "b_to_a": "B>A"}
_OTHER = {"a_to_b": "b_to_a", "b_to_a": "a_to_b"}
_MAX_ITEMS = 4  # items of TL content on a default (one-line) rendering


def _dl_line(f: DissectedFlit) -> str:
    flit = f.flit
    if f.fec_only:
        return (f"fec_codewords  {len(f.record.data)}B {f.record.fec_mode} "
                f"interleave {f.record.interleave}" + (f" ({f.error})" if f.error else ""))
    if flit is None:
        return f.error
    op = flit.op.name.lower()
    if flit.op.is_command:
        what = "ack" if flit.op is FlitOp.ACK else "req"
        text = f"{op:<14} {what}={flit.ack_req_seq:<3}"
        if flit.payload:
            text += f" seq={f.seq if f.seq is not None else '?'}(lo {flit.flit_seq_lo})"
    else:
        text = f"{op:<14} seq={flit.flit_seq:<3}"
    if flit.payload:
        text += f" tl={len(flit.tl)}B"
    return text


#: Column heading for :func:`render` lines.
HEADING = "  rec    slot dir DL flit [flags] | TL content"


def render(f: DissectedFlit, *, verbose: bool = False) -> str:
    """One line per flit (``verbose``: followed by every field, indented)."""
    rec = f.record
    # A switched capture names the link: the port, unless it is a two-endpoint link's own.
    plain = (rec.direction, rec.port) in (("a_to_b", 0), ("b_to_a", 1))
    arrow = _ARROW[rec.direction] + ("" if plain else f"{rec.port}")
    parts = [f"{f.index:5d} {rec.slot:7d} {arrow} {_dl_line(f)}"]
    flags = []
    if f.status and f.status != "accepted":
        flags.append(f.status)
    if f.replayed:
        flags.append("replayed")
    if f.symbols_corrected:
        flags.append(f"fec+{f.symbols_corrected}")
    if f.uncorrectable:
        flags.append("FEC-UNCORRECTABLE")
    if flags:
        parts.append("[" + " ".join(flags) + "]")
    content = [op.describe() for op in f.ops]
    if f.credits:
        content.append(f"{len(f.credits)} credit return(s)")
    content += f.messages
    if len(content) > _MAX_ITEMS and not verbose:  # one short line; -v shows everything
        content = [*content[: _MAX_ITEMS - 1], f"(+{len(content) - _MAX_ITEMS + 1} more)"]
    if content:
        parts.append("| " + "; ".join(content))
    line = " ".join(parts).rstrip()
    if not verbose:
        return line
    return line + "\n" + "\n".join("        " + d for d in _details(f))


def _details(f: DissectedFlit) -> list[str]:
    rec = f.record
    out = [PSEUDO_HEADER.describe(rec.header_values()) + f" ts={rec.timestamp_ns}ns"]
    raw = f.raw
    if len(raw) != 640:
        return [*out, f"flit bytes: {len(raw)} (not a flit)", *f.notes]
    op = header_op(raw)
    hdr = COMMAND_HEADER if op in (FlitOp.ACK, FlitOp.REPLAY_REQUEST) else EXPLICIT_HEADER
    out.append(_describe(hdr, raw[:3]))
    for k, (hdr_off, _body) in enumerate(SEGMENT_OFFSETS):
        out.append(f"segment{k} " + _describe(SEGMENT_HEADER, raw[hdr_off:hdr_off + 1]))
    stored = int.from_bytes(raw[CRC_COVERAGE:], "big")
    good = crc32(raw[:CRC_COVERAGE]) == stored
    out.append(f"crc={stored:#010x} ({'valid' if good else 'INVALID'})")
    out += [f"message {m}" for m in f.messages]
    out += [f"credits {c}" for c in f.credits]
    for n, view in enumerate(f.tl_flits):
        for k, half in enumerate(view.halves):
            where = f"tl_flit{n}.half{k}"
            if half.kind == "data":
                out.append(f"{where} data {half.raw.hex()}")
                continue
            fields = [c for c in half.fields if not c.is_nop]
            out += [f"{where} control {c.describe()}" for c in fields] or [
                f"{where} control NOP"]
    out += [f"note: {n}" for n in f.notes]
    return out


def _describe(fmt: BitFormat, data: bytes) -> str:
    """Field rendering even when the bytes break the format's rules (for broken flits)."""
    word = int.from_bytes(data, "big")
    values = {p.field.name: (word >> p.shift) & p.field.max_value for p in fmt.positions}
    return fmt.describe(values)


@dataclass(frozen=True)
class Filter:
    """Which flits to show: every given criterion must match."""

    direction: str | None = None
    seq: int | None = None
    command: str | None = None
    crc_errors: bool = False  # only flits that failed their CRC
    slots: tuple[int | None, int | None] | None = None  # first..last slot, inclusive
    port: int | None = None  # pseudo-header port of the sender

    def matches(self, f: DissectedFlit) -> bool:
        """True when ``f`` passes every criterion that is set."""
        if self.direction is not None and f.direction != self.direction:
            return False
        if self.seq is not None and f.seq != self.seq:
            return False
        if self.crc_errors and not f.crc_error:
            return False
        if self.port is not None and f.record.port != self.port:
            return False
        if self.slots is not None:
            first, last = self.slots
            if (first is not None and f.record.slot < first) or (
                    last is not None and f.record.slot > last):
                return False
        if self.command is not None:
            want = self.command.lower()
            return any(op.command.lower() == want for op in f.ops)
        return True


def _dl_op(f: DissectedFlit) -> str | None:
    return None if f.flit is None else f.flit.op.name.lower()


#: Fields of :func:`as_dict` (the ``--json`` keys and the names ``--fields`` accepts).
FIELDS: dict[str, Any] = {
    "index": lambda f: f.index,
    "slot": lambda f: f.record.slot,
    "timestamp_ns": lambda f: f.record.timestamp_ns,
    "direction": lambda f: f.direction,
    "port": lambda f: f.record.port,
    "lane": lambda f: f.record.lane,
    "kind": lambda f: f.record.kind,
    "fec_mode": lambda f: f.record.fec_mode,
    "fec_only": lambda f: f.fec_only,
    "op": _dl_op,
    "seq": lambda f: f.seq,
    "ack_req_seq": lambda f: (f.flit.ack_req_seq if f.flit is not None and f.flit.op.is_command
                              else None),
    "status": lambda f: f.status,
    "replayed": lambda f: f.replayed,
    "crc_error": lambda f: f.crc_error,
    "error": lambda f: f.error,
    "symbols_corrected": lambda f: f.symbols_corrected,
    "uncorrectable": lambda f: f.uncorrectable,
    "tl_bytes": lambda f: len(f.flit.tl) if f.flit is not None and f.flit.payload else 0,
    "tl_flits": lambda f: len(f.tl_raw),
    "ops": lambda f: [{"kind": op.kind, "command": op.command, "tag": op.tag,
                       "text": op.describe(), **op.values} for op in f.ops],
    "credits": lambda f: list(f.credits),
    "messages": lambda f: list(f.messages),
    "notes": lambda f: list(f.notes),
}


def as_dict(f: DissectedFlit, fields: Iterable[str] = FIELDS) -> dict[str, Any]:
    """The flit as a JSON-ready dict of ``fields`` (default: all of :data:`FIELDS`)."""
    return {name: FIELDS[name](f) for name in fields}


def field_text(value: Any) -> str:
    """One ``--fields`` column: lists joined with ``,`` (ops by their short text), None empty."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return str(int(value))
    if isinstance(value, list):
        return ",".join(v["text"] if isinstance(v, dict) else str(v) for v in value)
    return str(value)


#: UART bytes a summary keeps per direction (it shows the first 48 and the count).
_UART_KEPT = 1 << 16


class Summary:
    """Counts over dissected flits, kept as they stream past (:meth:`add`), for :meth:`render`."""

    def __init__(self) -> None:
        self.flits = 0
        self.per_dir: Counter[str] = Counter()
        self.data = 0
        self.status: Counter[str] = Counter()
        self.command_only: Counter[str] = Counter()
        self.replays = self.replayed = self.crc = self.malformed = 0
        self.corrected = self.uncorrectable = 0
        self.raw_views = self.raw_corrected = self.raw_bad = 0
        self.tl_flits = 0
        self.requests: Counter[str] = Counter()
        self.responses: Counter[str] = Counter()
        #: Packets that were not valid records (counted by the reader, not the dissector).
        self.bad_records = 0
        #: DL messages in words (training, pacing, vendor, unknown) and the UART streams.
        self.messages: Counter[str] = Counter()
        self.uart: dict[str, bytearray] = {"a_to_b": bytearray(), "b_to_a": bytearray()}
        self.uart_bytes: Counter[str] = Counter()
        #: The TL error paths in words: split response pieces, poisoned requests, and the
        #: requests still without a final (``last`` = 1) response, by (direction, tag) and
        #: port: at most 2 directions x 2,048 tags x 256 ports, whatever the capture holds.
        self.pieces = 0
        self.poisoned: Counter[str] = Counter()
        self.unanswered: dict[tuple[str, int], dict[int, str]] = {}

    def add(self, f: DissectedFlit) -> None:
        """Count one dissected flit."""
        if f.fec_only:
            self.raw_views += 1
            self.raw_corrected += f.symbols_corrected
            self.raw_bad += f.uncorrectable
            return
        self.flits += 1
        self.per_dir[f.direction] += 1
        if f.flit is not None and f.flit.payload:
            self.data += 1
            self.status[f.status] += 1
        elif f.flit is not None:
            self.command_only[f.flit.op.name.lower()] += 1
        self.replays += f.flit is not None and f.flit.op is FlitOp.REPLAY
        self.replayed += f.replayed
        self.crc += f.crc_error
        self.malformed += f.flit is None and not f.crc_error
        self.corrected += f.symbols_corrected
        self.uncorrectable += f.uncorrectable
        # TL flits that framed (the readable views are built only for -v)
        self.tl_flits += len(f.tl_owed) - f.tl_owed.count(None)
        for op in f.ops:
            if op.kind == "request":
                self.requests[op.command] += 1
            else:
                self.responses[STATUS_NAMES.get(op.status, "?")] += 1
            self._add_error_paths(f.record.port, f.direction, op)
        self._add_messages(f)

    def _add_error_paths(self, port: int, direction: str, op: TLOp) -> None:
        """Count split pieces and poisoned requests; follow each request until the response
        with ``last`` = 1 comes back the other way (a timed-out request never gets one).
        The response matches by tag, on the same port when a request waits there (a fabric
        capture numbers the link, both ways) and else on the other one (a two-endpoint
        capture numbers the transmitter, ``specs/capture.md``)."""
        if op.kind == "request":
            if op.poisoned_beats:
                self.poisoned["operand" if op.command.startswith("Atomic") else "write"] += 1
            self.unanswered.setdefault((direction, op.tag), {})[port] = (
                f"{_ARROW[direction]} {op.describe()}")
            return
        self.pieces += op.is_piece
        key = (_OTHER[direction], op.tag)
        answered = self.unanswered.get(key)
        final = bool(getattr(op.field, "last", 1))
        if answered and final:
            answered.pop(port if port in answered else next(iter(answered)))
            if not answered:
                del self.unanswered[key]

    def _add_messages(self, f: DissectedFlit) -> None:
        """Count the flit's DL messages in words. A data flit's count only when it was
        accepted (a replayed copy carries the same messages again); command flits are
        never replayed."""
        if f.flit is None or (f.flit.payload and f.status != "accepted"):
            return
        for word in f.flit.messages:
            if word is None:
                continue
            try:
                msg = decode_message(word)
            except DecodeError:
                self.messages["malformed"] += 1
                continue
            if isinstance(msg, UartData):
                uart = self.uart.setdefault(f.direction, bytearray())
                if len(uart) < _UART_KEPT:  # shown truncated anyway: keep memory bounded
                    uart += msg.data
                self.uart_bytes[f.direction] += len(msg.data)
            elif isinstance(msg, ChannelNegotiation):
                self.messages[f"training {msg.command.name.lower()}"] += 1
            else:
                self.messages[type(msg).__name__] += 1

    def _error_path_lines(self) -> list[str]:
        lines = []
        if self.pieces:
            lines.append(f"  split responses: {self.pieces} piece(s) with offset != 0 or "
                         "last = 0 (rules S1-S7)")
        if self.poisoned:
            lines.append(f"  poisoned data sent: {self.poisoned['write']} write(s) with poisoned "
                         f"beats, {self.poisoned['operand']} atomic(s) with a poisoned operand")
        if self.unanswered:
            shown = [text for waiting in self.unanswered.values() for text in waiting.values()]
            more = f" (+{len(shown) - 3} more)" if len(shown) > 3 else ""
            lines.append(f"  requests without a final response in this capture: {len(shown)}: "
                         + "; ".join(shown[:3]) + more)
        return lines

    def render(self, shown: int | None = None) -> str:
        """The multi-line summary (``shown``: how many flits the filters let through)."""
        dirs = ", ".join(f"{d} {self.per_dir[d]}" for d in sorted(self.per_dir))
        lines = [
            f"summary: {self.flits} DL flits" + (f" ({dirs})" if dirs else "")
            + (f", {shown} shown" if shown is not None and shown != self.flits else ""),
            f"  data flits {self.data}"
            + _detail(_counts(self.status, ("accepted", "duplicate", "gap", "unsynchronised"))),
            f"  command-only flits {sum(self.command_only.values())}"
            + _detail(_counts(self.command_only, ("ack", "replay_request", "explicit"))),
            f"  replays started {self.replays}, replayed flits {self.replayed}",
            f"  CRC errors {self.crc}, malformed {self.malformed}, FEC symbols corrected "
            f"{self.corrected}, FEC uncorrectable {self.uncorrectable}",
            f"  TL flits {self.tl_flits}; requests by command: "
            + (_counts(self.requests, sorted(self.requests)) or "none"),
            "  responses by status: " + (_counts(self.responses, sorted(self.responses))
                                         or "none"),
        ]
        if self.raw_views:
            lines.insert(5, f"  raw codeword views of those flits {self.raw_views}: FEC symbols "
                            f"corrected {self.raw_corrected}, FEC uncorrectable {self.raw_bad}")
        lines += self._error_path_lines()
        if self.messages:
            lines.append("  DL messages: " + _counts(self.messages, sorted(self.messages)))
        for d, data in self.uart.items():
            if data:
                total = self.uart_bytes[d]
                more = f" ... ({total} bytes)" if total > 48 else f" ({total} bytes)"
                lines.append(f"  UART stream {d}: {bytes(data[:48])!r}{more}")
        if self.bad_records:
            lines.append(f"  BAD RECORDS {self.bad_records} (not valid capture records, skipped)")
        return "\n".join(lines)


def summarize(flits: list[DissectedFlit], *, shown: int | None = None) -> str:
    """A multi-line summary: flits, replays, CRC errors, ops by command, responses."""
    summary = Summary()
    for f in flits:
        summary.add(f)
    return summary.render(shown)


def _counts(counter: Counter[str], order: Iterable[str]) -> str:
    return ", ".join(f"{k} {counter[k]}" for k in order if counter[k])


def _detail(counts: str) -> str:
    """``": <counts>"``, or nothing when there is nothing to break down."""
    return f": {counts}" if counts else ""


__all__ = ["FIELDS", "HEADING", "Filter", "Summary", "as_dict", "field_text", "render",
           "summarize"]
