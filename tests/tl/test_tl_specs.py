"""specs/tl.md holds exactly the tables rendered from the TL field declarations, and the
engine's rules once: the code cites them by number instead of restating them."""

from __future__ import annotations

import re
from pathlib import Path

from ualink_ref.bitfields import formats_markdown
from ualink_ref.tl import transaction
from ualink_ref.tl.fields import ALL_FORMATS

ROOT = Path(__file__).resolve().parents[2]


def rendered() -> str:
    return formats_markdown(ALL_FORMATS)


def test_spec_tables_match_declarations() -> None:
    text = (ROOT / "specs" / "tl.md").read_text()
    block = re.search(r"<!-- tl-formats:begin -->\n(.*)<!-- tl-formats:end -->", text, re.S)
    assert block is not None
    assert block.group(1) == "\n" + rendered() + "\n", (
        "specs/tl.md is stale: run  python tests/test_tl_specs.py  to refresh it"
    )


def test_engine_rules_are_stated_once_in_the_spec() -> None:
    text = (ROOT / "specs" / "tl.md").read_text()
    section = re.search(r"^## The engine's rules.*?(?=^## )", text, re.S | re.M)
    assert section is not None
    assert re.findall(r"^(\d+)\. \*\*", section.group(0), re.M) == [str(i) for i in range(1, 11)]
    doc = transaction.__doc__ or ""
    assert "specs/tl.md" in doc and not re.search(r"^\s*\d+\. ", doc, re.M)


def test_spec_headings_carry_no_tracker_numbers() -> None:
    for name in ("tl.md", "upli.md"):
        text = (ROOT / "specs" / name).read_text()
        assert not re.search(r"\bissue \d+", text), name
        assert not re.search(r"\b[0-9a-f]{7,40}\b", text.replace("0x", "")), name


if __name__ == "__main__":  # refresh the committed tables
    path = ROOT / "specs" / "tl.md"
    text = path.read_text()
    new = re.sub(r"(<!-- tl-formats:begin -->\n).*(<!-- tl-formats:end -->)",
                 lambda m: m.group(1) + "\n" + rendered() + "\n" + m.group(2), text, flags=re.S)
    path.write_text(new)
