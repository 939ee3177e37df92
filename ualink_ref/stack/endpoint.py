"""The whole stack in one sans-IO object: UPLI calls in, wire bytes out.

An :class:`Endpoint` stacks a :class:`~ualink_ref.tl.TransactionLayer`
(originator and memory target), a :class:`~ualink_ref.dl.DataLink` (640-byte
flits, CRC, go-back-N replay) and the PHY's flit <-> codeword mapping
(:func:`~ualink_ref.phy.encode_flits` / :func:`~ualink_ref.phy.decode_flits`,
mode ``fec`` ``"kp4"``, ``"ll"`` or ``"none"``)::

    ep = Endpoint(1)                       # accelerator 1, KP4 FEC
    tag = ep.write(2, 0x1000, b"\\x00" * 64)
    wire = ep.poll(now)                    # 680 bytes for the peer, or None
    events = ep.receive(wire_from_peer, now)   # [FecDecoded, DL events, Completion, ...]

Rules:

* ``poll(now)`` first runs the DL replay timer, then moves TL flits into the
  DL while the DL holds fewer than ``tl_backlog`` unpacked TL flits (so a
  stalled link pushes back on the TL, which queues operations), then returns
  the next DL flit encoded for the wire, or ``None`` in an idle slot.
* ``receive(data, now)`` FEC-decodes whole flits (a flit whose codewords are
  uncorrectable is passed up as received: the DL CRC rejects it and asks for
  a replay), gives them to the DL, and the TL flits the DL delivers — in
  order, exactly once — to the TL. It returns the events, in order: one
  :class:`FecDecoded` for the chunk, then each DL event
  (:class:`~ualink_ref.dl.TLFlitDelivered` included) followed by the
  :class:`Completion` s the TL produced for it. This is the stack-wide
  convention: ``poll`` gives bytes, ``receive`` gives events.
* ``poll_many`` / ``receive`` with several flits batch the FEC work (numpy),
  which is how :class:`~ualink_ref.stack.harness.Network` drives it: an
  endpoint is one harness port.
* ``now`` counts flit slots (the DL's replay timeout is in the same unit).
* Link states (``ualink_ref.dl.linkstate``, specs/dl.md section 8): a
  :class:`~ualink_ref.dl.linkstate.LinkManager` runs the DL. ``RetrainNeeded``
  starts a retrain of ``retrain_slots``; the replay buffer is kept, so no TL
  flit is lost or duplicated. After ``max_retrains`` trainings without
  progress the link is in fault: every queued and outstanding operation
  completes with ``fault_status`` (default ``DATA_ERROR``), and so does every
  operation issued later. Events that arise outside ``receive`` (timer-driven
  state changes, those completions) wait in :meth:`drain_events`.
* DL messages that act: ``uart_send(bytes)`` (the peer reports
  :class:`~ualink_ref.dl.linkstate.UartReceived`), ``notify_rate(rate)``
  (the peer paces its data), ``send_vendor(message)`` (passed up as a
  ``DLMessageReceived``). Reliable messages need a data flit to ride in:
  when the TL has nothing to send, a NOP TL flit (all zero) carries them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ualink_ref.dl import (
    CrcErrorDetected,
    DataLink,
    DLEvent,
    MalformedFlit,
    ReplayStarted,
    RetrainNeeded,
    SequenceGap,
    TLFlitDelivered,
)
from ualink_ref.dl.linkstate import (
    LinkEvent,
    LinkManager,
    LinkState,
    LinkStateChanged,
    UartReceived,
)
from ualink_ref.dl.messages import VendorMessage
from ualink_ref.errors import TruncatedError
from ualink_ref.phy import MODES, decode_flits, encode_flits
from ualink_ref.sizes import DL_FLIT_BYTES, WIRE_BYTES_PER_FLIT, FecMode, check_fec
from ualink_ref.tl import AtomicOp, CreditConfig, Memory, Status, TransactionLayer
from ualink_ref.tl.transaction import Completion

#: A TL flit of NOP padding only: carries reliable DL messages when the TL is idle.
NOP_TL_FLIT = bytes(64)


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
    """The PHY's receive side as the endpoint runs it: whole flits' worth of ``data``
    FEC-decoded (with ``fec="none"`` the bytes are the flits)."""
    if fec == "none":
        count = len(data) // DL_FLIT_BYTES
        return FecDecoded(bytes(data), (0,) * count, (False,) * count)
    result = decode_flits(data, fec, interleave)
    return FecDecoded(result.flits, tuple(result.corrected.tolist()),
                      tuple(result.uncorrectable.tolist()),
                      int((result.codeword_corrected > 0).sum()),
                      int(result.codeword_uncorrectable.sum()))


#: What :meth:`Endpoint.receive` returns: the chunk's FEC verdict, DL events, completions.
EndpointEvent = FecDecoded | DLEvent | LinkEvent | Completion


@dataclass(frozen=True)
class EndpointCounters:
    """A snapshot of one endpoint's totals (see :attr:`Endpoint.counters`)."""

    wire_bytes_sent: int
    wire_bytes_received: int
    flits_sent: int
    flits_received: int
    tl_flits_sent: int
    tl_flits_received: int
    fec_corrected_symbols: int
    fec_corrected_codewords: int
    fec_corrected_flits: int
    fec_uncorrectable_codewords: int
    fec_uncorrectable_flits: int
    crc_errors: int
    malformed_flits: int
    sequence_gaps: int
    replays: int
    replayed_flits: int
    retrains_needed: int
    credit_stalls: int
    tag_stalls: int


class Endpoint:
    """Accelerator ``acc_id``: TL + DL + PHY, sans-IO (see the module docstring)."""

    def __init__(
        self,
        acc_id: int,
        memory: Memory | None = None,
        *,
        fec: FecMode = "kp4",
        interleave: int = 1,
        credits: CreditConfig | None = None,
        compress: bool = True,
        tl_backlog: int = 20,
        retrain_slots: float = 128,
        max_retrains: int = 3,
        start_up: bool = True,
        fault_status: Status = Status.DATA_ERROR,
        **dl_options: Any,
    ) -> None:
        self.fec: FecMode = check_fec(fec)
        self.wire_bytes_per_flit = WIRE_BYTES_PER_FLIT[fec]
        per_flit = MODES[fec].codewords_per_flit
        if interleave < 1 or per_flit % interleave:
            # Each poll encodes whole flits, so an interleave group must fit in one flit.
            raise ValueError(
                f"interleave {interleave} needs groups of {interleave} codewords; a {fec} flit "
                f"has {per_flit} (use 1, or 2 with ll)"
            )
        self.interleave = interleave
        self.tl = TransactionLayer(acc_id, memory, credits=credits, compress=compress)
        self.dl = DataLink(**dl_options)
        self.link = LinkManager(self.dl, retrain_slots=retrain_slots,
                                max_retrains=max_retrains, start_up=start_up)
        self.fault_status = fault_status
        #: Every UART byte received from the peer, in order.
        self.uart_received = bytearray()
        self._pending: list[EndpointEvent] = []
        self.tl_backlog = tl_backlog
        #: Set to a list to record ``("tl" | "dl" | "wire", bytes)`` for every TL flit
        #: handed to the DL, DL flit polled and wire chunk sent (vectors, debugging).
        self.trace: list[tuple[str, bytes]] | None = None
        self._wire_sent = 0
        self._wire_received = 0
        self._flits_sent = 0
        self._flits_received = 0
        self._corrected_symbols = 0
        self._corrected_flits = 0
        self._corrected_codewords = 0
        self._uncorrectable = 0
        self._uncorrectable_codewords = 0
        self._crc_errors = 0
        self._malformed = 0
        self._gaps = 0
        self._replays = 0
        self._replayed_flits = 0
        self._retrains = 0

    # -- UPLI side (delegated to the TL) -------------------------------------------

    @property
    def acc_id(self) -> int:
        """This endpoint's accelerator ID."""
        return self.tl.acc_id

    @property
    def memory(self) -> Memory:
        """The memory this endpoint serves to its peer."""
        return self.tl.memory

    def read(self, dst: int, addr: int, length: int, **options: int) -> int:
        """Queue a Read (see :meth:`TransactionLayer.read`); return its tag."""
        return self.tl.read(dst, addr, length, **options)

    def write(
        self, dst: int, addr: int, data: bytes, byte_enable: Any = None, **options: Any
    ) -> int:
        """Queue a WriteFull, or a Write with ``byte_enable``; return its tag."""
        return self.tl.write(dst, addr, data, byte_enable, **options)

    def atomic(
        self,
        dst: int,
        addr: int,
        op: AtomicOp | int | str,
        operand: int,
        compare: int | None = None,
        size: int = 8,
        fetch: bool = True,
        **options: int,
    ) -> int:
        """Queue an atomic (see :meth:`TransactionLayer.atomic`); return its tag."""
        return self.tl.atomic(dst, addr, op, operand, compare, size, fetch, **options)

    # -- link state and DL messages -----------------------------------------------

    @property
    def link_state(self) -> LinkState:
        """The state of this end of the link."""
        return self.link.state

    def start_link(self, now: float) -> None:
        """Train a link made with ``start_up=False``."""
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

    def drain_events(self) -> list[EndpointEvent]:
        """Events that arose outside ``receive`` (timers, polls): link state changes,
        and completions failed by a link fault. Each is returned once."""
        out, self._pending = self._pending, []
        return out

    # -- wire side -------------------------------------------------------------------

    def _run_timer(self, now: float) -> None:
        deadline = self.link.next_timer()
        if deadline is not None and now >= deadline:
            self._dl_events(self.link.run_timer(now), self._pending, now, react=False)

    def _feed(self) -> None:
        dl = self.dl
        tl = self.tl
        limit = self.tl_backlog
        if dl.tx_backlog >= limit or not self.link.state.carries_data:
            return
        batch = []
        for _ in range(limit - dl.tx_backlog):
            flit = tl.poll()
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
        self._run_timer(now)
        link = self.link
        if link.state is LinkState.FAULT and (self.tl.queued or self.tl.outstanding):
            self._pending.extend(self.tl.fail_outstanding(self.fault_status))
        self._feed()
        flit = link.poll(now, waiting=self.tl.busy)
        if link.pending:
            self._pending.extend(link.pending)
            link.pending.clear()
        if flit is not None and self.trace is not None:
            self.trace.append(("dl", flit))
        return flit

    def poll(self, now: float) -> bytes | None:
        """Wire bytes of the DL flit to send in slot ``now``, or ``None``."""
        flit = self._next_dl_flit(now)
        if flit is None:
            return None
        return self._encode(flit, 1)

    def poll_many(self, now: float, max_flits: int) -> tuple[bytes, int]:
        """Up to ``max_flits`` DL flits for slots ``now``, ``now + 1``, ... in one encode.

        Stops at the first idle slot. Returns ``(wire bytes, flit count)``.
        """
        flits = []
        for i in range(max_flits):
            flit = self._next_dl_flit(now + i)
            if flit is None:
                break
            flits.append(flit)
        if not flits:
            return b"", 0
        return self._encode(b"".join(flits), len(flits)), len(flits)

    def _encode(self, flits: bytes, count: int) -> bytes:
        wire = flits if self.fec == "none" else encode_flits(flits, self.fec, self.interleave)
        self._flits_sent += count
        self._wire_sent += len(wire)
        if self.trace is not None:
            self.trace.append(("wire", wire))
        return wire

    def receive(self, data: bytes, now: float) -> list[EndpointEvent]:
        """Take wire bytes of one or more whole DL flits received in slot ``now``;
        return the events they produced (see the module docstring)."""
        per = self.wire_bytes_per_flit
        if not isinstance(data, bytes | bytearray | memoryview) or not data or len(data) % per:
            size = len(data) if isinstance(data, bytes | bytearray | memoryview) else -1
            raise TruncatedError("wire data", f"a whole number of {per}-byte flits", size)
        count = len(data) // per
        self._wire_received += len(data)
        self._flits_received += count
        decoded = decode_wire(data, self.fec, self.interleave)
        flits = decoded.flits
        if decoded.codewords_corrected:
            self._corrected_symbols += sum(decoded.corrected)
            self._corrected_flits += sum(1 for c in decoded.corrected if c)
            self._corrected_codewords += decoded.codewords_corrected
        if decoded.codewords_uncorrectable:
            self._uncorrectable += sum(decoded.uncorrectable)
            self._uncorrectable_codewords += decoded.codewords_uncorrectable
        events: list[EndpointEvent] = [decoded]
        self._run_timer(now)
        dl = self.dl
        for i in range(0, count * DL_FLIT_BYTES, DL_FLIT_BYTES):
            if self.link.state is LinkState.FAULT:
                break  # a link in fault neither sends nor receives (specs/dl.md L5)
            self._dl_events(dl.receive(flits[i : i + DL_FLIT_BYTES], now), events, now)
        return events

    def _dl_events(self, dl_events: list[Any], out: list[EndpointEvent], now: float,
                   react: bool = True) -> None:
        if react:
            self.link.on_events(dl_events, now)
        receive = self.tl.receive
        for event in dl_events:
            out.append(event)
            if type(event) is TLFlitDelivered:
                if self.link.state is LinkState.FAULT:
                    continue  # the TL failed everything: nothing may reach it now
                out.extend(receive(event.data))
            elif type(event) is UartReceived:
                self.uart_received += event.data
            elif type(event) is LinkStateChanged:
                if event.new is LinkState.FAULT:
                    out.extend(self.tl.fail_outstanding(self.fault_status))
            elif isinstance(event, CrcErrorDetected):
                self._crc_errors += 1
            elif isinstance(event, MalformedFlit):
                self._malformed += 1
            elif isinstance(event, SequenceGap):
                self._gaps += 1
            elif isinstance(event, ReplayStarted):
                self._replays += 1
                self._replayed_flits += event.flits
            elif isinstance(event, RetrainNeeded):
                self._retrains += 1

    # -- state -------------------------------------------------------------------------

    @property
    def busy(self) -> bool:
        """True while the TL has work or the DL holds unsent or unacknowledged data."""
        if self.link.state is LinkState.FAULT:
            return bool(self.tl.queued)  # ops issued after the fault are still to fail
        return (self.tl.busy or not self.dl.idle
                or self.link.state is LinkState.TRAINING)

    @property
    def counters(self) -> EndpointCounters:
        """A snapshot of this endpoint's totals."""
        tl = self.tl.counters
        return EndpointCounters(
            wire_bytes_sent=self._wire_sent,
            wire_bytes_received=self._wire_received,
            flits_sent=self._flits_sent,
            flits_received=self._flits_received,
            tl_flits_sent=tl.flits_sent,
            tl_flits_received=tl.flits_received,
            fec_corrected_symbols=self._corrected_symbols,
            fec_corrected_codewords=self._corrected_codewords,
            fec_corrected_flits=self._corrected_flits,
            fec_uncorrectable_codewords=self._uncorrectable_codewords,
            fec_uncorrectable_flits=self._uncorrectable,
            crc_errors=self._crc_errors,
            malformed_flits=self._malformed,
            sequence_gaps=self._gaps,
            replays=self._replays,
            replayed_flits=self._replayed_flits,
            retrains_needed=self._retrains,
            credit_stalls=tl.credit_stalls,
            tag_stalls=tl.tag_stalls,
        )


__all__ = ["Completion", "Endpoint", "EndpointCounters", "EndpointEvent", "FecDecoded",
           "decode_wire"]
