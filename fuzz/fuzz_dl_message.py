"""atheris harness: DL message words — the decoder, and the receiver that acts on them.

The first input byte picks the mode (as in ``_harness.py``):

* even — *raw*: the rest is one message for ``dl.decode_message`` (4 bytes; any
  other length is also tried as an integer word); only a ``DecodeError`` may escape.
* odd — *structured*: the rest is a script of message words a peer sends to one
  link end (a :class:`DataLink` run by its :class:`LinkManager`, which acts on
  them: channel negotiation and training, TL-rate pacing, the UART stream, vendor
  and unknown classes, rules L1-L10). Each entry is a selector byte and a 4-byte
  word. The selector's low 3 bits pick a message class and type (NoOp, TL rate,
  device ID, port number, channel negotiation, UART data, vendor; 7: the word as it
  is, so unknown classes and compressed words), written into the word's ``mclass``
  / ``mtype``; its top bit asks for a *repaired* word (the message re-encoded from
  the word's bits: reserved bits clear, a UART count of 0-2 with its bytes), so
  mutations reach the receiver's handling instead of the reserved-bit check. Bits
  4-5 choose the flit that carries the words: a command flit, a new data flit in
  sequence (the reliable path), a replay request, or an out-of-sequence data flit
  (dropped: a replay request is owed); bit 6 ends the flit after this word; bit 3
  makes a command flit acknowledge the end's own data (on the first selector it
  instead starts the end ``down``). Flits are built with a correct CRC
  (``DLFlit.encode``), so nothing stops at the CRC. The link end has 0-3 TL flits
  of its own to send (the number of entries modulo 4: pacing shows on them, and
  unacknowledged they end in replays, retrains and a fault) and is polled and timed
  between flits and for 96 slots after the last one.

  In structured mode nothing may raise; a decoded word must re-encode to itself;
  the UART bytes reported must be those of the UART messages received, in order;
  the pacing rate in force must be the last TL rate received.
"""

from __future__ import annotations

import contextlib

import atheris
from _harness import RAW_ONLY, main

with atheris.instrument_imports():
    from ualink_ref.bitfields import BitFormat
    from ualink_ref.dl import DataLink, DLFlit, decode_message, encode_message
    from ualink_ref.dl.config import DLConfig, LinkStateConfig
    from ualink_ref.dl.events import DLMessageReceived
    from ualink_ref.dl.formats import FlitOp
    from ualink_ref.dl.linkstate import LinkManager, UartReceived
    from ualink_ref.dl.messages import (
        ChannelCommand,
        ChannelNegotiation,
        DeviceId,
        NoOp,
        PortNumber,
        TLRateNotification,
        UartData,
        VendorMessage,
    )
    from ualink_ref.errors import DecodeError

DECODE = decode_message
#: (mclass, mtype) written into the word for selector values 0-6.
_CLASS_TYPE = ((0, 0), (0, 1), (0, 2), (0, 3), (8, 0), (1, 0), (15, 0))
_SEGMENTS = 5


def _fields(fmt: BitFormat, word: int) -> dict[str, int]:
    """Every field of ``word`` read with ``fmt``'s layout (reserved bits included)."""
    return {p.field.name: (word >> p.shift) & p.field.max_value for p in fmt.positions}


def repaired(kind: int, word: int) -> int:
    """A valid message of class ``kind`` re-encoded from the bits of ``word`` (its fields
    where the class has them, reserved bits dropped, a UART count of 0-2)."""
    if kind == 0:
        return NoOp().encode()
    if kind == 1:
        return TLRateNotification(_fields(TLRateNotification.FORMAT, word)["rate"]).encode()
    if kind == 2:
        v = _fields(DeviceId.FORMAT, word)
        return DeviceId(bool(v["response"]), v["device_id"]).encode()
    if kind == 3:
        v = _fields(PortNumber.FORMAT, word)
        return PortNumber(bool(v["response"]), v["port"]).encode()
    if kind == 4:
        v = _fields(ChannelNegotiation.FORMAT, word)
        return ChannelNegotiation(ChannelCommand(v["command"])).encode()
    if kind == 5:
        v = _fields(UartData.FORMAT, word)
        return UartData(v["data"].to_bytes(2, "big")[: v["count"] % 3]).encode()
    v = _fields(VendorMessage.FORMAT, word)
    return VendorMessage(v["mtype"], v["vendor_data"]).encode()


def script_words(script: bytes) -> list[tuple[int, int]]:
    """The script's ``(selector, word)`` entries (at most 40)."""
    out = []
    for i in range(0, min(len(script), 200), 5):
        sel = script[i]
        word = int.from_bytes((script[i + 1 : i + 5] + bytes(4))[:4], "big")
        kind = sel & 7
        if kind < 7:
            if sel & 0x80:
                word = repaired(kind, word)
            else:
                mclass, mtype = _CLASS_TYPE[kind]
                word = (word & ~0x1FC) | mtype << 6 | mclass << 2
        out.append((sel, word))
    return out


def flits(entries: list[tuple[int, int]], link: DataLink) -> list[tuple[int, list[int]]]:
    """Group the words into flits: ``(selector of the last word, words)`` (bits 4-6)."""
    out: list[tuple[int, list[int]]] = []
    words: list[int] = []
    for sel, word in entries:
        words.append(word)
        if sel & 0x40 or len(words) == _SEGMENTS:
            out.append((sel, words))
            words = []
    if words:
        out.append((entries[-1][0], words))
    return out


def build(sel: int, words: list[int], link: DataLink) -> bytes:
    """One flit (correct CRC) carrying ``words``, for ``link``'s receive side: the carrier
    from bits 4-5 of ``sel``; a command flit acknowledges what ``link`` sent when bit 3
    is set."""
    carrier = (sel >> 4) & 3
    messages = tuple(words) + (None,) * (_SEGMENTS - len(words))
    want = link.accepted % 511 + 1  # the wire sequence number the receiver expects
    if carrier == 1:
        return DLFlit(FlitOp.EXPLICIT, flit_seq=want, tl=bytes(64), messages=messages).encode()
    if carrier == 2:
        return DLFlit(FlitOp.REPLAY_REQUEST, ack_req_seq=1, messages=messages).encode()
    if carrier == 3:  # ahead of the expected number: dropped as a gap
        return DLFlit(FlitOp.EXPLICIT, flit_seq=want % 511 + 1, tl=bytes(64),
                      messages=messages).encode()
    ack = (link.next_seq - 2) % 511 + 1 if sel & 0x08 and link.in_flight else 0
    return DLFlit(FlitOp.ACK, ack_req_seq=ack, messages=messages).encode()


def run_link(script: bytes) -> None:
    """Play the script against one link end (module docstring) and check its oracles."""
    entries = script_words(script)
    for _, word in entries:
        raw = word.to_bytes(4, "big")
        try:
            message = decode_message(raw)
        except DecodeError:
            continue
        if encode_message(message) != raw:
            raise AssertionError(f"{raw.hex()} decodes to {message} which encodes differently")
    link = DataLink(DLConfig(replay_timeout=16, max_replays=2))
    end = LinkManager(link, LinkStateConfig(retrain_slots=8, request_interval=2, idle_after=4,
                      start_up=not (script[:1] or b"\0")[0] & 0x08))
    link.send([bytes(64)] * (len(entries) % 4))  # its own data: paced once a TL rate arrives
    received: list[object] = []
    reported: list[bytes] = []
    now = 0.0

    def step(flit: bytes | None) -> None:
        nonlocal now
        now += 1
        if flit is not None:
            events = link.receive(flit, now)
            end.on_events(events, now)
            received.extend(e.message for e in events if isinstance(e, DLMessageReceived))
            reported.extend(e.data for e in events if isinstance(e, UartReceived))
        deadline = end.next_timer()
        if deadline is not None and deadline <= now:
            reported.extend(e.data for e in end.run_timer(now) if isinstance(e, UartReceived))
        end.poll(now, waiting=True)

    if not end.state.carries_data:
        end.start(now)
    for sel, words in flits(entries, link):
        step(build(sel, words, link))
    for _ in range(96):  # long enough for replays, a retrain, a fault or idle probes
        step(None)
    uart = [m.data for m in received if isinstance(m, UartData) and m.data]
    if reported != uart:
        raise AssertionError(f"UART stream {reported} but messages carried {uart}")
    rates = [m.rate for m in received if isinstance(m, TLRateNotification)]
    if rates and link.tx_rate != rates[-1]:
        raise AssertionError(f"pacing rate {link.tx_rate} after TL rate {rates[-1]}")


def _entry(message: object, sel: int) -> bytes:
    return bytes([sel]) + encode_message(message)  # type: ignore[arg-type]


#: Valid words, one per message class and type (raw-mode seeds).
SEEDS = [encode_message(m) for m in (
    NoOp(), TLRateNotification(63), TLRateNotification(255), DeviceId(False, 0),
    DeviceId(True, 0x1234), PortNumber(True, 7), ChannelNegotiation(ChannelCommand.REQUEST_ONLINE),
    ChannelNegotiation(ChannelCommand.ACK), ChannelNegotiation(ChannelCommand.NAK),
    UartData(b""), UartData(b"A"), UartData(b"hi"), VendorMessage(5, 0x12345),
)] + [bytes.fromhex("00000100"), bytes.fromhex("00000001"), bytes.fromhex("000000fc")]

#: Structured-mode seeds: a down end trained by the peer's request and ACK; a UART
#: stream and a TL rate on the reliable path; vendor and unknown words; a peer that
#: acknowledges this end's data (the end goes idle and probes); every carrier.
SCRIPTS = [
    _entry(ChannelNegotiation(ChannelCommand.REQUEST_ONLINE), 0x84 | 0x40 | 0x08)
    + _entry(ChannelNegotiation(ChannelCommand.ACK), 0x84 | 0x40)
    + _entry(UartData(b"ok"), 0x95 | 0x40),
    _entry(UartData(b"he"), 0x95) + _entry(UartData(b"ll"), 0x95)
    + _entry(UartData(b"o"), 0x95 | 0x40) + _entry(TLRateNotification(31), 0x91 | 0x40)
    + _entry(NoOp(), 0x80 | 0x40),
    _entry(VendorMessage(3, 0x7FFFFF), 0x86) + _entry(DeviceId(False, 0), 0x82)
    + _entry(PortNumber(False, 0), 0x83) + bytes([0x07]) + bytes.fromhex("ffffffff")
    + bytes([0x47]) + bytes.fromhex("00000101"),
    _entry(TLRateNotification(127), 0x81 | 0x40) + _entry(NoOp(), 0x80)
    + _entry(NoOp(), 0x88 | 0x40),
    _entry(TLRateNotification(0), 0xA1 | 0x40) + _entry(UartData(b"x"), 0xB5 | 0x40)
    + _entry(ChannelNegotiation(ChannelCommand.REQUEST_OFFLINE), 0x84 | 0x40),
]
CORPUS = [b"\x01" + s for s in SCRIPTS] + [b"\x01\x8c" + SCRIPTS[0][1:]]
#: Dictionary entries (added to the DL ones by ``make_corpus.py``): each seed word as a
#: repaired script entry and the selector bytes.
DICT = {
    **{f"word_{i}": s for i, s in enumerate(SEEDS)},
    **{f"select_{k}": bytes([0x80 | k]) for k in range(8)},
    "select_data_flit_end": b"\xd0", "select_gap_flit_end": b"\xf0",
}


def TestOneInput(data: bytes) -> None:
    """Raw: the decoder may raise only DecodeError. Structured: nothing may raise."""
    if data and data[0] & 1 and not RAW_ONLY:
        run_link(data[1:])
        return
    word = data[1:]
    with contextlib.suppress(DecodeError):
        decode_message(word)
    if len(word) != 4:
        with contextlib.suppress(DecodeError):
            decode_message(int.from_bytes(word[:8], "big"))


if __name__ == "__main__":
    main(TestOneInput)
