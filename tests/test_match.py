"""Matches: the first dealer, who deals next, 圈 counting and running scores."""

from __future__ import annotations

import itertools
import random
from types import SimpleNamespace

import pytest

from fangcheng.engine import Round
from fangcheng.engine.match import Match, first_dealer, next_dealer
from fangcheng.rules.ruleset import BAICHENG, BAISHAN, BAISHAN_PLATFORM, SICHUAN


def ended(dealer: int, won: list[int], multi: int | None = None) -> SimpleNamespace:
    return SimpleNamespace(dealer=dealer, won=won, first_multi_source=multi)


def test_baicheng_first_dealer_is_east():
    """§2.2: 第一局由东风位为庄家."""
    assert {first_dealer(BAICHENG, random.Random(s)) for s in range(20)} == {0}


@pytest.mark.parametrize("rules", [BAISHAN, BAISHAN_PLATFORM, SICHUAN])
def test_d31_first_dealer_by_dice_is_seeded_and_spread(rules):
    """D31/§4.2: the highest throw deals; ties throw again; a seed fixes the result."""
    seen = {first_dealer(rules, random.Random(s)) for s in range(60)}
    assert seen == {0, 1, 2, 3}
    assert first_dealer(rules, random.Random(9)) == first_dealer(rules, random.Random(9))


def test_d11_baicheng_dealer_stays_on_a_win_and_on_a_drawn_hand():
    assert next_dealer(BAICHENG, ended(2, [2])) == 2
    assert next_dealer(BAICHENG, ended(2, [])) == 2  # D11
    assert next_dealer(BAICHENG, ended(2, [0])) == 3


@pytest.mark.parametrize("rules", [BAISHAN, BAISHAN_PLATFORM])
def test_d57_d31_baishan_deal_passes_unless_the_dealer_wins(rules):
    assert next_dealer(rules, ended(1, [1])) == 1
    assert next_dealer(rules, ended(1, [])) == 2  # D57 / D31: 庄不胡 includes a draw
    assert next_dealer(rules, ended(3, [2])) == 0


def test_d47_sichuan_first_winner_deals_or_the_discarder_of_a_multiple_win():
    assert next_dealer(SICHUAN, ended(0, [2, 3, 1])) == 2
    assert next_dealer(SICHUAN, ended(0, [1, 3], multi=2)) == 2
    assert next_dealer(SICHUAN, ended(3, [])) == 3


def play(match: Match, rng: random.Random, limit: int) -> list[Round]:
    """Play at most ``limit`` hands of the match at random: the hands played."""
    rounds = []
    while not match.over and len(rounds) < limit:
        r = match.new_round()
        while not r.over:
            for seat in r.pending():
                r.act(seat, rng.choice(r.legal_actions(seat)))
        match.finish(r)
        rounds.append(r)
    return rounds


@pytest.mark.parametrize("rules", ["baishan", "baishan_platform"])
def test_a_one_quan_match_of_random_play(rules):
    """A 圈 ends when the deal has passed four times; scores are the hands' totals."""
    match = Match(rules, seed=5, quan=1)
    rounds = play(match, random.Random(5), 60)
    assert match.over and match.passes == 4 and len(rounds) >= 4
    assert match.scores == [sum(r.settlement["total"][s] for r in rounds) for s in range(4)]
    with pytest.raises(ValueError, match="over"):
        match.new_round()


@pytest.mark.parametrize("rules", ["baicheng", "sichuan"])
def test_passes_count_only_real_changes_of_dealer(rules):
    match = Match(rules, seed=2, quan=1)
    dealers = [r.dealer for r in play(match, random.Random(2), 12)]
    changes = sum(a != b for a, b in itertools.pairwise(dealers))
    assert match.passes in (changes, changes + 1)
