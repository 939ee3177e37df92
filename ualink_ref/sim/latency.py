"""A static, zero-load latency model for one operation across a scale-up link or switch.

Pure Python (no numpy, no Scapy): time in nanoseconds as exact fractions.
The model adds up what a packet (or flit) must go through, one link at a time:

* **serialization** — its wire bytes (after FEC coding) at ``lanes`` x 200 Gb/s;
* **FEC accumulation** — a Reed-Solomon decoder needs a whole codeword before it
  can correct anything, so the receiver waits for the rest of the codeword that
  holds the packet's last bit (packets start on a codeword boundary);
* **FEC decode** — a parameter per FEC (no public figure is used);
* **cable** — 5 ns per metre (a parameter), ``cable_m`` metres per link;
* **switch** — a port-to-port figure per hop, from public statements;
* **processing** — per-packet endpoint processing (send + receive), a
  parameter that defaults to 0 where no public figure exists.

A path with ``hops`` switches has ``hops + 1`` links; each link costs
serialization + accumulation + decode + cable (a switch re-codes every
packet, so it cannot forward before the codeword is decoded). An operation's
latency is a round trip: request out, response (or acknowledgement) back.
Loaded latencies (queueing in a switched fabric) are not modelled here:
:func:`loaded` takes queueing delays measured elsewhere and adds them to a
zero-load breakdown, so the fabric model can report both side by side.
Provenance of every default: ``specs/comparison.md`` (latency section).
"""

from __future__ import annotations

from dataclasses import dataclass, fields, replace
from fractions import Fraction

#: Per-lane signalling rate (UALink 200G and 802.3 200G-per-lane Ethernet).
LANE_GBPS = 200
#: Bits of one RS(544,514) codeword (544 ten-bit symbols) — IEEE 802.3 clause 91/119.
KP4_CODEWORD_BITS = 5440
#: Bits of one RS(272,258)-style codeword (272 ten-bit symbols), the low-latency FEC.
LL_CODEWORD_BITS = 2720
#: Propagation in copper or fibre, about 5 ns per metre (a parameter).
NS_PER_METRE = 5
#: The scale-up latency budget the reviews quote (one way, memory to memory), ns.
SCALE_UP_BUDGET_NS = 1000
#: RoCEv2 memory-to-memory latency as reported in the reviews: "above 1.5 us".
ROCE_REPORTED_NS = 1500


@dataclass(frozen=True)
class Link:
    """One link's physical parameters."""

    lanes: int = 4
    lane_gbps: int = LANE_GBPS
    codeword_bits: int = KP4_CODEWORD_BITS
    fec_decode_ns: Fraction = Fraction(0)
    cable_m: Fraction = Fraction(2)
    ns_per_m: Fraction = Fraction(NS_PER_METRE)

    @property
    def bits_per_ns(self) -> Fraction:
        """Link rate in bits per nanosecond (Gb/s)."""
        return Fraction(self.lanes * self.lane_gbps)


@dataclass(frozen=True)
class Protocol:
    """What one protocol adds beyond the link: switch hop latency and endpoint processing."""

    name: str
    switch_ns: Fraction
    processing_ns: Fraction = Fraction(0)
    switch_source: str = ""
    processing_source: str = "parameter: no public per-packet figure; 0 ns"


@dataclass(frozen=True)
class Breakdown:
    """Latency components in ns (exact fractions); ``total`` is their sum."""

    serialization: Fraction = Fraction(0)
    fec_accumulation: Fraction = Fraction(0)
    fec_decode: Fraction = Fraction(0)
    cable: Fraction = Fraction(0)
    switch: Fraction = Fraction(0)
    processing: Fraction = Fraction(0)
    queueing: Fraction = Fraction(0)

    @property
    def total(self) -> Fraction:
        """Sum of every component."""
        return sum((getattr(self, f.name) for f in fields(self)), Fraction(0))

    def __add__(self, other: Breakdown) -> Breakdown:
        return Breakdown(*(getattr(self, f.name) + getattr(other, f.name) for f in fields(self)))

    def as_dict(self) -> dict[str, float]:
        """Components and total as floats (ns), for JSON/CSV."""
        d = {f.name: float(getattr(self, f.name)) for f in fields(self)}
        d["total"] = float(self.total)
        return d


def link_time(wire_bytes: int | Fraction, link: Link) -> Breakdown:
    """One packet of ``wire_bytes`` (after FEC coding) crossing one link."""
    if wire_bytes <= 0:
        raise ValueError("a packet has at least one byte")
    bits = Fraction(wire_bytes) * 8
    codewords = -(-bits // link.codeword_bits)  # codewords the packet touches
    ser = bits / link.bits_per_ns
    acc = codewords * link.codeword_bits / link.bits_per_ns - ser
    return Breakdown(serialization=ser, fec_accumulation=acc, fec_decode=link.fec_decode_ns,
                     cable=link.cable_m * link.ns_per_m)


def one_way(wire_bytes: int | Fraction, link: Link, proto: Protocol, hops: int = 1) -> Breakdown:
    """A packet from sender to receiver through ``hops`` switches (``hops + 1`` links)."""
    if hops < 0:
        raise ValueError("hops must be >= 0")
    total = Breakdown(switch=proto.switch_ns * hops, processing=proto.processing_ns)
    for _ in range(hops + 1):
        total = total + link_time(wire_bytes, link)
    return total


def round_trip(request_bytes: int | Fraction, response_bytes: int | Fraction, link: Link,
               proto: Protocol, hops: int = 1) -> Breakdown:
    """Request out and response back: the latency an operation's issuer sees."""
    return one_way(request_bytes, link, proto, hops) + one_way(response_bytes, link, proto, hops)


def loaded(zero_load: Breakdown, queueing_ns: float | Fraction) -> Breakdown:
    """A zero-load breakdown plus queueing measured under load (e.g. by a fabric model).

    This is the hook for loaded latencies: the static model does not invent
    queueing; the caller passes what a simulation measured.
    """
    if queueing_ns < 0:
        raise ValueError("queueing delay cannot be negative")
    return replace(zero_load, queueing=zero_load.queueing + Fraction(queueing_ns))
