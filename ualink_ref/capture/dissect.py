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
  reported with the DL flit that completes it; each TL flit is framed by the
  rules of :mod:`ualink_ref.tl.framing` and its control half-flits kept
  (:class:`ualink_ref.capture.dissect_tl.TLStream`). Their typed fields, and
  what a listing shows (ops, credit text, the readable views of
  :func:`ualink_ref.tl.flit.dissect`), are built from them when first read.

A capture that starts mid-stream synchronises on the first good data flit
with an explicit header: TL bytes before its first TL-flit boundary belong to
a TL flit begun before the capture and are skipped (reported). Records of
kind ``fec_codewords`` are FEC-decoded first (one DissectedFlit per flit).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from ualink_ref.capture.dissect_tl import (
    NO_WAYS,
    TLOp,
    TLStream,
    credits_of,
    lazy,
    ops_of,
    read_control,
)
from ualink_ref.capture.format import BadRecord, CaptureRecord
from ualink_ref.dl.flit import NO_MESSAGES, DLFlit
from ualink_ref.dl.formats import (
    FlitOp,
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
from ualink_ref.errors import CaptureFormatError, CrcError, DecodeError
from ualink_ref.node.linkend import decode_wire
from ualink_ref.sizes import DL_FLIT_BYTES, MAX_WINDOW, check_fec
from ualink_ref.tl.codec import TLField
from ualink_ref.tl.flit import TLFlitView, dissect

#: Data flits remembered per direction to tell a replayed flit from a new one: a sender
#: never has more than a window's worth unacknowledged, so older ones cannot come back.
_REPLAY_MEMORY = MAX_WINDOW


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
    tl_raw: tuple[bytes, ...] = ()  # every 64-byte TL flit completed here, dissected or not
    #: For each of ``tl_raw``: data half-flits owed before it, ``None`` when it did not frame.
    tl_owed: tuple[int | None, ...] = ()
    #: The control half-flits of those TL flits that framed, in order...
    tl_control: tuple[bytes, ...] = ()
    #: ...and the address cache (way -> address bits above ``addr_lo``) before them.
    tl_cache: tuple[int | None, ...] = NO_WAYS
    notes: tuple[str, ...] = ()
    symbols_corrected: int = 0
    uncorrectable: bool = False
    fec_only: bool = False  # raw codewords of flits also captured decoded: FEC view only

    @property
    def direction(self) -> str:
        """``a_to_b`` or ``b_to_a``."""
        return self.record.direction

    @lazy
    def tl_flits(self) -> tuple[TLFlitView, ...]:
        """The readable view of every TL flit completed here that dissected.

        Built on first read (a listing without ``-v`` never needs it) from the
        raw TL flits and the framing state the dissector saw before each.
        """
        return tuple(dissect(raw, owed) for raw, owed in zip(self.tl_raw, self.tl_owed,
                                                            strict=True) if owed is not None)

    @lazy
    def tl_fields(self) -> tuple[TLField, ...]:
        """The requests, responses and credit returns of the TL flits completed here, typed,
        in order (read from ``tl_control`` on first use)."""
        fields, ways = read_control(self.tl_control, self.tl_cache)
        self.__dict__["tl_ways"] = ways
        return fields

    @lazy
    def tl_ways(self) -> tuple[int | None, ...]:
        """For each of ``tl_fields``, a compressed request's address bits from the address
        cache when its way was loaded in the capture, else ``None``."""
        self.__dict__["tl_fields"], ways = read_control(self.tl_control, self.tl_cache)
        return ways

    @lazy
    def ops(self) -> tuple[TLOp, ...]:
        """Request and response fields of the TL flits completed here, in order."""
        return ops_of(self.tl_fields, self.tl_ways)

    @lazy
    def credits(self) -> tuple[str, ...]:
        """Credit returns (flow-control fields that are not NOP padding) as text, in order."""
        return credits_of(self.tl_fields)


@dataclass(slots=True)
class _Direction:
    """What a passive receiver of one direction knows."""

    expected: int | None = None  # next sequence number (wire value), None: unsynchronised
    tl: TLStream = field(default_factory=TLStream)  # the TL stream: bytes held, framing
    recent: dict[int, int] = field(default_factory=dict)  # seq -> data-flit counter
    data_flits: int = 0
    lossy: bool = False  # a flit was lost (CRC error, malformed) before synchronising
    unplaced: int = 0  # good data flits seen before synchronising
    guessed: bool = False  # synchronised on low bits only (mid-stream, implicit header)


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


def _codeword_flits(rec: CaptureRecord) -> Iterator[tuple[bytes, int, bool, str]]:
    """(flit bytes, symbols corrected, uncorrectable, error) for each flit of a
    ``fec_codewords`` record."""
    try:
        # the endpoint's own PHY decode
        res = decode_wire(rec.data, check_fec(rec.fec_mode), rec.interleave)
    except DecodeError as exc:
        yield b"", 0, True, f"FEC decode failed: {exc}"
        return
    for k, (corrected, bad) in enumerate(zip(res.corrected, res.uncorrectable, strict=True)):
        yield res.flits[DL_FLIT_BYTES * k : DL_FLIT_BYTES * (k + 1)], corrected, bad, ""


def _made(values: dict[str, Any], **kw: Any) -> DissectedFlit:
    """The :class:`DissectedFlit` whose fields are ``values`` and ``kw`` (the rest: defaults).

    Built by handing it its instance dict: a frozen dataclass's ``__init__`` sets its
    19 fields one ``object.__setattr__`` at a time, which cost more than the rest of
    dissecting a flit. A field left out reads its default from the class (a dataclass
    keeps plain defaults there), so the result is the same frozen value (``==``,
    ``repr``, ``hash``). Safe here: every value is the dissector's own, of the declared
    type. ``values`` becomes the flit's: the caller does not use it again.
    """
    if kw:
        values.update(kw)
    flit = _new(DissectedFlit)
    _set(flit, "__dict__", values)
    return flit


def _where(number: int, record: CaptureRecord, raw: bytes, symbols_corrected: int,
           uncorrectable: bool) -> dict[str, Any]:
    """The fields that say where a flit came from (the start of its values for :func:`_made`)."""
    return {"index": number, "record": record, "raw": raw,
            "symbols_corrected": symbols_corrected, "uncorrectable": uncorrectable}


_new, _set = object.__new__, object.__setattr__


def dissect_records(records: Iterable[CaptureRecord]) -> list[DissectedFlit]:
    """Dissect every DL flit of ``records`` (see the module docstring for the rules).

    When a direction has ``dl_flit`` records, its ``fec_codewords`` records are the
    same flits before decoding: they are FEC-decoded and reported (``fec_only``) but
    not fed to the DL state a second time. Anything but capture records raises
    :class:`~ualink_ref.errors.CaptureFormatError`.
    """
    if isinstance(records, bytes | bytearray | memoryview | str):
        raise CaptureFormatError("dissect_records takes capture records, not bytes (decode first)")
    try:
        records = list(records)
    except TypeError:
        raise CaptureFormatError(f"dissect_records takes capture records, got {records!r:.40}"
                                 ) from None
    for index, rec in enumerate(records):
        if not isinstance(rec, CaptureRecord):
            raise CaptureFormatError(f"record {index} is a {type(rec).__name__}, not a "
                                     "CaptureRecord")
    dissector = Dissector()
    out: list[DissectedFlit] = []
    for index, rec in enumerate(records):
        out += dissector.feed(index, rec)  # type: ignore[arg-type]  # no BadRecord fed
    out += dissector.finish()  # type: ignore[arg-type]
    return out


class Dissector:
    """The streaming form of :func:`dissect_records`: feed records, get flits back.

    :meth:`feed` takes the records of a file in order (and :class:`BadRecord` s,
    passed through in place) and returns what can be reported so far. A
    ``fec_codewords`` record is held back until the same direction shows a
    ``dl_flit`` record (then it is the FEC view of flits decoded alongside,
    ``fec_only``) or the input ends (:meth:`finish`): the whole-file rule of
    :func:`dissect_records`, decided as early as the file allows. Captures
    written by ``ualink_ref`` put each codeword record just before its decoded
    flits, so nothing waits for long.
    """

    def __init__(self) -> None:
        # One receiver state per direction and pseudo-header port: a switched capture
        # holds every link of the pod, each port its own DL stream.
        self._state: dict[tuple[str, int], _Direction] = {}
        self._decoded: set[tuple[str, int]] = set()  # (direction, port) with dl_flit records
        self._held: list[tuple[int, CaptureRecord | BadRecord]] = []

    def feed(self, index: int, record: CaptureRecord | BadRecord
             ) -> list[DissectedFlit | BadRecord]:
        """Take packet number ``index``; return the flits (and bad records) now reportable."""
        if isinstance(record, CaptureRecord) and record.kind == "dl_flit":
            self._decoded.add((record.direction, record.port))
            if not self._held:  # nothing waits for a decision: report it at once
                return self._dissect(index, record)
        self._held.append((index, record))
        return self._release(final=False)

    def finish(self) -> list[DissectedFlit | BadRecord]:
        """The input ended: report everything still held."""
        return self._release(final=True)

    def _undecided(self, record: CaptureRecord | BadRecord) -> bool:
        return (isinstance(record, CaptureRecord) and record.kind == "fec_codewords"
                and (record.direction, record.port) not in self._decoded)

    def _release(self, final: bool) -> list[DissectedFlit | BadRecord]:
        out: list[DissectedFlit | BadRecord] = []
        done = 0
        for index, rec in self._held:
            if isinstance(rec, BadRecord):
                out.append(rec)
            elif not final and self._undecided(rec):
                break
            else:
                out += self._dissect(index, rec)
            done += 1
        del self._held[:done]
        return out

    def _dissect(self, index: int, rec: CaptureRecord) -> list[DissectedFlit | BadRecord]:
        key = (rec.direction, rec.port)
        st = self._state.get(key)
        if st is None:
            st = self._state[key] = _Direction()
        if rec.kind == "dl_flit":
            return [_dissect_flit(st, _where(index, rec, rec.data, rec.symbols_corrected,
                                             rec.uncorrectable))]
        fec_only = key in self._decoded
        out: list[DissectedFlit | BadRecord] = []
        for raw, corrected, uncorrectable, error in _codeword_flits(rec):
            values = _where(index, rec, raw, corrected, uncorrectable)
            if error:
                out.append(_made(values, flit=None, error=error, fec_only=fec_only))
            elif fec_only:
                out.append(_made(values, flit=None, fec_only=True))
            else:
                out.append(_dissect_flit(st, values))
        return out


def _dissect_flit(st: _Direction, values: dict[str, Any]) -> DissectedFlit:
    """The flit whose :func:`_where` values are ``values``, through ``st`` (which it updates)."""
    try:
        flit = DLFlit.decode(values["raw"])
    except CrcError as exc:
        st.lossy = True
        return _made(values, flit=None, crc_error=True, error=(
            f"CRC error (stored {exc.expected:#010x}, computed {exc.actual:#010x})"))
    except DecodeError as exc:
        st.lossy = True
        return _made(values, flit=None, error=f"malformed: {exc}")
    values["flit"] = flit
    if flit.messages != NO_MESSAGES:
        values["messages"] = tuple(_message_text(m) for m in flit.messages if m is not None)
    tl = flit.tl
    if not tl:
        return _made(values)
    notes: list[str] = []
    op = flit.op
    if op.is_command:  # implicit sequence number: only its low 3 bits are sent
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
                st.tl.resync()
                tl = tl[flit.first_tl_start:]
                notes.append("synchronised on an implicit header: sequence numbers unknown")
            else:
                st.unplaced += 1
                return _made(values, status="unsynchronised",
                             notes=("implicit sequence number before synchronisation",))
        verdict, _ = classify(flit, st.expected)  # the DL receiver's own rule
        if verdict is Verdict.GAP:
            # The sender goes implicit only within 7 flits of the acked point, so the
            # number is the first one from `expected` on with these low bits (dl rule 4).
            seq = implicit_seq(st.expected, flit.flit_seq_lo)
            replayed = _seen(st, seq)
            _remember(st, seq)
            return _made(values, seq=seq, status="gap", replayed=replayed,
                         notes=(f"expected seq {st.expected}",))
        seq = st.expected
    else:
        seq = flit.flit_seq
        if st.expected is None:
            # Synchronise on: seq 1 (link start); a replay (it starts where the receiver
            # asked, DL rule 3); or any explicit flit when nothing was lost before it (a
            # capture that starts mid-stream). After a loss, wait for one of the first two.
            if seq != 1 and op is not FlitOp.REPLAY and st.lossy:
                st.unplaced += 1
                return _made(values, seq=seq, status="unsynchronised", notes=(
                    "waiting for sequence 1 or a replay after a lost flit",))
            st.expected = seq
            st.tl.resync()
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
                replayed = op is FlitOp.REPLAY or _seen(st, seq)
                _remember(st, seq)
                if verdict is Verdict.DUPLICATE:
                    return _made(values, seq=seq, status="duplicate", replayed=replayed,
                                 notes=("already received",))
                return _made(values, seq=seq, status="gap", replayed=replayed,
                             notes=(f"expected seq {st.expected}",))
    # Accepted (the common case: kept lean, it runs for nearly every data flit).
    recent = st.recent
    when = recent.get(seq)
    values["replayed"] = op is FlitOp.REPLAY or (
        when is not None and st.data_flits - when <= _REPLAY_MEMORY)  # _seen, inline
    stream = st.tl
    if not notes and not phase_matches(flit, len(stream.partial)):
        notes.append(f"TL stream phase mismatch (first_tl_start {flit.first_tl_start}, "
                     f"{len(stream.partial)} bytes held): resynchronised")
        stream.resync()
        tl = tl[flit.first_tl_start:]
    st.expected = next_seq(seq)
    recent[seq] = st.data_flits  # _remember, inline
    st.data_flits += 1
    values["seq"] = None if st.guessed else seq
    values["status"] = "accepted"
    values["tl_raw"], values["tl_owed"], values["tl_control"], values["tl_cache"] = (
        stream.add(tl, notes))
    if notes:
        values["notes"] = tuple(notes)
    return _made(values)


def _remember(st: _Direction, seq: int) -> None:
    st.recent[seq] = st.data_flits
    st.data_flits += 1


def _seen(st: _Direction, seq: int) -> bool:
    """True when a data flit numbered ``seq`` was seen within the last 256 data flits."""
    when = st.recent.get(seq)
    return when is not None and st.data_flits - when <= _REPLAY_MEMORY


__all__ = ["DissectedFlit", "Dissector", "TLOp", "dissect_records"]
