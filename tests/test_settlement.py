"""Coins outside a win's fans: kongs at hand end, 流局, 撵庄, escape, 漂, fees, stakes,
insolvency and ranks; and the multi-event worked examples B10, P9, S3 and S7."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fangcheng.rules.ruleset import BAICHENG, BAISHAN_PLATFORM, SICHUAN, Options, configure
from fangcheng.scoring.payments import (
    Transfer,
    chase_dealer_payments,
    deltas_of,
    draw_payments,
    escape_payments,
    kong_payments,
    rank_title,
    scale_for_insolvency,
    service_fees,
    stake_for_balances,
)
from fangcheng.scoring.scorer import score
from fangcheng.scoring.settlement import sichuan_exhaustion
from fangcheng.scoring.situation import load_situation
from fangcheng.tiles.melds import Meld, MeldKind
from fangcheng.tiles.notation import parse_counts, parse_tiles


def hand(text: str) -> bytes:
    return bytes(parse_counts(text))


def kong(kind: MeldKind, tiles: str, source: int | None = None) -> Meld:
    return Meld(kind, tuple(parse_tiles(tiles)), source)


def kong_deltas(items) -> tuple[int, ...]:  # type: ignore[no-untyped-def]
    return deltas_of(t for k in items for t in k.transfers)


def test_example_b10_baicheng_draw_settles_every_kong():
    """EXAMPLES B10 (§2.11): 暗杠 10, a concealed 中发白 set 5 (D23), 补杠 5 and three
    concealed treasure tiles 10 (D27), each from all three others; the dealer stays (D11)."""
    seats = [
        (hand("123m456m789p11s"), [kong(MeldKind.AN_GANG, "2s2s2s2s")]),
        (hand("CFP123m456p789p1s"), []),
        (hand("123p456p789s1s"), [kong(MeldKind.BU_GANG, "6m6m6m6m", 0)]),
        (hand("4p4p4p789m123s56s9s"), []),
    ]
    items = kong_payments(BAICHENG, Options(), 1, 0, seats, treasure=parse_tiles("4p")[0])
    assert kong_deltas(items) == (10, -10, -10, 10)
    assert [k.label for k in items] == [
        "暗杠 2s",
        "中发白 (concealed)",
        "补杠 6m",
        "three treasure 4p",
    ]
    assert BAICHENG.dealer_stays_on_draw


def test_example_p9_platform_draw_with_kongs_and_the_dealer_penalty():
    """EXAMPLES P9 (§3.9): kongs 2/8/2 × 1,000 from each, the dealer pays 2 × 底注 to each,
    a 3% fee on N's positive net; the dealer passes (D31)."""
    rules, options = configure(BAISHAN_PLATFORM, {"room": "intermediate"})
    seats = [
        (hand("123p456p789s1s"), [kong(MeldKind.MING_GANG, "4m4m4m4m", 1)]),
        (hand("123m567m123p4569s"), []),
        (hand("123m456p789s1s"), [kong(MeldKind.BU_GANG, "WWWW", 0)]),
        (hand("123s456s789m2m"), [kong(MeldKind.AN_GANG, "1p1p1p1p")]),
    ]
    base = stake_for_balances([300_000, 450_000, 1_200_000, 999_999])
    assert base == 1000
    kongs = kong_deltas(kong_payments(rules, options, base, 0, seats))
    draw = deltas_of(draw_payments(rules, options, base, 0))
    net = [k + d for k, d in zip(kongs, draw, strict=True)]
    assert net == [-10_000, -10_000, -2_000, 22_000]
    fees = service_fees(options, net)
    assert fees == (0, 0, 0, 660)
    assert [n - f for n, f in zip(net, fees, strict=True)] == [-10_000, -10_000, -2_000, 21_340]
    assert not rules.dealer_stays_on_draw


def test_d43_no_piao_moves_on_a_draw():
    """D43: 漂 flows only on win payments; a 流局 pays the dealer penalty alone."""
    rules, options = configure(BAISHAN_PLATFORM, {"piao": [10, 10, 5, 0]})
    assert deltas_of(draw_payments(rules, options, 1, 2)) == (2, 2, -6, 2)


def test_draw_payments_only_where_the_rule_set_has_them():
    """§2.11, §5.9: baicheng and baishan have no dealer penalty on a draw."""
    assert draw_payments(BAICHENG, Options(), 1, 0) == ()


def test_d41_chasing_the_dealer():
    """D41: four equal first discards, no call between: the dealer pays 2 × 底注 to each;
    a different face, or a call (fewer than four discards given), and nothing is paid."""
    rules, options = configure(BAISHAN_PLATFORM, {})
    e = parse_tiles("E")[0]
    paid = chase_dealer_payments(rules, options, 10, 1, [e, e, e, e])
    assert deltas_of(paid) == (20, -60, 20, 20)
    assert chase_dealer_payments(rules, options, 10, 1, [e, e, e, e + 1]) == ()
    assert chase_dealer_payments(rules, options, 10, 1, [e, e, e]) == ()
    assert chase_dealer_payments(BAICHENG, Options(), 10, 1, [e, e, e, e]) == ()


def test_d42_escape_pays_the_cap_to_each_opponent():
    """D42: 50 × 底注 to each of the other three; doubled in 防作弊场 (§3.7)."""
    rules, options = configure(BAISHAN_PLATFORM, {})
    assert deltas_of(escape_payments(rules, options, 10, 2)) == (500, 500, -1500, 500)
    rules, options = configure(BAISHAN_PLATFORM, {"room": "anti_cheat"})
    assert deltas_of(escape_payments(rules, options, 10, 2)) == (1000, 1000, -3000, 1000)


def test_d44_stake_tiers_from_the_smallest_balance_with_the_typo_fixed():
    """D44: the table minimum sets the stake; row 5 ends at 9,999,999."""
    assert stake_for_balances([100, 10**9, 10**9, 10**9]) == 1
    assert stake_for_balances([999, 5000, 5000, 5000]) == 1
    assert stake_for_balances([1_000] * 4) == 10
    assert stake_for_balances([5_000_000] * 4) == 10_000
    assert stake_for_balances([50_000_000] * 4) == 100_000
    assert stake_for_balances([100_000_000] * 4) == 1_000_000
    with pytest.raises(ValueError, match="below 100"):
        stake_for_balances([99, 1000, 1000, 1000])


def test_d44_insolvency_scales_each_payment_and_floors():
    """D44: a payer owing more than its balance pays balance ÷ liability of each item."""
    transfers = [Transfer(1, 0, 64), Transfer(2, 0, 32), Transfer(1, 3, 16)]
    scaled = scale_for_insolvency(transfers, [0, 40, 100, 0])
    assert [t.amount for t in scaled] == [32, 32, 8]
    assert sum(t.amount for t in scaled if t.payer == 1) <= 40
    assert sum(deltas_of(scaled)) == 0
    odd = scale_for_insolvency([Transfer(0, 1, 10), Transfer(0, 2, 10)], [7, 0, 0, 0])
    assert [t.amount for t in odd] == [3, 3]


def test_d45_fees_per_room_on_positive_nets():
    """D45: floor(rate × net) on positive nets only; rates by room (§3.12)."""
    for room, fee in (("free", 3), ("junior", 6), ("intermediate", 3), ("anti_cheat", 2)):
        _, options = configure(BAISHAN_PLATFORM, {"room": room})
        assert service_fees(options, [120, -40, -40, -40]) == (fee, 0, 0, 0)
    assert service_fees(Options(), [120, -40, -40, -40]) == (0, 0, 0, 0)


def test_d46_rank_titles():
    """D46: 木骰 below 1,000 (negative too); the highest threshold reached otherwise."""
    assert rank_title(-5_000) == rank_title(0) == rank_title(999) == "木骰"
    assert rank_title(1_000) == "铁骰"
    assert rank_title(1_999_999) == "金雀"
    assert rank_title(2_000_000) == "雀霸"
    assert rank_title(800_000_000) == rank_title(10**12) == "雀佛"


def test_d54_sichuan_kongs_are_paid_when_made():
    """D54: a 补杠 by N while nobody has won: 1 from each of the three (S7 event 1)."""
    seats = [(bytes(34), [])] * 3 + [(bytes(34), [kong(MeldKind.BU_GANG, "5s5s5s5s", 0)])]
    items = kong_payments(SICHUAN, Options(), 1, 0, seats)
    assert kong_deltas(items) == (-1, -1, -1, 3)
    later = kong_payments(SICHUAN, Options(), 1, 0, seats, won=frozenset({0, 1}))
    assert kong_deltas(later) == (0, 0, -1, 1)


S7_SEATS = [
    {"concealed": "111m555m777p4m", "melds": [{"kind": "peng", "tiles": "999m", "from": 3}]},
    {"concealed": "2m3m1s2s3s6s7s8s9s3p3p4p8p", "melds": []},
    {"concealed": "1p2p3p4p5p6p9p9p9p2p2p6p7p", "melds": []},
    {
        "concealed": "1m3m5m7m9m1s3s7s9s2s",
        "melds": [{"kind": "bu_gang", "tiles": "5555s", "from": 0}],
    },
]


def test_example_s7_whole_sichuan_hand():
    """EXAMPLES S7: 刮风 (D54), a 对对胡 discard win (D52), then at exhaustion 查花猪 (the
    winner receives, D55), 查大叫 at the best wait value and 退税 (D55)."""
    gua_feng = [Transfer(p, 3, 1, "刮风") for p in (0, 1, 2)]
    win = score(
        load_situation(
            {
                "rules": "sichuan",
                "options": {"que": ["s", "m", "m", "p"]},
                "base": 1,
                "dealer": 0,
                "winner": 0,
                "win_tile": "4m",
                "win_by": "discard",
                "from": 1,
                "seats": S7_SEATS,
            }
        )
    )
    assert [a.fan.name for a in win.reading.fans] == ["对对胡"]  # type: ignore[union-attr]
    assert win.deltas == (2, -2, 0, 0)
    seats = [(hand(s["concealed"] + ("4m" if i == 0 else "")), []) for i, s in enumerate(S7_SEATS)]  # type: ignore[operator]
    seats[0] = (seats[0][0], [kong(MeldKind.PENG, "999m", 3)])
    seats[3] = (seats[3][0], [kong(MeldKind.BU_GANG, "5555s", 0)])
    _, options = configure(SICHUAN, {"que": ["s", "m", "m", "p"]})
    checks = sichuan_exhaustion(SICHUAN, options, 1, seats, {0}, (), gua_feng)
    end = [sum(deltas_of(t)[s] for _, t in checks) for s in range(4)]
    assert end == [17, -47, 21, 9]
    whole = [g + w + e for g, w, e in zip(deltas_of(gua_feng), win.deltas, end, strict=True)]
    assert whole == [18, -50, 20, 12]
    assert SICHUAN.first_winner_deals


def test_example_s3_one_discard_two_winners_paid_separately():
    """EXAMPLES S3 (§4.7 item 4): on a 一炮多响 the discarder pays each winner; D47: the
    discarder deals next."""
    cases = Path(__file__).parent / "cases"
    totals = [0, 0, 0, 0]
    for name in ("sichuan-S3-east", "sichuan-S3-west"):
        data = json.loads((cases / f"{name}.json").read_text("utf-8"))
        data.pop("expect")
        totals = [a + b for a, b in zip(totals, score(load_situation(data)).total, strict=True)]
    assert totals == [2, 0, 8, -10]


def test_d56_passing_a_late_win_makes_a_flower_pig():
    """D56: a seat flagged for passing a win in the last four tiles pays as a 花猪."""
    seats = [(hand("123456789m1122s"), []) for _ in range(4)]
    _, options = configure(SICHUAN, {"que": ["p", "p", "p", "p"]})
    checks = dict(sichuan_exhaustion(SICHUAN, options, 1, seats, (), {2}, ()))
    assert deltas_of(checks["查花猪 flower pig"]) == (16, 16, -48, 16)
