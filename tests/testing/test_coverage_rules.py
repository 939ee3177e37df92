"""The coverage model's rule table is the specs' numbered rules, and specs/coverage.md
carries the rendered tables (specs/coverage.md "Rules")."""

from __future__ import annotations

import re
from collections import defaultdict
from pathlib import Path

from ualink_ref.testing.coverage.rules import FACTS, RULES, rules_markdown
from ualink_ref.testing.coverage.waivers import waivers_markdown

SPECS = Path(__file__).resolve().parents[2] / "specs"
#: A rule id opening a table row (`| S1 |`), a bold list item (`- **C1 ...`) or a list
#: item (`- D1.`).
_ROW = re.compile(r"^\| *([A-Z][0-9]+[a-z]?) *\|", re.M)
_ITEM = re.compile(r"^- (?:\*\*)?([A-Z][0-9]+[a-z]?)[ .]", re.M)


def _spec_rules() -> dict[str, list[str]]:
    found: dict[str, list[str]] = defaultdict(list)
    for path in sorted(SPECS.glob("*.md")):
        if path.name == "coverage.md":
            continue  # the rendered table itself
        text = path.read_text()
        ids = [(m.start(), m.group(1)) for m in (*_ROW.finditer(text), *_ITEM.finditer(text))]
        if path.name == "dl.md":  # the numbered retry rules of section 6
            section = text.split("## 6.")[1].split("\n## ")[0]
            offset = text.index(section)
            ids += [(offset + m.start(), m.group(1))
                    for m in re.finditer(r"^\| (\d+) \|", section, re.M)]
        found[path.name] = [rid for _, rid in sorted(ids)]
    return {k: v for k, v in found.items() if v}


def test_rules_are_exactly_the_numbered_rules_of_the_specs() -> None:
    declared: dict[str, list[str]] = defaultdict(list)
    for rule in RULES:
        declared[rule.spec].append(rule.id)
    assert {k: sorted(v) for k, v in declared.items()} == \
        {k: sorted(v) for k, v in _spec_rules().items()}


def test_every_rule_has_evidence_or_a_reason() -> None:
    for rule in RULES:
        assert (rule.fact in FACTS) if rule.fact else rule.waiver, (rule.spec, rule.id)


def test_spec_carries_the_rendered_tables() -> None:
    text = (SPECS / "coverage.md").read_text()
    rules = text.split("<!-- coverage-rules -->\n")[1].split("<!-- /coverage-rules -->")[0]
    waivers = text.split("<!-- coverage-waivers -->\n")[1].split("<!-- /coverage-waivers -->")[0]
    assert rules == rules_markdown()
    assert waivers == waivers_markdown()
