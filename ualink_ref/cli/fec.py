"""``ualink-ref fec ...``: the FEC error-rate and latency table."""

from __future__ import annotations

import argparse
from typing import Any

from ualink_ref.cli.commands import add_action, add_actions
from ualink_ref.cli.options import float_range
from ualink_ref.phy.ber import accumulation_bits, accumulation_time_ns, error_rate_table
from ualink_ref.phy.flits import MODES
from ualink_ref.sizes import FEC_MODES

#: Pre-FEC BERs printed when none are given.
DEFAULT_BERS = (1e-6, 1e-5, 1e-4, 2.4e-4, 5e-4, 1e-3, 2e-3)


#: The subcommand's ``--help`` description.
DESCRIPTION = "Forward error correction figures of the physical layer (specs/phy.md)."


def _fmt(value: float | None) -> str:
    return "-" if value is None else f"{value:.3e}"


def format_table(bers: list[float], modes: list[str], lane_gbps: float) -> str:
    """The text that ``ualink-ref fec table`` prints."""

    lines = [f"Codeword accumulation at {lane_gbps:g} Gb/s per lane:"]
    for mode in modes:
        code = MODES[mode].code
        if code is None:
            lines.append(f"  {mode:<5} {'no FEC':<29} {0:>4} bits  {0.0:>6.2f} ns")
            continue
        desc = f"RS({code.n},{code.k}) t={code.t}"
        bits = accumulation_bits(mode)
        ns = accumulation_time_ns(mode, lane_gbps)
        lines.append(f"  {mode:<5} {desc:<29} {bits:>4} bits  {ns:>6.2f} ns")
    lines.append("")
    lines.append(
        f"{'mode':<5} {'pre-FEC BER':>11} {'CER':>10} {'flit loss':>10} {'post-FEC BER':>12}"
    )
    for row in error_rate_table(bers, tuple(modes)):
        lines.append(
            f"{row.mode:<5} {row.ber:>11.2e} {_fmt(row.cer):>10} "
            f"{_fmt(row.flit_loss):>10} {_fmt(row.post_fec_ber):>12}"
        )
    return "\n".join(lines)


def _cmd_table(args: argparse.Namespace) -> int:
    print(
        format_table(
            args.ber or list(DEFAULT_BERS), args.mode or list(FEC_MODES), args.lane_gbps
        )
    )
    return 0


def register(sub: Any) -> None:
    """Add the ``fec`` command to the ``ualink-ref`` parser."""

    table = add_action(
        add_actions(sub, "fec", DESCRIPTION), "table", _cmd_table,
        "print CER / flit loss / post-FEC BER per mode and BER",
        "Analytic codeword error ratio (CER), flit loss ratio and post-FEC BER for "
        "each FEC mode over a range of pre-FEC bit error ratios (independent bit "
        "errors), plus each mode's codeword accumulation time on one lane.",
    )
    table.add_argument(
        "--ber",
        type=float_range(0.0, 0.5),
        action="append",
        metavar="BER",
        help="pre-FEC bit error ratio (repeatable; default: 1e-6 .. 2e-3)",
    )
    table.add_argument(
        "--mode",
        action="append",
        choices=FEC_MODES,
        help="only this mode (repeatable; default: all)",
    )
    table.add_argument(
        "--lane-gbps",
        type=float_range(0.0, 10_000.0, above=True),
        default=212.5,
        metavar="GBPS",
        help="lane signalling rate for the latency figure (default: 212.5)",
    )
