"""A sans-IO UALink switch: N ports, each a full PHY + DL link end, forwarding TL fields.

Rules (``specs/fabric.md`` gives each its provenance; numbers match there):

S1. Every port is a :class:`~ualink_ref.node.linkend.LinkEnd` (FEC, CRC, go-back-N
    replay) to one accelerator; its upper layer is a forwarding agent that walks
    the received TL half-flit stream with the one framing walk
    (:class:`~ualink_ref.tl.framing.TLDeframer`).
S2. Routing: a request goes to the port of its ``dst_acc``; a response to the
    port of its ``dst_acc`` (the originator). A request for an ID no port
    reaches is answered by the switch itself with UNSUPPORTED_REQUEST; a
    response for such an ID raises :class:`~ualink_ref.errors.MisroutedError`.
S3. Compression: a compressed request is expanded on ingress with the port's
    own address cache (loaded by ``cload`` requests, exactly as a completer's);
    a compressed response cannot be routed (it names no originator) and raises
    :class:`~ualink_ref.errors.UnsupportedError`; endpoints in a pod therefore
    run with ``compress=False``. Egress always sends uncompressed fields.
S4. Buffers and credits, hop by hop: each ingress port grants its peer its
    buffer space (a :class:`~ualink_ref.tl.credits.CreditConfig`) as TL
    credits; a field holds its credits from arrival until it leaves on the
    egress link, when they are owed back to the ingress peer. Egress spends the
    credits the downstream accelerator granted, never sending without them.
    Nothing is ever dropped.
S5. Queues: one FIFO per (ingress, egress, class, VC) — class being request or
    response — so order per source, destination, class and VC is kept.
S6. Arbitration per egress port: credit returns owed urgently first, then
    responses, then requests (as the TL engine packs, so responses are never
    stuck behind requests); within a class the VCs and, per VC, the ingress
    ports take turns round robin. A queue whose head lacks egress credits or is
    not yet ready is skipped for that turn (its credit stall is counted).
S7. Port-to-port latency: a field becomes eligible for egress ``latency``
    slots after it was received.
S8. Priority flow control (``pfc``): an ingress port whose occupied buffers
    (command + data) reach ``xoff`` pauses its peer's TL (from ``now + delay``)
    and resumes it at ``xon`` or below. The credits it grants are then large
    enough never to bind (the pause is the flow control); the physical buffer
    is ``limit`` and overruns of it are counted, never dropped.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from ualink_ref.errors import AddressCacheError, MisroutedError, UnsupportedError
from ualink_ref.node.linkend import LinkEnd
from ualink_ref.sizes import TL_HALF_BYTES, FecMode
from ualink_ref.tl import codec, credits
from ualink_ref.tl.framing import PendingField, TLDeframer, pad_control_half
from ualink_ref.tl.upli import Command, Status, request_data_credits

_HALF = TL_HALF_BYTES
_ZERO_HALF = bytes(_HALF)
_REQ, _RSP = 0, 1  # queue classes
_CLASSES = ((credits.REQ_CMD, credits.REQ_DATA), (credits.RSP_CMD, credits.RSP_DATA))
#: The fields a switch routes (S2): requests (expanded on ingress, S3) and responses.
_Routed = codec.Request | codec.Response


@dataclass(frozen=True)
class PfcConfig:
    """Pause thresholds of one ingress port, in buffers (command + 64-byte data) occupied.

    ``xoff``: pause the peer when this many data buffers are occupied;
    ``xon``: resume at or below this; ``delay``: slots until the peer obeys
    (the link's one-way latency plus the pause frame's own time); ``limit``:
    the physical buffer — a field that finds more occupied is counted in
    ``SwitchPortStats.headroom_exceeded`` (where Ethernet would drop it).
    """

    xoff: int
    xon: int
    delay: int = 1
    limit: int = 1 << 30

    def __post_init__(self) -> None:
        if not 0 <= self.xon < self.xoff <= self.limit or self.delay < 0:
            raise ValueError(f"PFC needs 0 <= xon < xoff and delay >= 0, got {self}")


class _Packet(NamedTuple):
    """A field held in the switch: what to send on and what it holds at ingress."""

    value: _Routed
    halves: list[bytes]
    ingress: int
    source: int  # ingress credit source (VC or credits.POOL)
    data_credits: int
    ready: float


@dataclass
class SwitchPortStats:
    """Totals of one switch port."""

    fields_in: int = 0
    fields_out: int = 0
    data_halves_out: int = 0
    data_halves_in: int = 0
    first_data_out: float = -1.0
    last_data_out: float = -1.0
    tl_flits_out: int = 0
    egress_credit_stalls: int = 0
    peak_data_buffers: int = 0
    peak_cmd_buffers: int = 0
    pause_slots: float = 0.0
    pauses: int = 0
    unroutable: int = 0
    headroom_exceeded: int = 0


@dataclass
class _Arb:
    """Round-robin state of one egress port: per (class, VC) a ring of ingress ports."""

    rings: list[list[deque[int]]] = field(
        default_factory=lambda: [[deque() for _ in range(credits.NUM_VCS)] for _ in range(2)])
    next_vc: list[int] = field(default_factory=lambda: [0, 0])


class _Agent:
    """The TL forwarding agent of one switch port (the upper layer of its LinkEnd)."""

    def __init__(self, switch: Switch, index: int) -> None:
        self.switch = switch
        self.index = index
        self.rx_credits = credits.ReceiverCredits(switch.buffer)
        self.tx_credits = credits.SenderCredits()
        self.stats = SwitchPortStats()
        self._deframer = TLDeframer()
        self._rx_ways: list[codec.Request | None] = [None] * 4
        self._tx_data: deque[bytes] = deque()
        self._arb = _Arb()
        self._queued = 0  # packets waiting for this egress port
        # Paused since (PFC), per VC: the time the pause was scheduled to begin.
        self._paused_at: list[float | None] = [None] * credits.NUM_VCS
        self._now = 0.0

    # -- ingress -----------------------------------------------------------------------

    def receive(self, flit: bytes, now: float = 0.0) -> list[Any]:
        """Take one TL flit from this port's accelerator; return no events."""
        self._now = now
        self.switch.now_hint = now
        feed = self._deframer.feed_half
        for half in (flit[:_HALF], flit[_HALF:]):
            started, done = feed(half)
            for pending in started:
                pending.context = self._on_field(pending.value)
            for pending in done:
                if pending.context is not None:
                    self._forward(pending, now)
        return []

    def _on_field(self, value: codec.TLField | None) -> tuple[_Routed, int, int] | None:
        rx = self.rx_credits
        if isinstance(value, codec.CompressedRequest):
            way = self._rx_ways[value.cway]
            if way is None:
                raise AddressCacheError(value.cway)
            value = codec.Request(value.cmd, value.vchan, way.asi, value.tag, value.pool,
                                  value.attr, value.len, way.metadata,
                                  (way.addr & ~0xFFFFFF) | value.addr_lo,
                                  way.src_acc, way.dst_acc, 0, value.cway, value.numbeats)
        if isinstance(value, codec.Request):
            if value.cload:
                self._rx_ways[value.cway] = value
            data_credits = request_data_credits(value.cmd, value.numbeats)
            source = credits.POOL if value.pool else value.vchan
            rx.consume(source, credits.REQ_CMD, credits.REQ_DATA, data_credits)
        elif isinstance(value, codec.Response):
            data_credits = value.len + 1 if value.rd_wr == 0 and value.status == Status.OKAY else 0
            source = credits.POOL if value.pool else value.vchan
            rx.consume(source, credits.RSP_CMD, credits.RSP_DATA, data_credits)
        elif isinstance(value, codec.CompressedResponseData | codec.CompressedResponseNoData):
            raise UnsupportedError("compressed responses through a switch (no originator ID)")
        elif isinstance(value, codec.FlowControl | codec.VcFlowControl):
            src = credits.POOL if isinstance(value, codec.FlowControl) else value.vchan
            counts = (value.req_cmd, value.rsp_cmd, value.req_data, value.rsp_data)
            for cls in range(4):
                if counts[cls]:
                    self.tx_credits.grant(src, cls, counts[cls])
            self.switch._credits_granted(self.index)
            return None
        else:
            return None
        self.stats.fields_in += 1
        self._note_occupancy(value.vchan)
        return value, source, data_credits

    def _forward(self, pending: PendingField, now: float) -> None:
        value, source, data_credits = pending.context
        self.stats.data_halves_in += len(pending.data)
        switch = self.switch
        out = switch.route.get(value.dst_acc)
        if out is None:
            if isinstance(value, codec.Response):
                raise MisroutedError("response", value.dst_acc, -1)
            # S2: answer an unroutable request here (no buffer beyond the request's).
            self.stats.unroutable += 1
            self._release(source, _REQ, data_credits, value.vchan)
            rd_wr = 0 if value.cmd in (Command.READ, Command.ATOMIC_R) else 1
            reply = codec.Response(value.vchan, value.tag, 0, 0, 0, int(Status.UNSUPPORTED_REQUEST),
                             rd_wr, 1, value.dst_acc, value.src_acc)
            # Held as a response from this port to itself, with no ingress credits.
            switch._enqueue(self.index, _Packet(reply, [], self.index, -1, 0, now))
            return
        packet = _Packet(value, pending.data, self.index, source, data_credits,
                         now + switch.latency)
        switch._enqueue(out, packet)

    def _note_occupancy(self, vc: int) -> None:
        occ = self.rx_credits.occupied
        data = sum(row[credits.REQ_DATA] + row[credits.RSP_DATA] for row in occ)
        cmd = sum(row[credits.REQ_CMD] + row[credits.RSP_CMD] for row in occ)
        stats = self.stats
        if data > stats.peak_data_buffers:
            stats.peak_data_buffers = data
        if cmd > stats.peak_cmd_buffers:
            stats.peak_cmd_buffers = cmd
        pfc = self.switch.pfc
        if pfc is not None:
            if data + cmd > pfc.limit:
                stats.headroom_exceeded += 1
            if self._paused_at[0] is None and data + cmd >= pfc.xoff:
                self._pause(True)

    def _release(self, source: int, cls: int, data_credits: int, vc: int) -> None:
        cmd_cls, data_cls = _CLASSES[cls]
        self.rx_credits.free(source, cmd_cls, data_cls, data_credits)
        pfc = self.switch.pfc
        if pfc is not None and self._paused_at[0] is not None:
            occ = self.rx_credits.occupied
            if sum(sum(row) for row in occ) <= pfc.xon:
                self._pause(False)

    def _pause(self, on: bool) -> None:
        # One priority class in this model's workloads: every VC pauses together (S8).
        pfc = self.switch.pfc
        assert pfc is not None
        peer = self.switch.pause_peers.get(self.index)
        at = self.switch.now_hint + pfc.delay
        if on:
            self._paused_at[0] = at
            self.stats.pauses += 1
        else:
            started = self._paused_at[0]
            assert started is not None
            self.stats.pause_slots += max(0.0, at - started)
            self._paused_at[0] = None
        if peer is not None:
            peer.pause_schedule.append((at, on))

    # -- egress ------------------------------------------------------------------------

    def poll(self, now: float = 0.0) -> bytes | None:
        """The next TL flit for this port's accelerator, or ``None``."""
        self._now = now
        self.switch.now_hint = now
        first = self._tx_data.popleft() if self._tx_data else self._control_half(now)
        if first is None:
            return None
        second = self._tx_data.popleft() if self._tx_data else self._control_half(now)
        self.stats.tl_flits_out += 1
        return first + (second if second is not None else _ZERO_HALF)

    def _control_half(self, now: float) -> bytes | None:
        room = 8
        parts: list[bytes] = []
        rx = self.rx_credits
        if rx.urgent:
            room -= self._emit_returns(parts, room)
        if self._queued:
            for cls in (_RSP, _REQ):
                room = self._arbitrate(cls, parts, room, now)
        if rx.owed_any and room:
            room -= self._emit_returns(parts, room)
        return pad_control_half(parts, room)

    def _arbitrate(self, cls: int, parts: list[bytes], room: int, now: float) -> int:
        size = 2 if cls == _RSP else 4
        arb = self._arb
        rings = arb.rings[cls]
        queues = self.switch.queues[self.index][cls]
        cmd_cls, data_cls = _CLASSES[cls]
        tx = self.tx_credits
        start = arb.next_vc[cls]
        for k in range(credits.NUM_VCS):
            vc = (start + k) % credits.NUM_VCS
            ring = rings[vc]
            tries = len(ring)
            while tries and room >= size:
                tries -= 1
                ingress = ring[0]
                queue = queues[vc][ingress]
                packet = queue[0]
                if packet.ready > now:
                    ring.rotate(-1)
                    continue
                value = packet.value
                need = (len(packet.halves) // 2) if cls == _RSP else packet.data_credits
                source = tx.take(vc, cmd_cls, data_cls, need)
                if source < 0:
                    self.stats.egress_credit_stalls += 1
                    ring.rotate(-1)
                    continue
                queue.popleft()
                self._queued -= 1
                ring.popleft()
                if queue:
                    ring.append(ingress)  # round robin: this ingress goes to the back
                pool = 1 if source == credits.POOL else 0
                if cls == _REQ:
                    assert isinstance(value, codec.Request)
                    value = value._replace(pool=pool, cload=0, cway=0)
                else:
                    value = value._replace(pool=pool)
                parts.append(codec.pack_field(value))
                room -= size
                self._tx_data.extend(packet.halves)
                stats = self.stats
                stats.fields_out += 1
                if packet.halves:
                    stats.data_halves_out += len(packet.halves)
                    if stats.first_data_out < 0:
                        stats.first_data_out = now
                    stats.last_data_out = now
                if packet.source >= 0:
                    self.switch.agents[packet.ingress]._release(
                        packet.source, cls, packet.data_credits, vc)
            if room < size:
                arb.next_vc[cls] = (vc + 1) % credits.NUM_VCS
                break
        return room

    def _emit_returns(self, parts: list[bytes], room: int) -> int:
        returns = self.rx_credits.take_returns(room)
        for source, counts in returns:
            value = (codec.FlowControl(*counts) if source == credits.POOL
                     else codec.VcFlowControl(source, *counts))
            parts.append(codec.pack_field(value))
        return len(returns)

    @property
    def busy(self) -> bool:
        """True while packets wait for this egress, data is owed, or a field is incomplete."""
        return bool(self._queued or self._tx_data or self._deframer.pending)


class Switch:
    """``ports`` switch ports; ``route`` maps accelerator ID -> port index (S2).

    ``latency``: port-to-port slots (S7); ``buffer``: the credits each ingress
    grants (S4); ``pfc``: pause thresholds (S8) or ``None`` for CBFC only.
    ``port(i)`` is the harness port of link i. ``link_options`` go to each
    :class:`~ualink_ref.node.linkend.LinkEnd` (``fec``, DL options).
    """

    def __init__(
        self,
        ports: int,
        route: Mapping[int, int],
        *,
        latency: int = 0,
        buffer: credits.CreditConfig | None = None,
        pfc: PfcConfig | None = None,
        fec: FecMode = "kp4",
        tl_backlog: int = 10,
        **link_options: Any,
    ) -> None:
        if ports < 1 or latency < 0:
            raise ValueError(f"need ports >= 1 and latency >= 0, got {ports}, {latency}")
        bad = {i: p for i, p in route.items() if not 0 <= p < ports}
        if bad:
            raise ValueError(f"routes to ports that do not exist: {bad}")
        self.route = dict(route)
        self.latency = latency
        self.buffer = buffer or credits.CreditConfig()
        credits.check_config(self.buffer)
        self.pfc = pfc
        self.now_hint = 0.0
        #: Per ingress port: the link end to pause (PFC), set by the pod builder.
        self.pause_peers: dict[int, LinkEnd] = {}
        # queues[egress][class][vc][ingress]
        self.queues: list[list[list[list[deque[_Packet]]]]] = [
            [[[deque() for _ in range(ports)] for _ in range(credits.NUM_VCS)] for _ in range(2)]
            for _ in range(ports)
        ]
        self.agents = [_Agent(self, i) for i in range(ports)]
        self.ports = [LinkEnd(agent, fec=fec, tl_backlog=tl_backlog, **link_options)
                      for agent in self.agents]

    def port(self, index: int) -> LinkEnd:
        """The harness port of link ``index``."""
        return self.ports[index]

    def _enqueue(self, egress: int, packet: _Packet) -> None:
        cls = _RSP if isinstance(packet.value, codec.Response) else _REQ
        vc = packet.value.vchan
        queue = self.queues[egress][cls][vc][packet.ingress]
        if not queue:
            self.agents[egress]._arb.rings[cls][vc].append(packet.ingress)
        queue.append(packet)
        self.agents[egress]._queued += 1

    def _credits_granted(self, index: int) -> None:
        """Hook: credits arrived for egress ``index`` (nothing to do: polls retry)."""

    @property
    def stats(self) -> list[SwitchPortStats]:
        """Per-port totals."""
        return [a.stats for a in self.agents]

    @property
    def held(self) -> int:
        """Fields held in the switch (0 once drained: no buffer leak)."""
        return sum(a._queued for a in self.agents)

    def occupied_buffers(self) -> int:
        """Ingress buffers (command + data) still occupied over every port."""
        return sum(sum(sum(row) for row in a.rx_credits.occupied) for a in self.agents)


__all__ = ["PfcConfig", "Switch", "SwitchPortStats"]
