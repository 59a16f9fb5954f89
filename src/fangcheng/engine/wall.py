"""The wall of one hand: the linear model of RULES.md §1.3-§1.5 and baicheng's tail (§2.10).

After the shuffle the wall is one sequence in draw order starting at the break (D5):
normal draws take the head, kong replacements the tail. Dice and the break are thrown
and logged for display only — under a uniform shuffle they do not change what is drawn.

Baicheng reserves its tail (D28): after dealing, the last four tiles ``t1..t4`` supply
replacements, ``t5`` is the treasure indicator, and the rest is the *live* deque; once
the reserve is spent, replacements and new indicators (换宝) come off the live tail.
"""

from __future__ import annotations

import random
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from operator import itemgetter

from fangcheng.rules.ruleset import Dice, RuleSet
from fangcheng.tiles.notation import format_tiles

__all__ = ["Break", "Wall", "deal_order", "throw_break", "wall_sides"]

DEALT = 53  # 13 tiles to each seat and one more to the dealer


@dataclass(frozen=True, slots=True)
class Break:
    """Where the wall was opened: the dice thrown, whose wall, how many stacks in."""

    dice: tuple[tuple[int, int], ...]
    seat: int
    stacks: int


def throw_break(rules: RuleSet, dealer: int, rng: random.Random) -> Break:
    """Throw the dice for the break as the rule set does it (§1.4); cosmetic (D5)."""

    def throw() -> tuple[int, int]:
        return (rng.randint(1, 6), rng.randint(1, 6))

    method = rules.dice
    if method is Dice.NONE:  # the dealer starts at the end of their own wall
        return Break((), dealer, 0)
    first = throw()
    if method is Dice.TWO_THROWS:  # the first throw counts seats in play order
        seat = (dealer + sum(first) - 1) % 4
        second = throw()
        return Break((first, second), seat, sum(first) + sum(second))
    # one throw, seats counted clockwise from the dealer (D6)
    return Break((first,), (dealer - (sum(first) - 1)) % 4, sum(first))


def wall_sides(rules: RuleSet, dealer: int) -> tuple[int, ...]:
    """Stacks (墩) of two tiles in front of each seat (§1.3), for display: the rule set's
    `RuleSet.wall_stacks`, which start at the dealer, turned to seat order."""
    return _turned(rules.wall_stacks, dealer)


@cache
def _turned(stacks: tuple[int, ...], dealer: int) -> tuple[int, ...]:
    """``stacks`` (the dealer's first) by seat. Memoised: every deal logs them."""
    return tuple(stacks[(seat - dealer) % 4] for seat in range(4))


def deal_order(dealer: int) -> list[int]:
    """The seat that receives each of the first 53 wall tiles (§1.5 canonical mapping)."""
    order = [(dealer + block) % 4 for _ in range(3) for block in range(4) for _ in range(4)]
    order += [dealer, dealer] + [(dealer + k) % 4 for k in (1, 2, 3)]
    return order


@cache
def _dealt_to(dealer: int) -> tuple[itemgetter[tuple[int, ...]], ...]:
    """Per seat, a getter of the tiles `deal_order` gives it, in order. Memoised: every
    hand deals, and a getter picks a seat's tiles in one C-level call."""
    order = deal_order(dealer)
    return tuple(itemgetter(*[i for i, s in enumerate(order) if s == seat]) for seat in range(4))


@cache
def _steps(size: int) -> tuple[tuple[int, int], ...]:
    """The steps of `random.shuffle` on ``size`` items: the index it fills, last first,
    and how many random bits it draws for the index swapped in."""
    return tuple((i, (i + 1).bit_length()) for i in reversed(range(1, size)))


def _shuffle(tiles: list[int], rng: random.Random) -> None:
    """``rng.shuffle(tiles)`` step for step (an index of ``k`` random bits, drawn again
    while past ``i``), so a seed deals the same wall, without `random.shuffle`'s two
    Python calls per tile: every hand shuffles a wall."""
    bits = rng.getrandbits
    for i, k in _steps(len(tiles)):
        j = bits(k)
        while j > i:
            j = bits(k)
        tiles[i], tiles[j] = tiles[j], tiles[i]


class Wall:
    """The undealt tiles of one hand, in draw order."""

    def __init__(self, tiles: Sequence[int], *, treasure: bool = False) -> None:
        self.tiles: tuple[int, ...] = tuple(tiles)
        if len(self.tiles) <= DEALT + 5:
            raise ValueError(f"a wall of {len(self.tiles)} tiles is too short to deal from")
        rest = self.tiles[DEALT:]
        self.undealt: list[int] = list(self.tiles[:DEALT])  # until `deal`
        self.reserve: deque[int] = deque()
        self.indicators: list[int] = []
        #: The current indicator (the last of ``indicators``), read on every turn.
        self.indicator: int | None = None
        if treasure:
            self.reserve.extend(reversed(rest[-4:]))  # t1 = the last tile, then t2, t3, t4
            self.indicator = rest[-5]
            self.indicators.append(self.indicator)
            rest = rest[:-5]
        self.live: deque[int] = deque(rest)

    @classmethod
    def shuffled(cls, rules: RuleSet, rng: random.Random) -> Wall:
        """The rule set's tiles in a seeded random order."""
        tiles = list(rules.tiles)
        _shuffle(tiles, rng)
        return cls(tiles, treasure=rules.treasure)

    def deal(self, dealer: int) -> list[list[int]]:
        """Each seat's starting tiles: 14 for the dealer, 13 for the others."""
        if not self.undealt:
            raise ValueError("the wall has already been dealt")
        hands = [list(take(self.undealt)) for take in _dealt_to(dealer)]
        self.undealt = []
        return hands

    def __len__(self) -> int:
        """Tiles left for normal draws."""
        return len(self.live)

    def draw(self) -> int:
        """A normal draw from the head."""
        return self.live.popleft()

    def replacement(self) -> int:
        """A kong replacement: the reserve first (baicheng), then the tail."""
        return self.reserve.popleft() if self.reserve else self.live.pop()

    def can_replace(self) -> bool:
        return bool(self.reserve or self.live)

    def flip_indicator(self) -> int | None:
        """换宝: retire the indicator and flip the next one from the live tail (D29)."""
        if not self.live:
            return None
        self.indicator = self.live.pop()
        self.indicators.append(self.indicator)
        return self.indicator

    def __repr__(self) -> str:
        return (
            f"Wall(live={format_tiles(self.live, sort=False)!r}, "
            f"reserve={format_tiles(self.reserve, sort=False)!r}, "
            f"indicators={format_tiles(self.indicators, sort=False)!r})"
        )
