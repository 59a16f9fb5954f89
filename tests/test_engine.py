"""The game engine: scripted hands for each special mechanic, and random-play invariants.

Scripted hands give each seat's starting tiles, the draws that follow and the tail of
the wall (read from the last tile: replacements, then baicheng's indicator); the rest of
the wall is filled from the seed (see `fangcheng.engine.record.wall_of`).
"""

from __future__ import annotations

import json
import random
from collections import Counter
from typing import TypeVar

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fangcheng.analysis.hand import shanten, waits
from fangcheng.engine.record import RecordError, record_of, replay, wall_of
from fangcheng.engine.round import Round
from fangcheng.protocol import events as ev
from fangcheng.protocol.actions import Act, Action, IllegalActionError
from fangcheng.protocol.observation import Phase
from fangcheng.rules.ruleset import BAICHENG, SICHUAN, find_rules
from fangcheng.tiles.notation import parse_tiles
from scripting import A, play_on, scripted

RULES = ["baicheng", "baishan", "baishan_platform", "sichuan"]


E = TypeVar("E", bound=ev.Event)


def events_of(round_: Round, kind: type[E]) -> list[E]:
    return [e for e in round_.events if isinstance(e, kind)]


# A baishan deal where the dealer's 6m is wanted by seats 1 and 3 (both wait on 3m/6m).
BAISHAN_DOUBLE_WAIT = [
    "6m2m8m1p3p5p7p1s3s8sSWNF",  # dealer E, 14 tiles
    "111m234p567s99s45m",  # S: waits 3m 6m (pung 111m, 么九 1m)
    "2s4s6s8p6p9m7mSWNFCP",  # W: nothing
    "999p234s678mEE45m",  # N: waits 3m 6m (pung 999p)
]


def test_jiehu_first_claimant_in_play_order_wins():
    """§1.7 截胡: two seats win on one discard; the first after the discarder takes it."""
    r = scripted("baishan", BAISHAN_DOUBLE_WAIT)
    r.act(0, A("discard 6m"))
    assert r.pending() == [1, 3]
    assert A("hu") in r.legal_actions(1) and A("hu") in r.legal_actions(3)
    r.act(3, A("hu"))
    r.act(1, A("hu"))
    wins = events_of(r, ev.Win)
    assert [w.seat for w in wins] == [1]
    assert r.over and r.settlement is not None
    assert r.settlement["deltas"][1] > 0 and sum(r.settlement["deltas"]) == 0


def test_jiehu_passes_to_the_next_claimant_when_the_first_declines():
    r = scripted("baishan", BAISHAN_DOUBLE_WAIT)
    r.act(0, A("discard 6m"))
    r.act(1, A("pass"))
    r.act(3, A("hu"))
    assert [w.seat for w in events_of(r, ev.Win)] == [3]


def test_illegal_action_names_seat_action_and_alternatives_and_changes_nothing():
    r = scripted("baishan", BAISHAN_DOUBLE_WAIT)
    before = json.dumps(record_of(r))
    with pytest.raises(
        IllegalActionError, match=r"seat 0 cannot discard 9m .* legal: .*discard 6m"
    ):
        r.act(0, A("discard 9m"))
    with pytest.raises(IllegalActionError, match="seat 2 cannot"):
        r.act(2, A("discard 2s"))
    assert json.dumps(record_of(r)) == before


def test_unknown_action_text_is_an_illegal_action_error():
    with pytest.raises(IllegalActionError, match="unknown action 'dance'"):
        A("dance 5m")
    with pytest.raises(IllegalActionError, match="one tile"):
        A("discard 5m6m")


# Baishan: S pungs the dealer's 5p and later adds the fourth; W waits on 5p (坎).
ROB_HANDS = [
    "5p1m2m3m7m8m9m1s2s3sEESN",  # E dealer
    "5p5p2m3m4m6s7s8s9p9p1sNN",  # S
    "4p6p2p2p2p7s8s9sWWW3m3m",  # W: 46p + 222p + 789s + WWW + 33m, waits 5p
    "1p1p9m9m4s5s6s6m7m8mCFP",  # N
]
ROB_DRAWS = "SC2s5p"  # W, N, E draw and throw; then S draws the fourth 5p


def _to_the_added_kong(r: Round) -> None:
    r.act(0, A("discard 5p"))
    assert r.pending() == [1, 2]  # S may peng, W may win
    r.act(2, A("pass"))
    r.act(1, A("peng 5p"))
    r.act(1, A("discard 1s"))
    r.act(2, A("discard S"))
    r.act(3, A("discard C"))
    r.act(0, A("discard 2s"))
    assert r.turn == 1 and A("bugang 5p") in r.legal_actions(1)
    r.act(1, A("bugang 5p"))


def test_d9_d33_robbing_a_bu_gang_voids_the_kong_and_the_konger_pays_as_discarder():
    """D9/D33: a 补杠 can be robbed; the kong is not counted; the konger pays as 点炮."""
    r = scripted("baishan", ROB_HANDS, draws=ROB_DRAWS, tail="7p")
    _to_the_added_kong(r)
    assert r.phase is Phase.ROB and r.pending() == [2]
    r.act(2, A("hu"))
    (win,) = events_of(r, ev.Win)
    assert (win.seat, win.by, win.source) == (2, "robbed_kong", 1)
    assert not events_of(r, ev.Kong)
    assert all("杠" not in item["reason"] for item in r.settlement["items"])
    assert r.melds[1][0].kind.value == "peng"  # the robbed addition is void
    # W (closed) wins: 立门 1. E pays +坐庄 +立门 = 3 → 8; S +点炮 = 2 → 4; N +立门 → 4.
    assert r.settlement["deltas"] == [-8, -4, 16, -4]


def test_an_unrobbed_bu_gang_draws_a_replacement_from_the_tail():
    r = scripted("baishan", ROB_HANDS, draws=ROB_DRAWS, tail="7p")
    _to_the_added_kong(r)
    r.act(2, A("pass"))
    assert r.phase is Phase.TURN and r.turn == 1
    assert r.drawn == parse_tiles("7p")[0] and r.after_kong
    assert r.melds[1][0].kind.value == "bu_gang"


def test_d32_declared_ready_hand_is_locked():
    """D32: 报听 needs exactly one winning face; afterwards no calls, drawn tile discarded."""
    r = scripted("baishan", ROB_HANDS, draws=ROB_DRAWS, tail="7p")
    r.act(0, A("discard 5p"))
    r.act(2, A("pass"))
    r.act(1, A("pass"))
    r.act(1, A("discard S"))  # S drew the S
    assert r.turn == 2 and r.drawn == parse_tiles("C")[0]
    # W waits on 5p alone once it lets the C go: it may declare with that discard.
    assert A("ting C") in r.legal_actions(2) and A("ting 3m") not in r.legal_actions(2)
    r.act(2, A("ting C"))
    assert r.ready[2] and events_of(r, ev.Discard)[-1].ready is True
    r.act(3, A("discard 2s"))
    if r.pending() == [0]:  # E may chi 2s (1s3s); it declines
        r.act(0, A("pass"))
    r.act(0, A("discard 5p"))  # E drew the last 5p and throws it
    # A declared hand may still win, but not peng or chi.
    assert r.legal_actions(2) == [A("hu"), A("pass")]
    r.act(2, A("pass"))
    while r.turn != 2:
        (seat,) = r.pending()
        legal = r.legal_actions(seat)
        r.act(seat, A("pass") if A("pass") in legal else legal[-1])
    assert r.legal_actions(2) in (
        [Action(Act.DISCARD, r.drawn)],
        [A("hu"), Action(Act.DISCARD, r.drawn)],
    )


def play_random(rules: str, seed: int, *, check=None) -> Round:
    r = Round(rules, seed=seed, dealer=seed % 4)
    rng = random.Random(seed)
    while not r.over:
        for seat in r.pending():
            r.act(seat, rng.choice(r.legal_actions(seat)))
            if check:
                check(r)
    return r


def tiles_in_play(r: Round) -> Counter[int]:
    seen: Counter[int] = Counter()
    for seat in range(4):
        seen.update({t: c for t, c in enumerate(r.hands[seat]) if c})
        for meld in r.melds[seat]:
            seen.update(meld.tiles)
        seen.update(r.rivers[seat])
    seen.update(r.win_tiles.values())
    seen.update(r.wall.undealt)
    seen.update(r.wall.live)
    seen.update(r.wall.reserve)
    seen.update(r.wall.indicators)
    return seen


@pytest.mark.parametrize("rules", RULES)
def test_tiles_are_conserved_at_every_step(rules):
    full = Counter(find_rules(rules).tiles)

    def check(r: Round) -> None:
        assert tiles_in_play(r) == full

    for seed in range(15):
        play_random(rules, seed, check=check)


@pytest.mark.parametrize("rules", RULES)
def test_random_hands_settle_to_zero_and_replay_identically(rules):
    for seed in range(40):
        r = play_random(rules, seed)
        assert r.settlement is not None
        assert sum(r.settlement["deltas"]) == 0
        assert sum(r.settlement["total"]) == -sum(r.settlement["fees"])
        record = json.loads(json.dumps(record_of(r)))
        result = replay(record)
        assert result.divergence is None


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(RULES), st.integers(0, 2**31))
def test_property_random_play_replays(rules, seed):
    r = play_random(rules, seed)
    assert replay(json.loads(json.dumps(record_of(r)))).divergence is None


@pytest.mark.parametrize("rules", RULES)
def test_the_shanten_bounds_the_engine_carries_hold(rules):
    """The engine skips the ready check and the waits of a hand on a lower bound of its
    shanten carried from turn to turn: a draw lowers shanten by one at most, a discard
    never does, and a hand with shape waits is ready."""
    shapes = find_rules(rules).shapes
    rng = random.Random(rules)
    for trial in range(3000):
        faces = sorted(find_rules(rules).faces)
        if trial % 2:  # a few neighbouring faces, for hands near ready
            start = rng.randrange(len(faces) - 8)
            faces = faces[start : start + rng.randint(4, 12)]
        pool = [t for t in faces for _ in range(4)]
        rng.shuffle(pool)
        hand = bytearray(34)
        for t in pool[: 13 - 3 * rng.choice([0, 0, 1, 2, 3])]:
            hand[t] += 1
        resting = shanten(bytes(hand), shapes=shapes)
        if waits(bytes(hand), shapes=shapes):
            assert resting <= 0
        hand[rng.choice([t for t in faces if hand[t] < 4])] += 1
        drawn = shanten(bytes(hand), shapes=shapes)
        assert drawn >= resting - 1
        hand[rng.choice([t for t in range(34) if hand[t]])] -= 1
        assert shanten(bytes(hand), shapes=shapes) >= drawn


def test_replay_reports_the_first_divergence():
    r = play_random("baicheng", 3)
    record = json.loads(json.dumps(record_of(r)))
    record["events"][5] = {"type": "exhausted"}
    result = replay(record)
    assert result.divergence is not None and result.divergence.startswith("event 5:")


def test_replay_rejects_a_malformed_event_naming_its_field():
    record = record_of(play_random("baicheng", 3))
    record["events"][5] = {"type": "draw", "seat": 9, "tile": "1m"}
    with pytest.raises(RecordError, match=r"^events\[5\]\.seat: 9 is out of range \(0\.\.3\)$"):
        replay(record)


def test_replay_names_an_illegal_decision_with_the_alternatives():
    r = play_random("baishan", 2)
    record = json.loads(json.dumps(record_of(r)))
    record["decisions"][0] = {"seat": record["decisions"][0]["seat"], "action": "discard 9z"}
    with pytest.raises(RecordError, match="decisions\\[0\\]"):
        replay(record)


@pytest.mark.parametrize("rules", RULES)
def test_observation_never_shows_other_concealed_tiles_or_the_wall(rules):
    def check(r: Round) -> None:
        for seat in range(4):
            view = r.observe(seat)
            text = repr(view)
            assert view.hand == bytes(r.hands[seat])
            for other in range(4):
                if other != seat:
                    assert view.seats[other].concealed == sum(r.hands[other])
            assert "live" not in text and "reserve" not in text
            for other, sv in enumerate(view.seats):
                if other != seat and not r.over:
                    assert all(m.kind.value != "an_gang" for m in sv.melds)

    for seed in range(3):
        play_random(rules, seed, check=check)


@pytest.mark.parametrize("rules", RULES)
def test_observation_fields_hold_the_round_state(rules):
    """`observe` builds its named tuples by position: each field holds what it names."""

    def check(r: Round) -> None:
        for seat in range(4):
            view = r.observe(seat)
            assert (view.seat, view.rules, view.phase, view.dealer, view.turn, view.base) == (
                seat, r.rules, r.phase, r.dealer, r.turn, r.base
            )  # fmt: skip
            assert view.rules is r.rules  # the table's configured object, not a copy
            assert view.wall == len(r.wall) and view.treasure == r.treasure
            assert view.retired == tuple(r.wall.indicators[:-1])
            assert view.hand == bytes(r.hands[seat])
            assert view.drawn == (r.drawn if r.turn == seat else None)
            assert view.legal == tuple(r.legal_actions(seat))
            assert view.scores == tuple(sum(i.deltas[s] for i in r.items) for s in range(4))
            for s, sv in enumerate(view.seats):
                assert sv.river == tuple(r.rivers[s]) and sv.ready == r.ready[s]
                assert sv.won == (s in r.won) and sv.piao == r.piao[s]
                assert sv.que == (r.que[s] if None not in r.que else None)
                assert len(sv.melds) + sv.hidden_kongs == len(r.melds[s])
                assert sv.concealed == sum(r.hands[s])
                shown = r.over or s in r.won
                assert sv.revealed == (r.revealed(s) if shown else None)

    for seed in range(3):
        play_random(rules, seed, check=check)


def test_scripted_wall_head_and_tail():
    wall = wall_of({"head": "123m", "tail": "CF"}, "baicheng", 5)
    assert wall[:3] == parse_tiles("123m")
    assert wall[-1] == parse_tiles("C")[0] and wall[-2] == parse_tiles("F")[0]
    assert Counter(wall) == Counter(BAICHENG.tiles)
    with pytest.raises(RecordError, match="more copies"):
        wall_of({"head": "11111m"}, "baicheng", 5)
    with pytest.raises(RecordError, match="hands\\[1\\]: 12 tiles"):
        wall_of({"hands": ["1m" * 14, "1p" * 12, "", ""]}, "baishan", 0)


def chase_round() -> Round:
    """A platform hand where every seat holds one N to open with (漂 already bet)."""
    hands = [
        "N1m4m7m2p5p8p3s6s9sESWF",
        "N2m5m8m3p6p9p1s4s7sESC",
        "N3m6m9m1p4p7p2s5s8sWCP",
        "N1m4m7m2p5p8p3s6s9sFCP",
    ]
    return scripted("baishan_platform", hands, draws="9m9p9s", options={"piao": [0, 0, 0, 0]})


def test_d41_chasing_the_dealer():
    """D41 撵庄: the three first discards match the dealer's; the dealer pays 2 × 底注 each."""
    r = chase_round()
    for seat in range(4):
        r.act(seat, A("discard N"))
    (payment,) = events_of(r, ev.Payment)
    assert payment.deltas == (-6, 2, 2, 2) and "撵庄" in payment.reason


def test_chasing_the_dealer_is_broken_by_a_different_first_discard():
    r = chase_round()
    r.act(0, A("discard N"))
    r.act(1, A("discard N"))
    r.act(2, A("discard 9p"))
    r.act(3, A("discard N"))
    assert not events_of(r, ev.Payment)


def test_piao_bets_are_asked_before_dealing_and_recorded():
    r = Round("baishan_platform", seed=4)
    assert r.phase is Phase.PIAO and r.pending() == [0, 1, 2, 3]
    assert r.legal_actions(0) == [A("piao 0"), A("piao 5"), A("piao 10")]
    for seat, bet in enumerate((10, 5, 0, 0)):
        r.act(seat, A(f"piao {bet}"))
    assert r.phase is Phase.TURN and r.options.piao == (10, 5, 0, 0)


def test_d42_escape_pays_each_opponent_fifty_bases_and_ends_the_hand():
    """D42: the leaver pays 50 × 底注 to each of the others; fees on positive nets (D45)."""
    r = Round("baishan_platform", seed=8, options={"piao": [0, 0, 0, 0]})
    r.escape(2)
    assert r.over and r.settlement is not None
    assert r.settlement["deltas"] == [50, 50, -150, 50]
    assert r.settlement["fees"] == [1, 1, 0, 1]  # floor(50 × 3%) in the free room


def test_d12_baicheng_dealer_declares_at_most_one_kong_before_the_first_discard():
    """D12: the dealer's first turn allows one kong action; the rest wait."""
    hands = [
        "1111m2222m345p67sC",
        "3m4m5m6m7m8m9m1p2p6p7p8p9p",
        "3m4m5m6m7m8m9m1p2p6p7p8p9p",
        "1s2s3s4s5s8s9s1s2s3s4s5sF",
    ]
    r = scripted("baicheng", hands, tail="2s")
    assert {A("angang 1m"), A("angang 2m")} <= set(r.legal_actions(0))
    r.act(0, A("angang 1m"))
    assert r.drawn == parse_tiles("2s")[0]
    legal = r.legal_actions(0)
    assert A("angang 2m") not in legal and A("discard C") in legal


def test_d29_treasure_change_chain():
    """D29: 换宝 when the face's remaining copies are all visible, repeated at once."""
    hands = [
        "9m1m2m3m4p5p6p7s8s9sCFP1p",
        "9m9m3s2m4m6p8p1s4s5s7s2p3p",
        "3s3s5m6m7p8p4s6s2p1m9p7m8m",
        "4m5m6m7m8p9p1s2s6s7s3p4p5s",
    ]
    r = scripted("baicheng", hands, tail="FFCC3s9m5p")
    assert [e.tile for e in events_of(r, ev.Treasure)] == ["3s"]
    r.act(0, A("discard 9m"))
    r.act(1, A("peng 9m"))
    r.act(1, A("discard 3s"))
    r.act(2, A("peng 3s"))  # 叉宝: a peng of the treasure face
    assert [e.tile for e in events_of(r, ev.Treasure)] == ["3s", "9m", "5p"]
    assert r.treasure == parse_tiles("5p")[0]
    assert r.melds[2][0].treasure  # scored as a 明杠 at settlement


FENZHANG_HANDS = [
    "2m3m4m5m6m2p3p4p5p6p2s3s4sC",
    "7m9m1p2p3p7s8s9s1s1s1sCC",  # waits 8m (夹), pung 111s, 么九
    "2m3m4m5m6m2p3p4p5p6p2s3s4s",
    "2m3m4m5m6m2p3p4p5p6p5s6s7s",
]


def test_d30_fenzhang_tile_completes_a_win():
    """D30: the last four live tiles go one to each seat; a 分张 tile may win the hand."""
    # tail: t1..t4 reserve, t5 = 1s (its other copies held by S), t6..t9 = the 分张 tiles.
    r = scripted("baicheng", FENZHANG_HANDS, tail="FFPP1s9p8m7p9s")
    play_on(
        r,
        lambda r: r.phase is Phase.FENZHANG,
        choose=lambda r, s, legal: A("discard C") if s == 0 and not r.rivers[0] else None,
    )
    # 58 normal draws empty the live wall down to four; W drew last, so N splits first.
    assert events_of(r, ev.Fenzhang) == [ev.Fenzhang(order=(3, 0, 1, 2))]
    # N and E cannot win on their tiles; S is asked about its 8m.
    assert r.phase is Phase.FENZHANG and r.pending() == [1]
    assert r.drawn == parse_tiles("8m")[0] and A("hu") in r.legal_actions(1)
    r.act(1, A("hu"))
    (win,) = events_of(r, ev.Win)
    assert (win.seat, win.by) == (1, "fenzhang")
    assert "夹胡" in win.fans


Prompts = list[tuple[Phase, tuple[int, ...]]]


def fenzhang_prompts(
    hands: list[str], tail: str, ask_all: bool
) -> tuple[Round, Prompts, list[tuple[int, bool]]]:
    """A hand played to its end, every win passed: the public face of each decision point
    (phase and seats asked), and each 分张 prompt's seat and whether it offered a win."""
    r = scripted("baicheng", hands, tail=tail, ask_all=ask_all)
    seen: Prompts = []
    offered: list[tuple[int, bool]] = []

    def note(r: Round, seat: int, legal: list[Action]) -> None:
        seen.append((r.phase, tuple(r.pending())))
        if r.phase is Phase.FENZHANG:
            offered.append((seat, A("hu") in legal))

    play_on(r, lambda r: False, choose=lambda r, s, legal: note(r, s, legal))
    assert r.over and r.settlement["end"] == "draw"
    return r, seen, offered


def test_d30_with_ask_all_every_fenzhang_draw_asks_its_drawer_so_being_asked_tells_nothing():
    """Two deals that differ only in hidden tiles — S's 分张 tile 8m wins, or a 2m that
    does not (the 8m in W's hand instead) — ask the same seats at every decision point
    with ``ask_all``, and show the same public events; without it only the winnable draw
    asks its drawer (issue 15: being asked told the table that S could win)."""
    other = list(FENZHANG_HANDS)
    other[2] = other[2].replace("2m", "8m", 1)
    for ask_all in (True, False):
        a, seen_a, offered_a = fenzhang_prompts(FENZHANG_HANDS, "FFPP1s9p8m7p9s", ask_all)
        b, seen_b, offered_b = fenzhang_prompts(other, "FFPP1s9p2m7p9s", ask_all)
        assert (1, True) in offered_a and not any(hu for _, hu in offered_b)
        assert before_reveal(a.events_for(None)) == before_reveal(b.events_for(None))
        if ask_all:
            assert seen_a == seen_b and [s for s, _ in offered_a] == [3, 0, 1, 2]
        else:
            assert seen_a != seen_b and offered_a == [(1, True)] and offered_b == []


def before_reveal(events: list[ev.Event]) -> list[ev.Event]:
    return events[: next(i for i, e in enumerate(events) if type(e) is ev.Reveal)]


def test_fenzhang_without_a_win_is_a_drawn_hand_and_the_dealer_stays():
    """§2.11 荒牌 after 分张: no win payment; D11 the dealer keeps the deal."""
    from fangcheng.engine.match import next_dealer

    r = scripted("baicheng", FENZHANG_HANDS, tail="FFPP1s9p7p7p9s")
    play_on(
        r,
        lambda r: False,
        choose=lambda r, s, legal: A("discard C") if s == 0 and not r.rivers[0] else None,
    )
    assert r.over and r.settlement["end"] == "draw" and not events_of(r, ev.Win)
    assert next_dealer(r.rules, r) == 0


def test_kong_replacement_win_is_a_kong_bloom():
    """§1.8, D69: a win on one's own replacement tile scores 杠后开花 (baishan, 2)."""
    hands = [
        "1m1m1m4p5p6p7m8m9m3p6s6s6s6s",
        "2m3m4m5m6m2p3p4p5p6p2s3s4s",
        "2m3m4m5m6m2p3p4p5p6p2s3s4s",
        "2m3m4m5m6m2p7p8p9p7p2s3s4s",
    ]
    r = scripted("baishan", hands, tail="3p")
    r.act(0, A("angang 6s"))
    assert r.after_kong and A("hu") in r.legal_actions(0)
    r.act(0, A("hu"))
    (win,) = events_of(r, ev.Win)
    assert {"杠后开花", "自摸", "坐庄"} <= set(win.fans)
    kong = [i for i in r.settlement["items"] if "杠" in i["reason"]]
    assert kong and kong[0]["deltas"] == [12, -4, -4, -4]  # D61: 1 × 暗 2 × dealer 2


def test_d13_rob_peng_of_a_dragon_added_to_a_xuanfeng():
    """D13 抢碰: a seat holding a pair of the added dragon may peng it; the addition is void."""
    hands = [
        "1m2m3m4m5m6m7m8m9m1p2p3p4p5p",
        "CFP1s2s3s4s5s6s7s8s9s9p",
        "CC1m1m2p2p5s5s7m7m8p8p9s",
        "2m3m4m5m6m7m1p2p3p6p7p8p9m",
    ]
    r = scripted("baicheng", hands, draws="C")
    r.act(0, A("discard 5p"))
    assert r.turn == 1 and A("xuanfeng") in r.legal_actions(1)
    r.act(1, A("xuanfeng"))  # D21: laid, no replacement; the drawn C may be added
    assert A("add C") in r.legal_actions(1)
    r.act(1, A("add C"))
    assert r.phase is Phase.ROB and r.legal_actions(2) == [A("peng C"), A("pass")]
    r.act(2, A("peng C"))
    assert [m.kind.value for m in r.melds[1]] == ["xuanfeng"] and len(r.melds[1][0].tiles) == 3
    assert r.melds[2][0].kind.value == "peng" and r.melds[2][0].source == 1
    assert r.phase is Phase.TURN and r.turn == 2 and r.drawn is None


def test_d69_kong_after_discard_is_paid_by_the_konger():
    """D69 杠后炮 (baishan, 2, payer side): the discard right after one's replacement."""
    hands = [
        "7p1p2p3p4m5m6m9p9p1s2s3sCF",
        "7p7p7p2m3m4m5s6s7s8s8sES",
        "N1m1m1m2p3p4p5s6s7s7m8m9m",
        "4s4s9s9s5p5p6m6m3m8pWP2s",
    ]
    r = scripted("baishan", hands, tail="N")
    r.act(0, A("discard 7p"))
    r.act(1, A("gang 7p"))
    assert r.drawn == parse_tiles("N")[0] and r.after_kong
    r.act(1, A("discard N"))
    assert A("hu") in r.legal_actions(2)
    r.act(2, A("hu"))
    # W (closed) wins: 立门 1. E: +坐庄 +立门 = 3 → 8; S: +点炮 +杠后炮 2 = 4 → 16;
    # N: +立门 = 2 → 4. S's 直杠 (D61): the dealer pays 2, the others 1.
    assert r.settlement["deltas"] == [-10, -12, 27, -5]


SICHUAN_HANDS = [
    "2m2m2m7m8m9m1p2p3p4p6p9m9m1s",  # E (缺 s): waits 5p once the 1s goes
    "1m3m5m2s4s7s8s3s4m6m5s1s8m",  # S (缺 p)
    "3p3p7p7p8p8p2s2s6s6s9s9s5p",  # W (缺 m): seven pairs waiting 5p
    "5p1p3p5s7s3m4m6m7m4s8s9p5m",  # N (缺 m): still holds 万 — a 花猪 at the end
]
SICHUAN_QUE = {"que": ["s", "p", "m", "m"]}


def test_one_discard_many_winners_then_bloody_play_to_the_wall_and_flower_pig():
    """§4.7 一炮多响, D53 血战 continuation, D55 查花猪 (winners receive), D47 next dealer."""
    from fangcheng.engine.match import next_dealer

    r = scripted("sichuan", SICHUAN_HANDS, draws="9p1m2p", options=SICHUAN_QUE)
    r.act(0, A("discard 1s"))
    r.act(1, A("discard 9p"))
    r.act(2, A("discard 1m"))
    r.act(3, A("discard 5p"))
    assert r.pending() == [0, 2]
    r.act(0, A("hu"))
    r.act(2, A("hu"))
    wins = events_of(r, ev.Win)
    assert [(w.seat, w.deltas) for w in wins] == [(0, (1, 0, 0, -1)), (2, (0, 0, 4, -4))]
    assert r.first_multi_source == 3 and not r.over
    # Play continues from W's 下家; winners draw and must throw the drawn tile.
    assert r.turn == 3
    play_on(r, lambda r: r.turn == 0 and r.phase is Phase.TURN)
    assert r.legal_actions(0)[-1] == Action(Act.DISCARD, r.drawn)
    assert all(a.kind in (Act.DISCARD, Act.AN_GANG, Act.BU_GANG) for a in r.legal_actions(0))
    play_on(r, lambda r: False)
    assert r.settlement["end"] == "draw"
    pig = [i for i in r.settlement["items"] if i["reason"].startswith("查花猪")]
    assert pig and pig[0]["deltas"][3] == -48 and pig[0]["deltas"][0] == 16  # a winner gets 16
    assert sum(r.settlement["deltas"]) == 0
    assert next_dealer(r.rules, r) == 3  # the 一炮多响 discarder deals next


def test_three_winners_end_a_bloody_hand():
    """D53: the hand ends once three players have won (here on one 一炮多响 discard)."""
    hands = [
        "5p1m3m5m2p8p9p3s7s4m6m3m7m5m",
        "2m2m2m7m8m9m1p2p3p4p6p9m9m",  # S (缺 s): 222m 789m 99m 123p + 46p
        "3p3p7p7p8p8p2s2s6s6s9s9s5p",  # W (缺 m): seven pairs
        "4p6p1s1s1s5s6s7s2s3s4s8s8s",  # N (缺 m): 46p + 111s 567s 234s 88s
    ]
    r = scripted("sichuan", hands, options={"que": ["p", "s", "m", "m"]})
    r.act(0, A("discard 5p"))
    assert r.pending() == [1, 2, 3]
    for seat in (1, 2, 3):
        r.act(seat, A("hu"))
    assert r.over and r.won == [1, 2, 3]
    assert r.settlement["deltas"] == [-6, 1, 4, 1]  # 平胡 1, 七对 2 fans → 4, 平胡 1


def test_d56_passing_a_win_in_the_last_four_tiles_makes_a_flower_pig():
    """D56 / §4.10 item 4: N passes its self-drawn win on the last tile and pays as 花猪."""
    hands = [
        "1m2m3m4m5m6m7m8m9m2s3s4s6s7s",
        "1m2m3m4m5m6m7m8m9m2p2p3p3p",
        "4p4p5p6p7p8p8s9s9s2s3s4s6s",
        "1p2p3p4p5p6p7p8p9p1s1s1s5s",  # N (缺 m): waits 5s, the wall's last tile
    ]
    r = scripted("sichuan", hands, tail="5s", options={"que": ["p", "s", "m", "m"]})
    play_on(r, lambda r: False)
    assert 3 in r.flower_pigs
    pig = next(i for i in r.settlement["items"] if i["reason"].startswith("查花猪"))
    assert pig["deltas"][3] < 0


def test_void_suit_choices_stay_hidden_until_all_four_are_made():
    """§4.4: the four 定缺 choices are revealed together."""
    r = Round("sichuan", seed=12)
    assert r.phase is Phase.QUE and r.pending() == [0, 1, 2, 3]
    r.act(0, A("que m"))
    r.act(1, A("que p"))
    assert all(view.que is None for view in r.observe(2).seats)
    assert all(view.que is None for view in r.observe(0).seats)
    r.act(2, A("que s"))
    r.act(3, A("que m"))
    assert [view.que for view in r.observe(1).seats] == [0, 1, 2, 0]
    assert r.phase is Phase.TURN


def test_another_seats_concealed_kong_is_face_down_until_the_end():
    """Seed 002: 暗杠应扣放…在一家和牌或荒牌时，必须亮明."""
    hands = [
        "1m1m1m4p5p6p7m8m9m3p6s6s6s6s",
        "2m3m4m5m6m2p3p4p5p6p2s3s4s",
        "2m3m4m5m6m2p3p4p5p6p2s3s4s",
        "2m3m4m5m6m2p7p8p9p7p2s3s4s",
    ]
    r = scripted("baishan", hands, tail="9s")
    r.act(0, A("angang 6s"))
    mine, theirs = r.observe(0).seats[0], r.observe(1).seats[0]
    assert len(mine.melds) == 1 and mine.hidden_kongs == 0
    assert theirs.melds == () and theirs.hidden_kongs == 1
    assert "[####]" in r.observe(1).text() and "6666s" not in r.observe(1).text()


def sichuan_win_on_the_fourth_discard() -> Round:
    """Each seat discards once; seat 0 claims a win on 5p, which seat 2 may win on too."""
    r = scripted("sichuan", SICHUAN_HANDS, draws="9p1m2p", options=SICHUAN_QUE)
    for seat, tile in enumerate(("1s", "9p", "1m", "5p")):
        r.act(seat, A(f"discard {tile}"))
    r.act(0, A("hu"))
    return r


def test_a_sichuan_winner_lays_the_hand_face_up():
    """§4.8 item 2: the winner lays the hand face up (亮倒); other hands stay hidden."""
    r = sichuan_win_on_the_fourth_discard()
    r.act(2, A("pass"))
    view = r.observe(1)
    assert view.seats[0].revealed == r.revealed(0)
    assert sum(view.seats[0].revealed) == 14
    assert view.seats[2].revealed is None and view.seats[3].revealed is None
    assert view.base == 1


def test_tiles_are_conserved_through_a_multiple_win():
    r = sichuan_win_on_the_fourth_discard()
    r.act(2, A("hu"))
    assert tiles_in_play(r) == Counter(SICHUAN.tiles)


def test_d7_the_face_just_chowed_may_be_discarded_at_once():
    """D7 / §1.6 item 6: 允许同时打出吃进的牌 — a chow may be followed by the same face."""
    hands = [
        "3m1p2p3p4p5p6p7p8p9pESWN",
        "3m4m5m1s2s3s7s8s9sCCFF",
        "2m6m7m8m1s2s3s4s5s6s7sPP",
        "2m5m6m7m8m9m4p5p6p7p8p9pF",
    ]
    r = scripted("baishan", hands)
    r.act(0, A("discard 3m"))
    assert A("chi 345m") in r.legal_actions(1)
    r.act(1, A("chi 345m"))
    assert A("discard 3m") in r.legal_actions(1)
    assert not any(a.kind in (Act.AN_GANG, Act.BU_GANG) for a in r.legal_actions(1))


def test_d49_void_suit_tiles_need_not_be_discarded_first():
    """D49: no forced discard order — a seat holding its 缺 suit may discard others."""
    r = Round("sichuan", seed=3, options={"que": ["m", "m", "m", "m"]})
    hand = r.hands[r.turn]
    assert any(hand[t] for t in range(9))  # the dealer holds 万, its 缺 suit
    discards = {a.tile for a in r.legal_actions(r.turn) if a.kind is Act.DISCARD}
    assert any(t is not None and t >= 9 for t in discards)
    assert discards == {t for t in range(27) if hand[t]}


def test_ask_all_mode_asks_every_live_seat_and_replays():
    """Hidden information: with ``ask_all`` who is asked in a claim window says nothing."""
    r = scripted("baishan", BAISHAN_DOUBLE_WAIT)
    r.ask_all = True
    r.act(0, A("discard 6m"))
    assert r.pending() == [1, 2, 3] and r.legal_actions(2) == [A("pass")]
    for seed in range(5):
        played = Round("baicheng", seed=seed, ask_all=True)
        rng = random.Random(seed)
        while not played.over:
            for seat in played.pending():
                played.act(seat, rng.choice(played.legal_actions(seat)))
        record = json.loads(json.dumps(record_of(played)))
        assert record["ask_all"] is True and replay(record).divergence is None


def test_d56_a_flagged_seat_may_not_win_later_in_the_hand():
    """§4.10 item 4: 较后四张牌有胡必须胡 — after passing, no later win is offered."""
    hands = [
        "1m2m3m4m5m6m7m8m9m2s3s4s6s7s",
        "1m2m3m4m5m6m7m8m9m2p2p3p3p",
        "4p4p5p6p7p8p8s9s9s2s3s4s6s",
        "1p2p3p4p5p6p7p8p9p1s1s1s5s",  # N (缺 m): waits 5s
    ]
    # E draws the 4th-last tile (a 5s, in the zone, D79) and throws it; N draws the last.
    r = scripted("sichuan", hands, tail="5s1p2p5s1p", options={"que": ["p", "s", "m", "m"]})
    play_on(r, lambda r: r.phase is Phase.CLAIM and len(r.wall) == 3)
    assert r.claim == (0, parse_tiles("5s")[0]) and A("hu") in r.legal_actions(3)
    r.act(3, A("pass"))
    assert 3 in r.flower_pigs
    play_on(r, lambda r: r.turn == 3 and len(r.wall) == 0 and r.phase is Phase.TURN)
    assert r.drawn == parse_tiles("5s")[0] and A("hu") not in r.legal_actions(3)


def test_d93_passing_a_robbed_kong_win_in_the_last_four_tiles_makes_a_flower_pig():
    """D93 / §4.10 item 4: 有胡必胡 of every kind of win. N waits on 5p and passes it twice:
    on the dealer's opening discard (outside the zone: nothing) and when S adds the fourth
    5p to its pung on the 4th-last draw (a robbable 补杠 in the zone: 花猪)."""
    hands = [
        "5p1m1m1m2m3m4m6m7m8m9m9m1p2p",  # E (缺 s) throws 5p at once
        "5p5p1p1p2s3s4s6s7s8s9s9s9s",  # S (缺 m) pungs it
        "3m4m5m6m8m9m1s1s5s5s8s8s2s",  # W (缺 p)
        "4p6p2p2p2p7p8p9p3s3s3s7s7s",  # N (缺 m): 46p 222p 789p 333s 77s, waits 5p
    ]
    # After S's pung the draws go W, N, E, S: S makes the 4th-last draw, the last 5p.
    r = scripted("sichuan", hands, tail="6s5s4s5p", options={"que": ["s", "m", "p", "m"]})
    r.act(0, A("discard 5p"))
    assert A("hu") in r.legal_actions(3)
    r.act(3, A("pass"))
    r.act(1, A("peng 5p"))
    assert 3 not in r.flower_pigs  # a win passed before the zone bars nothing (D8)

    def add_the_fourth(r: Round, seat: int, legal: list[Action]) -> Action | None:
        return A("bugang 5p") if seat == 1 and A("bugang 5p") in legal else None

    play_on(r, lambda r: r.phase is Phase.ROB, add_the_fourth)
    assert len(r.wall) == 3 and r.pending() == [3] and A("hu") in r.legal_actions(3)
    assert r.observe(3).must_win
    r.act(3, A("pass"))
    assert 3 in r.flower_pigs and ev.FlowerPig(seat=3) in r.events


# A dealer dealt a complete hand (all pungs, no 缺 suit: s in sichuan), and three others.
COMPLETE_DEAL = [
    "1m1m1m3m3m3m5p5p5p7p7p7p9p9p",
    "2m2m4m4m6m6m8m8m1s1s3s3s5s",
    "2p2p4p4p6p6p8p8p2s2s4s4s6s",
    "5m5m7m7m9m9m1p1p3p3p7s7s8s",
]


@pytest.mark.parametrize("rules", ["sichuan", "baishan", "baishan_platform"])
def test_d76_a_heavenly_hand_is_won_through_the_engine(rules: str) -> None:
    """§4.6 / D76: the dealer wins on its dealt fourteen (no drawn tile: the engine picks
    the tile that stands for the last). The win takes one tile from the hand, no more:
    tiles are conserved and the other hands go on (sichuan) or the hand ends."""
    options: dict[str, object] = {"que": ["s", "m", "m", "p"]} if rules == "sichuan" else {}
    r = scripted(rules, COMPLETE_DEAL, options=options)
    if rules == "baishan_platform":  # 漂 first, then the dealer's first turn
        for seat in range(4):
            r.act(seat, A("piao 0"))
    assert r.turn == 0 and r.drawn is None and A("hu") in r.legal_actions(0)
    r.act(0, A("hu"))
    assert r.won[:1] == [0] and sum(r.hands[0]) == 13
    assert tiles_in_play(r) == Counter(r.rules.tiles)
    (win,) = r.win_scores
    assert win.deltas[0] > 0 and sum(win.deltas) == 0
    if rules == "sichuan":  # 对对胡 1 + 自摸 1 + 天胡 at the cap 4 → 6 fans, capped at 4: 16
        assert [f["name"] for f in win.to_json()["fans"]] == ["对对胡", "自摸", "天胡"]
        assert win.deltas == (48, -16, -16, -16) and not r.over
    else:
        assert r.over and r.settlement is not None


def test_d76_an_earthly_hand_is_won_through_the_engine() -> None:
    """§4.6 / D76: S wins on its first draw, nobody having called: 地胡 at the cap."""
    hands = [
        "1m2m3m5m6m7m9m9m2p2p4p4p6p8s",  # E (缺 s) throws 8s
        "2m2m2m4m4m4m6p6p6p8p8p9p9p",  # S (缺 s): waits 8p 9p
        "2s3s4s5s6s7s1p3p5p7p1s1s9s",  # W (缺 m)
        "5m5m7m7m8m8m1p1p3p3p7s7s8s",  # N (缺 p)
    ]
    r = scripted("sichuan", hands, draws="9p", options={"que": ["s", "s", "m", "p"]})
    r.act(0, A("discard 8s"))
    assert r.turn == 1 and r.drawn == parse_tiles("9p")[0] and A("hu") in r.legal_actions(1)
    r.act(1, A("hu"))
    (win,) = r.win_scores
    assert [f["name"] for f in win.to_json()["fans"]] == ["对对胡", "自摸", "地胡"]
    assert win.deltas == (-16, 48, -16, -16)
    assert tiles_in_play(r) == Counter(r.rules.tiles)
