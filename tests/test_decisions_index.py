"""Every DECISION of RULES.md has a test named for it (README: "every rule has a test").

The index of DECISIONs is copied into `decisions.toml` beside this file (the project never
reads RULES.md at run time). A DECISION counts as tested when some test function in
``tests/`` has a name starting ``test_dNN_``, so that ``pytest -k test_dNN_`` finds it.
"""

from __future__ import annotations

import ast
import re
import tomllib
from pathlib import Path

TESTS = Path(__file__).parent

#: The DECISIONs that must have a test: all of them (D81-D92 are the platform, RULES.md
#: §8, tested through the server, the ledger, the coin tables and the operators' API).
REQUIRED = [*range(1, 94)]

_NAMED = re.compile(r"test_d(\d+)_")


def decisions() -> dict[int, dict[str, str]]:
    """The index: DECISION number → its section and summary."""
    with (TESTS / "decisions.toml").open("rb") as f:
        data = tomllib.load(f)
    return {int(key.removeprefix("D")): value for key, value in data.items()}


def named_decisions() -> dict[int, list[str]]:
    """DECISION number → the test functions in ``tests/`` whose names start ``test_dNN_``."""
    found: dict[int, list[str]] = {}
    for path in sorted(TESTS.glob("test_*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            is_function = isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
            if is_function and (match := _NAMED.match(node.name)):
                found.setdefault(int(match[1]), []).append(f"{path.name}::{node.name}")
    return found


def test_the_index_holds_d1_to_d93_each_with_section_and_summary():
    index = decisions()
    assert sorted(index) == list(range(1, 94))
    for number, entry in index.items():
        assert set(entry) == {"section", "summary"}, f"D{number}"
        assert entry["section"].startswith("§") and entry["summary"], f"D{number}"


def test_every_required_decision_has_a_test_named_for_it():
    index, named = decisions(), named_decisions()
    missing = [n for n in REQUIRED if n not in named]
    assert not missing, "no test_dNN_… for " + "; ".join(
        f"D{n} ({index[n]['section']}: {index[n]['summary']})" for n in missing
    )


def test_test_names_refer_to_decisions_that_exist():
    unknown = {n: tests for n, tests in named_decisions().items() if n not in decisions()}
    assert not unknown, f"tests named for DECISIONs that RULES.md does not have: {unknown}"
