"""Produce captures: two full stacks over a seeded channel, every wire flit recorded.

:class:`CaptureLink` is a small sans-IO harness of its own (it does not
change the simulator): endpoint A (accelerator 0) and B (accelerator 1) are
each a :class:`~ualink_ref.tl.TransactionLayer` over a
:class:`~ualink_ref.dl.DataLink`; DL flits are FEC-encoded
(:func:`ualink_ref.phy.encode_flits`), pass a seeded bit-error channel and
optional scripted bit flips, and are FEC-decoded at the receiver. Each flit
the receiver gets is recorded as a ``dl_flit`` record (and, with
``raw_codewords``, the wire bytes before decoding as a ``fec_codewords``
record), with deterministic timestamps ``slot * 25.6 ns``.

Workloads are lists of ``ualink_ref.stack.sim.Op`` (the simulator's operations).
:data:`SCENARIOS` holds the scripted scenarios whose captures are committed
under ``vectors/`` (see ``specs/capture.md``). :func:`capture_simulation`
records runs of ``ualink_ref.stack.sim.Simulation`` instead.
"""

from __future__ import annotations

import random
from collections import deque
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from ualink_ref.capture.format import CaptureRecord
from ualink_ref.dl import DataLink, TLFlitDelivered
from ualink_ref.phy import BitErrorChannel, apply_bit_errors, decode_flits, encode_flits
from ualink_ref.stack.endpoint import Endpoint
from ualink_ref.stack.sim import Burst, Op, SimReport, Simulation, random_workload
from ualink_ref.tl import Completion, CreditConfig, TransactionLayer
from ualink_ref.tl.upli import AtomicOp

#: pcap timestamp step per flit slot: 680 wire bytes at 212.5 Gb/s = 25.6 ns
#: (project choice: 200G lane rate with RS(544,514) overhead; fixed for every mode).
SLOT_NS = 25.6
#: TL flits held ahead of the DL per side (project choice: keeps DL flits full).
_TL_AHEAD = 20


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


@dataclass
class _Side:
    name: str
    tl: TransactionLayer
    dl: DataLink
    pipe: deque[tuple[int, bytes, int]] = field(default_factory=deque)  # (arrival, wire, index)
    sent: int = 0  # DL flits transmitted


class CaptureLink:
    """Two stacks over one link, recording what each receiver gets (see module docstring)."""

    def __init__(
        self,
        *,
        fec: str = "kp4",
        ber: float = 0.0,
        seed: int = 0,
        delay: int = 2,
        raw_codewords: bool = False,
        credits_b: CreditConfig | None = None,
        flips: dict[tuple[str, int], Sequence[int]] | None = None,
        dl_options: dict[str, int | float] | None = None,
    ) -> None:
        opts = dict(dl_options or {})
        self.fec = fec
        self.delay = delay
        self.raw_codewords = raw_codewords
        self.sides = {
            "a": _Side("a", TransactionLayer(0), DataLink(**opts)),  # type: ignore[arg-type]
            "b": _Side("b", TransactionLayer(1, credits=credits_b),
                       DataLink(**opts)),  # type: ignore[arg-type]
        }
        rng = random.Random(seed)
        self.channels = {
            s: BitErrorChannel(ber, rng.randrange(2**32)) if ber > 0 else None for s in "ab"
        }
        #: (sending side, index of its transmitted DL flit) -> wire bit positions to flip.
        self.flips = dict(flips or {})
        self.records: list[CaptureRecord] = []
        self.completions: dict[str, list[Completion]] = {"a": [], "b": []}
        #: TL flits each receiver's DataLink delivered, by direction (for cross-checks).
        self.delivered: dict[str, list[bytes]] = {"a_to_b": [], "b_to_a": []}
        self.slot = 0
        self.flipped = 0

    def issue(self, op: Op) -> int:
        """Queue ``op`` (a ``ualink_ref.stack.sim.Op``) on its side's TL; return the handle."""
        side = self.sides[op.side]
        return op.issue(side.tl, 1 if op.side == "a" else 0)  # type: ignore[arg-type]

    def step(self) -> int:
        """One flit slot; returns the number of DL flits transmitted in it."""
        now = float(self.slot)
        sent = 0
        for name, side in self.sides.items():
            while side.dl.tx_backlog < _TL_AHEAD:
                tl_flit = side.tl.poll_flit()
                if tl_flit is None:
                    break
                side.dl.send([tl_flit])
            timer = side.dl.next_timer()
            if timer is not None and timer <= now:
                side.dl.handle_timer(now)
            flit = side.dl.poll(now)
            if flit is None:
                continue
            wire = encode_flits(flit, self.fec)
            channel = self.channels[name]
            if channel is not None:
                wire = channel.apply(wire)
            bits = self.flips.get((name, side.sent))
            if bits:
                wire = apply_bit_errors(wire, list(bits))
                self.flipped += 1
            side.pipe.append((self.slot + self.delay, wire, side.sent))
            side.sent += 1
            sent += 1
        for name, side in self.sides.items():
            peer = self.sides["b" if name == "a" else "a"]
            while side.pipe and side.pipe[0][0] <= self.slot:
                _arrival, wire, _index = side.pipe.popleft()
                self._deliver(name, wire, peer, now)
        for name, side in self.sides.items():
            while (c := side.tl.next_event()) is not None:
                self.completions[name].append(c)
        self.slot += 1
        return sent

    def _deliver(self, sender: str, wire: bytes, peer: _Side, now: float) -> None:
        res = decode_flits(wire, self.fec)
        direction = "a_to_b" if sender == "a" else "b_to_a"
        port = 0 if sender == "a" else 1
        ts = round(self.slot * SLOT_NS)
        if self.raw_codewords:
            self.records.append(CaptureRecord(wire, "fec_codewords", direction, self.fec, port,
                                              slot=self.slot, timestamp_ns=ts))
        self.records.append(CaptureRecord(
            res.flits, "dl_flit", direction, self.fec, port,
            symbols_corrected=int(res.corrected[0]), uncorrectable=bool(res.uncorrectable[0]),
            slot=self.slot, timestamp_ns=ts))
        for event in peer.dl.receive(res.flits, now):
            if isinstance(event, TLFlitDelivered):
                self.delivered[direction].append(event.data)
                peer.tl.receive_flit(event.data)

    @property
    def busy(self) -> bool:
        """True while either side has TL work, DL work, or flits on the wire."""
        return any(s.tl.busy or not s.dl.idle or s.pipe or s.dl.tx_backlog
                   for s in self.sides.values())

    def run(self, ops: Iterable[Op], *, max_slots: int = 200_000,
            until: Callable[[CaptureLink], bool] | None = None) -> CaptureResult:
        """Issue ``ops`` and step until everything completed and the link is idle."""
        for op in ops:
            self.issue(op)
        quiet = 0
        while self.slot < max_slots:
            sent = self.step()
            if until is not None and until(self):
                break
            quiet = quiet + 1 if sent == 0 and not self.busy else 0
            if quiet >= 2:
                break
        else:
            raise RuntimeError(f"capture run still busy after {max_slots} slots")
        return CaptureResult(
            self.records, self.completions, self.delivered, self.slot,
            crc_errors=sum(s.dl.counters.crc_errors for s in self.sides.values()),
            replays=sum(s.dl.counters.replays for s in self.sides.values()),
            flips=self.flipped,
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


@dataclass(frozen=True)
class Scenario:
    """A scripted capture: workload, link settings, and what it demonstrates."""

    name: str
    description: str
    ops: Callable[[], list[Op]]
    settings: dict[str, object] = field(default_factory=dict)
    container: str = "pcap"  # file format of the committed capture

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
    )
}


def run_scenario(name: str) -> CaptureResult:
    """Run scenario ``name`` and return its records (deterministic)."""
    scenario = SCENARIOS[name]
    link = CaptureLink(**scenario.settings)  # type: ignore[arg-type]
    return link.run(scenario.ops())




# -- captures of the simulator's runs ------------------------------------------------


class CaptureIncomplete(RuntimeError):
    """The simulation got stuck (e.g. a bit-error rate no retry gets through).

    ``records`` holds what the link carried until then — a capture of a link
    that cannot make progress is still worth reading.
    """

    def __init__(self, message: str, records: list[CaptureRecord]) -> None:
        super().__init__(message)
        self.records = records


def capture_simulation(
    workload: Iterable[Op],
    *,
    fec: str = "kp4",
    ber: float = 0.0,
    burst: Burst | None = None,
    seed: int = 0,
    raw_codewords: bool = False,
    **options: Any,
) -> tuple[list[CaptureRecord], SimReport]:
    """Run ``ualink_ref.stack.sim.Simulation`` and record every wire chunk each endpoint receives.

    Takes what :func:`ualink_ref.stack.sim.simulate` takes (a workload of
    ``ualink_ref.stack.sim.Op``, FEC mode, BER, bursts, seed, options). The
    simulator is not modified: each endpoint's ``receive`` is wrapped on the
    instance, the wire bytes are FEC-decoded once more here (the same
    decoder), and each flit becomes a ``dl_flit`` record (plus the chunk as a
    ``fec_codewords`` record with ``raw_codewords``). Records of one received
    batch get consecutive slots from the batch's arrival slot. Returns
    ``(records, report)``; raises :class:`CaptureIncomplete` (with the
    records so far) when the simulator reports itself stuck.
    """
    sim = Simulation(workload, fec=fec, ber=ber, burst=burst, seed=seed, **options)
    records: list[CaptureRecord] = []
    for endpoint, direction, port in ((sim.b, "a_to_b", 0), (sim.a, "b_to_a", 1)):
        # Wrap the instance's method (the simulator's module is not changed).
        endpoint.receive = _recording(  # type: ignore[method-assign,assignment]
            endpoint, direction, port, raw_codewords, records)
    try:
        report = sim.run()
    except RuntimeError as exc:  # the simulator's "stuck" guard
        raise CaptureIncomplete(str(exc), records) from exc
    return records, report


def _recording(endpoint: Endpoint, direction: str, port: int, raw: bool,
               records: list[CaptureRecord]) -> Callable[[bytes, float], None]:
    inner = endpoint.receive
    fec, interleave = endpoint.phy, endpoint.interleave

    def receive(data: bytes, now: float) -> None:
        slot = int(now)
        if raw:
            records.append(CaptureRecord(bytes(data), "fec_codewords", direction, fec, port,
                                         interleave=interleave, slot=slot,
                                         timestamp_ns=round(slot * SLOT_NS)))
        res = decode_flits(data, fec, interleave)
        for i in range(len(res.flits) // 640):
            records.append(CaptureRecord(
                res.flits[640 * i:640 * (i + 1)], "dl_flit", direction, fec, port,
                interleave=interleave, symbols_corrected=int(res.corrected[i]),
                uncorrectable=bool(res.uncorrectable[i]), slot=slot + i,
                timestamp_ns=round((slot + i) * SLOT_NS)))
        inner(data, now)

    return receive


__all__ = ["SCENARIOS", "SLOT_NS", "CaptureIncomplete", "CaptureLink", "CaptureResult", "Scenario",
           "capture_simulation", "run_scenario"]
