"""Bots: only legal actions in every rule set, efficient beats random, strong defends."""

from __future__ import annotations

import random

import pytest

from fangcheng.actions import Act, Action
from fangcheng.bots import BOTS, EfficientBot, StrongBot, make_bot
from fangcheng.engine import Observation, Phase, Round, SeatView
from fangcheng.rules import ALL_RULES
from fangcheng.sim import simulate
from fangcheng.tiles import parse_counts, parse_tiles


class Checked:
    """Wraps a bot and fails the test the moment it returns an illegal action."""

    def __init__(self, name: str, rng: random.Random) -> None:
        self.bot = make_bot(name, rng)

    def act(self, obs: Observation) -> Action:
        action = self.bot.act(obs)
        assert action in obs.legal, f"{self.bot.name} chose {action}\n{obs.text()}"
        return action


@pytest.mark.parametrize("rules", [r.name for r in ALL_RULES])
@pytest.mark.parametrize("seed", range(8))
def test_every_bot_acts_legally(rules: str, seed: int) -> None:
    names = ["strong", "efficient", "random", "efficient"]
    for k in range(2):
        round_ = Round(rules, seed=100 * seed + k, dealer=k)
        bots = [Checked(names[(s + k) % 4], random.Random(seed * 10 + s)) for s in range(4)]
        while not round_.over:
            for s in round_.pending():
                round_.act(s, bots[s].act(round_.observe(s)))
        assert round_.settlement is not None


@pytest.mark.parametrize("rules", ["baicheng", "baishan"])
def test_efficient_beats_random(rules: str) -> None:
    summary = simulate(rules, 32, ["efficient", "random", "random", "random"], seed=5)
    diff, ci = summary.difference("efficient", "random")
    assert diff - ci > 0, summary.table()
    assert summary.seats[0].win_rate > max(s.win_rate for s in summary.seats[1:])


def _seat(river: str = "", ready: bool = False) -> SeatView:
    return SeatView((), 0, tuple(parse_tiles(river)), 13, ready, None, False, 0)


def _obs(
    rules: str, hand: str, phase: Phase, legal: tuple[Action, ...], **kw: object
) -> Observation:
    """A constructed observation: seat 0 of a fresh table unless ``kw`` says otherwise."""
    fields: dict[str, object] = {
        "seat": 0, "rules": rules, "phase": phase, "dealer": 0, "turn": 0, "base": 1,
        "wall": 30, "treasure": None, "retired": (), "hand": bytes(parse_counts(hand)),
        "drawn": None, "seats": (_seat(),) * 4, "scores": (0, 0, 0, 0),
        "last_discard": None, "legal": legal,
    }  # fmt: skip
    fields.update(kw)
    return Observation(**fields)  # type: ignore[arg-type]


def test_strong_folds_against_a_declared_ready_seat() -> None:
    # Far from ready; seat 1 has declared 报听. 9s is the one tile whose every other copy,
    # and every copy of 7s and 8s, is visible: nothing can wait on it. Efficiency alone
    # would keep the 9s pair and throw an isolated tile.
    hand = "123m2m146p8p99s24sEN"
    discards = tuple(Action(Act.DISCARD, t) for t in sorted(set(parse_tiles(hand))))
    obs = _obs(
        "baishan",
        hand,
        Phase.TURN,
        discards,
        drawn=parse_tiles("N")[0],
        seats=(_seat(), _seat("99s77s88s1m", ready=True), _seat("77s88s"), _seat("3p")),
    )
    nine_s = parse_tiles("9s")[0]
    assert StrongBot(random.Random(0)).act(obs) == Action(Act.DISCARD, nine_s)
    assert EfficientBot(random.Random(0)).act(obs) != Action(Act.DISCARD, nine_s)


@pytest.mark.parametrize(
    ("hand", "que"),
    [
        ("123456m1199p258s", 2),  # the fewest tiles
        ("12345m1123p1479s", 2),  # four each: 1479s has no pair and one gap
    ],
)
def test_que_is_the_shortest_least_useful_suit(hand: str, que: int) -> None:
    ques = tuple(Action(Act.QUE, value=v) for v in range(3))
    obs = _obs("sichuan", hand, Phase.QUE, ques, seat=2, wall=55)
    assert EfficientBot(random.Random(0)).act(obs) == Action(Act.QUE, value=que)


def test_a_legal_win_is_always_taken() -> None:
    legal = (Action(Act.DISCARD, 0), Action(Act.HU), Action(Act.DISCARD, 26))
    obs = _obs("baishan", "111m456p789s234m99s", Phase.TURN, legal, drawn=26)
    for name in ("efficient", "strong"):
        assert make_bot(name, random.Random(1)).act(obs) == Action(Act.HU)


def test_registry() -> None:
    assert set(BOTS) == {"random", "efficient", "strong"}
    with pytest.raises(ValueError, match="unknown bot 'nobody'"):
        make_bot("nobody", random.Random(0))
