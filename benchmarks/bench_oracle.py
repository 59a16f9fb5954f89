"""How much better sampling could buy the expert: its search in worlds that hold the
other seats' TRUE concealed hands and melds.

    .venv/bin/python benchmarks/bench_oracle.py [--rules R] [--walls N] [--seed S]
        [--playouts P] [--opponents efficient|strong] [--margin M] [--sampled | --clairvoyant]
        [--stakes W [--compare [whole|parts]] [--first K]]
        [--overrules W [--claims] [--first K]] [--rivals W [--first K]]
        [--plan fold|flush [--worlds W] [--first K]]

A diagnostic, not a bot (it reads the engine's hidden state): at each of the expert's own
turns every world it plays out is the sampler's, with the other seats' hands, melds and
winning tiles replaced by the real ones and the wall dealt from the real remaining tiles
in a fresh random order (what is still unknown to anyone). If even this expert is not
clearly stronger than ``strong``, no sampler can make it so: the playouts themselves (their
number, their policies, the decision rule) are the limit. ``--sampled`` plays the same
walls with the sampler as it is, for comparison; ``--clairvoyant`` keeps the wall's real
order too (the future draws known: a check that the harness shows an edge that exists).

Duplicate mode as `fangcheng simulate --duplicate`: each wall is played by four strong
bots once and then four times with the expert at each seat, every seat's generator fixed
by the wall and the seat, so where the expert keeps the strong bot's choices its game is
the strong bot's and the wall's difference is 0. Prints, per wall and running, expert −
strong per hand with its 95% interval and the walls that differ at all.

``--stakes W``: what a perfect choice among the expert's options is worth, the bound of
any search of them. Four strong bots play each wall; at each of seat 0's turns where the
expert has a rival, every option is played out in ``W`` worlds (true hands unless
``--sampled``, the same worlds for each). The worlds are split in halves: the option
best on one half is judged on the other, against the strong bot's choice, and the two
ways averaged (an unbiased estimate of a choice made from ``W / 2`` worlds; as ``W``
grows it nears the perfect choice's worth). Prints that gain per decision and summed per
hand, with 95% intervals over hands. ``--compare``: the choice made in W / 2 worlds of
the sampler as it is beside one made in W / 2 true-hand worlds, both judged in W / 2
more true-hand worlds: how much of the bound the sampler keeps. ``--compare parts``
shows where it loses it: between those two, a choice made in the sampler's worlds told
which other seats are truly ready (each dealt a ready hand of the sampler's), and one
made in worlds holding the true hands of the ready seats only (the others' sampled hands
kept as far as the true tiles allow). ``--first K``: start at wall K (to split the walls
between processes).

``--overrules W``: what the expert's own overrules are worth, with far less noise than
duplicate play (where one overrule sends the rest of the hand elsewhere). Four strong bots
play each wall; at each of seat 0's turns the expert (``--playouts``, ``--margin``)
searches in its sampler's worlds as it would in play (its playouts' other seats
``--opponents``), and where it overrules the strong bot both actions are played out in
``W`` true-hand worlds, the other seats strong bots as at the table. Prints each
overrule, by the kind of rival (the next best discard, the safest, 报听 or not, a kong or
not) and summed per hand: the gain of the expert's choices over the strong bot's,
decision by decision, at the states of the strong bot's game. ``--claims``: seat 0's
claim windows are searched and judged too (a claim window's true-hand world is the real
round as it stands, its wall reshuffled).

``--rivals W``: where the strong bot errs on average, whatever the expert's search
makes of it. Four strong bots play each wall; at each of seat 0's turns and claim
windows every rival the expert has (as `--overrules --claims` gives it) is played out
with the strong bot's choice in the same ``W`` true-hand worlds, strong bots at the other
seats. Prints, by the kind of rival and by the wall's stage (early: 24 tiles or more
left), each rival's gain and what taking every rival of that kind would gain a hand: a
kind whose rivals gain on average is an error of the strong bot's that a rule could
mend (as the 碰 of a fourth tile in sichuan, found so), and one the search should see.

``--plan fold|flush``: what a whole-hand plan the strong bot does not follow is worth, a
search's option of another kind than the expert's (each of its rivals is one discard,
the strong bot's play after it). Four strong bots play each wall; at each of seat 0's
discards where the plan would discard otherwise, the plan's discard and then the plan to
the end of the hand is played out against the strong bot's in ``--worlds`` true-hand
worlds (strong bots at the other seats). ``fold``: the safest discard whenever a seat is
ready with a chance of `expert.FOLD` or more (the strong bot folds only against 报听);
``flush``: the 清一色 of the suit the hand holds most of, while the wall is long enough
for the strong bot to consider one. Prints each, and by the hand's distance from ready
(fold) or the suit's tiles (flush).
"""

from __future__ import annotations

import argparse
import copy
import random
from collections import deque
from collections.abc import Iterator, Sequence
from math import sqrt
from statistics import fmean, stdev
from typing import Any, ClassVar

import fangcheng.ai.expert as expert
from fangcheng.ai.sim import derive
from fangcheng.analysis.hand import shanten_flush
from fangcheng.engine.round import Round
from fangcheng.players.bots import Bot, EfficientBot, StrongBot, Table, table_of
from fangcheng.protocol.actions import Act, Action
from fangcheng.protocol.observation import Phase
from fangcheng.rules.requirements import wait_set

_SAMPLE = expert.sample_world


class Oracle:
    """The expert's sampler with its unknowns replaced by the truth of ``table``, the
    table being played (set before each decision); ``clairvoyant`` keeps the wall's
    real order too. ``only``: the seats whose hands are made true (None: all), the
    others' sampled hands kept as far as the true tiles allow."""

    def __init__(self, clairvoyant: bool) -> None:
        self.clairvoyant = clairvoyant
        self.table: Round | None = None
        self.only: frozenset[int] | None = None

    def __call__(self, obs: Any, rng: random.Random, *args: Any, **kwargs: Any) -> Round:
        true = self.table
        if true is not None and obs.phase is Phase.CLAIM:  # the window itself, as it is
            world = copy.deepcopy(true)
            self._true_wall(world, true, obs.wall, rng)
            return world
        world = _SAMPLE(obs, rng, *args, **kwargs)
        if true is None or obs.phase is not Phase.TURN:
            return world
        if self.only is not None:
            return _partly_true(world, true, obs.seat, self.only, rng)
        for s in range(4):
            if s != obs.seat:
                world.hands[s] = bytearray(true.hands[s])
                world.melds[s] = list(true.melds[s])
        world.win_tiles = dict(true.win_tiles)
        self._true_wall(world, true, obs.wall, rng)
        for s in range(4):
            if s != obs.seat and s not in world.won:
                world._rest(s, -1)  # the resting seats' waits, of their true hands
        return world

    def _true_wall(self, world: Round, true: Round, live: int, rng: random.Random) -> None:
        """``world``'s wall of the true wall's tiles, reshuffled unless clairvoyant (what
        is still unknown to anyone), ``live`` of them in the live wall."""
        pool = [*true.wall.live, *true.wall.reserve]
        if not self.clairvoyant:
            rng.shuffle(pool)
        world.wall.live, world.wall.reserve = deque(pool[:live]), deque(pool[live:])


def _partly_true(
    world: Round, true: Round, seat: int, only: frozenset[int], rng: random.Random
) -> Round:
    """``world`` with the true hands of the seats ``only`` and every seat's true melds;
    the other hidden seats keep their sampled tiles where the true unseen tiles allow (the
    rest drawn at random from what is left), and the wall is what is left, shuffled."""
    hidden = [s for s in range(4) if s != seat and s not in world.won]
    left = bytearray(34)
    for t in (*true.wall.live, *true.wall.reserve):
        left[t] += 1
    for s in hidden:
        for t in range(34):
            left[t] += true.hands[s][t]
    for s in range(4):
        if s != seat:
            world.melds[s] = list(true.melds[s])
    for s in only:
        world.hands[s] = bytearray(true.hands[s])
        for t in range(34):
            left[t] -= true.hands[s][t]
    for s in hidden:
        if s in only:
            continue
        kept, short = bytearray(34), 0
        for t in range(34):
            kept[t] = min(world.hands[s][t], left[t])
            short += world.hands[s][t] - kept[t]
            left[t] -= kept[t]
        spare = [t for t in range(34) for _ in range(left[t])]
        for t in rng.sample(spare, short):
            kept[t] += 1
            left[t] -= 1
        world.hands[s] = kept
    pool = [t for t in range(34) for _ in range(left[t])]
    rng.shuffle(pool)
    wall = len(world.wall.live)
    world.wall.live, world.wall.reserve = deque(pool[:wall]), deque(pool[wall:])
    for s in hidden:
        world._rest(s, -1)
    return world


def truly_ready(table: Round, seat: int) -> frozenset[int]:
    """The other seats, still playing, whose true hands are ready."""
    return frozenset(
        s
        for s in range(4)
        if s != seat
        and s not in table.won
        and wait_set(table.rules, bytes(table.hands[s]), table.melds[s], table.que[s])
    )


def play(
    args: argparse.Namespace, oracle: Oracle | None, wall: int, expert_at: int | None
) -> list[int]:
    """One hand of wall ``wall``: strong bots, the expert at ``expert_at`` (or none)."""
    round_ = Round(args.rules, seed=derive(args.seed, wall), dealer=wall % 4)
    opponents: type[Bot] = StrongBot if args.opponents == "strong" else EfficientBot
    bots: list[Bot] = []
    for s in range(4):
        rng = _seat_rng(args, wall, s)
        if s == expert_at:
            bots.append(
                expert.ExpertBot(
                    rng, playouts=args.playouts, opponents=opponents, margin=args.margin
                )
            )
        else:
            bots.append(StrongBot(rng))
    if oracle is not None:
        oracle.table = round_
    while not round_.over:
        for s in round_.pending():
            round_.act(s, bots[s].act(round_.observe(s)))
    assert round_.settlement is not None
    return list(round_.settlement["total"])


def _seat_rng(args: argparse.Namespace, wall: int, seat: int) -> random.Random:
    """Seat ``seat``'s generator on wall ``wall``, as in duplicate mode (4: a judge's)."""
    return random.Random(derive(args.seed, wall, seat))


def _strong_hand(
    args: argparse.Namespace, wall: int, me: StrongBot
) -> Iterator[tuple[Round, Any, Action]]:
    """Wall ``wall`` played by four strong bots, ``me`` (drawing `_seat_rng` 0) at seat 0:
    each of seat 0's turns (and with ``args.claims`` its claim windows) as the round, its
    observation and ``me``'s choice, made once the caller is done with them."""
    round_ = Round(args.rules, seed=derive(args.seed, wall), dealer=wall % 4)
    bots = [me, *(StrongBot(_seat_rng(args, wall, s)) for s in (1, 2, 3))]
    while not round_.over:
        for s in round_.pending():
            obs = round_.observe(s)
            action = bots[s].act(obs)
            if s == 0 and (obs.phase is Phase.TURN or (args.claims and obs.phase is Phase.CLAIM)):
                yield round_, obs, action
            round_.act(s, action)


def stakes(args: argparse.Namespace, oracle: Oracle | None) -> None:
    """The worth of choosing among the expert's options by ``args.stakes`` worlds each."""
    opponents: type[Bot] = StrongBot if args.opponents == "strong" else EfficientBot
    per_hand: list[list[float]] = []
    per_decision: list[tuple[float, ...]] = []
    for wall in range(args.first, args.first + args.walls):
        seat = expert.ExpertBot(_seat_rng(args, wall, 0), opponents=opponents)
        gains: list[tuple[float, ...]] = []
        for round_, obs, action in _strong_hand(args, wall, seat.strong):
            options = seat.options(obs, action) if len(obs.legal) > 1 else [action]
            if len(options) > 1:
                gains.append(_gain(args, oracle, round_, seat, obs, options))
        per_decision += gains
        kinds = KINDS.get(args.compare, ("",))
        per_hand.append([sum(g) for g in zip(*gains, strict=True)] if gains else [0.0] * len(kinds))
        shown = "   ".join(
            f"{kind} per decision {_ci([g[k] for g in per_decision])}"
            f" per hand {_ci([h[k] for h in per_hand])}"
            for k, kind in enumerate(kinds)
        )
        this = " ".join(f"{h:+.3f}" for h in per_hand[-1])
        print(f"wall {wall}: {len(gains)} decisions, {this}   {shown}", flush=True)


def _gain(
    args: argparse.Namespace,
    oracle: Oracle | None,
    table: Round,
    seat: expert.ExpertBot,
    obs: Any,
    options: list[Any],
) -> tuple[float, ...]:
    """One decision's gain over the strong bot's choice: `_split_gain` of ``args.stakes``
    worlds; with ``args.compare``, chosen by W / 2 sampled worlds and by W / 2 true ones,
    each judged on W / 2 more true ones."""
    which = range(len(options))
    ready, safe = seat.readiness(obs), seat.strong.passed()
    known = truly_ready(table, obs.seat)
    # who is ready known, the sampler's treatment of the others kept (a tiny chance: a
    # hand a few tiles off where it would build one, a uniform one where it would not)
    told = [1.0 if s in known else (1e-9 if p else 0.0) for s, p in enumerate(ready)]

    def played(
        worlds: int, truth: bool, only: frozenset[int] | None = None, readiness: Any = ready
    ) -> list[list[int]]:
        if oracle is not None:
            oracle.table = table if truth else None
            oracle.only = only
        results: list[list[int]] = [[] for _ in options]
        seat.play(obs, options, which, worlds, readiness, safe, results)
        return results

    if not args.compare:
        return (_split_gain(played(args.stakes, True)),)
    half = args.stakes // 2
    picks = [played(half, False)]
    if args.compare == "parts":
        picks += [played(half, False, readiness=told), played(half, True, known, told)]
    picks.append(played(half, True))
    judge = played(half, True)
    return tuple(_judged(pick, judge) for pick in picks)


def overrules(args: argparse.Namespace, oracle: Oracle) -> None:
    """The worth of the expert's overrules, each judged in ``args.overrules`` true-hand
    worlds (see the module's docstring)."""
    opponents: type[Bot] = StrongBot if args.opponents == "strong" else EfficientBot
    per_hand: list[float] = []
    by_kind: dict[str, list[float]] = {}
    for wall in range(args.first, args.first + args.walls):
        phases = expert.TURNS | ({Phase.CLAIM} if args.claims else set())
        seat = expert.ExpertBot(
            _seat_rng(args, wall, 0), playouts=args.playouts, margin=args.margin,
            opponents=opponents, phases=phases, candidates=args.candidates,
        )  # fmt: skip
        judge = expert.ExpertBot(_seat_rng(args, wall, 4), opponents=StrongBot)
        gains: list[float] = []
        for round_, obs, action in _strong_hand(args, wall, seat.strong):
            if len(obs.legal) < 2:
                continue
            options = seat.options(obs, action)
            oracle.table = None  # the search in the sampler's worlds, as in play
            seat._decisions += 1  # its own worlds (`act` counts them)
            picked = seat.search(obs, options) if len(options) > 1 else action
            if picked == action:
                continue
            oracle.table = round_
            judge.strong.follow(seat.strong)
            results: list[list[int]] = [[], []]
            ready, safe = seat.readiness(obs), seat.strong.passed()
            judge.play(obs, [action, picked], (0, 1), args.overrules, ready, safe, results)
            diffs = expert._diffs(results, 1)
            gain = fmean(diffs)
            kind = _rival_kind(seat, obs, action, picked)
            by_kind.setdefault(kind, []).append(gain)
            gains.append(gain)
            print(f"wall {wall}: {kind} with {obs.wall} tiles in the wall, judged"
                  f" {_ci(diffs)}", flush=True)  # fmt: skip
        per_hand.append(sum(gains))
        print(f"wall {wall}: {len(gains)} overrules, {per_hand[-1]:+.3f}   per hand"
              f" {_ci(per_hand)}", flush=True)  # fmt: skip
    for kind, values in sorted(by_kind.items()):
        print(
            f"{kind}: {len(values)} overrules, each {_ci(values)},"
            f" {sum(values) / len(per_hand):+.3f} per hand"
        )


def rivals(args: argparse.Namespace, oracle: Oracle) -> None:
    """Each of the expert's rivals at every decision of seat 0 (turns and claim windows),
    judged against the strong bot's choice in ``args.rivals`` true-hand worlds, the same
    for every option: by kind of rival, where the strong bot errs on average."""
    by_kind: dict[str, list[float]] = {}
    for wall in range(args.first, args.first + args.walls):
        seat = expert.ExpertBot(_seat_rng(args, wall, 0), phases=expert.TURNS | {Phase.CLAIM})
        judge = expert.ExpertBot(_seat_rng(args, wall, 4), opponents=StrongBot)
        for round_, obs, action in _strong_hand(args, wall, seat.strong):
            options = seat.options(obs, action) if len(obs.legal) > 1 else [action]
            if len(options) < 2:
                continue
            oracle.table = round_
            judge.strong.follow(seat.strong)
            results: list[list[int]] = [[] for _ in options]
            ready, safe = seat.readiness(obs), seat.strong.passed()
            judge.play(obs, options, range(len(options)), args.rivals, ready, safe, results)
            for i, rival in enumerate(options[1:], 1):
                kind = _rival_kind(seat, obs, action, rival)
                late = "late" if obs.wall < 24 else "early"
                for key in (kind, f"{kind}, {late}"):
                    by_kind.setdefault(key, []).append(fmean(expert._diffs(results, i)))
        kinds = sorted(k for k in by_kind if "," not in k)
        shown = "  ".join(f"{k} {len(by_kind[k])} {_ci(by_kind[k])}" for k in kinds)
        print(f"wall {wall}: {shown}", flush=True)
    for kind, values in sorted(by_kind.items()):
        print(f"{kind}: {len(values)} rivals, each {_ci(values)},"
              f" {sum(values) / args.walls:+.3f} per hand if always taken")  # fmt: skip


def _rival_kind(seat: expert.ExpertBot, obs: Any, choice: Any, rival: Any) -> str:
    """What the expert took over the strong bot's ``choice``: a kong made or not, 报听 or
    not, the safest discard (`ExpertBot.choices`'s), or one of the next best."""
    if obs.phase is Phase.CLAIM:
        return f"claim {choice.kind.value}→{rival.kind.value}"
    if rival.kind in expert._KONGS or choice.kind in expert._KONGS:
        return "kong made" if rival.kind in expert._KONGS else "kong not made"
    if rival.tile == choice.tile:
        return "报听" if rival.kind is Act.READY else "no 报听"
    if seat.folding(obs) == rival:
        return "safest"
    return "next"


class Folding(StrongBot):
    """The strong bot that discards the safest tile (`StrongBot.safest`) whenever
    another seat is ready with a chance of `expert.FOLD` or more, declared or not."""

    def discard(self, table: Table, discards: Sequence[Action]) -> Action:
        threat = self.threats(table.obs)
        if max(threat) < expert.FOLD:
            return super().discard(table, discards)
        return self.safest(table, discards, threat, self.ranked_discards(table, discards))


class Flushing(StrongBot):
    """The strong bot that pursues the 清一色 of ``suit`` while `StrongBot.flushes` allows
    it at all: each discard the one nearest that flush, and no call outside the suit."""

    suit: ClassVar[int] = 0

    def flush_discard(self, table: Table, discards: Sequence[Action]) -> Action | None:
        if not any(f.suit == self.suit for f in self.flushes(table)):
            return None
        h, shapes = table.obs.hand, table.rules.shapes
        memo = self.memo(table, table.melds)
        scored = [
            (shanten_flush(after, self.suit, shapes=shapes), memo.distance_at(after, s), t)
            for t, s, after in memo.discarded(h, self.discard_faces(table, discards))
        ]
        best = min(scored)[:2]
        tied = [t for near, d, t in scored if (near, d) == best]
        tile = tied[0] if len(tied) == 1 else self.ranked(table, h, table.melds, tied)[0][2]
        return next(a for a in discards if a.tile == tile)

    def claim(self, table: Table, calls: Sequence[Action]) -> Action:
        assert table.obs.last_discard is not None
        outside = table.obs.last_discard[1] // 9 != self.suit
        if outside and any(f.suit == self.suit for f in self.flushes(table)):
            calls = [a for a in calls if a.kind is Act.HU]
        return super().claim(table, calls)


#: `Flushing` for each suit.
FLUSHING = [type(f"Flushing{s}", (Flushing,), {"suit": s}) for s in range(3)]


def plans(args: argparse.Namespace, oracle: Oracle) -> None:
    """Whole-hand plans the strong bot does not follow: at each of seat 0's discards where
    the plan (``args.plan``) would discard otherwise, the plan's discard followed by the
    plan to the end against the strong bot's, in ``args.worlds`` true-hand worlds."""
    rows: list[tuple[int, float]] = []
    for wall in range(args.first, args.first + args.walls):
        me = StrongBot(_seat_rng(args, wall, 0))
        for round_, obs, action in _strong_hand(args, wall, me):
            found = _plan(args.plan, me, obs, action) if action.kind is Act.DISCARD else None
            if found is None or found[1] == action:
                continue
            policy, rival, what = found
            seed = derive(args.seed, wall, 100 + len(rows))
            results = []
            for kind, act in ((StrongBot, action), (policy, rival)):
                judge = expert.ExpertBot(random.Random(0), policy=kind, opponents=StrongBot)
                judge.search_rng = random.Random(seed)  # the same worlds
                judge.strong.follow(me)
                oracle.table = round_
                out: list[list[int]] = [[]]
                judge.play(obs, [act], (0,), args.worlds, [0.0] * 4, me.passed(), out)
                results += out
            diffs = expert._diffs(results, 1)
            rows.append((what, fmean(diffs)))
            print(f"wall {wall}: {args.plan} at {what} with {obs.wall} tiles in the"
                  f" wall, {_ci(diffs)}", flush=True)  # fmt: skip
    for what in sorted({w for w, _ in rows}):
        values = [g for w, g in rows if w == what]
        print(f"{args.plan} at {what}: {len(values)} discards, each {_ci(values)}")
    gains = [g for _, g in rows]
    if gains:
        print(f"{len(gains)} discards in {args.walls} hands, each {_ci(gains)};"
              f" {sum(g > 0 for g in gains)} gain")  # fmt: skip


def _plan(
    plan: str, me: StrongBot, obs: Any, choice: Action
) -> tuple[type[StrongBot], Action, int] | None:
    """The plan's policy, its discard at ``obs``, and what it is read by (the hand's
    distance from ready after the strong bot's ``choice``; the flush suit's tiles), or
    None where the plan does not apply."""
    table = table_of(obs)
    legal = [a for a in obs.legal if a.kind is Act.DISCARD]
    if plan == "fold":
        if max(me.threats(obs)) < expert.FOLD:
            return None
        bot: StrongBot = Folding(random.Random(0))
        bot.follow(me)
        h = bytearray(obs.hand)
        h[choice.tile or 0] -= 1
        return Folding, bot.discard(table, legal), min(4, me.distance(table, bytes(h), table.melds))
    suits = {f.suit for f in me.flushes(table)}
    if not suits:
        return None
    held = {x: sum(obs.hand[9 * x : 9 * x + 9]) for x in suits}
    for m in obs.seats[obs.seat].melds:
        held[m.tiles[0] // 9] = held.get(m.tiles[0] // 9, 0) + len(m.tiles)
    suit = max(suits, key=lambda x: held[x])
    bot = FLUSHING[suit](random.Random(0))
    bot.follow(me)
    rival = bot.flush_discard(table, legal)
    return None if rival is None else (FLUSHING[suit], rival, held[suit])


#: The choices ``--compare`` shows, by the worlds each is made in.
KINDS = {
    "whole": ("chosen in sampled worlds", "in true ones"),
    "parts": ("sampled", "who is ready known", "ready hands true", "all true"),
}


def _judged(pick: list[list[int]], judge: list[list[int]]) -> float:
    """The option best in ``pick`` less the strong bot's choice, in ``judge``."""
    best = max(range(len(pick)), key=lambda i: fmean(pick[i]))
    return fmean(judge[best]) - fmean(judge[0])


def _split_gain(results: list[list[int]]) -> float:
    """Half-sample gain over option 0: the best option of each half judged on the other."""
    half = len(results[0]) // 2
    first, second = [r[:half] for r in results], [r[half:] for r in results]
    return (_judged(first, second) + _judged(second, first)) / 2


def _ci(values: Sequence[float]) -> str:
    half = 1.96 * stdev(values) / sqrt(len(values)) if len(values) > 1 else 0.0
    return f"{fmean(values) if values else 0.0:+.3f} ± {half:.3f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rules", default="sichuan")
    parser.add_argument("--walls", type=int, default=48)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--playouts", type=int, default=expert.PLAYOUTS)
    parser.add_argument("--opponents", choices=("efficient", "strong"), default="efficient")
    parser.add_argument("--margin", type=float, default=expert.MARGIN)
    which = parser.add_mutually_exclusive_group()
    which.add_argument("--sampled", action="store_true", help="the sampler as it is")
    which.add_argument("--clairvoyant", action="store_true", help="the wall's order known")
    parser.add_argument("--stakes", type=int, metavar="W", help="the worth of a perfect choice")
    parser.add_argument(
        "--compare",
        nargs="?",
        const="whole",
        choices=tuple(KINDS),
        help="with --stakes: chosen in sampled worlds too ('parts': and in partly true ones)",
    )
    parser.add_argument(
        "--overrules", type=int, metavar="W", help="the expert's overrules judged in W worlds"
    )
    parser.add_argument(
        "--rivals", type=int, metavar="W", help="every rival judged in W worlds, by kind"
    )
    parser.add_argument(
        "--plan", choices=("fold", "flush"), help="a whole-hand plan judged against strong"
    )
    parser.add_argument("--worlds", type=int, default=60, help="with --plan: worlds a discard")
    parser.add_argument(
        "--claims", action="store_true", help="with --overrules: seat 0's claims searched too"
    )
    parser.add_argument(
        "--candidates", type=int, default=expert.CANDIDATES, help="with --overrules: discards"
    )
    parser.add_argument("--first", type=int, default=0, help="the first wall")
    args = parser.parse_args()
    if args.compare and (not args.stakes or args.sampled):
        parser.error("--compare needs --stakes and true hands to judge in (not --sampled)")
    if (args.overrules or args.plan or args.rivals) and (
        args.stakes or args.sampled or args.clairvoyant
    ):
        parser.error("--overrules, --rivals and --plan judge in true hands: not with --stakes,"
                     " --sampled or --clairvoyant")  # fmt: skip
    oracle = None if args.sampled else Oracle(args.clairvoyant)
    if oracle is not None:
        expert.sample_world = oracle
    if args.plan:
        assert oracle is not None
        plans(args, oracle)
        return
    if args.overrules:
        assert oracle is not None
        overrules(args, oracle)
        return
    if args.rivals:
        assert oracle is not None
        args.claims = True
        rivals(args, oracle)
        return
    if args.stakes:
        stakes(args, oracle)
        return
    per_wall: list[float] = []
    for wall in range(args.walls):
        strong = play(args, oracle, wall, None)  # four strong: one game, any seat read
        per_wall.append(fmean(play(args, oracle, wall, k)[k] - strong[k] for k in range(4)))
        mean = fmean(per_wall)
        half = 1.96 * stdev(per_wall) / sqrt(len(per_wall)) if len(per_wall) > 1 else 0.0
        differ = sum(1 for d in per_wall if d)
        print(
            f"wall {wall}: {per_wall[-1]:+.2f}   expert - strong {mean:+.2f} ± {half:.2f}"
            f" per hand, {differ}/{len(per_wall)} walls differ",
            flush=True,
        )


if __name__ == "__main__":
    main()
