"""``ualink-ref wireshark``: install the Lua dissector for Wireshark / tshark."""

from __future__ import annotations

import argparse
import shutil
from pathlib import Path
from typing import Any

from ualink_ref.cli.commands import add_action, add_actions
from ualink_ref.wireshark import PLUGIN_NAME, personal_plugin_dir, plugin_path

#: The subcommand's ``--help`` description.
DESCRIPTION = (
    "The Lua dissector, its field tables generated from the declarations "
    "(specs/wireshark.md). "
    "`install` copies it into Wireshark's personal Lua plugin folder "
    "(~/.local/lib/wireshark/plugins); `install --print-path` only prints where the "
    "shipped plugin is, for `tshark -X lua_script:PATH`."
)

def _cmd_install(args: argparse.Namespace) -> int:

    if args.print_path:
        print(plugin_path())
        return 0
    folder = Path(args.dir) if args.dir else personal_plugin_dir()
    folder.mkdir(parents=True, exist_ok=True)
    target = folder / PLUGIN_NAME
    shutil.copyfile(plugin_path(), target)
    print(f"installed {target}")
    print("Wireshark and tshark load it at start-up; check with: tshark -G protocols | grep ualink")
    return 0


def register(sub: Any) -> None:
    """Add the ``wireshark`` subcommand to the ``ualink-ref`` parser."""
    inst = add_action(add_actions(sub, "wireshark", DESCRIPTION), "install", _cmd_install,
                      "copy ualink.lua into the personal plugin folder",
                      "Copy ualink.lua into Wireshark's personal plugin folder.")
    inst.add_argument("--print-path", action="store_true",
                      help="print the path of the shipped plugin and copy nothing")
    inst.add_argument("--dir", metavar="DIR",
                      help="install into DIR instead of ~/.local/lib/wireshark/plugins")


__all__ = ["register"]
