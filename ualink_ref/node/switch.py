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

from ualink_ref.errors import ConfigError, CreditError, DecodeError
from ualink_ref.node.arbiter import CREDIT_CLASSES, REQUEST, RESPONSE, Arbiter, Packet, Routed
from ualink_ref.node.config import PfcConfig, SwitchConfig
from ualink_ref.node.linkend import LinkEnd
from ualink_ref.node.multicast import MulticastEngine
from ualink_ref.node.outstanding import OutstandingTags
from ualink_ref.node.pause import Pausable, PauseControl
from ualink_ref.sizes import TL_HALF_BYTES
from ualink_ref.tl import codec, credits
from ualink_ref.tl.framing import PendingField, TLDeframer, pad_control_half
from ualink_ref.tl.transaction import CreditBooks
from ualink_ref.tl.upli import NUM_TAGS, Command, Status, request_data_credits

_ZERO_HALF = bytes(TL_HALF_BYTES)

#: Answers the switch made itself (S2 unroutable, H7 faulted target) waiting at one
#: egress port, at most (H5): an honest originator has at most ``NUM_TAGS`` requests
#: outstanding, so it never meets the bound.
MAX_LOCAL_REPLIES = NUM_TAGS
#: Data half-flits packed for the egress and not yet sent, at most: one control half of
#: four 4-beat responses (H8).
MAX_TX_HALVES = 32
#: Data half-flits of fields still being received, at most: one control half of eight
#: one-sector compressed responses with data, four beats each (H8).
MAX_RX_HALVES = 64
#: The status the switch answers with for a target whose port has faulted (H7): the one
#: a TL gives its own operations when its link faults (specs/dl.md L5).
FAULT_STATUS = Status.DATA_ERROR


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
    #: Bad input dropped and counted (H1-H5), answers made for a faulted target (H7).
    credit_overruns: int = 0
    grants_rejected: int = 0
    bad_fields: int = 0
    spoofed: int = 0
    misrouted_responses: int = 0
    stray_responses: int = 0
    replies_dropped: int = 0
    to_faulted_dropped: int = 0
    fault_answers: int = 0
    flits_ignored: int = 0


@dataclass(frozen=True)
class PortResources:
    """What one switch port holds (``SwitchPort.resources``) or may hold at most
    (``SwitchPort.limits``), specs/fabric.md H8."""

    queued: int  # packets waiting for this egress
    local_replies: int  # of them, answers the switch made itself
    tx_halves: int  # data half-flits packed for the egress, not yet sent
    rx_halves: int  # data half-flits of fields still being received
    occupied_buffers: int  # ingress buffers (command + data) held


class SwitchPort:
    """The TL forwarding agent of switch port ``index``: the upper layer of its link end
    (:class:`~ualink_ref.node.linkend.UpperLayer`)."""

    def __init__(self, switch: Switch, index: int, buffer: credits.CreditConfig,
                 pfc: PfcConfig | None) -> None:
        self.switch = switch
        self.index = index
        #: What this ingress grants its peer (S4), and what the peer granted this egress.
        self.rx_credits = credits.ReceiverCredits(buffer)
        self.tx_credits = credits.SenderCredits()
        self.arbiter = Arbiter()
        self.pause = PauseControl(pfc) if pfc is not None else None
        self._stats = SwitchPortStats()
        self._deframer = TLDeframer()
        self._rx_ways: list[codec.Request | None] = [None] * 4
        self._tx_data: deque[bytes] = deque()
        self._local = 0  # answers the switch made, queued here (H5)
        self._now = 0.0  # the last slot this port saw (a fault reported without one)
        self._last_progress = 0.0  # the egress watchdog's reference (H6)
        #: Why this port was faulted (H6, H7), or ``None`` while it works.
        self.faulted: str | None = None

    # -- ingress (S1-S4) ---------------------------------------------------------------

    def receive(self, flit: bytes, now: float = 0.0) -> list[Any]:
        """Take one TL flit from this port's accelerator; return no events. Raises for
        nothing the peer sends (H1-H7)."""
        self._now = now
        if self.faulted is not None:
            self._stats.flits_ignored += 1
            return []
        feed = self._deframer.feed_half
        for half in (flit[:TL_HALF_BYTES], flit[TL_HALF_BYTES:]):
            try:
                started, done = feed(half)
            except DecodeError as exc:  # H4: the framing of everything after is lost
                self.fault(f"undecodable control half-flit: {exc}", now)
                return []
            for pending in started:
                pending.context = self._on_field(pending.value, now)
            for pending in done:
                if pending.context is not None:
                    self._forward(pending, now)
        return []

    def _on_field(self, value: codec.TLField | None,
                  now: float) -> tuple[Routed, int, int] | None:
        """A field has started: spend its credits and check it (H1-H3); the context to
        forward it with, or ``None`` when it is not forwarded (its data is then
        skipped by the framing walk)."""
        stats = self._stats
        if isinstance(value, codec.FlowControl | codec.VcFlowControl):
            src = credits.POOL if isinstance(value, codec.FlowControl) else value.vchan
            try:  # H1: a return past the maximum is rejected whole, nothing granted
                self.tx_credits.grant_all(
                    src, (value.req_cmd, value.rsp_cmd, value.req_data, value.rsp_data))
            except CreditError:
                stats.grants_rejected += 1
            return None
        if isinstance(value, codec.Request | codec.CompressedRequest):
            cls = REQUEST
            data_credits = request_data_credits(value.cmd, value.numbeats)
        elif isinstance(value, codec.Response):
            cls = RESPONSE
            data_credits = value.len + 1 if value.rd_wr == 0 and value.status == Status.OKAY else 0
        elif isinstance(value, codec.CompressedResponseData | codec.CompressedResponseNoData):
            cls = RESPONSE
            data_credits = value.len + 1 if isinstance(value, codec.CompressedResponseData) else 0
        else:
            return None  # NOP padding
        cmd_cls, data_cls = CREDIT_CLASSES[cls]
        source = credits.POOL if value.pool else value.vchan
        try:  # H1: a field sent without credits is dropped, consuming nothing
            self.rx_credits.consume(source, cmd_cls, data_cls, data_credits)
        except CreditError:
            stats.credit_overruns += 1
            return None
        routed = self._check(value)
        if routed is None:  # H2, H3: dropped; its buffers are owed back at once
            self.release(source, cls, data_credits, now)
            return None
        stats.fields_in += 1
        self._note_occupancy(now)
        return routed, source, data_credits

    def _check(self, value: codec.TLField) -> Routed | None:
        """The field to forward, or ``None`` (counted) for one the switch drops (H2, H3)."""
        stats = self._stats
        switch = self.switch
        if isinstance(value, codec.CompressedResponseData | codec.CompressedResponseNoData):
            stats.bad_fields += 1  # H2 (S3): names no originator to route it to
            return None
        if isinstance(value, codec.CompressedRequest):
            expanded = self._expand(value)
            if expanded is None:
                stats.bad_fields += 1  # H2: an address-cache way never loaded
                return None
            value = expanded
        assert isinstance(value, codec.Request | codec.Response)
        if switch.egress_of(value.src_acc) != self.index:
            stats.spoofed += 1  # H2: a source ID this port does not reach
            return None
        if isinstance(value, codec.Response):
            engine = switch.multicast
            if engine is not None and engine.is_group(value.dst_acc):
                return value  # the engine checks its own answers (S9)
            if switch.egress_of(value.dst_acc) is None:
                stats.misrouted_responses += 1  # H3
                return None
            if not switch.tags.matches(value):  # the slot is freed when it is forwarded
                stats.stray_responses += 1  # H3: answers no request outstanding here
                return None
            return value
        if value.cload:
            self._rx_ways[value.cway] = value
        return value

    def _expand(self, value: codec.CompressedRequest) -> codec.Request | None:
        """S3: a compressed request with this port's address cache way filled in
        (``None`` for a way never loaded, H2)."""
        way = self._rx_ways[value.cway]
        if way is None:
            return None
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
            assert isinstance(value, codec.Request)  # _check drops misrouted responses
            # S2: answer an unroutable request here (no buffer beyond the request's).
            self._stats.unroutable += 1
            self.release(source, REQUEST, data_credits, now)
            self.answer_locally(error_answer(value, Status.UNSUPPORTED_REQUEST), now)
            return
        if isinstance(value, codec.Response) and not switch.tags.answer(value):
            # H3: the slot went while its data arrived (its target faulted and the switch
            # answered the op, H7, or the originator reused the tag): answered already.
            self._stats.stray_responses += 1
            self.release(source, RESPONSE, data_credits, now)
            return
        switch.forward(out, Packet(value=value, halves=pending.data, ingress=self.index,
                                   source=source, data_credits=data_credits,
                                   ready=now + switch.config.latency), now)

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

    def answer_locally(self, reply: codec.Response, now: float) -> None:
        """Queue an answer the switch made itself for this port's accelerator, holding no
        ingress credits (S2, H7); past ``MAX_LOCAL_REPLIES`` it is dropped, counted (H5)."""
        if self.faulted is not None:
            return  # nothing reaches a faulted port
        if self._local >= MAX_LOCAL_REPLIES:
            self._stats.replies_dropped += 1
            return
        self.enqueue(Packet(value=reply, halves=[], ingress=self.index, source=-1,
                            data_credits=0, ready=now, local=True), now)

    # -- faults (H4, H6, H7) ---------------------------------------------------------

    def fault(self, reason: str, now: float) -> None:
        """Fault this port for good (H7): it takes nothing more from its accelerator,
        everything queued for it is answered with an error (requests) or dropped
        (responses), and every request outstanding to it is answered with an error."""
        if self.faulted is not None:
            return
        self.faulted = reason
        self._tx_data.clear()
        self._deframer = TLDeframer()
        self._local = 0
        # Every request forwarded here is answered once, from the table (H7) ...
        self.switch.port_faulted(self.index, now)
        # ... so what is still queued only gives back what it holds at its ingress.
        for packet in self.arbiter.flush():
            if not packet.local:
                self.switch.free_ingress(packet, now)
                if isinstance(packet.value, codec.Response):
                    self._stats.to_faulted_dropped += 1

    def count_bounce(self, answered: bool) -> None:
        """Count a request answered for this faulted port (H7), or a response dropped."""
        if answered:
            self._stats.fault_answers += 1
        else:
            self._stats.to_faulted_dropped += 1

    # -- egress (S4-S6) ----------------------------------------------------------------

    def enqueue(self, packet: Packet, now: float) -> None:
        """Queue ``packet`` for this egress at slot ``now`` (a faulted port bounces it,
        H7). The watchdog (H6) counts from ``now`` when the queue was empty: the slot
        the packet came, not this port's last traffic nor a time stamped elsewhere."""
        if self.faulted is not None:
            self.switch.bounce(packet, now)
            return
        if not self.arbiter.queued:
            self._last_progress = max(self._last_progress, now)
        if packet.local:
            self._local += 1
        self.arbiter.enqueue(packet)

    def poll(self, now: float = 0.0) -> bytes | None:
        """The next TL flit for this port's accelerator, or ``None``."""
        self._now = now
        if self.faulted is not None:
            return None
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
        self._last_progress = now
        if packet.local:
            self._local -= 1
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
        """True while packets wait for this egress, data is owed, or a field is incomplete
        (never on a faulted port)."""
        if self.faulted is not None:
            return False
        return bool(self.arbiter.queued or self._tx_data or self._deframer.pending)

    def next_timer(self) -> float | None:
        """The egress watchdog's deadline (H6): ``stall_slots`` after the egress last
        sent a field, while fields wait for it; else ``None``."""
        if self.faulted is not None or not self.arbiter.queued:
            return None
        return self._last_progress + self.switch.config.stall_slots

    def run_timer(self, now: float) -> list[Any]:
        """The watchdog fired: no field left for ``stall_slots`` slots while some waited,
        so the port is faulted (H6). Reports no events."""
        self._now = now
        deadline = self.next_timer()
        if deadline is not None and now >= deadline:
            self.fault(f"egress stalled: no field sent for {self.switch.config.stall_slots} "
                       "slots while fields waited", now)
        return []

    def link_faulted(self) -> list[Any]:
        """The link went to fault (specs/dl.md L5), the time unknown: the port is faulted
        (H7) at the last slot it saw. Reports no events."""
        return self.link_faulted_at(self._now)

    def link_faulted_at(self, now: float) -> list[Any]:
        """The link went to fault at slot ``now`` (specs/dl.md L5): the port is faulted
        (H7), its answers stamped ``now`` (its last traffic may be long before: a link
        that carries no data updates no clock). Reports no events."""
        self._now = max(self._now, now)
        self.fault("link in fault", now)
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

    @property
    def resources(self) -> PortResources:
        """What this port holds now (H8; compare with :attr:`limits`)."""
        return PortResources(self.arbiter.queued, self._local, len(self._tx_data),
                             self._deframer.pending, self.occupied_buffers)

    @property
    def limits(self) -> PortResources:
        """The most this port can hold whatever any peer sends (H8)."""
        return self.switch.port_limits


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
        self.agents = [SwitchPort(self, i, config.buffer, config.pfc)
                       for i in range(config.ports)]
        self.ports = [LinkEnd(agent, config.link) for agent in self.agents]
        #: The multicast engine (S9), or ``None`` for a switch without multicast groups.
        self.multicast = (MulticastEngine(self, config.multicast, config.multicast_ops)
                          if config.multicast else None)
        #: Requests forwarded and not yet answered, per originator ID (H3, H7).
        self.tags = OutstandingTags(self._route)
        self._ids_of: list[list[int]] = [[] for _ in range(config.ports)]
        for acc, p in self._route.items():
            self._ids_of[p].append(acc)
        self.port_limits = self._limits()

    def _limits(self) -> PortResources:
        """H8: every packet but the switch's own answers holds at least one command
        buffer at its ingress, so an egress queue is bounded by the command buffers of
        every ingress, plus its own answers, plus the multicast engine's copies and
        answers."""
        config = self.config
        buffer = config.buffer
        cmd = (sum(buffer.per_vc[c] for c in (credits.REQ_CMD, credits.RSP_CMD))
               * credits.NUM_VCS + buffer.pool[credits.REQ_CMD] + buffer.pool[credits.RSP_CMD])
        total = sum(buffer.per_vc) * credits.NUM_VCS + sum(buffer.pool)
        engine = 0
        if config.multicast:
            engine = config.multicast_ops * (1 + max(len(g.members) for g in config.multicast))
        return PortResources(queued=cmd * config.ports + MAX_LOCAL_REPLIES + engine,
                             local_replies=MAX_LOCAL_REPLIES, tx_halves=MAX_TX_HALVES,
                             rx_halves=MAX_RX_HALVES, occupied_buffers=total)

    def port(self, index: int) -> LinkEnd:
        """The harness port of link ``index``."""
        return self.ports[index]

    def egress_of(self, acc_id: int) -> int | None:
        """The port that reaches accelerator ``acc_id``, or ``None`` (S2)."""
        return self._route.get(acc_id)

    def forward(self, egress: int, packet: Packet, now: float | None = None) -> None:
        """Queue ``packet`` for port ``egress`` at slot ``now``; a unicast request's tag
        is then outstanding (H3). Without ``now`` (the multicast engine's copies and
        answers, made at the slot they are ready) it is ``packet.ready``."""
        agent = self.agents[egress]
        value = packet.value
        if agent.faulted is None and isinstance(value, codec.Request):
            self.tags.issue(value)
        agent.enqueue(packet, packet.ready if now is None else now)

    def bounce(self, packet: Packet, now: float) -> None:
        """``packet`` cannot reach its faulted egress (H7): free what it holds at its
        ingress; answer a request with ``FAULT_STATUS``, drop a response."""
        self.free_ingress(packet, now)
        value = packet.value
        egress = self.egress_of(value.dst_acc)
        faulted = self.agents[egress] if egress is not None else None
        if isinstance(value, codec.Response):
            if faulted is not None:
                faulted.count_bounce(False)
            return
        if faulted is not None:
            faulted.count_bounce(True)
        engine = self.multicast
        if engine is not None and engine.is_group(value.src_acc):
            engine.member_failed(value.src_acc, value.tag, value.dst_acc, FAULT_STATUS, now)
            return
        back = self.egress_of(value.src_acc)
        if back is not None:
            self.agents[back].answer_locally(error_answer(value, FAULT_STATUS), now)

    def free_ingress(self, packet: Packet, now: float) -> None:
        """Free what ``packet`` holds at its ingress (the last copy of a multicast store
        frees the store's buffers)."""
        if packet.source >= 0 and (packet.copies is None or packet.copies.one_sent()):
            self.release(packet.ingress, packet.source, packet.queue_class,
                         packet.data_credits, now)

    def port_faulted(self, index: int, now: float) -> None:
        """Port ``index`` faulted (H7): take its link to fault, end every request
        outstanding to it, and forget those its own accelerator had outstanding (their
        answers cannot reach it)."""
        ids = self._ids_of[index]
        agent = self.agents[index]
        # Its link goes down too, so its own accelerator learns in bounded time (F13).
        self.ports[index].fail(f"switch faulted the port: {agent.faulted}", now)
        for acc in ids:
            self.tags.forget_originator(acc)
        for reply in self.tags.fail_targets(set(ids), FAULT_STATUS):
            agent.count_bounce(True)
            back = self.egress_of(reply.dst_acc)
            if back is not None:
                self.agents[back].answer_locally(reply, now)
        if self.multicast is not None:
            self.multicast.members_faulted(set(ids), FAULT_STATUS, now)

    @property
    def faulted_ports(self) -> dict[int, str]:
        """Ports faulted so far and why (H6, H7)."""
        return {a.index: a.faulted for a in self.agents if a.faulted is not None}

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


def error_answer(request: codec.Request, status: Status) -> codec.Response:
    """The switch's own answer to ``request`` with ``status`` and no data (S2, H7):
    the request's VC and tag, from its target, ``rd_wr`` 0 for Read / AtomicR."""
    rd_wr = 0 if request.cmd in (Command.READ, Command.ATOMIC_R) else 1
    return codec.Response(vchan=request.vchan, tag=request.tag, pool=0, len=0, offset=0,
                          status=int(status), rd_wr=rd_wr, last=1, src_acc=request.dst_acc,
                          dst_acc=request.src_acc)


__all__ = ["FAULT_STATUS", "MAX_LOCAL_REPLIES", "PortResources", "Switch", "SwitchPort",
           "SwitchPortStats", "error_answer"]
