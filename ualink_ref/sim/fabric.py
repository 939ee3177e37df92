"""A pod: N accelerators behind one switch, or P parallel switch planes, on the one harness.

:func:`run_fabric` builds the pod on :class:`~ualink_ref.net.harness.Network`,
issues a workload (:mod:`ualink_ref.sim.workloads`) and returns a
:class:`~ualink_ref.sim.fabric_report.FabricReport`. Rules (``specs/fabric.md``):

F1. Accelerator IDs are ``0 .. N-1``; with ``planes`` P each accelerator has P
    endpoints (one port per plane) sharing its one memory; plane p has one
    :class:`~ualink_ref.node.switch.Switch` with port i wired to accelerator i.
F2. A request's plane is ``(addr >> 8) % P``: a 256-byte region always takes
    one plane, so the ordering rule (same source, destination, region, VC)
    holds across planes.
F3. Latencies: a link's one-way latency is ``ceil((cable_m * 5 ns + fec_decode_ns)
    / slot_ns)`` slots; the switch's port-to-port latency ``ceil(switch_ns / slot_ns)``.
    Every link of a pod has ``lanes`` lanes (1, 2 or 4): a slot, the time one flit
    takes on a link, is ``slot_ns = SLOT_NS / lanes`` (flits striped over the lanes in
    turn; ``specs/fabric.md`` rule F9).
F4. Each accelerator keeps at most ``max_outstanding`` ops in flight and issues
    each op at its offered time (``FabricOp.at``) or as soon as a slot frees up.
    Latency = completion slot - issue slot.
F5. Endpoints run with ``compress=False`` (switch rule S3).
F6. ``flow_control="pfc"``: the switch pauses an ingress peer at ``xoff``
    buffers and resumes it at ``xon`` (switch rule S8); the thresholds default
    to the physical buffer (the CBFC grant) minus a headroom covering what can
    still arrive after the pause is sent (:func:`pfc_for`). Credits are then
    granted generously both ways (:data:`PFC_CREDITS`) so they never bind: the
    pause is the flow control, and the switch's egress never waits on credit
    returns that a pause holds back (which could otherwise close a cycle).
F7. After the last op completes the pod drains: owed credit returns are sent,
    and every link's books must balance (:meth:`Fabric.leaks`).
F11. ``links_down``: from slot ``at`` (to ``until``, or for good) every flit on that
    link, both ways or one (``direction``), arrives as noise (the DL cannot deliver: it
    replays, retrains, and — if the outage outlasts the retrains — the link goes to
    fault, whereupon each end's TL ends its operations, specs/dl.md L5, and the switch
    answers every request outstanding to that port, specs/fabric.md H7).
F13. An op through a dead link ends once, with an error, within
    :func:`fault_bound_slots` slots of the outage's start.
F10. With ``multicast`` groups every plane's switch holds them (rule S9); a group ID
    lies past the accelerator IDs.
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Literal

from ualink_ref.dl.config import DLConfig, LinkStateConfig
from ualink_ref.dl.linkstate import LinkState
from ualink_ref.errors import ConfigError, LinkFailedError, LinkStalledError
from ualink_ref.net.channels import Chain, Outage, RandomBitErrors
from ualink_ref.net.harness import Channel, Network
from ualink_ref.net.timeouts import replay_timeout_for
from ualink_ref.node.config import (
    EndpointConfig,
    LinkConfig,
    MulticastGroup,
    PfcConfig,
    SwitchConfig,
)
from ualink_ref.node.endpoint import Endpoint
from ualink_ref.node.switch import Switch
from ualink_ref.phy.config import PhyConfig
from ualink_ref.sim.workloads import FabricOp
from ualink_ref.sizes import FEC_MODES, SLOT_NS, FecMode
from ualink_ref.tl import CreditConfig, Memory
from ualink_ref.tl.config import TLConfig
from ualink_ref.tl.credits import NUM_VCS, POOL, check_option
from ualink_ref.tl.events import Completion
from ualink_ref.tl.memory import DEFAULT_MAX_PAGES
from ualink_ref.tl.upli import Status

#: Lanes per link (public: UALink 200G 1.0 — a link is x1, x2 or x4 of 200G lanes).
LANE_COUNTS: tuple[int, ...] = (1, 2, 4)
FlowControlMode = Literal["cbfc", "pfc"]
FLOW_CONTROLS: tuple[FlowControlMode, ...] = ("cbfc", "pfc")
#: Credits granted over a link under PFC, both ways (rule F6): never the binding limit.
PFC_CREDITS = CreditConfig(per_vc=(16, 16, 32, 32), pool=(1024, 1024, 2048, 2048))
#: A switch ingress buffer (project choice): 416 buffers of which 144 hold request data and
#: 144 response data — a little more than the credit loop of a 3 m link needs at full rate,
#: so the buffer, not the loop, bounds queueing under congestion.
SWITCH_BUFFER = CreditConfig(per_vc=(4, 4, 8, 8), pool=(32, 32, 128, 128))


#: Which way a :class:`LinkDown` outage hits: both, accelerator -> switch, switch -> accelerator.
LINK_DIRECTIONS = ("both", "to_switch", "from_switch")


@dataclass(frozen=True)
class LinkDown:
    """Accelerator ``accelerator``'s link on plane ``plane`` carries noise from slot ``at``
    up to ``until`` (``None``: for good), both ways or one way (``direction``, one of
    :data:`LINK_DIRECTIONS`): rule F11. A short outage makes both ends retrain and
    recover; one past the retrains faults the link."""

    plane: int
    accelerator: int
    at: float
    until: float | None = None
    direction: str = "both"

    def __post_init__(self) -> None:
        if self.direction not in LINK_DIRECTIONS:
            raise ConfigError("links_down", f"direction must be one of {LINK_DIRECTIONS}, "
                                            f"got {self.direction!r}")
        if self.until is not None and (
                isinstance(self.until, bool) or not isinstance(self.until, int | float)
                or not math.isfinite(self.until) or self.until <= self.at):
            raise ConfigError("links_down", f"until must be a slot after at, got {self.until!r}")
        for name in ("plane", "accelerator"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise ConfigError("links_down", f"{name} must be an integer >= 0, got {value!r}")
        if isinstance(self.at, bool) or not isinstance(self.at, int | float) or not (
                math.isfinite(self.at) and self.at >= 0):
            raise ConfigError("links_down", f"at must be a slot >= 0, got {self.at!r}")


@dataclass(frozen=True)
class FabricConfig:
    """Everything that shapes a pod run except the workload."""

    accelerators: int = 16
    planes: int = 1
    lanes: int = 1
    fec: FecMode = "kp4"
    ber: float = 0.0
    cable_m: float = 3.0
    switch_ns: float = 200.0
    fec_decode_ns: float = 0.0
    flow_control: FlowControlMode = "cbfc"
    buffer: CreditConfig | None = None
    pfc: PfcConfig | None = None
    batch: int = 1
    max_outstanding: int = 64
    seed: int = 0
    max_slots: int | None = None
    #: Multicast groups of every plane's switch (specs/fabric.md S9, F10).
    multicast: tuple[MulticastGroup, ...] = ()
    #: Multicast operations each switch works on at once (S9).
    multicast_ops: int = 2048
    #: Links that fail during the run (rule F11).
    links_down: tuple[LinkDown, ...] = ()
    #: 256-byte pages each accelerator's memory may allocate (default: 64 MiB).
    memory_pages: int = DEFAULT_MAX_PAGES

    def __post_init__(self) -> None:
        for name, low in (("accelerators", 2), ("planes", 1), ("batch", 1),
                          ("max_outstanding", 1), ("memory_pages", 0)):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < low:
                raise ConfigError(name, f"must be an integer >= {low}, got {value!r}")
        if self.lanes not in LANE_COUNTS:
            raise ConfigError("lanes", f"must be one of {LANE_COUNTS}, got {self.lanes!r}")
        if self.accelerators > 1024:
            raise ConfigError("accelerators", f"must be 2..1024, got {self.accelerators}")
        if self.fec not in FEC_MODES:
            raise ConfigError("fec", f"must be one of {FEC_MODES}, got {self.fec!r}")
        if self.flow_control not in FLOW_CONTROLS:
            raise ConfigError("flow_control", f"must be one of {FLOW_CONTROLS}")
        for name in ("cable_m", "switch_ns", "fec_decode_ns", "ber"):
            value = getattr(self, name)
            if (isinstance(value, bool) or not isinstance(value, int | float)
                    or not math.isfinite(value) or value < 0):
                raise ConfigError(name, f"must be a number >= 0, got {value!r}")
        if self.ber > 1:
            raise ConfigError("ber", f"must be a probability in [0, 1], got {self.ber!r}")
        if self.buffer is not None:
            check_option("buffer", self.buffer)
        if self.pfc is not None and not isinstance(self.pfc, PfcConfig):
            raise ConfigError("pfc", f"must be a PfcConfig or None, got {self.pfc!r}")
        if not isinstance(self.multicast, tuple) or not all(
                isinstance(g, MulticastGroup) for g in self.multicast):
            raise ConfigError("multicast", "must be a tuple of MulticastGroup")
        if not isinstance(self.links_down, tuple):
            raise ConfigError("links_down", f"must be a tuple of LinkDown, got {self.links_down!r}")
        for down in self.links_down:
            if not isinstance(down, LinkDown) or down.plane >= self.planes or (
                    down.accelerator >= self.accelerators):
                raise ConfigError("links_down", f"not a link of this pod: {down!r}")
        if len({g.group for g in self.multicast}) != len(self.multicast):
            raise ConfigError("multicast", "two groups share an ID")
        if (isinstance(self.multicast_ops, bool) or not isinstance(self.multicast_ops, int)
                or not 1 <= self.multicast_ops <= 1 << 11):
            raise ConfigError("multicast_ops", f"must be 1..{1 << 11}, got {self.multicast_ops!r}")
        for g in self.multicast:
            if g.group < self.accelerators or any(m >= self.accelerators for m in g.members):
                raise ConfigError("multicast", f"group {g.group} needs an ID past the "
                                  f"accelerators (0..{self.accelerators - 1}) and members among "
                                  "them")

    @property
    def slot_ns(self) -> float:
        """One flit slot on this pod's links, in ns (rule F3)."""
        return SLOT_NS / self.lanes

    @property
    def link_slots(self) -> int:
        """One-way link latency in flit slots (rule F3)."""
        return math.ceil((self.cable_m * 5 + self.fec_decode_ns) / self.slot_ns - 1e-9)

    @property
    def switch_slots(self) -> int:
        """Switch port-to-port latency in flit slots (rule F3)."""
        return math.ceil(self.switch_ns / self.slot_ns - 1e-9)


def pfc_for(config: FabricConfig, buffer: CreditConfig) -> PfcConfig:
    """Default PFC thresholds: XOFF = buffer - headroom, XON = XOFF - headroom.

    Headroom (buffers of 64 bytes) covers what may still arrive once XOFF is
    decided: the pause's trip to the peer and the last flits' trip back
    (2 x (link + batch) + 2 slots at up to 10 TL flits a slot) plus the TL
    flits already handed to the peer's DL (its ``tl_backlog``, 20) and their
    command buffers.
    """
    total = sum(buffer.pool) + sum(buffer.per_vc) * NUM_VCS
    headroom = 2 * ((2 * (config.link_slots + config.batch) + 2) * 10 + 20)
    xoff = total - headroom
    if xoff <= headroom:
        raise ValueError(f"buffer of {total} too small for a PFC headroom of {headroom}")
    return PfcConfig(xoff=xoff, xon=xoff - headroom, delay=config.link_slots + config.batch,
                     limit=total)


class Fabric:
    """A built pod (rule F1); :meth:`run` drives a workload through it."""

    def __init__(self, config: FabricConfig) -> None:
        self.config = config
        n, planes = config.accelerators, config.planes
        self.memories = [Memory(max_pages=config.memory_pages) for _ in range(n)]
        self.network = Network(batch=config.batch)
        timeout = replay_timeout_for(config.link_slots, config.batch)
        buffer = config.buffer or SWITCH_BUFFER
        pfc = None
        ep_credits = None
        if config.flow_control == "pfc":
            pfc = config.pfc or pfc_for(config, buffer)
            buffer = ep_credits = PFC_CREDITS
        self.switches: list[Switch] = []
        self.endpoints: list[list[Endpoint]] = []  # [plane][acc]
        self.port_of: dict[str, tuple[int, int]] = {}  # endpoint port name -> (plane, acc)
        self._channels: list[RandomBitErrors] = []
        route = {acc: acc for acc in range(n)}
        link = LinkConfig(phy=PhyConfig(config.fec), dl=DLConfig(replay_timeout=timeout),
                          link_state=link_states_for(config))
        switch_config = SwitchConfig(ports=n, latency=config.switch_slots, buffer=buffer,
                                     pfc=pfc, link=replace(link, tl_backlog=10),
                                     multicast=config.multicast,
                                     multicast_ops=config.multicast_ops,
                                     stall_slots=watchdog_slots(config))
        ep_config = EndpointConfig(link=link, tl=TLConfig(
            compress=False, credits=ep_credits if ep_credits is not None else CreditConfig()))
        for p in range(planes):
            sw = Switch(switch_config, route)
            eps = [Endpoint(acc, self.memories[acc], config=ep_config) for acc in range(n)]
            for acc, ep in enumerate(eps):
                a, s = f"p{p}.acc{acc}", f"p{p}.sw{acc}"
                self.network.add_port(a, ep)
                self.network.add_port(s, sw.port(acc))
                self.port_of[a] = (p, acc)
                chans: list[Channel | None] = [None, None]
                if config.ber:
                    base = config.seed * 1_000_003 + (p * n + acc) * 2
                    errors = [RandomBitErrors(config.ber, base),
                              RandomBitErrors(config.ber, base + 1)]
                    self._channels.extend(errors)
                    chans = list(errors)
                for down in config.links_down:  # rule F11
                    if (down.plane, down.accelerator) != (p, acc):
                        continue
                    for way, hit in enumerate((down.direction != "from_switch",
                                               down.direction != "to_switch")):
                        if hit:
                            outage = Outage(down.at, down.until, config.seed * 2 + way)
                            c = chans[way]
                            chans[way] = outage if c is None else Chain(c, outage)
                self.network.connect(a, s, latency=config.link_slots, channel_ab=chans[0],
                                     channel_ba=chans[1], name=f"p{p}.link{acc}")
                if pfc is not None:
                    sw.connect_pause_peer(acc, ep)
            self.switches.append(sw)
            self.endpoints.append(eps)

    @property
    def bit_errors(self) -> int:
        """Bit errors the channels injected so far."""
        return sum(c.errors for c in self._channels)

    def step(self) -> list[tuple[int, int, Completion]]:
        """Step the pod's network once; return every operation that completed, as
        ``(plane, accelerator, completion)``, in the order they completed."""
        out = []
        for name, event in self.network.step():
            if type(event) is Completion:
                plane, acc = self.port_of[name]
                out.append((plane, acc, event))
        # Events raised outside ``receive`` (a link fault ends every op there, a timeout
        # ends one); a switch port's are only link-state changes, taken so none pile up.
        for p, eps in enumerate(self.endpoints):
            for acc, ep in enumerate(eps):
                for event in ep.drain_events():
                    if type(event) is Completion:
                        out.append((p, acc, event))
        for sw in self.switches:
            for port in sw.ports:
                port.drain_events()
        return out

    def faulted_links(self) -> dict[tuple[int, int], str]:
        """``(plane, accelerator)`` -> why, for every link in fault at either end or whose
        switch port the switch has faulted (specs/fabric.md H6, H7): no silent
        rerouting — ops of that plane to or from that accelerator end with an error."""
        out: dict[tuple[int, int], str] = {}
        for p, sw in enumerate(self.switches):
            for acc, reason in sw.faulted_ports.items():
                out[(p, acc)] = f"switch port: {reason}"
            for acc, ep in enumerate(self.endpoints[p]):
                if ep.link_end.link_state is LinkState.FAULT and (p, acc) not in out:
                    out[(p, acc)] = "accelerator's link in fault"
        return out

    def plane_of(self, addr: int) -> int:
        """The plane a request to ``addr`` takes (rule F2)."""
        return (addr >> 8) % self.config.planes

    def run(
        self, workload: Sequence[FabricOp], progress: Callable[[int], None] | None = None,
    ) -> FabricRun:
        """Issue ``workload`` (rule F4), run to completion, drain (rule F7)."""
        cfg = self.config
        n = cfg.accelerators
        for op in workload:
            if not (0 <= op.src < n and 0 <= op.dst < n):
                raise ValueError(f"op between {op.src} and {op.dst}: pod has IDs 0..{n - 1}")
        pending: list[deque[int]] = [deque() for _ in range(n)]
        for i in sorted(range(len(workload)), key=lambda i: (workload[i].at, i)):
            pending[workload[i].src].append(i)
        outstanding = [0] * n
        in_flight: dict[tuple[int, int, int], tuple[int, float]] = {}
        results: list[Completion | None] = [None] * len(workload)
        issued_at = [0.0] * len(workload)
        done_at = [0.0] * len(workload)
        # The default limit leaves every op the time it may take to end on a dead link
        # (F13), which grows with the cable and the batch.
        limit = (cfg.max_slots if cfg.max_slots is not None
                 else 5000 + 200 * len(workload) + 2 * fault_bound_slots(cfg))
        net = self.network
        done = 0
        active = [s for s in range(n) if pending[s]]
        while done < len(workload):
            now = net.now
            if now > limit:
                raise LinkStalledError(now, "fabric stuck", completed=done,
                                       total=len(workload), seed=cfg.seed)
            still = []
            for src in active:
                queue = pending[src]
                while queue and outstanding[src] < cfg.max_outstanding:
                    index = queue[0]
                    op = workload[index]
                    if op.at > now:
                        break
                    queue.popleft()
                    plane = self.plane_of(op.op.addr)
                    issued_at[index] = now
                    try:
                        handle = op.op.issue(self.endpoints[plane][src], op.dst)
                    except LinkFailedError as exc:  # that plane's link failed (rule F13)
                        results[index] = Completion(-1, Status.DATA_ERROR, None, str(exc))
                        done_at[index] = now
                        done += 1
                        continue
                    in_flight[(plane, src, handle)] = (index, now)
                    outstanding[src] += 1
                if queue:
                    still.append(src)
            active = still
            before = done
            for plane, acc, event in self.step():
                index, _ = in_flight.pop((plane, acc, event.handle))
                if results[index] is not None:
                    raise AssertionError(f"op {index} completed twice (seed {cfg.seed})")
                results[index] = event
                done_at[index] = net.edge_of(now)
                outstanding[acc] -= 1
                done += 1
            if progress is not None and done != before:
                progress(done - before)
        slots = net.now
        self.drain()
        return FabricRun(tuple(workload), results, issued_at, done_at, slots)

    def drain(self, max_slots: int = 200_000) -> None:
        """Step until nothing is busy and every owed credit has gone back (rule F7)."""
        net = self.network
        limit = net.now + max_slots
        while True:
            owed = False
            for sw in self.switches:
                for agent in sw.agents:
                    owed = agent.urge_credit_return() or owed
            for eps in self.endpoints:
                for ep in eps:
                    owed = ep.urge_credit_return() or owed
            if not owed and not net.busy:
                break
            if net.now > limit:
                raise LinkStalledError(max_slots, "fabric did not drain", seed=self.config.seed)
            net.step()

    def leaks(self) -> list[str]:
        """After :meth:`drain`: every way the books do not balance (empty when sound).

        For each link and direction the sender must hold exactly the credits
        its receiver granted, with no buffer occupied, nothing owed and nothing
        held in a switch.
        """
        out = []
        dead = self.faulted_links()
        for p, sw in enumerate(self.switches):
            if sw.held:
                out.append(f"plane {p}: {sw.held} fields still held")
            for acc, agent in enumerate(sw.agents):
                if (p, acc) in dead:
                    continue  # a faulted link's books are void (the port takes nothing)
                ep_books = self.endpoints[p][acc].credit_books()
                sw_books = agent.credit_books()
                pairs = ((f"p{p} acc{acc}->sw", ep_books.sender, sw_books.receiver),
                         (f"p{p} sw->acc{acc}", sw_books.sender, ep_books.receiver))
                for label, tx, rx in pairs:
                    for source in (*range(NUM_VCS), POOL):
                        cap = rx.capacity[source]
                        if tx.available[source] != cap or not rx.balanced(source):
                            out.append(f"{label} source {source}: holds "
                                       f"{list(tx.available[source])}, capacity {list(cap)}, "
                                       f"occupied {list(rx.occupied[source])}, "
                                       f"owed {list(rx.owed[source])}")
        for p, eps in enumerate(self.endpoints):
            for ep in eps:
                if ep.tl.busy and (p, ep.acc_id) not in dead:
                    out.append(f"accelerator {ep.acc_id}: TL still busy")
        return out


def link_states_for(config: FabricConfig) -> LinkStateConfig:
    """The link-state timers of every link in the pod (specs/fabric.md F13, project
    choice): a probe's or a training's ACK must come back within ``retrain_slots``
    (specs/dl.md L10), so that and the idle time scale with the round trip as the replay
    timeout does; below the DL's defaults never (a short link keeps them). With fixed
    timers a long cable or a large batch made every probe miss its ACK and the pod never
    drained (``--cable-m`` 1,400 or ``--batch`` 128 stalled after 200,000 slots)."""
    states = LinkStateConfig()
    round_trip = replay_timeout_for(config.link_slots, config.batch)
    return replace(states, retrain_slots=max(states.retrain_slots, round_trip),
                   idle_after=max(states.idle_after, 2 * round_trip))


def dl_fault_slots(config: FabricConfig) -> int:
    """The most slots a DL of the pod takes to fault a dead link (specs/dl.md L5, L10):
    at most ``max_retrains`` trainings of ``retrain_slots``, and before each and after
    the last at most ``max_replays`` + 1 replay timeouts; an idle end first notices
    after at most ``idle_after`` slots and one probe's ``retrain_slots``."""
    states = link_states_for(config)
    timeout = replay_timeout_for(config.link_slots, config.batch)
    replays = DLConfig().max_replays + 1
    return int((states.max_retrains + 1) * replays * timeout
               + states.max_retrains * states.retrain_slots
               + states.idle_after + states.retrain_slots)


def watchdog_slots(config: FabricConfig) -> int:
    """The switch's egress watchdog (``SwitchConfig.stall_slots``, specs/fabric.md H6) of
    the pod: above the DL's own time to fault (:func:`dl_fault_slots`) by a replay
    timeout and a round trip, so an outage the DL would still recover from never faults
    the port (project choice); never below the switch's default (4,096)."""
    margin = (replay_timeout_for(config.link_slots, config.batch)
              + 2 * (config.link_slots + config.batch) + config.switch_slots)
    return int(max(SwitchConfig(ports=1).stall_slots, dl_fault_slots(config) + margin))


def fault_bound_slots(config: FabricConfig) -> int:
    """Rule F13: the slots within which an op through a link that died ends, with an
    error, counted from the outage's start.

    Each end of a dead link faults within its DL's budget (:func:`dl_fault_slots`). The
    switch then answers at once (H7); the answer crosses one link (``link + batch``
    slots, plus the slot's edge). Nothing held at the switch waits longer than the
    watchdog's :func:`watchdog_slots` (H6), which bounds the rest.
    """
    return int(max(dl_fault_slots(config), watchdog_slots(config))
               + 2 * (config.link_slots + config.batch) + config.switch_slots + 2)


@dataclass
class FabricRun:
    """What one :meth:`Fabric.run` produced (slot times)."""

    workload: tuple[FabricOp, ...]
    results: list[Completion | None]
    issued_at: list[float]
    done_at: list[float]
    slots: float


__all__ = [
    "FLOW_CONTROLS",
    "LANE_COUNTS",
    "LINK_DIRECTIONS",
    "PFC_CREDITS",
    "SWITCH_BUFFER",
    "Fabric",
    "FabricConfig",
    "FabricRun",
    "FlowControlMode",
    "LinkDown",
    "dl_fault_slots",
    "fault_bound_slots",
    "link_states_for",
    "pfc_for",
    "watchdog_slots",
]
