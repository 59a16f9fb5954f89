"""The public face (`import fangcheng as fc`): what the README shows a newcomer works as
shown, from tiles to a replayed record, without importing any subpackage."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

import fangcheng as fc

CASE = Path(__file__).parent / "cases" / "baicheng-B1.json"


def test_tiles_and_analysis():
    assert fc.format_tiles(fc.parse_tiles("五万 红中 1z")) == "5mEC"
    assert fc.shanten("123m456p789s1122z") == 0
    assert fc.format_tiles(fc.waits("1234m")) == "14m"
    assert fc.is_win("123m456p789s11122z")
    with pytest.raises(fc.InvalidNotationError, match="position 2"):
        fc.parse_tiles("12x")


def test_score_a_win_from_its_json():
    data = json.loads(CASE.read_text(encoding="utf-8"))
    expect = data.pop("expect")
    result = fc.score(fc.read_situation(json.dumps(data)))
    assert result.to_json()["total"] == expect["final"]
    assert fc.score(fc.load_situation(data)) == result
    data["winner"] = 7
    with pytest.raises(fc.SituationError, match="winner"):
        fc.load_situation(data)


def test_play_a_hand_with_bots_record_and_replay_it():
    rules = fc.find_rules("sichuan")
    bots = [fc.make_bot("efficient", random.Random(seat)) for seat in range(4)]
    r = fc.Round(rules, seed=7)
    while not r.over:
        for seat in r.pending():
            r.act(seat, bots[seat].act(r.observe(seat)))
    assert r.settlement is not None and sum(r.settlement["total"]) == 0
    text = json.dumps(fc.record_of(r), ensure_ascii=False)
    replayed = fc.replay(fc.read_record(text))
    assert replayed.divergence is None and not replayed.scripted
    with pytest.raises(fc.IllegalActionError, match="seed 7"):
        fc.Round(rules, seed=7).act(0, "discard 1m")


def test_a_match_runs_to_its_end():
    match = fc.Match(fc.find_rules("baishan"), quan=1, seed=3)
    bot = fc.make_bot("random", random.Random(3))
    hands = 0
    while not match.over:
        r = match.new_round()
        while not r.over:
            for seat in r.pending():
                r.act(seat, bot.act(r.observe(seat)))
        match.finish(r)
        hands += 1
    assert hands >= 4
