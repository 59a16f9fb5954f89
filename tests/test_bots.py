"""Bots: only legal actions in every rule set, efficient beats random, strong defends."""

from __future__ import annotations

import random
from collections.abc import Iterator

import pytest

from fangcheng.ai import expert
from fangcheng.ai.sim import simulate
from fangcheng.analysis.hand import draw_shanten, shanten_flush
from fangcheng.engine.round import Round
from fangcheng.players.bots import (
    _NOTHING,
    BOTS,
    Bot,
    BotKindError,
    EfficientBot,
    StrongBot,
    Table,
    _held,
    _Memo,
    bot_kind,
    make_bot,
    table_of,
)
from fangcheng.protocol.actions import Act, Action
from fangcheng.protocol.observation import Observation, Phase, SeatView
from fangcheng.rules.ruleset import ALL_RULES, find_rules
from fangcheng.tiles.melds import Meld, MeldKind
from fangcheng.tiles.notation import DRAGONS, TERMINALS_AND_HONOURS, parse_counts, parse_tiles


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


def _hand(rules: str, seed: int, bots: list[Bot]) -> list[Action]:
    """Every action of one hand played by ``bots``."""
    round_ = Round(rules, seed=seed, dealer=seed % 4)
    actions = []
    while not round_.over:
        for s in round_.pending():
            actions.append(bots[s].act(round_.observe(s)))
            round_.act(s, actions[-1])
    return actions


@pytest.mark.parametrize("rules", [r.name for r in ALL_RULES])
def test_a_restarted_bot_plays_as_a_new_one(rules: str) -> None:
    """A bot restarted with a generator keeps its measures but nothing of the hand it
    played: its next hand is a new bot's, action for action (the expert's playouts reuse
    their bots so)."""
    kinds = ["strong", "efficient", "strong", "random"]
    reused = [make_bot(k, random.Random(s)) for s, k in enumerate(kinds)]
    _hand(rules, 1, reused)
    strong = [b for b in reused if isinstance(b, StrongBot)]
    assert any(any(b.passed()) for b in strong)  # it read the hand it played
    for bot, s in zip(reused, range(4), strict=True):
        bot.restart(random.Random(10 + s))
    new = [make_bot(k, random.Random(10 + s)) for s, k in enumerate(kinds)]
    assert [b.passed() for b in strong] == [[frozenset()] * 4] * len(strong)
    assert _hand(rules, 2, reused) == _hand(rules, 2, new)


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
        "seat": 0, "rules": find_rules(rules), "phase": phase, "dealer": 0, "turn": 0, "base": 1,
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


def test_strong_counts_faces_a_declared_seat_let_pass_as_safe() -> None:
    # Seat 1 declares; afterwards seat 2 discards 5m and seat 1 does not win on it (bots
    # always take a win), so 5m cannot be its wait. 6m, never passed, still may be.
    hand = "123m2m146p8p99s24sEN"
    discards = tuple(Action(Act.DISCARD, t) for t in sorted(set(parse_tiles(hand))))
    bot = StrongBot(random.Random(0))
    before = (_seat(), _seat("1m", ready=True), _seat("9p"), _seat("3p"))
    bot.track(_obs("baishan", hand, Phase.TURN, discards, seats=before))
    after = (_seat(), _seat("1m2m", ready=True), _seat("9p5m"), _seat("3p1p"))
    obs = _obs("baishan", hand, Phase.TURN, discards, seats=after)
    bot.track(obs)
    table = table_of(obs)
    threat = bot.threats(obs)
    assert threat[1] == 1.0
    five, six = parse_tiles("5m6m")
    assert five in bot._passed[1]
    assert bot.danger(table, five, [0.0, 1.0, 0.0, 0.0], 1.0) == 0.0
    assert bot.danger(table, six, [0.0, 1.0, 0.0, 0.0], 1.0) > 0.0


def test_strong_values_a_closed_hand_against_the_table_as_it_is() -> None:
    # baishan: a closed winner against three closed seats scores 四家清 (3); once another
    # seat has called, only 立门 (1) is left, so the same wait is worth less.
    hand = "123m456m789p11s22s"
    opened = SeatView((Meld(MeldKind.PENG, (27, 27, 27), 0),), 0, (), 10, False, None, False, 0)
    efficient, strong = EfficientBot(random.Random(0)), StrongBot(random.Random(0))
    legal = (Action(Act.PASS),)
    obs = _obs("baishan", hand, Phase.CLAIM, legal, seats=(_seat(), opened, _seat(), _seat()))
    strong.track(obs)
    table = table_of(obs)
    h = bytes(parse_counts(hand))
    win = parse_tiles("1s")[0]
    assert strong.worth(table, h, (), win, False) < efficient.worth(table, h, (), win, False)
    closed = _obs("baishan", hand, Phase.CLAIM, legal)
    strong.track(closed)
    table = table_of(closed)
    assert strong.worth(table, h, (), win, False) == efficient.worth(table, h, (), win, False)


def test_strong_looks_two_draws_ahead_at_distance_two() -> None:
    # The same discards as efficiency ranks them, the best few re-ordered by what the
    # draws to distance 1 lead to; the first is the best of those by that measure.
    hand = "1m3m5m7p8p2s3s6s9sECFP4m"
    obs = _obs("baicheng", hand, Phase.TURN, (), treasure=parse_tiles("9m")[0])
    table = table_of(obs)
    strong, efficient = StrongBot(random.Random(0)), EfficientBot(random.Random(0))
    faces = [t for t in range(34) if obs.hand[t]]
    mine = strong.ranked(table, obs.hand, (), faces)
    base = efficient.ranked(table, obs.hand, (), faces)
    assert mine[0][0] == 2
    assert sorted(t for _, _, t in mine) == sorted(t for _, _, t in base)
    top = [t for d, _, t in mine[:4] if d == 2]

    def second(t: int) -> float:
        hand14 = bytearray(obs.hand)
        hand14[t] -= 1
        return strong.second_step(table, hand14, ())

    assert second(mine[0][2]) == max(second(t) for t in top)


def test_strong_waits_for_a_self_draw_in_xuezhan() -> None:
    # sichuan: a plain discard win is paid by the discarder alone; with seven live tiles
    # and a long wall a self-draw (one more fan, paid by all three) is worth the wait. In
    # the last four tiles a passed win makes a 花猪, so there the win is taken.
    hand = "123m456m789m23p55p"
    one_p = parse_tiles("1p")[0]
    legal = (Action(Act.HU), Action(Act.PASS))
    seats = (_seat(), _seat("9s1p"), _seat("9s"), _seat("9s"))
    kw: dict[str, object] = {"last_discard": (1, one_p), "seats": seats}
    early = _obs("sichuan", hand, Phase.CLAIM, legal, wall=50, **kw)
    assert StrongBot(random.Random(0)).act(early) == Action(Act.PASS)
    assert EfficientBot(random.Random(0)).act(early) == Action(Act.HU)
    last = _obs("sichuan", hand, Phase.CLAIM, legal, wall=4, **kw)
    assert StrongBot(random.Random(0)).act(last) == Action(Act.HU)
    # where every seat pays a discard win anyway (baishan) the win is always taken
    baishan = _obs("baishan", "123m456m789m23p99p", Phase.CLAIM, legal, wall=50, **kw)
    assert StrongBot(random.Random(0)).act(baishan) == Action(Act.HU)


def test_strong_makes_a_kong_that_costs_one_step_while_the_wall_is_long() -> None:
    # baishan: 1m is both a 暗杠 and the run 1m-3m; konging it leaves the hand three from
    # ready instead of two. The kong is paid whether or not the hand wins, so strong
    # makes it; efficiency, and strong near the end of the wall, keep the run instead.
    hand = "1111m3m5m6p7p9p2s3s8sEE"
    one_m = parse_tiles("1m")[0]
    legal = (
        Action(Act.AN_GANG, one_m),
        *(Action(Act.DISCARD, t) for t in sorted(set(parse_tiles(hand)))),
    )
    long_wall = _obs("baishan", hand, Phase.TURN, legal, wall=40)
    assert StrongBot(random.Random(0)).act(long_wall) == Action(Act.AN_GANG, one_m)
    assert EfficientBot(random.Random(0)).act(long_wall).kind is Act.DISCARD
    short_wall = _obs("baishan", hand, Phase.TURN, legal, wall=10)
    assert StrongBot(random.Random(0)).act(short_wall).kind is Act.DISCARD


def test_strong_calls_a_kong_that_costs_one_step_while_the_wall_is_long() -> None:
    # The same hand with 1m discarded: efficiency calls 碰 (a step closer), strong the
    # 明杠 (paid whether or not it wins); near the end of the wall it calls 碰 too.
    hand = "111m3m5m6p7p9p2s3s8sEE"
    legal = (Action(Act.GANG), Action(Act.PENG), Action(Act.PASS))
    kw: dict[str, object] = {"turn": 3, "last_discard": (3, parse_tiles("1m")[0])}
    long_wall = _obs("baishan", hand, Phase.CLAIM, legal, wall=40, **kw)
    assert StrongBot(random.Random(0)).act(long_wall) == Action(Act.GANG)
    assert EfficientBot(random.Random(0)).act(long_wall) == Action(Act.PENG)
    short_wall = _obs("baishan", hand, Phase.CLAIM, legal, wall=10, **kw)
    assert StrongBot(random.Random(0)).act(short_wall) == Action(Act.PENG)


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


def test_strong_chooses_the_que_that_leaves_the_closest_hand() -> None:
    """Efficient voids 234m, the fewest tiles; without them 1479p125589s is four from
    ready, while without 1479p the hand 234m125589s is three away, so strong voids p."""
    ques = tuple(Action(Act.QUE, value=v) for v in range(3))
    obs = _obs("sichuan", "234m1479p125589s", Phase.QUE, ques, seat=2, wall=55)
    assert EfficientBot(random.Random(0)).act(obs) == Action(Act.QUE, value=0)
    assert StrongBot(random.Random(0)).act(obs) == Action(Act.QUE, value=1)


def test_strong_pursues_a_flush_worth_its_extra_step_while_the_wall_is_long() -> None:
    """1235678m45pEEESS is ready after 8m (waits 3p 6p). Without 45p it is one step from
    a 混一色, worth two fans on the platform (credited 1.5 steps): strong gives up the
    ready hand for it while the wall is long. Baishan's 混一色 is one fan, worth no step."""
    hand = "1235678m45pEEESS"
    discards = tuple(Action(Act.DISCARD, t) for t in sorted(set(parse_tiles(hand))))
    four_p, eight_m = (Action(Act.DISCARD, t) for t in parse_tiles("4p8m"))
    long_wall = _obs("baishan_platform", hand, Phase.TURN, discards, wall=60)
    assert shanten_flush(long_wall.hand, 0, honours=True) == 1
    assert StrongBot(random.Random(0)).act(long_wall) == four_p
    assert EfficientBot(random.Random(0)).act(long_wall) == eight_m
    short_wall = _obs("baishan_platform", hand, Phase.TURN, discards, wall=20)
    assert StrongBot(random.Random(0)).act(short_wall) == eight_m
    one_fan = _obs("baishan", hand, Phase.TURN, discards, wall=60)
    assert StrongBot(random.Random(0)).act(one_fan) == eight_m


def test_a_legal_win_is_always_taken() -> None:
    legal = (Action(Act.DISCARD, 0), Action(Act.HU), Action(Act.DISCARD, 26))
    obs = _obs("baishan", "111m456p789s234m99s", Phase.TURN, legal, drawn=26)
    for name in ("efficient", "strong"):
        assert make_bot(name, random.Random(1)).act(obs) == Action(Act.HU)


def test_registry() -> None:
    assert set(BOTS) == {"random", "efficient", "strong", "expert"}  # expert: fangcheng.ai
    with pytest.raises(ValueError, match="unknown bot 'nobody'"):
        make_bot("nobody", random.Random(0))


def test_a_bot_that_searches_is_named_with_its_budget() -> None:
    """``expert@N``: the expert with N playouts a decision, wherever a bot is named (the
    simulator, the environments, the terminal, `fangcheng bot`); a bot that does not
    search, a budget out of range or not a number, each is an error that says so."""
    assert make_bot("expert", random.Random(0)).playouts == expert.PLAYOUTS
    bot = make_bot("expert@96", random.Random(0))
    assert isinstance(bot, expert.ExpertBot) and bot.playouts == 96
    assert bot_kind("expert@1") == "expert@1"
    for name, why in [
        ("strong@24", "the strong bot does not search"),
        ("expert@0", "playouts from 1 to 4096"),
        ("expert@4097", "playouts from 1 to 4096"),
        ("expert@", "playouts from 1 to 4096"),
        ("expert@-3", "playouts from 1 to 4096"),
        ("expert@ 8", "playouts from 1 to 4096"),
        ("expert@²", "playouts from 1 to 4096"),  # a digit to str.isdigit, not to int
        ("genius@8", "unknown bot 'genius'"),
    ]:
        with pytest.raises(BotKindError, match=why):
            bot_kind(name)
    summary = simulate("sichuan", 2, ["expert@2", "strong", "strong", "strong"], seed=1)
    assert summary.seats[0].bot == "expert@2"


def test_a_name_registered_as_it_is_comes_before_a_budget(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A benchmark registers its variants under names of its own (``expert@24:…``)."""
    monkeypatch.setitem(BOTS, "expert@24:variant", StrongBot)
    assert type(make_bot("expert@24:variant", random.Random(0))) is StrongBot


@pytest.mark.parametrize("rules", [r.name for r in ALL_RULES])
def test_closest_discards_are_those_of_every_distance(rules: str) -> None:
    # `closest` stops measuring once shanten (a floor of the distance) passes the best
    # distance found: it must name the discards that measuring every one would.
    checked = 0
    for _, table, memo in _turn_memos(rules, 3):
        hand = table.obs.hand
        faces = [t for t in range(34) if hand[t]]
        every = [(memo.distance_at(h, s), t) for t, s, h in memo.discarded(hand, faces)]
        best = min(d for d, _ in every)
        assert memo.closest(hand, faces) == (best, [t for d, t in every if d == best])
        checked += 1
    assert checked > 20


@pytest.mark.parametrize("rules", [r.name for r in ALL_RULES])
def test_a_hand_met_after_any_discard_lacks_nothing_after_each(rules: str) -> None:
    # `closest` takes a discard's requirements as met, unworked, where `met_after_any`
    # says so: `lacking` must agree for every discard, with and without laid melds.
    met = 0
    for seed in range(4):
        for _, table, memo in _turn_memos(rules, seed):
            hand = table.obs.hand
            if not memo.met_after_any(hand):
                continue
            met += 1
            for t in _held(hand):
                less = bytearray(hand)
                less[t] -= 1
                assert memo.lacking(bytes(less)) is _NOTHING
    assert met > 10


def _turn_memos(rules: str, seed: int) -> Iterator[tuple[EfficientBot, Table, _Memo]]:
    """Each turn of a hand four efficient seats play: the bot, the mover's table and its
    memo. One bot plays every seat (memos are per hand)."""
    round_ = Round(rules, seed=seed)
    bot = EfficientBot(random.Random(seed))
    while not round_.over:
        for s in round_.pending():
            obs = round_.observe(s)
            if obs.phase is Phase.TURN:
                table = table_of(obs)
                yield bot, table, bot.memo(table, table.melds)
            round_.act(s, bot.act(obs))


def _useful_face_by_face(memo: _Memo, h: bytes, d: int) -> tuple[int, ...]:
    """`_Memo.useful` worked out one face at a time, as the masks' reference."""
    rules, needs = memo.rules, memo.needs(h)
    after = draw_shanten(h, shapes=rules.shapes)
    paired = max(h) >= 2
    out = []
    for t in rules.faces:
        suit = range(t - t % 9, t - t % 9 + 9) if t < 27 else range(t, t + 1)
        near = any(h[x] for x in suit if abs(x - t) <= 2)
        gain = int(memo.que is not None and t // 9 == memo.que and t < 27)
        gain -= sum(1 for base in needs.missing if base <= t < base + 9)
        if needs.no_terminal and t in TERMINALS_AND_HONOURS:
            gain -= 1
            near = True
        if needs.no_pung and (
            h[t] >= 2
            or (h[t] == 1 and paired)
            or (rules.dragon_pair_is_pung and t in DRAGONS and h[t] == 1)
            or (rules.dragon_set_is_pung and t in DRAGONS and not h[t] and h[31:34].count(0) == 1)
        ):
            gain -= 1
        near = near or any(base <= t < base + 9 for base in needs.missing)
        if near and after[t] + gain < d - needs.total:
            out.append(t)
    return tuple(out)


@pytest.mark.parametrize("rules", [r.name for r in ALL_RULES])
def test_useful_draws_match_a_face_by_face_count(rules: str) -> None:
    # The useful draws are found with masks of one byte per face; every hand kept in a
    # hand of bots must name the faces that looking at each face in turn names.
    checked = 0
    for seed in range(2):
        for bot, table, memo in _turn_memos(rules, seed):
            hand = bytearray(table.obs.hand)
            for t in _held(hand):
                hand[t] -= 1
                h = bytes(hand)
                hand[t] += 1
                d = memo.distance(h)
                want = _useful_face_by_face(memo, h, d)
                assert bot.useful_faces(table, h, table.melds, d) == want
                checked += 1
    assert checked > 200
