"""The one legality source (`fangcheng.rules.requirements`) and the decisions it carries:
a face that cannot come is no wait (D78), sichuan's last-four zone (D79), 一炮多响 on a
winner's discard (D80) and 攒杠 from draws only (D88)."""

from __future__ import annotations

import dataclasses
import pickle
import random

import pytest

from fangcheng.analysis.hand import waits
from fangcheng.protocol import events as ev
from fangcheng.protocol.actions import Act, Action
from fangcheng.protocol.observation import Phase
from fangcheng.rules.requirements import (
    declarable,
    final_counts,
    in_last_four,
    is_legal_win,
    legal_arrangements,
    legal_readings,
    legal_win,
    may_meld_discard,
    wait_set,
)
from fangcheng.rules.ruleset import ALL_RULES, BAISHAN_PLATFORM, SICHUAN, Options, RuleSet
from fangcheng.scoring.payments import Transfer, deltas_of
from fangcheng.scoring.scorer import best_ready_fans
from fangcheng.scoring.settlement import sichuan_exhaustion
from fangcheng.scoring.situation import SituationError, load_situation
from fangcheng.tiles.melds import Meld, MeldKind
from fangcheng.tiles.notation import KINDS, format_tiles, parse_counts, parse_tiles
from scripting import A, play_on, scripted


def hand(text: str) -> bytes:
    return bytes(parse_counts(text))


def tiles(text: str) -> tuple[int, ...]:
    return tuple(parse_tiles(text))


# --- one source: the fast answers agree with the readings -------------------------------


def _near_wins(rules: RuleSet, seed: int, count: int) -> list[tuple[bytes, list[Meld], int | None]]:
    """Seeded hands of 14 - 3k tiles built from melds and a pair of the rule set's faces
    (some laid), then one tile swapped now and then: wins, near wins and requirement misses."""
    rng = random.Random(seed)
    faces = sorted(rules.faces)
    out: list[tuple[bytes, list[Meld], int | None]] = []
    while len(out) < count:
        counts = [0] * KINDS
        laid: list[Meld] = []
        for i in range(4):
            if rng.random() < 0.5:
                group = [rng.choice(faces)] * 3
            else:
                first = rng.choice([t for t in faces if t < 27 and t % 9 < 7])
                group = [first, first + 1, first + 2]
            if i < rng.randrange(3):
                kind = MeldKind.PENG if group[0] == group[1] else MeldKind.CHI
                laid.append(Meld(kind, tuple(group), 1))
            else:
                for t in group:
                    counts[t] += 1
        counts[rng.choice(faces)] += 2
        if rng.random() < 0.3:
            gone = rng.choice([t for t in faces if counts[t]])
            counts[gone] -= 1
            counts[rng.choice(faces)] += 1
        total = list(counts)
        for m in laid:
            for t in m.tiles:
                total[t] += 1
        if max(total) > 4:
            continue
        que = rng.randrange(3) if rules.void_suit else None
        out.append((bytes(counts), laid, que))
    return out


@pytest.mark.parametrize("rules", ALL_RULES, ids=lambda r: r.name)
def test_is_legal_win_is_whether_legal_arrangements_finds_a_reading(rules: RuleSet) -> None:
    """The engine's and the wait set's fast answer never differs from the readings the
    scorer scores; the hands include wins failing each requirement."""
    wins = 0
    for hand14, melds, que in _near_wins(rules, 77, 1500):
        legal = legal_arrangements(rules, hand14, melds, que)
        assert is_legal_win(rules, hand14, melds, que) == bool(legal), format_tiles(
            [t for t in range(KINDS) for _ in range(hand14[t])]
        )
        wins += bool(legal)
    assert 100 < wins < 1400  # both answers are exercised


@pytest.mark.parametrize("rules", ALL_RULES, ids=lambda r: r.name)
def test_legal_readings_remembered_are_those_found(rules: RuleSet) -> None:
    """The memo of `legal_readings` (by hand bytes, per rule set) answers as finding them
    afresh does, and stays behind when the rules are pickled (an expert's fork)."""
    replaced = dataclasses.replace(rules)  # a rule set of its own, its memo empty
    hands = _near_wins(rules, 78, 300)
    ques = (None, 0, 1, 2) if rules.void_suit else (None,)
    for _ in range(2):  # the second time from the memo
        for hand14, melds, _ in hands:
            final = final_counts(hand14, melds)
            for que in ques:  # the same tiles under each 缺
                found = legal_readings(replaced, hand14, final, melds, que)
                afresh = legal_arrangements(dataclasses.replace(rules), hand14, melds, que)
                assert list(found) == afresh
    assert replaced.legal_memo
    copy = pickle.loads(pickle.dumps(replaced))
    assert copy == replaced and copy.legal_memo == {}


_KONGS = (MeldKind.AN_GANG, MeldKind.MING_GANG, MeldKind.BU_GANG)


@pytest.mark.parametrize("rules", ALL_RULES, ids=lambda r: r.name)
def test_legal_win_remembered_by_tiles_is_found_afresh(rules: RuleSet) -> None:
    """`legal_win`, memoised by the tiles alone, answers as finding the hand's counts,
    suits, honour and legal readings afresh does: for each tile of a hand as the one won
    on, its laid 碰 as they are and as kongs of each kind (the same tiles under another
    kind are answered from the memo), under each 缺."""
    replaced = dataclasses.replace(rules)
    ques = (None, 0, 1, 2) if rules.void_suit else (None,)
    asked = wins = 0
    for hand14, melds, _ in _near_wins(rules, 79, 150):
        kongs = [
            [Meld(kind, m.tiles + m.tiles[:1], 1) if m.kind is MeldKind.PENG else m for m in melds]
            for kind in _KONGS
        ]
        for tile in {t for t in range(KINDS) if hand14[t]}:
            concealed = bytearray(hand14)
            concealed[tile] -= 1
            for laid in (melds, *kongs):
                final = final_counts(hand14, laid)
                for que in ques:
                    readings = legal_arrangements(dataclasses.replace(rules), hand14, laid, que)
                    suits = sum(any(final[9 * s : 9 * s + 9]) for s in range(3))
                    afresh = (final, suits, any(final[27:]), readings)
                    found = legal_win(replaced, bytes(concealed), tile, laid, que)
                    assert (*found[:3], list(found[3])) == afresh
                    asked += 1
                    wins += bool(readings)
    assert replaced.win_memo and 0 < wins < asked
    replaced.forget()
    assert not replaced.win_memo and not replaced.legal_memo


def test_d32_d48_which_discards_may_be_melded():
    """No 碰/杠/吃 after 报听 (D32); none of one's 缺 suit (D48), whatever else holds."""
    five_m, five_p, red = tiles("5m5pC")
    assert may_meld_discard(five_m, False, None) and may_meld_discard(five_m, False, 1)
    assert not may_meld_discard(five_m, True, None)
    assert not may_meld_discard(five_m, False, 0) and may_meld_discard(five_p, False, 0)
    assert may_meld_discard(red, False, 0)  # an honour is of no suit


# --- D78: a face whose four copies are the seat's own is no wait ---------------------

KONG_2M = Meld(MeldKind.AN_GANG, tiles("2222m"))


def test_d78_the_wait_set_leaves_out_a_fifth_copy_of_ones_own():
    """34m beside a konged 2222m waits on 5m only; beside a peng of 222m the fourth 2m can
    still come (a 补杠 aside, it completes 234m), so it waits on 2m and 5m."""
    rest = hand("34m456p789p99p")
    assert format_tiles(wait_set(SICHUAN, rest, [KONG_2M], que=2)) == "5m"
    peng = [Meld(MeldKind.PENG, tiles("222m"), 1)]
    assert format_tiles(wait_set(SICHUAN, rest, peng, que=2)) == "25m"


def test_d78_d32_one_real_face_may_be_declared_ready():
    """D32 with D78: 34m + 2222m kong waits on one face, so it may declare 报听; the
    `score` input accepts the declaration (the same function judges it)."""
    melds = [Meld(MeldKind.AN_GANG, tiles("2222m")), Meld(MeldKind.PENG, tiles("999p"), 1)]
    assert declarable(BAISHAN_PLATFORM, hand("34m456s11s"), melds)
    assert not declarable(BAISHAN_PLATFORM, hand("3456m456s111s"), melds[1:])
    situation = {
        "rules": "baishan_platform", "base": 1, "dealer": 0, "winner": 0, "win_tile": "5m",
        "win_by": "discard", "from": 2, "declared_ready": [True, False, False, False],
        "seats": [
            {"concealed": "34m456s11s", "melds": [
                {"kind": "an_gang", "tiles": "2222m"}, {"kind": "peng", "tiles": "999p", "from": 1},
            ]},
            {"concealed": "1m1m5m6m7m8m1p2p3p4p5p6p7p"},
            {"concealed": "3m4m9m9m9m2p3p4p5p6p7p8pE"},
            {"concealed": "6m7m8m9m1p2p3p4p5p6p7p8pS"},
        ],
    }  # fmt: skip
    assert load_situation(situation).declared_ready[0]
    situation["seats"][0]["melds"] = [{"kind": "peng", "tiles": "999p", "from": 1}]  # type: ignore[index]
    situation["seats"][0]["concealed"] = "3456m456s111s"  # type: ignore[index]
    try:
        load_situation(situation)
    except SituationError as e:
        assert "waits on 2 faces" in str(e)
    else:
        raise AssertionError("a two-face wait was accepted as 报听")


def test_d78_d32_the_engine_offers_the_declaration_on_one_real_face():
    """The engine asks the same function: after an 暗杠 of 2222m, discarding the E leaves
    34m 456s 111s 99p, waiting on 2m (all four its own) and 5m, so 报听 is offered."""
    hands = ["2222m34m456s111s99p", "1m5m6m7m8m1p2p3p4p5p6p7pS", "3m9m9m9m2p3p4p5p6p7p8pWN",
             "6m7m8m9m1p2p3p4p5p6p7p8pS"]  # fmt: skip
    r = scripted("baishan_platform", hands, tail="E", options={"piao": [0, 0, 0, 0]})
    r.act(0, A("angang 2m"))
    assert r.drawn == tiles("E")[0]
    assert A("ting E") in r.legal_actions(0)
    assert A("ting 9p") not in r.legal_actions(0)


def test_d78_d19_the_treasure_stands_in_only_for_a_face_that_can_come():
    """D19, D68 with D78: with 2222m konged, a drawn treasure may stand for 5m only."""
    from fangcheng.scoring.scorer import readings

    situation = {
        "rules": "baicheng", "base": 1, "dealer": 1, "winner": 0, "win_tile": "7s",
        "win_by": "treasure", "treasure": "7s",
        "seats": [
            {"concealed": "34m456p11s", "melds": [
                {"kind": "an_gang", "tiles": "2222m"}, {"kind": "peng", "tiles": "999p", "from": 1},
            ]},
            {"concealed": "1m1m5m6m7m8m1p2p3p4p5p6p7p"},
            {"concealed": "3m4m9m9m9m2p3p7p8p2s3s4s5s"},
            {"concealed": "6m7m8m9m1p2p3p8p5s6s8s9sC"},
        ],
    }  # fmt: skip
    found = {r.tile for r in readings(load_situation(situation))}
    assert found == set(tiles("5m"))


@pytest.mark.parametrize(("kong", "offered"), [("2222m", False), ("9999m", True)])
def test_d78_d68_the_engine_offers_no_treasure_win_on_a_fifth_copy_wait(
    kong: str, offered: bool
) -> None:
    """E kongs ``kong`` and keeps 13m 345p 678s 99s, waiting by shape on 2m. Beside 2222m
    that 2m cannot come, so a drawn treasure (5s) has nothing to stand in for and no win is
    offered; beside 9999m it stands in for the 2m."""
    hands = [
        kong + "13m345p678s99s",
        "4m5m6m7m8m1p2p6p7p8p1s2s3s",
        "4m5m6m7m8m1p2p6p7p8p1s2s3s",
        "4m5m6m7m8m3p4p6p7p8p4s5s6s",
    ]
    r = scripted("baicheng", hands, draws="9p9p9p5s", tail="FFCC5s")
    r.act(0, A(f"angang {kong[-2:]}"))
    r.act(0, A("discard F"))
    play_on(r, lambda r: r.turn == 0 and r.phase is Phase.TURN)
    assert r.drawn == tiles("5s")[0] and r.treasure == tiles("5s")[0]
    assert (A("hu") in r.legal_actions(0)) is offered


def test_d78_d55_a_fifth_copy_wait_is_not_ready_for_the_not_ready_check_and_refund():
    """D55 with D78: 1m beside a peng of 111m and 456789999p completes only on a fifth 1m,
    so the hand is not ready: it pays 查大叫 and returns its kong money (退税)."""
    dead, melds = hand("1m456789999p"), [Meld(MeldKind.PENG, tiles("111m"), 2)]
    assert format_tiles(waits(dead, melds=[])) == "1m"  # by shape alone it would be
    assert wait_set(SICHUAN, dead, melds, que=2) == ()
    assert best_ready_fans(SICHUAN, dead, melds, que=2) is None
    seats = [
        (dead, melds),
        (hand("123456789p11p22p"), []),  # S: ready (11p/22p)
        (hand("2m3m5m6m8m9m2p4p6p8p1p3p5p"), []),  # W: not ready
        (hand("2m3m5m6m8m9m2p4p6p8p1p3p5p"), []),  # N: not ready
    ]
    paid = [Transfer(3, 0, 2, "下雨")]  # N paid E's 下雨 earlier
    result = {
        reason.split()[0]: deltas_of(t)
        for reason, t in sichuan_exhaustion(
            SICHUAN, Options(que=(2, 2, 2, 2)), 1, seats, (), (), paid
        )
    }
    assert result["查大叫"][0] < 0  # E pays as not ready
    assert result["退税"] == (-2, 0, 0, 2)  # and returns its 下雨


# --- D79: the last-four zone -----------------------------------------------------------


def test_d79_the_zone_begins_with_the_draw_made_when_four_remain():
    """Tiles left in the wall once a draw is made: 3..0 are in the zone, 4 is not."""
    assert [in_last_four(left) for left in (5, 4, 3, 2, 1, 0)] == [False] * 2 + [True] * 4


N_WAITS_5S = [
    "1m2m3m4m5m6m7m8m9m2s3s4s6s7s",
    "1m2m3m4m5m6m7m8m9m2p2p3p3p",  # S (缺 s): waits 2p/3p
    "4p4p5p6p7p8p8s9s9s2s3s4s6s",
    "1p2p3p4p5p6p7p8p9p1s1s1s5s",  # N (缺 m): waits 5s
]
QUE = {"options": {"que": ["p", "s", "m", "m"]}}


def test_d79_self_draws_either_side_of_the_boundary():
    """N draws a winning 5s with five tiles left (leaving four: before the zone) and the
    last tile, another 5s (in it). Passing the first flags nothing; the second, a 花猪."""
    r = scripted("sichuan", N_WAITS_5S, tail="5s1p1p2p5s", **QUE)
    play_on(r, lambda r: r.turn == 3 and len(r.wall) == 4 and r.phase is Phase.TURN)
    assert A("hu") in r.legal_actions(3) and not r.observe(3).must_win
    r.act(3, Action(Act.DISCARD, r.drawn))
    assert 3 not in r.flower_pigs
    play_on(r, lambda r: r.turn == 3 and len(r.wall) == 0 and r.phase is Phase.TURN)
    assert A("hu") in r.legal_actions(3) and r.observe(3).must_win  # warned first
    r.act(3, Action(Act.DISCARD, r.drawn))
    assert 3 in r.flower_pigs


def test_d79_discards_either_side_of_the_boundary():
    """S waits on 2p/3p. N's discard of the 2p it drew with five left (four remain) is
    before the zone; E's discard of the 3p it drew with four left is in it."""
    r = scripted("sichuan", N_WAITS_5S, tail="1p1p1p3p2p", **QUE)
    play_on(r, lambda r: r.phase is Phase.CLAIM and r.claim == (3, tiles("2p")[0]))
    assert len(r.wall) == 4 and A("hu") in r.legal_actions(1)
    assert not r.observe(1).must_win
    r.act(1, A("pass"))
    assert 1 not in r.flower_pigs
    play_on(r, lambda r: r.phase is Phase.CLAIM and r.claim == (0, tiles("3p")[0]))
    assert len(r.wall) == 3 and A("hu") in r.legal_actions(1)
    assert r.observe(1).must_win  # warned first; a seat offered no win is not
    assert not any(r.observe(s).must_win for s in (0, 2, 3))
    r.act(1, A("pass"))
    assert 1 in r.flower_pigs


# --- D80: 一炮多响 on a winner's discard -------------------------------------------------


def test_d80_two_claimants_of_a_winners_discard_both_win_then_the_hand_ends():
    """S and W win on E's 5p; later S, locked, throws the 5s it drew, on which E (2s/5s)
    and N (5s/8s) both wait: both win and are paid, S paying as the discarder (D75), and
    the hand then ends, once, with four winners."""
    hands = [
        "5p1m2m3m4m5m6m7m8m9m3s4s7s7s",  # E (缺 p): throws 5p, then waits 2s/5s
        "2m2m2m7m8m9m1p2p3p4p6p9m9m",  # S (缺 s): waits 5p
        "3p3p7p7p8p8p2s2s6s6s9s9s5p",  # W (缺 m): seven pairs, waits 5p
        "4p4p4p1s1s1s6s7s2s3s4s8s8s",  # N (缺 m): waits 5s/8s
    ]
    r = scripted("sichuan", hands, draws="1m9s5s", options={"que": ["p", "s", "m", "m"]})
    r.act(0, A("discard 5p"))
    assert r.pending() == [1, 2]
    r.act(1, A("hu"))
    r.act(2, A("hu"))
    assert r.won == [1, 2] and not r.over
    play_on(r, lambda r: r.phase is Phase.CLAIM)
    assert r.claim == (1, tiles("5s")[0]) and r.pending() == [0, 3]
    r.act(0, A("hu"))
    r.act(3, A("hu"))
    assert r.over and r.won == [1, 2, 3, 0]  # in play order from the discarder
    assert sum(isinstance(e, ev.End) for e in r.events) == 1
    wins = [e for e in r.events if isinstance(e, ev.Win)][2:]
    assert [(w.seat, w.source) for w in wins] == [(3, 1), (0, 1)]
    assert all(w.deltas[1] < 0 for w in wins)  # S pays both
    assert sum(r.settlement["deltas"]) == 0
    assert sum(1 for i in r.settlement["items"] if i["reason"].startswith("胡")) == 4


# --- D88: 攒杠 completes only from draws -----------------------------------------------


def test_d88_a_discarded_dragon_cannot_complete_a_xuanfeng():
    """S holds F and P. E's discarded C gives it nothing to do (asked anyway, it may only
    pass); the C it then draws completes the 旋风杠."""
    hands = [
        "C1m2m3m4m5m6m7m8m9m1p2p3p4p",
        "FP1s2s3s4s5s6s7s8s9s5p6p",
        "2p3p4p5p6p7p8p9p1s2s3s4s5s",
        "9m9m8m8m7m7m6m6m5m5m4m4m3m",
    ]
    r = scripted("baicheng", hands, draws="C", ask_all=True)
    r.act(0, A("discard C"))
    assert r.phase is Phase.CLAIM and r.legal_actions(1) == [A("pass")]
    for seat in r.pending():
        r.act(seat, A("pass"))
    assert r.turn == 1 and r.drawn == tiles("C")[0]
    assert Action(Act.XUANFENG) in r.legal_actions(1)
