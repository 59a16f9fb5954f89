"""Rule sets as data: presets, the registry, option validation, fan tables (RULES.md)."""

from __future__ import annotations

import dataclasses
from collections import Counter

import pytest

from fangcheng.engine.round import Round
from fangcheng.rules.fans import Fan, Scope
from fangcheng.rules.ruleset import (
    ALL_RULES,
    BAICHENG,
    BAISHAN,
    BAISHAN_PLATFORM,
    SICHUAN,
    OptionError,
    configure,
    find_rules,
)
from fangcheng.tiles.notation import WINDS

#: The fan names of RULES.md §2.7, §3.6, §4.6 and §5.6, in table order.
FAN_NAMES = {
    "baicheng": [
        "庄家",
        "自摸",
        "站立",
        "带鸡",
        "夹胡",
        "双飘",
        "单飘",
        "摸宝",
        "宝中宝",
        "杠上开花",
        "门清",
        "点炮",
    ],
    "baishan_platform": [
        "报听",
        "立门",
        "点炮",
        "自摸",
        "坐庄",
        "手把一",
        "杠上开花",
        "杠后炮",
        "一般高",
        "四过一",
        "碰碰胡",
        "三家清",
        "混一色",
        "两般高",
        "七小对",
        "清一色",
        "四家清",
        "十三幺",
    ],
    "baishan": [
        "报听",
        "立门",
        "点炮",
        "自摸",
        "坐庄",
        "对对胡",
        "手把一",
        "混一色",
        "一般高",
        "四过一",
        "清一色",
        "杠后炮",
        "三家清",
        "杠后开花",
        "七小对",
        "四家清",
        "十三幺",
    ],
    "sichuan": [
        "平胡",
        "对对胡",
        "金钩钓",
        "将对",
        "将金钩钓",
        "带幺九",
        "七对",
        "清一色",
        "根",
        "自摸",
        "杠上花",
        "杠上炮",
        "抢杠胡",
        "海底捞月",
        "天胡",
        "地胡",
    ],
}


def test_find_rules_and_unknown_names():
    for rules in ALL_RULES:
        assert find_rules(rules.name) is rules
    with pytest.raises(ValueError, match="baicheng, baishan, baishan_platform, sichuan"):
        find_rules("riichi")


def test_d3_tile_sets():
    """D3: baicheng 120 tiles (no winds), both Baishan 136, sichuan 108 (no honours): the
    wall a hand deals from holds four of each face in play and nothing else."""
    for rules, count in ((BAICHENG, 120), (BAISHAN, 136), (BAISHAN_PLATFORM, 136), (SICHUAN, 108)):
        wall = Round(rules, seed=3).wall.tiles
        assert len(wall) == count
        assert set(Counter(wall).values()) == {4}
    assert not set(Round(BAICHENG, seed=3).wall.tiles) & set(WINDS)
    assert max(Round(SICHUAN, seed=3).wall.tiles) < 27


def test_d8_claim_window_defaults_and_option():
    """D8: 3 s in both Baishan rule sets, 5 s otherwise; configurable."""
    assert (BAISHAN.claim_window, BAISHAN_PLATFORM.claim_window) == (3.0, 3.0)
    assert (BAICHENG.claim_window, SICHUAN.claim_window) == (5.0, 5.0)
    rules, _ = configure(BAICHENG, {"claim_window": 8})
    assert rules.claim_window == 8.0 and BAICHENG.claim_window == 5.0
    with pytest.raises(OptionError, match="claim_window"):
        configure(BAICHENG, {"claim_window": 0})


@pytest.mark.parametrize("rules", ALL_RULES, ids=lambda r: r.name)
def test_fan_tables_follow_rules_md(rules):
    assert [f.name for f in rules.fans] == FAN_NAMES[rules.name]


def test_fan_values_and_scopes_of_rules_md():
    """Spot checks of the value/scope columns, incl. D38 (flat 十三幺) and D58 (2 each)."""
    assert (BAICHENG.fan("单飘").value, BAICHENG.fan("宝中宝").value) == (3, 3)
    assert BAICHENG.fan("门清").scope is Scope.PAYER
    assert BAISHAN_PLATFORM.fan("报听").scope is Scope.BOTH
    assert BAISHAN_PLATFORM.fan("十三幺").flat == 100
    assert (BAISHAN.fan("杠后开花").value, BAISHAN.fan("杠后炮").value) == (2, 2)
    assert (BAISHAN.fan("七小对").value, BAISHAN.fan("四家清").value) == (3, 3)
    assert BAISHAN_PLATFORM.fan("四家清").value == 4
    assert SICHUAN.fan("天胡").at_cap and SICHUAN.fan("地胡").at_cap
    with pytest.raises(KeyError):
        SICHUAN.fan("报听")


def test_a_fan_must_have_the_predicates_its_scope_needs():
    with pytest.raises(ValueError, match="scope"):
        Fan(name="x", en="x", value=1, scope=Scope.PAYER, why="", winner=lambda c, a: 1)
    with pytest.raises(ValueError, match="scope"):
        Fan(name="x", en="x", value=1, scope=Scope.BOTH, why="", winner=lambda c, a: 1)


def test_d15_d35_d50_shapes():
    """D15 no seven pairs in baicheng; D35 distinct pairs in Baishan; D50 龙七对 in sichuan."""
    assert not BAICHENG.shapes.seven_pairs and BAICHENG.shapes.dragon_set
    assert BAISHAN.shapes.seven_pairs and not BAISHAN.shapes.quad_pairs
    assert SICHUAN.shapes.quad_pairs and not SICHUAN.shapes.thirteen_orphans


def test_d48_no_chi_in_sichuan_and_one_winner_elsewhere():
    """D48: no 吃 in sichuan; 一炮多响 only there (§1.7)."""
    assert not SICHUAN.chi and SICHUAN.multiple_winners
    assert all(r.chi and not r.multiple_winners for r in (BAICHENG, BAISHAN, BAISHAN_PLATFORM))


def test_d26_d39_d51_d59_caps():
    """D26/D59: no cap in baicheng and baishan; D39: 50 × 底注; D51: 4 fans."""
    assert BAICHENG.cap_fans is None and BAICHENG.cap_base is None
    assert BAISHAN.cap_fans is None and BAISHAN.cap_base is None
    assert BAISHAN_PLATFORM.cap_base == 50 and SICHUAN.cap_fans == 4


def test_d11_d31_d47_d57_dealer_rotation_knobs():
    """D11 baicheng and D47 sichuan keep the dealer on a draw; D31/D57 Baishan pass it."""
    assert BAICHENG.dealer_stays_on_draw and SICHUAN.dealer_stays_on_draw
    assert not BAISHAN.dealer_stays_on_draw and not BAISHAN_PLATFORM.dealer_stays_on_draw
    assert SICHUAN.first_winner_deals and not BAICHENG.dealer_by_dice


def test_d61_baishan_kong_table_and_d54_sichuan_payers():
    """D61: u = 1 with ×2 for 大杠, 暗杠 and the dealer; D54: who pays 刮风 and 下雨."""
    k = BAISHAN.kongs
    assert (k.ming, k.an, k.big_multiplier, k.dealer_multiplier) == (1, 2, 2, 2)
    s = SICHUAN.kongs
    assert (s.ming, s.bu, s.an) == (2, 1, 2)
    assert s.ming_payers.value == "source" and s.an_payers.value == "unfinished"


def test_overrides_by_replace_keep_the_derived_tables():
    """Rule sets are frozen data: `dataclasses.replace` makes a variant."""
    capped = dataclasses.replace(SICHUAN, cap_fans=3)
    assert capped.cap_fans == 3 and SICHUAN.cap_fans == 4
    assert dict((f.name, v) for f, v, _ in capped.winner_tests)["天胡"] == 3
    with pytest.raises(dataclasses.FrozenInstanceError):
        SICHUAN.cap_fans = 5  # type: ignore[misc]


# --- options -----------------------------------------------------------------------


def test_room_is_only_for_the_platform_and_defaults_to_free():
    _, options = configure(BAISHAN_PLATFORM, {})
    assert options.room is not None and options.room.name == "free"
    _, options = configure(BAISHAN_PLATFORM, {"room": "anti_cheat"})
    assert options.anti_cheat and options.room is not None and options.room.fee_percent == 2
    with pytest.raises(OptionError, match="free, junior, intermediate, anti_cheat"):
        configure(BAISHAN_PLATFORM, {"room": "vip"})
    with pytest.raises(OptionError, match="unknown option 'room' for baishan; valid: claim_window"):
        configure(BAISHAN, {"room": "free"})


@pytest.mark.parametrize(
    ("piao", "message"),
    [
        ([0, 5, 10], "four values"),
        ([0, 5, 10, 7], "seat 3 is 7; valid: 0, 5, 10"),
        ([0, 5, True, 0], "seat 2"),
        ("5", "four values"),
    ],
)
def test_piao_needs_four_bets_of_0_5_or_10(piao, message):
    with pytest.raises(OptionError, match=message):
        configure(BAISHAN_PLATFORM, {"piao": piao})


def test_piao_and_que_values():
    _, options = configure(BAISHAN_PLATFORM, {"piao": [10, 5, 0, 0]})
    assert options.piao == (10, 5, 0, 0)
    _, options = configure(SICHUAN, {"que": ["s", "p", "m", "p"]})
    assert options.que == (2, 1, 0, 1)
    with pytest.raises(OptionError, match="valid: m, p, s"):
        configure(SICHUAN, {"que": ["s", "p", "z", "p"]})
    with pytest.raises(OptionError, match="unknown option 'que'"):
        configure(BAICHENG, {"que": ["s", "p", "m", "p"]})


def test_cap_option_in_the_rule_sets_own_unit():
    rules, _ = configure(SICHUAN, {"cap": 5})
    assert rules.cap_fans == 5
    rules, _ = configure(BAISHAN_PLATFORM, {"cap": 80})
    assert rules.cap_base == 80
    with pytest.raises(OptionError, match="positive integer"):
        configure(SICHUAN, {"cap": 0})
    with pytest.raises(OptionError, match="unknown option 'cap' for baicheng"):
        configure(BAICHENG, {"cap": 5})


def test_d53_only_sichuan_plays_on_after_a_win():
    """D53 / §4.8: 血战到底 is sichuan's; the other rule sets end at the first win (截胡)."""
    from fangcheng.rules.ruleset import ALL_RULES

    assert {r.name for r in ALL_RULES if r.bloody} == {"sichuan"}
    assert all(r.multiple_winners == r.bloody for r in ALL_RULES)
