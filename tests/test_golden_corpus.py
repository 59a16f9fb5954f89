"""The golden corpus of ``tests/golden``: recorded bot hands, scripted hands and win
situations, each with what the code produced when the corpus was made.

These tests only read the corpus. An unintended change of play or scoring fails here,
naming the first difference; an intended one is committed by ``make golden``
(``tools/golden.py``), whose summary and ``git diff`` are then reviewed. Comparisons are
made on decoded JSON, so they hold whatever Python types the events are built from.
"""

from __future__ import annotations

import importlib.util
import io
import json
import sys
from collections import Counter
from pathlib import Path
from types import ModuleType

import pytest

from fangcheng.cli import main as cli_main
from fangcheng.engine.record import RecordError
from fangcheng.scoring import effective_base, read_situation

TOOL = Path(__file__).resolve().parent.parent / "tools" / "golden.py"
REGENERATE = "if the change is intended, run `make golden` and review the diff"


def _tool() -> ModuleType:
    """``tools/golden.py``: the one definition of what each corpus entry's output is."""
    spec = importlib.util.spec_from_file_location("golden_tool", TOOL)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


golden = _tool()
SCRIPTED = golden.scripted_paths()


def _scoring() -> list[dict[str, object]]:
    return golden.read_lines(golden.SCORING)


@pytest.mark.parametrize("rules", golden.RULES)
def test_recorded_hands_replay_event_by_event(rules: str):
    lines = golden.read_lines(golden.RECORDS / f"{rules}.jsonl.gz")
    failures = []
    for line in lines:
        try:
            difference = golden.first_difference(line["record"], golden.replayed(line["record"]))
        except RecordError as exc:
            difference = f"does not replay: {exc}"
        if difference is not None:
            failures.append(f"{line['id']} (bots {', '.join(line['bots'])}): {difference}")
    if failures:
        pytest.fail(
            f"{len(failures)} of {len(lines)} {rules} records replay differently; "
            f"the first: {failures[0]}\n{REGENERATE}",
            pytrace=False,
        )


@pytest.mark.parametrize("path", SCRIPTED, ids=[p.stem for p in SCRIPTED])
def test_scripted_hand_gives_its_expected_output(path: Path):
    expected = golden.expected_path(path)
    assert expected.exists(), f"{expected.name} is missing: run `make golden`"
    want, got = golden.read_lines(expected), golden.scripted_output(path)
    for i, (a, b) in enumerate(zip(want, got, strict=False)):
        if a != b:
            pytest.fail(
                f"{path.name}, line {i + 1} of the replay:\n  expected {golden.dumps(a)}\n"
                f"  got      {golden.dumps(b)}\n{REGENERATE}",
                pytrace=False,
            )
    if len(want) != len(got):
        pytest.fail(
            f"{path.name}: expected {len(want)} lines, the replay gives {len(got)}\n{REGENERATE}",
            pytrace=False,
        )


def test_every_scripted_output_has_its_hand():
    hands = {golden.expected_path(p) for p in SCRIPTED}
    assert set(golden.SCRIPTED.glob("*.out.jsonl")) == hands


def test_scoring_corpus_scores_exactly():
    rows = _scoring()
    mismatches = []
    for row in rows:
        got = golden.score_output(row["input"])
        want = row["output"]
        if got != want:
            keys = sorted(k for k in {*want, *got} if want.get(k) != got.get(k))
            mismatches.append(
                f"{row['id']}: differs in {', '.join(keys)}\n"
                f"  input    {golden.dumps(row['input'])}\n"
                f"  expected {golden.dumps(want)}\n  got      {golden.dumps(got)}"
            )
    if mismatches:
        pytest.fail(
            f"{len(mismatches)} of {len(rows)} situations score differently; the first:\n"
            + "\n".join(mismatches[:3])
            + f"\n{REGENERATE}",
            pytrace=False,
        )


def test_the_score_command_prints_the_corpus_output(monkeypatch, capsys):
    """The corpus's output is what ``fangcheng score`` prints (exit 0) or refuses (exit 2)."""
    for row in _scoring()[::97]:
        monkeypatch.setattr(sys, "stdin", io.StringIO(json.dumps(row["input"])))
        code = cli_main(["score", "-"])
        out, err = capsys.readouterr()
        if "error" in row["output"]:
            assert (code, out) == (2, "") and row["output"]["error"] in err, row["id"]
        else:
            assert code == 0 and json.loads(out) == row["output"], row["id"]


def test_the_scoring_corpus_covers_every_rule_set_and_kind_of_win():
    seen: Counter[tuple[object, ...]] = Counter()
    for row in _scoring():
        d, out = row["input"], row["output"]
        rules = d["rules"]
        result = "error" if "error" in out else "win" if out["win"] else "no win"
        seen[rules, result] += 1
        seen[rules, d["win_by"]] += 1
        seen[rules, d["win_by"], result] += 1
        seen[rules, "options", *sorted(d.get("options", {}))] += 1
        for flag in ("after_kong", "last_tile", "first_draw", "won", "retired_treasure"):
            seen[rules, flag] += bool(d.get(flag))
        seen[rules, "declared_ready"] += any(d["declared_ready"])
        for seat in d["seats"]:
            for meld in seat["melds"]:
                seen[rules, meld["kind"]] += 1
    common = ["win", "no win", "error", "discard", "self_draw", "robbed_kong", "after_kong"]
    common += ["last_tile", "first_draw", "chi", "peng", "ming_gang", "bu_gang", "an_gang"]
    wanted = {
        "baicheng": [*common, "treasure", "fenzhang", "xuanfeng", "retired_treasure"],
        "baishan": [*common, "declared_ready"],
        "baishan_platform": [*common, ("options", "cap", "piao", "room"), ("options", "piao")],
        "sichuan": [*common, "won", ("options", "cap", "que"), ("options", "que")],
    }
    for rules, keys in wanted.items():
        for key in keys:
            full = (rules, *key) if isinstance(key, tuple) else (rules, key)
            if rules == "sichuan" and key == "chi":
                continue  # no chi in sichuan (D48)
            assert seen[full] >= 3, f"the scoring corpus has {seen[full]} of {full}"
    for rules, kinds in {
        "baicheng": ["discard", "self_draw", "robbed_kong", "treasure", "fenzhang"],
        "baishan": ["discard", "self_draw", "robbed_kong"],
        "baishan_platform": ["discard", "self_draw", "robbed_kong"],
        "sichuan": ["discard", "self_draw", "robbed_kong"],
    }.items():
        for kind in kinds:
            assert seen[rules, kind, "win"], f"the scoring corpus has no {rules} {kind} win"
    assert sum(n for k, n in seen.items() if k[1:] == ("win",)) >= 1500


def test_the_records_mix_bots_options_and_ask_all():
    for rules in golden.RULES:
        lines = golden.read_lines(golden.RECORDS / f"{rules}.jsonl.gz")
        assert len(lines) >= 60
        bots = {b for line in lines for b in line["bots"]}
        assert bots == {"random", "efficient", "strong"}
        assert {bool(line["record"].get("ask_all")) for line in lines} == {False, True}
        options = {tuple(sorted(line["record"]["options"])) for line in lines}
        assert () in options  # 漂 and 定缺 chosen in play, where the rule set has them
        assert (
            options
            >= {
                "baicheng": set(),
                "baishan": set(),
                "baishan_platform": {("piao",), ("room",), ("cap", "room")},
                "sichuan": {("que",), ("cap",)},
            }[rules]
        )


def test_d39_d51_a_payment_is_base_times_two_to_the_n_unless_its_cap_says_why():
    """Every payer of the corpus pays 底注 × 2^N, or carries the ``cap`` that held it
    down: the fan cap (sichuan) or the amount cap (baicheng, baishan)."""
    kinds = Counter()
    for row in _scoring():
        out = row["output"]
        if not out.get("win"):  # no win, or an input the contract refuses
            continue
        s = read_situation(json.dumps(row["input"]))
        base = effective_base(s.options, s.base)
        for p in out["payers"]:
            cap, amount, fan = p.get("cap"), p["amount"], p["fan"]
            if cap is None:
                assert amount == base << fan, (row["id"], p)
                continue
            kinds[next(iter(cap))] += 1
            assert cap["uncapped"] == base << fan, (row["id"], p)
            if "fans" in cap:
                assert cap["fans"] == s.rules.cap_fans < fan, (row["id"], p)
                assert amount == base << cap["fans"], (row["id"], p)
            else:
                assert s.rules.cap_base is not None, (row["id"], p)
                assert amount == cap["coins"] == s.rules.cap_base * base < base << fan
    assert kinds["fans"] and kinds["coins"]
