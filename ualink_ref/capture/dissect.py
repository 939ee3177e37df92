"""Dissect a capture with the project's own decoders (no Scapy): flits, TL flits, requests.

:func:`dissect_records` turns capture records into :class:`DissectedFlit`
values, one per DL flit, in capture order. Per direction it follows the
receiver's rules of ``ualink_ref.dl.datalink`` as a passive observer:

* a flit that fails its CRC (or is malformed) is dropped;
* a data flit is accepted only when its sequence number is the next one
  expected (explicit header) or its low three bits match it (implicit header,
  op ``ack`` with payload); behind it, it is a duplicate; ahead, a gap;
* the TL bytes of accepted flits form one continuous stream that is cut into
  64-byte TL flits, so a TL flit that spans two DL flits is reassembled and
  reported with the DL flit that completes it; each TL flit is dissected by
  :func:`ualink_ref.tl.flit.dissect` with the data half-flits still owed.

A capture that starts mid-stream synchronises on the first good data flit
with an explicit header: TL bytes before its first TL-flit boundary belong to
a TL flit begun before the capture and are skipped (reported). Records of
kind ``fec_codewords`` are FEC-decoded first (one DissectedFlit per flit).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from ualink_ref.bitfields import BitFormat
from ualink_ref.capture.format import PSEUDO_HEADER, CaptureRecord
from ualink_ref.dl.crc import CRC_COVERAGE, crc32
from ualink_ref.dl.flit import SEGMENT_OFFSETS, TL_FLIT_BYTES, DLFlit
from ualink_ref.dl.formats import (
    COMMAND_HEADER,
    EXPLICIT_HEADER,
    SEGMENT_HEADER,
    FlitOp,
    header_op,
)
from ualink_ref.dl.messages import (
    ChannelCommand,
    ChannelNegotiation,
    TLRateNotification,
    UartData,
    UnknownMessage,
    VendorMessage,
    decode_message,
)
from ualink_ref.dl.verdict import Verdict, classify, implicit_seq, next_seq, phase_matches
from ualink_ref.errors import CrcError, DecodeError
from ualink_ref.sizes import DL_FLIT_BYTES, MAX_WINDOW, check_fec
from ualink_ref.stack.endpoint import decode_wire
from ualink_ref.tl.codec import ADDR_LO_BITS
from ualink_ref.tl.fields import COMMANDS, STATUS_NAMES, FType
from ualink_ref.tl.flit import TLFlitView, dissect
from ualink_ref.tl.upli import AtomicOp, atomic_op_of

#: Data flits remembered per direction to tell a replayed flit from a new one: a sender
#: never has more than a window's worth unacknowledged, so older ones cannot come back.
_REPLAY_MEMORY = MAX_WINDOW


@dataclass(frozen=True)
class TLOp:
    """One request or response field found in a TL flit (for listing and filters)."""

    kind: str  # "request" or "response"
    command: str  # command name, or "Response"
    tag: int
    values: dict[str, int]

    def describe(self) -> str:
        """Short rendering: ``Read tag=5 addr=0x1000 64B`` or ``Response tag=5 OKAY``."""
        v = self.values
        if self.kind == "request":
            words = v.get("len", 0) + 1
            text = f"{self.command} tag={self.tag}"
            if "addr" in v:
                text += f" addr={v['addr'] << 2:#x}"
            else:  # compressed, address-cache way not seen in this capture
                text += f" addr_lo={v['addr_lo'] << 2:#x}(way {v['cway']} unknown)"
            op = atomic_op_of(v.get("attr", 0)) if self.command.startswith("Atomic") else None
            if op is not None:
                text += f" op={AtomicOp(op).name}"
            return text + f" {4 * words}B"
        status = STATUS_NAMES.get(v.get("status", 0), str(v.get("status")))
        return f"Response tag={self.tag} {status}"


@dataclass(frozen=True)
class DissectedFlit:
    """One DL flit of a capture, as the dissector saw it."""

    index: int  # record number in the file (0-based)
    record: CaptureRecord
    raw: bytes  # the 640 flit bytes (after FEC decode for fec_codewords records)
    flit: DLFlit | None  # None when the CRC failed or the flit is malformed
    error: str = ""  # why flit is None
    crc_error: bool = False
    seq: int | None = None  # sequence number (explicit, or implicit and resolved)
    status: str = ""  # "accepted", "duplicate", "gap", "unsynchronised", "" (no payload)
    replayed: bool = False  # a data flit whose sequence number was seen recently
    messages: tuple[str, ...] = ()
    tl_flits: tuple[TLFlitView, ...] = ()  # TL flits completed here that dissected
    tl_raw: tuple[bytes, ...] = ()  # every 64-byte TL flit completed here, dissected or not
    ops: tuple[TLOp, ...] = ()
    credits: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()
    symbols_corrected: int = 0
    uncorrectable: bool = False
    fec_only: bool = False  # raw codewords of flits also captured decoded: FEC view only

    @property
    def direction(self) -> str:
        """``a_to_b`` or ``b_to_a``."""
        return self.record.direction


@dataclass
class _Direction:
    """What a passive receiver of one direction knows."""

    expected: int | None = None  # next sequence number (wire value), None: unsynchronised
    partial: bytearray = field(default_factory=bytearray)
    pending: int = 0  # data half-flits owed to the TL stream
    recent: dict[int, int] = field(default_factory=dict)  # seq -> data-flit counter
    data_flits: int = 0
    lossy: bool = False  # a flit was lost (CRC error, malformed) before synchronising
    unplaced: int = 0  # good data flits seen before synchronising
    guessed: bool = False  # synchronised on low bits only (mid-stream, implicit header)
    # Address cache of compressed requests: way -> address bits 56..24 of the loading request.
    ways: list[int | None] = field(default_factory=lambda: [None] * 4)


def _ops_of(view: TLFlitView, ways: list[int | None]) -> tuple[list[TLOp], list[str]]:
    ops: list[TLOp] = []
    credits: list[str] = []
    for half in view.halves:
        for f in half.fields:
            ft = f.ftype
            v = dict(f.values)
            if ft == FType.REQUEST and v["cload"]:
                ways[v["cway"]] = (v["addr"] << 2) >> ADDR_LO_BITS
            if ft == FType.COMPRESSED_REQUEST and ways[v["cway"]] is not None:
                # as the target sees it (the addr field counts 4-byte words)
                v["addr"] = ((ways[v["cway"]] or 0) << ADDR_LO_BITS | v["addr_lo"] << 2) >> 2
            if ft in (FType.REQUEST, FType.COMPRESSED_REQUEST):
                name = COMMANDS.get(v["cmd"], f"cmd{v['cmd']:#04x}")
                ops.append(TLOp("request", name, v["tag"], v))
            elif ft in (FType.RESPONSE, FType.COMPRESSED_RESPONSE_DATA,
                        FType.COMPRESSED_RESPONSE_NODATA):
                ops.append(TLOp("response", "Response", v["tag"], v))
            elif ft in (FType.FLOW_CONTROL, FType.VC_FLOW_CONTROL) and not f.is_nop:
                parts = [f"{k}+{v[k]}" for k in ("req_cmd", "rsp_cmd", "req_data", "rsp_data")
                         if v.get(k)]
                vc = f"vc{v['vchan']} " if ft == FType.VC_FLOW_CONTROL else ""
                credits.append(vc + " ".join(parts))
    return ops, credits


def _message_text(word: int) -> str:
    try:
        msg = decode_message(word)
    except DecodeError as exc:
        return f"bad message {word:#010x} ({exc})"
    if isinstance(msg, UnknownMessage):
        return f"unknown message {word:#010x} (class {msg.mclass}, type {msg.mtype}: " \
               "counted and ignored)"
    if isinstance(msg, UartData):
        return f"UART bytes {msg.data!r}"
    if isinstance(msg, TLRateNotification):
        return (f"TL rate notification: sender of this flit asks for data paced to "
                f"{msg.rate + 1}/256 of full rate")
    if isinstance(msg, VendorMessage):
        return f"vendor message type {msg.vtype} payload {msg.payload:#08x} (passed up)"
    if isinstance(msg, ChannelNegotiation):
        if msg.command is ChannelCommand.REQUEST_ONLINE:
            return "link training: sender is retraining, asks the peer to answer (online request)"
        if msg.command is ChannelCommand.ACK:
            return "link training: sender answers an online request (handshake ACK)"
    return repr(msg)


def _flit_bytes(rec: CaptureRecord) -> Iterator[tuple[bytes, int, bool, str]]:
    """(flit bytes, symbols corrected, uncorrectable, error) for each flit of a record."""
    if rec.kind == "dl_flit":
        yield rec.data, rec.symbols_corrected, rec.uncorrectable, ""
        return

    try:
        # the endpoint's own PHY decode
        res = decode_wire(rec.data, check_fec(rec.fec_mode), rec.interleave)
    except DecodeError as exc:
        yield b"", 0, True, f"FEC decode failed: {exc}"
        return
    for k, (corrected, bad) in enumerate(zip(res.corrected, res.uncorrectable, strict=True)):
        yield res.flits[DL_FLIT_BYTES * k : DL_FLIT_BYTES * (k + 1)], corrected, bad, ""


@dataclass(frozen=True)
class _Ctx:
    index: int
    record: CaptureRecord
    raw: bytes
    symbols_corrected: int
    uncorrectable: bool

    def result(self, **kw: Any) -> DissectedFlit:
        return DissectedFlit(index=self.index, record=self.record, raw=self.raw,
                             symbols_corrected=self.symbols_corrected,
                             uncorrectable=self.uncorrectable, **kw)


def dissect_records(records: Iterable[CaptureRecord]) -> list[DissectedFlit]:
    """Dissect every DL flit of ``records`` (see the module docstring for the rules).

    When a direction has ``dl_flit`` records, its ``fec_codewords`` records are the
    same flits before decoding: they are FEC-decoded and reported (``fec_only``) but
    not fed to the DL state a second time.
    """
    records = list(records)
    decoded = {r.direction for r in records if r.kind == "dl_flit"}
    state = {"a_to_b": _Direction(), "b_to_a": _Direction()}
    out: list[DissectedFlit] = []
    for index, rec in enumerate(records):
        fec_only = rec.kind == "fec_codewords" and rec.direction in decoded
        for raw, corrected, uncorrectable, error in _flit_bytes(rec):
            ctx = _Ctx(index, rec, raw, corrected, uncorrectable)
            if error:
                out.append(ctx.result(flit=None, error=error, fec_only=fec_only))
            elif fec_only:
                out.append(ctx.result(flit=None, fec_only=True))
            else:
                out.append(_dissect_flit(state[rec.direction], ctx))
    return out


def _dissect_flit(st: _Direction, ctx: _Ctx) -> DissectedFlit:
    try:
        flit = DLFlit.decode(ctx.raw)
    except CrcError as exc:
        st.lossy = True
        return ctx.result(flit=None, crc_error=True, error=(
            f"CRC error (stored {exc.expected:#010x}, computed {exc.actual:#010x})"))
    except DecodeError as exc:
        st.lossy = True
        return ctx.result(flit=None, error=f"malformed: {exc}")
    messages = tuple(_message_text(m) for m in flit.messages if m is not None)
    if not flit.payload:
        return ctx.result(flit=flit, messages=messages)
    notes: list[str] = []
    tl = flit.tl
    if flit.op.is_command:  # implicit sequence number: only its low 3 bits are sent
        if st.expected is None:
            if not st.unplaced and not st.lossy and flit.flit_seq_lo == 1 and not (
                    flit.first_tl_start):
                st.expected = 1  # the first data flit of a link is number 1
                notes.append("implicit seq taken as 1: capture starts at link start")
            elif not st.lossy:
                # Mid-stream capture, nothing lost: follow the low bits; the high bits are
                # learnt from the next explicit header (shown as "?" until then).
                st.expected = flit.flit_seq_lo or 8
                st.guessed = True
                st.partial.clear()
                st.pending = 0
                tl = tl[flit.first_tl_start:]
                notes.append("synchronised on an implicit header: sequence numbers unknown")
            else:
                st.unplaced += 1
                return ctx.result(flit=flit, status="unsynchronised", messages=messages,
                                  notes=("implicit sequence number before synchronisation",))
        verdict, _ = classify(flit, st.expected)  # the DL receiver's own rule
        if verdict is Verdict.GAP:
            # The sender goes implicit only within 7 flits of the acked point, so the
            # number is the first one from `expected` on with these low bits (dl rule 4).
            seq = implicit_seq(st.expected, flit.flit_seq_lo)
            replayed = _seen(st, seq)
            _remember(st, seq)
            return ctx.result(flit=flit, seq=seq, status="gap", replayed=replayed,
                              messages=messages, notes=(f"expected seq {st.expected}",))
        seq = st.expected
    else:
        seq = flit.flit_seq
        replayed = flit.op is FlitOp.REPLAY or _seen(st, seq)
        if st.expected is None:
            # Synchronise on: seq 1 (link start); a replay (it starts where the receiver
            # asked, DL rule 3); or any explicit flit when nothing was lost before it (a
            # capture that starts mid-stream). After a loss, wait for one of the first two.
            if seq != 1 and flit.op is not FlitOp.REPLAY and st.lossy:
                st.unplaced += 1
                return ctx.result(flit=flit, seq=seq, status="unsynchronised",
                                  messages=messages, notes=(
                                      "waiting for sequence 1 or a replay after a lost flit",))
            st.expected = seq
            st.partial.clear()
            st.pending = 0
            if flit.first_tl_start:
                notes.append(f"synchronised: the first {flit.first_tl_start} TL bytes finish "
                             "a TL flit begun before the capture")
                tl = tl[flit.first_tl_start:]
        elif st.guessed and seq & 7 == st.expected & 7:
            st.guessed = False  # the explicit header gives the high bits
            st.expected = seq
        else:
            verdict, _ = classify(flit, st.expected)  # the DL receiver's own rule
            if verdict is not Verdict.ACCEPT:
                _remember(st, seq)
                if verdict is Verdict.DUPLICATE:
                    return ctx.result(flit=flit, seq=seq, status="duplicate",
                                      replayed=replayed, messages=messages,
                                      notes=("already received",))
                return ctx.result(flit=flit, seq=seq, status="gap", replayed=replayed,
                                  messages=messages, notes=(f"expected seq {st.expected}",))
    replayed = flit.op is FlitOp.REPLAY or _seen(st, seq)
    if not notes and not phase_matches(flit, len(st.partial)):
        notes.append(f"TL stream phase mismatch (first_tl_start {flit.first_tl_start}, "
                     f"{len(st.partial)} bytes held): resynchronised")
        st.partial.clear()
        st.pending = 0
        tl = tl[flit.first_tl_start:]
    st.expected = next_seq(seq)
    _remember(st, seq)
    st.partial += tl
    views: list[TLFlitView] = []
    raw: list[bytes] = []
    ops: list[TLOp] = []
    credits: list[str] = []
    while len(st.partial) >= TL_FLIT_BYTES:
        chunk = bytes(st.partial[:TL_FLIT_BYTES])
        del st.partial[:TL_FLIT_BYTES]
        raw.append(chunk)
        try:
            view = dissect(chunk, st.pending)
        except DecodeError as exc:
            notes.append(f"TL flit not decodable ({exc}); TL stream resynchronises")
            st.pending = 0
            continue
        st.pending = view.pending_after
        views.append(view)
        o, c = _ops_of(view, st.ways)
        ops += o
        credits += c
    return ctx.result(flit=flit, seq=None if st.guessed else seq, status="accepted",
                      replayed=replayed,
                      messages=messages, tl_flits=tuple(views), tl_raw=tuple(raw),
                      ops=tuple(ops),
                      credits=tuple(credits), notes=tuple(notes))


def _remember(st: _Direction, seq: int) -> None:
    st.recent[seq] = st.data_flits
    st.data_flits += 1


def _seen(st: _Direction, seq: int) -> bool:
    """True when a data flit numbered ``seq`` was seen within the last 256 data flits."""
    when = st.recent.get(seq)
    return when is not None and st.data_flits - when <= _REPLAY_MEMORY


# -- rendering, filters, summary -------------------------------------------------

_ARROW = {"a_to_b": "A>B", "b_to_a": "B>A"}
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
    parts = [f"{f.index:5d} {rec.slot:7d} {_ARROW[rec.direction]} {_dl_line(f)}"]
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

    def matches(self, f: DissectedFlit) -> bool:
        """True when ``f`` passes every criterion that is set."""
        if self.direction is not None and f.direction != self.direction:
            return False
        if self.seq is not None and f.seq != self.seq:
            return False
        if self.command is not None:
            want = self.command.lower()
            return any(op.command.lower() == want for op in f.ops)
        return True


def summarize(flits: list[DissectedFlit], *, shown: int | None = None) -> str:
    """A multi-line summary: flits, replays, CRC errors, ops by command, responses."""
    raw_views = [f for f in flits if f.fec_only]
    flits = [f for f in flits if not f.fec_only]
    per_dir = Counter(f.direction for f in flits)
    data = [f for f in flits if f.flit is not None and f.flit.payload]
    status = Counter(f.status for f in data)
    command_only = Counter(f.flit.op.name.lower() for f in flits
                           if f.flit is not None and not f.flit.payload)
    replays = sum(1 for f in flits if f.flit is not None and f.flit.op is FlitOp.REPLAY)
    replayed = sum(1 for f in flits if f.replayed)
    crc = sum(1 for f in flits if f.crc_error)
    malformed = sum(1 for f in flits if f.flit is None and not f.crc_error)
    corrected = sum(f.symbols_corrected for f in flits)
    uncorrectable = sum(1 for f in flits if f.uncorrectable)
    raw_corrected = sum(f.symbols_corrected for f in raw_views)
    raw_bad = sum(1 for f in raw_views if f.uncorrectable)
    tl_flits = sum(len(f.tl_flits) for f in flits)
    requests = Counter(op.command for f in flits for op in f.ops if op.kind == "request")
    responses = Counter(STATUS_NAMES.get(op.values.get("status", 0), "?")
                        for f in flits for op in f.ops if op.kind == "response")
    dirs = ", ".join(f"{d} {per_dir[d]}" for d in sorted(per_dir))
    lines = [
        f"summary: {len(flits)} DL flits ({dirs})"
        + (f", {shown} shown" if shown is not None and shown != len(flits) else ""),
        f"  data flits {len(data)}"
        + _detail(_counts(status, ("accepted", "duplicate", "gap", "unsynchronised"))),
        f"  command-only flits {sum(command_only.values())}"
        + _detail(_counts(command_only, ("ack", "replay_request", "explicit"))),
        f"  replays started {replays}, replayed flits {replayed}",
        f"  CRC errors {crc}, malformed {malformed}, FEC symbols corrected {corrected}, "
        f"FEC uncorrectable {uncorrectable}",
        f"  TL flits {tl_flits}; requests by command: "
        + (_counts(requests, sorted(requests)) or "none"),
        "  responses by status: " + (_counts(responses, sorted(responses)) or "none"),
    ]
    lines += _message_lines(flits)
    if raw_views:
        lines.insert(5, f"  raw codeword views of those flits {len(raw_views)}: FEC symbols "
                        f"corrected {raw_corrected}, FEC uncorrectable {raw_bad}")
    return "\n".join(lines)


def _message_lines(flits: list[DissectedFlit]) -> list[str]:
    """DL messages in words: link training, pacing, the UART stream, vendor, unknown.

    Messages of data flits count only when the flit was accepted (a replayed copy
    carries the same messages again); command flits are never replayed.
    """
    kinds: Counter[str] = Counter()
    uart: dict[str, bytearray] = {"a_to_b": bytearray(), "b_to_a": bytearray()}
    for f in flits:
        if f.flit is None or (f.flit.payload and f.status != "accepted"):
            continue
        for word in f.flit.messages:
            if word is None:
                continue
            try:
                msg = decode_message(word)
            except DecodeError:
                kinds["malformed"] += 1
                continue
            if isinstance(msg, UartData):
                uart[f.direction] += msg.data
            elif isinstance(msg, ChannelNegotiation):
                kinds[f"training {msg.command.name.lower()}"] += 1
            else:
                kinds[type(msg).__name__] += 1
    lines = []
    if kinds:
        lines.append("  DL messages: " + _counts(kinds, sorted(kinds)))
    for d, data in uart.items():
        if data:
            shown = bytes(data[:48])
            more = f" ... ({len(data)} bytes)" if len(data) > 48 else f" ({len(data)} bytes)"
            lines.append(f"  UART stream {d}: {shown!r}{more}")
    return lines


def _counts(counter: Counter[str], order: Iterable[str]) -> str:
    return ", ".join(f"{k} {counter[k]}" for k in order if counter[k])


def _detail(counts: str) -> str:
    """``": <counts>"``, or nothing when there is nothing to break down."""
    return f": {counts}" if counts else ""


__all__ = ["HEADING", "DissectedFlit", "Filter", "TLOp", "dissect_records", "render", "summarize"]
