"""Pins: rules that a mutation run (tools/mutate.py, `make mutation`) changed without any
test failing. Each test holds one rule exactly where a one-token change would break it:
a threshold one coin below and at, which faces a multiplier covers, which seat is asked,
which flag a live hand sets (issue 14, item 8)."""

from __future__ import annotations

import pytest

from fangcheng.engine.round import Round
from fangcheng.protocol import events as ev
from fangcheng.protocol.observation import Phase
from fangcheng.rules.fans import SICHUAN_FANS
from fangcheng.rules.ruleset import BAICHENG, BAISHAN, BAISHAN_PLATFORM, Options
from fangcheng.scoring.payments import (
    Transfer,
    kong_payments,
    rank_title,
    scale_for_insolvency,
    stake_for_balances,
)
from fangcheng.scoring.scorer import Reading, best_reading, readings
from fangcheng.scoring.situation import SituationError, load_situation
from fangcheng.tiles.melds import Meld, MeldKind
from fangcheng.tiles.notation import parse_counts, parse_tiles
from scripting import A, play_on, scripted
from test_scoring import build, meld, run

# --- the platform's coins: every row of §3.11 and §3.13 ---------------------------------

#: §3.11 as RULES.md prints it, row 5's upper bound read as 9,999,999 (D44).
STAKES = [
    (100, 1),
    (1_000, 10),
    (10_000, 100),
    (100_000, 1_000),
    (1_000_000, 10_000),
    (10_000_000, 100_000),
    (100_000_000, 1_000_000),
]


@pytest.mark.parametrize(("floor", "stake"), STAKES)
def test_d44_each_stake_tier_starts_at_its_floor_not_a_coin_below(floor, stake):
    """§3.11: the smallest balance seated picks the row; one coin under a row's floor is
    the row below (or, under 100, no seat at all)."""
    assert stake_for_balances([floor, 10**9, 10**9, 10**9]) == stake
    assert stake_for_balances([10 * floor - 1] * 4) == stake  # the row's top
    if floor == 100:
        with pytest.raises(ValueError, match="cannot sit"):
            stake_for_balances([floor - 1, 10**9, 10**9, 10**9])
    else:
        assert stake_for_balances([floor - 1, 10**9, 10**9, 10**9]) == stake // 10


@pytest.mark.parametrize("payer", range(4))
def test_d44_a_payer_owing_exactly_its_balance_pays_in_full(payer):
    """§3.11 item 3: only a liability above the balance is scaled; owing exactly the
    balance, or a coin less, pays every transfer whole."""
    payees = [p for p in range(4) if p != payer]
    transfers = [Transfer(payer, p, 10 * (i + 1)) for i, p in enumerate(payees)]  # 60 in all
    for balance in (60, 61):
        balances = [1_000] * 4
        balances[payer] = balance
        assert scale_for_insolvency(transfers, balances) == tuple(transfers)
    balances[payer] = 59
    assert [t.amount for t in scale_for_insolvency(transfers, balances)] == [9, 19, 29]


#: §3.13, rows 2–20 (row 1, 木骰, is everything below 1,000, D46).
RANK_ROWS = [
    (1_000, "铁骰"),
    (2_000, "铜骰"),
    (4_000, "银骰"),
    (8_000, "金骰"),
    (20_000, "雀蛋"),
    (40_000, "雀仔"),
    (80_000, "麻雀"),
    (200_000, "雀头"),
    (400_000, "银雀"),
    (800_000, "金雀"),
    (2_000_000, "雀霸"),
    (4_000_000, "雀王"),
    (8_000_000, "雀帝"),
    (20_000_000, "雀妖"),
    (40_000_000, "雀仙"),
    (80_000_000, "雀魔"),
    (200_000_000, "雀圣"),
    (400_000_000, "雀神"),
    (800_000_000, "雀佛"),
]


@pytest.mark.parametrize("row", range(len(RANK_ROWS)))
def test_d46_each_rank_starts_at_its_threshold_not_a_point_below(row):
    """§3.13: the highest row whose threshold is at most the 积分; a point below a
    threshold is still the row before it."""
    threshold, title = RANK_ROWS[row]
    below = RANK_ROWS[row - 1][1] if row else "木骰"
    assert rank_title(threshold) == title
    assert rank_title(threshold - 1) == below


# --- baishan's kongs and the platform's requirements -------------------------------------


@pytest.mark.parametrize("rules", [BAISHAN, BAISHAN_PLATFORM])
@pytest.mark.parametrize(
    ("face", "big"),
    [("1m", True), ("1p", True), ("1s", True), ("9m", False), ("9p", False), ("2p", False)],
)
def test_d61_d40_the_big_kong_faces_are_the_three_ones(rules, face, big):
    """D61 (§5.8) and D40 (§3.8): 大杠 is a kong of 1m, 1p or 1s ("杠1条, 杠1筒, 杠1万"),
    paid twice a plain kong of the same kind; a 9 is a plain kong."""

    def paid(name: str) -> tuple[int, ...]:
        tile = parse_tiles(name)[0]
        seats = [(bytes(34), [Meld(MeldKind.MING_GANG, (tile,) * 4, 2)])] + [(bytes(34), [])] * 3
        (kong,) = kong_payments(rules, Options(), 1, 3, seats)
        assert kong.label.startswith("大杠") is (face == name and big)
        return kong.deltas

    assert paid(face) == tuple((2 if big else 1) * d for d in paid("5s"))


@pytest.mark.parametrize(
    ("dragons", "sets"), [("CFP", 1), ("CCFPP", 1), ("CCFFP", 1), ("CFFPP", 1), ("CCFFPP", 2)]
)
def test_d23_concealed_dragon_sets_are_as_many_as_the_scarcest_dragon(dragons, sets):
    """D23: each concealed 中发白 set in a baicheng hand pays as a 明杠; two of one dragon
    with one of another make one set, not two."""
    seats = [(bytes(parse_counts(dragons)), [])] + [(bytes(34), [])] * 3
    paid = kong_payments(BAICHENG, Options(), 1, 3, seats)
    assert [k.label for k in paid] == ["中发白 (concealed)"] * sets


def test_d34_the_platform_needs_a_pung_and_a_terminal_as_baishan_does():
    """D34: baishan_platform takes baishan's requirements: no pung, no win; no 么九, no
    win; seven pairs need no pung (§3.4)."""
    no_pung = run("baishan_platform", "123m456p789s12s99m", "3s")
    assert not no_pung.win and "碰" in no_pung.reason
    no_terminal = run("baishan_platform", "234m456p67s22s", "5s", melds=[meld("peng", "555m", 1)])
    assert not no_terminal.win and "么九" in no_terminal.reason
    assert run("baishan_platform", "123m456p12s99s", "3s", melds=[meld("peng", "999m", 1)]).win
    assert run("baishan_platform", "1p1p3p3p6m6m8m8m2s2s4s4s5s", "5s").win


# --- the scorer --------------------------------------------------------------------------


def test_a_fan_shows_without_its_applied_self():
    """A fan's repr (in every failing assertion on a reading) leaves out ``once``, which
    holds the fan again."""
    fan = SICHUAN_FANS[0]
    assert "once" not in repr(fan) and repr(fan).count("Fan(") == 1


def paid_key(reading: Reading) -> tuple[int, int]:
    """What D2 compares: the winner's gross, then the payers' fans."""
    return reading.gross, sum(p.total for p in reading.payers)


def test_d2_equal_readings_go_to_the_first_found():
    """D2: of readings paying the same, with as many fans, the first found is scored (the
    scorer's docstring): 111m 222m 333m read as pungs or as three 123m runs, neither
    worth more in sichuan (no 对对胡 with the 456p run)."""
    data = build("sichuan", "111m222m333m45p66p", "6p", options={"que": ["s", "s", "s", "s"]})
    s = load_situation(data)
    found = readings(s)
    assert len(found) >= 2
    assert found[0].arrangement != found[1].arrangement
    assert paid_key(found[0]) == max(map(paid_key, found))
    ties = [r for r in found if paid_key(r) == paid_key(found[0])]
    assert len(ties) >= 2 and best_reading(s) == found[0]


def test_d38_d39_the_explanation_marks_flat_and_capped_payments_only():
    """`Score.explain` says which payment is flat (十三幺 on the platform, D38) and which
    is capped (50 × 底注, D39), and marks a plain payment with neither."""
    flat = run("baishan_platform", "19m19p19sESWNCFP", "1m", dealer=0).explain()
    assert "(a flat payment)" in flat and "capped" not in flat
    capped = run("baishan_platform", "1p1p3p3p6p6p8p8p2p2p9p9pE", "E", dealer=0, by="self_draw")
    assert "(capped at 50 × 底注)" in capped.explain() and "flat" not in capped.explain()
    plain = run("baishan_platform", "123m456p12s99s", "3s", melds=[meld("peng", "999m", 1)])
    assert "(a flat payment)" not in plain.explain() and "capped" not in plain.explain()


def test_d74_the_explanation_shows_how_many_times_a_fan_applies():
    """`Score.explain` writes "×n" before the reason of a fan applied n > 1 times (two
    根 here, D74), and nothing for a fan applied once."""
    hand, que = "1m1m1m1m2m3m2p2p2p2p3p4p5p", {"que": ["s", "s", "s", "s"]}
    text = run("sichuan", hand, "5p", options=que).explain()
    (root,) = [line for line in text.splitlines() if line.lstrip().startswith("根")]
    assert "[winner] ×2 a face" in root
    one = run("sichuan", "1m1m1m1m2m3m2p3p4p6p7p8p5p", "5p", options=que).explain()
    assert "[winner] a face" in one and "×1" not in one


@pytest.mark.parametrize(
    ("hand", "tile", "melds", "missing"),
    [
        ("123m456m79m55m", "8m", [meld("peng", "999p", 3)], "条 (s)"),
        ("123s456s79s55s", "8s", [meld("peng", "999m", 3)], "饼 (p)"),
        ("123p456p79p55p", "8p", [meld("peng", "999p", 3)], "万 (m), 条 (s)"),
    ],
)
def test_three_suits_failure_names_the_missing_suits(hand, tile, melds, missing):
    """§2.4 三门全: the reason names the suits that are missing, and only those."""
    result = run("baicheng", hand, tile, melds=melds)
    assert not result.win
    assert result.reason == f"三门全 fails: no {missing} tile in the hand"


@pytest.mark.parametrize(
    ("rules", "kind", "tiles"),
    [("baishan", "an_gang", "1111p"), ("baicheng", "xuanfeng", "CFP")],
)
def test_a_meld_no_one_called_refuses_a_from(rules, kind, tiles):
    """The `score` input: an 暗杠 or a 旋风杠 is made from the seat's own tiles, so a
    ``from`` on it is refused, with the path of the field."""
    data = build(rules, "123m456p789s12s", "3s", melds=[meld(kind, tiles, 2)])
    with pytest.raises(SituationError, match=rf"melds\[0\]\.from: a {kind} is not called"):
        load_situation(data)


# --- the engine: who is asked, what a locked seat may do, the live flags -----------------


def win_fans(r: Round) -> tuple[str, ...]:
    """The fans of the hand's last win."""
    return [e for e in r.events if isinstance(e, ev.Win)][-1].fans


LOCKED_QUAD = [
    "3p1s1s2s2s3s3s5s5s6s6s7s7s8s",  # E (缺 m): throws 3p
    "12345677m24444p",  # S (缺 s): waits 3p (24p); holds 4444p, not drawn
    "1m2m3m5m6m7m1p5p6p7p8p9s9s",  # W: holds its 缺 suit, so never wins
    "4m5m6m9m9m8p8p9p9p4s4s8s9s",  # N: holds 9m9m
]


def test_d53_after_a_win_the_others_are_still_asked_and_the_winner_kongs_only_its_draw():
    """D53, §4.8: after S's win, N is still asked about W's 9m (it holds two: 碰), the
    winner S is not; S, locked, draws 1p while holding 4444p: though konging it would keep
    its wait (3p, from 12p), only the drawn tile may be konged, so it may only throw."""
    options = {"que": ["m", "s", "s", "p"]}
    r = scripted("sichuan", LOCKED_QUAD, draws="9m8m8m1p", options=options)
    r.act(0, A("discard 3p"))
    assert r.pending() == [1]
    r.act(1, A("hu"))
    assert r.won == [1] and r.turn == 2
    r.act(2, A("discard 9m"))
    assert r.phase is Phase.CLAIM and r.pending() == [3]
    assert A("peng 9m") in r.legal_actions(3)
    r.act(3, A("pass"))
    play_on(r, lambda r: r.turn == 1 and r.phase is Phase.TURN)
    assert r.drawn == parse_tiles("1p")[0]
    assert r.legal_actions(1) == [A("discard 1p")]


LAST_TILE = [
    "1s2s3s4s6s7s8s9s1s2s3s4s6s7s",  # E
    "5p5p1m1m1m2m2m2m3m3m3m4m4m",  # S: keeps two 5p
    "4p6p6p6p7p7p7p8p8p8p9p9p9p",  # W
    "123m456m789m1p2p3p5p",  # N (缺 s): waits on 5p alone
]


@pytest.mark.parametrize("last", [True, False])
def test_d76_the_engine_flags_only_the_last_tiles_self_draw_as_haidi(last):
    """§4.6, D76: 海底捞月 is the self-draw of the last wall tile, flagged by the engine
    as the hand is played: N's 5p drawn at the end of the wall has it; the same win on
    N's first draw has 自摸 only."""
    options = {"que": ["m", "s", "m", "s"]}
    if last:
        r = scripted("sichuan", LAST_TILE, tail="5p", options=options)
    else:
        r = scripted("sichuan", LAST_TILE, draws="9s9s5p", options=options)
    play_on(r, lambda r: r.turn == 3 and r.drawn == parse_tiles("5p")[0])
    assert len(r.wall) == 0 if last else len(r.wall) > 40
    r.act(3, A("hu"))
    assert "自摸" in win_fans(r)
    assert ("海底捞月" in win_fans(r)) is last


READY_PENG = [
    "9m1m2m3m4m5m6m7m8m1s2s3s4s5s",  # E: throws 9m
    "9m9m234p567p345s8sN",  # S: 碰 9m, then 报听 with the N: waits on 8s alone
    "1p1p3p3p6p6p8p8p2s2s4s4s6s",  # W
    "1m2m3m4m5m6m7m8m9s9s9sSW",  # N
]


def test_d32_a_declared_hand_may_add_its_drawn_fourth_to_its_peng():
    """D32, §3.3 item 5: after 报听 the hand is locked, but the drawn tile may still make a
    补杠 that keeps the wait (8s): S, holding 碰 9m, draws the last 9m and is offered the
    补杠 as well as the discard, and nothing else."""
    r = scripted("baishan", READY_PENG, draws="2p2p2p9m")
    r.act(0, A("discard 9m"))
    assert r.pending() == [1]
    r.act(1, A("peng 9m"))
    assert A("ting N") in r.legal_actions(1)
    r.act(1, A("ting N"))
    play_on(r, lambda r: r.turn == 1 and r.phase is Phase.TURN)
    assert r.ready[1] and r.drawn == parse_tiles("9m")[0]
    assert r.legal_actions(1) == [A("bugang 9m"), A("discard 9m")]


def test_d29_a_win_after_a_treasure_change_carries_the_retired_face():
    """D29: S's 碰 of 9p shows three of the treasure face, which is retired for 3s; W's
    win after it is scored with 9p among the retired treasures (what a 叉宝 of it needs)."""
    hands = [
        "9p1m2m3m4m5m6m7m8m2p3p4p5p6p",  # E: throws 9p
        "9p9p6s2m3m4m5m6m7m8m5p6p7p",  # S: 碰 9p, throws 6s
        "111m234p567s78s99s",  # W: waits 6s/9s
        "1s2s3s4s1s2s3s4s5s5sCCF",
    ]
    r = scripted("baicheng", hands, tail="CCPP9p3s")
    assert r.treasure == parse_tiles("9p")[0]
    r.act(0, A("discard 9p"))
    r.act(1, A("peng 9p"))
    assert r.treasure == parse_tiles("3s")[0]
    r.act(1, A("discard 6s"))
    r.act(2, A("hu"))
    situation = r.win_scores[-1].situation
    assert situation.treasure == parse_tiles("3s")[0]
    assert situation.retired_treasure == tuple(parse_tiles("9p"))
