"""Scripted hands for the engine tests: a wall that deals given hands and draws, and a
loop that plays on with every claim passed, until a condition holds."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from fangcheng.engine.record import wall_of
from fangcheng.engine.round import Round
from fangcheng.protocol.actions import Act, Action


def scripted(
    rules: str,
    hands: list[str],
    draws: str = "",
    tail: str = "",
    *,
    dealer: int = 0,
    seed: int = 0,
    options: Mapping[str, object] | None = None,
    ask_all: bool = False,
) -> Round:
    """A hand dealt ``hands`` (14 tiles for the dealer), then ``draws`` in order, with
    ``tail`` at the end of the wall (replacements, the treasure); the rest from ``seed``."""
    wall = wall_of({"hands": hands, "draws": draws, "tail": tail}, rules, seed, dealer)
    return Round(rules, seed=seed, dealer=dealer, options=options, wall=wall, ask_all=ask_all)


def A(text: str) -> Action:
    return Action.parse(text)


Choice = Callable[[Round, int, Sequence[Action]], Action | None]


def play_on(r: Round, until: Callable[[Round], bool], choose: Choice | None = None) -> None:
    """Play on until ``until(r)``: ``choose`` decides where it returns an action; else every
    claim passes (wins too) and the seat to move throws its drawn (or first) tile."""
    while not r.over and not until(r):
        seat = r.pending()[0]
        legal = r.legal_actions(seat)
        if choose is not None and (pick := choose(r, seat, legal)) is not None:
            r.act(seat, pick)
        elif A("pass") in legal:
            r.act(seat, A("pass"))
        elif r.drawn is not None and Action(Act.DISCARD, r.drawn) in legal:
            r.act(seat, Action(Act.DISCARD, r.drawn))
        else:
            r.act(seat, next(a for a in legal if a.kind is Act.DISCARD))
