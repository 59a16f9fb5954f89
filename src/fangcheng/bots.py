"""Bots: players that see one `Observation` and choose one of its legal actions.

A bot never decides what is legal (that is ``observation.legal``) and never judges a win:
hands are measured with `fangcheng.analysis.shanten`, `fangcheng.requirements.wait_set`
and `fangcheng.scoring.score`. Each bot draws its randomness from the seeded
`random.Random` it was built with, so a game of bots is reproduced by its seeds.

- `RandomBot` picks uniformly.
- `EfficientBot` minimises shanten (plus the tiles the rule set's win requirements still
  lack), then maximises the unseen tiles that advance the hand; a ready hand is valued by
  its live waits times what each wait would pay.
- `StrongBot` looks further ahead (one draw at distance 1, two at distance 2), values
  waits by their fans against the table as it is (who is closed), passes a cheap discard
  win in 血战 when a self-draw is likely to pay more, and folds against a declared 报听
  when its own hand is far, with the faces that seat has let pass known to be safe.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import ClassVar, Final

from .actions import Act, Action, called_meld
from .analysis import discard_shanten, draw_shanten, shanten
from .engine import Observation, Phase
from .melds import Meld, MeldKind
from .requirements import wait_set
from .rules import Options, RuleSet, find_rules
from .scoring import score
from .situation import Seat, Situation, WinBy
from .tiles import DRAGONS, KINDS, TERMINALS_AND_HONOURS

__all__ = ["BOTS", "Bot", "EfficientBot", "RandomBot", "StrongBot", "Table", "make_bot", "table_of"]

_TERMINAL: Final = frozenset(TERMINALS_AND_HONOURS)
#: The faces within two steps of each face, in its suit: the draws that can join it.
_NEAR: Final = tuple(
    (t,) if t >= 27 else tuple(x for x in range(t - 2, t + 3) if x // 9 == t // 9 and x >= 0)
    for t in range(KINDS)
)
_BLANK: Final = Seat(bytes(KINDS))
_CALLS: Final = (Act.PENG, Act.GANG, Act.CHI)
_CACHE_LIMIT: Final = 200_000
#: 血战: a discard win is passed when the self-draw is expected to pay this many times more.
_WAIT_FOR_SELF_DRAW: Final = 1.4
#: How many of the best discards at distance 2 `StrongBot` looks two draws ahead for.
_SECOND_STEP: Final = 4


class Bot:
    """A player: ``act`` returns one of ``observation.legal``."""

    name: ClassVar[str] = ""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng

    def act(self, observation: Observation) -> Action:
        raise NotImplementedError


class RandomBot(Bot):
    """Uniform over the legal actions: the baseline every other bot must beat."""

    name = "random"

    def act(self, observation: Observation) -> Action:
        return self.rng.choice(observation.legal)


@dataclass(frozen=True, slots=True)
class Table:
    """What one decision needs from the observation, computed once."""

    obs: Observation
    rules: RuleSet
    melds: tuple[Meld, ...]
    que: int | None
    unseen: tuple[int, ...]  # copies of each face not visible to this seat


def table_of(obs: Observation) -> Table:
    rules = find_rules(obs.rules)
    seen = bytearray(obs.hand)
    for s, view in enumerate(obs.seats):
        if view.revealed is not None and s != obs.seat:  # a hand laid face up (血战)
            for t in range(KINDS):
                seen[t] += view.revealed[t]
        for t in view.river:
            seen[t] += 1
        for meld in view.melds:
            for t in meld.tiles:
                seen[t] += 1
    if obs.treasure is not None:
        seen[obs.treasure] += 1  # the indicator itself is out of play
    for t in obs.retired:
        seen[t] += 1
    unseen = [0] * KINDS
    for t in rules.faces:
        unseen[t] = max(0, 4 - seen[t])
    me = obs.seats[obs.seat]
    return Table(obs, rules, me.melds, me.que, tuple(unseen))


@dataclass(frozen=True, slots=True)
class _Needs:
    """The rule set's win requirements a hand still lacks, counted as a distance (a
    heuristic steer; `wait_set` is the judge once the hand is ready)."""

    rules: RuleSet
    que: int | None
    missing: tuple[int, ...]  # first tiles of the suits 三门全 still needs
    no_terminal: bool  # 么九 still needed
    no_pung: bool  # 必须有碰: no pung, substitute, or two pairs to grow one from
    pairs: int
    dragons: int  # distinct dragons held
    total: int

    def gain(self, h: bytes | bytearray, t: int) -> int:
        """The change in ``total`` when ``t`` joins the hand (negative: closer)."""
        delta = 0
        if t < 27:
            base = t - t % 9
            if base == 9 * (self.que if self.que is not None else -1):
                delta += 1
            if base in self.missing:
                delta -= 1
        if self.no_terminal and t in _TERMINAL:
            delta -= 1
        if self.no_pung:
            rules = self.rules
            if (
                h[t] >= 2
                or (h[t] == 1 and self.pairs >= 1)
                or (rules.dragon_pair_is_pung and t in DRAGONS and h[t] == 1)
                or (rules.dragon_set_is_pung and t in DRAGONS and not h[t] and self.dragons == 2)
            ):
                delta -= 1
        return delta


def _needs(rules: RuleSet, h: bytes, melds: Sequence[Meld], que: int | None) -> _Needs:
    final = bytearray(h)
    for meld in melds:
        for t in meld.tiles:
            final[t] += 1
    void = sum(final[9 * que : 9 * que + 9]) if rules.void_suit and que is not None else 0
    missing = tuple(s for s in (0, 9, 18) if not any(final[s : s + 9])) if rules.three_suits else ()
    no_terminal = rules.terminal and not any(final[t] for t in TERMINALS_AND_HONOURS)
    pairs = sum(1 for c in h if c >= 2)
    dragons = sum(1 for t in DRAGONS if h[t])
    no_pung = rules.pung and not _pung_in_reach(rules, h, melds, pairs, dragons)
    total = void + len(missing) + no_terminal + no_pung
    return _Needs(rules, que, missing, no_terminal, no_pung, pairs, dragons, total)


def _pung_in_reach(
    rules: RuleSet, h: bytes, melds: Sequence[Meld], pairs: int, dragons: int
) -> bool:
    """A pung (or a rule set's substitute) is held, or two pairs leave one to become it."""
    for meld in melds:
        if meld.is_pung_like or (rules.dragon_set_is_pung and meld.kind is MeldKind.XUANFENG):
            return True
    if pairs >= 2 or max(h) >= 3:
        return True
    if rules.dragon_pair_is_pung and any(h[t] >= 2 for t in DRAGONS):
        return True
    return rules.dragon_set_is_pung and dragons == 3


class EfficientBot(Bot):
    """Tile efficiency, steered by the rule set's win requirements and the waits' worth."""

    name = "efficient"

    def __init__(self, rng: random.Random) -> None:
        super().__init__(rng)
        self._shanten: dict[tuple[str, bytes], int] = {}
        self._worth: dict[tuple[object, ...], int] = {}
        self._useful: dict[tuple[object, ...], tuple[int, ...]] = {}
        self._needs: dict[tuple[object, ...], _Needs] = {}

    # --- measuring hands -------------------------------------------------------------

    def needs(self, table: Table, h: bytes, melds: Sequence[Meld]) -> _Needs:
        key = (table.rules.name, h, tuple(melds), table.que)
        found = self._needs.get(key)
        if found is None:
            if len(self._needs) > _CACHE_LIMIT:
                self._needs.clear()
            found = self._needs[key] = _needs(table.rules, h, melds, table.que)
        return found

    def shanten_of(self, rules: RuleSet, h: bytes) -> int:
        key = (rules.name, h)
        value = self._shanten.get(key)
        if value is None:
            if len(self._shanten) > _CACHE_LIMIT:
                self._shanten.clear()
            value = self._shanten[key] = shanten(h, shapes=rules.shapes)
        return value

    def distance(self, table: Table, h: bytes, melds: Sequence[Meld]) -> int:
        """Shanten plus the requirements still missing; 0 only for a hand with live waits."""
        s = self.shanten_of(table.rules, h)
        if s == 0:
            return 0 if wait_set(table.rules, h, melds, table.que) else 1
        return s + self.needs(table, h, melds).total

    def worth(self, table: Table, h: bytes, melds: Sequence[Meld], tile: int, ready: bool) -> int:
        """What a discard win on ``tile`` would pay, by the scorer (seat 0 is this seat),
        against three closed seats."""
        return self.scored_worth(table, h, melds, tile, ready, (_BLANK, _BLANK, _BLANK))

    def scored_worth(
        self,
        table: Table,
        h: bytes,
        melds: Sequence[Meld],
        tile: int,
        ready: bool,
        others: tuple[Seat, Seat, Seat],
    ) -> int:
        """A discard win on ``tile`` as the scorer pays it, the other seats as given."""
        obs = table.obs
        dealer = (obs.dealer - obs.seat) % 4
        key: tuple[object, ...] = (
            table.rules.name, h, tuple(melds), tile, ready, dealer, obs.treasure, table.que,
            *others,
        )  # fmt: skip
        value = self._worth.get(key)
        if value is None:
            if len(self._worth) > _CACHE_LIMIT:
                self._worth.clear()
            result = score(
                Situation(
                    rules=table.rules,
                    options=Options(que=(table.que, 0, 0, 0))
                    if table.que is not None
                    else Options(),
                    dealer=dealer,
                    winner=0,
                    win_tile=tile,
                    win_by=WinBy.DISCARD,
                    source=1,
                    treasure=obs.treasure,
                    declared_ready=(ready, False, False, False),
                    seats=(Seat(h, tuple(melds)), *others),
                )
            )
            value = self._worth[key] = max(result.deltas[0], 1) if result.win else 1
        return value

    def ready_value(
        self, table: Table, h: bytes, melds: Sequence[Meld], ready: bool = False
    ) -> float:
        """Live waits times their worth; in baicheng the treasure face wins too (摸宝)."""
        waits = wait_set(table.rules, h, melds, table.que)
        if not waits:
            return 0.0
        unseen = table.unseen
        worths = [self.worth(table, h, melds, w, ready) for w in waits]
        value = float(sum(unseen[w] * v for w, v in zip(waits, worths, strict=True)))
        treasure = table.obs.treasure
        if treasure is not None and treasure not in waits:
            value += unseen[treasure] * max(worths)
        return value

    def assess(self, table: Table, h: bytes, melds: Sequence[Meld]) -> tuple[int, float]:
        """(distance, value) of a hand of ``13 - 3k`` tiles: lower distance first, then
        more value (worth-weighted live waits when ready, else the unseen useful draws)."""
        d = self.distance(table, h, melds)
        if d == 0:
            return 0, self.ready_value(table, h, melds)
        return d, float(self.useful(table, h, melds, d))

    def useful(self, table: Table, h: bytes, melds: Sequence[Meld], d: int) -> int:
        """Unseen copies of the faces whose draw lowers the distance (ukeire)."""
        unseen = table.unseen
        return sum(unseen[t] for t in self.useful_faces(table, h, melds, d))

    def useful_faces(
        self, table: Table, h: bytes, melds: Sequence[Meld], d: int
    ) -> tuple[int, ...]:
        """The faces whose draw lowers the distance: a property of the hand alone, so it
        is remembered (the hand that kept its drawn tile comes back next turn)."""
        rules = table.rules
        key = (rules.name, h, tuple(melds), table.que)
        found = self._useful.get(key)
        if found is not None:
            return found
        if len(self._useful) > _CACHE_LIMIT:
            self._useful.clear()
        needs = self.needs(table, h, melds)
        after = draw_shanten(h, shapes=rules.shapes)
        out = [
            t for t in self.draws(rules, h, needs) if after[t] + needs.total + needs.gain(h, t) < d
        ]
        found = self._useful[key] = tuple(out)
        return found

    def draws(self, rules: RuleSet, h: bytes | bytearray, needs: _Needs) -> list[int]:
        """Faces worth trying as the next draw: near a held tile, or filling a requirement."""
        near: set[int] = set()
        for x in range(KINDS):
            if h[x]:
                near.update(_NEAR[x])
        for base in needs.missing:
            near.update(range(base, base + 9))
        if needs.no_terminal:
            near.update(_TERMINAL)
        return [t for t in rules.faces if t in near and h[t] < 4]

    # --- choosing --------------------------------------------------------------------

    def act(self, observation: Observation) -> Action:
        legal = observation.legal
        if len(legal) == 1:
            return legal[0]
        for action in legal:
            if action.kind is Act.HU:
                return action
        table = table_of(observation)
        phase = observation.phase
        if phase is Phase.PIAO:
            return min(legal, key=lambda a: a.value)
        if phase is Phase.QUE:
            return self.choose_que(observation)
        if phase is Phase.TURN:
            return self.turn(table)
        calls = [a for a in legal if a.kind in _CALLS]
        if calls:
            return self.claim(table, calls)
        return next(a for a in legal if a.kind is Act.PASS)

    def choose_que(self, obs: Observation) -> Action:
        """定缺: the suit with the fewest tiles; ties go to the one with fewer pairs and
        neighbours (the least useful)."""
        h = obs.hand

        def weight(a: Action) -> tuple[int, int]:
            suit = h[9 * a.value : 9 * a.value + 9]
            links = sum(1 for c in suit if c >= 2)  # pairs, then neighbours one or two apart
            links += sum(
                1 for i in range(8) for j in (i + 1, i + 2) if j < 9 and suit[i] and suit[j]
            )
            return sum(suit), links

        return min(obs.legal, key=weight)

    def turn(self, table: Table) -> Action:
        legal = table.obs.legal
        kong = self.kong(table)
        if kong is not None:
            return kong
        discards = [a for a in legal if a.kind is Act.DISCARD]
        if len(discards) == 1 and not any(a.kind is Act.READY for a in legal):
            return discards[0]
        choice = self.discard(table, discards)
        assert choice.tile is not None
        for a in legal:
            if a.kind is Act.READY and a.tile == choice.tile and self.declare(table, a):
                return a
        return choice

    def declare(self, table: Table, ready: Action) -> bool:
        """报听 whenever it is offered on the chosen discard (the wait is live)."""
        assert ready.tile is not None
        h = bytearray(table.obs.hand)
        h[ready.tile] -= 1
        return any(table.unseen[w] for w in wait_set(table.rules, bytes(h), table.melds, table.que))

    def ranked(
        self, table: Table, h14: bytes, melds: Sequence[Meld], faces: Sequence[int]
    ) -> list[tuple[int, float, int]]:
        """(distance, -value, face) for each discard of ``faces``, best first; the value
        is only computed for the discards at the least distance."""
        hand = bytearray(h14)
        after_discard = discard_shanten(h14, shapes=table.rules.shapes)
        first = []
        for t in faces:
            hand[t] -= 1
            key = bytes(hand)
            self._shanten[table.rules.name, key] = after_discard[t]  # one lookup for all
            first.append((self.distance(table, key, melds), t))
            hand[t] += 1
        best = min(d for d, _ in first)
        out = []
        for d, t in first:
            if d > best:
                out.append((d, 0.0, t))
                continue
            hand[t] -= 1
            after = bytes(hand)
            hand[t] += 1
            value = self.value_after(table, after, melds, d)
            out.append((d, -value, t))
        out.sort()
        return out

    def value_after(self, table: Table, h: bytes, melds: Sequence[Meld], d: int) -> float:
        """How good a hand at distance ``d`` is; `StrongBot` looks further ahead."""
        if d == 0:
            return self.ready_value(table, h, melds)
        return float(self.useful(table, h, melds, d))

    def discard_faces(self, table: Table, discards: Sequence[Action]) -> list[int]:
        """The faces that may be discarded; 缺 tiles go first (sichuan)."""
        faces = [a.tile for a in discards if a.tile is not None]
        if table.que is not None:
            void = [t for t in faces if t < 27 and t // 9 == table.que]
            if void:
                return void
        return faces

    def discard(self, table: Table, discards: Sequence[Action]) -> Action:
        faces = self.discard_faces(table, discards)
        ranked = self.ranked(table, table.obs.hand, table.melds, faces)
        top = [t for d, v, t in ranked if (d, v) == ranked[0][:2]]
        tile = top[0] if len(top) == 1 else self.rng.choice(top)
        return next(a for a in discards if a.tile == tile)

    def kong(self, table: Table) -> Action | None:
        """A kong (or a 旋风杠 addition) that keeps the hand's distance: it pays, and draws."""
        obs = table.obs
        h = obs.hand
        options = [
            a for a in obs.legal if a.kind in (Act.AN_GANG, Act.BU_GANG, Act.ADD, Act.XUANFENG)
        ]
        if not options:
            return None
        locked = not any(a.kind is Act.DISCARD and a.tile != obs.drawn for a in obs.legal)
        if locked:  # 报听 or a sichuan winner: the engine offers only wait-keeping kongs
            return options[0]
        faces = [t for t in range(KINDS) if h[t]]
        best = self.ranked(table, h, table.melds, faces)[0][0]
        for a in options:
            hand = bytearray(h)
            if a.kind is Act.XUANFENG:
                if not any(h[t] >= 2 for t in DRAGONS):
                    continue  # laying the set only opens the hand; it pays concealed too
                for t in DRAGONS:
                    hand[t] -= 1
                melds = [*table.melds, Meld(MeldKind.XUANFENG, (33, 32, 31))]
                after = min(
                    (d for d, _, _ in self.ranked(table, bytes(hand), melds, _held(hand))),
                    default=best,
                )
            else:
                assert a.tile is not None
                hand[a.tile] -= 4 if a.kind is Act.AN_GANG else 1
                after = self.distance(table, bytes(hand), table.melds)
            if after <= best:
                return a
        return None

    def claim(self, table: Table, calls: Sequence[Action]) -> Action:
        """Call when the hand after it (and its best discard) beats the hand without it."""
        obs = table.obs
        h = obs.hand
        assert obs.last_discard is not None
        source, tile = obs.last_discard
        now = self.assess(table, h, table.melds)
        best: tuple[tuple[int, float], Action] | None = None
        for a in calls:
            hand = bytearray(h)
            meld, taken = called_meld(a, tile, source)
            for x in taken:
                hand[x] -= 1
            melds = [*table.melds, meld]
            if a.kind is Act.GANG:
                after = self.assess(table, bytes(hand), melds)
            else:
                held = _held(hand)
                if not held:
                    continue
                d, v, _ = self.ranked(table, bytes(hand), melds, held)[0]
                after = (d, -v)
            if self.accept_call(table, a, now, after) and (
                best is None or _key(after) < _key(best[0])
            ):
                best = (after, a)
        if best is not None:
            return best[1]
        return next(a for a in obs.legal if a.kind is Act.PASS)

    def accept_call(
        self, table: Table, call: Action, now: tuple[int, float], after: tuple[int, float]
    ) -> bool:
        """Lower distance, or the same with more value (a kong never costs distance)."""
        if call.kind is Act.GANG:
            return after[0] <= now[0]
        return _key(after) < _key(now)


def _held(hand: bytes | bytearray) -> list[int]:
    return [t for t in range(KINDS) if hand[t]]


def _key(assessed: tuple[int, float]) -> tuple[int, float]:
    return assessed[0], -assessed[1]


class StrongBot(EfficientBot):
    """Efficiency with look-ahead, hands valued at the real table, and defence.

    - Near ready (distance 1) a discard is valued by every draw that makes the hand ready
      and by the best ready hand that draw allows (waits × fans × live tiles); at distance
      2 the best few discards are re-ranked by the draws that reach distance 1 times the
      useful draws of the best hand they allow (two draws ahead).
    - A ready hand's fans are scored against the other seats as open or closed as they
      are (立门, 门清, 三家清 and 四家清 depend on them), not against a closed table.
    - 血战 (sichuan): a discard win is passed while a self-draw, paid by every seat still
      playing with one more fan, is expected to pay more (`wait_for_self_draw`).
    - Defence: each other seat's chance of being ready (declared 报听: 1; else from its
      discards and calls, fitted on efficient play) and each face's chance of completing
      its wait (the unseen wait patterns; 0 for its 缺 suit and for the faces it let pass
      since its hand last changed, as bots always take a win). A hand two or more from
      ready discards the safest tile against a declared seat. (Trading efficiency for
      safety against undeclared seats measured worse against efficient play.)
    """

    name = "strong"

    def __init__(self, rng: random.Random) -> None:
        super().__init__(rng)
        self._rivers = [0, 0, 0, 0]  # river lengths at the last observation
        self._declared = [False, False, False, False]
        self._passed: list[set[int]] = [set(), set(), set(), set()]
        self._opens: tuple[bool, ...] = (False, False, False, False)

    def act(self, observation: Observation) -> Action:
        self.track(observation)
        if (
            observation.phase is not Phase.TURN
            and observation.wall > 4  # the last four tiles: a passed win makes a 花猪
            and any(a.kind is Act.HU for a in observation.legal)
        ):
            table = table_of(observation)
            if self.wait_for_self_draw(table):
                return next(a for a in observation.legal if a.kind is Act.PASS)
        return super().act(observation)

    def wait_for_self_draw(self, table: Table) -> bool:
        """血战 (a discard win paid by the discarder alone, a self-draw by every seat still
        playing, one more fan): pass a discard win when the chance of drawing a winning
        tile oneself, times what a self-draw pays more, beats it. Passing costs nothing
        but time: the next discard of a winning tile can still be taken."""
        rules, obs = table.rules, table.obs
        if not (rules.discarder_only and rules.unfinished_pay_self_draw):
            return False
        assert obs.last_discard is not None
        h = obs.hand
        live = sum(table.unseen[w] for w in wait_set(rules, h, table.melds, table.que))
        pool = max(1, sum(table.unseen))
        playing = sum(1 for v in obs.seats if not v.won)
        draws = obs.wall / max(1, playing)
        chance: float = 1.0 - (1.0 - min(1.0, live / pool)) ** draws
        ron = self.worth(table, h, table.melds, obs.last_discard[1], False)
        capped = rules.cap_fans is not None and ron >= 1 << rules.cap_fans
        return chance * (1 if capped else 2) * (playing - 1) >= _WAIT_FOR_SELF_DRAW

    # --- what the table shows ----------------------------------------------------------

    def track(self, obs: Observation) -> None:
        """Update, per other seat, the faces it has let pass since its hand last changed."""
        me = obs.seat
        views = obs.seats
        new: list[tuple[int, ...]] = []
        for s, view in enumerate(views):
            before = self._rivers[s]
            new.append(view.river[before:] if len(view.river) >= before else ())
        end = obs.last_discard[0] if obs.last_discard is not None else (me - 1) % 4
        for s, view in enumerate(views):
            if s == me:
                continue
            passed = self._passed[s]
            if self._declared[s] and view.ready:  # locked: every face seen since is safe
                for tiles in new:
                    passed.update(tiles)
            elif new[s]:  # it discarded: only what came after counts
                passed.clear()
                for k in range(1, (end - s) % 4 + 1):
                    passed.update(new[(s + k) % 4])
            else:
                for x in range(4):
                    if x != s:
                        passed.update(new[x])
        self._rivers = [len(v.river) for v in views]
        self._declared = [v.ready for v in views]
        self._opens = tuple(s != me and any(m.opens for m in v.melds) for s, v in enumerate(views))

    def threats(self, obs: Observation) -> list[float]:
        """How likely each other seat is to be ready (0 for this seat and for winners):
        declared, or estimated from its discards and calls (fitted on efficient play)."""
        per_discard = 0.045 if obs.rules == "sichuan" else 0.035
        out = []
        for s, view in enumerate(obs.seats):
            if s == obs.seat or view.won:
                out.append(0.0)
            elif view.ready:
                out.append(1.0)
            else:
                calls = sum(1 for m in view.melds if m.opens)
                p = per_discard * len(view.river) + 0.12 * calls - 0.05
                out.append(min(0.9, max(0.0, p)))
        return out

    def danger(self, table: Table, tile: int, threat: Sequence[float], norm: float) -> float:
        """The chance that discarding ``tile`` deals in: per seat, its threat times the
        share of the unseen wait patterns (two-sided, closed, edge, pair) ending on it."""
        obs, unseen = table.obs, table.unseen
        ways = _wait_ways(unseen, tile) / norm
        total = 0.0
        for s, p in enumerate(threat):
            if not p:
                continue
            view = obs.seats[s]
            if view.que is not None and tile < 27 and tile // 9 == view.que:
                continue  # a tile of its 缺 suit can never win for it
            if tile in self._passed[s]:
                continue
            share = ways
            if tile in view.river:
                share *= 0.5
            total += p * min(1.0, share)
        return min(1.0, total)

    # --- valuing hands -----------------------------------------------------------------

    def worth(self, table: Table, h: bytes, melds: Sequence[Meld], tile: int, ready: bool) -> int:
        """A discard win on ``tile`` scored against the other seats as open or closed as
        they are (立门 / 门清 / 三家清 / 四家清 depend on them)."""
        if not any(self._opens):
            return super().worth(table, h, melds, tile, ready)
        obs = table.obs
        opens = [self._opens[(obs.seat + k) % 4] for k in (1, 2, 3)]
        others = (
            _OPEN if opens[0] else _BLANK,
            _OPEN if opens[1] else _BLANK,
            _OPEN if opens[2] else _BLANK,
        )
        return self.scored_worth(table, h, melds, tile, ready, others)

    def value_after(self, table: Table, h: bytes, melds: Sequence[Meld], d: int) -> float:
        if d != 1:
            return super().value_after(table, h, melds, d)
        unseen = table.unseen
        grown = bytearray(h)
        total = 0.0
        for t in self.useful_faces(table, h, melds, d):
            if unseen[t]:
                grown[t] += 1
                total += unseen[t] * self.best_ready(table, grown, melds)
                grown[t] -= 1
        return total / max(1, sum(unseen))

    def ranked(
        self, table: Table, h14: bytes, melds: Sequence[Meld], faces: Sequence[int]
    ) -> list[tuple[int, float, int]]:
        """As `EfficientBot.ranked`; at distance 2 the best few discards are re-ranked by
        the draws that lead to distance 1 times the useful draws of the best such hand."""
        out = super().ranked(table, h14, melds, faces)
        if out[0][0] != 2 or len(out) < 2:
            return out
        top = [r for r in out[:_SECOND_STEP] if r[0] == 2]
        if len(top) < 2:
            return out
        hand = bytearray(h14)
        again = []
        for _, v, t in top:
            hand[t] -= 1
            again.append((2, -self.second_step(table, hand, melds), v, t))
            hand[t] += 1
        again.sort()
        return [(d, v, t) for d, _, v, t in again] + out[len(top) :]

    def second_step(self, table: Table, hand: bytearray, melds: Sequence[Meld]) -> float:
        """Σ over useful draws of their unseen copies × the useful draws of the best hand
        at distance 1 that the draw allows."""
        unseen = table.unseen
        total = 0.0
        for t in self.useful_faces(table, bytes(hand), melds, 2):
            if not unseen[t]:
                continue
            hand[t] += 1
            after = discard_shanten(bytes(hand), shapes=table.rules.shapes)
            best = 0
            for u in _held(hand):
                if after[u] > 1:
                    continue
                hand[u] -= 1
                h = bytes(hand)
                if self.distance(table, h, melds) == 1:
                    best = max(best, self.useful(table, h, melds, 1))
                hand[u] += 1
            hand[t] -= 1
            total += unseen[t] * best
        return total

    def best_ready(self, table: Table, grown: bytearray, melds: Sequence[Meld]) -> float:
        """The best ready value reachable by one discard from a hand of ``14 - 3k``."""
        best = 0.0
        for t in _held(grown):
            grown[t] -= 1
            h = bytes(grown)
            if self.shanten_of(table.rules, h) == 0:
                best = max(best, self.ready_value(table, h, melds))
            grown[t] += 1
        return best

    # --- choosing ----------------------------------------------------------------------

    def discard(self, table: Table, discards: Sequence[Action]) -> Action:
        """Efficiency first; a hand two or more from ready folds against a declared seat
        (its waits are fixed, and every face it let pass since is known safe)."""
        threat = self.threats(table.obs)
        if max(threat) < 1.0:
            return super().discard(table, discards)
        faces = self.discard_faces(table, discards)
        ranked = self.ranked(table, table.obs.hand, table.melds, faces)
        if ranked[0][0] < 2:
            return super().discard(table, discards)
        norm = _all_ways(table.unseen)
        order = {t: i for i, (_, _, t) in enumerate(ranked)}
        tile = min(order, key=lambda t: (round(self.danger(table, t, threat, norm), 3), order[t]))
        return next(a for a in discards if a.tile == tile)


#: Another seat that has opened its hand, as the scorer needs to see it (立门, 三家清 …).
_OPEN: Final = Seat(bytes(KINDS), (Meld(MeldKind.PENG, (0, 0, 0)),))


def _wait_ways(unseen: Sequence[int], t: int) -> float:
    """Weighted count of the partial shapes an unseen hand could hold that wait on ``t``."""
    u = unseen[t]
    ways = u * (u - 1) / 2 + u * 0.5  # a pair becoming a pung; a single becoming the pair
    if t < 27:
        r = t % 9
        for a, b in ((-2, -1), (-1, 1), (1, 2)):
            if 0 <= r + a <= 8 and 0 <= r + b <= 8:
                ways += unseen[t + a] * unseen[t + b]
    return ways


def _all_ways(unseen: Sequence[int]) -> float:
    return max(1.0, sum(_wait_ways(unseen, t) for t in range(KINDS)) / 2)


BOTS: Final[dict[str, Callable[[random.Random], Bot]]] = {
    cls.name: cls for cls in (RandomBot, EfficientBot, StrongBot)
}


def make_bot(name: str, rng: random.Random) -> Bot:
    """The bot registered under ``name``, drawing its randomness from ``rng``."""
    try:
        return BOTS[name](rng)
    except KeyError:
        raise ValueError(f"unknown bot {name!r}; bots: {', '.join(BOTS)}") from None
