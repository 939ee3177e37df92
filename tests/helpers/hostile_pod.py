"""A pod with one hostile accelerator (issue 26, "Faults and hostile accelerators", item 1).

:class:`HostilePod` is 15 honest Endpoints (IDs 0..14) and one hostile port (ID 15)
behind one Switch. The hostile port is an honest PHY + DL (a ``LinkEnd``) carrying
whatever TL flits the driver gives it, and it can put CRC-valid DL flits of
arbitrary bytes on the wire in place of its own. Its methods take plain values, so
a Hypothesis state machine (``tests/node/test_switch_hostile.py``) and a seeded
fuzzer (the slow 10,000-step run) drive the same pod. Checks (:meth:`check`), after
every step:

* every honest op completes at most once, with the model's status and data (each
  source owns its own span of every target's memory, so a per-(source, target)
  sequential model is exact; its expected result is taken when it is issued);
* every switch port holds no more than its stated limits (``SwitchPort.limits``,
  specs/fabric.md H8) and the outstanding-tag table no more than its capacity —
  read through public properties only.

:meth:`finish` runs until every honest op has completed (within a bound) and
compares the honest spans of every honest memory with the model.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Sequence
from typing import Any

from tests.helpers.tl_peer import flits, halves
from ualink_ref.dl.config import DLConfig
from ualink_ref.dl.crc import crc32
from ualink_ref.net.harness import Network
from ualink_ref.node.config import EndpointConfig, LinkConfig, SwitchConfig
from ualink_ref.node.endpoint import Endpoint
from ualink_ref.node.linkend import LinkEnd
from ualink_ref.node.switch import Switch
from ualink_ref.phy.config import PhyConfig
from ualink_ref.sim.fabric import SWITCH_BUFFER
from ualink_ref.sim.model import ModelMemory, model_read, model_step
from ualink_ref.sim.workloads import Op
from ualink_ref.tl import Memory
from ualink_ref.tl.codec import TLField, decode_control_half
from ualink_ref.tl.config import TLConfig
from ualink_ref.tl.events import Completion
from ualink_ref.tl.framing import data_halves
from ualink_ref.tl.upli import Status

N = 16
HOSTILE = N - 1
HONEST = tuple(range(HOSTILE))
SPAN = 0x1000  # each honest source's span in every honest target
BASE = 0x1000
#: Hostile requests to honest targets land at or above this address (outside every span):
#: what a peer writes into another's memory is the target's business, not the switch's.
#: Above the 24 bits a compressed request supplies, so an expanded one lands there too.
HOSTILE_ADDR = 1 << 30
STALL_SLOTS = 400  # the egress watchdog (H6), short so a run reaches it


class HostileUpper:
    """The hostile accelerator's TL: sends the flits it is given, takes what arrives."""

    def __init__(self) -> None:
        self.outbox: deque[bytes] = deque()
        self.received = 0

    def poll(self, now: float = 0.0) -> bytes | None:
        return self.outbox.popleft() if self.outbox else None

    def receive(self, flit: bytes, now: float = 0.0) -> list[Any]:
        self.received += 1
        return []

    @property
    def busy(self) -> bool:
        return bool(self.outbox)

    def next_timer(self) -> float | None:
        return None

    def run_timer(self, now: float) -> list[Any]:
        return []

    def link_faulted(self) -> list[Any]:
        self.outbox.clear()
        return []

    @property
    def busy_after_fault(self) -> bool:
        return False


class HostilePort:
    """A harness port: the hostile LinkEnd, or a raw DL flit put on the wire instead."""

    def __init__(self, config: LinkConfig) -> None:
        self.upper = HostileUpper()
        self.link = LinkEnd(self.upper, config)
        self.raw: deque[bytes] = deque()

    def poll_many(self, now: float, max_flits: int) -> tuple[bytes, int]:
        if self.raw:
            return self.raw.popleft(), 1  # fec "none": the wire is the DL flit
        return self.link.poll_many(now, max_flits)

    def receive(self, data: bytes, now: float) -> list[Any]:
        return self.link.receive(data, now)

    @property
    def busy(self) -> bool:
        return bool(self.raw) or self.link.busy


class HostilePod:
    """See the module docstring."""

    def __init__(self, stall_slots: int = STALL_SLOTS) -> None:
        link = LinkConfig(phy=PhyConfig("none"), dl=DLConfig(replay_timeout=128))
        self.switch = Switch(SwitchConfig(ports=N, latency=2, buffer=SWITCH_BUFFER,
                                          link=LinkConfig(phy=PhyConfig("none"),
                                                          dl=DLConfig(replay_timeout=128),
                                                          tl_backlog=10),
                                          stall_slots=stall_slots),
                             {acc: acc for acc in range(N)})
        self.memories = {acc: Memory() for acc in HONEST}
        self.endpoints = {acc: Endpoint(acc, self.memories[acc], config=EndpointConfig(
            link=link, tl=TLConfig(compress=False))) for acc in HONEST}
        self.hostile = HostilePort(link)
        self.net = Network()
        for acc in range(N):
            port: Endpoint | HostilePort = self.endpoints.get(acc, self.hostile)
            self.net.add_port(f"acc{acc}", port)
            self.net.add_port(f"sw{acc}", self.switch.port(acc))
            self.net.connect(f"acc{acc}", f"sw{acc}", latency=1)
        self.models: dict[tuple[int, int], ModelMemory] = {}
        #: (source, handle) -> (op, target, expected status and data)
        self.pending: dict[tuple[int, int], tuple[Op, int, bytes | None]] = {}
        self.completed: dict[tuple[int, int], Completion] = {}
        self.serial = 0
        self.steps = 0
        self.issued = dict.fromkeys(HONEST, 0)
        #: (source, target, the wire tag its TL gives it) of recent honest ops: a tag
        #: pool is FIFO, so the k-th op of a source takes tag k mod 2,048 while answers
        #: come back in order — what an aimed hostile response guesses (H2, H3).
        self._recent: deque[tuple[int, int, int, int]] = deque(maxlen=64)

    # -- honest traffic ----------------------------------------------------------------

    def honest_op(self, src: int, dst: int, kind: str, offset: int, length: int) -> None:
        """Issue one op from honest ``src`` to honest ``dst`` in ``src``'s span there."""
        if src == dst:
            dst = (dst + 1) % HOSTILE
        addr = BASE + src * SPAN + (offset % (SPAN // 256)) * 256
        if kind == "read":
            op = Op("a", "read", addr, length=length)
        else:
            self.serial += 1
            data = (self.serial.to_bytes(4, "little") * 64)[:length]
            op = Op("a", "write", addr, data=data)
        model = self.models.setdefault((src, dst), {})
        want = model_step(model, op)
        handle = op.issue(self.endpoints[src], dst)
        self.pending[(src, handle)] = (op, dst, want)
        self._recent.append((src, handle, dst, self.issued[src] % 2048))
        self.issued[src] += 1

    @property
    def recent(self) -> list[tuple[int, int, int]]:
        """(source, target, likely wire tag) of recent honest ops still pending."""
        return [(s, d, t) for s, h, d, t in self._recent if (s, h) in self.pending]

    # -- the hostile port --------------------------------------------------------------

    def hostile_fields(self, fields: Sequence[TLField], data: Sequence[bytes] | None = None,
                       ) -> None:
        """Send ``fields`` (one control half-flit) and their data from the hostile port."""
        if data is None:
            data = [bytes([0x5A]) * 32] * sum(data_halves(f) for f in fields)
        self.hostile.upper.outbox.extend(flits(halves(fields, data)))

    def hostile_framed(self, raw: bytes, types: Sequence[int]) -> None:
        """A control half of arbitrary one-sector fields (FTYPEs ``types``, the rest of
        each sector arbitrary), then the data it owes: arbitrary bytes that still frame."""
        head = bytearray(raw[:32])
        for sector, ftype in enumerate(types[:8]):
            head[4 * sector] = (ftype << 4) | (head[4 * sector] & 0x0F)
        owed = sum(data_halves(value) for _, value in decode_control_half(bytes(head)))
        self.hostile.upper.outbox.extend(flits([bytes(head)] + [raw[32:]] * owed))

    def hostile_raw_tl(self, flit: bytes) -> None:
        """One TL flit of arbitrary bytes (an undecodable control half faults the port)."""
        self.hostile.upper.outbox.append(flit)

    def hostile_dl_flit(self, body: bytes) -> None:
        """A DL flit of arbitrary bytes with a valid CRC, in place of the port's own."""
        self.hostile.raw.append(body + crc32(body).to_bytes(4, "big"))

    # -- time and checks ---------------------------------------------------------------

    def step(self, slots: int) -> None:
        """Advance and check (the checks the module docstring lists)."""
        before = self.net.now
        for _ in range(slots):
            for name, event in self.net.step():
                if type(event) is Completion:
                    self._complete(int(name.removeprefix("acc")), event)
            for acc, ep in self.endpoints.items():
                for event in ep.drain_events():
                    if type(event) is Completion:
                        self._complete(acc, event)
            for port in self.switch.ports:
                port.drain_events()
            self.hostile.link.drain_events()
        assert self.net.now == before + slots
        self.steps += 1
        self.check()

    def _complete(self, acc: int, event: Completion) -> None:
        key = (acc, event.handle)
        assert acc in self.endpoints, f"the hostile port's events reached the driver: {event}"
        assert key not in self.completed, f"op completed twice: {key} {event}"
        assert key in self.pending, f"completion of an op never issued: {key} {event}"
        op, dst, want = self.pending.pop(key)
        assert event.status == Status.OKAY and event.error is None, (
            f"honest op {acc}->{dst} {op.kind} {op.addr:#x} ended {event}")
        assert event.data == want, f"honest op {acc}->{dst} {op.kind} {op.addr:#x}: wrong data"
        self.completed[key] = event

    def check(self) -> None:
        """Switch state within its stated bounds (public properties only)."""
        for agent in self.switch.agents:
            have, limit = agent.resources, agent.limits
            assert have.queued <= limit.queued, (agent.index, have, limit)
            assert have.local_replies <= limit.local_replies, (agent.index, have, limit)
            assert have.tx_halves <= limit.tx_halves, (agent.index, have, limit)
            assert have.rx_halves <= limit.rx_halves, (agent.index, have, limit)
            assert have.occupied_buffers <= limit.occupied_buffers, (agent.index, have, limit)
        tags = self.switch.tags
        assert 0 <= tags.count <= tags.capacity
        for acc in HONEST:  # an honest port is never faulted by a peer's input
            assert acc not in self.switch.faulted_ports, self.switch.faulted_ports

    def finish(self, max_slots: int) -> None:
        """Run until every honest op has completed (at most ``max_slots``: a starved op
        fails here), then compare every honest span with the model."""
        waited = 0
        while self.pending:
            assert waited < max_slots, (
                f"{len(self.pending)} honest ops still pending after {max_slots} slots: "
                f"{sorted(self.pending)[:5]}")
            self.step(16)
            waited += 16
        for dst in HONEST:  # every honest span, touched or not
            for src in HONEST:
                model = self.models.get((src, dst), {})
                got = self.memories[dst].peek(BASE + src * SPAN, SPAN)
                assert got == model_read(model, BASE + src * SPAN, SPAN), (
                    f"memory of {dst}, span of {src}, differs from the model")
