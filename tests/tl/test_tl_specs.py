"""specs/tl.md holds exactly the tables rendered from the TL field declarations."""

from __future__ import annotations

import re
from pathlib import Path

from ualink_ref.bitfields import formats_markdown
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


if __name__ == "__main__":  # refresh the committed tables
    path = ROOT / "specs" / "tl.md"
    text = path.read_text()
    new = re.sub(r"(<!-- tl-formats:begin -->\n).*(<!-- tl-formats:end -->)",
                 lambda m: m.group(1) + "\n" + rendered() + "\n" + m.group(2), text, flags=re.S)
    path.write_text(new)
