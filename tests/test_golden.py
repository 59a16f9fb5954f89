"""Golden wins: every `tests/cases/*.json` is a `fangcheng score` input with the expected
figures under ``expect`` (the worked examples of EXAMPLES.md and cases of our own)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from fangcheng.rules.requirements import wait_set
from fangcheng.scoring.scorer import score
from fangcheng.scoring.situation import load_situation
from fangcheng.tiles.notation import tile_name

CASES = sorted((Path(__file__).parent / "cases").glob("*.json"))


def _load(path: Path) -> tuple[dict[str, Any], dict[str, Any]]:
    data = json.loads(path.read_text(encoding="utf-8"))
    return data, data.pop("expect")


def test_there_are_cases_of_every_rule_set():
    names = {json.loads(p.read_text(encoding="utf-8"))["rules"] for p in CASES}
    assert names == {"baicheng", "baishan", "baishan_platform", "sichuan"}


@pytest.mark.parametrize("path", CASES, ids=[p.stem for p in CASES])
def test_case(path: Path):
    data, expect = _load(path)
    result = score(load_situation(data))
    out = result.to_json()
    assert out["win"] is expect["win"]
    payers = {str(p["seat"]): p for p in out["payers"]}  # type: ignore[attr-defined]
    assert {s: p["fan"] for s, p in payers.items()} == expect["fans_total_per_payer"]
    assert {s: p["amount"] for s, p in payers.items()} == expect["amount_per_payer"]
    assert out["deltas"] == expect["win_deltas"]
    assert out["kongs"] == expect["kong_deltas"]
    assert out["total"] == expect["final"]
    assert out["fees"] == expect.get("fee", [0, 0, 0, 0])
    assert {f["name"] for f in out["fans"]} == set(expect["fan_names"])  # type: ignore[attr-defined]
    s = load_situation(data)
    seat = s.seats[s.winner]
    que = s.options.que[s.winner] if s.options.que is not None else None
    assert [tile_name(t) for t in wait_set(s.rules, seat.concealed, seat.melds, que)] == expect[
        "wait"
    ]


@pytest.mark.parametrize("path", CASES, ids=[p.stem for p in CASES])
def test_case_win_deltas_sum_to_zero_and_total_is_deltas_plus_kongs_minus_fees(path: Path):
    data, _ = _load(path)
    out = score(load_situation(data)).to_json()
    assert sum(out["deltas"]) == 0 and sum(out["kongs"]) == 0  # type: ignore[arg-type]
    parts = zip(out["deltas"], out["kongs"], out["fees"], strict=True)  # type: ignore[call-overload]
    assert out["total"] == [d + k - f for d, k, f in parts]
