"""The rules pages (docs/rules, issue 41): one per rule set, Chinese and English, their
tables made from the rule sets' data by tools/gen_rules_pages.py; a page that drifts
from the data, or whose served copy differs from it, fails here."""

from __future__ import annotations

import re

import pytest

from test_browser_static import ROOT, STATIC, _tool

gen = _tool("gen_rules_pages")


@pytest.mark.parametrize("name", gen.NAMES)
def test_the_page_is_current_with_its_rule_set(name: str) -> None:
    page = (ROOT / "docs/rules" / f"{name}.md").read_text(encoding="utf-8")
    assert gen.render(name, page) == page, f"run python tools/gen_rules_pages.py ({name})"
    assert (STATIC / "rules" / f"{name}.md").read_text(encoding="utf-8") == page
    kinds = re.findall(r"<!-- generated: (\w+) -->", page)
    assert {"facts", "fans", "payments", "kongs"} <= set(kinds)
    assert ("platform" in kinds) == (name == "baishan_platform")


@pytest.mark.parametrize("name", gen.NAMES)
def test_the_page_names_every_fan_and_is_in_both_languages(name: str) -> None:
    from fangcheng.rules.ruleset import find_rules

    page = (ROOT / "docs/rules" / f"{name}.md").read_text(encoding="utf-8")
    for fan in find_rules(name).fans:
        assert f"| {fan.name} | {fan.en} |" in page
    prose = [line for line in page.splitlines() if line and line[0] not in "|<#"]
    assert any(re.search(r"[\u4e00-\u9fff]{6}", line) for line in prose)
    assert any(re.search(r"\b(the|a|and)\b", line) for line in prose)
