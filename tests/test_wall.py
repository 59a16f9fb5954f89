"""The wall: linear model, dealing, baicheng's reserved tail (RULES.md §1.3-§1.5, §2.10)."""

from __future__ import annotations

import dataclasses
import random
from collections import Counter

import pytest
from hypothesis import given
from hypothesis import strategies as st

from fangcheng.engine.wall import Wall, deal_order, throw_break, wall_sides
from fangcheng.rules.ruleset import ALL_RULES, BAICHENG, BAISHAN, SICHUAN, Dice

RULES = list(ALL_RULES)
BAISHANS = [r for r in ALL_RULES if not r.treasure]


def test_deal_order_gives_blocks_of_four_then_the_jump():
    """§1.5: W[0..47] in blocks of four from the dealer, then dealer 2, then one each."""
    order = deal_order(2)
    assert order[:16] == [2] * 4 + [3] * 4 + [0] * 4 + [1] * 4
    assert order[48:] == [2, 2, 3, 0, 1]
    assert Counter(order) == {2: 14, 3: 13, 0: 13, 1: 13}


@pytest.mark.parametrize("rules", RULES, ids=lambda r: r.name)
@pytest.mark.parametrize("dealer", range(4))
def test_d5_deal_follows_the_linear_wall(rules, dealer):
    """D5: dealing reads the shuffled sequence in the canonical order."""
    wall = Wall.shuffled(rules, random.Random(7))
    hands = wall.deal(dealer)
    assert [len(h) for h in hands] == [14 if s == dealer else 13 for s in range(4)]
    assert hands[dealer][:4] == list(wall.tiles[:4])
    assert hands[dealer][-2:] == list(wall.tiles[48:50])
    assert hands[(dealer + 3) % 4][-1] == wall.tiles[52]


@pytest.mark.parametrize("rules", BAISHANS, ids=lambda r: r.name)
def test_d10_no_dead_wall_outside_baicheng(rules):
    """D10: every undealt tile can be drawn; replacements come off the tail."""
    wall = Wall.shuffled(rules, random.Random(3))
    assert len(wall) == len(rules.tiles) - 53
    assert wall.indicator is None
    assert wall.replacement() == wall.tiles[-1]
    assert wall.draw() == wall.tiles[53]


def test_d28_baicheng_reserve_indicator_and_live_deque():
    """D28: t1..t4 are the reserve, t5 the indicator, the rest (62 tiles) the live deque."""
    wall = Wall.shuffled(BAICHENG, random.Random(11))
    t = wall.tiles
    assert len(wall) == 120 - 53 - 5
    assert wall.indicator == t[120 - 5]
    assert [wall.replacement() for _ in range(4)] == [t[119], t[118], t[117], t[116]]
    # The reserve is spent: the next replacement is t6, under the indicator.
    assert wall.replacement() == t[114]
    assert wall.draw() == t[53]


def test_d29_new_indicator_comes_off_the_live_tail():
    """D29: 换宝 retires the indicator and flips t6, then t7, ..."""
    wall = Wall.shuffled(BAICHENG, random.Random(5))
    t = wall.tiles
    assert wall.flip_indicator() == t[114]
    assert wall.flip_indicator() == t[113]
    assert wall.indicators == [t[115], t[114], t[113]]


def test_flip_on_an_empty_live_deque_leaves_no_treasure():
    wall = Wall.shuffled(BAICHENG, random.Random(5))
    while len(wall):
        wall.draw()
    assert wall.flip_indicator() is None
    assert wall.indicators == [wall.tiles[115]]
    assert [wall.replacement() for _ in range(4)] == list(wall.tiles[:115:-1])
    assert not wall.can_replace()


@given(st.sampled_from(RULES), st.integers(0, 3), st.integers(0, 2**32))
def test_tiles_are_conserved_by_dealing(rules, dealer, seed):
    wall = Wall.shuffled(rules, random.Random(seed))
    hands = wall.deal(dealer)
    rest = list(wall.live) + list(wall.reserve) + wall.indicators + wall.undealt
    assert wall.undealt == []
    assert Counter(t for h in hands for t in h) + Counter(rest) == Counter(rules.tiles)


@given(st.sampled_from(RULES), st.integers(0, 2**32))
def test_the_wall_is_random_shuffle_of_the_tile_set(rules, seed):
    """A seed deals the wall `random.shuffle` gives (records made before keep replaying)."""
    tiles = list(rules.tiles)
    random.Random(seed).shuffle(tiles)
    assert Wall.shuffled(rules, random.Random(seed)).tiles == tuple(tiles)


def test_break_dice_per_rule_set():
    """§1.4 and D6: baicheng has no dice; sichuan throws twice; baishan counts clockwise."""
    assert throw_break(BAICHENG, 2, random.Random(1)).dice == ()
    rng = random.Random(4)
    for _ in range(50):
        sichuan = throw_break(SICHUAN, 0, rng)
        first, second = sichuan.dice
        assert sichuan.seat == (sum(first) - 1) % 4
        assert sichuan.stacks == sum(first) + sum(second)
        baishan = throw_break(BAISHAN, 1, rng)
        (throw,) = baishan.dice
        assert baishan.seat == (1 - (sum(throw) - 1)) % 4


def test_a_short_wall_is_refused():
    with pytest.raises(ValueError, match="too short"):
        Wall(range(30))


def test_d4_wall_sides_per_rule_set():
    """§1.3 and D4: 15 stacks a side (baicheng), 17 (136 tiles), 14/13/14/13 (sichuan)."""
    assert wall_sides(BAICHENG, 0) == (15, 15, 15, 15)
    assert wall_sides(BAISHAN, 2) == (17, 17, 17, 17)
    assert wall_sides(SICHUAN, 1) == (13, 14, 13, 14)
    assert sum(wall_sides(SICHUAN, 0)) * 2 == 108


@pytest.mark.parametrize("rules", RULES, ids=lambda r: r.name)
def test_d4_the_sides_hold_the_tile_set_and_the_dealer_has_a_long_one(rules):
    """D4: the sides hold every tile, and where they differ the dealer's is the longer."""
    for dealer in range(4):
        sides = wall_sides(rules, dealer)
        assert 2 * sum(sides) == len(rules.tiles)
        assert sides[dealer] == max(sides)


def test_the_break_follows_the_rule_sets_dice_not_its_name():
    """A house rule set breaks the wall as its ``dice`` field says, whatever its name."""
    house = dataclasses.replace(BAISHAN, name="baishan_house", dice=Dice.TWO_THROWS)
    assert len(throw_break(house, 0, random.Random(2)).dice) == 2
    quiet = dataclasses.replace(SICHUAN, name="sichuan_house", dice=Dice.NONE)
    assert throw_break(quiet, 3, random.Random(2)) == throw_break(BAICHENG, 3, random.Random(2))


def test_a_wall_layout_that_does_not_hold_the_tile_set_is_refused():
    with pytest.raises(ValueError, match=r"wall_stacks \(17, 17, 17, 17\) hold 136 tiles"):
        dataclasses.replace(SICHUAN, wall_stacks=(17, 17, 17, 17))
