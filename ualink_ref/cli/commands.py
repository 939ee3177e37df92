"""The table of ``ualink-ref`` subcommands: name, module, one-line help (no imports,
so ``ualink-ref --help`` and every subcommand module can read it cheaply)."""

from __future__ import annotations

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
}
#: The modules that contribute subcommands (``ualink_ref.cli.<name>``).
COMMAND_MODULES: tuple[str, ...] = tuple(
    f"ualink_ref.cli.{module}" for module, _ in COMMANDS.values()
)


def command_help(name: str) -> str:
    """The one-line help of subcommand ``name`` (the same in its parser and in ``--help``)."""
    return COMMANDS[name][1]


__all__ = ["COMMANDS", "COMMAND_MODULES", "command_help"]
