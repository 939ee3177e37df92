"""What the ualink_ref stack really sends for a workload: measured, not computed.

:func:`measure_ualink` runs a list of operations through the project's own
stack — one requester, one target — and counts everything that leaves each
side, in both directions: requests, write data, responses, read data, credit
returns, DL acks. The requester → target direction is ``fwd``, the way back
``rev`` (the same convention as the RoCEv2 mapping). By default it runs two
full-stack :class:`ualink_ref.Endpoint` s and reads their own counters.

Loads and stores larger than 256 bytes are split into 256-byte requests (the
largest a UALink request may be); atomics are AtomicR (the old value comes
back, as with a RoCEv2 atomic).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ualink_ref.compare.mapping import Op

#: Bytes of one DL flit (3 header + 5 segment headers + 628 payload + 4 CRC).
DL_FLIT_BYTES = 640
#: TL bytes a DL flit carries.
DL_PAYLOAD_BYTES = 628
#: Bytes of one TL flit.
TL_FLIT_BYTES = 64
#: The largest single UALink request.
MAX_REQUEST = 256


@dataclass(frozen=True)
class UalinkCount:
    """Counts of what left each side of the link while a workload ran.

    ``method`` says how the DL flits were obtained (see
    ``specs/rocev2-comparison.md``): from the full-stack endpoint's own
    counters, or TL flits from two transaction-layer engines packed into DL
    flit payloads.
    """

    ops: int
    tl_flits_fwd: int
    tl_flits_rev: int
    dl_flits_fwd: int
    dl_flits_rev: int
    fec: str
    method: str
    #: Bytes and codewords after FEC encoding of the DL flits sent (by ``ualink_ref.phy``).
    wire_bytes_fwd: int = 0
    wire_bytes_rev: int = 0
    codewords_fwd: int = 0
    codewords_rev: int = 0
    #: DL flits that carried no TL bytes (ack-only / command flits), included above.
    ack_only_fwd: int = 0
    ack_only_rev: int = 0
    #: TL flits dissected: half-flits by kind, control fields by format, NOP sectors.
    breakdown_fwd: tuple[tuple[str, int], ...] = ()
    breakdown_rev: tuple[tuple[str, int], ...] = ()

    @property
    def wire_bytes_per_flit(self) -> int:
        """Wire bytes of one DL flit in this count's FEC mode (from ``ualink_ref.phy``)."""
        from ualink_ref.phy import wire_bytes_per_flit

        return wire_bytes_per_flit(self.fec)

    @property
    def mac_bytes_fwd(self) -> int:
        """DL flit bytes requester → target (headers and CRC included)."""
        return self.dl_flits_fwd * DL_FLIT_BYTES

    @property
    def mac_bytes_rev(self) -> int:
        """DL flit bytes target → requester."""
        return self.dl_flits_rev * DL_FLIT_BYTES


def ualink_requests(op: Op) -> int:
    """How many UALink requests ``op`` becomes (loads/stores split at 256 bytes)."""
    if op.is_atomic:
        return 1
    return -(-op.size // MAX_REQUEST)


def measure_ualink(ops: Sequence[Op], *, fec: str = "kp4", seed: int = 0) -> UalinkCount:
    """Run ``ops`` through the ualink_ref stack and count what leaves it, both ways."""
    from ualink_ref.compare._ualink_driver import run

    return run(ops, fec=fec, seed=seed)
