"""Produce captures: runs of the one harness, every wire chunk recorded by a tap.

A :class:`Recorder` is a tap on a :class:`~ualink_ref.net.harness.Network`:
for every chunk a receiving endpoint gets it writes a ``dl_flit`` record per
flit (the bytes after FEC decoding and the decoder's verdict, both taken from
the endpoint's own :class:`~ualink_ref.node.endpoint.FecDecoded` event — the
FEC runs once) and, with ``raw_codewords``, the wire bytes before decoding as
a ``fec_codewords`` record. Record ``k`` of a chunk received at slot ``s`` has
slot ``s + k`` and timestamp ``slot * 25.6 ns`` (:data:`~ualink_ref.sizes.SLOT_NS`).

Two runs use it:

* :class:`CaptureLink` — the scripted scenarios: endpoints A and B
  (accelerators 0 and 1, as the committed captures were recorded) one flit
  per slot (``edge="last_slot"``), a seeded bit-error channel and scripted
  bit flips per transmitted flit. :data:`SCENARIOS` holds the scenarios whose
  captures are committed under ``vectors/`` (``specs/capture.md``).
* :func:`capture_simulation` — a run of :class:`ualink_ref.sim.link_run.Simulation`.

Workloads are lists of ``ualink_ref.sim.Op`` (the simulator's operations).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from ualink_ref.capture.format import CaptureRecord
from ualink_ref.dl import TLFlitDelivered
from ualink_ref.dl.config import DLConfig, LinkStateConfig
from ualink_ref.dl.messages import UnknownMessage, VendorMessage
from ualink_ref.errors import CaptureIncomplete, ConfigError, LinkStalledError
from ualink_ref.net.channels import RandomBitErrors, ScriptedFlips
from ualink_ref.net.harness import Channel, Network, WireChunk, chain
from ualink_ref.node.config import EndpointConfig, LinkConfig
from ualink_ref.node.endpoint import Endpoint
from ualink_ref.node.linkend import FecDecoded
from ualink_ref.sim.config import SimConfig
from ualink_ref.sim.faults import FaultPlan
from ualink_ref.sim.link_report import SimReport
from ualink_ref.sim.link_run import Simulation
from ualink_ref.sim.workloads import Op, random_workload
from ualink_ref.sizes import DL_FLIT_BYTES, SLOT_NS, WIRE_BYTES_PER_FLIT, FecMode
from ualink_ref.tl import CreditConfig
from ualink_ref.tl.config import TLConfig
from ualink_ref.tl.events import Completion, FieldRejected, LateResponse
from ualink_ref.tl.upli import AtomicOp

#: Capture direction and pseudo-header port of each sending port.
_DIRECTION = {"a": ("a_to_b", 0), "b": ("b_to_a", 1)}


class Recorder:
    """A harness tap writing capture records of what the network's ports receive.

    ``directions`` maps each sending port's name to the record's direction and
    pseudo-header port (default: a two-endpoint link, ports ``a`` and ``b``);
    a switched fabric maps every accelerator and switch port
    (:func:`ualink_ref.capture.run.fabric_directions`). Chunks from ports not in
    the map are not recorded.
    """

    def __init__(self, fec: FecMode, interleave: int = 1, raw_codewords: bool = False,
                 directions: dict[str, tuple[str, int]] | None = None) -> None:
        self.directions = _DIRECTION if directions is None else directions
        self.fec = fec
        self.interleave = interleave
        self.raw_codewords = raw_codewords
        self.records: list[CaptureRecord] = []
        #: TL flits each receiver's DataLink delivered, by direction (for cross-checks).
        self.delivered: dict[str, list[bytes]] = {"a_to_b": [], "b_to_a": []}

    def __call__(self, chunk: WireChunk) -> None:
        """Record one received chunk (a lost one leaves no record)."""
        if chunk.received is None or chunk.src not in self.directions:
            return
        direction, port = self.directions[chunk.src]
        slot = int(chunk.received_at)
        if self.raw_codewords:
            self.records.append(CaptureRecord(
                chunk.received, "fec_codewords", direction, self.fec, port,
                interleave=self.interleave, slot=slot, timestamp_ns=round(slot * SLOT_NS)))
        for event in chunk.events:
            if type(event) is FecDecoded:
                self._flits(event, direction, port, slot)
            elif type(event) is TLFlitDelivered:
                self.delivered.setdefault(direction, []).append(event.data)

    def ordered(self) -> list[CaptureRecord]:
        """The records in time order: both directions merged by slot.

        The harness hands the taps one direction's chunk, then the other's, so
        records arrive grouped by direction; a capture file is in time order
        (what ``capinfos`` and Wireshark expect). The sort is stable: records of
        one slot keep their arrival order (a chunk's raw codewords before its flits).
        """
        return sorted(self.records, key=lambda r: r.slot)

    def _flits(self, decoded: FecDecoded, direction: str, port: int, slot: int) -> None:
        for k, (corrected, bad) in enumerate(zip(decoded.corrected, decoded.uncorrectable,
                                                 strict=True)):
            self.records.append(CaptureRecord(
                decoded.flits[DL_FLIT_BYTES * k:DL_FLIT_BYTES * (k + 1)], "dl_flit", direction,
                self.fec, port, interleave=self.interleave, symbols_corrected=corrected,
                uncorrectable=bad, slot=slot + k, timestamp_ns=round((slot + k) * SLOT_NS)))


def fabric_directions(accelerators: int, planes: int = 1) -> dict[str, tuple[str, int]]:
    """Recorder directions for a pod (:mod:`ualink_ref.sim.fabric`): what accelerator i
    of plane p sends is ``a_to_b`` and what switch port i sends back ``b_to_a``, both with
    pseudo-header port ``p * accelerators + i`` (which must fit its 8 bits)."""
    if planes * accelerators > 256:
        raise ValueError(f"{planes * accelerators} links do not fit the 8-bit port field")
    out = {}
    for p in range(planes):
        for i in range(accelerators):
            out[f"p{p}.acc{i}"] = ("a_to_b", p * accelerators + i)
            out[f"p{p}.sw{i}"] = ("b_to_a", p * accelerators + i)
    return out


@dataclass
class CaptureResult:
    """Records of a run and what it did."""

    records: list[CaptureRecord]
    completions: dict[str, list[Completion]]
    delivered: dict[str, list[bytes]]
    slots: int
    crc_errors: int = 0
    replays: int = 0
    flips: int = 0
    #: Link state changes, ``(slot, side, old, new, cause)``, and UART bytes received.
    link_changes: tuple[tuple[float, str, str, str, str], ...] = ()
    uart: dict[str, bytes] = field(default_factory=dict)


class CaptureLink:
    """Two endpoints on the harness, one flit per slot, recording what each receiver gets.

    ``delay`` is the link latency in slots; ``ber`` and ``seed`` set a bit-error
    channel per direction; ``flips`` maps ``(sending side, index of its
    transmitted DL flit)`` to wire bit positions to flip. ``endpoint`` configures both
    endpoints (``None``: the defaults with FEC ``fec``, which may be given only then),
    ``credits_b`` end b's receive buffers; ``faults`` is a fault plan
    (:class:`~ualink_ref.sim.faults.FaultPlan` text) applied after the flips — its
    TL entries act on both endpoints (``poison`` before slot 0, ``stop-tag``).
    """

    def __init__(
        self,
        *,
        fec: FecMode | None = None,
        endpoint: EndpointConfig | None = None,
        ber: float = 0.0,
        seed: int = 0,
        delay: int = 2,
        raw_codewords: bool = False,
        credits_b: CreditConfig | None = None,
        flips: dict[tuple[str, int], Sequence[int]] | None = None,
        faults: str | None = None,
    ) -> None:
        if fec is not None and endpoint is not None:
            raise ConfigError("fec", "give it in endpoint.link.phy when endpoint is given")
        config = endpoint if endpoint is not None else EndpointConfig.with_fec(fec or "kp4")
        plan = FaultPlan.parse(faults, seed) if faults else None
        if plan is not None:
            stopped = plan.checked_stop_tags(config.tl.timeout_slots)
            config = replace(config, tl=replace(config.tl,
                                                stop_tags=config.tl.stop_tags | stopped))
        self.fec = config.link.phy.fec
        config_b = config if credits_b is None else replace(
            config, tl=replace(config.tl, credits=credits_b))
        self.a = Endpoint(0, config=config)
        self.b = Endpoint(1, config=config_b)
        if plan is not None:
            plan.apply_tl([self.a.memory, self.b.memory])
        #: The endpoints by side (each has ``tl`` and ``dl``).
        self.sides = {"a": self.a, "b": self.b}
        rng = random.Random(seed)
        noise = {s: RandomBitErrors(ber, rng.randrange(2**32)) if ber > 0 else None for s in "ab"}
        by_side: dict[str, dict[int, Sequence[int]]] = {"a": {}, "b": {}}
        for (side, index), bits in (flips or {}).items():
            by_side[side][index] = bits
        self._flips = {s: ScriptedFlips(by_side[s], WIRE_BYTES_PER_FLIT[self.fec]) for s in "ab"}
        self.network = Network(batch=1, edge="last_slot")
        self.network.add_port("a", self.a)
        self.network.add_port("b", self.b)
        planned: dict[str, Any] = {"ab": None, "ba": None}
        if plan is not None:
            planned = plan.channels(lambda: self.network.now, self.fec)
        self.network.connect("a", "b", latency=delay,
                             channel_ab=chain([noise["a"], self._flips["a"], planned["ab"]]),
                             channel_ba=chain([noise["b"], self._flips["b"], planned["ba"]]))
        self.recorder = Recorder(self.fec, raw_codewords=raw_codewords)
        self.network.add_tap(self.recorder)
        self.completions: dict[str, list[Completion]] = {"a": [], "b": []}
        #: Every other TL event (rejected fields, late responses) each side reported.
        self.tl_events: dict[str, list[Any]] = {"a": [], "b": []}

    @property
    def slot(self) -> int:
        """The next slot to run."""
        return int(self.network.now)

    def issue(self, op: Op) -> int:
        """Queue ``op`` (a ``ualink_ref.sim.Op``) on its side; return the handle."""
        side = self.sides[op.side]
        return op.issue(side, 1 - side.acc_id)

    def step(self) -> int:
        """One flit slot; returns the number of DL flits transmitted in it."""
        before = self.a.counters.flits_sent + self.b.counters.flits_sent
        events = self.network.step()
        events += [(name, e) for name, ep in self.sides.items() for e in ep.drain_events()]
        for port, event in events:
            if type(event) is Completion:
                self.completions[port].append(event)
            elif type(event) in (FieldRejected, LateResponse):
                self.tl_events[port].append(event)
        return self.a.counters.flits_sent + self.b.counters.flits_sent - before

    def run(self, ops: Iterable[Op], *, max_slots: int = 200_000,
            until: Callable[[CaptureLink], bool] | None = None) -> CaptureResult:
        """Issue ``ops`` and step until everything completed and the link is idle
        (nothing sent and nothing busy for two slots in a row), or ``until(self)``."""
        for op in ops:
            self.issue(op)
        quiet = 0
        while self.slot < max_slots:
            sent = self.step()
            if until is not None and until(self):
                break
            quiet = quiet + 1 if sent == 0 and not self.network.busy else 0
            if quiet >= 2:
                break
        else:
            raise LinkStalledError(self.slot, "capture run still busy")
        return CaptureResult(
            self.recorder.ordered(), self.completions, self.recorder.delivered, self.slot,
            crc_errors=self.a.dl.counters.crc_errors + self.b.dl.counters.crc_errors,
            replays=self.a.dl.counters.replays + self.b.dl.counters.replays,
            flips=self._flips["a"].flipped + self._flips["b"].flipped,
            link_changes=tuple((c.now, side, c.old.value, c.new.value, c.cause)
                               for side, ep in self.sides.items() for c in ep.link.changes),
            uart={side: bytes(ep.uart_received) for side, ep in self.sides.items()
                  if ep.uart_received},
        )


# -- scripted scenarios -----------------------------------------------------------


def _pattern(n: int, salt: int) -> bytes:
    return bytes((i * 7 + salt) & 0xFF for i in range(n))


def _clean() -> list[Op]:
    ops = [Op("a", "write", 0x1000 + 0x100 * i, data=_pattern(64 * (i % 4 + 1), i))
           for i in range(4)]
    ops += [Op("a", "read", 0x1000 + 0x100 * i, length=64 * (i % 4 + 1)) for i in range(4)]
    ops += [Op("b", "write", 0x2000, data=_pattern(16, 9), byte_enable=0xFFFF),
            Op("b", "read", 0x2000, length=16)]
    return ops


def _bulk(n: int) -> list[Op]:
    return [Op("a", "write", 0x10000 + 0x100 * i, data=_pattern(256, i)) for i in range(n)]


def _atomics() -> list[Op]:
    ops: list[Op] = []
    addr = 0x3000
    for op in AtomicOp:
        for size in (4, 8):
            compare = 0 if op is AtomicOp.CAS else None
            for fetch in (True, False):
                ops.append(Op("a", "atomic", addr, atomic_op=int(op), operand=5,
                              compare=compare, size=size, fetch=fetch))
                addr += 8
    return ops


def _split_reads() -> list[Op]:
    ops = [Op("a", "write", 0x1000, data=_pattern(256, 1)),
           Op("a", "write", 0x1100, data=_pattern(192, 2))]
    ops += [Op("a", "read", 0x1000, length=256), Op("a", "read", 0x1100, length=192),
            Op("a", "read", 0x1004, length=124), Op("a", "read", 0x1000, length=64)]
    return ops


def _poison_prepare(link: CaptureLink) -> None:
    # A WriteFull whose second beat is poisoned (attr bit 1): the target stores it and
    # poisons 0x1240..0x127f. Issued before the scenario's ops.
    link.a.write(1, 0x1200, _pattern(128, 3), poison=0b10)


def _poison_ops() -> list[Op]:
    return [
        Op("a", "read", 0x1000, length=256),  # beat 1 poisoned by the plan: 3 pieces
        Op("a", "read", 0x1040, length=64),  # every beat poisoned: one DATA_ERROR
        Op("a", "atomic", 0x1050, atomic_op=int(AtomicOp.ADD), operand=1, size=8),
        Op("a", "read", 0x1200, length=128),  # the poisoned write's beat 1
        Op("a", "write", 0x1040, data=_pattern(64, 4)),  # clears the poison
        Op("a", "read", 0x1000, length=256),  # all OKAY now
    ]


def _timeout_ops() -> list[Op]:
    return [Op("a", "read", 0x1000 + 0x40 * i, length=64) for i in range(4)]


@dataclass(frozen=True)
class Scenario:
    """A scripted capture: workload, link settings, and what it demonstrates."""

    name: str
    description: str
    ops: Callable[[], list[Op]]
    settings: dict[str, object] = field(default_factory=dict)
    container: str = "pcap"  # file format of the committed capture
    #: Called on the link before the ops are issued (DL messages to send, rates).
    prepare: Callable[[CaptureLink], None] | None = None

    @property
    def artifact(self) -> str:
        """Path of the committed capture, relative to ``vectors/``."""
        return f"captures/{self.name}.{self.container}"


#: The committed scenario captures (``vectors/captures/<name>.pcap`` / ``.pcapng``).
SCENARIOS: dict[str, Scenario] = {
    s.name: s
    for s in (
        Scenario("clean", "Reads, WriteFulls and a partial Write both ways, no errors", _clean),
        Scenario(
            "replay",
            "Bulk writes A->B; A's 3rd DL flit is corrupted on the wire beyond FEC repair "
            "(40 symbol errors), B drops it (CRC), requests a replay, A replays",
            lambda: _bulk(12),
            {"fec": "kp4", "flips": {("a", 2): [30 * k + 3 for k in range(40)]}},
        ),
        Scenario(
            "credits",
            "B grants few credits (1 request, 5 data buffers per VC, none pooled): A's "
            "writes stall until B returns credits in flow-control fields",
            lambda: _bulk(10),
            {"credits_b": CreditConfig(per_vc=(1, 8, 5, 16), pool=(0, 0, 0, 0))},
        ),
        Scenario("atomics", "Every atomic op, 4 and 8 bytes, AtomicR and AtomicNR", _atomics),
        Scenario(
            "fec_codewords",
            "30 random ops over an LL-FEC link at pre-FEC BER 2e-3: each received flit as "
            "raw RS(272,258) codewords (fec_codewords record) and decoded (dl_flit record), "
            "with corrections, uncorrectable codewords, CRC errors and replays; pcapng",
            lambda: list(random_workload(30, 3)),
            {"fec": "ll", "ber": 2e-3, "seed": 3, "raw_codewords": True},
            container="pcapng",
        ),
        Scenario(
            "retrain",
            "Bulk writes A->B; the link goes down in slots 6-70 (fault plan 'down 6 70'): "
            "replays fail, both ends report RetrainNeeded and retrain (online request and "
            "ACK in control flits), then replay; every write completes once, OKAY",
            lambda: _bulk(12),
            {"faults": "down 6 70", "endpoint": EndpointConfig(link=LinkConfig(
                dl=DLConfig(replay_timeout=12, max_replays=2),
                link_state=LinkStateConfig(retrain_slots=24, max_retrains=3)))},
        ),
        Scenario(
            "pacing",
            "B sends a TL rate notification (rate 31: 32/256 of full rate); A's bulk writes "
            "then leave one data flit per 8 slots",
            lambda: _bulk(12),
            prepare=lambda link: link.b.notify_rate(31),
        ),
        Scenario(
            "uart",
            "A sends a 300-byte UART stream to B (150 two-byte messages, five per data flit, "
            "in NOP TL flits) while A's 3rd DL flit is corrupted and replayed; B receives "
            "every byte once, in order; B sends a vendor-defined message and an "
            "unknown-class word",
            lambda: [],
            {"fec": "kp4", "flips": {("a", 2): [30 * k + 3 for k in range(40)]}},
            prepare=lambda link: _uart_prepare(link),
        ),
        Scenario(
            "split",
            "A writes 256 and 192 bytes, then reads them back; B's target answers multi-beat "
            "reads in seeded random pieces sent in random order (offset = first beat, len = "
            "beats - 1, last on the piece sent last); A reassembles each read, completes once",
            _split_reads,
            {"endpoint": EndpointConfig(tl=TLConfig(split="random", split_seed=7))},
        ),
        Scenario(
            "poison",
            "B's byte 0x1050 is poisoned (fault plan 'poison 0x1050'); A writes 128 bytes with "
            "beat 1 poisoned (attr bit 1); A's reads come back as OKAY pieces with data and "
            "DATA_ERROR pieces without, an AtomicR on the poisoned byte is refused "
            "(DATA_ERROR), a WriteFull clears the poison",
            _poison_ops,
            {"faults": "poison 0x1050"},
            prepare=_poison_prepare,
        ),
        Scenario(
            "timeout",
            "B's target never answers wire tag 1 (fault plan 'stop-tag 1'); A's four reads "
            "go out, three are answered, the second completes TIMEOUT 40 slots after its "
            "request was sent (a local status: nothing on the wire); tag 1 stays quarantined",
            _timeout_ops,
            {"faults": "stop-tag 1", "endpoint": EndpointConfig(tl=TLConfig(timeout_slots=40))},
        ),
    )
}


def _uart_prepare(link: CaptureLink) -> None:
    from_a = bytes((i * 37 + 11) & 0xFF for i in range(300))
    link.a.uart_send(from_a)
    link.b.send_vendor(VendorMessage(5, 0x12345))
    link.b.dl.send_message(UnknownMessage(0b0011 << 2 | 0x5 << 9))  # class 0011: unknown


def run_scenario(name: str) -> CaptureResult:
    """Run scenario ``name`` and return its records (deterministic)."""
    scenario = SCENARIOS[name]
    link = CaptureLink(**scenario.settings)  # type: ignore[arg-type]
    if scenario.prepare is not None:
        scenario.prepare(link)
    return link.run(scenario.ops())




# -- captures of the simulator's runs ------------------------------------------------


def capture_simulation(
    workload: Iterable[Op],
    config: SimConfig | None = None,
    *,
    raw_codewords: bool = False,
    progress: Callable[[int], None] | None = None,
    faults: Mapping[str, Sequence[Channel]] | None = None,
    fault_plan: FaultPlan | None = None,
) -> tuple[list[CaptureRecord], SimReport]:
    """Run a :class:`~ualink_ref.sim.link_run.Simulation` with a :class:`Recorder` tap on
    its network.

    Takes what :func:`~ualink_ref.sim.link_run.simulate` takes (a workload of
    :class:`~ualink_ref.sim.workloads.Op`, a :class:`~ualink_ref.sim.config.SimConfig`,
    a fault plan). Returns
    ``(records, report)``, the records in time order; ``progress(n)`` gets newly
    completed op counts (as :meth:`~ualink_ref.sim.link_run.Simulation.run`). Raises
    :class:`~ualink_ref.errors.CaptureIncomplete` (with the records so far) when the
    simulation stalls.
    """
    sim = Simulation(workload, config, faults=faults, fault_plan=fault_plan)
    recorder = Recorder(sim.fec, sim.a.interleave, raw_codewords)
    sim.add_tap(recorder)
    try:
        report = sim.run(progress)
    except LinkStalledError as exc:
        raise CaptureIncomplete(exc, recorder.ordered()) from exc
    return recorder.ordered(), report


__all__ = ["SCENARIOS", "SLOT_NS", "CaptureIncomplete", "CaptureLink", "CaptureResult",
           "Recorder", "Scenario", "capture_simulation", "fabric_directions", "run_scenario"]
