"""Rule sets as data: presets, the registry, option validation, fan tables (RULES.md)."""

from __future__ import annotations

import dataclasses

import pytest

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
