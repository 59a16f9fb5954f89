"""Rule sets wholly as data: D12 in every rule set, and house variants (a renamed,
overridden preset) that play, record, replay, and are valued by bots and the env by
the table's configured rules, never by a preset found by name."""

from __future__ import annotations

import dataclasses
import json
import random

import numpy as np
import pytest

from fangcheng.analysis.hand import Shapes
from fangcheng.engine.match import Match
from fangcheng.engine.record import RecordError, record_of, replay, wall_of
from fangcheng.engine.round import Round
from fangcheng.players.bots import EfficientBot, make_bot, table_of
from fangcheng.protocol.actions import Action
from fangcheng.rules.ruleset import (
    BAICHENG,
    BAISHAN,
    BAISHAN_PLATFORM,
    SICHUAN,
    RuleSet,
)
from fangcheng.tiles.notation import DRAGONS, WINDS, parse_counts, parse_tiles, tile_name

#: Baishan as a house plays it: payments capped at 2 × 底注, no 七小对.
HOUSE: RuleSet = dataclasses.replace(
    BAISHAN,
    name="baishan_house",
    cap_base=2,
    shapes=Shapes(seven_pairs=False, thirteen_orphans=True),
)
#: Baishan without winds: a 120-tile set on 15-stack sides.
NO_WINDS: RuleSet = dataclasses.replace(
    BAISHAN, name="baishan_no_winds", faces=(*range(27), *DRAGONS), wall_stacks=(15, 15, 15, 15)
)

PASS = Action.parse("pass")

# --- D12 ------------------------------------------------------------------------------

#: The dealer holds two concealed kongs (1m, 2p) and only suit tiles (sichuan's set);
#: the options skip 漂 and 定缺 (every seat's 缺 is a suit it does not hold).
D12_HANDS = [
    "1111m2222p345m678p",
    "3m4m5m6m7m8m9m1p3p6p7p8p9p",
    "3m4m5m6m7m8m9m1p3p6p7p8p9p",
    "1s2s3s4s5s8s9s1s2s3s4s5s9s",
]
D12_OPTIONS: dict[str, dict[str, object]] = {
    "baishan_platform": {"piao": [0, 0, 0, 0]},
    "sichuan": {"que": ["s", "s", "s", "m"]},
}


def _second_kong_offered(rules: RuleSet) -> bool:
    """Whether the dealer, after one 暗杠 on the first turn, is offered the second."""
    wall = wall_of({"hands": D12_HANDS, "tail": "2s"}, rules, 0, 0)
    r = Round(rules, options=D12_OPTIONS.get(rules.name), wall=wall)
    assert {Action.parse("angang 1m"), Action.parse("angang 2p")} <= set(r.legal_actions(0))
    r.act(0, Action.parse("angang 1m"))
    return Action.parse("angang 2p") in r.legal_actions(0)


@pytest.mark.parametrize(
    ("rules", "offered"),
    [(BAICHENG, False), (BAISHAN, True), (BAISHAN_PLATFORM, True), (SICHUAN, True)],
    ids=lambda v: v.name if isinstance(v, RuleSet) else str(v),
)
def test_d12_only_the_baicheng_dealer_is_held_to_one_kong_on_the_first_turn(rules, offered):
    """D12 (§2.3 item 10) is baicheng's: elsewhere the dealer may kong again at once."""
    assert _second_kong_offered(rules) is offered


def test_d12_the_limit_is_the_rule_sets_field_not_its_name():
    limited = dataclasses.replace(BAISHAN, name="baishan_house", dealer_opening_kongs=1)
    free = dataclasses.replace(BAICHENG, name="baicheng_house", dealer_opening_kongs=None)
    assert not _second_kong_offered(limited)
    assert _second_kong_offered(free)


def test_d12_the_limit_ends_with_the_dealers_first_discard():
    """The second kong waits for the next turn, where it is offered."""
    hands = ["1111m2222m345p67sC", *D12_HANDS[1:3], "1s2s3s4s5s8s9s1s2s3s4s5sF"]
    wall = wall_of({"hands": hands, "draws": "9s9s9s", "tail": "2s"}, BAICHENG, 0)
    r = Round(BAICHENG, wall=wall)
    r.act(0, Action.parse("angang 1m"))
    r.act(0, Action.parse("discard C"))
    while r.turn != 0 or r.drawn is None:
        seat = r.pending()[0]
        legal = r.legal_actions(seat)
        r.act(seat, PASS if PASS in legal else Action.parse(f"discard {tile_name(r.drawn)}"))
    assert Action.parse("angang 2m") in r.legal_actions(0)


# --- a house variant, end to end ------------------------------------------------------


@pytest.mark.parametrize(
    ("rules", "options"),
    [(HOUSE, {}), (HOUSE, {"cap": 1}), (NO_WINDS, {})],
    ids=["house", "house-cap-option", "no-winds"],
)
def test_a_house_variant_plays_a_match_that_records_and_replays(rules, options):
    match = Match(rules, seed=5, quan=1, options=options)
    rng = random.Random(5)
    bots = [make_bot("efficient", random.Random(rng.random())) for _ in range(4)]
    walls = []
    while not match.over:
        r = match.new_round()
        walls.append(r.wall.tiles)
        assert r.rules.name == rules.name
        assert r.rules.cap_base == options.get("cap", rules.cap_base)
        while not r.over:
            for seat in r.pending():
                obs = r.observe(seat)
                assert obs.rules is r.rules  # the table's configured object, not rebuilt
                r.act(seat, bots[seat].act(obs))
        match.finish(r)
        record = json.loads(json.dumps(record_of(r)))
        assert (record["rules"], record["options"]) == (rules.name, options)
        assert replay(record, rules).divergence is None
    assert len(walls) >= 4
    assert {t for wall in walls for t in wall} == set(rules.faces)


def test_a_house_record_replays_only_with_its_rule_set():
    r = Round(HOUSE, seed=2)
    record = json.loads(json.dumps(record_of(r)))
    with pytest.raises(RecordError, match="unknown rule set 'baishan_house'"):
        replay(record)
    with pytest.raises(RecordError, match="the record is of 'baishan_house', not 'baishan'"):
        replay(record, BAISHAN)
    assert replay(record, HOUSE).divergence is None


def test_a_preset_record_still_names_only_the_preset():
    record = record_of(Round("sichuan", seed=4, options={"que": ["m", "p", "s", "m"]}))
    assert (record["rules"], record["options"]) == ("sichuan", {"que": ["m", "p", "s", "m"]})
    assert replay(record).divergence is None


NINE_GATES = bytes(parse_counts("1112345678999m"))
FIVE_M = parse_tiles("5m")[0]


def _worth(rules: RuleSet, options: dict[str, object] | None = None) -> int:
    table = table_of(Round(rules, seed=1, options=options).observe(1))
    return EfficientBot(random.Random(0)).worth(table, NINE_GATES, (), FIVE_M, False)


def test_bots_value_a_hand_by_the_house_cap():
    """The house caps each payment at 2 × 底注: three payers, 6 at most."""
    assert _worth(HOUSE) == 6
    assert _worth(BAISHAN) > 6


def test_bots_value_a_hand_by_the_tables_cap_option():
    """A platform table configured with ``cap`` 3 pays 9 at most; the preset's cap is 50."""
    assert _worth(BAISHAN_PLATFORM, {"cap": 3}) == 9
    assert _worth(BAISHAN_PLATFORM) > 9


def test_bots_measure_hands_by_the_house_shapes():
    """Without 七小对 a seven-pairs hand is not ready."""
    pairs = bytes(parse_counts("1122m3344p5566s7s"))
    for rules, distance in ((BAISHAN, 0), (HOUSE, 2)):
        table = table_of(Round(rules, seed=1).observe(1))
        assert EfficientBot(random.Random(0)).distance(table, pairs, ()) == distance


def test_one_bot_follows_a_change_of_rules():
    """A bot's remembered measures hold for one rule set: moved to another table, it
    measures again."""
    bot = EfficientBot(random.Random(0))
    pairs = bytes(parse_counts("1122m3344p5566s7s"))
    for rules, distance in ((BAISHAN, 0), (HOUSE, 2), (BAISHAN, 0)):
        table = table_of(Round(rules, seed=1).observe(1))
        assert bot.distance(table, pairs, ()) == distance


def test_the_env_reads_the_tables_rule_set():
    pytest.importorskip("pettingzoo")
    from fangcheng.ai.env import OBSERVATION_LAYOUT, FangchengEnv, encode_observation

    at = {s.name: s for s in OBSERVATION_LAYOUT}
    unseen, features = at["unseen"], at["rules"]
    obs = Round(NO_WINDS, seed=1).observe(0)
    v = encode_observation(obs)
    assert not v[unseen.offset : unseen.offset + unseen.size][list(WINDS)].any()
    assert v[at["wall"].offset] == pytest.approx(len(Round(NO_WINDS, seed=1).wall) / 120)
    platform = encode_observation(Round(BAISHAN_PLATFORM, seed=1).observe(0))
    no_piao = dataclasses.replace(BAISHAN_PLATFORM, name="platform_house", piao_bets=())
    house = encode_observation(Round(no_piao, seed=1).observe(0))
    rules_of = slice(features.offset, features.offset + features.size)
    assert platform[rules_of].tolist() == [0, 1, 1, 0]
    assert house[rules_of].tolist() == [0, 1, 0, 0]
    env = FangchengEnv(HOUSE)
    env.reset(seed=3)
    assert env.round is not None and env.round.rules is HOUSE
    observed = env.observe("player_0")["observation"]
    assert isinstance(observed, np.ndarray)
    with pytest.raises(ValueError, match=r"漂 bets \(0, 3\); valid: 0, 5, 10"):
        FangchengEnv(dataclasses.replace(BAISHAN_PLATFORM, name="p", piao_bets=(0, 3)))
