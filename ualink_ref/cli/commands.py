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
    "fabric": ("fabric", "run a pod of accelerators through UALink switches (CBFC or PFC)"),
    "sweep": ("sweep", "run a grid of fabric runs locally or on a Dask cluster"),
    "collective": ("collective", "run a collective (all-reduce, all-to-all, ...) on the pod, "
                   "data checked"),
    "validate-fidelity": ("validate_fidelity", "run the agreement grid: the fast fidelity "
                          "against the exact pod, case by case"),
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


def add_actions(sub: Any, name: str, description: str) -> Any:
    """Add subcommand ``name`` that does its work through a required ACTION word
    (``ualink-ref fec table``); return the subparsers to add each action to."""
    return add_command(sub, name, description).add_subparsers(
        dest=f"{name}_command", required=True, metavar="ACTION")


def add_action(actions: Any, name: str, func: Any, help: str, description: str) -> Any:
    """Add action ``name`` (run by ``func(args)``) to ``actions``; return its parser."""
    parser = actions.add_parser(name, help=help, description=description)
    parser.set_defaults(func=func)
    return parser


__all__ = ["COMMANDS", "COMMAND_MODULES", "add_action", "add_actions", "add_command",
           "command_help"]
