"""A match: hands (盘) in a row, the deal passing per rule set, 圈 and 局, running scores.

The first dealer is seat E in baicheng and decided by dice elsewhere (every seat throws,
the highest deals, ties throw again). After each hand the rule set says who deals next
(`next_dealer`). A 圈 is complete when the deal has passed four times; a 局 is four 圈.
Every hand's seed comes from the match seed, so a match is reproduced by its seed and
its decisions.
"""

from __future__ import annotations

import random
from collections.abc import Mapping

from fangcheng.engine.round import Round
from fangcheng.rules.ruleset import RuleSet, find_rules

__all__ = ["Match", "first_dealer", "next_dealer"]


def first_dealer(rules: RuleSet, rng: random.Random) -> int:
    """Seat E, or the highest of four dice throws with ties thrown again (D31, §4.2)."""
    if not rules.dealer_by_dice:
        return 0
    seats = [0, 1, 2, 3]
    while len(seats) > 1:
        throws = {s: rng.randint(1, 6) + rng.randint(1, 6) for s in seats}
        best = max(throws.values())
        seats = [s for s in seats if throws[s] == best]
    return seats[0]


def next_dealer(rules: RuleSet, round_: Round) -> int:
    """Who deals the next hand, after ``round_`` has ended.

    The dealer stays after winning. Otherwise: sichuan gives the deal to the first
    winner (to the discarder when that win was a 一炮多响, D47); the others pass it to the
    dealer's 下家, except that baicheng keeps the dealer after a 荒牌 (D11) and so does
    sichuan after a hand with no winner.
    """
    dealer = round_.dealer
    if not round_.won:
        return dealer if rules.dealer_stays_on_draw else (dealer + 1) % 4
    if rules.first_winner_deals:
        if round_.first_multi_source is not None:
            return round_.first_multi_source
        return round_.won[0]
    return dealer if round_.won[0] == dealer else (dealer + 1) % 4


class Match:
    """``quan`` 圈 of ``rules`` (four 圈 make a 局)."""

    def __init__(
        self,
        rules: RuleSet | str,
        *,
        seed: int = 0,
        base: int = 1,
        options: Mapping[str, object] | None = None,
        quan: int = 4,
        ask_all: bool = False,
    ) -> None:
        """``ask_all``: every hand runs the private claim mode (`Round`'s ``ask_all``)."""
        self.ask_all = ask_all
        self.rules = find_rules(rules) if isinstance(rules, str) else rules
        self.rng = random.Random(seed)
        self.seed, self.base, self.options, self.quan = seed, base, dict(options or {}), quan
        self.dealer = first_dealer(self.rules, self.rng)
        self.scores = [0, 0, 0, 0]
        self.passes = 0  # times the deal has passed to another seat

    @property
    def over(self) -> bool:
        return self.passes >= 4 * self.quan

    @property
    def current_quan(self) -> int:
        """The 圈 being played, from 1."""
        return min(self.passes // 4 + 1, self.quan)

    def new_round(self) -> Round:
        """Deal the next hand."""
        if self.over:
            raise ValueError("the match is over")
        return Round(
            self.rules,
            seed=self.rng.randrange(2**63),
            dealer=self.dealer,
            base=self.base,
            options=self.options,
            ask_all=self.ask_all,
        )

    def finish(self, round_: Round) -> None:
        """Book a finished hand: scores, and who deals next. The match keeps no hand (a
        long match on a server would keep them all): its caller records each."""
        if round_.settlement is None:
            raise ValueError("the hand is not over")
        for seat, amount in enumerate(round_.settlement["total"]):
            self.scores[seat] += amount
        dealer = next_dealer(self.rules, round_)
        if dealer != self.dealer:
            self.passes += 1
        self.dealer = dealer
