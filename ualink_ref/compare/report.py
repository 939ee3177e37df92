"""The side-by-side report: RoCEv2 frames vs ualink_ref flits, op by op and size by size.

Both sides are counted, not computed from a formula: the RoCEv2 side from
frames built with Scapy (:func:`ualink_ref.scapy.roce.count_mapping`, passed in), the
ualink side by running the stack (:func:`ualink_side.measure_ualink`).

Two accounting levels, never mixed in one figure:

* ``mac`` — RoCEv2: frame + preamble/SFD + inter-frame gap; ualink: DL flits
  × 640 bytes (headers, segment headers and CRC included);
* ``wire`` — after the physical coding: RoCEv2 × 257/256 (256b/257b) ×
  544/514 (RS(544,514)); ualink: one 680-byte RS(544,514) codeword per flit.

Efficiency is useful payload ÷ bytes, with the useful payload of
:class:`~ualink_ref.compare.mapping.CompareOp` (the same for both stacks).
"""

from __future__ import annotations

import csv
import io
import json
import random
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, fields
from fractions import Fraction
from typing import Any

from ualink_ref.compare import headers as H
from ualink_ref.compare.mapping import ATOMIC_KINDS, ZERO, CompareOp, FwdRev, map_op
from ualink_ref.compare.ualink_side import (
    NO_BREAKDOWN,
    Breakdown,
    UalinkCount,
    measure_ualink,
    ualink_requests,
)

LEVELS = ("mac", "wire")
LOAD_STORE_SIZES: tuple[int, ...] = (8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096)
ATOMIC_SIZES: tuple[int, ...] = (4, 8)
#: How many copies of an op are streamed through the ualink stack per measurement.
DEFAULT_REPEAT = 64

#: The documented mixed workload: (op, share of operations). See specs.
MIX: tuple[tuple[CompareOp, float], ...] = (
    (CompareOp("load", 64), 0.30),
    (CompareOp("load", 256), 0.20),
    (CompareOp("store", 64), 0.10),
    (CompareOp("store", 256), 0.30),
    (CompareOp("add", 8), 0.05),
    (CompareOp("cas", 8), 0.05),
)
MIX_DESCRIPTION = (
    "30% Load 64 B, 20% Load 256 B, 10% Store 64 B, 30% Store 256 B, "
    "5% atomic ADD 8 B, 5% atomic CAS 8 B (by operation count)"
)

RoceCounter = Callable[..., Any]
UalinkMeasure = Callable[..., UalinkCount]


@dataclass(frozen=True)
class Row:
    """One op at one size: bytes each way for both stacks, per op (ualink averaged)."""

    op: str
    size: int
    useful: FwdRev[int]
    roce_packets: int
    roce_round_trips: int
    roce_note: str
    roce_mac: FwdRev[float]
    roce_wire: FwdRev[float]
    ualink_requests: int
    ualink_tl_flits: FwdRev[float]
    ualink_dl_flits: FwdRev[float]
    ualink_mac: FwdRev[float]
    ualink_wire: FwdRev[float]
    #: DL flits per op that carried no TL bytes (ack-only flits), included in the above.
    ualink_ack_only: FwdRev[float] = ZERO
    ualink_flit_wire_bytes: int = 680
    #: TL flits of the whole measured stream, dissected (see ``UalinkCount``).
    ualink_breakdown: FwdRev[Breakdown] = NO_BREAKDOWN

    def columns(self) -> dict[str, Any]:
        """Every field, each per-direction one as two columns ``<name>_fwd``, ``<name>_rev``."""
        out: dict[str, Any] = {}
        for f in fields(self):
            value = getattr(self, f.name)
            out.update(value.columns(f.name) if isinstance(value, FwdRev) else {f.name: value})
        return out

    def bytes(self, stack: str, level: str, direction: str, busy: bool = False) -> float:
        """Bytes of ``stack`` ("roce"/"ualink") at ``level`` in ``direction`` (or "both").

        ``busy`` leaves out the ualink DL's ack-only flits (see the spec: on a
        link busy both ways the acks ride in data-flit headers); it changes
        nothing for RoCEv2, whose ACKs are packets of their own.
        """
        if direction == "both":
            return (self.bytes(stack, level, "fwd", busy)
                    + self.bytes(stack, level, "rev", busy))
        value: float = getattr(self, f"{stack}_{level}").of(direction)
        if busy and stack == "ualink":
            per = 640 if level == "mac" else self.ualink_flit_wire_bytes
            value -= self.ualink_ack_only.of(direction) * per
        return value

    def efficiency(self, stack: str, level: str, direction: str = "both",
                   busy: bool = False) -> float:
        """Useful payload ÷ bytes for ``stack`` at ``level`` (0 when nothing is useful)."""
        useful = self.useful.of(direction)
        total = self.bytes(stack, level, direction, busy)
        return useful / total if total else 0.0

    def ratio(self, level: str, busy: bool = False) -> float:
        """ualink efficiency ÷ RoCEv2 efficiency (> 1: ualink moves more per wire byte)."""
        roce = self.efficiency("roce", level)
        return self.efficiency("ualink", level, busy=busy) / roce if roce else 0.0


def make_row(op: CompareOp, *, pmtu: int, ip: str, ualink: UalinkCount, repeat: int,
             roce_counter: RoceCounter) -> Row:
    """Combine the RoCEv2 frame count and a ualink measurement of ``repeat`` × ``op``."""
    mapping = map_op(op, pmtu)
    rc = roce_counter(mapping, ip=ip)
    roce_mac = FwdRev(rc.mac_bytes_fwd, rc.mac_bytes_rev)
    return Row(
        op=op.label,
        size=op.size,
        useful=op.useful,
        roce_packets=len(mapping.packets),
        roce_round_trips=mapping.round_trips,
        roce_note=mapping.note,
        roce_mac=roce_mac.map(float),
        roce_wire=roce_mac.map(lambda mac: float(H.wire_bytes(mac))),
        ualink_requests=ualink_requests(op),
        ualink_tl_flits=ualink.tl_flits.per(repeat),
        ualink_dl_flits=ualink.dl_flits.per(repeat),
        ualink_mac=ualink.mac_bytes.per(repeat),
        ualink_wire=ualink.wire_bytes.per(repeat),
        ualink_ack_only=ualink.ack_only.per(repeat),
        ualink_flit_wire_bytes=ualink.wire_bytes_per_flit,
        ualink_breakdown=ualink.breakdown,
    )


def default_ops() -> list[CompareOp]:
    """Load and Store at 8 … 4096 bytes, every atomic kind at 4 and 8 bytes."""
    ops = [CompareOp(kind, n) for kind in ("load", "store") for n in LOAD_STORE_SIZES]
    ops += [CompareOp(kind, n) for kind in ATOMIC_KINDS for n in ATOMIC_SIZES]
    return ops


def mix_ops(count: int = 200, seed: int = 0) -> list[CompareOp]:
    """``count`` operations drawn in the :data:`MIX` proportions, in a seeded order."""
    ops: list[CompareOp] = []
    for op, share in MIX:
        ops += [op] * round(share * count)
    random.Random(seed).shuffle(ops)
    return ops


@dataclass(frozen=True)
class Headline:
    """The mixed workload as one figure per stack and level."""

    description: str
    ops: int
    useful: int
    roce_mac: int
    roce_wire: float
    ualink_mac: int
    ualink_wire: int
    ualink_method: str
    ualink_ack_only: int = 0
    ualink_flit_wire_bytes: int = 680

    def efficiency(self, stack: str, level: str, busy: bool = False) -> float:
        """Useful ÷ bytes for the whole mixed workload (``busy``: see :meth:`Row.bytes`)."""
        total: float = getattr(self, f"{stack}_{level}")
        if busy and stack == "ualink":
            total -= self.ualink_ack_only * (640 if level == "mac" else self.ualink_flit_wire_bytes)
        return self.useful / total

    def ratio(self, level: str, busy: bool = False) -> float:
        """ualink ÷ RoCEv2 efficiency of the mix."""
        return self.efficiency("ualink", level, busy) / self.efficiency("roce", level)


def headline(roce_counter: RoceCounter, *, pmtu: int = 1024, ip: str = "ipv4",
             fec: str = "kp4", count: int = 200, seed: int = 0,
             measure: UalinkMeasure = measure_ualink) -> Headline:
    """Run the mixed workload through both stacks (RoCEv2: frames counted by
    ``roce_counter``, e.g. :func:`ualink_ref.scapy.roce.count_mapping`; ualink: one
    stream)."""
    counter = roce_counter
    ops = mix_ops(count, seed)
    useful = sum(op.useful_fwd + op.useful_rev for op in ops)
    roce_mac = 0
    for op in ops:
        fc = counter(map_op(op, pmtu), ip=ip)
        roce_mac += fc.mac_bytes_fwd + fc.mac_bytes_rev
    ua = measure(ops, fec=fec, seed=seed)
    return Headline(
        description=MIX_DESCRIPTION,
        ops=len(ops),
        useful=useful,
        roce_mac=roce_mac,
        roce_wire=float(H.wire_bytes(roce_mac)),
        ualink_mac=sum(ua.mac_bytes),
        ualink_wire=sum(ua.wire_bytes),
        ualink_method=ua.method,
        ualink_ack_only=sum(ua.ack_only),
        ualink_flit_wire_bytes=ua.wire_bytes_per_flit,
    )


@dataclass(frozen=True)
class Report:
    """Every row, the mixed-workload headline, and the literature figures."""

    pmtu: int
    ip: str
    fec: str
    repeat: int
    rows: tuple[Row, ...]
    headline: Headline
    literature: tuple[LiteratureFigure, ...]
    ualink_method: str


def build_report(roce_counter: RoceCounter, *, pmtu: int = 1024, ip: str = "ipv4",
                 fec: str = "kp4", ops: Sequence[CompareOp] | None = None,
                 repeat: int = DEFAULT_REPEAT, seed: int = 0,
                 measure: UalinkMeasure = measure_ualink) -> Report:
    """Measure every op of ``ops`` (default :func:`default_ops`) on both stacks, the
    RoCEv2 frames counted by ``roce_counter`` (the command line passes the Scapy-built
    :func:`ualink_ref.scapy.roce.count_mapping`)."""
    counter = roce_counter
    rows = []
    method = ""
    for op in ops if ops is not None else default_ops():
        ua = measure([op] * repeat, fec=fec, seed=seed)
        method = ua.method
        rows.append(make_row(op, pmtu=pmtu, ip=ip, ualink=ua, repeat=repeat,
                             roce_counter=counter))
    head = headline(counter, pmtu=pmtu, ip=ip, fec=fec, seed=seed, measure=measure)
    return Report(pmtu, ip, fec, repeat, tuple(rows), head, literature_figures(counter),
                  method or head.ualink_method)


# -- literature --------------------------------------------------------------


@dataclass(frozen=True)
class LiteratureFigure:
    """A figure the scale-up literature quotes, reproduced under its stated accounting."""

    name: str
    quoted: str
    payload: int
    overhead: int
    accounting: str

    @property
    def efficiency(self) -> float:
        """payload ÷ (payload + overhead)."""
        return self.payload / (self.payload + self.overhead)


def literature_figures(roce_counter: RoceCounter | None = None) -> tuple[LiteratureFigure, ...]:
    """The Ethernet "≈82 %", NVLink "≈94 %" and full RDMA WRITE "≈72 %" figures at 256 B.

    The first is the header table's sum; the third is counted from a built
    RDMA WRITE ONLY frame when Scapy is available (from the table otherwise —
    a test checks they agree).
    """
    s = H.size
    eth = s("ethernet") + s("ipv4") + s("udp") + s("bth") + s("icrc")
    write_frame = H.frame_bytes(("reth",), 256)
    if roce_counter is not None:
        write_frame = roce_counter(map_op(CompareOp("store", 256)), ip="ipv4").frame_bytes_fwd
    full = H.mac_bytes(write_frame) - 256
    return (
        LiteratureFigure(
            "Ethernet (RoCEv2 headers)", "about 82% at 256 B", 256, eth,
            "packet level: Ethernet 14 + IPv4 20 + UDP 8 + BTH 12 + one 4-byte CRC; "
            "no preamble, gap, FCS or RETH",
        ),
        LiteratureFigure(
            "NVLink", "about 94%", 256, 16,
            "256 B as 16 data flits of 16 B behind one 16-byte header flit (256/272); "
            "quoted accounting, no NVLink stack is modelled",
        ),
        LiteratureFigure(
            "Full RDMA WRITE ONLY (RoCEv2)", "≈72% at 256 B", 256, full,
            "MAC-level line time: preamble/SFD 8 + Ethernet 14 + IPv4 20 + UDP 8 + BTH 12 + "
            "RETH 16 + ICRC 4 + FCS 4 + gap 12, counted from the built frame",
        ),
    )


# -- rendering ---------------------------------------------------------------

_LEVEL_TEXT = {
    "mac": (
        "MAC level: RoCEv2 = frame + preamble/SFD 8 + IFG 12; "
        "ualink = DL flits x 640 B (headers, segment headers, CRC included); no FEC"
    ),
    "wire": (
        "on the wire after FEC: RoCEv2 = (frame + preamble + IFG) x 257/256 x 544/514; "
        "ualink = DL flits x 680 B (one RS(544,514) codeword per flit)"
    ),
}


def level_text(level: str) -> str:
    """One line saying what a byte count at ``level`` includes."""
    return _LEVEL_TEXT[level]


def _breakdown_text(items: tuple[tuple[str, int], ...]) -> str:
    return " ".join(f"{k.removeprefix('field:tl_')}={v}" for k, v in items)


def render_text(report: Report, level: str = "wire", breakdown: bool = False,
                narrow: bool = False) -> str:
    """The human-readable table, the headline and the literature figures.

    With ``breakdown``, each row is followed by the dissected TL flits of its
    measured ualink stream (half-flits by kind, control fields by format).
    With ``narrow``, the 'busy' columns are left out and each row's round trips
    and RoCEv2 mapping go on a line of their own, so the table fits 100 columns.
    """
    out = io.StringIO()
    w = out.write
    w(f"RoCEv2 vs ualink_ref: bytes per operation, {level_text(level)}\n")
    w(f"RoCEv2: {report.ip.upper()}, path MTU {report.pmtu}, frames built with Scapy. "
      f"ualink: {report.ualink_method}, FEC {report.fec}, "
      f"{report.repeat} ops streamed per row (per-op averages).\n")
    w("fwd = requester -> target, rev = target -> requester. eff = useful payload / bytes "
      "(both directions). ratio = ualink eff / RoCEv2 eff.\n"
      "UA bytes count every DL flit sent, including ack-only flits the DL sends in otherwise "
      "idle slots;\n'busy' leaves those out (on a link busy both ways acks ride in data-flit "
      "headers). RTs = round trips RoCEv2/ualink.\n\n")
    head = (f"{'op':<13}{'size':>6}  {'RoCE fwd':>9}{'RoCE rev':>9}{'eff':>7}  "
            f"{'UA fwd':>9}{'UA rev':>9}{'eff':>7}  {'ratio':>6}")
    head += "\n" if narrow else f"  {'busy':>6}{'ratio':>6}  {'RTs':>3}  RoCEv2 mapping\n"
    w(head)
    w("-" * (len(head) - 1 if narrow else len(head) + 20) + "\n")
    for r in report.rows:
        note = r.roce_note
        if r.ualink_requests > 1:
            note += f"; ualink: {r.ualink_requests} x 256 B requests"
        w(f"{r.op:<13}{r.size:>6}  {r.bytes('roce', level, 'fwd'):>9.1f}"
          f"{r.bytes('roce', level, 'rev'):>9.1f}{r.efficiency('roce', level):>7.1%}  "
          f"{r.bytes('ualink', level, 'fwd'):>9.1f}{r.bytes('ualink', level, 'rev'):>9.1f}"
          f"{r.efficiency('ualink', level):>7.1%}  {r.ratio(level):>6.2f}")
        if narrow:
            w(f"\n{'':19}round trips {r.roce_round_trips}/1; RoCEv2: {note}\n")
        else:
            w(f"  {r.efficiency('ualink', level, busy=True):>6.1%}{r.ratio(level, True):>6.2f}  "
              f"{r.roce_round_trips}/1  {note}\n")
        if breakdown:
            fwd, rev = r.ualink_breakdown.map(_breakdown_text)
            w(f"{'':19}ualink TL flits of {report.repeat} ops, fwd: {fwd}\n"
              f"{'':19}{'':26}rev: {rev}\n"
              f"{'':19}ualink ack-only DL flits per op: fwd {r.ualink_ack_only.fwd:.2f} "
              f"rev {r.ualink_ack_only.rev:.2f}\n")
    h = report.headline
    w(f"\nMixed workload ({h.ops} ops: {h.description}):\n")
    for lv in LEVELS:
        w(f"  {lv:<4}  RoCEv2 {h.efficiency('roce', lv):6.1%}   ualink "
          f"{h.efficiency('ualink', lv):6.1%} (busy {h.efficiency('ualink', lv, True):6.1%})   "
          f"ratio {h.ratio(lv):.2f} (busy {h.ratio(lv, True):.2f})   "
          f"({'on the wire after FEC' if lv == 'wire' else 'MAC level'})\n")
    w("\nLiterature figures at 256 B, each under its own accounting:\n")
    for f in report.literature:
        w(f"  {f.name:<32} {f.efficiency:6.1%}  (quoted: {f.quoted}; "
          f"{f.payload}/{f.payload + f.overhead}; {f.accounting})\n")
    return out.getvalue()


def _breakdown_column(items: Breakdown) -> str:
    return ";".join(f"{k}={v}" for k, v in items)


def _row_dict(r: Row, level: str) -> dict[str, Any]:
    d = r.columns()
    d.update(r.ualink_breakdown.map(_breakdown_column).columns("ualink_breakdown"))
    for lv in LEVELS:
        for stack in ("roce", "ualink"):
            d[f"{stack}_eff_{lv}"] = round(r.efficiency(stack, lv), 6)
            d[f"{stack}_eff_fwd_{lv}"] = round(r.efficiency(stack, lv, "fwd"), 6)
            d[f"{stack}_eff_rev_{lv}"] = round(r.efficiency(stack, lv, "rev"), 6)
        d[f"ratio_{lv}"] = round(r.ratio(lv), 6)
        d[f"ualink_eff_busy_{lv}"] = round(r.efficiency("ualink", lv, busy=True), 6)
        d[f"ratio_busy_{lv}"] = round(r.ratio(lv, busy=True), 6)
    for key, value in list(d.items()):
        if isinstance(value, float):
            d[key] = round(value, 4)
    return d


def render_csv(report: Report, level: str = "wire") -> str:
    """One CSV row per op and size, both levels' efficiencies in columns."""
    rows = [_row_dict(r, level) for r in report.rows]
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=list(rows[0]), lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    return out.getvalue()


def render_json(report: Report, level: str = "wire") -> str:
    """The whole report as JSON (rows, headline, literature, accounting text)."""
    h = report.headline
    doc = {
        "pmtu": report.pmtu,
        "ip": report.ip,
        "fec": report.fec,
        "repeat": report.repeat,
        "ualink_method": report.ualink_method,
        "levels": {lv: level_text(lv) for lv in LEVELS},
        "rows": [_row_dict(r, level) for r in report.rows],
        "headline": {
            **asdict(h),
            **{f"{s}_eff_{lv}": round(h.efficiency(s, lv), 6)
               for s in ("roce", "ualink") for lv in LEVELS},
            **{f"ratio_{lv}": round(h.ratio(lv), 6) for lv in LEVELS},
            **{f"ualink_eff_busy_{lv}": round(h.efficiency("ualink", lv, True), 6)
               for lv in LEVELS},
            **{f"ratio_busy_{lv}": round(h.ratio(lv, True), 6) for lv in LEVELS},
        },
        "literature": [
            {**asdict(f), "efficiency": round(f.efficiency, 6)} for f in report.literature
        ],
    }
    return json.dumps(doc, indent=2) + "\n"


def exact_wire(mac: int) -> Fraction:
    """RoCEv2 wire bytes for ``mac`` MAC bytes, exactly (for tests and specs)."""
    return H.wire_bytes(mac)
