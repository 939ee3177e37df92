"""A sans-IO UALink switch: N ports, each a full PHY + DL link end, forwarding TL fields.

The rules are S1-S9 in specs/fabric.md, each with its provenance. The switch is
composed: each port is a :class:`~ualink_ref.node.linkend.LinkEnd` whose upper layer
is a :class:`SwitchPort` (the forwarding agent: ingress framing, address cache and
credits, S1-S4), which owns an :class:`~ualink_ref.node.arbiter.Arbiter` for its
egress (S5, S6) and, with PFC, a :class:`~ualink_ref.node.pause.PauseControl` (S8);
with multicast groups the switch has a :class:`~ualink_ref.node.multicast.MulticastEngine`
(S9).
The :class:`Switch` routes between ports (S2) and holds their latency (S7).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from ualink_ref.errors import AddressCacheError, ConfigError, MisroutedError, UnsupportedError
from ualink_ref.node.arbiter import CREDIT_CLASSES, REQUEST, RESPONSE, Arbiter, Packet, Routed
from ualink_ref.node.config import PfcConfig, SwitchConfig
from ualink_ref.node.linkend import LinkEnd
from ualink_ref.node.multicast import MulticastEngine
from ualink_ref.node.pause import Pausable, PauseControl
from ualink_ref.sizes import TL_HALF_BYTES
from ualink_ref.tl import codec, credits
from ualink_ref.tl.framing import PendingField, TLDeframer, pad_control_half
from ualink_ref.tl.transaction import CreditBooks
from ualink_ref.tl.upli import Command, Status, request_data_credits

_ZERO_HALF = bytes(TL_HALF_BYTES)


@dataclass
class SwitchPortStats:
    """Totals of one switch port (a copy is returned by ``SwitchPort.stats``)."""

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


class SwitchPort:
    """The TL forwarding agent of switch port ``index``: the upper layer of its link end
    (:class:`~ualink_ref.node.linkend.UpperLayer`)."""

    def __init__(self, switch: Switch, index: int, ports: int, buffer: credits.CreditConfig,
                 pfc: PfcConfig | None) -> None:
        self.switch = switch
        self.index = index
        #: What this ingress grants its peer (S4), and what the peer granted this egress.
        self.rx_credits = credits.ReceiverCredits(buffer)
        self.tx_credits = credits.SenderCredits()
        self.arbiter = Arbiter(ports)
        self.pause = PauseControl(pfc) if pfc is not None else None
        self._stats = SwitchPortStats()
        self._deframer = TLDeframer()
        self._rx_ways: list[codec.Request | None] = [None] * 4
        self._tx_data: deque[bytes] = deque()

    # -- ingress (S1-S4) ---------------------------------------------------------------

    def receive(self, flit: bytes, now: float = 0.0) -> list[Any]:
        """Take one TL flit from this port's accelerator; return no events."""
        feed = self._deframer.feed_half
        for half in (flit[:TL_HALF_BYTES], flit[TL_HALF_BYTES:]):
            started, done = feed(half)
            for pending in started:
                pending.context = self._on_field(pending.value, now)
            for pending in done:
                if pending.context is not None:
                    self._forward(pending, now)
        return []

    def _on_field(self, value: codec.TLField | None,
                  now: float) -> tuple[Routed, int, int] | None:
        rx = self.rx_credits
        if isinstance(value, codec.CompressedRequest):
            value = self._expand(value)
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
            return None
        else:
            return None
        self._stats.fields_in += 1
        self._note_occupancy(now)
        return value, source, data_credits

    def _expand(self, value: codec.CompressedRequest) -> codec.Request:
        """S3: a compressed request with this port's address cache way filled in."""
        way = self._rx_ways[value.cway]
        if way is None:
            raise AddressCacheError(value.cway)
        return codec.Request(
            cmd=value.cmd, vchan=value.vchan, asi=way.asi, tag=value.tag, pool=value.pool,
            attr=value.attr, len=value.len, metadata=way.metadata,
            addr=(way.addr & ~0xFFFFFF) | value.addr_lo, src_acc=way.src_acc,
            dst_acc=way.dst_acc, cload=0, cway=value.cway, numbeats=value.numbeats)

    def _forward(self, pending: PendingField, now: float) -> None:
        value, source, data_credits = pending.context
        self._stats.data_halves_in += len(pending.data)
        switch = self.switch
        engine = switch.multicast
        if engine is not None and engine.is_group(value.dst_acc):  # S9
            if isinstance(value, codec.Request):
                engine.accept(value, pending.data, self.index, source, data_credits, now)
            else:
                engine.absorb(value, pending.data, self.index, source, data_credits, now)
            return
        out = switch.egress_of(value.dst_acc)
        if out is None:
            if isinstance(value, codec.Response):
                raise MisroutedError("response", value.dst_acc, -1)
            # S2: answer an unroutable request here (no buffer beyond the request's).
            self._stats.unroutable += 1
            self.release(source, REQUEST, data_credits, now)
            rd_wr = 0 if value.cmd in (Command.READ, Command.ATOMIC_R) else 1
            reply = codec.Response(
                vchan=value.vchan, tag=value.tag, pool=0, len=0, offset=0,
                status=int(Status.UNSUPPORTED_REQUEST), rd_wr=rd_wr, last=1,
                src_acc=value.dst_acc, dst_acc=value.src_acc)
            # Held as a response from this port to itself, with no ingress credits.
            self.arbiter.enqueue(Packet(value=reply, halves=[], ingress=self.index, source=-1,
                                        data_credits=0, ready=now))
            return
        switch.forward(out, Packet(value=value, halves=pending.data, ingress=self.index,
                                   source=source, data_credits=data_credits,
                                   ready=now + switch.config.latency))

    def _occupied(self) -> tuple[int, int]:
        occ = self.rx_credits.occupied
        data = sum(row[credits.REQ_DATA] + row[credits.RSP_DATA] for row in occ)
        cmd = sum(row[credits.REQ_CMD] + row[credits.RSP_CMD] for row in occ)
        return data, cmd

    def _note_occupancy(self, now: float) -> None:
        data, cmd = self._occupied()
        stats = self._stats
        stats.peak_data_buffers = max(stats.peak_data_buffers, data)
        stats.peak_cmd_buffers = max(stats.peak_cmd_buffers, cmd)
        if self.pause is not None:
            self.pause.after_arrival(data + cmd, now)

    def release(self, source: int, cls: int, data_credits: int, now: float) -> None:
        """A field that arrived here left the switch at ``now``: free its ingress
        buffers, owed back to the peer as credits (S4), and resume a pause (S8)."""
        cmd_cls, data_cls = CREDIT_CLASSES[cls]
        self.rx_credits.free(source, cmd_cls, data_cls, data_credits)
        if self.pause is not None and self.pause.paused:
            data, cmd = self._occupied()
            self.pause.after_release(data + cmd, now)

    # -- egress (S4-S6) ----------------------------------------------------------------

    def enqueue(self, packet: Packet) -> None:
        """Queue ``packet`` for this egress."""
        self.arbiter.enqueue(packet)

    def poll(self, now: float = 0.0) -> bytes | None:
        """The next TL flit for this port's accelerator, or ``None``."""
        first = self._tx_data.popleft() if self._tx_data else self._control_half(now)
        if first is None:
            return None
        second = self._tx_data.popleft() if self._tx_data else self._control_half(now)
        self._stats.tl_flits_out += 1
        return first + (second if second is not None else _ZERO_HALF)

    def _control_half(self, now: float) -> bytes | None:
        room = 8
        parts: list[bytes] = []
        rx = self.rx_credits
        if rx.urgent:
            room -= self._emit_returns(parts, room)
        if self.arbiter.queued:
            for cls in (RESPONSE, REQUEST):
                room = self.arbiter.arbitrate(
                    cls, room, now, self.tx_credits,
                    lambda packet, source: self._send(packet, source, parts, now),
                    self._count_stall)
        if rx.owed_any and room:
            room -= self._emit_returns(parts, room)
        return pad_control_half(parts, room)

    def _count_stall(self) -> None:
        self._stats.egress_credit_stalls += 1

    def _send(self, packet: Packet, source: int, parts: list[bytes], now: float) -> None:
        """Pack the field of ``packet`` (egress always uncompressed, S3), queue its data,
        and release what it held at its ingress."""
        pool = 1 if source == credits.POOL else 0
        value = packet.value
        if isinstance(value, codec.Request):
            value = value._replace(pool=pool, cload=0, cway=0)
        else:
            value = value._replace(pool=pool)
        parts.append(codec.pack_field(value))
        self._tx_data.extend(packet.halves)
        stats = self._stats
        stats.fields_out += 1
        if packet.halves:
            stats.data_halves_out += len(packet.halves)
            if stats.first_data_out < 0:
                stats.first_data_out = now
            stats.last_data_out = now
        if packet.source >= 0 and (packet.copies is None or packet.copies.one_sent()):
            self.switch.release(packet.ingress, packet.source, packet.queue_class,
                                packet.data_credits, now)

    def _emit_returns(self, parts: list[bytes], room: int) -> int:
        returns = self.rx_credits.take_returns(room)
        for source, (req_cmd, rsp_cmd, req_data, rsp_data) in returns:
            value = (codec.FlowControl(req_cmd=req_cmd, rsp_cmd=rsp_cmd, req_data=req_data,
                                       rsp_data=rsp_data) if source == credits.POOL
                     else codec.VcFlowControl(vchan=source, req_cmd=req_cmd, rsp_cmd=rsp_cmd,
                                              req_data=req_data, rsp_data=rsp_data))
            parts.append(codec.pack_field(value))
        return len(returns)

    # -- the upper-layer protocol ----------------------------------------------------

    @property
    def busy(self) -> bool:
        """True while packets wait for this egress, data is owed, or a field is incomplete."""
        return bool(self.arbiter.queued or self._tx_data or self._deframer.pending)

    def next_timer(self) -> float | None:
        """A switch port has no deadlines of its own."""
        return None

    def run_timer(self, now: float) -> list[Any]:
        """Nothing to run (see :meth:`next_timer`)."""
        return []

    def link_faulted(self) -> list[Any]:
        """A switch port reports nothing when its link faults."""
        return []

    @property
    def busy_after_fault(self) -> bool:
        """Nothing to report on a link in fault."""
        return False

    @property
    def stats(self) -> SwitchPortStats:
        """A copy of this port's totals."""
        if self.pause is None:
            return replace(self._stats)
        return replace(self._stats, pauses=self.pause.pauses, pause_slots=self.pause.pause_slots,
                       headroom_exceeded=self.pause.headroom_exceeded)

    def urge_credit_return(self) -> bool:
        """Return every credit this ingress owes at the next flit (a pod draining its
        books, specs/fabric.md F7); True if any were owed."""
        return self.rx_credits.urge()

    def credit_books(self) -> CreditBooks:
        """This port's credit books as a frozen snapshot: ``sender`` what its accelerator
        granted this egress, ``receiver`` what this ingress granted it (S4)."""
        return CreditBooks(self.tx_credits.snapshot(), self.rx_credits.snapshot())

    @property
    def occupied_buffers(self) -> int:
        """Ingress buffers (command + data) occupied."""
        return sum(sum(row) for row in self.rx_credits.occupied)


class Switch:
    """A switch of ``config.ports`` ports; ``route`` maps accelerator ID -> port (S2).

    ``port(i)`` is the harness port (link end) of link ``i``; ``agents[i]`` its
    forwarding agent.
    """

    def __init__(self, config: SwitchConfig, route: Mapping[int, int]) -> None:
        if not isinstance(config, SwitchConfig):
            raise TypeError(f"config must be a SwitchConfig, got {type(config).__name__}")
        self.config = config
        bad = {i: p for i, p in route.items()
               if isinstance(p, bool) or not isinstance(p, int) or not 0 <= p < config.ports}
        if bad:
            raise ConfigError("route", f"routes to ports that do not exist: {bad}")
        self._route = dict(route)
        taken = [g.group for g in config.multicast if g.group in self._route]
        if taken:
            raise ConfigError("multicast", f"group IDs {taken} are routed to ports: a group "
                                           "needs an ID no accelerator has")
        self.agents = [SwitchPort(self, i, config.ports, config.buffer, config.pfc)
                       for i in range(config.ports)]
        self.ports = [LinkEnd(agent, config.link) for agent in self.agents]
        #: The multicast engine (S9), or ``None`` for a switch without multicast groups.
        self.multicast = (MulticastEngine(self, config.multicast, config.multicast_ops)
                          if config.multicast else None)

    def port(self, index: int) -> LinkEnd:
        """The harness port of link ``index``."""
        return self.ports[index]

    def egress_of(self, acc_id: int) -> int | None:
        """The port that reaches accelerator ``acc_id``, or ``None`` (S2)."""
        return self._route.get(acc_id)

    def forward(self, egress: int, packet: Packet) -> None:
        """Queue ``packet`` for port ``egress``."""
        self.agents[egress].enqueue(packet)

    def release(self, ingress: int, source: int, cls: int, data_credits: int,
                now: float) -> None:
        """A packet from port ``ingress`` left: free what it held there."""
        self.agents[ingress].release(source, cls, data_credits, now)

    def connect_pause_peer(self, index: int, peer: Pausable) -> None:
        """With PFC: the link end that port ``index``'s pauses reach (its accelerator's)."""
        pause = self.agents[index].pause
        if pause is None:
            raise ConfigError("pfc", "this switch runs without PFC: no pause peer to connect")
        pause.peer = peer

    @property
    def stats(self) -> list[SwitchPortStats]:
        """Per-port totals."""
        return [a.stats for a in self.agents]

    @property
    def held(self) -> int:
        """Fields and multicast operations held in the switch (0 once drained: no leak)."""
        held = sum(a.arbiter.queued for a in self.agents)
        return held + (self.multicast.held if self.multicast is not None else 0)

    def occupied_buffers(self) -> int:
        """Ingress buffers (command + data) still occupied over every port."""
        return sum(a.occupied_buffers for a in self.agents)


__all__ = ["Switch", "SwitchPort", "SwitchPortStats"]
