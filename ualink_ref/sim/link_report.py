"""The report of one link run: what :func:`~ualink_ref.sim.link_run.simulate` measured,
and its text form (specs/tl.md, "Simulation")."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from ualink_ref.sim.model import tl_lines
from ualink_ref.sizes import FecMode


@dataclass(frozen=True)
class SimReport:
    """What :func:`simulate` measured (``ab`` = a to b, ``ba`` = b to a)."""

    ops: int
    ops_completed: int
    ops_okay: int
    data_mismatches: int | None
    slots: int
    fec: FecMode
    ber: float
    seed: int
    wire_bytes_ab: int
    wire_bytes_ba: int
    flits_ab: int
    flits_ba: int
    tl_flits_ab: int
    tl_flits_ba: int
    bit_errors_injected: int
    fec_corrected_symbols: int
    fec_corrected_codewords: int
    fec_corrected_flits: int
    fec_uncorrectable_codewords: int
    fec_uncorrectable_flits: int
    crc_errors: int
    replays: int
    replayed_flits: int
    retrains_needed: int
    credit_stalls: int
    latency_mean: float
    latency_p99: float
    latency_max: int
    #: Link state changes on either end, as ``(slot, side, old, new, cause)``.
    link_changes: tuple[tuple[float, str, str, str, str], ...] = ()
    #: Slots each end spent in a state carrying no data (training, down, fault).
    slots_down_a: float = 0.0
    slots_down_b: float = 0.0
    #: Why the link failed for good (``None``: it did not), and the ops it failed.
    link_fault: str | None = None
    ops_failed_by_fault: int = 0
    faults: str = ""
    #: TL error paths: response pieces received, ops ended by the completion timer,
    #: responses discarded after their op timed out, completions with poisoned beats.
    split: str = "never"
    timeout_slots: float | None = None
    split_responses: int = 0
    timeouts: int = 0
    late_responses: int = 0
    poisoned_completions: int = 0
    #: Why ops did not end OKAY: ``(kind, count)``, most frequent first, and the first
    #: few as ``(op index, side, kind, status, error)``.
    failures: tuple[tuple[str, int], ...] = ()
    first_failures: tuple[tuple[int, str, str, str, str], ...] = ()

    def as_dict(self) -> dict[str, Any]:
        """The report as a JSON-ready dict."""
        return asdict(self)

    def format(self) -> str:
        """A human-readable rendering (what ``ualink-ref simulate`` prints)."""
        check = ("not checked" if self.data_mismatches is None
                 else f"{self.data_mismatches} data mismatch(es)")
        return "\n".join([
            f"ops: {self.ops_completed}/{self.ops} completed, {self.ops_okay} OKAY, {check}",
            f"fec: {self.fec}  pre-FEC BER: {self.ber:g}  seed: {self.seed}  slots: {self.slots}",
            f"wire a->b: {self.wire_bytes_ab} bytes in {self.flits_ab} DL flits "
            f"({self.tl_flits_ab} TL flits)",
            f"wire b->a: {self.wire_bytes_ba} bytes in {self.flits_ba} DL flits "
            f"({self.tl_flits_ba} TL flits)",
            f"bit errors injected: {self.bit_errors_injected}  FEC corrected: "
            f"{self.fec_corrected_symbols} symbols in {self.fec_corrected_codewords} codewords "
            f"({self.fec_corrected_flits} flits)",
            f"uncorrectable: {self.fec_uncorrectable_codewords} codewords "
            f"({self.fec_uncorrectable_flits} flits)",
            f"CRC errors: {self.crc_errors}  replays: {self.replays} "
            f"({self.replayed_flits} flits)  retrains needed: {self.retrains_needed}",
            f"credit stalls: {self.credit_stalls}",
            f"latency (flit slots): mean {self.latency_mean:.1f}  p99 {self.latency_p99:.0f}  "
            f"max {self.latency_max}",
            *self._link_lines(),
            *tl_lines(self),
        ])

    def _link_lines(self) -> list[str]:
        if not (self.link_changes or self.faults):
            return []
        lines = [f"fault plan: {self.faults or '-'}",
                 f"link state changes: {len(self.link_changes)}  slots down: "
                 f"a {self.slots_down_a:g}, b {self.slots_down_b:g}"]
        lines += [f"  slot {slot:g} {side}: {old} -> {new} ({cause})"
                  for slot, side, old, new, cause in self.link_changes[:20]]
        if len(self.link_changes) > 20:
            lines.append(f"  ... {len(self.link_changes) - 20} more")
        if self.link_fault:
            lines.append(f"LINK FAULT: {self.link_fault}; {self.ops_failed_by_fault} op(s) "
                         "completed with an error status")
        return lines


__all__ = ["SimReport"]
