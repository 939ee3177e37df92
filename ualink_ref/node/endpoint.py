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
  which is how :class:`~ualink_ref.net.harness.Network` drives it: an
  endpoint is one harness port.
* A peer's bad TL field never stops the others: the TL drops it on its own
  and reports a :class:`~ualink_ref.tl.events.FieldRejected` event, which
  ``receive`` passes up in order; the TL flits after it in the same DL flit
  are processed as usual (the DL has acknowledged them, so they could never
  be replayed). When the TL cannot follow the peer's stream any more it
  reports :class:`~ualink_ref.tl.events.LinkFailed`, completes everything
  outstanding with an error, and the endpoint's :attr:`Endpoint.failed` says
  why (``specs/tl.md``, rules E1-E7).
* ``now`` counts flit slots (the DL's replay timeout is in the same unit).
* Link states (``ualink_ref.dl.linkstate``, specs/dl.md section 8): a
  :class:`~ualink_ref.dl.linkstate.LinkManager` runs the DL. ``RetrainNeeded``
  starts a retrain of ``retrain_slots``; the replay buffer is kept, so no TL
  flit is lost or duplicated. After ``max_retrains`` trainings without
  progress the link is in fault: every queued and outstanding operation
  completes with ``fault_status`` (default ``DATA_ERROR``), and so does every
  operation issued later. Events that arise outside ``receive`` (timer-driven
  state changes, those completions, and the TL's completion timeouts) wait in
  :meth:`drain_events`.
* DL messages that act: ``uart_send(bytes)`` (the peer reports
  :class:`~ualink_ref.dl.linkstate.UartReceived`), ``notify_rate(rate)``
  (the peer paces its data), ``send_vendor(message)`` (passed up as a
  ``DLMessageReceived``). Reliable messages need a data flit to ride in:
  when the TL has nothing to send, a NOP TL flit (all zero) carries them.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Concatenate, ParamSpec, TypeVar

from ualink_ref.dl import DLEvent
from ualink_ref.dl.linkstate import LinkEvent, LinkState
from ualink_ref.node.linkend import FecDecoded, LinkEnd, decode_wire
from ualink_ref.sizes import FecMode
from ualink_ref.tl import CreditConfig, Memory, Status, TransactionLayer
from ualink_ref.tl.config import TLConfig
from ualink_ref.tl.events import Completion, FieldRejected, LateResponse, LinkFailed
from ualink_ref.tl.limits import TLLimits

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


class Endpoint(LinkEnd):
    """Accelerator ``acc_id``: TL + DL + PHY, sans-IO (see the module docstring).

    The PHY and DL side is the shared :class:`~ualink_ref.node.linkend.LinkEnd`;
    ``tl`` is the TransactionLayer on top of it.
    """

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
        tl_limits: TLLimits | None = None,
        retrain_slots: float = 128,
        max_retrains: int = 3,
        start_up: bool = True,
        fault_status: Status = Status.DATA_ERROR,
        tl_options: dict[str, Any] | None = None,
        **dl_options: Any,
    ) -> None:
        # ``tl_options``: further TransactionLayer arguments (split, timeout_slots, ...).
        self.tl = TransactionLayer(acc_id, memory, config=TLConfig(
            credits=credits or CreditConfig(), compress=compress, limits=tl_limits or TLLimits(),
            **(tl_options or {})))
        #: The status every operation gets when the link goes to fault (specs/dl.md L5).
        self.fault_status = fault_status
        super().__init__(self.tl, fec=fec, interleave=interleave, tl_backlog=tl_backlog,
                         retrain_slots=retrain_slots, max_retrains=max_retrains,
                         start_up=start_up, **dl_options)

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

    def _run_timer(self, now: float) -> None:
        super()._run_timer(now)
        deadline = self.tl.next_timer()  # the TL's completion timeouts (specs/tl.md T1-T6)
        if deadline is not None and now >= deadline:
            self._pending.extend(self.tl.run_timer(now))

    def _on_fault(self) -> list[Any]:
        """The link went to fault: every queued and outstanding op completes with
        ``fault_status`` (once; ops issued later fail at the next poll)."""
        if self.tl.queued or self.tl.outstanding:
            return list(self.tl.fail_outstanding(self.fault_status))
        return []

    @property
    def busy(self) -> bool:
        """True while the TL has work or the DL holds unsent or unacknowledged data."""
        if self.link.state is LinkState.FAULT:
            return bool(self.tl.queued)  # ops issued after the fault are still to fail
        return super().busy

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
            tl_fields_rejected=tl.fields_rejected,
        )


__all__ = ["Completion", "Endpoint", "EndpointCounters", "EndpointEvent", "FecDecoded",
           "decode_wire"]
