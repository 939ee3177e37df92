"""Four protocols side by side: RoCEv2, SUE (AFH and full Ethernet), UET and ualink.

Adds the SUE and UET columns to a :class:`~ualink_ref.compare.report.Report`:
their frames are built and read back by :mod:`ualink_ref.scapy.scaleup`
(only frames that parse back to the values they were built from, at the
size the table gives, are counted), and the zero-load latency of a 64-byte
Load and Store per protocol from :mod:`ualink_ref.sim.latency`.
"""

from __future__ import annotations

import io
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from ualink_ref.compare import headers as H
from ualink_ref.compare import sue_uet as M
from ualink_ref.compare.mapping import CompareOp, FwdRev
from ualink_ref.compare.report import Report, Row, mix_ops
from ualink_ref.phy import wire_bytes_per_flit
from ualink_ref.sim import latency as L

#: Column order and labels.
STACKS: tuple[tuple[str, str], ...] = (
    ("roce", "RoCEv2"), ("sue-afh", "SUE-AFH"), ("sue-eth", "SUE-Eth"), ("uet", "UET"),
    ("ualink", "UALink"),
)
Counter = Callable[[CompareOp, str, int], Any]


@dataclass(frozen=True)
class Cell:
    """One protocol's bytes for one op: MAC level per direction, and how it was mapped."""

    mac: FwdRev[float]
    note: str = ""

    def bytes(self, level: str, direction: str = "both") -> float:
        """Bytes at ``level`` ("mac"/"wire") in ``direction`` ("fwd"/"rev"/"both")."""
        mac = self.mac.of(direction)
        return mac if level == "mac" else float(H.wire_bytes(Fraction(mac)))


@dataclass(frozen=True)
class FourRow:
    """One op at one size on every protocol."""

    op: str
    size: int
    useful: FwdRev[int]
    cells: dict[str, Cell]
    ualink_wire: FwdRev[float]

    def bytes(self, stack: str, level: str, direction: str = "both") -> float:
        """Bytes of ``stack`` (ualink: measured DL flits; wire = its own FEC)."""
        if stack == "ualink" and level == "wire":
            return self.ualink_wire.of(direction)
        return self.cells[stack].bytes(level, direction)

    def efficiency(self, stack: str, level: str, direction: str = "both") -> float:
        """Useful payload / bytes."""
        useful = self.useful.of(direction)
        total = self.bytes(stack, level, direction)
        return useful / total if total else 0.0


def _cell(fc: Any, note: str) -> Cell:
    return Cell(FwdRev(float(fc.mac_bytes_fwd), float(fc.mac_bytes_rev)), note)


def four_row(row: Row, pmtu: int, counter: Counter) -> FourRow:
    """Extend a RoCEv2/ualink :class:`Row` with the SUE and UET columns."""
    kind = row.op.removeprefix("atomic-")
    op = CompareOp(kind, row.size)
    cells = {"roce": Cell(row.roce_mac, row.roce_note),
             "ualink": Cell(row.ualink_mac, "measured stack")}
    for proto in M.PROTOCOLS:
        cells[proto] = _cell(counter(op, proto, pmtu), M.map_op(op, proto, pmtu).note)
    return FourRow(row.op, row.size, row.useful, cells, row.ualink_wire)


def four_rows(report: Report, counter: Counter) -> list[FourRow]:
    """Every row of ``report`` with SUE and UET added, their frames counted by ``counter``
    (the command line passes the Scapy-built :func:`ualink_ref.scapy.scaleup.count_op`)."""
    c = counter
    return [four_row(r, report.pmtu, c) for r in report.rows]


def four_headline(report: Report, counter: Counter, seed: int = 0,
                  count: int = 200) -> dict[str, dict[str, float]]:
    """Efficiency of the mixed workload per protocol at both levels (same ops as the
    headline), SUE and UET frames counted by ``counter``."""
    c = counter
    h = report.headline
    ops = mix_ops(count, seed)
    out = {"roce": {"mac": h.efficiency("roce", "mac"), "wire": h.efficiency("roce", "wire")},
           "ualink": {"mac": h.efficiency("ualink", "mac"),
                      "wire": h.efficiency("ualink", "wire")}}
    for proto in M.PROTOCOLS:
        mac = sum(c(op, proto, report.pmtu).mac_bytes_fwd + c(op, proto, report.pmtu).mac_bytes_rev
                  for op in ops)
        out[proto] = {"mac": h.useful / mac, "wire": h.useful / float(H.wire_bytes(mac))}
    return {k: out[k] for k, _ in STACKS}


# -- latency -----------------------------------------------------------------

#: Switch hop latency and its source, per protocol (ns).
SWITCH_NS: dict[str, tuple[Fraction, str]] = {
    "ualink": (Fraction(200), "public: UALink consortium webinar Q&A, < 200 ns for a 51.2T switch"),
    "sue-afh": (Fraction(250), "public: Broadcom Tomahawk Ultra (51.2T), 250 ns"),
    "sue-eth": (Fraction(250), "public: Broadcom Tomahawk Ultra (51.2T), 250 ns"),
    "uet": (Fraction(250), "same 51.2T Ethernet switch class as SUE (project choice)"),
    "roce": (Fraction(250), "same 51.2T Ethernet switch class as SUE (project choice)"),
}
#: What each protocol's public material says about end-to-end latency (not modelled).
REPORTED: dict[str, str] = {
    "roce": "> 1.5 us memory to memory (reviews)",
    "sue-afh": "< 2 us RTT target (SUE framework)",
    "sue-eth": "< 2 us RTT target (SUE framework)",
    "uet": "no public figure",
    "ualink": "< 1 us scale-up budget",
}


@dataclass(frozen=True)
class LatencyRow:
    """Zero-load latency of one op on one protocol, decomposed."""

    stack: str
    op: str
    request_wire: float
    response_wire: float
    breakdown: L.Breakdown


def latency_rows(rows: list[FourRow], *, fec: str = "kp4", cable_m: float = 2.0,
                 hops: int = 1, processing_ns: float = 0.0) -> list[LatencyRow]:
    """64-byte Load and Store on every protocol: round trip through ``hops`` switches."""
    out = []
    for label in ("load", "store"):
        row = next(r for r in rows if r.op == label and r.size == 64)
        for stack, _ in STACKS:
            cw = L.LL_CODEWORD_BITS if (stack == "ualink" and fec == "ll") else L.KP4_CODEWORD_BITS
            link = L.Link(codeword_bits=cw, cable_m=Fraction(cable_m))
            sw, src = SWITCH_NS[stack]
            proto = L.Protocol(stack, sw, Fraction(processing_ns), src)
            if stack == "ualink":  # one DL flit each way carries a 64-byte op

                req = resp = float(wire_bytes_per_flit(fec))
            else:
                req, resp = row.bytes(stack, "wire", "fwd"), row.bytes(stack, "wire", "rev")
            bd = L.round_trip(Fraction(req), Fraction(resp), link, proto, hops)
            out.append(LatencyRow(stack, label, req, resp, bd))
    return out


# -- rendering ---------------------------------------------------------------


def render_text(report: Report, rows: list[FourRow], head: dict[str, dict[str, float]],
                lat: list[LatencyRow], level: str = "wire") -> str:
    """Four-protocol tables (each fits in 100 columns): efficiency, headline, latency."""
    out = io.StringIO()
    w = out.write
    w(f"\nFour protocols, {level} level: bytes per op (both directions) and efficiency.\n")
    w("SUE-AFH/SUE-Eth/UET frames built field by field and read back with Scapy; SUE header\n"
      "layouts are project layouts of public sizes (specs/comparison.md). * = emulated op.\n")
    w(f"{'op':<12}{'size':>5}" + "".join(f"{lab:>16}" for _, lab in STACKS) + "\n")
    for r in rows:
        cells = ""
        for stack, _ in STACKS:
            mark = "*" if "emulated" in r.cells[stack].note else " "
            cells += f"{r.bytes(stack, level):>8.0f}{r.efficiency(stack, level):>7.1%}{mark}"
        w(f"{r.op:<12}{r.size:>5}{cells}".rstrip() + "\n")
    w(f"\nMixed workload, four protocols ({report.headline.ops} ops, same mix as above):\n")
    for lv, text in (("mac", "MAC level"), ("wire", "wire, after FEC")):
        w(f"  {lv:<4}" + "".join(f"  {lab} {head[s][lv]:5.1%}" for s, lab in STACKS)
          + f"  ({text})\n")
    w("\nZero-load latency, 64 B op, round trip via 1 switch, 4 x 200G lanes, ns "
      "(specs/comparison.md):\n")
    w(f"{'proto':<9}{'op':<6}{'serial':>7}{'FEC acc':>8}{'FEC dec':>8}{'cable':>6}"
      f"{'switch':>7}{'proc':>5}{'total':>7}  reported / budget\n")
    for x in lat:
        b = x.breakdown
        lab = dict(STACKS)[x.stack]
        w(f"{lab:<9}{x.op:<6}{float(b.serialization):>7.1f}{float(b.fec_accumulation):>8.1f}"
          f"{float(b.fec_decode):>8.1f}{float(b.cable):>6.0f}{float(b.switch):>7.0f}"
          f"{float(b.processing):>5.0f}{float(b.total):>7.1f}  {REPORTED[x.stack]}\n")
    w("  FEC decode and endpoint processing are parameters with no public figure (0 ns here);\n"
      "  UALink measured on the fabric model below (loaded: --loaded; sim.latency.loaded).\n")
    return out.getvalue()


def as_json(rows: list[FourRow], head: dict[str, dict[str, float]],
            lat: list[LatencyRow]) -> dict[str, Any]:
    """The four-protocol results as a JSON-ready dict."""
    return {
        "rows": [{"op": r.op, "size": r.size, **{
            f"{s}_{lv}_{d}": round(r.bytes(s, lv, d), 4)
            for s, _ in STACKS for lv in ("mac", "wire") for d in ("fwd", "rev")}, **{
            f"{s}_eff_{lv}": round(r.efficiency(s, lv), 6)
            for s, _ in STACKS for lv in ("mac", "wire")}, **{
            f"{s}_note": r.cells[s].note for s, _ in STACKS}} for r in rows],
        "headline": {s: {lv: round(v, 6) for lv, v in d.items()} for s, d in head.items()},
        "latency_ns": [{"stack": x.stack, "op": x.op, "request_wire_bytes": x.request_wire,
                        "response_wire_bytes": x.response_wire,
                        **{k: round(v, 3) for k, v in x.breakdown.as_dict().items()}}
                       for x in lat],
    }
