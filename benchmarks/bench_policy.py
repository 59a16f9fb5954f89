"""The strong bot's neighbourhood: is it a local optimum of its own heuristics?

    .venv/bin/python benchmarks/bench_policy.py [VARIANT ...] [--rules NAME ...]
        [--hands N] [--seed S] [--workers W]

Each variant is the strong bot with one heuristic changed (or, ``solo``, its discards
chosen by a one-player Monte Carlo). It plays ``fangcheng simulate --duplicate`` against
three strong bots, and the line printed is variant − strong per hand with its 95%
interval, its wins and deal-ins beside the strong bots' mean. A variant that keeps
every choice of the strong bot differs by exactly 0 (duplicate mode's seats draw alike),
so a 0.00 ± 0.00 says the change never mattered on these hands. ``efficient`` is the
reference: the strong bot's own margin.

The question it answers for issue 21: an expert must beat the strong bot by twice the
strong bot's margin over the efficient one; if no nearby heuristic is better, the gain
has to come from what the heuristics cannot express.
"""

from __future__ import annotations

import argparse
import random
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Final

from fangcheng.ai.sim import simulate
from fangcheng.players import bots as B
from fangcheng.players.bots import Bot, StrongBot, Table, register_bot
from fangcheng.protocol.actions import Act, Action
from fangcheng.protocol.observation import Observation
from fangcheng.rules.ruleset import ALL_RULES
from fangcheng.tiles.melds import Meld
from fangcheng.tiles.notation import KINDS


@contextmanager
def constant(name: str, value: object) -> Iterator[None]:
    """The strong bot's module constant ``name`` set to ``value`` for one call (a
    benchmark's shortcut: the bots read their tunings from module constants)."""
    old = getattr(B, name)
    setattr(B, name, value)
    try:
        yield
    finally:
        setattr(B, name, old)


def flush_credit(k: float) -> type[Bot]:
    class Flush(StrongBot):
        """A flush counts ``k`` times the steps nearer the strong bot credits it."""

        name = f"flush×{k}"

        def flushes(self, table: Table) -> list[B._Flush]:
            return [f._replace(credit=f.credit * k) for f in super().flushes(table)]

    return Flush


def self_draw(k: float) -> type[Bot]:
    class SelfDraw(StrongBot):
        """血战's discard win passed for a self-draw at threshold ``k`` (strong: 1.4)."""

        name = f"self-draw{k:g}"

        def wait_for_self_draw(self, table: Table) -> bool:
            with constant("_WAIT_FOR_SELF_DRAW", k):
                return super().wait_for_self_draw(table)

    return SelfDraw


class SecondStep8(StrongBot):
    """At distance 2 the best 8 discards are re-ranked two draws ahead (strong: 4)."""

    name = "second-step8"

    def ranked(
        self,
        table: Table,
        h14: bytes,
        melds: Sequence[Meld],
        faces: Sequence[int],
        at: int | None = None,
    ) -> list[tuple[int, float, int]]:
        with constant("_SECOND_STEP", 8):
            return super().ranked(table, h14, melds, faces, at)


class KongAlways(StrongBot):
    """Every kong offered is made while 8 or more tiles are left."""

    name = "kong-always"

    def kong(self, table: Table) -> Action | None:
        found = super().kong(table)
        if found is not None or table.obs.wall < 8:
            return found
        return next((a for a in table.obs.legal if a.kind in B._KONGS), None)


class NoFold(StrongBot):
    """Never folds: a declared seat is read as 0.99 ready, below the fold's 1.0."""

    name = "no-fold"

    def threats(self, obs: Observation) -> list[float]:
        return [min(t, 0.99) for t in super().threats(obs)]


class ClosedUntilReady(StrongBot):
    """Where 报听 exists, a closed hand calls (but for a kong) only to become ready:
    立门 is a fan both ways."""

    name = "closed-until-ready"

    def after_call(
        self, table: Table, hand: bytes, melds: tuple[Meld, ...], call: Action
    ) -> tuple[int, Callable[[], float]] | None:
        found = super().after_call(table, hand, melds, call)
        if found is None or call.kind is Act.GANG or not table.rules.declare_ready:
            return found
        if found[0] > 0 and not any(m.opens for m in table.melds):
            return None
        return found


class DeclaredValue(StrongBot):
    """A ready hand with one winning face is valued as declared (报听, a fan both ways),
    as the strong bot will declare it; the strong bot values it undeclared."""

    name = "declared-value"

    def ready_value(
        self, table: Table, h: bytes, melds: Sequence[Meld], ready: bool = False
    ) -> float:
        if table.rules.declare_ready and len(self.memo(table, melds).waits(h)) == 1:
            ready = True
        return super().ready_value(table, h, melds, ready)


def careful(share: float) -> type[Bot]:
    class Careful(StrongBot):
        """Of the discards at the least distance worth at least ``share`` of the best
        one's value, the least likely to deal in (`danger` against every seat's threat),
        unless it pursues a flush; the strong bot breaks only exact ties, at random,
        and weighs danger only when it folds against a declared seat."""

        name = f"careful{share:g}"

        def discard(self, table: Table, discards: Sequence[Action]) -> Action:
            threat = self.threats(table.obs)
            if max(threat) >= 1.0 or not any(threat):
                return super().discard(table, discards)
            flush = self.flush_discard(table, discards)
            if flush is not None:
                return flush
            ranked = self.ranked_discards(table, discards)
            least, top = ranked[0][0], -ranked[0][1]
            near = [(d, v, t) for d, v, t in ranked if d == least and -v >= share * top]
            return self.safest(table, discards, threat, near)

    return Careful


class Solo(StrongBot):
    """Discards by a one-player Monte Carlo: each discard at up to ``slack`` more than the
    least distance is followed by ``SAMPLES`` futures of the seat's own draws (the unseen
    tiles shuffled, the same futures for every discard), three other seats' discards
    between them (random unseen tiles it may win on), its own later discards the least
    distance's, ties at random, until it wins (valued by the scorer, a self-draw paid
    by every seat still playing with one more fan) or the wall ends (0). The best mean
    is taken. Against a declared seat, the strong bot's fold."""

    name = "solo"
    SAMPLES: Final = 48
    slack = 1

    def __init__(self, rng: random.Random) -> None:
        super().__init__(rng)
        self.futures = random.Random(repr(rng.getstate()))

    def discard(self, table: Table, discards: Sequence[Action]) -> Action:
        choice = super().discard(table, discards)
        obs, mine = table.obs, choice.tile
        if max(self.threats(obs)) >= 1.0 or mine is None:
            return choice
        memo = self.memo(table, table.melds)
        faces = self.discard_faces(table, discards)
        far = {t: memo.distance_at(h, s) for t, s, h in memo.discarded(obs.hand, faces)}
        least = min(far.values())
        options = sorted((t for t in far if far[t] <= least + self.slack), key=far.__getitem__)
        options = [*options[:6], *([mine] if mine not in options[:6] else [])]
        if len(options) < 2:
            return choice
        playing = sum(1 for v in obs.seats if not v.won)
        draws = max(1, obs.wall // max(1, playing))
        unseen = [t for t in range(KINDS) for _ in range(table.unseen[t])]
        totals = dict.fromkeys(options, 0.0)
        for _ in range(self.SAMPLES):
            future = unseen[:]
            self.futures.shuffle(future)
            seed = self.futures.getrandbits(32)
            for t in options:
                hand = bytearray(obs.hand)
                hand[t] -= 1
                totals[t] += self.future(table, hand, future, draws, playing, seed)
        best = max(options, key=totals.__getitem__)
        return B._discard_of(discards, best) if totals[best] > totals[mine] else choice

    def future(
        self, table: Table, hand: bytearray, future: list[int], draws: int, playing: int, seed: int
    ) -> float:
        rng, melds, memo = random.Random(seed), table.melds, self.memo(table, table.melds)
        at, cap = 0, table.rules.cap_fans
        waits = memo.waits(bytes(hand)) if memo.distance(bytes(hand)) == 0 else ()
        for _ in range(draws):
            for t in future[at : at + 3] if waits else ():
                if t in waits:
                    return self.worth(table, bytes(hand), melds, t, False)
            at += 3
            if at >= len(future):
                break
            t = future[at]
            at += 1
            if t in waits:
                ron = self.worth(table, bytes(hand), melds, t, False)
                return ron * (1 if cap is not None and ron >= 1 << cap else 2) * (playing - 1)
            hand[t] += 1
            held = B._held(hand)
            if table.que is not None:
                held = [x for x in held if x < 27 and x // 9 == table.que] or held
            d, close = memo.closest(bytes(hand), held)
            hand[close[0] if len(close) == 1 else rng.choice(close)] -= 1
            waits = memo.waits(bytes(hand)) if d == 0 else ()
        return 0.0


class SoloLeast(Solo):
    """`Solo` among the discards at the least distance only."""

    name = "solo-least"
    slack = 0


_CHANGED: Final[tuple[type[Bot], ...]] = (
    *(flush_credit(k) for k in (1.3, 2.0, 3.0)),
    *(self_draw(k) for k in (1.0, 2.0, 99.0)),
    SecondStep8,
    *(careful(k) for k in (0.9, 0.7, 0.5)),
    KongAlways,
    NoFold,
    ClosedUntilReady,
    DeclaredValue,
    Solo,
    SoloLeast,
)
VARIANTS: Final = {cls.name: cls for cls in _CHANGED}
for variant in VARIANTS.values():
    register_bot(variant)
#: The reference, already registered: the strong bot's own margin.
NAMES: Final = ["efficient", *VARIANTS]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("variants", nargs="*", default=NAMES, choices=NAMES)
    parser.add_argument("--rules", nargs="*", default=[r.name for r in ALL_RULES])
    parser.add_argument("--hands", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=11)
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()
    for name in args.variants:
        for rules in args.rules:
            start = time.monotonic()
            s = simulate(rules, args.hands, [name, "strong", "strong", "strong"],
                         seed=args.seed, workers=args.workers, duplicate=True)  # fmt: skip
            diff, ci = s.difference(name, "strong")
            me, strongs = s.seats[0], s.seats[1:]
            print(
                f"   {name:<20}{rules:<18}{s.hands:6} hands  − strong {diff:+6.2f} ± {ci:5.2f}"
                f"  wins {me.win_rate:.1%} / {sum(x.win_rate for x in strongs) / 3:.1%}"
                f"  deals in {me.deal_in_rate:.1%} / {sum(x.deal_in_rate for x in strongs) / 3:.1%}"
                f"  ({time.monotonic() - start:.0f} s)",
                flush=True,
            )


if __name__ == "__main__":
    main()
