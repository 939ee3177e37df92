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

Its behaviour is stated once, in the specs it cites: the wire side is the
:class:`~ualink_ref.node.linkend.LinkEnd`'s (specs/tl.md, "The full stack"); a peer's
bad field is dropped on its own and reported, and a stream the TL cannot follow fails
it (specs/tl.md rules E1-E7, :attr:`Endpoint.failed`); link states and what a fault
does to the operations (specs/dl.md section 8, L5; ``TLConfig.fault_status``); DL
messages that act (``uart_send``, ``notify_rate``, ``send_vendor``; specs/dl.md rule 9
and L7-L9). Events that arise outside ``receive`` (timer-driven state changes, the
completions they cause, the TL's completion timeouts) wait in :meth:`drain_events`.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Concatenate, ParamSpec, TypeVar

from ualink_ref.dl import DataLink, DLEvent
from ualink_ref.dl.linkstate import LinkEvent, LinkManager, LinkState
from ualink_ref.dl.messages import VendorMessage
from ualink_ref.node.config import EndpointConfig
from ualink_ref.node.linkend import FecDecoded, LinkEnd
from ualink_ref.phy.config import PhyConfig
from ualink_ref.sizes import FecMode
from ualink_ref.tl import Memory, TransactionLayer
from ualink_ref.tl.events import Completion, FieldRejected, LateResponse, LinkFailed
from ualink_ref.tl.transaction import CreditBooks

#: What :meth:`Endpoint.receive` returns: the chunk's FEC verdict, DL events, completions.
EndpointEvent = (FecDecoded | DLEvent | LinkEvent | Completion | FieldRejected | LinkFailed
                 | LateResponse)


_P = ParamSpec("_P")
_R = TypeVar("_R")


def _on_tl(method: Callable[Concatenate[TransactionLayer, _P], _R]) -> Callable[
        Concatenate[Endpoint, _P], _R]:
    """An :class:`Endpoint` method that calls the same-named method of the endpoint's
    ``tl`` (looked up there, so whatever its class does runs), with the TL method's
    signature and docstring (UPLI calls are the TL's)."""
    name = method.__name__

    def on_tl(self: Endpoint, /, *args: _P.args, **kwargs: _P.kwargs) -> _R:
        result: _R = getattr(self.tl, name)(*args, **kwargs)
        return result

    functools.update_wrapper(on_tl, method)
    on_tl.__qualname__ = f"Endpoint.{name}"
    on_tl.__module__ = __name__
    return on_tl


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
    tl_fields_rejected: int = 0


class Endpoint:
    """Accelerator ``acc_id``: TL + DL + PHY, sans-IO (see the module docstring).

    It *has* a :class:`~ualink_ref.node.linkend.LinkEnd` (``link_end``: the PHY and
    DL side) carrying ``tl``, the TransactionLayer; ``config`` sets both.
    """

    def __init__(self, acc_id: int, memory: Memory | None = None, *,
                 config: EndpointConfig | None = None) -> None:
        self.config = config if config is not None else EndpointConfig()
        if not isinstance(self.config, EndpointConfig):
            raise TypeError(f"config must be an EndpointConfig, got {type(config).__name__}")
        self.tl = TransactionLayer(acc_id, memory, config=self.config.tl)
        self.link_end = LinkEnd(self.tl, self.config.link)

    # -- UPLI side (delegated to the TL) -------------------------------------------

    @property
    def acc_id(self) -> int:
        """This endpoint's accelerator ID."""
        return self.tl.acc_id

    @property
    def memory(self) -> Memory:
        """The memory this endpoint serves to its peer."""
        return self.tl.memory

    # Queue a Read, a write or an atomic on the TL; return its tag. The TL's own methods
    # (signature and docstring), so the two never drift apart.
    read = _on_tl(TransactionLayer.read)
    write = _on_tl(TransactionLayer.write)
    atomic = _on_tl(TransactionLayer.atomic)

    @property
    def failed(self) -> str | None:
        """Why the link failed (the TL could not follow the peer), or ``None``."""
        return self.tl.failed

    # -- wire side (the link end's; a harness port) -------------------------------

    def poll(self, now: float) -> bytes | None:
        """Wire bytes of the DL flit to send in slot ``now``, or ``None``."""
        return self.link_end.poll(now)

    def poll_many(self, now: float, max_flits: int) -> tuple[bytes, int]:
        """Up to ``max_flits`` DL flits from slot ``now`` on, in one encode."""
        return self.link_end.poll_many(now, max_flits)

    def receive(self, data: bytes, now: float) -> list[Any]:
        """Wire bytes of whole DL flits received in slot ``now``; their events."""
        return self.link_end.receive(data, now)

    def poll_uncoded(self, now: float, max_flits: int) -> tuple[bytes, int]:
        """The link end's :meth:`~ualink_ref.node.linkend.LinkEnd.poll_uncoded` (DL flits
        without the FEC encode, specs/fabric.md F14)."""
        return self.link_end.poll_uncoded(now, max_flits)

    def receive_uncoded(self, flits: bytes, now: float) -> list[Any]:
        """The link end's :meth:`~ualink_ref.node.linkend.LinkEnd.receive_uncoded`."""
        return self.link_end.receive_uncoded(flits, now)

    @property
    def line_code(self) -> PhyConfig:
        """The link end's FEC mode and interleave (specs/fabric.md F14)."""
        return self.link_end.line_code

    def drain_events(self) -> list[Any]:
        """Events that arose outside ``receive`` (timers, polls): link state changes,
        completions failed by a link fault or timed out. Each is returned once."""
        return self.link_end.drain_events()

    @property
    def busy(self) -> bool:
        """True while the TL has work or the DL holds unsent or unacknowledged data."""
        return self.link_end.busy

    @property
    def fec(self) -> FecMode:
        """This endpoint's FEC mode."""
        return self.link_end.fec

    @property
    def interleave(self) -> int:
        """This endpoint's FEC symbol interleave."""
        return self.link_end.interleave

    @property
    def wire_bytes_per_flit(self) -> int:
        """Wire bytes of one DL flit in this endpoint's FEC mode."""
        return self.link_end.wire_bytes_per_flit

    @property
    def dl(self) -> DataLink:
        """The link end's DataLink (read its ``counters``, ``idle``, ...)."""
        return self.link_end.dl

    @property
    def link(self) -> LinkManager:
        """The link end's link state machine."""
        return self.link_end.link

    @property
    def trace(self) -> list[tuple[str, bytes]] | None:
        """The link end's trace (see :attr:`~ualink_ref.node.linkend.LinkEnd.trace`)."""
        return self.link_end.trace

    @trace.setter
    def trace(self, value: list[tuple[str, bytes]] | None) -> None:
        self.link_end.trace = value

    @property
    def uart_received(self) -> bytearray:
        """Every UART byte received from the peer, in order."""
        return self.link_end.uart_received

    @property
    def replays(self) -> int:
        """Go-back-N replays this end has started."""
        return self.link_end.replays

    @property
    def link_state(self) -> LinkState:
        """The state of this end of the link."""
        return self.link_end.link_state

    def start_link(self, now: float) -> None:
        """Train a link made with ``LinkStateConfig(start_up=False)``."""
        self.link_end.start_link(now)

    def uart_send(self, data: bytes) -> None:
        """Send ``data`` on the UART byte stream to the peer."""
        self.link_end.uart_send(data)

    def notify_rate(self, rate: int) -> None:
        """Ask the peer to pace its TL data to (rate + 1)/256 of full rate."""
        self.link_end.notify_rate(rate)

    def send_vendor(self, message: VendorMessage) -> None:
        """Send a vendor-defined DL message (reliably, in order)."""
        self.link_end.send_vendor(message)

    @property
    def credits_owed(self) -> bool:
        """True while the TL owes its peer credit returns."""
        return self.tl.credits_owed

    def urge_credit_return(self) -> bool:
        """Have the TL return every credit it owes at its next flit, not waiting for a
        batch (a run closing its books); True if any were owed."""
        return self.tl.urge_credit_return()

    def credit_books(self) -> CreditBooks:
        """The TL's credit books as a frozen snapshot (an audit)."""
        return self.tl.credit_books()

    def schedule_pause(self, at: float, paused: bool) -> None:
        """The switch pauses (or resumes) this endpoint's TL from slot ``at`` (S8)."""
        self.link_end.schedule_pause(at, paused)

    @property
    def paused_slots(self) -> int:
        """Polled slots this endpoint spent paused by its switch (S8)."""
        return self.link_end.counters.paused_slots

    @property
    def counters(self) -> EndpointCounters:
        """A snapshot of this endpoint's totals."""
        link = self.link_end.counters
        tl = self.tl.counters
        return EndpointCounters(
            wire_bytes_sent=link.wire_bytes_sent,
            wire_bytes_received=link.wire_bytes_received,
            flits_sent=link.flits_sent,
            flits_received=link.flits_received,
            tl_flits_sent=tl.flits_sent,
            tl_flits_received=tl.flits_received,
            fec_corrected_symbols=link.fec_corrected_symbols,
            fec_corrected_codewords=link.fec_corrected_codewords,
            fec_corrected_flits=link.fec_corrected_flits,
            fec_uncorrectable_codewords=link.fec_uncorrectable_codewords,
            fec_uncorrectable_flits=link.fec_uncorrectable_flits,
            crc_errors=link.crc_errors,
            malformed_flits=link.malformed_flits,
            sequence_gaps=link.sequence_gaps,
            replays=link.replays,
            replayed_flits=link.replayed_flits,
            retrains_needed=link.retrains_needed,
            credit_stalls=tl.credit_stalls,
            tag_stalls=tl.tag_stalls,
            tl_fields_rejected=tl.fields_rejected,
        )


__all__ = ["Endpoint", "EndpointCounters", "EndpointEvent"]
