"""The display filters the docs give work with the plugin, and find what the model finds.

``ualink.tl.cmd == 0x29`` (WriteFull) on ``vectors/captures/replay.pcap`` matches exactly
the frames ``ualink-ref dissect --command WriteFull`` lists, whichever form (compressed or
not) each WriteFull was sent in; every ``ualink.*`` name README.md, docs/ and specs/
write is a field the plugin registers; every display filter written there is accepted by
tshark and matches a frame of ``replay.pcap`` (``specs/wireshark.md``).

Skipped (with the reason) when tshark is not installed; ``.ci/run`` installs it.
"""

from __future__ import annotations

import contextlib
import io
import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from ualink_ref.cli import main
from ualink_ref.wireshark import PLUGIN_NAME, plugin_path

TSHARK = shutil.which("tshark")
pytestmark = pytest.mark.skipif(TSHARK is None, reason="tshark is not installed "
                                "(apt-get install tshark; .ci/run does)")

ROOT = Path(__file__).resolve().parents[2]
REPLAY = ROOT / "vectors" / "captures" / "replay.pcap"
WRITEFULL = 0x29
DOCS = sorted([ROOT / "README.md", *(ROOT / "docs").glob("*.md"), *(ROOT / "specs").glob("*.md")])


def _tshark(plugin: Path, *args: str) -> str:
    assert TSHARK is not None
    proc = subprocess.run([TSHARK, "-n", "-X", f"lua_script:{plugin}", *args],
                          capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode == 0, proc.stderr
    assert "Lua" not in proc.stderr, proc.stderr
    return proc.stdout


def tshark_frames(display_filter: str, path: Path = REPLAY,
                  plugin: Path | None = None) -> list[int]:
    """Frame numbers (1-based) of ``path`` that ``display_filter`` matches."""
    out = _tshark(plugin or plugin_path(), "-r", str(path), "-Y", display_filter,
                  "-T", "fields", "-e", "frame.number")
    return [int(line) for line in out.split()]


def dissect_writefull_frames(path: Path = REPLAY) -> tuple[list[int], int]:
    """What ``ualink-ref dissect --command WriteFull --json`` lists: the frame numbers of
    the flits carrying a WriteFull, and the WriteFulls they carry."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["dissect", str(path), "--command", "WriteFull", "--json"]) == 0
    flits = [json.loads(line) for line in out.getvalue().splitlines()]
    writefulls = sum(op["command"] == "WriteFull" for f in flits for op in f["ops"])
    return [f["index"] + 1 for f in flits], writefulls


def tshark_commands(path: Path = REPLAY, plugin: Path | None = None) -> list[int]:
    """Every ``ualink.tl.cmd`` value of ``path``, in frame and tree order."""
    out = _tshark(plugin or plugin_path(), "-r", str(path), "-T", "fields",
                  "-E", "occurrence=a", "-E", "aggregator=,", "-e", "ualink.tl.cmd")
    return [int(v) for line in out.split() for v in line.split(",")]


def test_cmd_filter_matches_every_writefull_flit_dissect_lists() -> None:
    frames, writefulls = dissect_writefull_frames()
    assert frames and writefulls > len(frames)  # several WriteFulls per flit
    assert tshark_frames(f"ualink.tl.cmd == {WRITEFULL:#x}") == frames
    assert tshark_commands().count(WRITEFULL) == writefulls
    # The per-form fields each see one form only: together, and only together, they find
    # the same frames (the seam the common field closes).
    uncompressed = tshark_frames(f"ualink.tl.req.cmd == {WRITEFULL:#x}")
    compressed = tshark_frames(f"ualink.tl.creq.cmd == {WRITEFULL:#x}")
    assert len(uncompressed) < len(frames) and len(compressed) < writefulls
    assert sorted(set(uncompressed) | set(compressed)) == frames


def test_a_plugin_without_the_common_field_on_compressed_requests_is_caught(
        tmp_path: Path) -> None:
    # Seeded bug: the generated table of the compressed request loses its `also` links.
    text = plugin_path().read_text(encoding="utf-8")
    head, sep, rest = text.partition('FMT["tl_compressed_request"] = ')
    table, end, tail = rest.partition("} }\n")
    assert sep and end and ", also = PF[" in table
    broken = tmp_path / PLUGIN_NAME
    broken.write_text(head + sep + re.sub(r", also = PF\[\d+\]", "", table) + end + tail,
                      encoding="utf-8")
    frames, writefulls = dissect_writefull_frames()
    assert tshark_frames(f"ualink.tl.cmd == {WRITEFULL:#x}", plugin=broken) != frames
    assert tshark_commands(plugin=broken).count(WRITEFULL) != writefulls


#: A ``ualink.`` name in prose: not ``ualink.lua``, not a prefix (``ualink.tl.req.``,
#: ``ualink.dl.msg.<type>.``); a sentence's closing full stop is not part of it.
_NAME = re.compile(r"(?<![\w./-])ualink(?:\.[a-z0-9_]+)+(?!\.\S|[\w<])")
#: Display filters: the argument of ``-Y '...'``, and a backquoted comparison.
_FILTERS = (re.compile(r"-Y '([^']+)'"),
            re.compile(r"`(ualink(?:\.[a-z0-9_]+)+ +(?:==|!=|>=|<=|>|<|contains) +[^`]+)`"))


def documented_names() -> dict[str, list[str]]:
    """Every ``ualink.*`` name in README.md, docs/ and specs/ -> the files naming it."""
    found: dict[str, list[str]] = {}
    for doc in DOCS:
        for name in _NAME.findall(doc.read_text(encoding="utf-8")):
            if name != "ualink.lua":
                found.setdefault(name, []).append(doc.name)
    return found


def documented_filters() -> dict[str, list[str]]:
    """Every display filter README.md, docs/ and specs/ write -> the files giving it."""
    found: dict[str, list[str]] = {}
    for doc in DOCS:
        text = doc.read_text(encoding="utf-8")
        for pattern in _FILTERS:
            for flt in pattern.findall(text):
                found.setdefault(flt.strip(), []).append(doc.name)
    return found


def registered_fields(home: Path) -> set[str]:
    """The display-filter names tshark knows with the plugin installed in ``home``."""
    assert TSHARK is not None
    plugins = home / ".local" / "lib" / "wireshark" / "plugins"
    plugins.mkdir(parents=True)
    shutil.copy(plugin_path(), plugins / PLUGIN_NAME)
    proc = subprocess.run([TSHARK, "-G", "fields"], capture_output=True, text=True,
                          timeout=120, check=True, env={"HOME": str(home), "PATH": "/usr/bin:/bin"})
    return {cells[2] for line in proc.stdout.splitlines()
            if (cells := line.split("\t"))[0] == "F" and len(cells) > 2}


def test_every_documented_name_is_a_registered_field(tmp_path: Path) -> None:
    names = documented_names()
    assert {"ualink.tl.cmd", "ualink.tl.addr", "ualink.dl.crc_status"} <= set(names)
    known = registered_fields(tmp_path)
    assert "ualink.tl.cmd" in known and "ualink.tl.req.cmd" in known
    unknown = {name: files for name, files in names.items() if name not in known}
    assert not unknown, unknown


def test_every_documented_filter_is_valid_and_matches_replay() -> None:
    filters = documented_filters()
    assert "ualink.tl.cmd == 0x29" in filters and "ualink.dl.crc_status == 0" in filters
    empty = {flt: files for flt, files in filters.items() if not tshark_frames(flt)}
    assert not empty, empty


def test_the_name_and_filter_finders_find_what_they_must() -> None:
    # The finders themselves (they decide what the two tests above check).
    text = ("see `ualink.tl.req.` and ualink.dl.msg.<noop>. fields, ualink.lua, "
            "ualink_ref.tl, `ualink.tl.cmd == 0x29`. Also ualink.dl.crc.computed.\n"
            "`ualink.tl.<concept>` `ualink.tl.x.<a, b>.` `ualink.dl.seq`\n"
            "tshark -Y 'ualink.dl.crc_status == 0' -e ualink.tl.tag")
    assert _NAME.findall(text) == ["ualink.lua", "ualink.tl.cmd", "ualink.dl.crc.computed",
                                   "ualink.dl.seq", "ualink.dl.crc_status", "ualink.tl.tag"]
    assert [m for p in _FILTERS for m in p.findall(text)] == [
        "ualink.dl.crc_status == 0", "ualink.tl.cmd == 0x29"]
