"""One end of a link below the TL: PHY (FEC) + DL, with any 64-byte-flit layer on top.

Both an :class:`~ualink_ref.node.endpoint.Endpoint` (a TransactionLayer on top)
and every port of a :class:`~ualink_ref.node.switch.Switch` (a forwarding agent
on top) are a :class:`LinkEnd`; the wire-side rules live here once:

* ``poll(now)`` first runs the DL replay timer, then moves TL flits from the
  upper layer into the DL while the DL holds fewer than ``tl_backlog`` unpacked
  TL flits (a stalled link pushes back on the upper layer), then returns the
  next DL flit encoded for the wire, or ``None`` in an idle slot.
* ``receive(data, now)`` FEC-decodes whole flits (an uncorrectable flit is
  passed up as received: the DL CRC rejects it and asks for a replay), gives
  them to the DL, and the TL flits the DL delivers — in order, exactly once —
  to the upper layer. It returns one :class:`FecDecoded` for the chunk, then
  each DL event followed by the events the upper layer produced for it.
* ``poll_uncoded`` / ``receive_uncoded`` are ``poll_many`` / ``receive`` without the
  FEC encode and decode, for a harness link that nothing corrupts or observes between
  two ends of the same ``line_code`` (specs/fabric.md F14): the same events (a
  :class:`FecDecoded` with no corrections first) and counters (wire bytes counted as
  the encode would have made them).
* ``schedule_pause(at, paused)`` (priority flow control, specs/fabric.md S8):
  the link's peer pauses or resumes this end from slot ``at``; while paused, no
  TL flit moves from the upper layer into the DL (what the DL already holds still
  goes out, as frames already queued at a MAC do). ``counters.paused_slots``
  counts the polled slots spent paused.
* The upper layer is composed, not inherited: it answers the
  :class:`UpperLayer` protocol, including its own timers and what it reports
  when the link goes to fault.
* ``now`` counts flit slots (the DL's replay timeout is in the same unit).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any, Protocol, runtime_checkable

import numpy as np

from ualink_ref.dl import (
    CrcErrorDetected,
    DataLink,
    MalformedFlit,
    ReplayStarted,
    RetrainNeeded,
    SequenceGap,
    TLFlitDelivered,
)
from ualink_ref.dl.datalink import check_time
from ualink_ref.dl.linkstate import (
    LinkInput,
    LinkManager,
    LinkState,
    LinkStateChanged,
    UartReceived,
)
from ualink_ref.dl.messages import VendorMessage
from ualink_ref.errors import EncodeError, TruncatedError
from ualink_ref.node.config import LinkConfig
from ualink_ref.phy import decode_flits, encode_flits
from ualink_ref.phy.config import PhyConfig
from ualink_ref.sizes import DL_FLIT_BYTES, TL_FLIT_BYTES, WIRE_BYTES_PER_FLIT, FecMode


@dataclass(frozen=True)
class FecDecoded:
    """The PHY's verdict on one received chunk: its DL flits after FEC decoding.

    ``flits`` holds the decoded bytes (640 per flit); ``corrected`` the symbols
    corrected in each flit and ``uncorrectable`` whether any of its codewords
    was beyond repair (with ``fec="none"``: zeros and ``False``).
    """

    flits: bytes
    corrected: tuple[int, ...]
    uncorrectable: tuple[bool, ...]
    codewords_corrected: int = 0
    codewords_uncorrectable: int = 0


def decode_wire(data: bytes, fec: FecMode, interleave: int = 1) -> FecDecoded:
    """The PHY's receive side as a link end runs it: whole flits' worth of ``data``
    FEC-decoded (with ``fec="none"`` the bytes are the flits)."""
    if fec == "none":
        count = len(data) // DL_FLIT_BYTES
        return FecDecoded(bytes(data), (0,) * count, (False,) * count)
    result = decode_flits(data, fec, interleave)
    # count_nonzero, not (x > 0).sum(): the counts are never negative, and a reduction
    # through ndarray.sum costs more than the rest of this wrapper.
    return FecDecoded(result.flits, tuple(result.corrected.tolist()),
                      tuple(result.uncorrectable.tolist()),
                      int(np.count_nonzero(result.codeword_corrected)),
                      int(np.count_nonzero(result.codeword_uncorrectable)))


#: A TL flit of NOP padding only: carries reliable DL messages when the TL is idle.
NOP_TL_FLIT = bytes(TL_FLIT_BYTES)

class UpperLayer(Protocol):
    """What a :class:`LinkEnd` carries: 64-byte TL flits out and in, and the upper
    layer's own timers and fault handling (the link end runs them in its slots)."""

    def poll(self, now: float = 0.0) -> bytes | None:
        """The next TL flit to send, or ``None``."""
        ...

    def receive(self, flit: bytes, now: float = 0.0) -> Sequence[Any]:
        """Take one TL flit (in order, exactly once); return its events."""
        ...

    @property
    def busy(self) -> bool:
        """True while the layer has anything to send or is waiting for anything."""
        ...

    def next_timer(self) -> float | None:
        """The slot of the layer's next deadline, or ``None``."""
        ...

    def run_timer(self, now: float) -> Sequence[Any]:
        """Run the deadlines due at ``now``; return their events."""
        ...

    def link_faulted(self) -> Sequence[Any]:
        """The link is in fault (called at each poll while it is): the events of what
        the layer gives up (specs/dl.md L5)."""
        ...

    @property
    def busy_after_fault(self) -> bool:
        """True while the layer still has work to report on a link in fault."""
        ...


@runtime_checkable
class TimedFaultLayer(Protocol):
    """An upper layer that also takes the slot at which its link went to fault (a
    switch port stamps the answers it makes then with that slot, specs/fabric.md H7:
    the last slot it saw traffic is older)."""

    def link_faulted_at(self, now: float) -> Sequence[Any]:
        """:meth:`UpperLayer.link_faulted`, at slot ``now``."""
        ...


@dataclass
class LinkEndCounters:
    """Running totals of one :class:`LinkEnd` (a copy is returned by ``counters``)."""

    wire_bytes_sent: int = 0
    wire_bytes_received: int = 0
    flits_sent: int = 0
    flits_received: int = 0
    fec_corrected_symbols: int = 0
    fec_corrected_flits: int = 0
    fec_corrected_codewords: int = 0
    fec_uncorrectable_flits: int = 0
    fec_uncorrectable_codewords: int = 0
    crc_errors: int = 0
    malformed_flits: int = 0
    sequence_gaps: int = 0
    replays: int = 0
    replayed_flits: int = 0
    retrains_needed: int = 0
    paused_slots: int = 0


class LinkEnd:
    """PHY + DL under ``upper`` (see the module docstring); a harness port."""

    def __init__(self, upper: UpperLayer, config: LinkConfig | None = None) -> None:
        self.config = config if config is not None else LinkConfig()
        if not isinstance(self.config, LinkConfig):
            raise TypeError(f"config must be a LinkConfig, got {type(config).__name__}")
        self.fec: FecMode = self.config.phy.fec
        self.interleave = self.config.phy.interleave
        self.wire_bytes_per_flit = WIRE_BYTES_PER_FLIT[self.fec]
        self.tl_backlog = self.config.tl_backlog
        self.upper = upper
        self._faulted_at = (upper.link_faulted_at if isinstance(upper, TimedFaultLayer)
                            else None)
        self.dl = DataLink(self.config.dl)
        #: The link state machine beside the DL (``dl/linkstate.py``, specs/dl.md §8).
        self.link = LinkManager(self.dl, self.config.link_state)
        #: Every UART byte received from the peer, in order.
        self.uart_received = bytearray()
        self._pending: list[Any] = []  # events raised outside receive (timers, polls)
        #: Set to a list to record ``("tl" | "dl" | "wire", bytes)`` for every TL flit
        #: handed to the DL, DL flit polled and wire chunk sent (vectors, debugging).
        self.trace: list[tuple[str, bytes]] | None = None
        # ``(time, paused)`` entries scheduled by the peer (priority flow control).
        self._pause_schedule: deque[tuple[float, bool]] = deque()
        self._paused = False
        self._counters = LinkEndCounters()

    # -- wire side -------------------------------------------------------------------

    def _upper_faulted(self, now: float) -> Sequence[Any]:
        """The upper layer's ``link_faulted``, with ``now`` when it takes it."""
        if self._faulted_at is not None:
            return self._faulted_at(now)
        return self.upper.link_faulted()

    def _run_timers(self, now: float) -> None:
        deadline = self.link.next_timer()
        if deadline is not None and now >= deadline:
            self._dl_events(self.link.run_timer(now), self._pending, now, react=False)
        deadline = self.upper.next_timer()
        if deadline is not None and now >= deadline:
            self._pending.extend(self.upper.run_timer(now))

    def _feed(self, now: float) -> None:
        schedule = self._pause_schedule
        while schedule and schedule[0][0] <= now:
            self._paused = schedule.popleft()[1]
        if self._paused:
            self._counters.paused_slots += 1
            return
        dl = self.dl
        limit = self.tl_backlog
        if dl.tx_backlog >= limit or not self.link.state.carries_data:
            return
        poll = self.upper.poll
        batch = []
        for _ in range(limit - dl.tx_backlog):
            flit = poll(now)
            if flit is None:
                break
            batch.append(flit)
        if not batch and dl.reliable_pending and not dl.tx_backlog:
            batch.append(NOP_TL_FLIT)  # carries reliable DL messages (DL rule 9)
        if batch:
            dl.send(batch)
            if self.trace is not None:
                self.trace.extend(("tl", f) for f in batch)

    def _next_dl_flit(self, now: float) -> bytes | None:
        self._run_timers(now)
        link = self.link
        if link.state is LinkState.FAULT:
            self._pending.extend(self._upper_faulted(now))
        self._feed(now)
        flit = link.poll(now, waiting=self.upper.busy)
        self._pending.extend(link.take_events())
        if flit is not None and self.trace is not None:
            self.trace.append(("dl", flit))
        return flit

    def poll(self, now: float) -> bytes | None:
        """Wire bytes of the DL flit to send in slot ``now``, or ``None``."""
        check_time(now)  # before the upper layer sees it (specs/dl.md rule 6)
        flit = self._next_dl_flit(now)
        if flit is None:
            return None
        return self._encode(flit, 1)

    def poll_many(self, now: float, max_flits: int) -> tuple[bytes, int]:
        """Up to ``max_flits`` DL flits for slots ``now``, ``now + 1``, ... in one encode.

        Stops at the first idle slot. Returns ``(wire bytes, flit count)``.
        """
        flits, count = self._poll_flits(now, max_flits)
        if not count:
            return b"", 0
        return self._encode(flits, count), count

    def poll_uncoded(self, now: float, max_flits: int) -> tuple[bytes, int]:
        """:meth:`poll_many` without the FEC encode: the DL flits themselves, for a
        harness whose link carries them to a peer with the same :attr:`line_code` over
        no channel and no tap (specs/fabric.md F14). Counters count the wire bytes the
        encode would have made."""
        flits, count = self._poll_flits(now, max_flits)
        if not count:
            return b"", 0
        self._counters.flits_sent += count
        self._counters.wire_bytes_sent += count * self.wire_bytes_per_flit
        if self.trace is not None:
            self.trace.append(("wire", self._wire(flits)))
        return flits, count

    @property
    def line_code(self) -> PhyConfig:
        """How this end codes flits on the wire (FEC mode and interleave): two ends with
        equal line codes decode each other's clean wire bytes to the flits sent."""
        return self.config.phy

    def _poll_flits(self, now: float, max_flits: int) -> tuple[bytes, int]:
        check_time(now)
        if isinstance(max_flits, bool) or not isinstance(max_flits, int) or max_flits < 0:
            raise EncodeError(f"max_flits must be an integer >= 0, got {max_flits!r:.40}")
        flits = []
        for i in range(max_flits):
            flit = self._next_dl_flit(now + i)
            if flit is None:
                break
            flits.append(flit)
        return b"".join(flits), len(flits)

    def _wire(self, flits: bytes) -> bytes:
        return flits if self.fec == "none" else encode_flits(flits, self.fec, self.interleave)

    def _encode(self, flits: bytes, count: int) -> bytes:
        wire = self._wire(flits)
        self._counters.flits_sent += count
        self._counters.wire_bytes_sent += len(wire)
        if self.trace is not None:
            self.trace.append(("wire", wire))
        return wire

    def receive(self, data: bytes, now: float) -> list[Any]:
        """Take wire bytes of one or more whole DL flits received in slot ``now``;
        return the events they produced (see the module docstring)."""
        check_time(now)
        per = self.wire_bytes_per_flit
        if type(data) is not bytes:
            data = _byte_string(data, per)
        if not data or len(data) % per:
            raise TruncatedError("wire data", f"a whole number of {per}-byte flits", len(data))
        return self._receive_decoded(decode_wire(data, self.fec, self.interleave),
                                     len(data) // per, now)

    def receive_uncoded(self, flits: bytes, now: float) -> list[Any]:
        """:meth:`receive` of the DL flits a peer with the same :attr:`line_code` sent by
        :meth:`poll_uncoded` over no channel (specs/fabric.md F14): the decode of a clean
        codeword is its data, so this is ``receive`` of their wire bytes — the same
        events (a :class:`FecDecoded` with no corrections first) and counters."""
        check_time(now)
        if type(flits) is not bytes:
            flits = _byte_string(flits, DL_FLIT_BYTES)
        if not flits or len(flits) % DL_FLIT_BYTES:
            raise TruncatedError("DL flits", f"a whole number of {DL_FLIT_BYTES}-byte flits",
                                 len(flits))
        count = len(flits) // DL_FLIT_BYTES
        return self._receive_decoded(
            FecDecoded(flits, (0,) * count, (False,) * count), count, now)

    def _receive_decoded(self, decoded: FecDecoded, count: int, now: float) -> list[Any]:
        counters = self._counters
        counters.wire_bytes_received += count * self.wire_bytes_per_flit
        counters.flits_received += count
        flits = decoded.flits
        if decoded.codewords_corrected:
            counters.fec_corrected_symbols += sum(decoded.corrected)
            counters.fec_corrected_flits += sum(1 for c in decoded.corrected if c)
            counters.fec_corrected_codewords += decoded.codewords_corrected
        if decoded.codewords_uncorrectable:
            counters.fec_uncorrectable_flits += sum(decoded.uncorrectable)
            counters.fec_uncorrectable_codewords += decoded.codewords_uncorrectable
        events: list[Any] = [decoded]
        self._run_timers(now)
        dl = self.dl
        for i in range(0, count * DL_FLIT_BYTES, DL_FLIT_BYTES):
            if self.link.state is LinkState.FAULT:
                break  # a link in fault neither sends nor receives (specs/dl.md L5)
            self._dl_events(dl.receive(flits[i : i + DL_FLIT_BYTES], now), events, now)
        return events

    def _dl_events(self, dl_events: list[Any], out: list[Any], now: float,
                   react: bool = True) -> None:
        if react:
            self.link.on_events(dl_events, now)
        receive = self.upper.receive
        # Read once: the reactions above have run, and nothing below changes the state.
        faulted = self.link.state is LinkState.FAULT
        counters = self._counters
        for event in dl_events:
            out.append(event)
            if type(event) is TLFlitDelivered:
                if faulted:
                    continue  # the layer above failed everything: nothing may reach it now
                events = receive(event.data, now)
                if events:
                    out.extend(events)
            elif type(event) is UartReceived:
                self.uart_received += event.data
            elif type(event) is LinkStateChanged:
                if event.new is LinkState.FAULT:
                    out.extend(self._upper_faulted(now))
            elif isinstance(event, CrcErrorDetected):
                counters.crc_errors += 1
            elif isinstance(event, MalformedFlit):
                counters.malformed_flits += 1
            elif isinstance(event, SequenceGap):
                counters.sequence_gaps += 1
            elif isinstance(event, ReplayStarted):
                counters.replays += 1
                counters.replayed_flits += event.flits
            elif isinstance(event, RetrainNeeded):
                counters.retrains_needed += 1

    # -- state -------------------------------------------------------------------------

    @property
    def counters(self) -> LinkEndCounters:
        """A copy of this link end's totals."""
        return replace(self._counters)

    @property
    def replays(self) -> int:
        """Go-back-N replays this end has started."""
        return self._counters.replays

    @property
    def busy(self) -> bool:
        """True while the upper layer has work, the DL holds unsent or unacknowledged
        data, or the link is training; on a link in fault, while the upper layer still
        has failures to report."""
        state = self.link.state
        if state is LinkState.FAULT:
            return self.upper.busy_after_fault
        return self.upper.busy or not self.dl.idle or state is LinkState.TRAINING

    # -- flow control from the peer (specs/fabric.md S8) ------------------------------

    def schedule_pause(self, at: float, paused: bool) -> None:
        """The peer pauses (``paused``) or resumes this end's TL from slot ``at`` on;
        entries arrive in time order."""
        self._pause_schedule.append((at, paused))

    @property
    def paused(self) -> bool:
        """True while the peer holds this end paused (as of the last poll)."""
        return self._paused

    # -- link state and DL messages -----------------------------------------------

    @property
    def link_state(self) -> LinkState:
        """The state of this end of the link."""
        return self.link.state

    def fail(self, reason: str, now: float) -> None:
        """Take the link to ``fault`` now from any state — ``down``, ``training``, ``up``
        or ``idle`` (specs/dl.md L11) — as an exhausted retrain would (L5): its owner
        gave up on it (a switch faulting a port, specs/fabric.md H7). The peer, no
        longer answered, faults in bounded time (L5, L10). The events wait in
        :meth:`drain_events`."""
        self._dl_events(self.link.handle(LinkInput.FAULT, now, reason),
                        self._pending, now, react=False)

    def start_link(self, now: float) -> None:
        """Train a link made with ``LinkStateConfig(start_up=False)``."""
        self._pending.extend(self.link.start(now))

    def uart_send(self, data: bytes) -> None:
        """Send ``data`` (any length) on the UART byte stream to the peer."""
        self.link.uart_send(data)

    def notify_rate(self, rate: int) -> None:
        """Ask the peer to pace its TL data to (rate + 1)/256 of full rate."""
        self.link.notify_rate(rate)

    def send_vendor(self, message: VendorMessage) -> None:
        """Send a vendor-defined DL message (reliably, in order)."""
        self.dl.send_message(message, reliable=True)

    def drain_events(self) -> list[Any]:
        """Events that arose outside ``receive`` (timers, polls): link state changes,
        and what the upper layer reported for them. Each is returned once."""
        out, self._pending = self._pending, []
        return out


def _byte_string(data: object, per: int) -> bytes:
    """``data`` as bytes when it is a buffer of single bytes; else ``TruncatedError``
    (every public entry point raises only ``UALinkError``, whatever it is given)."""
    try:
        view = memoryview(data)  # type: ignore[arg-type]
    except (TypeError, ValueError):  # not a buffer; a released memoryview
        raise TruncatedError("wire data", f"a whole number of {per}-byte flits", -1) from None
    if view.itemsize != 1:
        raise TruncatedError("wire data (bytes)", f"a whole number of {per}-byte flits", -1)
    return view.tobytes()


__all__ = ["FecDecoded", "LinkEnd", "LinkEndCounters", "TimedFaultLayer", "UpperLayer",
           "decode_wire"]
