"""Bots: players that see one `Observation` and choose one of its legal actions.

A bot never decides what is legal (that is ``observation.legal``) and never judges a win:
hands are measured with `fangcheng.analysis.hand.shanten`, `fangcheng.rules.requirements.wait_set`
and `fangcheng.scoring.scorer.score`. Each bot draws its randomness from the seeded
`random.Random` it was built with, so a game of bots is reproduced by its seeds.

- `RandomBot` picks uniformly.
- `EfficientBot` minimises shanten (plus the tiles the rule set's win requirements still
  lack), then maximises the unseen tiles that advance the hand; a ready hand is valued by
  its live waits times what each wait would pay.
- `StrongBot` looks further ahead (one draw at distance 1, two at distance 2), values
  waits by their fans against the table as it is (who is closed), chooses its 缺 by the
  hand it leaves, passes a cheap discard win in 血战 when a self-draw is likely to pay
  more, makes kongs that cost one step of distance while the wall is long, and folds
  against a declared 报听 when its own hand is far, with the faces that seat has let
  pass known to be safe.
"""

from __future__ import annotations

import argparse
import random
from collections.abc import Callable, Iterable, Iterator, Sequence
from functools import cache
from itertools import compress
from typing import ClassVar, Final, NamedTuple, TypeVar

from fangcheng.analysis.hand import (
    KERNEL,
    discard_shanten,
    draw_shanten_bytes,
    shanten,
    shanten_flush,
)
from fangcheng.protocol.actions import Act, Action, called_meld
from fangcheng.protocol.observation import Observation, Phase
from fangcheng.rules.requirements import final_counts, meld_has_pung, wait_set
from fangcheng.rules.ruleset import Options, RuleSet
from fangcheng.scoring.scorer import score
from fangcheng.scoring.situation import Seat, Situation, WinBy
from fangcheng.tiles.melds import Meld, MeldKind
from fangcheng.tiles.notation import DRAGONS, KINDS, TERMINALS_AND_HONOURS

__all__ = [
    "BOTS",
    "Bot",
    "BotKindError",
    "EfficientBot",
    "RandomBot",
    "StrongBot",
    "Table",
    "bot_kind",
    "make_bot",
    "register_bot",
    "table_of",
]


def _face_mask(faces: Iterable[int]) -> int:
    """``faces`` as a mask of 34 bytes, 1 for each face, read like a hand's counts by
    ``int.from_bytes`` (face 0 the highest byte): sets of faces then combine in C."""
    chosen = set(faces)
    return int.from_bytes(bytes(t in chosen for t in range(KINDS)))


#: Each suit's nine faces, by its first tile.
_SUIT_MASK: Final = {base: _face_mask(range(base, base + 9)) for base in (0, 9, 18)}
_TERMINAL_MASK: Final = _face_mask(TERMINALS_AND_HONOURS)
_TERMINAL_COUNTS: Final = 255 * _TERMINAL_MASK  # with a hand's counts: its terminals' counts
_DRAGON_MASK: Final = _face_mask(DRAGONS)
#: A mask shifted by 8 bits per step moves each face one face down (``<<``) or up (``>>``):
#: the faces that such a step reaches without leaving the suit, by step.
_DOWN1, _DOWN2 = (_face_mask(t for t in range(27) if t % 9 < 9 - k) for k in (1, 2))
_UP1, _UP2 = (_face_mask(t for t in range(27) if t % 9 >= k) for k in (1, 2))
#: Added to each draw shanten (from -1) in a byte, so that a gain (from -3) keeps it ≥ 0.
_BIAS: Final = 4
#: A draw shanten's signed byte to itself plus `_BIAS`, as a translation table.
_BIASED: Final = bytes((value + _BIAS) % 256 for value in range(256))
_HELD: Final = bytes(min(count, 1) for count in range(256))  # translation: held or not
_FACES: Final = range(KINDS)
#: One of a face, as a mask; a dict, as its ``__getitem__`` is a plain C method (a
#: tuple's is a slot wrapper, slower to call from ``map``).
_UNIT: Final = {t: 1 << 8 * (KINDS - 1 - t) for t in range(KINDS)}
_NO_SUIT: Final = bytes(9)
_HONOURS: Final = KINDS - 27  # honour faces
_HONOUR_ROW: Final = 27 // 9  # ``t // 9`` of every honour, beside the suits' 0, 1, 2
_FAR: Final = 99  # beyond any distance
#: Copies left of a face seen ``count`` times (never below 0), as a translation table.
_LEFT: Final = bytes(max(0, 4 - count) for count in range(256))
_DRAGONS: Final = slice(DRAGONS[0], DRAGONS[-1] + 1)
_BLANK: Final = Seat(bytes(KINDS))
#: How much likelier an unready seat gets ready with each discard (fitted on efficient
#: play). Under 缺一门 a hand plays two suits and throws the third at once, so its
#: discards bring it to ready sooner (fitted on sichuan).
_READY_PER_DISCARD: Final = 0.035
_READY_PER_DISCARD_TWO_SUITS: Final = 0.045
# Enum members read on every decision, looked up once: a lookup on the class is slow.
_HU, _PASS, _DISCARD, _READY, _GANG = Act.HU, Act.PASS, Act.DISCARD, Act.READY, Act.GANG
_CALLS: Final = (Act.PENG, _GANG, Act.CHI)
_KONGS: Final = (Act.AN_GANG, Act.BU_GANG, Act.ADD, Act.XUANFENG)  # a turn's, 旋风杠 too
_TURN = Phase.TURN
_CACHE_LIMIT: Final = 200_000
#: 血战: a discard win is passed when the self-draw is expected to pay this many times more.
_WAIT_FOR_SELF_DRAW: Final = 1.4
#: How many of the best discards at distance 2 `StrongBot` looks two draws ahead for.
_SECOND_STEP: Final = 4
#: `StrongBot` makes a kong that costs this much distance while the wall holds at least
#: `_KONG_WALL` tiles: its coins are paid whether or not the hand wins, and it draws.
_KONG_SLACK: Final = 1
_KONG_WALL: Final = 16
#: `StrongBot` pursues a flush while the wall holds at least this many tiles, crediting
#: it with this many steps of distance, by its fans (1, or 2 and more).
_FLUSH_WALL: Final = 30
_FLUSH_CREDIT: Final = {1: 0.75, 2: 1.5}
_V = TypeVar("_V")
#: The compiled kernel, or None: `_Memo` then measures in Python (its reference; the
#: differential test plays both ways). A kernel built before it had the bots' functions
#: (an editable install not rebuilt since) is not used.
_KERNEL = KERNEL if hasattr(KERNEL, "bot_useful_after") else None


class Bot:
    """A player: ``act`` returns one of ``observation.legal``."""

    name: ClassVar[str] = ""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng

    def act(self, observation: Observation) -> Action:
        raise NotImplementedError

    def replay(self, observation: Observation, action: Action) -> Action | None:
        """A rebuilt table's replay of its log: the table took ``action`` for this bot at
        ``observation``. The bot comes to the state its deciding there left it in (its
        generator's draws, what it read of the table), so that it plays on as it would
        have without the rebuild; it returns its choice, for the caller to check against
        the log (None: not made again, as a search would cost too much)."""
        return self.act(observation)

    def restart(self, rng: random.Random) -> None:
        """Play a new hand drawing from ``rng``, as a new bot of the kind would."""
        self.rng = rng

    @classmethod
    def budgeted(cls, rng: random.Random, playouts: int) -> Bot:
        """A bot of this kind with ``playouts`` per decision (``kind@N``, `make_bot`):
        only a bot that searches has a budget."""
        raise BotKindError(f"the {cls.name} bot does not search: it takes no @playouts")


class RandomBot(Bot):
    """Uniform over the legal actions: the baseline every other bot must beat."""

    name = "random"

    def act(self, observation: Observation) -> Action:
        return self.rng.choice(observation.legal)


class Table(NamedTuple):
    """What one decision needs from the observation, computed once (a named tuple: its
    fields are read on every valuation)."""

    obs: Observation
    rules: RuleSet
    melds: tuple[Meld, ...]
    que: int | None
    unseen: bytes  # copies of each face not visible to this seat
    left: int  # ``unseen`` as a mask (face 0 the highest byte)


def table_of(obs: Observation) -> Table:
    rules = obs.rules
    seen = int.from_bytes(obs.hand)  # counts, summed as masks: no face is seen 256 times
    shown = list(obs.retired)
    if obs.treasure is not None:
        shown.append(obs.treasure)  # the indicator itself is out of play
    for s, view in enumerate(obs.seats):
        if view.revealed is not None and s != obs.seat:  # a hand laid face up (血战)
            seen += int.from_bytes(view.revealed)
        shown += view.river
        for meld in view.melds:
            shown += meld.tiles
    seen += sum(map(_UNIT.__getitem__, shown))
    left = int.from_bytes(seen.to_bytes(KINDS).translate(_LEFT)) & 255 * _in_play(rules.faces)
    me = obs.seats[obs.seat]
    return Table(
        obs=obs, rules=rules, melds=me.melds, que=me.que, unseen=left.to_bytes(KINDS), left=left
    )


@cache
def _in_play(faces: tuple[int, ...]) -> int:
    """A mask of 34 bytes (big-endian), 1 for each face the rule set plays with."""
    return _face_mask(faces)


class _Needs(NamedTuple):
    """The rule set's win requirements a hand still lacks, counted as a distance (a
    heuristic steer; `wait_set` is the judge once the hand is ready)."""

    total: int
    missing: tuple[int, ...]  # first tiles of the suits 三门全 still needs
    no_terminal: bool  # 么九 still needed
    no_pung: bool  # 必须有碰: no pung, substitute, or two pairs to grow one from


_NOTHING: Final = _Needs(total=0, missing=(), no_terminal=False, no_pung=False)


class _Memo:
    """What one bot has measured of concealed hands under one rule set, set of laid melds
    and 缺: each measure is then a property of the concealed counts alone, so it is
    remembered by them (the hand a seat keeps is measured again for every claim decision
    until its next turn, and each discard's hand for the look-ahead)."""

    __slots__ = (
        "after", "in_play", "kernel", "melds", "needed", "open_suits", "profile", "pung_open",
        "que", "que_gains", "rules", "shapes", "steps", "terminal_open", "usefuls", "void",
        "void_laid", "waited",
    )  # fmt: skip

    def __init__(self, rules: RuleSet, melds: tuple[Meld, ...], que: int | None) -> None:
        self.rules, self.melds, self.que = rules, melds, que
        self.shapes = rules.shapes
        self.in_play = _in_play(rules.faces)
        #: every hand's part of the draws' gains (`gains` adds the requirements' part):
        #: a 缺 tile sets it back
        self.que_gains = _SUIT_MASK[9 * que] if que is not None else 0
        laid = final_counts(bytes(KINDS), melds)
        #: the first tile of the 缺 suit when 缺一门 counts its tiles, and how many are laid
        self.void = 9 * que if rules.void_suit and que is not None else None
        self.void_laid = sum(laid[self.void : self.void + 9]) if self.void is not None else 0
        #: the requirements the laid melds leave to the concealed hand: 三门全's suits
        #: none is laid in, 么九, 必须有碰
        self.open_suits: tuple[int, ...] = ()
        if rules.three_suits:
            self.open_suits = tuple(s for s in (0, 9, 18) if laid[s : s + 9] == _NO_SUIT)
        self.terminal_open = rules.terminal and not int.from_bytes(laid) & _TERMINAL_COUNTS
        self.pung_open = rules.pung and not any(meld_has_pung(rules, m) for m in melds)
        self.steps: dict[bytes, int] = {}  # shanten
        self.after: dict[bytes, tuple[int, ...]] = {}  # discard_shanten of 14 - 3k tiles
        self.waited: dict[bytes, tuple[int, ...]] = {}  # wait_set
        self.needed: dict[bytes, _Needs] = {}
        self.usefuls: dict[bytes, bytes] = {}
        #: the kernel that measures in one call what the methods below loop over, or None
        #: (they then work it out in Python, as the kernel's reference does)
        self.kernel = _KERNEL
        self.profile = self.profiled()

    def profiled(self) -> bytes:
        """The memo's constants as the kernel reads them (``P_`` in ``_kernel.c``)."""
        rules, shapes = self.rules, self.shapes
        flags = shapes.seven_pairs | shapes.quad_pairs << 1 | shapes.thirteen_orphans << 2
        head = (
            255 if self.void is None else self.void,
            self.void_laid,
            sum(1 << s // 9 for s in self.open_suits),
            self.terminal_open,
            self.pung_open,
            rules.dragon_pair_is_pung,
            rules.dragon_set_is_pung,
            flags,
            shapes.dragon_set,
        )
        return bytes(head) + self.que_gains.to_bytes(KINDS) + self.in_play.to_bytes(KINDS)

    def shanten(self, h: bytes) -> int:
        found = self.steps.get(h)
        if found is None:
            found = _bounded(self.steps)[h] = shanten(h, shapes=self.shapes)
        return found

    def waits(self, h: bytes) -> tuple[int, ...]:
        found = self.waited.get(h)
        if found is None:
            found = _bounded(self.waited)[h] = wait_set(self.rules, h, self.melds, self.que)
        return found

    def needs(self, h: bytes) -> _Needs:
        found = self.needed.get(h)
        if found is None:
            found = _bounded(self.needed)[h] = self.lacking(h)
        return found

    def lacking(self, h: bytes) -> _Needs:
        """`needs` worked out: the laid melds' part is counted once, in ``__init__``."""
        void = self.void_laid + sum(h[self.void : self.void + 9]) if self.void is not None else 0
        missing: tuple[int, ...] = ()
        if self.open_suits:
            missing = tuple(s for s in self.open_suits if h[s : s + 9] == _NO_SUIT)
        no_terminal = self.terminal_open and not int.from_bytes(h) & _TERMINAL_COUNTS
        no_pung = self.pung_open and not self.pung_in_reach(h)
        if not (void or missing or no_terminal or no_pung):
            return _NOTHING  # the common case, shared
        return _Needs(
            total=void + len(missing) + no_terminal + no_pung,
            missing=missing,
            no_terminal=no_terminal,
            no_pung=no_pung,
        )

    def met_after_any(self, h14: bytes) -> bool:
        """Whether every discard from ``h14`` leaves a hand lacking nothing (`lacking` is
        `_NOTHING`), by a test that is sufficient, not necessary: one tile less lowers a
        count by one and the number of pairs by one at most, so no 缺 tile held or laid,
        each open suit held twice, two terminal or honour tiles and three pairs are
        enough. `closest` then spares each discard its `needs` (36% of those worked
        out in baishan; with the inlining in `closest` and `useful`, 3% of a bot's
        instructions)."""
        if self.void is not None and (self.void_laid or h14[self.void : self.void + 9] != _NO_SUIT):
            return False
        for s in self.open_suits:
            if sum(h14[s : s + 9]) < 2:
                return False
        # the terminals' counts are the base-256 digits of one number (as in `useful`)
        if self.terminal_open and (int.from_bytes(h14) & _TERMINAL_COUNTS) % 255 < 2:
            return False
        return not self.pung_open or KINDS - h14.count(0) - h14.count(1) >= 3

    def pung_in_reach(self, h: bytes) -> bool:
        """A pung (or the rule set's substitute) is held, or two pairs leave one to grow."""
        pairs = KINDS - h.count(0) - h.count(1)  # faces held twice or more
        if pairs >= 2 or (pairs == 1 and not h.count(2)):  # or one held three times or more
            return True
        dragons = h[_DRAGONS]
        return (self.rules.dragon_pair_is_pung and max(dragons) >= 2) or (
            self.rules.dragon_set_is_pung and 0 not in dragons
        )

    def gains(self, h: bytes, needs: _Needs) -> int:
        """Per face, the change in the requirements' count when it joins ``h`` (negative:
        closer), in a mask's bytes (a sum of masks, so negative bytes borrow), beside
        the `que_gains` of every hand."""
        out = 0
        for base in needs.missing:
            out -= _SUIT_MASK[base]
        if needs.no_terminal:
            out -= _TERMINAL_MASK
        if needs.no_pung:
            out -= self.pung_draws(h)
        return out

    def pung_draws(self, h: bytes) -> int:
        """The faces whose draw brings a pung (or the rule set's substitute) in reach of a
        hand without one, as a mask: a second pair, a pair's third tile, a dragon."""
        held = int.from_bytes(h.translate(_HELD))
        out = held if max(h) >= 2 else 0  # with a pair, any held face makes a second
        if self.rules.dragon_pair_is_pung:
            out |= held & _DRAGON_MASK
        if self.rules.dragon_set_is_pung and h[_DRAGONS].count(0) == 1:
            out |= _DRAGON_MASK & ~held
        return out

    @staticmethod
    def wanted(needs: _Needs) -> int:
        """The faces that fill a requirement ``needs`` lacks, as a mask."""
        out = 0
        for base in needs.missing:
            out |= _SUIT_MASK[base]
        if needs.no_terminal:
            out |= _TERMINAL_MASK
        return out

    def distance(self, h: bytes) -> int:
        """Shanten plus the requirements still missing; 0 only for a hand with live waits."""
        return self.distance_at(h, self.shanten(h))

    def distance_at(self, h: bytes, s: int) -> int:
        """`distance` of ``h``, whose shanten is ``s``."""
        if s == 0:
            return 0 if self.waits(h) else 1
        return s + self.needs(h).total

    def after_discard(self, h14: bytes) -> tuple[int, ...]:
        """`discard_shanten`: a claim decision measures the same hand again."""
        found = self.after.get(h14)
        if found is None:
            found = _bounded(self.after)[h14] = discard_shanten(h14, shapes=self.shapes)
        return found

    def discarded(self, h14: bytes, faces: Iterable[int]) -> Iterator[tuple[int, int, bytes]]:
        """(face, shanten, hand) after each discard of ``faces``, the shanten remembered
        from one table lookup for all."""
        after = self.after_discard(h14)
        hand = bytearray(h14)
        steps = _bounded(self.steps)
        for t in faces:
            hand[t] -= 1
            h = bytes(hand)
            hand[t] += 1
            s = steps[h] = after[t]
            yield t, s, h

    def closest(self, h14: bytes, faces: Sequence[int]) -> tuple[int, list[int]]:
        """The least distance after a discard of ``faces``, and the faces that reach it.
        Shanten is a floor of the distance, so faces are measured in its order, until it
        passes the best distance found. The kernel does it in one call, but for the
        discards that leave the hand ready: their distance asks for the rule set's waits."""
        if self.kernel is not None:
            found: tuple[int, list[int], list[int]] | None = self.kernel.bot_closest(
                h14, self.profile, faces
            )
            if found is not None:
                best, close, ready = found
                return self.with_ready(h14, best, close, ready) if ready else (best, close)
        after = self.after_discard(h14)
        steps = _bounded(self.steps)
        needed = _bounded(self.needed)
        met = self.met_after_any(h14)
        hand = bytearray(h14)
        best, close = _FAR, []
        for t in sorted(faces, key=after.__getitem__):
            s = after[t]
            if s > best:
                break
            hand[t] -= 1
            h = bytes(hand)
            hand[t] += 1
            steps[h] = s
            # `distance_at`, inlined: this loop and `useful` are the bots' hottest code
            if s == 0:
                d = 0 if self.waits(h) else 1
            elif met:
                needed[h] = _NOTHING
                d = s
            else:
                needs = needed.get(h)
                d = s + (self.needs(h) if needs is None else needs).total
            if d < best:
                best, close = d, [t]
            elif d == best:
                close.append(t)
        return best, sorted(close)

    def with_ready(
        self, h14: bytes, best: int, close: list[int], ready: list[int]
    ) -> tuple[int, list[int]]:
        """`closest` of ``close`` (at distance ``best``, the least of the discards that
        leave the hand unready: 1 or more) and ``ready`` (those that leave it ready: 0
        with a wait, else 1)."""
        hand = bytearray(h14)
        live: list[int] = []
        dead: list[int] = []
        for t in ready:
            hand[t] -= 1
            (live if self.waits(bytes(hand)) else dead).append(t)
            hand[t] += 1
        if live:
            return 0, live
        return (1, sorted(close + dead)) if best == 1 else (1, dead)

    def useful(self, h: bytes, d: int) -> bytes:
        """The faces whose draw lowers the distance ``d`` of ``h``, one byte each (1 if so):
        those in reach whose draw shanten plus gain is below ``d`` less the requirements'
        count (a face held four times has a draw shanten of 99, so it never counts)."""
        found = self.usefuls.get(h)
        if found is None:
            if self.kernel is not None:
                found = self.kernel.bot_useful(h, self.profile, d)
            if found is None:
                found = self.useful_worked(h, d)
            _bounded(self.usefuls)[h] = found
        return found

    def useful_worked(self, h: bytes, d: int) -> bytes:
        """`useful` worked out in Python: the kernel's reference."""
        needs = self.needed.get(h) or self.needs(h)
        after = draw_shanten_bytes(h, self.shapes)  # `draw_shanten` + 1, as bytes
        raised = int.from_bytes(after.translate(_BIASED)) + self.que_gains
        # in reach: near a held face, or filling a requirement (most hands lack none,
        # and are spared the calls of `gains` and `wanted`)
        held = int.from_bytes(h.translate(_HELD))
        near = held | held << 8 & _DOWN1 | held << 16 & _DOWN2
        near |= held >> 8 & _UP1 | held >> 16 & _UP2
        if needs is not _NOTHING:
            raised += self.gains(h, needs)
            near |= self.wanted(needs)
        below = raised.to_bytes(KINDS).translate(_below(d - needs.total + 1 + _BIAS))
        chosen = int.from_bytes(below) & near & self.in_play
        return chosen.to_bytes(KINDS)

    def useful_after(self, h14: bytes, faces: Sequence[int], d: int, unseen: bytes) -> list[int]:
        """For each discard of ``faces``, the unseen copies of the faces whose draw lowers
        the distance ``d`` of the hand it leaves (`useful` weighted by ``unseen``): one
        kernel call for all."""
        if self.kernel is not None:
            found: list[int] | None = self.kernel.bot_useful_after(
                h14, self.profile, faces, d, unseen
            )
            if found is not None:
                return found
        left = int.from_bytes(unseen)
        hand = bytearray(h14)
        out = []
        for t in faces:
            hand[t] -= 1
            out.append((left & 255 * int.from_bytes(self.useful(bytes(hand), d))) % 255)
            hand[t] += 1
        return out


@cache
def _below(limit: int) -> bytes:
    """A translation: 1 for a byte below ``limit``, else 0."""
    return bytes(value < limit for value in range(256))


def _bounded(memory: dict[bytes, _V]) -> dict[bytes, _V]:
    """``memory``, emptied first once it holds too much (a bot may play many hands)."""
    if len(memory) > _CACHE_LIMIT:
        memory.clear()
    return memory


class EfficientBot(Bot):
    """Tile efficiency, steered by the rule set's win requirements and the waits' worth."""

    name = "efficient"

    def __init__(self, rng: random.Random) -> None:
        super().__init__(rng)
        self._memos: dict[tuple[tuple[Meld, ...], int | None], _Memo] = {}
        self._last: tuple[Table, Sequence[Meld], _Memo] | None = None
        self._worth: dict[tuple[object, ...], int] = {}
        #: The rule set the measures above hold for (the table's, as configured).
        self._rules: RuleSet | None = None

    def restart(self, rng: random.Random) -> None:
        """As `Bot.restart`, keeping what it has measured (each measure a function of a
        hand under the rules, so still true): a search that plays out many hands saves
        measuring the same hands again."""
        super().restart(rng)
        self._last = None

    def __getstate__(self) -> dict[str, object]:
        """A copy (pickled: `fangcheng.ai.expert.ExpertBot.fork`) measures hands anew:
        the measures are a cache, and hold the compiled kernel, which does not pickle."""
        return {**self.__dict__, "_memos": {}, "_last": None, "_worth": {}, "_rules": None}

    def _follow(self, rules: RuleSet) -> None:
        """Keep the measures only while the table's rules are the same: a new hand's
        configured copy is usually equal (compared once, not hashed per lookup)."""
        if rules != self._rules:
            self._memos.clear()
            self._worth.clear()
        self._rules = rules

    # --- measuring hands -------------------------------------------------------------

    def memo(self, table: Table, melds: Sequence[Meld]) -> _Memo:
        """The measures of hands with ``melds`` laid, under this table's rules and 缺."""
        last = self._last
        if last is not None and last[0] is table and last[1] is melds:
            return last[2]  # asked again within one decision
        if table.rules is not self._rules:
            self._follow(table.rules)
        laid = tuple(melds)
        key = (laid, table.que)
        found = self._memos.get(key)
        if found is None:
            if len(self._memos) > _CACHE_LIMIT // 100:
                self._memos.clear()
            found = self._memos[key] = _Memo(table.rules, laid, table.que)
        self._last = (table, melds, found)
        return found

    def distance(self, table: Table, h: bytes, melds: Sequence[Meld]) -> int:
        """Shanten plus the requirements still missing; 0 only for a hand with live waits."""
        return self.memo(table, melds).distance(h)

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
        if table.rules is not self._rules:
            self._follow(table.rules)
        key: tuple[object, ...] = (
            h, tuple(melds), tile, ready, dealer, obs.treasure, table.que, *others,
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
        waits = self.memo(table, melds).waits(h)
        unseen, treasure = table.unseen, table.obs.treasure
        if treasure is None:  # a dead wait adds nothing: it need not be scored
            waits = tuple([w for w in waits if unseen[w]])
        if not waits:
            return 0.0
        worths = [self.worth(table, h, melds, w, ready) for w in waits]
        value = float(sum(unseen[w] * v for w, v in zip(waits, worths, strict=True)))
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
        mask = int.from_bytes(self.memo(table, melds).useful(h, d))
        # The unseen counts of the useful faces are the base-256 digits of one number,
        # and digits sum to their number modulo 255 (256 ≡ 1): exact below 255 (≤ 4 × 34).
        return (table.left & 255 * mask) % 255

    def useful_faces(
        self, table: Table, h: bytes, melds: Sequence[Meld], d: int
    ) -> tuple[int, ...]:
        """The faces whose draw lowers the distance ``d`` of ``h``."""
        return tuple(compress(_FACES, self.memo(table, melds).useful(h, d)))

    # --- choosing --------------------------------------------------------------------

    def act(self, observation: Observation) -> Action:
        legal = observation.legal
        if len(legal) == 1:
            return legal[0]
        for action in legal:
            if action.kind is _HU:
                return action
        phase = observation.phase
        if phase is _TURN:
            return self.turn(table_of(observation))
        if phase is Phase.PIAO:
            return min(legal, key=lambda a: a.value)
        if phase is Phase.QUE:
            return self.choose_que(observation)
        calls = [a for a in legal if a.kind in _CALLS]
        if calls:
            return self.claim(table_of(observation), calls)
        return next(a for a in legal if a.kind is _PASS)

    def choose_que(self, obs: Observation) -> Action:
        """定缺: the legal choice of least `que_weight`."""
        return min(obs.legal, key=lambda a: self.que_weight(obs, 9 * a.value))

    def que_weight(self, obs: Observation, suit: int) -> tuple[int, ...]:
        """The suit starting at ``suit`` as the 缺: the fewest tiles first; ties go to the
        one with fewer pairs and neighbours (the least useful)."""
        tiles = obs.hand[suit : suit + 9]
        links = sum(1 for c in tiles if c >= 2)  # pairs, then neighbours one or two apart
        links += sum(1 for i in range(8) for j in (i + 1, i + 2) if j < 9 and tiles[i] and tiles[j])
        return sum(tiles), links

    def turn(self, table: Table) -> Action:
        legal = table.obs.legal
        discards = [a for a in legal if a.kind is _DISCARD]
        offers = len(discards) < len(legal)  # a kong or 报听 (a win was taken already)
        if offers and (kong := self.kong(table)) is not None:
            return kong
        if len(discards) == 1 and not any(a.kind is _READY for a in legal):
            return discards[0]
        choice = self.discard(table, discards)
        assert choice.tile is not None
        for a in legal if offers else ():
            if a.kind is _READY and a.tile == choice.tile and self.declare(table, a):
                return a
        return choice

    def declare(self, table: Table, ready: Action) -> bool:
        """报听 whenever it is offered on the chosen discard (the wait is live)."""
        assert ready.tile is not None
        h = bytearray(table.obs.hand)
        h[ready.tile] -= 1
        waits = self.memo(table, table.melds).waits(bytes(h))
        return any(table.unseen[w] for w in waits)

    def ranked(
        self,
        table: Table,
        h14: bytes,
        melds: Sequence[Meld],
        faces: Sequence[int],
        at: int | None = None,
    ) -> list[tuple[int, float, int]]:
        """(distance, -value, face) for each discard of ``faces``, best first; the value
        is only computed for the discards at the least distance. ``at``: the distance
        every one is known to leave (the `closest` faces), not measured again."""
        memo = self.memo(table, melds)
        if at is not None and self.counts_useful(at):
            counts = memo.useful_after(h14, faces, at, table.unseen)
            return sorted([(at, -float(c), t) for c, t in zip(counts, faces, strict=True)])
        first = [
            (memo.distance_at(h, s) if at is None else at, t, h)
            for t, s, h in memo.discarded(h14, faces)
        ]
        best = min(first)[0]
        out = [
            (d, -self.value_after(table, h, melds, d) if d == best else 0.0, t) for d, t, h in first
        ]
        out.sort()
        return out

    def closest(
        self, table: Table, h14: bytes, melds: Sequence[Meld], faces: Sequence[int]
    ) -> tuple[int, list[int]]:
        """The least distance after a discard of ``faces``, and the faces that reach it:
        the discards `ranked` would value (a sole one needs no value)."""
        return self.memo(table, melds).closest(h14, faces)

    def counts_useful(self, d: int) -> bool:
        """Whether `value_after` at distance ``d`` is the `useful` count (so `ranked` may
        count every discard's in one call)."""
        return d > 0

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

    def ranked_discards(
        self, table: Table, discards: Sequence[Action]
    ) -> list[tuple[int, float, int]]:
        """`ranked` of the faces ``discards`` may shed (`discard_faces`: 缺 tiles first)."""
        return self.ranked(table, table.obs.hand, table.melds, self.discard_faces(table, discards))

    def discard(self, table: Table, discards: Sequence[Action]) -> Action:
        h, melds = table.obs.hand, table.melds
        best, close = self.closest(table, h, melds, self.discard_faces(table, discards))
        if len(close) == 1:
            tile = close[0]
        else:
            ranked = self.ranked(table, h, melds, close, best)
            top = [t for _, v, t in ranked if v == ranked[0][1]]  # each at distance best
            tile = top[0] if len(top) == 1 else self.rng.choice(top)
        return _discard_of(discards, tile)

    def kong(self, table: Table) -> Action | None:
        """A kong (or a 旋风杠 addition) that keeps the hand's distance: it pays, and draws."""
        obs = table.obs
        h = obs.hand
        options = [a for a in obs.legal if a.kind in _KONGS]
        if not options:
            return None
        locked = not any(a.kind is _DISCARD and a.tile != obs.drawn for a in obs.legal)
        if locked:  # 报听 or a sichuan winner: the engine offers only wait-keeping kongs
            return options[0]
        best, _ = self.closest(table, h, table.melds, _held(h))
        for a in options:
            after = self.after_kong(table, a, best)
            if after is not None and after <= best:
                return a
        return None

    def after_kong(self, table: Table, kong: Action, best: int) -> int | None:
        """The hand's distance after ``kong`` (``best``: its distance after a discard);
        None for a 旋风杠 that would only open the hand (the set pays concealed too)."""
        h = table.obs.hand
        hand = bytearray(h)
        if kong.kind is Act.XUANFENG:
            if not any(h[t] >= 2 for t in DRAGONS):
                return None
            for t in DRAGONS:
                hand[t] -= 1
            melds = [*table.melds, Meld(MeldKind.XUANFENG, (33, 32, 31))]
            held = _held(hand)
            return self.closest(table, bytes(hand), melds, held)[0] if held else best
        assert kong.tile is not None
        hand[kong.tile] -= 4 if kong.kind is Act.AN_GANG else 1
        return self.distance(table, bytes(hand), table.melds)

    def claim(self, table: Table, calls: Sequence[Action]) -> Action:
        """Call when the hand after it (and its best discard) beats the hand without it:
        lower distance, or the same with more value (a kong never costs distance). Values
        are only computed where distances tie."""
        obs = table.obs
        h = obs.hand
        assert obs.last_discard is not None
        source, tile = obs.last_discard
        now = self.distance(table, h, table.melds)
        now_value: list[float] = []  # computed at most once, when needed
        taken: list[tuple[int, Callable[[], float], Action]] = []
        for a in calls:
            hand = bytearray(h)
            meld, used = called_meld(a, tile, source)
            for x in used:
                hand[x] -= 1
            found = self.after_call(table, bytes(hand), (*table.melds, meld), a)
            if found is None:
                continue
            after, value = found
            if a.kind is _GANG or after < now:
                ok = after <= now
            elif after == now:
                if not now_value:
                    now_value.append(self.assess(table, h, table.melds)[1])
                ok = value() > now_value[0]
            else:
                ok = False
            if ok:
                taken.append((after, value, a))
        if not taken:
            return next(a for a in obs.legal if a.kind is _PASS)
        least = min(d for d, _, _ in taken)
        tied = [(value, a) for d, value, a in taken if d == least]
        if len(tied) == 1:
            return tied[0][1]
        values = [value() for value, _ in tied]
        return tied[values.index(max(values))][1]

    def after_call(
        self, table: Table, hand: bytes, melds: tuple[Meld, ...], call: Action
    ) -> tuple[int, Callable[[], float]] | None:
        """The distance after a call (and, but for a kong, its best discard), and how to
        value that hand when a tie asks for it (asked again, it finds its measures in the
        memo: cheaper than remembering each value in case)."""
        if call.kind is _GANG:
            d = self.distance(table, hand, melds)
            return d, lambda: self.assess(table, hand, melds)[1]
        held = _held(hand)
        if not held:
            return None
        best, close = self.closest(table, hand, melds, held)
        return best, lambda: -self.ranked(table, hand, melds, close, best)[0][1]


def _held(hand: bytes | bytearray) -> list[int]:
    return [t for t in range(KINDS) if hand[t]]


def _discard_of(discards: Sequence[Action], tile: int) -> Action:
    """The discard of ``tile`` (a loop: ``next`` over a generator costs more, every turn)."""
    for a in discards:
        if a.tile == tile:
            return a
    raise ValueError(f"no discard of {tile}")


class StrongBot(EfficientBot):
    """Efficiency with look-ahead, hands valued at the real table, and defence.

    - Near ready (distance 1) a discard is valued by every draw that makes the hand ready
      and by the best ready hand that draw allows (waits × fans × live tiles); at distance
      2 the best few discards are re-ranked by the draws that reach distance 1 times the
      useful draws of the best hand they allow (two draws ahead).
    - A ready hand's fans are scored against the other seats as open or closed as they
      are (立门, 门清, 三家清 and 四家清 depend on them), not against a closed table.
    - 定缺 (sichuan): the suit whose tiles leave the closest hand once set aside.
    - 血战 (sichuan): a discard win is passed while a self-draw, paid by every seat still
      playing with one more fan, is expected to pay more (`wait_for_self_draw`).
    - Kongs: while the wall is long, a kong is made even when it costs one step of
      distance; its coins are paid whether or not the hand wins.
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
        self._rivers: list[int]  # river lengths at the last observation
        self._declared: list[bool]
        self._passed: list[set[int]]
        self._opens: tuple[bool, ...]
        self._unread()

    def _unread(self) -> None:
        """Nothing read of the table yet: a hand's start."""
        self._rivers = [0, 0, 0, 0]
        self._declared = [False, False, False, False]
        self._passed = [set(), set(), set(), set()]
        self._opens = (False, False, False, False)

    def restart(self, rng: random.Random) -> None:
        super().restart(rng)
        self._unread()

    def act(self, observation: Observation) -> Action:
        self.track(observation)
        if (
            observation.phase is not _TURN
            and observation.wall > 4  # the last four tiles: a passed win makes a 花猪
            and any(a.kind is _HU for a in observation.legal)
        ):
            table = table_of(observation)
            if self.wait_for_self_draw(table):
                return next(a for a in observation.legal if a.kind is _PASS)
        return super().act(observation)

    def que_weight(self, obs: Observation, suit: int) -> tuple[int, ...]:
        """The shanten of the hand the 缺 leaves first: the suit's tiles are set aside as
        isolated tiles (each will be discarded, and draws replace them); then as
        `EfficientBot`. Sichuan plays no honours, so each set-aside tile becomes one."""
        h = obs.hand
        n = sum(h[suit : suit + 9])
        if n > _HONOURS:
            return (_FAR, *super().que_weight(obs, suit))
        aside = bytearray(h)
        aside[suit : suit + 9] = _NO_SUIT
        aside[27 : 27 + n] = b"\x01" * n
        steps = shanten(bytes(aside), shapes=obs.rules.shapes)
        return (steps, *super().que_weight(obs, suit))

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
        live = sum(table.unseen[w] for w in self.memo(table, table.melds).waits(h))
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

    def follow(self, other: StrongBot) -> None:
        """Take ``other``'s reading of the table (what its `track` has seen at the same
        seat), which a bot that joins a hand in the middle would lack."""
        self._rivers = list(other._rivers)
        self._declared = list(other._declared)
        self._passed = [set(p) for p in other._passed]
        self._opens = other._opens

    def passed(self) -> list[frozenset[int]]:
        """Per seat, the faces it let pass since its hand last changed (as `track` last
        read them: public facts only); none for this seat."""
        return [frozenset(p) for p in self._passed]

    def threats(self, obs: Observation) -> list[float]:
        """How likely each other seat is to be ready (0 for this seat and for winners):
        declared, or estimated from its discards and calls (fitted on efficient play)."""
        per_discard = _READY_PER_DISCARD_TWO_SUITS if obs.rules.void_suit else _READY_PER_DISCARD
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

    def danger(
        self, table: Table, tile: int, threat: Sequence[float], norm: float | None = None
    ) -> float:
        """The chance that discarding ``tile`` deals in: per seat, its threat times the
        share of the unseen wait patterns (two-sided, closed, edge, pair) ending on it.
        ``norm`` (`_all_ways` of the unseen tiles) is passed by a caller that ranks many
        tiles, so it is counted once."""
        obs, unseen = table.obs, table.unseen
        if norm is None:
            norm = _all_ways(unseen)
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

    def counts_useful(self, d: int) -> bool:
        return d > 1  # at 1, `value_after` looks at the ready hands each draw allows

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
        self,
        table: Table,
        h14: bytes,
        melds: Sequence[Meld],
        faces: Sequence[int],
        at: int | None = None,
    ) -> list[tuple[int, float, int]]:
        """As `EfficientBot.ranked`; at distance 2 the best few discards are re-ranked by
        the draws that lead to distance 1 times the useful draws of the best such hand."""
        out = super().ranked(table, h14, melds, faces, at)
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
        memo = self.memo(table, melds)
        best = 0.0
        for t in _held(grown):
            grown[t] -= 1
            h = bytes(grown)
            if memo.shanten(h) == 0:
                best = max(best, self.ready_value(table, h, melds))
            grown[t] += 1
        return best

    # --- choosing ----------------------------------------------------------------------

    def flushes(self, table: Table) -> list[_Flush]:
        """The flushes this hand may still pursue while the wall is long: a suit (not the
        缺) every laid meld is in, with honours or without, as the rule set's 混一色 and
        清一色 pay."""
        obs, que = table.obs, table.que
        values = _flush_values(table.rules)
        if not values or obs.wall < _FLUSH_WALL:
            return []
        if que is not None and any(obs.hand[9 * que : 9 * que + 9]):
            return []  # 缺 tiles are discarded first whatever is pursued
        laid = {t // 9 for m in table.melds for t in m.tiles}  # suits, honours as 3
        out = []
        for suit in range(3):
            if suit == que or not laid <= {suit, _HONOUR_ROW}:
                continue
            for honours, value in values:
                if honours or _HONOUR_ROW not in laid:
                    out.append(
                        _Flush(suit=suit, honours=honours, credit=_FLUSH_CREDIT[min(value, 2)])
                    )
        return out

    def flush_discard(self, table: Table, discards: Sequence[Action]) -> Action | None:
        """The discard that pursues a flush, or None when no flush is worth it. A flush
        counts as ``credit`` steps nearer than its shanten says (1.5 for two fans or more:
        it is worth one extra step; 0.75 for one fan: it only breaks ties), and wins when
        that beats the plain distance."""
        flushes = self.flushes(table)
        if not flushes:
            return None
        h, melds, shapes = table.obs.hand, table.melds, table.rules.shapes
        faces = self.discard_faces(table, discards)
        plain, _ = self.closest(table, h, melds, faces)
        # Discarding never lowers a flush's shanten: the whole hand's is a floor.
        flushes = [
            f
            for f in flushes
            if shanten_flush(h, f.suit, honours=f.honours, shapes=shapes) - f.credit < plain
        ]
        if not flushes:
            return None
        memo = self.memo(table, melds)
        scored = []
        for t, s, after in memo.discarded(h, faces):
            d = memo.distance_at(after, s)
            near = min(
                shanten_flush(after, f.suit, honours=f.honours, shapes=shapes) - f.credit
                for f in flushes
            )
            scored.append((min(d, near), d, t))
        best, least, _ = min(scored)
        if best >= plain:
            return None
        tied = [t for near, d, t in scored if (near, d) == (best, least)]
        tile = tied[0] if len(tied) == 1 else self.ranked(table, h, melds, tied)[0][2]
        return _discard_of(discards, tile)

    def kong(self, table: Table) -> Action | None:
        """As `EfficientBot.kong`, else a 暗杠 or 补杠 that costs at most `_KONG_SLACK` of
        distance while the wall is long: the kong money (2 to 30 × 底注) is paid whether
        or not the hand wins, and the replacement draw wins back part of the step."""
        found = super().kong(table)
        obs = table.obs
        if found is not None or obs.wall < _KONG_WALL:
            return found
        kongs = [a for a in obs.legal if a.kind in (Act.AN_GANG, Act.BU_GANG)]
        if not kongs:
            return None
        best, _ = self.closest(table, obs.hand, table.melds, _held(obs.hand))
        for a in kongs:
            after = self.after_kong(table, a, best)
            if after is not None and after <= best + _KONG_SLACK:
                return a
        return None

    def claim(self, table: Table, calls: Sequence[Action]) -> Action:
        """As `EfficientBot.claim`, but a 明杠 is made at up to `_KONG_SLACK` of distance
        while the wall is long, for the same reason as in `kong`."""
        obs = table.obs
        if obs.wall >= _KONG_WALL and obs.last_discard is not None:
            source, tile = obs.last_discard
            now = self.distance(table, obs.hand, table.melds)
            for a in calls:
                if a.kind is _GANG:
                    hand = bytearray(obs.hand)
                    meld, used = called_meld(a, tile, source)
                    for x in used:
                        hand[x] -= 1
                    if self.distance(table, bytes(hand), (*table.melds, meld)) <= now + _KONG_SLACK:
                        return a
        return super().claim(table, calls)

    def discard(self, table: Table, discards: Sequence[Action]) -> Action:
        """Efficiency first, or a flush worth its extra steps (`flush_discard`); a hand two
        or more from ready folds against a declared seat (its waits are fixed, and every
        face it let pass since is known safe)."""
        threat = self.threats(table.obs)
        if max(threat) < 1.0:
            return self.flush_discard(table, discards) or super().discard(table, discards)
        ranked = self.ranked_discards(table, discards)
        if ranked[0][0] < 2:
            return super().discard(table, discards)
        return self.safest(table, discards, threat, ranked)

    def safest(
        self,
        table: Table,
        discards: Sequence[Action],
        threat: Sequence[float],
        ranked: Sequence[tuple[int, float, int]],
    ) -> Action:
        """The discard least likely to deal in by `danger` (to three places) against
        ``threat``, of equals the best by ``ranked`` (`ranked` of the discard faces)."""
        norm = _all_ways(table.unseen)
        order = {t: i for i, (_, _, t) in enumerate(ranked)}
        tile = min(order, key=lambda t: (round(self.danger(table, t, threat, norm), 3), order[t]))
        return _discard_of(discards, tile)


class _Flush(NamedTuple):
    """A flush `StrongBot` may pursue, and how many steps of distance it is worth."""

    suit: int
    honours: bool  # 混一色 (honours allowed), or 清一色
    credit: float


@cache
def _flush_values(rules: RuleSet) -> tuple[tuple[bool, int], ...]:
    """(honours allowed, fans) of the rule set's 混一色 and 清一色."""
    kinds = {"混一色": True, "清一色": False}
    return tuple((kinds[f.name], f.value) for f in rules.fans if f.name in kinds)


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


BOTS: Final[dict[str, type[Bot]]] = {cls.name: cls for cls in (RandomBot, EfficientBot, StrongBot)}


def register_bot(factory: type[Bot]) -> None:
    """Add a bot kind under its ``name``: how a layer above the players (the searching
    `fangcheng.ai.expert`, which needs the engine) offers a bot to every `make_bot` caller
    without the players importing it; the package root imports it, so it is always in."""
    BOTS[factory.name] = factory


#: The most playouts a decision a bot kind may name (``expert@N``).
MAX_BUDGET: Final = 4096


class BotKindError(ValueError, argparse.ArgumentTypeError):
    """A bot kind `make_bot` cannot make, and why (an argument parser shows the why)."""


def make_bot(name: str, rng: random.Random) -> Bot:
    """The bot registered under ``name``, drawing its randomness from ``rng``; ``kind@N``
    (``expert@96``): a bot that searches, with ``N`` playouts a decision. A `BotKindError`
    names what is wrong with any other name. A name registered as it is comes first
    (a benchmark registers its variants under names of its own)."""
    if name in BOTS:
        return BOTS[name](rng)
    kind, at, budget = name.partition("@")
    factory = BOTS.get(kind)
    if factory is None or not at:
        raise BotKindError(f"unknown bot {kind!r}; bots: {', '.join(BOTS)}")
    if not (budget.isascii() and budget.isdigit() and 1 <= int(budget) <= MAX_BUDGET):
        raise BotKindError(f"bot {name!r}: after @, playouts from 1 to {MAX_BUDGET}")
    return factory.budgeted(rng, int(budget))


def bot_kind(name: str) -> str:
    """``name`` if `make_bot` makes a bot of it, else a `BotKindError` saying why (for
    argument parsers and callers that check names before play)."""
    make_bot(name, random.Random(0))
    return name
