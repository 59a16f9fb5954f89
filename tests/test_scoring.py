"""Scoring one win: every fan where it applies and where it just fails, requirements,
payments, caps, kongs and fees (RULES.md §2.7, §3.6, §4.6, §5.6 and the DECISIONs)."""

from __future__ import annotations

import dataclasses
import gzip
import json
from collections.abc import Mapping, Sequence
from pathlib import Path

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from fangcheng.rules.fans import Fan, Scope
from fangcheng.rules.requirements import wait_set
from fangcheng.rules.ruleset import find_rules
from fangcheng.scoring.payments import kong_payments, may_pay_kongs
from fangcheng.scoring.scorer import Score, best_ready_fans, readings, score
from fangcheng.scoring.situation import Situation, load_situation
from fangcheng.tiles.melds import Meld, MeldKind
from fangcheng.tiles.notation import format_tiles, parse_counts, parse_tiles, tile_name

# --- building situations -------------------------------------------------------------


def meld(kind: str, tiles: str, source: int | None = None, **extra: object) -> dict[str, object]:
    out: dict[str, object] = {"kind": kind, "tiles": tiles}
    if source is not None:
        out["from"] = source
    out.update(extra)
    return out


def build(
    rules: str,
    hand: str,
    tile: str,
    *,
    winner: int = 0,
    dealer: int = 3,
    by: str = "discard",
    source: int | None = None,
    melds: Sequence[Mapping[str, object]] = (),
    seats: Mapping[int, Mapping[str, object]] | None = None,
    **extra: object,
) -> dict[str, object]:
    """A `score` input: the winner's hand, the given seats, the rest filled with suited
    tiles left in the set, spread over faces so fillers hold nothing in particular."""
    given = {
        i: {"concealed": s["concealed"], "melds": list(s.get("melds", []))}  # type: ignore[call-overload]
        for i, s in (seats or {}).items()
    }
    given[winner] = {"concealed": hand, "melds": list(melds)}
    left = {t: 4 for t in find_rules(rules).faces}
    used = [tile, str(extra.get("treasure") or ""), *map(str, extra.get("retired_treasure", []))]  # type: ignore[call-overload]
    for s in given.values():
        used.append(str(s["concealed"]))
        used.extend(str(m["tiles"]) for m in s["melds"])  # type: ignore[attr-defined]
    for text in used:
        for t in parse_tiles(text):
            left[t] -= 1
    pool = [t for copy in range(4) for t in sorted(left) if left[t] > copy and t < 27]
    for i in range(4):
        if i not in given:
            take, pool = pool[:13], pool[13:]
            given[i] = {"concealed": format_tiles(take), "melds": []}
    data: dict[str, object] = {
        "rules": rules,
        "base": 1,
        "dealer": dealer,
        "winner": winner,
        "win_tile": tile,
        "win_by": by,
        "seats": [given[i] for i in range(4)],
    }
    if by in ("discard", "robbed_kong"):
        data["from"] = (winner + 2) % 4 if source is None else source
    data.update(extra)
    return data


def run(rules: str, hand: str, tile: str, **kw: object) -> Score:
    return score(load_situation(build(rules, hand, tile, **kw)))  # type: ignore[arg-type]


def fans(result: Score) -> dict[str, int]:
    """The winner's fans, name → value."""
    assert result.win, result.reason
    assert result.reading is not None
    return {a.fan.name: a.value for a in result.reading.fans}


def payer(result: Score, seat: int) -> dict[str, int]:
    """One payer's own fans (beyond the winner's), name → value."""
    assert result.reading is not None
    for p in result.reading.payers:
        if p.seat == seat:
            return {a.fan.name: a.value for a in p.fans[len(result.reading.fans) :]}
    raise AssertionError(f"seat {seat} does not pay")


def amounts(result: Score) -> dict[int, int]:
    assert result.reading is not None
    return {p.seat: p.amount for p in result.reading.payers}


def totals(result: Score) -> dict[int, int]:
    assert result.reading is not None
    return {p.seat: p.total for p in result.reading.payers}


PENG_C = meld("peng", "CCC", 1)
PENG_E = meld("peng", "EEE", 1)

# --- baicheng ------------------------------------------------------------------------


def test_baicheng_dealer_fan_both_ways():
    """庄家 (WL): a dealer winner adds 1 for every payer; a dealer payer pays 1 more."""
    hand = "123m456s79m55p"
    won = run("baicheng", hand, "8m", dealer=0, melds=[meld("peng", "999p", 3)])
    assert fans(won)["庄家"] == 1
    lost = run("baicheng", hand, "8m", dealer=3, melds=[meld("peng", "999p", 3)])
    assert "庄家" not in fans(lost)
    assert payer(lost, 3)["庄家"] == 1 and "庄家" not in payer(lost, 1)


def test_baicheng_self_draw_and_discard():
    """自摸 only on a tile the winner drew; the discarder pays 点炮 (§2.7 rows 2, 12)."""
    hand, melds = "123m456s79m55p", [meld("peng", "999p", 3)]
    drawn = run("baicheng", hand, "8m", by="self_draw", melds=melds)
    assert fans(drawn)["自摸"] == 1
    assert all("点炮" not in payer(drawn, s) for s in (1, 2, 3))
    dealt = run("baicheng", hand, "8m", source=2, melds=melds)
    assert "自摸" not in fans(dealt)
    assert payer(dealt, 2)["点炮"] == 1 and "点炮" not in payer(dealt, 1)


def test_d21_standing_winner_and_a_laid_xuanfeng_opens():
    """站立 needs no 吃/碰/exposed kong; an 暗杠 keeps it, a laid 旋风杠 does not (D21)."""
    closed = run("baicheng", "123m456s789p55pCF", "P", by="self_draw")
    assert fans(closed)["站立"] == 1
    an_gang = run(
        "baicheng", "123m456s55pCF", "P", by="self_draw", melds=[meld("an_gang", "9999p")]
    )
    assert fans(an_gang)["站立"] == 1
    laid = run("baicheng", "123m456s79m55p", "8m", by="self_draw", melds=[meld("xuanfeng", "CFP")])
    assert "站立" not in fans(laid)


def test_d64_chicken_and_a_drawn_1s_treasure():
    """带鸡: a 1s anywhere in the final hand; under 摸宝 a drawn 1s treasure counts (D64)."""
    with_1s = run("baicheng", "123s456m79m55p", "8m", melds=[meld("peng", "999p", 3)])
    assert fans(with_1s)["带鸡"] == 1
    without = run("baicheng", "234s456m79m55p", "8m", melds=[meld("peng", "999p", 3)])
    assert "带鸡" not in fans(without)
    treasure = run(
        "baicheng",
        "234s456m78m55p",
        "1s",
        by="treasure",
        treasure="1s",
        melds=[meld("peng", "999p", 3)],
    )
    assert fans(treasure)["带鸡"] == 1 and fans(treasure)["摸宝"] == 2


@pytest.mark.parametrize(
    ("hand", "tile", "jia"),
    [
        ("123m456s79m55p", "8m", True),  # 坎
        ("12m456s789p55p", "3m", True),  # 边 (三七边)
        ("123m456s789p5p", "5p", True),  # 单吊
        ("123m456s78m55p", "6m", False),  # two-sided
        ("1234m456s789p", "4m", False),  # D16 (c): 两头吊, the end of a four-tile run
        ("1234m456s789p", "1m", False),  # the other end
    ],
)
def test_d16_jia_shapes(hand: str, tile: str, jia: bool):
    """D16 (a) and (c): 坎, 边, 吊 count as 夹胡; a two-sided or 两头吊 wait does not."""
    result = run("baicheng", hand, tile, melds=[PENG_C])
    assert ("夹胡" in fans(result)) is jia


def test_d16_dragon_sandwich_is_jia():
    """D16 (a): two different dragons waiting on the third is a 夹; the set is the pung."""
    result = run("baicheng", "123m456s789p55pCF", "P")
    assert fans(result)["夹胡"] == 1


def test_d16_lone_terminal_is_jia_and_just_fails_with_another_terminal():
    """D16 (b) 缺么九单胡么九: no 么九 before the win, and the winning tile is one."""
    lone = run("baicheng", "234m345s555p78p22s", "9p")
    assert fans(lone)["夹胡"] == 1
    other = run("baicheng", "234m345s555p78p11s", "9p")
    assert "夹胡" not in fans(other)


def test_d17_single_and_double_piao_replace_jia():
    """D17: 单飘 3 (pair wait) and 双飘 2 (pung wait) replace 夹胡; concealed pungs count."""
    melds = [meld("peng", "111m", 2), meld("peng", "999p", 2)]
    single = run("baicheng", "555s222p7m", "7m", melds=melds)
    assert fans(single) == {"单飘": 3}
    double = run("baicheng", "555s77m33p", "7m", melds=melds)
    assert fans(double) == {"双飘": 2}
    with_chow = run("baicheng", "345s77m33p", "7m", melds=melds)
    assert "双飘" not in fans(with_chow) and "单飘" not in fans(with_chow)


def test_d17_dragon_sandwich_in_all_pungs_is_double_piao():
    """D17: the all-pung hand won by a dragon sandwich is 双飘 (2), without 夹胡."""
    melds = [meld("peng", "111m", 2), meld("peng", "999p", 2)]
    result = run("baicheng", "555sCF33p", "P", melds=melds)
    assert fans(result) == {"双飘": 2}


def test_d18_no_own_fan_for_one_tile_in_hand():
    """D18: 手把一 has no fan in baicheng; it scores 夹胡 (吊) or 单飘."""
    melds = [meld("peng", "111m", 2), meld("chi", "456s", 3), meld("peng", "999p", 2)]
    result = run("baicheng", "7m", "7m", melds=[*melds, meld("peng", "CCC", 1)])
    assert "手把一" not in fans(result)
    assert fans(result)["夹胡"] == 1


def test_d24_treasure_draw_replaces_self_draw():
    """D24: 摸宝 (2) replaces 自摸; the substitute is a wait (D19)."""
    result = run(
        "baicheng",
        "123m456s78m55p",
        "2s",
        by="treasure",
        treasure="2s",
        melds=[meld("peng", "999p", 3)],
    )
    assert fans(result) == {"摸宝": 2}
    assert result.reading is not None and result.reading.tile in parse_tiles("6m9m")


def test_d20_treasure_on_the_jia_wait_replaces_both_and_stacks_with_jia():
    """D20, D24: 宝中宝 3 when the treasure is the 夹 winning tile; 夹胡 still adds 1."""
    result = run(
        "baicheng",
        "123m456s79m55p",
        "8m",
        by="treasure",
        treasure="8m",
        melds=[meld("peng", "999p", 3)],
    )
    assert fans(result) == {"宝中宝": 3, "夹胡": 1}


def test_d19_best_substitute_is_chosen():
    """D19: the treasure stands in for the wait that scores most: of 4s (坎 in 3-4-5s)
    and 7s (two-sided), the 夹 wait."""
    result = run(
        "baicheng",
        "234m44p34556s",
        "2p",
        by="treasure",
        treasure="2p",
        melds=[meld("peng", "999p", 3)],
    )
    assert result.reading is not None and result.reading.tile == parse_tiles("4s")[0]
    assert fans(result) == {"摸宝": 2, "夹胡": 1}


def test_d68_drawing_the_treasure_face_scores_treasure_not_self_draw():
    """D68: a self-drawn treasure face wins by 摸宝 or 宝中宝, never 自摸."""
    result = run(
        "baicheng",
        "123m456s79m55p",
        "8m",
        by="self_draw",
        treasure="8m",
        melds=[meld("peng", "999p", 3)],
    )
    assert fans(result) == {"宝中宝": 3, "夹胡": 1}


def test_d62_treasure_on_a_piao_pair_wait_stacks_with_single_piao():
    """D62: 宝中宝 is judged on the 夹 shape even when 单飘 replaces the 夹胡 fan."""
    melds = [meld("peng", "111m", 2), meld("peng", "999p", 2)]
    result = run("baicheng", "555s222p7m", "7m", by="treasure", treasure="7m", melds=melds)
    assert fans(result) == {"单飘": 3, "宝中宝": 3}


def test_treasure_draw_needs_a_ready_hand():
    """§2.5 item 6: 摸宝 only for a ready hand; otherwise the reason says so."""
    result = run(
        "baicheng",
        "123m456s7m9p55pC13s",
        "2s",
        by="treasure",
        treasure="2s",
        melds=[],
    )
    assert not result.win and "摸宝" in result.reason


def test_a_discarded_treasure_face_is_an_ordinary_tile():
    """§2.5 item 6: a discarded treasure-face tile is ordinary for discard wins (D20)."""
    result = run("baicheng", "123m456s79m55p", "8m", treasure="8m", melds=[meld("peng", "999p", 3)])
    assert fans(result) == {"夹胡": 1}


def test_baicheng_kong_bloom():
    """杠上开花 (D69): a self-drawn win on one's own replacement; not on a plain draw."""
    melds = [meld("an_gang", "9999p")]
    bloom = run("baicheng", "123m456s79m55p", "8m", by="self_draw", after_kong=True, melds=melds)
    assert fans(bloom)["杠上开花"] == 1 and fans(bloom)["自摸"] == 1
    plain = run("baicheng", "123m456s79m55p", "8m", by="self_draw", melds=melds)
    assert "杠上开花" not in fans(plain)


def test_baicheng_closed_payer():
    """门清 (L): a closed payer pays 1 more ("背靠背"); an open one does not."""
    result = run(
        "baicheng",
        "123m456s79m55p",
        "8m",
        source=2,
        melds=[meld("peng", "999p", 3)],
        seats={3: {"concealed": "1122m33p4455s", "melds": [meld("peng", "666s", 2)]}},
    )
    assert payer(result, 1)["门清"] == 1 and payer(result, 2)["门清"] == 1
    assert "门清" not in payer(result, 3)


def test_d25_robbed_kong_has_no_fan_and_the_konger_pays_as_discarder():
    """D25 / §1.7: 抢杠胡 earns no fan; the robbed konger pays 点炮."""
    result = run(
        "baicheng",
        "123m456s79m55p",
        "8m",
        by="robbed_kong",
        source=2,
        dealer=1,
        melds=[meld("peng", "999p", 3)],
        seats={2: {"concealed": "1234567p123s", "melds": [meld("peng", "888m", 3)]}},
    )
    assert fans(result) == {"夹胡": 1}
    assert payer(result, 2) == {"点炮": 1}


def test_d26_no_cap_in_baicheng():
    """D26: amounts are 2^N without a cap — here N = 8 for the dealer payer."""
    melds = [meld("bu_gang", "1111m", 2), meld("peng", "999p", 2)]  # 杠上开花 needs the kong
    result = run(
        "baicheng",
        "555s222p1s",
        "1s",
        by="treasure",
        treasure="1s",
        melds=melds,
        dealer=1,
        after_kong=True,
    )
    # 单飘 3 + 宝中宝 3 + 带鸡 1 + 杠上开花 1 = 8; the dealer pays 9 and closed payers 10
    assert sum(fans(result).values()) == 8
    assert amounts(result)[1] == 2 ** totals(result)[1] > 2**8


@pytest.mark.parametrize(
    ("hand", "tile", "melds", "reason"),
    [
        ("123m456m79m55m", "8m", [meld("peng", "999p", 3)], "三门全"),
        ("234m345s55p78p", "6p", [meld("peng", "222s", 3)], "么九"),
        ("123m456s78p55p", "9p", [meld("chi", "789m", 3)], "碰"),
        ("123m456s789p5p", "6p", [PENG_C], "incomplete"),
    ],
)
def test_baicheng_requirements_give_a_reason(hand, tile, melds, reason):
    """§2.4: 三门全, 么九 and 必须有碰 each fail with a reason naming them."""
    result = run("baicheng", hand, tile, melds=melds)
    assert not result.win and reason in result.reason
    assert result.to_json() == {"win": False, "reason": result.reason}


def test_d14_concealed_triplet_and_a_dragon_pair_satisfy_the_pung():
    """D14: a concealed pung counts as 碰; so does a dragon pair (§2.4); a plain pair
    does not."""
    triplet = run("baicheng", "123m456s789p555p1m", "1m")
    assert triplet.win
    dragon_pair = run("baicheng", "123m456s789p123sC", "C")
    assert dragon_pair.win
    plain_pair = run("baicheng", "123m456s789p123s1m", "1m")
    assert not plain_pair.win and "碰" in plain_pair.reason


def test_d15_no_seven_pairs_in_baicheng():
    """D15: seven pairs is not a legal shape in baicheng."""
    result = run("baicheng", "1122m3344p5566s9m", "9m")
    assert not result.win and "incomplete" in result.reason


def test_d23_concealed_dragon_set_counts_as_ming_gang():
    """D23: a concealed 中发白 set pays like a 明杠 (5 × 底注 from each other player)."""
    result = run(
        "baicheng",
        "123m456s79m55p",
        "8m",
        melds=[meld("peng", "999p", 3)],
        seats={2: {"concealed": "CFP123456m789s1p"}},
    )
    assert result.kongs == (-5, -5, 15, -5)


def test_d23_a_set_completed_by_the_winning_tile_is_no_kong():
    """D23: the set the winning tile completes does not count at settlement."""
    result = run("baicheng", "123m456s789p55pCF", "P")
    assert result.kongs == (0, 0, 0, 0)


def test_d27_three_treasure_tiles_count_as_an_concealed_kong():
    """D27: three concealed treasure-face tiles pay 10 × 底注 from each, undeclared."""
    result = run(
        "baicheng",
        "123m456s79m55p",
        "8m",
        treasure="4p",
        melds=[meld("peng", "999p", 3)],
        seats={3: {"concealed": "444p123s789s125m9m"}},
    )
    assert result.kongs == (-10, -10, -10, 30)


def test_d65_the_winners_three_treasure_tiles_exclude_the_winning_tile():
    """D65: two treasure tiles plus the winning one are no 暗杠."""
    result = run("baicheng", "123m456s789p44pCC", "4p", treasure="4p")
    assert result.win and result.kongs == (0, 0, 0, 0)


def test_treasure_peng_pays_like_a_ming_gang():
    """§2.9: 叉宝 (a 碰 of the treasure face, since retired by 换宝, D29) is scored as a
    明杠, 5 from each."""
    result = run(
        "baicheng",
        "123m456s79m55p",
        "8m",
        treasure="3s",
        retired_treasure=["6p"],
        melds=[meld("peng", "999p", 3)],
        seats={2: {"concealed": "1234567m123s", "melds": [meld("peng", "666p", 1, treasure=True)]}},
    )
    assert result.kongs == (-5, -5, 15, -5)


def test_example_b5_xuanfeng_with_an_added_dragon_pays_two_ming_gang():
    """§2.6 item 4: a laid 旋风杠 is 1 明杠 plus 1 per added dragon."""
    result = run(
        "baicheng",
        "123m456p789s5m",
        "5m",
        by="self_draw",
        after_kong=True,
        melds=[meld("xuanfeng", "CFPF")],
        winner=3,
        dealer=0,
    )
    assert result.kongs == (-10, -10, -10, 30)


def test_d22_an_extra_dragon_kept_concealed_is_an_ordinary_tile():
    """D22: a fourth dragon not laid counts for nothing: the concealed set is one 明杠
    (D23) and the extra 中 becomes the dragon pair with the winning tile."""
    result = run("baicheng", "123m456s789pCFPC", "C")
    assert result.win and result.kongs == (15, -5, -5, -5)


# --- baishan_platform and baishan ------------------------------------------------------


PLATFORM_WIN = ("baishan_platform", "4p5p6p6s7s8s5m6m7m1p", "1p")
NINE_M = meld("peng", "999m", 3)


def test_platform_declared_ready_both_ways():
    """报听 (WL): a declared winner adds 1 for all; a declared payer pays 1 more."""
    rules, hand, tile = PLATFORM_WIN
    result = run(
        rules,
        hand,
        tile,
        melds=[NINE_M],
        declared_ready=[True, False, False, True],
        seats={3: {"concealed": "1m2m3m4s5s6s2p3p4p8s", "melds": [meld("peng", "WWW", 0)]}},
    )
    assert fans(result)["报听"] == 1 and payer(result, 3)["报听"] == 1
    quiet = run(rules, hand, tile, melds=[NINE_M])
    assert "报听" not in fans(quiet)


def test_d32_declared_ready_needs_exactly_one_winning_face():
    """D32: 报听 is only allowed when the wait set has one face."""
    data = build("baishan", "2p3p4p6s7s8s5m6m7m1p", "1p", melds=[NINE_M])
    data["declared_ready"] = [True, False, False, False]
    with pytest.raises(ValueError, match="D32"):
        load_situation(data)


def test_platform_closed_hand_both_ways():
    """立门 (WL): closed winner adds 1; a closed payer pays 1; 暗杠 keeps it closed."""
    open_payer = run(
        "baishan_platform",
        "123m456m777p89sEE",
        "7s",
        source=1,
        seats={3: {"concealed": "1122m33p4455s", "melds": [meld("peng", "666s", 2)]}},
    )
    assert fans(open_payer)["立门"] == 1
    assert payer(open_payer, 1)["立门"] == 1 and "立门" not in payer(open_payer, 3)
    an_gang = run(
        "baishan_platform",
        "123m456m89sEE",
        "7s",
        source=1,
        melds=[meld("an_gang", "7777p")],
        seats={3: {"concealed": "1122m33p4455s", "melds": [meld("peng", "666s", 2)]}},
    )
    assert fans(an_gang)["立门"] == 1


def test_d36_three_closed_payers_replace_their_closed_fan():
    """D36: an open winner against three closed payers scores 三家清 2, no payer 立门."""
    rules, hand, tile = PLATFORM_WIN
    result = run(rules, hand, tile, melds=[NINE_M])
    assert fans(result) == {"三家清": 2}
    assert all("立门" not in payer(result, s) for s in (1, 2, 3))
    one_open = run(
        rules,
        hand,
        tile,
        melds=[NINE_M],
        seats={3: {"concealed": "1122m33p4455s", "melds": [meld("peng", "666s", 2)]}},
    )
    assert "三家清" not in fans(one_open) and payer(one_open, 1)["立门"] == 1


def test_d36_all_four_closed_suppress_every_closed_fan():
    """D36: 四家清 (4 on the platform, 3 in baishan) and no 立门 for anyone."""
    platform = run("baishan_platform", "123m456m777p89sEE", "7s", source=1)
    assert fans(platform) == {"四家清": 4}
    assert all("立门" not in payer(platform, s) for s in (1, 2, 3))
    baishan = run("baishan", "123m456m777p89sEE", "7s", source=1)
    assert fans(baishan) == {"四家清": 3}


def test_platform_dealer_fan_both_ways():
    """坐庄 (WL) on the platform and in baishan."""
    rules, hand, tile = PLATFORM_WIN
    result = run(rules, hand, tile, melds=[NINE_M], dealer=0)
    assert fans(result)["坐庄"] == 1
    payer_dealer = run(rules, hand, tile, melds=[NINE_M], dealer=2)
    assert payer(payer_dealer, 2)["坐庄"] == 1 and "坐庄" not in fans(payer_dealer)


def test_d72_one_tile_in_hand_both_ways_and_not_with_an_concealed_kong():
    """手把一 (WL, D72): one concealed tile and no 暗杠, for the winner and for a payer."""
    melds = [meld("peng", "EEE", 1), meld("peng", "SSS", 1), meld("chi", "123m", 3)]
    result = run(
        "baishan_platform",
        "5p",
        "5p",
        melds=[*melds, NINE_M],
        seats={
            2: {
                "concealed": "8s",
                "melds": [
                    meld("peng", "WWW", 1),
                    meld("peng", "NNN", 1),
                    meld("chi", "456s", 1),
                    meld("peng", "CCC", 1),
                ],
            }
        },
    )
    assert fans(result)["手把一"] == 1 and payer(result, 2)["手把一"] == 1
    kong = run("baishan_platform", "5p", "5p", melds=[*melds, meld("an_gang", "9999m")])
    assert "手把一" not in fans(kong)


#: Seat 2 after its 暗杠: the discarder of a 杠后炮 (D69), beside `hand` below.
KONGED_2 = {2: {"concealed": "123s234s5s1m2m3m", "melds": [meld("an_gang", "EEEE")]}}


def test_d69_platform_kong_bloom_and_kong_discard():
    """D69: 杠上开花 (W, 1) on one's replacement; 杠后炮 (L, 1) for the discarder."""
    melds = [meld("an_gang", "9999m")]
    hand = "4p5p6p6s7s8s5m6m7m1p"
    bloom = run("baishan_platform", hand, "1p", by="self_draw", after_kong=True, melds=melds)
    assert fans(bloom)["杠上开花"] == 1
    discard = run(
        "baishan_platform", hand, "1p", source=2, after_kong=True, melds=melds, seats=KONGED_2
    )
    assert payer(discard, 2)["杠后炮"] == 1 and "杠后炮" not in payer(discard, 1)
    plain = run("baishan_platform", hand, "1p", source=2, melds=melds)
    assert "杠后炮" not in payer(plain, 2)


def test_d58_baishan_kong_fans_are_worth_two():
    """D58: baishan's 杠后开花 and 杠后炮 are 2 each (the numeric table)."""
    melds = [meld("an_gang", "9999m")]
    hand = "4p5p6p6s7s8s5m6m7m1p"
    bloom = run("baishan", hand, "1p", by="self_draw", after_kong=True, melds=melds)
    assert fans(bloom)["杠后开花"] == 2
    discard = run("baishan", hand, "1p", source=2, after_kong=True, melds=melds, seats=KONGED_2)
    assert payer(discard, 2)["杠后炮"] == 2


def test_d70_two_identical_chows_and_three():
    """D37, D70: two identical chows 一般高 1; three 两般高 2 on the platform, 一般高 1 in
    baishan (D59); two different chows nothing."""
    two = run("baishan_platform", "112233m456p9s", "9s", melds=[PENG_E])
    assert fans(two)["一般高"] == 1
    different = run("baishan_platform", "123234m456p9s", "9s", melds=[PENG_E])
    assert "一般高" not in fans(different)
    three = [meld("chi", "123m", 3), PENG_E]
    platform = run("baishan_platform", "112233m9s", "9s", melds=three)
    assert fans(platform)["两般高"] == 2 and "一般高" not in fans(platform)
    baishan = run("baishan", "112233m9s", "9s", melds=three)
    assert fans(baishan)["一般高"] == 1 and "两般高" not in fans(baishan)


def test_d70_a_payer_counts_only_exposed_identical_chows():
    """D70: a payer's 一般高 needs both chows exposed; all three for 两般高."""
    two_exposed = {
        "concealed": "1234m",
        "melds": [meld("chi", "456s", 1), meld("chi", "456s", 1), meld("peng", "WWW", 0)],
    }
    three_exposed = {
        "concealed": "1m",
        "melds": [
            meld("chi", "456s", 1),
            meld("chi", "456s", 1),
            meld("chi", "456s", 1),
            meld("peng", "WWW", 0),
        ],
    }
    rules, hand, tile = PLATFORM_WIN
    result = run(rules, hand, tile, melds=[NINE_M], seats={2: two_exposed})
    assert payer(result, 2)["一般高"] == 1
    result = run(rules, hand, tile, melds=[NINE_M], seats={2: three_exposed})
    assert payer(result, 2)["两般高"] == 2 and "一般高" not in payer(result, 2)
    one_exposed = {
        "concealed": "456s1234m",
        "melds": [meld("chi", "456s", 1), meld("peng", "WWW", 0)],
    }
    result = run(rules, hand, tile, melds=[NINE_M], seats={2: one_exposed})
    assert "一般高" not in payer(result, 2)


def test_d71_four_of_a_face_for_the_winner_and_a_payer():
    """D71: all four copies not as a kong (winner); four copies in exposed melds (payer)."""
    result = run("baishan_platform", "111m123m456p9s", "9s", melds=[PENG_E])
    assert fans(result)["四过一"] == 1
    konged = run("baishan_platform", "234m456p789p9s", "9s", melds=[meld("an_gang", "1111m")])
    assert "四过一" not in fans(konged)
    payer_seat = {
        "concealed": "1234p",
        "melds": [meld("peng", "444s", 3), meld("chi", "456s", 1), meld("peng", "WWW", 0)],
    }
    rules, hand, tile = PLATFORM_WIN
    paid = run(rules, hand, tile, melds=[NINE_M], seats={2: payer_seat})
    assert payer(paid, 2)["四过一"] == 1


def test_all_pungs_platform_two_baishan_one():
    """碰碰胡 2 (platform, W only) and 对对胡 1 (baishan); a chow breaks it."""
    platform = run(
        "baishan_platform", "222m555p9s", "9s", melds=[PENG_E, meld("peng", "1s1s1s", 3)]
    )
    assert fans(platform)["碰碰胡"] == 2
    baishan = run("baishan", "222m555p9s", "9s", melds=[PENG_E, meld("peng", "1s1s1s", 3)])
    assert fans(baishan)["对对胡"] == 1
    chow = run("baishan", "234m555p9s", "9s", melds=[PENG_E, meld("peng", "1s1s1s", 3)])
    assert "对对胡" not in fans(chow)


def test_half_and_full_flush():
    """混一色 (one suit + honours) and 清一色 (one suit only), values per rule set."""
    half = run("baishan_platform", "123m456m9m", "9m", melds=[PENG_E, meld("peng", "SSS", 1)])
    assert fans(half)["混一色"] == 2 and "清一色" not in fans(half)
    full = run(
        "baishan_platform",
        "123m456m9m",
        "9m",
        melds=[meld("peng", "111m", 1), meld("peng", "555m", 1)],
    )
    assert fans(full)["清一色"] == 3 and "混一色" not in fans(full)
    assert (
        fans(run("baishan", "123m456m9m", "9m", melds=[PENG_E, meld("peng", "SSS", 1)]))["混一色"]
        == 1
    )
    mixed = run("baishan", "123m456p9m", "9m", melds=[PENG_E, meld("peng", "SSS", 1)])
    assert "混一色" not in fans(mixed)


def test_d35_seven_pairs_need_distinct_pairs():
    """D35: 七小对 (3) with seven distinct pairs; four of a face are not two pairs."""
    pairs = run("baishan_platform", "1p1p3p3p6m6m8m8m2s2s9s9sE", "E")
    assert fans(pairs)["七小对"] == 3
    quad = run("baishan_platform", "1p1p1p1p6m6m8m8m2s2s9s9sE", "E")
    assert not quad.win


def test_d34_requirements_terminal_and_pung_with_exemptions():
    """D34: 幺九 (honours count) and a pung; seven pairs need only 幺九 (§3.4)."""
    no_pung = run("baishan", "123m456p789s12s99m", "3s", melds=[])
    assert not no_pung.win and "碰" in no_pung.reason
    no_terminal = run("baishan", "234m456p67s22s", "5s", melds=[meld("peng", "555m", 1)])
    assert not no_terminal.win and "么九" in no_terminal.reason
    honour = run("baishan", "234m456p678s5s", "5s", melds=[PENG_E])
    assert honour.win
    pairs_no_terminal = run("baishan", "2p2p3p3p6m6m8m8m2s2s4s4s5s", "5s")
    assert not pairs_no_terminal.win and "么九" in pairs_no_terminal.reason


def test_d38_platform_thirteen_orphans_is_a_flat_payment():
    """D38: 十三幺 = 100 × 底注 per payer, no other fan; baishan: 4 fans, stacking."""
    platform = run("baishan_platform", "19m19p19sESWNCFP", "1m", dealer=0)
    assert fans(platform) == {"十三幺": 0}
    assert amounts(platform) == {1: 100, 2: 100, 3: 100}
    baishan = run("baishan", "19m19p19sESWNCFP", "1m", dealer=0)
    assert fans(baishan)["十三幺"] == 4 and fans(baishan)["坐庄"] == 1


def test_d39_platform_cap_is_fifty_base():
    """D39: a platform payment is capped at 50 × 底注; baishan has no cap (D59)."""
    hand = "1p1p3p3p6p6p8p8p2p2p9p9pE"
    platform = run("baishan_platform", hand, "E", dealer=0, by="self_draw")
    assert max(totals(platform).values()) >= 6
    assert set(amounts(platform).values()) == {50}
    baishan = run("baishan", "1p1p3p3p6p6p8p8p2p2p9p9p7p", "7p", dealer=0, by="self_draw")
    assert amounts(baishan)[1] == 2 ** totals(baishan)[1] > 50


def test_d67_anti_cheat_discarder_pays_alone_at_doubled_base():
    """§3.7, D67: in 防作弊场 only the discarder (or robbed konger) pays, base doubled."""
    rules, hand, tile = PLATFORM_WIN
    result = run(rules, hand, tile, melds=[NINE_M], source=2, options={"room": "anti_cheat"})
    assert list(amounts(result)) == [2]
    assert amounts(result)[2] == 2 * 2 ** totals(result)[2]
    drawn = run(rules, hand, tile, melds=[NINE_M], by="self_draw", options={"room": "anti_cheat"})
    assert sorted(amounts(drawn)) == [1, 2, 3]


def test_d66_piao_in_the_anti_cheat_room_uses_the_doubled_base():
    """D43, D66: 漂 flows along the win payment edge, in doubled-base multiples."""
    rules, hand, tile = PLATFORM_WIN
    result = run(
        rules,
        hand,
        tile,
        melds=[NINE_M],
        source=2,
        options={"room": "anti_cheat", "piao": [5, 0, 10, 5]},
    )
    assert [t.amount for t in result.piao] == [(5 + 10) * 2]
    fan_part = amounts(result)[2]
    assert result.deltas == (fan_part + 30, 0, -fan_part - 30, 0)


def test_d45_fee_is_floored_on_the_positive_net():
    """D45: floor(rate × positive net) per seat; the fee leaves the game."""
    rules, hand, tile = PLATFORM_WIN
    result = run(rules, hand, tile, melds=[NINE_M], options={"room": "intermediate"})
    gross = result.deltas[0]
    assert result.fees == (gross * 3 // 100, 0, 0, 0)
    assert sum(result.total) == -sum(result.fees)


KONG_SEATS = {
    1: {"concealed": "2p3p7p8p2s3s5s9s1m2m", "melds": [meld("ming_gang", "4444m", 2)]},
    2: {"concealed": "2m3m8m9p9p2s3s9s9s1m", "melds": [meld("an_gang", "1111s")]},
    3: {"concealed": "4s4s5s5s6p6p7p8p3m3m", "melds": [meld("bu_gang", "WWWW", 1)]},
}


def test_d40_platform_kongs_normal_and_anti_cheat_payers():
    """§3.8, D40: 明杠 2, 暗杠 4, 大杠 ×2; in 防作弊场 the 点杠/点碰 seat pays one share."""
    rules, hand, tile = PLATFORM_WIN
    data = build(rules, hand, tile, melds=[NINE_M], seats=KONG_SEATS)
    normal = score(load_situation(data)).kongs
    assert normal == (-2 - 8 - 2, 6 - 8 - 2, -2 + 24 - 2, -2 - 8 + 6)
    data["options"] = {"room": "anti_cheat"}
    cheat = score(load_situation(data)).kongs
    # doubled base: 明杠 4 from seat 2 only, 暗杠 大杠 16 from each, 补杠 4 from seat 1 only
    assert cheat == (-16, 4 - 16 - 4, -4 + 48, -16 + 4)


def test_d61_baishan_kong_follows_the_dealer():
    """D61: u × 2 (大杠) × 2 (暗杠) × 2 (konger or payer deals), from all three."""
    hand, tile = PLATFORM_WIN[1:]
    ming = {1: KONG_SEATS[1]}
    data = build("baishan", hand, tile, melds=[NINE_M], seats=ming, dealer=0)
    assert score(load_situation(data)).kongs == (-2, 4, -1, -1)
    data = build("baishan", hand, tile, melds=[NINE_M], seats=ming, dealer=1)
    assert score(load_situation(data)).kongs == (-2, 6, -2, -2)
    an_big = {2: KONG_SEATS[2]}
    data = build("baishan", hand, tile, melds=[NINE_M], seats=an_big, dealer=3)
    assert score(load_situation(data)).kongs == (-4, -4, 16, -8)


def test_d60_baishan_all_three_pay_a_discard_win():
    """D60: in baishan every non-winner pays a discard win, the discarder 1 more."""
    result = run("baishan", "4p5p6p6s7s8s5m6m7m1p", "1p", melds=[NINE_M], source=2)
    assert sorted(amounts(result)) == [1, 2, 3]
    assert payer(result, 2) == {"点炮": 1}


# --- sichuan -------------------------------------------------------------------------

QUE_P = {"que": ["p", "p", "p", "p"]}


def sc(hand: str, tile: str, **kw: object) -> Score:
    kw.setdefault("options", QUE_P)
    return run("sichuan", hand, tile, **kw)


def test_sichuan_plain_win_shows_ping_hu():
    """平胡 0 when no other base pattern applies; 1 × 底注 from the discarder (§4.7)."""
    result = sc("123m456m789s12s55m", "3s")
    assert fans(result) == {"平胡": 0} and amounts(result) == {2: 1}


def test_sichuan_all_pungs_and_golden_hook():
    """对对胡 1; 金钩钓 2 with four pung/kong melds, including an 暗杠 (D63) which adds 根."""
    pungs = sc("111m333m777s9s", "9s", melds=[meld("peng", "555s", 1)])
    assert fans(pungs) == {"对对胡": 1}
    hook = sc(
        "9s",
        "9s",
        melds=[
            meld("peng", "111m", 1),
            meld("peng", "333m", 1),
            meld("peng", "555s", 1),
            meld("peng", "777s", 1),
        ],
    )
    assert fans(hook) == {"金钩钓": 2}
    hook_kong = sc(
        "9s",
        "9s",
        melds=[
            meld("peng", "111m", 1),
            meld("peng", "333m", 1),
            meld("peng", "555s", 1),
            meld("an_gang", "7777s"),
        ],
    )
    assert fans(hook_kong) == {"金钩钓": 2, "根": 1}
    chow = sc("123m333m777s9s", "9s", melds=[meld("peng", "555s", 1)])
    assert "对对胡" not in fans(chow)


def test_sichuan_258_pungs_and_258_golden_hook():
    """将对 3 (all 2/5/8) and 将金钩钓 4; a 3 breaks 将对."""
    jiang = sc("222m555m888s2s", "2s", melds=[meld("peng", "555s", 1)])
    assert fans(jiang) == {"将对": 3}
    hook = sc(
        "2s",
        "2s",
        melds=[
            meld("peng", "222m", 1),
            meld("peng", "555m", 1),
            meld("peng", "888s", 1),
            meld("peng", "555s", 1),
        ],
    )
    assert fans(hook) == {"将金钩钓": 4}
    broken = sc("222m333m888s2s", "2s", melds=[meld("peng", "555s", 1)])
    assert fans(broken) == {"对对胡": 1}


def test_d74_terminals_in_every_set_include_exposed_melds():
    """带幺九 2 (D74): every meld, exposed or concealed, and the pair hold a 1 or 9."""
    every = sc("123m789m123s789s1m", "1m")
    assert fans(every) == {"带幺九": 2}
    inner = sc("123m789m234s789s1m", "1m")
    assert "带幺九" not in fans(inner)
    exposed = sc("123m789m789s1m", "1m", melds=[meld("peng", "555s", 1)])
    assert "带幺九" not in fans(exposed)


def test_d50_seven_pairs_and_dragon_seven_pairs():
    """D50: 七对 2; four of a face are two pairs and add 根 (龙七对)."""
    pairs = sc("1122m3344s5566s9m", "9m")
    assert fans(pairs) == {"七对": 2}
    dragon = sc("1111m3344s5566s9m", "9m")
    assert fans(dragon) == {"七对": 2, "根": 1}


def test_sichuan_full_flush_and_roots():
    """清一色 +2; 根 +1 per face with four copies, konged or not (D74)."""
    flush = sc("123m456m78m999m55m", "6m")
    assert fans(flush) == {"平胡": 0, "清一色": 2}
    mixed = sc("123m456m78m999s55m", "6m")
    assert "清一色" not in fans(mixed)
    root = sc("111m123m456s789s5s", "5s")
    assert fans(root)["根"] == 1
    kong_root = sc("234m456s789s5s", "5s", melds=[meld("ming_gang", "1111m", 1)])
    assert fans(kong_root)["根"] == 1


#: The winner's kong (for 杠上花), and the discarder's, seat 2 (for 杠上炮), in sichuan.
KONG_AT_WINNER = {"hand": "123m456m12s55m", "melds": [meld("an_gang", "9999m")]}
KONG_AT_2 = {"seats": {2: {"concealed": "234m2345s678s", "melds": [meld("an_gang", "9999m")]}}}


@pytest.mark.parametrize(
    ("kw", "fan"),
    [
        ({"by": "self_draw"}, "自摸"),
        ({"by": "self_draw", "after_kong": True, **KONG_AT_WINNER}, "杠上花"),
        ({"after_kong": True, **KONG_AT_2}, "杠上炮"),
        ({"by": "self_draw", "last_tile": True}, "海底捞月"),
    ],
)
def test_sichuan_situational_fans(kw: dict[str, object], fan: str):
    """自摸, 杠上花, 杠上炮 (D69) and 海底捞月 each add 1; a plain discard has none."""
    kw = dict(kw)
    result = sc(str(kw.pop("hand", "123m456m789s12s55m")), "3s", **kw)
    assert fans(result)[fan] == 1
    assert fan not in fans(sc("123m456m789s12s55m", "3s"))


def test_d76_last_tile_stacks_with_kong_bloom():
    """D76: 海底捞月 stacks with 杠上花 (and 自摸)."""
    kong = KONG_AT_WINNER
    result = sc(
        str(kong["hand"]),
        "3s",
        by="self_draw",
        after_kong=True,
        last_tile=True,
        melds=kong["melds"],
    )
    assert fans(result) == {"平胡": 0, "自摸": 1, "杠上花": 1, "海底捞月": 1, "根": 1}


def test_sichuan_robbing_a_kong():
    """抢杠胡 +1; the konger pays as discarder (§4.7 item 5)."""
    result = sc(
        "123m456m789s12s55m",
        "3s",
        by="robbed_kong",
        source=2,
        seats={2: {"concealed": "1234567m12s9m", "melds": [meld("peng", "333s", 1)]}},
    )
    assert fans(result)["抢杠胡"] == 1 and amounts(result) == {2: 2}


def test_d76_heavenly_and_earthly_hands_are_worth_the_cap():
    """D76: 天胡 / 地胡 are worth the cap (4) and stack; the cap then applies."""
    heaven = sc("123m456m789s12s55m", "3s", by="self_draw", first_draw=True, dealer=0)
    assert fans(heaven)["天胡"] == 4
    assert set(amounts(heaven).values()) == {16}
    earth = sc("123m456m789s12s55m", "3s", by="self_draw", first_draw=True, dealer=1)
    assert fans(earth)["地胡"] == 4 and "天胡" not in fans(earth)


def test_d51_sichuan_cap_is_four_fans():
    """D51: N is capped at 4 fans (16 × 底注); the cap option changes it."""
    result = sc("1111m3344m5566m9m", "9m", by="self_draw")
    assert sum(fans(result).values()) == 6
    assert set(amounts(result).values()) == {16}
    wider = sc("1111m3344m5566m9m", "9m", by="self_draw", options={**QUE_P, "cap": 5})
    assert set(amounts(wider).values()) == {32}


def test_d52_d75_self_draw_paid_by_those_not_yet_won():
    """D52, D75: a self-draw is paid by the players who have not won."""
    result = sc("123m456m789s12s55m", "3s", by="self_draw", won=[2])
    assert sorted(amounts(result)) == [1, 3]


def test_d75_a_seat_that_has_won_pays_when_it_discards():
    """D53, D75: a winner keeps discarding; a seat in `won` whose discard deals in pays as
    the discarder."""
    result = sc("123m456m789s12s55m", "3s", source=2, won=[2])
    assert amounts(result) == {2: 1}


def test_d73_without_que_the_hand_must_lack_a_suit():
    """D73: with no 缺 choices known the final hand must miss at least one suit."""
    three = sc("123m456p789s12s55m", "3s", options={})
    assert not three.win and "缺一门" in three.reason
    two = sc("123m456m789s12s55m", "3s", options={})
    assert two.win


def test_sichuan_holding_the_que_suit_does_not_win():
    """§4.4: a hand holding its 缺 suit cannot win."""
    result = sc("123m456m789s12s55m", "3s", options={"que": ["s", "p", "p", "p"]})
    assert not result.win and "缺" in result.reason


def test_d54_d75_sichuan_kongs_wind_and_rain():
    """D54, D75: 补杠 1 and 暗杠 2 from each unfinished player; 直杠 2 from its discarder,
    even a seat that has won."""
    seats = {
        1: {"concealed": "7m7m8m8m9m9m1p1p2p2p", "melds": [meld("bu_gang", "1111s", 2)]},
        2: {"concealed": "1m2m3m4m4m9m1p2p3p5p", "melds": [meld("an_gang", "6666s")]},
        3: {"concealed": "3m3m4p4p5p6p7p8p9p9p", "melds": [meld("ming_gang", "2222s", 1)]},
    }
    que = {"que": ["p", "p", "p", "m"]}
    result = sc("1m2m3m7s8s9s3s4s6m6m555m", "5s", seats=seats, options=que, won=[1])
    # 补杠 (seat 1): 0, 2, 3 pay 1; 暗杠 (seat 2): 0 and 3 pay 2 (1 has won);
    # 直杠 (seat 3): seat 1 pays 2 although it has won
    assert result.kongs == (-1 - 2, 3 - 2, -1 + 4, -1 - 2 + 2)


def test_best_ready_fans_is_the_best_wait_value():
    """D55: 查大叫 values a ready hand at its best wait as a plain discard win."""
    hand = bytes(parse_counts("123456999p22p67p"))
    rules = find_rules("sichuan")
    assert best_ready_fans(rules, hand, (), 0) == 2
    assert best_ready_fans(rules, bytes(parse_counts("1357m2468p13579s")), (), 0) is None


# --- D2: the best reading -------------------------------------------------------------


def test_d2_the_reading_that_pays_most_is_chosen():
    """D2: 111222333m reads as three pungs (对对胡 1) or three chows (平胡 0): the pungs."""
    result = sc("111222333m555s9s", "9s")
    assert fans(result) == {"对对胡": 1}


def test_situation_round_trip_of_the_contract_output_shape():
    """The contract keys of a win, and scope names (ARCHITECTURE "Win situation")."""
    rules, hand, tile = PLATFORM_WIN
    out = run(rules, hand, tile, melds=[NINE_M]).to_json()
    assert list(out) == ["win", "fans", "payers", "deltas", "kongs", "fees", "total"]
    assert out["fans"] == [
        {"name": "三家清", "en": "three closed payers", "value": 2, "scope": "winner"}
    ]
    payers = out["payers"]
    assert isinstance(payers, list)
    assert [set(p) for p in payers] == [{"seat", "fan", "fans", "amount"}] * 3


def test_explain_names_every_fan_and_payer():
    """--explain: each fan with its reason, each payer's N and amount, the totals."""
    result = run("baicheng", "123m456s79m55p", "8m", dealer=1, melds=[meld("peng", "999p", 3)])
    text = result.explain()
    assert "夹胡" in text and "D16" in text and "庄家" in text
    assert "pays" in text and "total" in text


def test_kong_payments_have_one_entry_per_kong():
    """Each kong is one `KongPayment` whose transfers sum to zero."""
    s: Situation = load_situation(
        build(
            "baicheng",
            "123m456s79m55p",
            "8m",
            melds=[meld("peng", "999p", 3)],
            seats={2: {"concealed": "123456789p1s", "melds": [meld("ming_gang", "4444m", 1)]}},
        )
    )
    items = kong_payments(
        s.rules, s.options, s.base, s.dealer, list(zip(s.concealed, s.melds, strict=True))
    )
    assert len(items) == 1 and sum(items[0].deltas) == 0 and items[0].deltas[2] == 15


GOLDEN = Path(__file__).resolve().parent / "golden" / "scoring.jsonl.gz"


def test_kong_screen_never_hides_a_kong_payment():
    """`may_pay_kongs`, which the scorer asks before `kong_payments` (most wins have no
    kong), answers False only where `kong_payments` finds nothing: the seats of every
    situation of the golden corpus, under each rule set's kong table and treasure."""
    with gzip.open(GOLDEN, "rt", encoding="utf-8") as lines:  # a refused input has no "win"
        entries = [json.loads(line) for line in lines]
    situations = [load_situation(e["input"]) for e in entries if "win" in e["output"]]
    screened = paid = 0
    for s in situations:
        for rules in map(find_rules, ("baicheng", "baishan", "baishan_platform", "sichuan")):
            for treasure in {None, s.treasure}:
                seats = list(zip(s.concealed, s.melds, strict=True))
                found = kong_payments(rules, s.options, s.base, s.dealer, seats, treasure=treasure)
                if not may_pay_kongs(rules, s.concealed, s.melds, treasure):
                    assert found == (), s
                    screened += 1
                paid += bool(found)
    assert screened > 1000 and paid > 1000  # both answers are exercised


def test_wait_set_respects_requirements():
    """§0.3: the wait set includes only faces that make a legal win (三门全 here)."""
    rules = find_rules("baicheng")
    hand = bytes(parse_counts("123m456m78m55p"))
    peng = (Meld(MeldKind.PENG, tuple(parse_tiles("999p")), 3),)
    assert wait_set(rules, hand, peng) == ()  # no 条: 三门全 fails for 6m and 9m
    hand = bytes(parse_counts("123m456s78m55p"))
    assert format_tiles(wait_set(rules, hand, peng)) == "69m"


# --- properties ------------------------------------------------------------------------


@st.composite
def wins(draw: st.DrawFn) -> dict[str, object]:
    """A random complete hand of a random rule set, some of it laid down, scored as a win
    on one of its concealed tiles (requirements may still fail: those are skipped)."""
    name = draw(st.sampled_from(["baicheng", "baishan", "baishan_platform", "sichuan"]))
    rules = find_rules(name)
    faces = [t for t in rules.faces]
    counts = [0] * 34
    winner = draw(st.integers(0, 3))
    groups: list[tuple[str, int]] = []
    for _ in range(4):
        chow = draw(st.booleans())
        if chow:
            start = draw(st.sampled_from([t for t in range(27) if t % 9 <= 6]))
            tiles = [start, start + 1, start + 2]
        else:
            start = draw(st.sampled_from(faces))
            tiles = [start] * 3
        for t in tiles:
            counts[t] += 1
        groups.append(("chow" if chow else "pung", start))
    pair = draw(st.sampled_from(faces))
    counts[pair] += 2
    assume(max(counts) <= 4)
    exposed = draw(st.integers(0, 2))
    melds = []
    concealed = list(counts)
    for kind, start in groups[:exposed]:
        if kind == "chow" and not rules.chi:
            continue
        tiles = [start, start + 1, start + 2] if kind == "chow" else [start] * 3
        for t in tiles:
            concealed[t] -= 1
        source = (
            (winner + 3) % 4
            if kind == "chow"
            else draw(st.sampled_from([s for s in range(4) if s != winner]))
        )
        melds.append(meld("chi" if kind == "chow" else "peng", format_tiles(tiles), source))
    tile = draw(st.sampled_from([t for t in range(34) if concealed[t]]))
    concealed[tile] -= 1
    by = draw(st.sampled_from(["discard", "self_draw"]))
    extra: dict[str, object] = {}
    if name == "baishan_platform":
        room = draw(st.sampled_from(["free", "junior", "intermediate", "anti_cheat"]))
        piao = draw(st.lists(st.sampled_from([0, 5, 10]), min_size=4, max_size=4))
        extra["options"] = {"room": room, "piao": piao}
    if name == "sichuan":
        extra["won"] = draw(st.sampled_from([[], [(winner + 1) % 4]]))
    return build(
        name,
        format_tiles([t for t in range(34) for _ in range(concealed[t])]),
        tile_name(tile),
        winner=winner,
        dealer=draw(st.integers(0, 3)),
        by=by,
        melds=melds,
        source=draw(st.sampled_from([s for s in range(4) if s != winner]))
        if by == "discard"
        else None,
        **extra,
    )


SETTINGS = settings(
    max_examples=300, deadline=None, suppress_health_check=[HealthCheck.filter_too_much]
)


@SETTINGS
@given(wins())
def test_property_win_payments_sum_to_zero_before_fees(data: dict[str, object]):
    result = score(load_situation(data))
    assume(result.win)
    assert sum(result.deltas) == 0 and sum(result.kongs) == 0
    assert all(f >= 0 for f in result.fees)
    assert list(result.total) == [
        d + k - f for d, k, f in zip(result.deltas, result.kongs, result.fees, strict=True)
    ]


@SETTINGS
@given(wins())
def test_property_d2_the_chosen_reading_is_never_worse_than_another(data: dict[str, object]):
    s = load_situation(data)
    result = score(s)
    assume(result.win)
    assert result.reading is not None
    assert all(result.reading.gross >= r.gross for r in readings(s))


EXTRA = Fan(
    name="加番", en="one more", value=1, scope=Scope.WINNER, why="test", winner=lambda c, a: 1
)


@SETTINGS
@given(wins())
def test_property_adding_a_fan_never_lowers_any_payment(data: dict[str, object]):
    """Every reading pays each payer at least as much with one more winner's fan, and the
    best reading's gross never drops."""
    s = load_situation(data)
    plain = readings(s)
    assume(plain)
    richer = dataclasses.replace(s, rules=dataclasses.replace(s.rules, fans=(*s.rules.fans, EXTRA)))
    more = readings(richer)
    assert len(more) == len(plain)
    for before, after in zip(plain, more, strict=True):
        assert before.arrangement == after.arrangement
        for p, q in zip(before.payers, after.payers, strict=True):
            assert q.amount >= p.amount
    assert max(r.gross for r in more) >= max(r.gross for r in plain)


def test_d1_waits_are_by_shape_even_when_every_copy_is_visible():
    """D1: a face stays a wait when all four copies lie in another seat's kong."""
    rules = find_rules("baicheng")
    peng = (Meld(MeldKind.PENG, tuple(parse_tiles("999p")), 3),)
    hand = bytes(parse_counts("123m456s79m55p"))
    assert [tile_name(t) for t in wait_set(rules, hand, peng)] == ["8m"]


def test_d30_a_fenzhang_tile_wins_as_a_self_draw_and_never_after_a_kong():
    """D30 (§2.10): a 分张 tile can complete a self-drawn win; it is no replacement (D69)."""
    result = run("baicheng", "123m456s79m55p", "8m", by="fenzhang", melds=[PENG_C])
    assert fans(result)["自摸"] == 1 and "杠上开花" not in fans(result)
    with pytest.raises(ValueError, match="D69"):
        run("baicheng", "123m456s79m55p", "8m", by="fenzhang", after_kong=True, melds=[PENG_C])


def test_d33_robbing_a_kong_in_baishan_the_konger_pays_as_discarder():
    """D33: 抢杠胡 is allowed in both Baishan rule sets; the robbed player pays 点炮."""
    for rules in ("baishan", "baishan_platform"):
        result = run(
            rules,
            "1p2p6s7s8s5m6m7m9s9s",
            "3p",
            by="robbed_kong",
            source=2,
            melds=[NINE_M],
            seats={2: {"concealed": "1234567m2s3s4s", "melds": [meld("peng", "333p", 1)]}},
        )
        assert payer(result, 2)["点炮"] == 1


# --- D77: one legal reading is scored --------------------------------------------------


def test_d77_a_kan_only_in_a_pungless_reading_is_not_jia():
    """D77: 111222333m reads as three pungs (a win: 2m completes the pung 222m, 对倒) or as
    three 123m runs (2m in the middle: 坎, but no pung, so not a win). Only the legal
    reading is scored: no 夹胡."""
    result = run("baicheng", "11122333m456p99s", "2m")
    assert result.reading is not None
    assert all(g.kind.name == "PUNG" for g in result.reading.arrangement.groups[:3])
    assert "夹胡" not in fans(result)


def test_d77_each_legal_reading_is_judged_on_its_own_shapes():
    """D77's other side: with a pung of 999p every reading is legal. The run reading has
    its 坎 (夹胡 1), the pung reading its 双飘 (2; 2m completes a pung), neither both; the
    scorer keeps the one that pays more (D2)."""
    s = load_situation(build("baicheng", "11122333m99s", "2m", melds=[meld("peng", "999p", 3)]))
    by_kinds = {
        frozenset(g.kind.name for g in r.arrangement.groups): {a.fan.name for a in r.fans}
        for r in readings(s)
    }
    assert "夹胡" in by_kinds[frozenset({"CHOW", "PAIR"})]
    assert "双飘" not in by_kinds[frozenset({"CHOW", "PAIR"})]
    assert "双飘" in by_kinds[frozenset({"PUNG", "PAIR"})]
    assert "夹胡" not in by_kinds[frozenset({"PUNG", "PAIR"})]
    assert "双飘" in fans(score(s))


def test_d77_piao_and_baozhongbao_never_mix_readings():
    """D77: with the treasure 2m drawn, 111222333m 999p 99s reads as all pungs (双飘; 2m
    completes a pung, which is no 夹 wait, so 摸宝) or as runs (2m a 坎: 宝中宝 and
    夹胡). No reading scores 飘 with 宝中宝; the best pays 4 fans, not 5."""
    result = run(
        "baicheng",
        "11122333m99s",
        "2m",
        by="treasure",
        treasure="2m",
        melds=[meld("peng", "999p", 3)],
    )
    for reading in readings(load_situation(build(
        "baicheng", "11122333m99s", "2m", by="treasure", treasure="2m",
        melds=[meld("peng", "999p", 3)],
    ))):  # fmt: skip
        names = {a.fan.name for a in reading.fans}
        assert not ({"单飘", "双飘"} & names and "宝中宝" in names), names
        assert not ({"单飘", "双飘"} & names and "夹胡" in names), names
    won = fans(result)
    assert sum(won.values()) == 4
    assert won in ({"双飘": 2, "摸宝": 2}, {"宝中宝": 3, "夹胡": 1})


def _kong_lines(result: Score) -> list[str]:
    """The lines of ``--explain``'s kong block, between "kongs:" and the totals' header."""
    lines = result.explain().splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("kongs:"))
    return [line.strip() for line in lines[start + 1 :] if line.startswith("  seat ")]


# One winner; S holds a 明杠 of 2p (from N); W holds 中发白 concealed where the set has them.
_KONG_SEATS = {
    2: {"concealed": "CFP123456m789s1p"},
    1: {"concealed": "1m2m3m4m5m6m7m8m9m1p", "melds": [meld("ming_gang", "2222p", 3)]},
}


@pytest.mark.parametrize(
    ("rules", "options", "expected"),
    [
        (  # D23: a concealed 中发白 set pays as a 明杠 in baicheng, and only there
            "baicheng",
            {},
            [
                "seat 1 (S) 明杠 2p: 0 (E) 5, 2 (W) 5, 3 (N) 5",
                "seat 2 (W) 中发白 (concealed): 0 (E) 5, 1 (S) 5, 3 (N) 5",
            ],
        ),
        ("baishan", {}, ["seat 1 (S) 明杠 2p: 0 (E) 1, 2 (W) 1, 3 (N) 2"]),
        (
            "baishan_platform",
            {"piao": [0, 0, 0, 0]},
            ["seat 1 (S) 明杠 2p: 0 (E) 2, 2 (W) 2, 3 (N) 2"],
        ),
    ],
)
def test_explain_lists_each_kong_that_pays_and_no_other(rules, options, expected):
    """``score --explain`` names every kong payment and nothing more: a seat merely
    holding 中发白 is no kong outside baicheng (D23), not even one worth nothing."""
    result = run(
        rules,
        "123m456s79m55p",
        "8m",
        melds=[meld("peng", "999p", 3)],
        seats=_KONG_SEATS,
        options=options,
    )
    assert _kong_lines(result) == expected


def test_explain_lists_a_sichuan_discard_kong_paid_by_its_discarder_alone():
    """§4.7: a 直杠 is paid twice the base by the seat whose discard made it."""
    seats = {
        2: {"concealed": "1s2s3s4s5s6s8s9s1s2s3s4s5s"},
        1: {"concealed": "1p3p4p5p6p7p8p9p1p3p", "melds": [meld("ming_gang", "2222p", 3)]},
    }
    result = run(
        "sichuan",
        "123m456m79m55m",
        "8m",
        melds=[meld("peng", "999m", 3)],
        seats=seats,
        options={"que": ["p", "m", "m", "m"]},
    )
    assert _kong_lines(result) == ["seat 1 (S) 明杠 2p: 3 (N) 2"]
    no_kongs = run("sichuan", "123m456m79m55m", "8m", melds=[meld("peng", "999m", 3)])
    assert "kongs: (none)" in no_kongs.explain() and _kong_lines(no_kongs) == []
