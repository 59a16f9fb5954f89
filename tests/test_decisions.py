"""DECISIONs of RULES.md tested by what the engine and the scorer do (not by the numbers
the presets hold): one test at least per DECISION that had none, or only a restatement.

Scripted hands give each seat's starting tiles, the draws after the deal and the tail of
the wall, read from the very last tile (see `fangcheng.engine.record.wall_of`).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence

import pytest

from fangcheng.engine.round import Round
from fangcheng.protocol.actions import Action
from fangcheng.protocol.observation import Phase
from fangcheng.rules.ruleset import SICHUAN, OptionError, Options, find_rules
from fangcheng.scoring.payments import Transfer, deltas_of
from fangcheng.scoring.scorer import Score, score
from fangcheng.scoring.settlement import sichuan_exhaustion
from fangcheng.scoring.situation import load_situation
from fangcheng.tiles.melds import Meld, MeldKind
from fangcheng.tiles.notation import format_tiles, parse_counts, parse_tiles
from scripting import A, scripted

RULES = ["baicheng", "baishan", "baishan_platform", "sichuan"]


def events_of(round_: Round, kind: str) -> list[dict[str, object]]:
    return [e for e in round_.events if e["type"] == kind]


def throw_drawn(r: Round, seat: int) -> None:
    """``seat``, to move, discards the tile it just drew."""
    assert r.turn == seat and r.phase is Phase.TURN and r.drawn is not None
    r.act(seat, Action.parse(f"discard {format_tiles([r.drawn])}"))


# --- D3: the tile set of each rule set -----------------------------------------------------

SUITS = "123456789m123456789p123456789s"
#: RULES.md §1.1, written out: every face four times.
TILE_SETS = {
    "baicheng": SUITS + "CFP",
    "baishan": SUITS + "ESWNCFP",
    "baishan_platform": SUITS + "ESWNCFP",
    "sichuan": SUITS,
}


@pytest.mark.parametrize("rules", RULES)
def test_d3_every_wall_holds_exactly_the_rule_sets_tiles(rules):
    """D3: baicheng deals 120 tiles (suits, dragons), both Baishan sets 136 (winds too),
    sichuan 108 (suits only): four of each face, whatever the seed and the dealer."""
    expected = Counter({t: 4 for t in parse_tiles(TILE_SETS[rules])})
    assert sum(expected.values()) == {"baicheng": 120, "sichuan": 108}.get(rules, 136)
    for seed in range(8):
        r = Round(rules, seed=seed, dealer=seed % 4, options=_no_bets(rules))
        assert Counter(r.wall.tiles) == expected
        dealt = Counter(t for hand in r.hands for t, n in enumerate(hand) for _ in range(n))
        undealt = Counter(r.wall.live) + Counter(r.wall.reserve) + Counter(r.wall.indicators)
        assert dealt + undealt == expected


def _no_bets(rules: str) -> dict[str, object]:
    """Options that let a rule set with 漂 bets deal at once."""
    return {"piao": [0, 0, 0, 0]} if find_rules(rules).piao_bets else {}


# --- D6: the break is counted clockwise in Baishan -------------------------------------------


@pytest.mark.parametrize("rules", ["baishan", "baishan_platform"])
def test_d6_baishan_counts_the_break_seat_clockwise_from_the_dealer(rules):
    """D6: one throw; the dealer is 1 and the count runs clockwise (against play order), so
    a throw of 2 lands on the dealer's 上家; that wall keeps `sum` stacks at its end."""
    differs = 0
    for seed in range(40):
        dealer = seed % 4
        thrown = Round(rules, seed=seed, dealer=dealer, options=_no_bets(rules)).dice
        ((a, b),) = thrown.dice
        seat = thrown.seat
        assert seat == (dealer - (a + b - 1)) % 4 and thrown.stacks == a + b
        differs += seat != (dealer + a + b - 1) % 4  # where play order would land elsewhere
    assert differs  # the seeds tell the two directions apart


# --- D8: the claim window, and no 过水 ----------------------------------------------------------

#: Per rule set, a deal where S and N both wait on 3m/6m and E opens with a 6m.
DOUBLE_WAITS = {
    "baishan": (
        [
            "6m2m8m1p3p5p7p1s3s8sSWNF",
            "111m234p567s99s45m",  # S: 111m 234p 567s 99s 45m
            "2s4s6s8p6p9m7mSWNFCP",
            "999p234s678mEE45m",  # N: 999p 234s 678m EE 45m
        ],
        {},
    ),
    "sichuan": (
        [
            "6m1s1s2s2s3s3s4s4s5s6s7s8s9s",
            "111m234p567p99p45m",  # S (缺 s)
            "9s9s5s6s7s3p4p6p7p9m9m2m2m",
            "888p789m123p55p45m",  # N (缺 s)
        ],
        {"que": ["p", "s", "m", "s"]},
    ),
}


@pytest.mark.parametrize("rules", sorted(DOUBLE_WAITS))
def test_d8_a_seat_that_passed_a_discard_win_may_win_on_the_next_discard(rules):
    """D8, no 过水 (sichuan too, before its last four tiles): N passes a win on the
    dealer's 6m; S draws a 6m, passes its own win and throws it; N, without a turn in
    between, may win on that same face."""
    hands, options = DOUBLE_WAITS[rules]
    r = scripted(rules, hands, draws="6m", options=options)
    r.act(0, A("discard 6m"))
    assert r.pending() == [1, 3]
    r.act(1, A("pass"))
    r.act(3, A("pass"))
    assert r.turn == 1 and A("hu") in r.legal_actions(1)
    r.act(1, A("discard 6m"))
    assert r.pending() == [3] and A("hu") in r.legal_actions(3)
    r.act(3, A("hu"))
    assert r.won == [3] and r.items[-1].deltas[1] < 0 < r.items[-1].deltas[3]


@pytest.mark.parametrize("rules", RULES)
def test_d8_the_claim_window_is_a_table_option(rules):
    """D8: 3 s in the Baishan sets and 5 s elsewhere unless the table sets its own; the
    option is bounded and leaves the preset alone."""
    table = Round(rules, options={"claim_window": 8, **_no_bets(rules)})
    assert table.rules.claim_window == 8.0
    assert Round(rules, options=_no_bets(rules)).rules.claim_window == (
        3.0 if rules.startswith("baishan") else 5.0
    )
    assert find_rules(rules).claim_window != 8.0
    for fine in (0.5, 60):  # under a second is a fast table's right; a minute is the most
        assert (
            Round(rules, options={"claim_window": fine, **_no_bets(rules)}).rules.claim_window
            == fine
        )
    for bad in (0, -1, 60.5, 61, "3", True):
        with pytest.raises(OptionError, match="claim_window"):
            Round(rules, options={"claim_window": bad})


# --- D9: only an added kong can be robbed ----------------------------------------------------

KONG_HANDS = [
    "5p1m2m3m7m8m9m1s2s3sEESN",
    "5p5p5p2m3m4m6s7s8s9p9p1sN",  # S: a concealed pung of 5p
    "4p6p2p2p2p7s8s9sWWW3m3m",  # W: waits on 5p (46p)
    "1p1p9m9m4s5s6s6m7m8mCFP",
]


def test_d9_a_concealed_or_a_discard_kong_is_not_robbed():
    """D9: W waits on 5p. S's 暗杠 of a drawn 5p, and S's 直杠 of E's 5p once W has
    passed the discard, both go straight to S's replacement: W is never asked to rob."""
    concealed = scripted(
        "baishan", [KONG_HANDS[0].replace("5p", "4p"), *KONG_HANDS[1:]], draws="5p", tail="7p"
    )
    concealed.act(0, A("discard 4p"))
    concealed.act(1, A("angang 5p"))
    discard = scripted("baishan", KONG_HANDS, tail="7p")
    discard.act(0, A("discard 5p"))
    assert A("hu") in discard.legal_actions(2)
    discard.act(2, A("pass"))
    discard.act(1, A("gang 5p"))
    for r in (concealed, discard):
        assert r.phase is Phase.TURN and r.pending() == [1]
        assert r.drawn == parse_tiles("7p")[0] and r.after_kong


# --- D21: laying a 旋风杠 ---------------------------------------------------------------------


def test_d21_a_laid_xuanfeng_draws_no_replacement():
    """D21: the three dragons fill one meld slot, so no tile comes from the tail and the
    seat discards next (that the laid set opens the hand: `test_scoring.py`)."""
    hands = [
        "1m2m3m4m5m6m7m8m9m1p2p3p4p5p",
        "CFP1s2s3s4s5s6s7s8s9s9p",
        "1m1m2p2p5s5s7m7m8p8p9s6p6m",
        "2m3m4m5m6m7m1p2p3p6p7p8p9m",
    ]
    r = scripted("baicheng", hands, draws="4p")
    r.act(0, A("discard 5p"))
    assert r.turn == 1 and A("xuanfeng") in r.legal_actions(1)
    wall = (len(r.wall), len(r.wall.reserve))
    r.act(1, A("xuanfeng"))
    assert (len(r.wall), len(r.wall.reserve)) == wall
    assert r.phase is Phase.TURN and r.turn == 1 and r.drawn is None
    assert sum(r.hands[1]) == 11 and [m.kind for m in r.melds[1]] == [MeldKind.XUANFENG]
    assert A("discard 9p") in r.legal_actions(1)


# --- D48: no chow in sichuan -----------------------------------------------------------------


def test_d48_sichuan_offers_no_chow_and_no_pung_of_the_void_suit():
    """D48: on E's 5m, S (4m6m) is offered 吃 except in sichuan, and W (5m5m) 碰 except
    in sichuan when 万 is W's 缺 suit."""
    hands = [
        "5m1p1p1p2p2p2p3p3p3p7s7s7s8s",
        "4m6m1s2s3s4s5s6s8s8s9s9s9s",
        "5m5m2m2m3m3m7p7p8p8p9p9p4p",
        "7m7m8m8m9m9m4p4p5p5p6p6p5s",
    ]
    for rules, w_que, chow, pung in (
        ("baishan", None, True, True),
        ("baicheng", None, True, True),
        ("sichuan", "s", False, True),
        ("sichuan", "m", False, False),
    ):
        options = {} if w_que is None else {"que": ["s", "p", w_que, "s"]}
        r = scripted(rules, hands, options=options)
        r.act(0, A("discard 5m"))
        assert (A("chi 456m") in r.legal_actions(1)) is chow, rules
        assert (A("peng 5m") in r.legal_actions(2)) is pung, (rules, w_que)


# --- scoring one win --------------------------------------------------------------------------


def mk(kind: str, tiles: str, source: int | None = None) -> dict[str, object]:
    """A meld of the `score` input."""
    return {"kind": kind, "tiles": tiles} | ({} if source is None else {"from": source})


def win(
    rules: str,
    hand: str,
    tile: str,
    *,
    melds: Sequence[Mapping[str, object]] = (),
    seats: Mapping[int, Mapping[str, object]] | None = None,
    by: str = "discard",
    dealer: int = 3,
    **extra: object,
) -> Score:
    """Score seat 0 winning with ``hand`` and ``melds`` on ``tile`` (from seat 2 if by
    discard); seats not given hold suited tiles left over, spread over the faces."""
    given = {s: {"concealed": "", "melds": []} | dict(v) for s, v in (seats or {}).items()}
    given[0] = {"concealed": hand, "melds": list(melds)}
    left = Counter({t: 4 for t in find_rules(rules).faces})
    left.subtract(parse_tiles(tile + str(extra.get("treasure") or "")))
    for seat in given.values():
        left.subtract(parse_tiles(str(seat["concealed"])))
        for m in seat["melds"]:  # type: ignore[attr-defined]
            left.subtract(parse_tiles(str(m["tiles"])))
    pool = [t for copy in range(4) for t in sorted(left) if left[t] > copy and t < 27]
    for s in range(4):
        if s not in given:
            given[s] = {"concealed": format_tiles(pool[:13]), "melds": []}
            pool = pool[13:]
    data = {
        "rules": rules,
        "base": 1,
        "dealer": dealer,
        "winner": 0,
        "win_tile": tile,
        "win_by": by,
        "seats": [given[s] for s in range(4)],
        **({"from": 2} if by == "discard" else {}),
        **extra,
    }
    return score(load_situation(data))


def fans(result: Score) -> dict[str, int]:
    """The winner's fans, name → value."""
    assert result.win and result.reading is not None, result.reason
    return {a.fan.name: a.value for a in result.reading.fans}


def payer_fans(result: Score, seat: int) -> dict[str, int]:
    """A payer's own fans, beyond the winner's."""
    assert result.reading is not None
    (p,) = [p for p in result.reading.payers if p.seat == seat]
    return {a.fan.name: a.value for a in p.fans[len(result.reading.fans) :]}


def amounts(result: Score) -> dict[int, int]:
    assert result.reading is not None
    return {p.seat: p.amount for p in result.reading.payers}


PENG_E = mk("peng", "EEE", 1)


# --- D37: per instance ------------------------------------------------------------------------


@pytest.mark.parametrize("rules", ["baishan", "baishan_platform"])
def test_d37_four_of_a_face_and_identical_chows_count_once_per_instance(rules):
    """D37: 四过一 once per face (1m and 9p: 2); a payer's 一般高 once per pair of exposed
    identical chows (234m twice and 456p twice: 2)."""
    payer = {
        "concealed": "7s",
        "melds": [mk("chi", run, 1) for run in ("234m", "234m", "456p", "456p")],
    }
    result = win(rules, "111m123m999p789pE", "E", seats={2: payer})
    assert fans(result)["四过一"] == 2
    assert payer_fans(result, 2)["一般高"] == 2
    one = win(rules, "111m123m999p789sE", "E")
    assert fans(one)["四过一"] == 1


def test_d37_three_identical_chows_are_one_liangbangao_not_two_yibangao():
    """D37: on the platform 两般高 (2) takes the place of 一般高 for three identical
    chows, where counting pairs of chows would give 一般高 more than once."""
    result = win("baishan_platform", "112233m9s", "9s", melds=[mk("chi", "123m", 3), PENG_E])
    assert fans(result)["两般高"] == 2 and "一般高" not in fans(result)


# --- D59: baishan has no 两般高 and no cap ----------------------------------------------------


def test_d59_baishan_three_identical_chows_score_one_yibangao_and_nothing_is_capped():
    """D59: three identical 123m chows are one 一般高 (1) in baishan, not 两般高; and the
    payment is 2^N however large: 清一色 2 + 一般高 1 + 自摸 1 + 坐庄 1 + 三家清 2 (an
    open winner, three closed payers) is 128 — past the platform's cap of 50, which the
    same hand meets there."""
    melds = [mk("chi", "123m", 3), mk("peng", "555m", 1)]
    result = win("baishan", "112233m9m", "9m", melds=melds, by="self_draw", dealer=0)
    assert fans(result) == {"一般高": 1, "清一色": 2, "自摸": 1, "坐庄": 1, "三家清": 2}
    assert amounts(result) == {1: 128, 2: 128, 3: 128}
    platform = win("baishan_platform", "112233m9m", "9m", melds=melds, by="self_draw", dealer=0)
    assert fans(platform)["两般高"] == 2 and set(amounts(platform).values()) == {50}


# --- D63: 金钩钓 with a concealed kong -------------------------------------------------------

HOOK_MELDS = [mk("peng", "111m", 1), mk("peng", "333m", 1), mk("peng", "555s", 1)]


def test_d63_a_concealed_kong_is_one_of_the_golden_hooks_four_laid_melds():
    """D63: four laid pung/kong melds, one of them an 暗杠, and a 单吊 on the one concealed
    tile are 金钩钓 (2, with 根 for the kong); the same pung kept concealed is 对对胡."""
    que = {"options": {"que": ["p", "p", "p", "p"]}}
    hook = win("sichuan", "9s", "9s", melds=[*HOOK_MELDS, mk("an_gang", "7777s")], **que)
    assert fans(hook) == {"金钩钓": 2, "根": 1}
    held = win("sichuan", "777s9s", "9s", melds=HOOK_MELDS, **que)
    assert fans(held) == {"对对胡": 1}
    jiang = [mk("peng", "222m", 1), mk("peng", "555m", 1), mk("peng", "888s", 1)]
    golden = win("sichuan", "2s", "2s", melds=[*jiang, mk("an_gang", "5555s")], **que)
    assert fans(golden) == {"将金钩钓": 4, "根": 1}


# --- D64: 带鸡 under 摸宝 -------------------------------------------------------------------


def test_d64_a_1s_the_treasure_stands_in_for_counts_as_the_chicken():
    """D64: waiting on 1s/4s (23s) with no 1s held, a drawn 5p treasure stands in for the
    1s and scores 带鸡 with 摸宝; as a plain self-draw of 4s there is no chicken."""
    hand, melds = "23s456m789m55p", [mk("peng", "999p", 3)]
    treasure = win("baicheng", hand, "5p", melds=melds, by="treasure", treasure="5p")
    assert fans(treasure)["带鸡"] == 1 and fans(treasure)["摸宝"] == 2
    plain = win("baicheng", hand, "4s", melds=melds, by="self_draw", treasure="5p")
    assert "带鸡" not in fans(plain)


# --- D53: a sichuan winner plays on, locked ---------------------------------------------------

BLOODY_HANDS = [
    "1m9p2m5m8m3p6p2p5p8p4m7m3s6s",  # E (缺 s): throws 1m, later 9p
    "222s345m789m11m33s",  # S (缺 p): waits 1m/3s
    "111p234p567p789s9p",  # W (缺 m): waits 9p
    "456m678m45s999m55s",  # N (缺 p): waits 3s/6s
]


def test_d53_a_sichuan_winner_plays_on_locked_deals_in_and_three_winners_end_the_hand():
    """D53 / §4.8: S wins on E's 1m and plays on: it is asked nothing on discards (no 碰),
    draws and throws, may 暗杠 a drawn tile that keeps its waits, never wins again (its
    replacement 3s is a wait), and N wins on the 3s it must throw, S paying as the
    discarder; W's win on E's 9p is the third, which ends the hand with tiles left."""
    options = {"que": ["s", "p", "m", "p"]}
    r = scripted("sichuan", BLOODY_HANDS, draws="1m7p4p2s6m", tail="3s", options=options)
    r.act(0, A("discard 1m"))
    r.act(1, A("hu"))
    assert r.won == [1] and not r.over
    throw_drawn(r, 2)  # the fourth 1m: S, holding 11m, is not asked to 碰
    assert r.phase is Phase.TURN and r.turn == 3
    throw_drawn(r, 3)
    throw_drawn(r, 0)
    assert r.legal_actions(1) == [A("angang 2s"), A("discard 2s")]
    r.act(1, A("angang 2s"))  # 345m 789m 11m 33s: still waits on 1m/3s
    assert r.items[-1].deltas == (-2, 6, -2, -2)  # a winner collects for its own kong
    assert r.drawn == parse_tiles("3s")[0] and r.legal_actions(1) == [A("discard 3s")]
    r.act(1, A("discard 3s"))
    assert r.pending() == [3]
    r.act(3, A("hu"))
    assert r.won == [1, 3] and r.items[-1].deltas == (0, -2, 0, 2)  # 平胡 + 杠上炮
    assert r.turn == 0 and not r.over
    r.act(0, A("discard 9p"))
    r.act(2, A("hu"))
    assert r.won == [1, 3, 2] and r.over and len(r.wall) > 40
    assert r.settlement is not None and r.settlement["end"] == "win"


def test_d53_a_winner_may_not_make_a_kong_that_changes_its_waits():
    """D53: S won holding 111m 23m 456s 789s 99s (waits 1m, 4m, 9s). Konging the fourth
    1m would leave 1m/4m only, so it is not offered: S may only throw the 1m, and
    though 1m is a wait there is no second win."""
    hands = [
        "4m1p2p3p5p6p7p8p9p2m5m8m3s6s",
        "111m23m456s789s99s",
        "1p2p3p5p6p7p8p9p2m5m8m4s7s",
        "1p2p3p5p6p7p8p9p2m5m8m4s7s",
    ]
    r = scripted("sichuan", hands, draws="9m9m9m1m", options={"que": ["s", "p", "m", "m"]})
    r.act(0, A("discard 4m"))
    r.act(1, A("hu"))
    for seat in (2, 3, 0):
        throw_drawn(r, seat)
    assert r.turn == 1 and r.drawn == parse_tiles("1m")[0]
    assert r.legal_actions(1) == [A("discard 1m")]


# --- D55: the end-of-hand checks of an exhausted sichuan wall ---------------------------------


def test_d55_flower_pigs_pay_winners_too_and_sit_out_the_ready_check_and_the_refund():
    """D55 / §4.10: E has won; S is a 花猪 (flagged by D56) though ready, and took kong
    money; W is ready on 6s/9s (平胡 0, or 9s with 根 1: the best, 2×); N is not ready and
    took kong money. The pig pays 16 to E, W and N; N pays W 2 (the pig, though ready,
    gets nothing); N returns its kong money, the pig keeps its own."""
    ready = bytes(parse_counts("123m456m11m999s78s"))
    seats = [
        (bytes(parse_counts("123m456m789m11s22s")), []),
        (ready, []),
        (ready, []),
        (bytes(parse_counts("1m3m5m7m9m2s4s6s8s1s3s5s7s")), []),
    ]
    kongs = [Transfer(0, 3, 1, "刮风"), Transfer(2, 3, 1, "刮风"), Transfer(1, 3, 1, "刮风")]
    kongs += [Transfer(2, 1, 2, "下雨"), Transfer(3, 1, 2, "下雨")]
    options = Options(que=(1, 1, 1, 1))
    checks = sichuan_exhaustion(SICHUAN, options, 1, seats, {0}, {1}, kongs)
    by_reason = {reason.split()[0]: deltas_of(transfers) for reason, transfers in checks}
    assert by_reason == {
        "查花猪": (16, -48, 16, 16),
        "查大叫": (0, 0, 2, -2),
        "退税": (1, 1, 1, -3),
    }


def test_d55_a_not_ready_seat_refunds_and_a_holder_of_its_void_suit_is_a_pig():
    """D55: S still holds 万, its 缺 suit: a 花猪 paying 16 to each other seat, none of
    them a winner here. N is not ready: it pays each ready seat (E and W, 2× each) and
    returns its 暗杠 money."""
    ready = bytes(parse_counts("123m456m11m999s78s"))
    seats = [
        (ready, []),
        (bytes(parse_counts("1m2p3p4p5p6p7p8p9p1s2s3s4s")), []),
        (ready, []),
        (bytes(parse_counts("1m3m5m7m9m2s4s8s1s3s")), [Meld(MeldKind.AN_GANG, (24,) * 4)]),
    ]
    kongs = [Transfer(payer, 3, 2, "下雨") for payer in (0, 1, 2)]
    options = Options(que=(1, 0, 1, 1))
    checks = sichuan_exhaustion(SICHUAN, options, 1, seats, (), (), kongs)
    by_reason = {reason.split()[0]: deltas_of(transfers) for reason, transfers in checks}
    assert by_reason == {
        "查花猪": (16, -48, 16, 16),
        "查大叫": (2, 0, 2, -4),
        "退税": (2, 2, 2, -6),
    }
