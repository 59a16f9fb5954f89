"""`load_situation`: every malformed or impossible input names its field and problem."""

from __future__ import annotations

import copy
import importlib.util
import json
import random
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import fangcheng.engine.round as round_module
from fangcheng.engine.round import Round
from fangcheng.players.bots import make_bot
from fangcheng.protocol.observation import Phase
from fangcheng.scoring.scorer import Score, score
from fangcheng.scoring.situation import (
    Situation,
    SituationError,
    WinBy,
    load_situation,
    read_situation,
    situation_json,
)
from fangcheng.tiles.melds import MeldKind
from scripting import A, play_on, scripted

B1 = json.loads((Path(__file__).parent / "cases" / "baicheng-B1.json").read_text("utf-8"))
B1.pop("expect")
P1 = json.loads((Path(__file__).parent / "cases" / "baishan_platform-P1.json").read_text("utf-8"))
P1.pop("expect")
S1 = json.loads((Path(__file__).parent / "cases" / "sichuan-S1.json").read_text("utf-8"))
S1.pop("expect")


def changed(base: dict[str, Any], path: str, value: object) -> dict[str, Any]:
    """A deep copy of ``base`` with the dotted ``path`` set (``seats.1.melds.0.from``);
    the value ``...`` deletes the key."""
    data = copy.deepcopy(base)
    *parents, last = path.split(".")
    node: Any = data
    for key in parents:
        node = node[int(key)] if isinstance(node, list) else node[key]
    if value is ...:
        del node[last]
    elif isinstance(node, list):
        node[int(last)] = value
    else:
        node[last] = value
    return data


def test_b1_loads_with_ids_and_notation_decoded():
    s = load_situation(B1)
    assert s.rules.name == "baicheng" and s.win_by is WinBy.DISCARD and s.source == 2
    assert s.seats[1].melds[0].kind is MeldKind.PENG and s.seats[1].melds[0].source == 3
    assert s.closed == (True, False, False, False)


@pytest.mark.parametrize(
    ("path", "value", "message"),
    [
        ("colour", "red", "colour: unknown key"),
        ("rules", ..., "rules: missing"),
        ("rules", "riichi", "rules: unknown rule set 'riichi'"),
        ("base", 0, r"base: 0 is out of range"),
        ("base", "1", "base: expected an integer, got str"),
        ("dealer", 4, r"dealer: 4 is out of range \(0..3\)"),
        ("winner", True, "winner: expected an integer, got bool"),
        ("win_tile", "8m9m", "win_tile: expected exactly one tile"),
        ("win_tile", "8x", "win_tile: digits '8' at position 0 of '8x'"),
        ("win_tile", "E", "win_tile: E is not a tile of baicheng"),
        ("win_by", "tsumo", "win_by: 'tsumo'; valid: discard, self_draw"),
        ("from", ..., "from: a discard win needs the seat it came from"),
        ("from", 1, "from: the winner cannot win on its own discard"),
        ("after_kong", "no", "after_kong: expected true or false"),
        ("seats", [], "seats: expected four seats, got 0"),
        ("seats.0", [], "seats\\[0\\]: expected an object, got list"),
        ("seats.0.hand", "1m", r"seats\[0\].hand: unknown key"),
        ("seats.0.concealed", 5, r"seats\[0\].concealed: expected tile notation"),
        ("seats.1.melds.0.kind", "pong", r"seats\[1\].melds\[0\].kind: 'pong' is not a meld kind"),
        ("seats.1.melds.0.tiles", "99p", r"seats\[1\].melds\[0\].tiles: a peng is 3 identical"),
        ("seats.1.melds.0.from", ..., r"seats\[1\].melds\[0\].from: a peng needs the seat"),
        ("seats.1.melds.0.from", 1, r"seats\[1\].melds\[0\].from: seat 1 cannot call its own"),
        ("seats.0.concealed", "3458m16788p149s", r"seats\[0\].concealed: 12 concealed tiles"),
        ("seats.2.concealed", "28m11238p56sCC", r"seats\[2\].concealed: 11 concealed tiles"),
        ("treasure", "6m", r"seats: 5 copies of 6m"),
        ("declared_ready", [False, True, False, False], "declared_ready: baicheng has no 报听"),
        ("won", [0], "won: baicheng has one winner per hand"),
        ("first_draw", True, "first_draw: 天胡 / 地胡 are self-draws"),
        ("fenzhang_drawn", [0], "fenzhang_drawn: only during 分张: a fenzhang or treasure win"),
        ("options", {"room": "free"}, "options: unknown option 'room' for baicheng"),
    ],
)
def test_baicheng_input_errors_name_the_field(path: str, value: object, message: str):
    with pytest.raises(SituationError, match=message):
        load_situation(changed(B1, path, value))


def test_a_bu_gang_always_carries_from():
    """The seat whose discard made the peng that the 补杠 extends (issue 14 item 6)."""
    data = changed(B1, "seats.1.melds.0", {"kind": "bu_gang", "tiles": "9999p"})
    with pytest.raises(SituationError) as caught:
        load_situation(data)
    assert str(caught.value) == (
        "seats[1].melds[0].from: a bu_gang always carries 'from': the seat whose discard"
        " made the peng it extends"
    )
    kong = load_situation(changed(data, "seats.1.melds.0.from", 3)).seats[1].melds[0]
    assert (kong.kind, kong.source) == (MeldKind.BU_GANG, 3)


def test_a_fifth_copy_across_seats_is_an_error():
    data = changed(B1, "seats.0.concealed", "3456m16788p149sC")  # 8m → a fifth 6m
    with pytest.raises(SituationError, match="5 copies of 6m across the seats"):
        load_situation(data)


def test_a_chi_must_come_from_the_shangjia_and_be_a_run():
    chi = {"kind": "chi", "tiles": "3p4p5p", "from": 1}
    data = changed(B1, "seats.3.melds.0", chi)  # seat 3's 上家 is seat 2
    with pytest.raises(SituationError, match=r"seats\[3\].melds\[0\].from: a chi is called from"):
        load_situation(data)
    bad = changed(B1, "seats.3.melds.0", {"kind": "chi", "tiles": "3p5p7p", "from": 2})
    with pytest.raises(SituationError, match="three consecutive tiles"):
        load_situation(bad)
    wrap = changed(B1, "seats.3.melds.0", {"kind": "chi", "tiles": "8p9p1s", "from": 2})
    with pytest.raises(SituationError, match="three consecutive tiles"):
        load_situation(wrap)


def test_self_draw_has_no_from_and_treasure_win_is_on_the_treasure():
    data = changed(B1, "win_by", "self_draw")
    with pytest.raises(SituationError, match="from: a self_draw win has no 'from'"):
        load_situation(data)
    assert load_situation(changed(data, "from", None)).source is None
    data = changed(changed(B1, "win_by", "treasure"), "from", ...)
    with pytest.raises(SituationError, match="win_tile: a treasure win is on the treasure face"):
        load_situation(data)


def test_d69_a_robbed_kong_or_fenzhang_tile_is_never_after_a_kong():
    data = changed(changed(B1, "win_by", "robbed_kong"), "after_kong", True)
    with pytest.raises(SituationError, match="D69"):
        load_situation(data)


def test_d9_only_an_added_kong_can_be_robbed():
    """D9: 抢杠 needs the robbed seat's 碰 of the winning face (a 补杠 in the making)."""
    with pytest.raises(SituationError, match="from: seat 2 has no peng of 8m"):
        load_situation(changed(B1, "win_by", "robbed_kong"))


def test_melds_of_a_kind_the_rule_set_lacks():
    xuanfeng = {"kind": "xuanfeng", "tiles": "CFP"}
    with pytest.raises(SituationError, match="baishan_platform has no 旋风杠"):
        load_situation(changed(P1, "seats.1.melds.0", xuanfeng))
    with pytest.raises(SituationError, match="C is not a tile of sichuan"):
        load_situation(changed(S1, "seats.1.melds.0", xuanfeng))
    chi = {"kind": "chi", "tiles": "4m5m6m", "from": 0}
    with pytest.raises(SituationError, match="sichuan has no chi"):
        load_situation(changed(S1, "seats.1.melds.0", chi))
    odd = {"kind": "xuanfeng", "tiles": "CFC"}
    with pytest.raises(SituationError, match="C F P plus any added dragons"):
        load_situation(changed(B1, "seats.1.melds.0", odd))
    with pytest.raises(SituationError, match="treasure: 叉宝 is a peng"):
        load_situation(changed(P1, "seats.1.melds.0.treasure", True))


def test_d48_no_pung_of_the_que_suit():
    """D48: a seat cannot hold a 碰 or kong of its own 缺 suit."""
    data = changed(S1, "options", {"que": ["s", "m", "m", "p"]})
    with pytest.raises(SituationError, match=r"seats\[1\].melds\[0\]: no peng or kong"):
        load_situation(data)


def test_honours_are_not_sichuan_tiles_and_sichuan_has_no_treasure():
    with pytest.raises(SituationError, match="E is not a tile of sichuan"):
        load_situation(changed(S1, "seats.0.concealed", "2234678m11567pE"))
    with pytest.raises(SituationError, match="treasure: sichuan has no treasure"):
        load_situation(changed(S1, "treasure", "5m"))


def test_d32_declared_ready_is_checked_and_the_platform_options():
    """D32: a declared seat must wait on exactly one face; room values are checked."""
    assert load_situation(P1).declared_ready == (False, True, False, True)
    with pytest.raises(SituationError, match=r"declared_ready\[0\].*D32"):
        load_situation(changed(P1, "declared_ready", [True, True, False, True]))
    with pytest.raises(SituationError, match="options: option 'room' is 'vip'"):
        load_situation(changed(P1, "options", {"room": "vip"}))


def test_sichuan_won_seats():
    """D75: `won` seats pay nothing for a self-draw; the winner cannot be one; at most two
    before a self-draw."""
    with pytest.raises(SituationError, match="won: the winner cannot have won already"):
        load_situation(changed(S1, "won", [1]))
    self_draw = changed(changed(S1, "win_by", "self_draw"), "from", ...)
    with pytest.raises(SituationError, match="won: the hand ends at three winners"):
        load_situation(changed(self_draw, "won", [0, 2, 3]))
    with pytest.raises(SituationError, match=r"won\[1\]: expected an integer"):
        load_situation(changed(S1, "won", [0, "2"]))
    assert load_situation(changed(S1, "won", [0, 3])).won == frozenset({0, 3})


def test_d80_a_fourth_winner_on_the_discard_of_the_third_is_a_valid_situation():
    """一炮多响 on a winner's discard after two earlier wins: both claimants win (D80), so
    the second of them wins with three seats in `won`, the discarder among them."""
    assert load_situation(changed(S1, "won", [0, 2, 3])).won == frozenset({0, 2, 3})


def test_not_an_object():
    with pytest.raises(SituationError, match="situation: expected an object"):
        load_situation([B1])


def test_the_published_json_schemas_are_the_generated_ones():
    """docs/schemas/ holds what tools/gen_schemas.py writes from the shapes (regenerate
    it after changing a shape)."""
    root = Path(__file__).resolve().parent.parent
    spec = importlib.util.spec_from_file_location("gen_schemas", root / "tools" / "gen_schemas.py")
    assert spec is not None and spec.loader is not None
    generator = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(generator)
    rendered = generator.render()
    assert set(rendered) == {"situation.schema.json", "record.schema.json"}
    for name, text in rendered.items():
        assert (root / "docs" / "schemas" / name).read_text(encoding="utf-8") == text, name
    situation = json.loads(rendered["situation.schema.json"])["$defs"]["SituationInput"]
    assert situation["properties"]["dealer"]["maximum"] == 3
    assert situation["additionalProperties"] is False


@pytest.mark.parametrize("data", [B1, P1, S1], ids=["B1", "P1", "S1"])
def test_json_text_and_parsed_json_read_alike(data: dict[str, Any]):
    text = json.dumps(data, ensure_ascii=False)
    assert read_situation(text) == read_situation(text.encode()) == load_situation(data)
    with pytest.raises(SituationError, match="dealer: 9 is out of range") as caught:
        read_situation(text.replace('"dealer": 0', '"dealer": 9'))
    with pytest.raises(SituationError, match=re.escape(str(caught.value))):
        load_situation(changed(data, "dealer", 9))


# --- after_kong needs the kong (D69) --------------------------------------------------


def test_d69_after_kong_needs_a_kong_of_the_winner_or_of_the_discarder():
    """A replacement win needs the winner's kong, 杠上炮 the discarder's."""
    self_draw = changed(changed(S1, "win_by", "self_draw"), "from", ...)
    with pytest.raises(SituationError, match=r"^after_kong: the winner, seat 1, has no kong meld"):
        load_situation(changed(self_draw, "after_kong", True))
    with pytest.raises(SituationError, match=r"^after_kong: the discarder, seat 2, has no kong"):
        load_situation(changed(S1, "after_kong", True))
    konged = changed(S1, "seats.0.concealed", "2234678m115689p")  # its 7p for the kong's
    konged = changed(konged, "seats.2", {"concealed": "2459p113469s", "melds": [AN_GANG_7P]})
    assert load_situation(changed(konged, "after_kong", True)).after_kong


AN_GANG_7P = {"kind": "an_gang", "tiles": "7777p"}


@pytest.mark.parametrize(("dragons", "counts"), [("CFP", False), ("CFPP", True)])
def test_d21_a_xuanfeng_is_a_kong_for_after_kong_once_a_dragon_is_added(dragons, counts):
    """Laying 中发白 draws no replacement (D21); adding a dragon to it does."""
    peng = B1["seats"][2]["melds"][0]
    seat = {"concealed": "11238p56s", "melds": [peng, {"kind": "xuanfeng", "tiles": dragons}]}
    data = changed(changed(B1, "seats.2", seat), "after_kong", True)
    if counts:
        assert load_situation(data).after_kong
    else:
        with pytest.raises(SituationError, match=r"^after_kong: the discarder, seat 2, has no"):
            load_situation(data)


# --- every win the engine books is a valid `score` input that scores the same ---------


def booked(play: Callable[[], list[Round]]) -> list[tuple[Situation, Score]]:
    """Every situation the engine scores while ``play`` runs, with its score."""
    found: list[tuple[Situation, Score]] = []

    def capture(situation: Situation) -> Score:
        result = score(situation)
        found.append((situation, result))
        return result

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(round_module, "score", capture)
        play()
    return found


def bot_hands(rules: str, hands: int) -> list[Round]:
    rounds = []
    for seed in range(hands):
        r = Round(rules, seed=seed, dealer=seed % 4, ask_all=seed % 2 == 1)
        bots = [make_bot("efficient", random.Random(seed * 4 + s)) for s in range(4)]
        while not r.over:
            for seat in r.pending():
                r.act(seat, bots[seat].act(r.observe(seat)))
        rounds.append(r)
    return rounds


def assert_scored_the_same(pairs: list[tuple[Situation, Score]]) -> None:
    assert pairs
    for situation, result in pairs:
        text = json.dumps(situation_json(situation), ensure_ascii=False)
        assert score(read_situation(text)).to_json() == result.to_json(), text


#: Hands per rule set: about a second each, with a few hundred wins (sichuan's include
#: fourth winners of a 一炮多响, D80).
BOT_HANDS = 250


@pytest.mark.parametrize("rules", ["baicheng", "baishan", "baishan_platform", "sichuan"])
def test_every_win_of_bot_hands_is_a_score_input_that_scores_the_same(rules):
    pairs = booked(lambda: bot_hands(rules, BOT_HANDS))
    assert sum(result.win for _, result in pairs) >= BOT_HANDS // 2
    if rules == "sichuan":  # D80: "the hand ends at three winners" refused these once
        assert any(len(situation.won) == 3 for situation, _ in pairs)
    assert_scored_the_same(pairs)


FENZHANG_HANDS = [  # seat 1 waits on 8m (夹胡); no other seat can win
    "2m3m4m5m6m2p3p4p5p6p2s3s4sC",
    "7m9m1p2p3p7s8s9s1s1s1sCC",
    "2m3m4m5m6m2p3p4p5p6p2s3s4s",
    "2m3m4m5m6m2p3p4p5p6p5s6s7s",
]


@pytest.mark.parametrize(
    ("tail", "by"),
    [("FFPP1s9p8m7p9s", WinBy.FENZHANG), ("FFPP9p7p9p8p9s", WinBy.TREASURE)],
    ids=["fenzhang", "treasure"],
)
def test_d30_a_win_on_a_fenzhang_draw_is_a_score_input_that_scores_the_same(tail, by):
    """Seats 3 and 0 keep their 分张 tiles; seat 1 wins on its own: on 8m, or by 摸宝 on
    the treasure face 9p (D68), with ``fenzhang_drawn`` naming the seats before it."""

    def play() -> list[Round]:
        r = scripted("baicheng", FENZHANG_HANDS, tail=tail)
        play_on(r, lambda r: r.phase is Phase.FENZHANG and r.pending() == [1])
        r.act(1, A("hu"))
        assert r.over and r.won == [1]
        return [r]

    pairs = booked(play)
    situation, _ = pairs[-1]
    assert (situation.win_by, situation.fenzhang_drawn) == (by, frozenset({3, 0}))
    assert_scored_the_same(pairs)
