"""The table of ``ualink-ref`` subcommands: name, module, one-line help (no imports,
so ``ualink-ref --help`` and every subcommand module can read it cheaply)."""

from __future__ import annotations

from typing import Any

#: Subcommand -> (module under ``ualink_ref.cli``, one-line help), in ``--help`` order.
COMMANDS: dict[str, tuple[str, str]] = {
    "vectors": ("vectors", "generate or verify golden test vectors"),
    "fec": ("fec", "FEC error-rate and latency figures"),
    "dl": ("dl", "data link layer tools"),
    "simulate": ("simulate", "simulate two endpoints over a noisy link"),
    "compare": (
        "compare", "wire efficiency of Load/Store/Atomic traffic: RoCEv2 frames vs ualink flits"
    ),
    "capture": ("capture", "run two endpoints over a link and write what crosses it as a pcap"),
    "dissect": ("dissect", "print a readable dissection of a capture (pcap / pcapng)"),
    "difftest": ("difftest", "differential fuzzing of your implementation against the model"),
    "wireshark": ("wireshark", "install the Wireshark dissector for ualink_ref captures"),
}
#: The modules that contribute subcommands (``ualink_ref.cli.<name>``).
COMMAND_MODULES: tuple[str, ...] = tuple(
    f"ualink_ref.cli.{module}" for module, _ in COMMANDS.values()
)


def command_help(name: str) -> str:
    """The one-line help of subcommand ``name`` (the same in its parser and in ``--help``)."""
    return COMMANDS[name][1]


def add_command(sub: Any, name: str, description: str) -> Any:
    """Add subcommand ``name``'s parser to ``sub`` with its one-line help and ``description``."""
    return sub.add_parser(name, help=command_help(name), description=description)


__all__ = ["COMMANDS", "COMMAND_MODULES", "add_command", "command_help"]
