"""The committed Lua plugin's generated section is the generator's output; names, masks
and the install command."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from ualink_ref.cli import main
from ualink_ref.errors import DecodeError
from ualink_ref.wireshark import PLUGIN_NAME, plugin_path
from ualink_ref.wireshark.generate import (
    ADDRESS_FILTER,
    BEGIN_MARKER,
    COMMON_FIELDS,
    END_MARKER,
    FORMATS,
    IMPLIED_FIELDS,
    common_filter_name,
    filter_name,
    generate_plugin,
    generate_section,
    split_plugin,
)
from ualink_ref.wireshark.generate import main as generate_main

PLUGIN = plugin_path().read_text(encoding="utf-8")


def test_committed_plugin_generated_section_equals_fresh_generation() -> None:
    _, section, _ = split_plugin(PLUGIN)
    assert section == generate_section(), (
        "ualink.lua is stale: run `python -m ualink_ref.wireshark.generate`")


def test_generated_section_holds_the_declarations_and_the_rest_is_hand_written() -> None:
    head, section, tail = split_plugin(PLUGIN)
    assert head.endswith(BEGIN_MARKER + "\n") and tail.startswith(END_MARKER + "\n")
    # Every declared format's table is generated, none is typed in the hand-written parts.
    for fmt in FORMATS:
        assert f'FMT["{fmt.name}"] = ' in section
        assert f'FMT["{fmt.name}"] = ' not in head + tail
    # The dissector itself (registration on USER0) is outside the section.
    assert "wtap_table:add(" in tail and "wtap_table" not in section


@pytest.mark.parametrize("text", [
    "no markers at all\n",
    f"{BEGIN_MARKER}\nx\n",
    f"x\n{END_MARKER}\n",
    f"{END_MARKER}\nx\n{BEGIN_MARKER}\n",
    f"{BEGIN_MARKER}\n{BEGIN_MARKER}\n{END_MARKER}\n",
    # a marker must be the whole line, not text within one
    f"-- {BEGIN_MARKER}\nx\n{END_MARKER}\n",
])
def test_missing_or_misplaced_markers_are_refused(text: str) -> None:
    with pytest.raises(DecodeError):
        split_plugin(text)
    with pytest.raises(DecodeError):
        generate_plugin(text)


def test_generation_rewrites_only_the_section(tmp_path: Path) -> None:
    head, section, tail = split_plugin(PLUGIN)
    stale = head + "local C = {}  -- stale\n" + tail + "-- a hand-written trailing line\n"
    assert generate_plugin(stale) == head + section + tail + "-- a hand-written trailing line\n"
    assert generate_plugin(PLUGIN) == PLUGIN
    # Given a path, the generator writes the whole plugin of this version there, whatever
    # the file held: a copy with a stale section, an older copy without markers, nothing.
    for name, old in (("stale.lua", stale), ("unmarked.lua", "-- ualink.lua 0.1\n"),
                      ("new.lua", None)):
        path = tmp_path / name
        if old is not None:
            path.write_text(old, encoding="utf-8")
        assert generate_main([str(path)]) == 0
        assert path.read_text(encoding="utf-8") == PLUGIN


def _protofield(abbrev: str) -> str:
    match = re.search(r"ProtoField\.(\w+)\(\"" + re.escape(abbrev) + r"\", [^\n]*", PLUGIN)
    assert match is not None, abbrev
    return match.group(0)


@pytest.mark.parametrize(("abbrev", "ftype", "mask"), [
    # Hand-derived from the layouts in specs/: op is the top 3 bits of DL byte 0;
    # cmd follows the 4-bit FTYPE in a 16-bit window; direction is bits 3..2 of
    # pseudo-header byte 3 (after record_kind); the 55-bit addr has no exact double mask.
    ("ualink.dl.hdr.op", "uint8", "0xe0"),
    ("ualink.tl.req.cmd", "uint16", "0xfc0"),
    ("ualink.cap.direction", "uint8", "0xc"),
    ("ualink.dl.seg.tl_offset", "uint8", "0x1e"),
    ("ualink.tl.req.addr", "uint64", "nil"),
])
def test_masks_are_the_hand_derived_ones(abbrev: str, ftype: str, mask: str) -> None:
    line = _protofield(abbrev)
    assert line.startswith(f"ProtoField.{ftype}(")
    assert f", {mask}, " in line


def test_every_declared_field_has_a_wireshark_style_name_and_description() -> None:
    for fmt in FORMATS:
        for f in fmt.fields:
            name = filter_name(fmt, f.name)
            assert re.fullmatch(r"ualink(\.[a-z0-9_]+)+", name), name
            # Formats of one shape share a prefix (ualink.dl.hdr.op, ualink.tl.ftype): one
            # of the ProtoFields with this name carries this field's text.
            lines = [m.group(0) for m in re.finditer(
                r"ProtoField\.\w+\(\"" + re.escape(name) + r"\", [^\n]*", PLUGIN)]
            assert any(f.description.replace('"', '\\"') in line
                       and all(f'"{label}"' in line for label in (f.enum or {}).values())
                       for line in lines), name
    for wanted in ("ualink.dl.crc_status", "ualink.tl.req.cmd", "ualink.tl.rsp.status"):
        assert f'"{wanted}"' in PLUGIN


def test_install_copies_the_plugin(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["wireshark", "install", "--dir", str(tmp_path / "plugins")]) == 0
    assert (tmp_path / "plugins" / PLUGIN_NAME).read_bytes() == plugin_path().read_bytes()
    assert str(tmp_path / "plugins" / PLUGIN_NAME) in capsys.readouterr().out


def test_install_default_folder_is_the_personal_plugin_folder(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    assert main(["wireshark", "install"]) == 0
    assert (tmp_path / ".local/lib/wireshark/plugins" / PLUGIN_NAME).is_file()


def test_print_path(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["wireshark", "install", "--print-path"]) == 0
    assert capsys.readouterr().out.strip() == str(plugin_path())


def test_common_fields_name_one_concept_in_every_form() -> None:
    # Each common field (ualink.tl.cmd, ...) is carried, or implied, by every form listed,
    # with the same value names in each: one concept, one name.
    assert {"cmd", "tag", "status"} <= set(COMMON_FIELDS)
    assert "len" not in COMMON_FIELDS  # words in a request, beats in a response
    for name, fmts in COMMON_FIELDS.items():
        assert len(fmts) > 1, name
        for fmt in fmts:
            assert name in fmt.field_names or name in IMPLIED_FIELDS.get(fmt.name, {}), (
                name, fmt.name)
        enums = {tuple(sorted((fmt.field(name).enum or {}).items()))
                 for fmt in fmts if name in fmt.field_names}
        assert len(enums) == 1, name
        assert PLUGIN.count(f'ProtoField.uint8("{common_filter_name(name)}"') + PLUGIN.count(
            f'ProtoField.uint16("{common_filter_name(name)}"') == 1, name
    assert f'"{ADDRESS_FILTER}"' in PLUGIN
