"""One hand (盘) of any rule set, from the shuffle to the settlement.

`Round` is a state machine driven by decisions. At every point `pending()` names the
seats whose decision is awaited and `legal_actions(seat)` what each may do; `act(seat,
action)` records one decision. A claim window (after a discard, or after a 补杠 that can
be robbed) waits for every asked seat, then resolves by priority — win, then peng/kong,
then chi — with 截胡 (first winner in play order from the discarder) or 一炮多响, as the
rule set says. Seats with nothing to do but pass are not asked, unless the round is
built with ``ask_all`` (see `Round`).

Wins, kongs and the other coin movements are scored by the scoring layer
(`fangcheng.scoring.scorer`, `fangcheng.scoring.payments`); the engine never re-implements a rule of
payment. Every random choice comes from the seed, so a hand is reproduced by its seed
(or its wall) and its decisions; `record_of` writes those as the hand's record, and a
refused decision carries that record (`refusal`). Reading a record back and replaying it
is `fangcheng.engine.record`'s.
"""

from __future__ import annotations

import dataclasses
import random
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from itertools import chain, compress, repeat
from operator import attrgetter, itemgetter
from typing import Any, Final

import msgspec

from fangcheng import contract
from fangcheng.analysis.hand import discard_shanten, shanten, waits
from fangcheng.engine.wall import Break, Wall, throw_break, wall_sides
from fangcheng.protocol import events as ev
from fangcheng.protocol.actions import Act, Action, IllegalActionError, called_meld
from fangcheng.protocol.events import Event, for_seat
from fangcheng.protocol.observation import Observation, Phase, SeatView
from fangcheng.rules.requirements import (
    declarable,
    in_last_four,
    in_void_suit,
    is_legal_win,
    may_meld_discard,
    wait_set,
)
from fangcheng.rules.ruleset import ALL_RULES, RuleSet, configure, find_rules
from fangcheng.scoring.payments import (
    Transfer,
    chase_dealer_payments,
    deltas_of,
    draw_payments,
    escape_payments,
    kong_payments,
    service_fees,
)
from fangcheng.scoring.scorer import Score, score
from fangcheng.scoring.settlement import sichuan_exhaustion
from fangcheng.scoring.situation import MAX_BASE, Seat, Situation, WinBy
from fangcheng.tiles.melds import Meld, MeldKind
from fangcheng.tiles.notation import DRAGONS, KINDS, format_counts, format_tiles, tile_name

__all__ = [
    "ABANDONED",
    "FORMAT",
    "VERSION",
    "Item",
    "Round",
    "observe",
    "record_of",
    "refusal",
    "shared_action",
]

SEATS = range(4)
#: How a hand an operator closed ends (D92): its settlement's ``end``.
ABANDONED: Final = "abandoned"
#: A record's format and version (`fangcheng.engine.record` reads it back).
FORMAT: Final = "fangcheng-record"
VERSION: Final = 1

# One shared value per simple action: legal lists are built on every turn, and an
# identity match makes `act`'s membership test cheap.
_HU: Final = Action(Act.HU)
_PASS: Final = Action(Act.PASS)
_XUANFENG: Final = Action(Act.XUANFENG)
_DISCARD, _READY, _PENG, _GANG, _AN_GANG, _BU_GANG, _ADD = (
    tuple(Action(kind, t) for t in range(KINDS))
    for kind in (Act.DISCARD, Act.READY, Act.PENG, Act.GANG, Act.AN_GANG, Act.BU_GANG, Act.ADD)
)
_CHI: Final = {s: Action(Act.CHI, run=(s, s + 1, s + 2)) for s in range(27) if s % 9 <= 6}
_QUE: Final = tuple(Action(Act.QUE, value=v) for v in range(3))
_PIAO: Final = {b: Action(Act.PIAO, value=b) for r in ALL_RULES for b in r.piao_bets}


def _chi_on(tile: int) -> tuple[tuple[Action, int, int], ...]:
    """Each chi on a suit tile, lowest run first, with the two tiles it takes."""
    found = []
    for start in (tile - 2, tile - 1, tile):
        if start in _CHI and start // 9 == tile // 9:
            x, y = (t for t in (start, start + 1, start + 2) if t != tile)
            found.append((_CHI[start], x, y))
    return tuple(found)


_CHI_ON: Final = tuple(_chi_on(t) for t in range(27))
_SHARED: Final = tuple(
    chain(
        (_HU, _PASS, _XUANFENG),
        _DISCARD,
        _READY,
        _PENG,
        _GANG,
        _AN_GANG,
        _BU_GANG,
        _ADD,
        _CHI.values(),
        _QUE,
        _PIAO.values(),
    )
)
# The record text of each shared value, by identity: they live as long as the module,
# and a decision is written on every turn.
_TEXT: Final = {id(a): str(a) for a in _SHARED}
_BY_VALUE: Final = {a: a for a in _SHARED}


def shared_action(action: Action) -> Action:
    """The engine's own value equal to ``action`` (``action`` itself if it has none).

    Every legal list holds these values, and `Round.act` finds one by identity before
    it compares by value: a caller that keeps actions (an action space, a policy's
    table) and hands these back spares the dataclass ``__eq__`` on every entry (in
    the single-seat environment that was about 8% of a step) and the text formatting
    of the record."""
    return _BY_VALUE.get(action, action)


_NO_WAITS: Final[frozenset[int]] = frozenset()
#: A `bytes.translate` row: 1 for a face held two or more times.
_PAIRED: Final = bytes((0, 0, 1, 1, 1)) + bytes(251)
# The other seats in play order (claims resolve in it), and in seat order: a window asks
# in that order, so that `pending` lists its seats as asked.
_OTHERS: Final = tuple(tuple((seat + k) % 4 for k in (1, 2, 3)) for seat in SEATS)
_OTHERS_ASKED: Final = tuple(tuple(s for s in SEATS if s != seat) for seat in SEATS)
_NAME: Final = tuple(tile_name(t) for t in range(KINDS))
_SUIT: Final = ("m", "p", "s")
# The events of every turn, by seat and tile: events are frozen, so one prepared value
# is shared by every draw (and discard) of that tile by that seat, built once.
_DRAWS, _DISCARDS = (
    tuple(tuple(type_(seat=s, tile=_NAME[t]) for t in range(KINDS)) for s in SEATS)
    for type_ in (ev.Draw, ev.Discard)
)


# Enum members read on every turn, looked up once: a lookup on the class is slow.
_TURN, _CLAIM = Phase.TURN, Phase.CLAIM
_A_HU, _A_DISCARD, _A_READY = Act.HU, Act.DISCARD, Act.READY
_A_PENG, _A_GANG, _A_CHI = Act.PENG, Act.GANG, Act.CHI
_M_PENG, _M_AN_GANG, _M_XUANFENG = MeldKind.PENG, MeldKind.AN_GANG, MeldKind.XUANFENG
_M_CHI, _M_MING_GANG = MeldKind.CHI, MeldKind.MING_GANG
_BY_DISCARD: Final = WinBy.DISCARD
_DRAGON_COUNTS: Final = itemgetter(*DRAGONS)
_NO_SCORES: Final = (0, 0, 0, 0)
_NO_QUE: Final = (None, None, None, None)  # 定缺 as shown until all four have chosen
_KIND: Final = attrgetter("kind")
_DELTAS: Final = attrgetter("deltas")
_NEW: Final = tuple.__new__  # a named tuple from its fields in order, without `_make`
# The counts as the base-256 digits of one number: their sum is it modulo 255 (as 256 ≡ 1),
# exactly, as a seat holds fewer than 255 tiles.
_DIGITS: Final = int.from_bytes


@cache
def _meld_text(tiles: tuple[int, ...]) -> str:
    """A called meld's tiles in notation, in their order; memoised, as the same few
    melds are logged hand after hand."""
    return format_tiles(tiles, sort=False)


def _may_kong(hand: bytearray, melds: Sequence[Meld], xuanfeng: bool) -> bool:
    """Whether the hand holds a peng's fourth tile or the dragons of a 旋风杠 or its
    addition: a cheap screen before `Round._kong_actions`, as most turns have none."""
    laid = False
    for m in melds:
        if m.kind is _M_PENG and hand[m.face]:
            return True
        laid = laid or m.kind is _M_XUANFENG
    return xuanfeng and (any if laid else all)(_DRAGON_COUNTS(hand))


def _shown(value: object) -> str:
    return f"{type(value).__name__} {contract.quote(value)}"


def _check_arguments(
    rules: RuleSet,
    seed: object,
    dealer: object,
    base: object,
    options: object,
    wall: object,
    ask_all: object,
) -> None:
    """`Round`'s arguments, each as a record can hold it (a bool is no integer, nor is
    1.0); a `ValueError` names the first that is not. Options are `configure`'s."""
    if type(seed) is not int or not -(2**63) <= seed < 2**63:
        raise ValueError(f"seed: expected a 64-bit signed integer, got {_shown(seed)}")
    if type(dealer) is not int or not 0 <= dealer <= 3:
        raise ValueError(f"dealer: expected a seat (0..3), got {_shown(dealer)}")
    if type(base) is not int or not 1 <= base <= MAX_BASE:
        raise ValueError(f"base: expected an integer 1..{MAX_BASE}, got {_shown(base)}")
    if options is not None and not isinstance(options, Mapping):
        raise ValueError(f"options: expected a mapping, got {_shown(options)}")
    if type(ask_all) is not bool:
        raise ValueError(f"ask_all: expected True or False, got {_shown(ask_all)}")
    if wall is None:
        return
    if not isinstance(wall, Sequence) or isinstance(wall, str):
        raise ValueError(f"wall: expected a sequence of tiles, got {_shown(wall)}")
    if any(type(t) is not int for t in wall) or Counter(wall) != Counter(rules.tiles):
        raise ValueError(
            f"wall: not an order of the {rules.name} tile set ({len(rules.tiles)} tiles;"
            f" {len(wall)} given)"
        )


@dataclass(frozen=True, slots=True)
class Item:
    """One settled movement of coins, with its reason."""

    reason: str
    deltas: tuple[int, ...]


class Round:
    """One hand of ``rules`` (a `RuleSet` or its name)."""

    def __init__(
        self,
        rules: RuleSet | str,
        *,
        seed: int = 0,
        dealer: int = 0,
        base: int = 1,
        options: Mapping[str, object] | None = None,
        wall: Sequence[int] | None = None,
        ask_all: bool = False,
    ) -> None:
        """``ask_all``: every decision point asks every seat a rule could ask there —
        a claim window every seat still playing, a 分张 draw its drawer — those with
        nothing but ``pass`` too, so that who is asked reveals nothing (a table server's
        mode). Without it a seat is asked only when it has a choice: that it is asked
        (or that a 分张 draw passes at once) tells the others it may claim or win.

        ``wall``: the tiles in draw order instead of the seed's shuffle (the dice are the
        seed's still). Every argument is checked before anything is built: a bad one is a
        `ValueError` naming it."""
        preset = find_rules(rules) if isinstance(rules, str) else rules
        if not isinstance(preset, RuleSet):
            raise ValueError(f"rules: expected a RuleSet or a preset's name, got {_shown(rules)}")
        _check_arguments(preset, seed, dealer, base, options, wall, ask_all)
        self.option_input: dict[str, object] = dict(options or {})
        self.rules, self.options = configure(preset, self.option_input)
        self.seed, self.dealer, self.base, self.ask_all = seed, dealer, base, ask_all
        rng = random.Random(seed)
        self.dice: Break = throw_break(self.rules, dealer, rng)  # before the shuffle,
        #: The wall is the seed's shuffle (False: it was given), as a record says.
        self.shuffled = wall is None
        if wall is None:  # so a recorded wall replays with the same dice
            self.wall = Wall.shuffled(self.rules, rng)
        else:
            self.wall = Wall(wall, treasure=self.rules.treasure)
        self.hands: list[bytearray] = [bytearray(KINDS) for _ in SEATS]
        self.melds: list[list[Meld]] = [[] for _ in SEATS]
        self.rivers: list[list[int]] = [[] for _ in SEATS]
        self.ready = [False] * 4  # 报听
        self.que: list[int | None] = [None] * 4
        self.piao = list(self.options.piao)
        self.won: list[int] = []  # seats in the order they won (several only in sichuan)
        self.win_tiles: dict[int, int] = {}  # each winner's winning tile
        self.win_scores: list[Score] = []  # the scorer's account of each win, in order
        self.first_multi_source: int | None = None  # the discarder, if the first win was 一炮多响
        self.flower_pigs: set[int] = set()  # passed a win in sichuan's last four tiles
        self.kong_transfers: list[Transfer] = []  # 刮风下雨 paid so far (for 退税)
        self.fenzhang_kept: set[int] = set()
        self.phase = Phase.PIAO
        self.over = False  # the phase is END: a plain attribute, read before every decision
        self.turn = dealer
        self.drawn: int | None = None  # the tile just drawn by the seat to move
        self.after_kong = False  # the tile to move on came from a kong replacement
        self.kong_discard = False  # the pending discard followed the discarder's kong
        self.just_chowed = False
        self.dealer_kongs = 0  # kong actions on the dealer's first turn (D12)
        self.first_go_around = True  # no call yet, and nobody has drawn twice
        self.first_discards: list[int] = []  # for 撵庄
        self.claim: tuple[int, int] | None = None  # (seat, tile) of the open discard/addition
        self.rob_kind: Act | None = None
        self._asked: dict[int, list[Action]] = {}
        self._answers: dict[int, Action] = {}
        self._fenzhang_order: list[int] = []
        self._shape_waits: dict[bytes, frozenset[int]] = {}
        self._wait_sets: dict[tuple[bytes, tuple[Meld, ...], int | None], tuple[int, ...]] = {}
        self._declarables: dict[tuple[bytes, tuple[Meld, ...], int | None], bool] = {}
        # Per seat, of its hand at rest (see `_rest`): its shape waits and a lower bound of
        # its shanten (-1 says nothing), and by face whether a discard of it may be claimed.
        # A sichuan winner's stay as they were: it claims nothing and discards its draws.
        self._rested: list[tuple[frozenset[int], int]] = [(_NO_WAITS, -1)] * 4
        self._screens: list[bytearray] = [bytearray(KINDS)] * 4
        self._turn_floor = -1  # a lower bound of the shanten of the hand to move
        self.events: list[Event] = []  # omniscient: the record's; see `events_for`
        self.decisions: list[dict[str, Any]] = []
        self.items: list[Item] = []
        self.settlement: dict[str, Any] | None = None
        self._start()

    # --- public interface ------------------------------------------------------------

    def pending(self) -> list[int]:
        """Seats whose decision is awaited, in seat order (the order they are asked in)."""
        if self._answers:
            return [s for s in self._asked if s not in self._answers]
        return [*self._asked]

    def revealed(self, seat: int) -> bytes:
        """A seat's concealed tiles with its winning tile, as laid face up."""
        counts = bytearray(self.hands[seat])
        if seat in self.win_tiles:
            counts[self.win_tiles[seat]] += 1
        return bytes(counts)

    def events_for(self, seat: int | None) -> list[Event]:
        """The events ``seat`` may know, in order (``None``: a spectator's public
        stream): `fangcheng.protocol.events.for_seat` of the omniscient ``events``."""
        return list(for_seat(self.events, seat))

    def observe(self, seat: int) -> Observation:
        """What ``seat`` may know now (see `observe`)."""
        return observe(self, seat)

    def legal_actions(self, seat: int) -> list[Action]:
        if seat in self._answers:
            return []
        return [*self._asked.get(seat, ())]

    def act(self, seat: int, action: Action | str) -> None:
        """Record one decision; the hand moves on once every asked seat has answered."""
        asked, answers = self._asked, self._answers
        # a seat is an int: True and 1.0 hash as 1, and would find seat 1's actions
        legal = () if type(seat) is not int or seat in answers else asked.get(seat, ())
        # The legal lists hold shared values: an identity scan spares the dataclass
        # __eq__ on every entry before the chosen one.
        for shared in legal:
            if shared is action:
                break
        else:
            action = self._legal(seat, action, legal)
        self.decisions.append({"seat": seat, "action": _TEXT.get(id(action)) or str(action)})
        if self.phase is _TURN:  # the usual decision: the one seat to move, acted on at once
            self._asked = {}
            if self.rules.bloody and in_last_four(len(self.wall)):
                self._passed_wins(asked, {seat: action})
            if action.kind is _A_DISCARD:  # most turns: a frame less than `_turn_action`
                self._discard(seat, action.tile, False)  # type: ignore[arg-type]
            else:
                self._turn_action(seat, action)
            return
        answers[seat] = action
        if len(answers) == len(asked):
            self._asked, self._answers = {}, {}
            if self.rules.bloody and in_last_four(len(self.wall)):
                self._passed_wins(asked, answers)
            self._resolve(answers)

    def _legal(self, seat: int, action: Action | str, legal: Sequence[Action]) -> Action:
        """``action`` (or its text) as one of ``legal`` by value; else the error naming
        them and carrying what reproduces it (`refusal`)."""
        problem = None  # by default: ``seat`` is no seat
        if type(seat) is int and 0 <= seat <= 3:  # not `in SEATS`: True == 1 and 1.0 == 1
            try:
                if not isinstance(action, Action):
                    action = Action.parse(action)
            except IllegalActionError as exc:
                problem = f"seat {seat}: {exc.reason}"
            else:
                if action in legal:
                    return action
                problem = f"seat {seat} cannot {action} in phase {self.phase.value}"
            shown = ", ".join(map(str, legal)) or "none (not this seat's decision)"
            problem += f"; legal: {shown}; hand {format_counts(self.hands[seat])}"
        raise refusal(self, seat, action, legal, problem)

    def escape(self, seat: int) -> None:
        """逃跑: ``seat`` leaves; it pays each other seat, kongs are settled, the hand ends.
        A bad seat or a finished hand is refused before anything is recorded."""
        no_seat = type(seat) is not int or not 0 <= seat <= 3
        if no_seat or self.over:
            problem = None if no_seat else f"seat {seat} cannot escape: the hand is over"
            raise refusal(self, seat, "escape", (), problem)
        self.decisions.append({"seat": seat, "action": "escape"})
        self.events.append(ev.Escape(seat=seat))
        self._reveal()
        self._pay("逃跑 escape", escape_payments(self.rules, self.options, self.base, seat))
        if not self.rules.bloody:
            self._kongs_at_end()
        self._finish("escape")

    def abandon(self) -> None:
        """An operator closed the table mid-hand (D92): every hand is laid open, the
        kongs made so far are settled (血战's were paid as they were made) and what the
        hand booked already stays (撵庄); no win is paid, nobody escaped, no fee is
        taken. A finished hand is refused before anything is recorded."""
        if self.over:
            raise IllegalActionError(
                "the hand is over: nothing to abandon", rules=self.rules.name, seed=self.seed
            )
        self._reveal()
        if not self.rules.bloody:
            self._kongs_at_end()
        self._finish(ABANDONED)

    # --- flow ------------------------------------------------------------------------

    def _ask(self, asked: dict[int, list[Action]]) -> None:
        self._asked = {s: acts for s, acts in asked.items() if acts}
        self._answers = {}

    def _start(self) -> None:
        if self.rules.piao_bets and "piao" not in self.option_input:
            self.phase = Phase.PIAO
            bets = [_PIAO.get(b) or Action(Act.PIAO, value=b) for b in self.rules.piao_bets]
            self._ask({s: bets for s in SEATS})
        else:
            self._deal()

    def _deal(self) -> None:
        dealt = self.wall.deal(self.dealer)
        for hand, tiles in zip(self.hands, dealt, strict=True):
            for t in tiles:
                hand[t] += 1
        for seat in _OTHERS[self.dealer]:
            self._rest(seat, -1)
        self.events.append(
            ev.Deal(
                dealer=self.dealer,
                dice=self.dice.dice,
                stacks=wall_sides(self.rules, self.dealer),
                wall_break=(self.dice.seat, self.dice.stacks),
                hands=tuple(map(format_counts, self.hands)),  # sorted, as written
            )
        )
        if self.rules.treasure:
            self.events.append(ev.Treasure(tile=_NAME[self._indicator()]))
            self._check_treasure()
        if self.rules.void_suit_choice and self.options.que is None:
            self.phase = Phase.QUE
            self._ask({s: [*_QUE] for s in SEATS})
        else:
            if self.options.que is not None:
                self.que = list(self.options.que)
            self._begin_turn(self.dealer, None)

    def _indicator(self) -> int:
        indicator = self.wall.indicator
        assert indicator is not None
        return indicator

    @property
    def treasure(self) -> int | None:
        """The current treasure face (baicheng), or None."""
        return self.wall.indicator if self.rules.treasure else None

    def _resolve(self, answers: dict[int, Action]) -> None:
        """Act on a window's answers (a turn's one answer is acted on at once)."""
        phase = self.phase
        if phase is _CLAIM:
            self._resolve_claim(answers)
        elif phase is Phase.ROB:
            self._resolve_rob(answers)
        elif phase is Phase.FENZHANG:
            ((seat, action),) = answers.items()
            self._fenzhang_answer(seat, action)
        elif phase is Phase.PIAO:
            self.piao = [answers[s].value for s in SEATS]
            self.options = dataclasses.replace(self.options, piao=tuple(self.piao))
            self.events.append(ev.Piao(bets=tuple(self.piao)))
            self._deal()
        elif phase is Phase.QUE:
            self.que = [answers[s].value for s in SEATS]
            self.options = dataclasses.replace(self.options, que=tuple(self.que))  # type: ignore[arg-type]
            self.events.append(ev.Que(suits=tuple(_SUIT[q] for q in self.que if q is not None)))
            self._begin_turn(self.dealer, None)

    # --- turns -----------------------------------------------------------------------

    def _begin_turn(
        self, seat: int, drawn: int | None, *, after_kong: bool = False, called: bool = False
    ) -> None:
        """Give ``seat`` the move and ask what it does; ``drawn`` is the tile it drew (None
        on the dealer's first turn, and after a call: then ``called``)."""
        self.phase = _TURN
        self.turn, self.drawn, self.after_kong = seat, drawn, after_kong
        # The screens read the counts in place; a check that needs the hand as a key or
        # for analysis (a win, a kong, shanten) takes a copy, which most turns never need.
        held = self.hands[seat]
        rules = self.rules
        acts: list[Action] = []
        floor = -1
        opening = not self.rivers[seat] and seat == self.dealer
        if drawn is not None:
            if after_kong:  # the hand before a replacement was never at rest
                shape, floor = self._ready_shape(self._without(held, drawn))
            else:
                shape, floor = self._rested[seat]
            floor -= 1  # a draw lowers shanten by one at most
            won = drawn in shape and self._can_win(seat, bytes(held))
            if not won and rules.treasure and drawn == self.wall.indicator and seat not in self.won:
                # the treasure stands in for a wait of a ready hand (D19)
                won = bool(shape) and bool(self._waits(seat, self._without(held, drawn)))
            if won:
                acts.append(_HU)
        elif called:  # taking a discard lowers shanten by one at most, as a draw does
            floor = self._rested[seat][1] - 1
        elif opening and self._can_win(seat, bytes(held)):
            acts.append(_HU)
        locked = self.ready[seat] or seat in self.won  # 报听, or a sichuan winner (D53)
        melds = self.melds[seat]
        if (
            (4 in held or ((melds or rules.xuanfeng) and _may_kong(held, melds, rules.xuanfeng)))
            and not self.just_chowed
            and not (
                opening
                and rules.dealer_opening_kongs is not None
                and self.dealer_kongs >= rules.dealer_opening_kongs
            )
            and self.wall.can_replace()
        ):
            acts += self._kong_actions(seat, bytes(held), locked)
        if locked and drawn is not None:
            acts.append(_DISCARD[drawn])
        else:
            acts += compress(_DISCARD, held)
            if rules.declare_ready and not self.ready[seat] and floor <= 0:
                hand = bytes(held)
                floor = shanten(hand, shapes=rules.shapes)
                # Only a discard that leaves the hand ready (shanten 0; 99 for a face not
                # held) can leave shape waits: one table pass for all, where working out
                # and memoising each discard's waits cost about 3% of a single-seat step
                # and a tenth of the engine's time in a hand of efficient bots.
                after = discard_shanten(hand, shapes=rules.shapes) if floor <= 0 else ()
                for t, left in enumerate(after):
                    if left <= 0:
                        key = self._without(hand, t)
                        if self._shape(key) and self._declarable(seat, key):
                            acts.append(_READY[t])
        self._turn_floor = floor
        self._asked = {seat: acts} if acts else {}  # no answers: the last was acted on

    def _draw_for(self, seat: int) -> None:
        live = self.wall.live  # read in place: a draw is the step of every turn
        left = len(live)
        if self.rules.treasure and left <= 4:
            self._start_fenzhang(seat)
            return
        if not left:
            self._exhausted()
            return
        if self.first_go_around and (seat == self.dealer or self.rivers[seat]):
            self.first_go_around = False
        tile = live.popleft()  # `Wall.draw`
        self.hands[seat][tile] += 1
        self.events.append(_DRAWS[seat][tile])
        self.just_chowed = False
        self._begin_turn(seat, tile)

    def _can_win(self, seat: int, hand: bytes) -> bool:
        if seat in self.won or seat in self.flower_pigs:  # one win each; D56 bars a pig
            return False
        return is_legal_win(self.rules, hand, self.melds[seat], self.que[seat])

    def _shape(self, key: bytes) -> frozenset[int]:
        """The shape waits of a concealed hand of 13 - 3k tiles, memoised per hand."""
        shape = self._shape_waits.get(key)
        if shape is None:
            shape = self._shape_waits[key] = frozenset(waits(key, shapes=self.rules.shapes))
        return shape

    @staticmethod
    def _without(hand: bytes | bytearray, tile: int) -> bytes:
        """``hand`` less one ``tile``."""
        less = bytearray(hand)
        less[tile] -= 1
        return bytes(less)

    def _ready_shape(self, key: bytes) -> tuple[frozenset[int], int]:
        """The shape waits of a concealed hand of 13 - 3k tiles, and a lower bound of its
        shanten: -1 if its waits were known, else the shanten (no waits if above 0)."""
        shape = self._shape_waits.get(key)
        if shape is not None:
            return shape, -1
        floor = shanten(key, shapes=self.rules.shapes)
        return (self._shape(key) if floor <= 0 else _NO_WAITS), floor

    def _wins_on(self, seat: int, tile: int) -> bool:
        """Whether ``tile`` completes the hand of a seat at rest (a claim or a robbed
        kong): only a tile of its shape waits is checked against the requirements."""
        if seat in self.won or seat in self.flower_pigs or tile not in self._rested[seat][0]:
            return False
        grown = bytearray(self.hands[seat])
        grown[tile] += 1
        return self._can_win(seat, bytes(grown))

    def _waits(
        self, seat: int, hand: bytes, melds: Sequence[Meld] | None = None
    ) -> tuple[int, ...]:
        """The legal waits of ``hand`` with the seat's melds (or ``melds``), memoised: a
        ready hand is asked again on each turn it keeps."""
        key = (hand, tuple(self.melds[seat] if melds is None else melds), self.que[seat])
        found = self._wait_sets.get(key)
        if found is None:
            found = self._wait_sets[key] = wait_set(self.rules, *key)
        return found

    def _declarable(self, seat: int, hand: bytes) -> bool:
        """报听 validity (D32) of ``hand`` with the seat's melds, memoised as `_waits` is."""
        key = (hand, tuple(self.melds[seat]), self.que[seat])
        found = self._declarables.get(key)
        if found is None:
            found = self._declarables[key] = declarable(self.rules, *key)
        return found

    def _is_que(self, seat: int, tile: int) -> bool:
        return in_void_suit(tile, self.que[seat])

    def _kong_actions(self, seat: int, hand: bytes, locked: bool) -> list[Action]:
        acts: list[Action] = []
        melds = self.melds[seat]
        faces = []
        if 4 in hand:
            faces = [t for t in range(KINDS) if hand[t] == 4 and not self._is_que(seat, t)]
        pengs = [m.face for m in melds if m.kind is _M_PENG and hand[m.face]] if melds else []
        if locked:  # only the drawn tile, and only if the waits stay the same (D32, D53)
            drawn = self.drawn
            faces = [t for t in faces if t == drawn]
            pengs = [t for t in pengs if t == drawn]
            if drawn is None:
                return []
            before = bytearray(hand)
            before[drawn] -= 1
            current = self._waits(seat, bytes(before))
            keep = []
            for t in faces + pengs:
                after = bytearray(hand)
                after[t] -= 4 if t in faces else 1
                meld = Meld(_M_AN_GANG if t in faces else MeldKind.BU_GANG, (t,) * 4)
                kept = [m for m in melds if not (m.kind is _M_PENG and m.face == t)]
                if self._waits(seat, bytes(after), [*kept, meld]) == current:
                    keep.append(t)
            faces = [t for t in faces if t in keep]
            pengs = [t for t in pengs if t in keep]
        if faces:
            acts += [_AN_GANG[t] for t in faces]
        if pengs:
            acts += [_BU_GANG[t] for t in pengs]
        if self.rules.xuanfeng and not locked:
            if any(m.kind is _M_XUANFENG for m in melds):
                acts += [_ADD[t] for t in DRAGONS if hand[t]]
            elif all(_DRAGON_COUNTS(hand)):
                acts.append(_XUANFENG)
        return acts

    def _turn_action(self, seat: int, action: Action) -> None:
        """A turn's decision other than a plain discard (`act` plays those itself)."""
        kind = action.kind
        if kind is _A_READY:
            assert action.tile is not None
            self._discard(seat, action.tile, True)
        elif kind is _A_HU:
            self._self_draw_win(seat)
        elif kind is Act.AN_GANG:
            assert action.tile is not None
            self._count_dealer_kong(seat)
            t = action.tile
            self.hands[seat][t] -= 4
            self.melds[seat].append(Meld(_M_AN_GANG, (t,) * 4))
            self.first_go_around = False
            self.events.append(ev.Kong(seat=seat, kind="an_gang", tile=_NAME[t]))
            self._kong_paid(seat, self.melds[seat][-1])
            self._replacement(seat)
        elif kind is Act.BU_GANG:
            assert action.tile is not None
            self._count_dealer_kong(seat)
            self._offer_rob(seat, action.tile, Act.BU_GANG)
        elif kind is Act.ADD:
            assert action.tile is not None
            self._count_dealer_kong(seat)
            self._offer_rob(seat, action.tile, Act.ADD)
        elif kind is Act.XUANFENG:
            self._count_dealer_kong(seat)
            for t in DRAGONS:
                self.hands[seat][t] -= 1
            self.melds[seat].append(Meld(MeldKind.XUANFENG, (33, 32, 31)))
            self.events.append(ev.Kong(seat=seat, kind="xuanfeng", tiles="CFP"))
            self.first_go_around = False
            self._check_treasure()
            self._begin_turn(seat, None)  # no replacement draw (D21)

    def _count_dealer_kong(self, seat: int) -> None:
        if seat == self.dealer and not self.rivers[seat]:
            self.dealer_kongs += 1

    def _replacement(self, seat: int) -> None:
        tile = self.wall.replacement()
        self.hands[seat][tile] += 1
        self.events.append(ev.Replacement(seat=seat, tile=_NAME[tile]))
        self._check_treasure()
        self._begin_turn(seat, tile, after_kong=True)

    def _discard(self, seat: int, tile: int, ready: bool) -> None:
        self.hands[seat][tile] -= 1
        self._rest(seat, self._turn_floor)  # a discard never lowers shanten
        self.rivers[seat].append(tile)
        self.kong_discard = self.after_kong
        self.after_kong = False
        self.drawn = None
        self.just_chowed = False
        if ready:
            self.ready[seat] = True
            self.events.append(ev.Discard(seat=seat, tile=_NAME[tile], ready=True))
        else:  # the most common event
            self.events.append(_DISCARDS[seat][tile])
        rules = self.rules
        if rules.chase_dealer_pays and self.first_go_around:
            self._chase_dealer(seat, tile)
        if rules.treasure and (tile == self.wall.indicator or not len(self.wall)):
            # A discard shows only its own face, so only a copy of the treasure face can
            # newly expose the treasure. Once the live wall is empty no indicator can be
            # flipped, and each check logs that anew, so those checks all still run.
            self._check_treasure()
        # A seat can claim only a tile it holds two of, waits on, or may chi: most discards
        # pass all three screens, and play goes straight on.
        chis: list[Action] = []
        if rules.chi and tile < 27:  # a plain loop: a comprehension costs a call
            hand = self.hands[(seat + 1) % 4]
            for run, x, y in _CHI_ON[tile]:
                if hand[x] and hand[y]:
                    chis.append(run)
        screens = self._screens
        a, b, c = _OTHERS_ASKED[seat]
        if chis or screens[a][tile] or screens[b][tile] or screens[c][tile] or self.ask_all:
            self._open_claims(seat, tile, chis)
        else:
            self._draw_for((seat + 1) % 4)

    def _open_claims(self, seat: int, tile: int, chis: Sequence[Action]) -> None:
        """Ask the seats that may claim ``seat``'s discard (every seat still playing, with
        ``ask_all``); ``chis``: the runs its 下家 could chi. Play goes on if none may."""
        asked = {}
        won = self.won
        chi_seat = (seat + 1) % 4
        for o in _OTHERS_ASKED[seat]:
            if won and o in won:
                continue
            runs = chis if o == chi_seat else ()
            if (self._screens[o][tile] or runs) and (acts := self._claim_actions(o, tile, runs)):
                asked[o] = acts
            elif self.ask_all:
                asked[o] = [_PASS]
        if asked:
            self.claim = (seat, tile)
            self.phase = _CLAIM
            self._asked, self._answers = asked, {}
        else:
            self._draw_for((seat + 1) % 4)

    def _rest(self, seat: int, floor: int) -> None:
        """Note what the seat's hand is at rest, as it stays until its next turn (or a
        robbed addition) while the others play: its shape waits, a lower bound of its
        shanten (``floor`` is one), and by face whether it may claim a discard of it — a
        face it holds two of or waits on. `_discard` reads this screen for three seats on
        every discard, and `_begin_turn` the waits and bound on the seat's next draw."""
        held = self.hands[seat]
        shape = _NO_WAITS  # a hand that is not ready has no waits
        if floor <= 0:
            shape, floor = self._ready_shape(bytes(held))
        self._rested[seat] = shape, floor
        screen = held.translate(_PAIRED)
        if shape:
            for t in shape:
                screen[t] = 1
        self._screens[seat] = screen

    def _claim_actions(self, seat: int, tile: int, chis: Sequence[Action]) -> list[Action]:
        """What ``seat`` may do with a discarded ``tile``; ``chis``: the runs it could chi."""
        acts = [_HU] if self._wins_on(seat, tile) else []
        held = self.hands[seat][tile]
        if (held >= 2 or chis) and may_meld_discard(tile, self.ready[seat], self.que[seat]):
            if held >= 2:
                acts.append(_PENG[tile])
            if held >= 3 and self.wall.can_replace():
                acts.append(_GANG[tile])
            acts += chis
        if acts:
            acts.append(_PASS)
        return acts

    def _passed_wins(
        self, asked: Mapping[int, list[Action]], answers: Mapping[int, Action]
    ) -> None:
        """Sichuan, in the last-four zone (D79): passing a win makes a 花猪 (D56)."""
        for seat, action in answers.items():
            if action.kind is not _A_HU and _HU in asked.get(seat, ()):
                self.flower_pigs.add(seat)
                self.events.append(ev.FlowerPig(seat=seat))

    def _claimed_wins(self, source: int, tile: int, answers: dict[int, Action], by: WinBy) -> bool:
        """Book the wins of a claim window (截胡 or 一炮多响); False if nobody won."""
        winners = [s for s in _OTHERS[source] if answers.get(s, _PASS).kind is _A_HU]
        if not winners:
            return False
        if not self.rules.multiple_winners:
            winners = winners[:1]
        if not self.won and len(winners) > 1:
            self.first_multi_source = source
        if by is _BY_DISCARD:
            self.rivers[source].pop()
        else:  # the robbed addition is void (D9)
            self.hands[source][tile] -= 1
            self._rest(source, -1)
            self.events.append(ev.Robbed(seat=source, tile=_NAME[tile]))
        for i, w in enumerate(winners):
            self._win(w, tile, by, source, takes_tile=i == 0)
        self._continue_after(winners[-1])
        return True

    def _resolve_claim(self, answers: dict[int, Action]) -> None:
        assert self.claim is not None
        discarder, tile = self.claim
        self.claim = None  # the window is closed: a claim is open only in CLAIM and ROB
        if self._claimed_wins(discarder, tile, answers, _BY_DISCARD):
            return
        order = _OTHERS[discarder]
        for seat in order:
            kind = answers.get(seat, _PASS).kind
            if kind is _A_PENG or kind is _A_GANG:
                self._call(seat, discarder, tile, answers[seat])
                return
        for seat in order:
            if answers.get(seat, _PASS).kind is _A_CHI:
                self._call(seat, discarder, tile, answers[seat])
                return
        self._draw_for((discarder + 1) % 4)

    def _call(self, seat: int, discarder: int, tile: int, action: Action) -> None:
        self.rivers[discarder].pop()
        self.first_go_around = False
        meld, taken = called_meld(action, tile, discarder, treasure=self.treasure)
        for x in taken:
            self.hands[seat][x] -= 1
        self.melds[seat].append(meld)
        self.events.append(
            ev.Call(
                seat=seat,
                kind=meld.kind.value,  # type: ignore[arg-type]  # chi, peng or ming_gang
                tiles=_meld_text(meld.tiles),
                source=discarder,
            )
        )
        self._check_treasure()
        if meld.kind is _M_MING_GANG:
            self._kong_paid(seat, meld)
            self._replacement(seat)
        else:
            self.just_chowed = meld.kind is _M_CHI
            self._begin_turn(seat, None, called=True)

    # --- robbing a kong --------------------------------------------------------------

    def _offer_rob(self, seat: int, tile: int, kind: Act) -> None:
        self.claim = (seat, tile)
        self.rob_kind = kind
        self.events.append(ev.Add(seat=seat, kind=kind.value, tile=_NAME[tile]))  # type: ignore[arg-type]
        asked: dict[int, list[Action]] = {}
        for o in _OTHERS_ASKED[seat]:
            if o in self.won:
                continue
            acts = []
            if self._wins_on(o, tile):
                acts.append(_HU)
            if (
                kind is Act.ADD
                and self.hands[o][tile] >= 2
                and may_meld_discard(tile, self.ready[o], self.que[o])
            ):
                acts.append(_PENG[tile])  # 抢碰 (D13)
            if acts or self.ask_all:
                acts.append(_PASS)
            asked[o] = acts
        self.phase = Phase.ROB
        self._ask(asked)
        if not self._asked:
            self._complete_addition(seat, tile, kind)

    def _complete_addition(self, seat: int, tile: int, kind: Act) -> None:
        self.claim = None
        self.hands[seat][tile] -= 1
        melds = self.melds[seat]
        if kind is Act.BU_GANG:
            i = next(i for i, m in enumerate(melds) if m.kind is MeldKind.PENG and m.face == tile)
            melds[i] = Meld(MeldKind.BU_GANG, (tile,) * 4, melds[i].source)
        else:
            i = next(i for i, m in enumerate(melds) if m.kind is MeldKind.XUANFENG)
            melds[i] = Meld(MeldKind.XUANFENG, (*melds[i].tiles, tile))
        self.events.append(ev.Kong(seat=seat, kind=kind.value, tile=_NAME[tile]))  # type: ignore[arg-type]
        self._kong_paid(seat, melds[i])
        self._replacement(seat)

    def _resolve_rob(self, answers: dict[int, Action]) -> None:
        assert self.claim is not None and self.rob_kind is not None
        konger, tile = self.claim
        self.claim = None  # as in `_resolve_claim`
        if self._claimed_wins(konger, tile, answers, WinBy.ROBBED_KONG):
            return
        order = _OTHERS[konger]
        for seat in order:
            if answers.get(seat, _PASS).kind is Act.PENG:
                self.hands[konger][tile] -= 1
                self._rest(konger, -1)
                self.rivers[konger].append(tile)  # the robbed dragon is taken like a discard
                self._call(seat, konger, tile, _PENG[tile])
                return
        self._complete_addition(konger, tile, self.rob_kind)

    # --- wins and endings ------------------------------------------------------------

    def _situation(self, winner: int, tile: int, by: WinBy, source: int | None) -> Situation:
        seats = tuple(Seat(bytes(self.hands[s]), tuple(self.melds[s])) for s in SEATS)
        indicators = self.wall.indicators
        first = (
            self.first_go_around
            and source is None
            and not self.rivers[winner]
            and (winner != self.dealer or self.drawn is None)
        )
        return Situation(
            rules=self.rules,
            options=self.options,
            base=self.base,
            dealer=self.dealer,
            winner=winner,
            win_tile=tile,
            win_by=by,
            source=source,
            after_kong=self.after_kong if source is None else self.kong_discard,
            treasure=self.treasure,
            retired_treasure=tuple(indicators[:-1]) if self.rules.treasure else (),
            declared_ready=tuple(self.ready),
            seats=seats,
            won=frozenset(self.won),
            last_tile=not len(self.wall),
            first_draw=first,
            fenzhang_drawn=frozenset(self.fenzhang_kept - {winner}),
        )

    def _self_draw_win(self, seat: int) -> None:
        tile = self.drawn
        by = WinBy.FENZHANG if self.phase is Phase.FENZHANG else WinBy.SELF_DRAW
        if tile is None:  # 天胡: the dealer's fourteen; the best tile stands for the last
            tile = max(
                (t for t in range(KINDS) if self.hands[seat][t]),
                key=lambda t: self._winner_gain(seat, t),
            )
        treasure = self.treasure
        if treasure is not None and tile == treasure:
            by = WinBy.TREASURE
        self.hands[seat][tile] -= 1
        if self.phase is Phase.FENZHANG:
            self.fenzhang_kept.discard(seat)
        self._win(seat, tile, by, None)
        self._continue_after(seat)

    def _winner_gain(self, seat: int, tile: int) -> int:
        self.hands[seat][tile] -= 1
        try:
            result = score(self._situation(seat, tile, WinBy.SELF_DRAW, None))
        finally:
            self.hands[seat][tile] += 1
        return result.deltas[seat] if result.win else -1

    def _win(
        self, seat: int, tile: int, by: WinBy, source: int | None, *, takes_tile: bool = True
    ) -> None:
        """Score and book a win. Of several winners on one discard, the first takes the tile."""
        situation = self._situation(seat, tile, by, source)
        result = score(situation)
        if not result.win:
            raise AssertionError(f"engine offered a win the scorer refuses: {result.reason}")
        self.win_scores.append(result)
        if takes_tile:
            self.win_tiles[seat] = tile  # laid beside the hand, which stays 13 - 3k tiles
        self.won.append(seat)
        self.events.append(
            ev.Win(
                seat=seat,
                tile=_NAME[tile],
                by=by.value,
                source=source,
                fans=tuple(a.fan.name for a in result.reading.fans) if result.reading else (),
                deltas=tuple(result.deltas),
            )
        )
        self.items.append(Item(f"胡 seat {seat}", tuple(result.deltas)))
        if not self.rules.bloody:
            self._reveal()
            self._kongs_at_end()
            self._finish("win")

    def _continue_after(self, seat: int) -> None:
        """血战, once a decision's wins are all booked: the hand ends at three winners,
        counted after every claimant of one discard has won and been paid, so a 一炮多响 on
        a winner's discard may bring a fourth (D53, D80); else play goes on from the last
        winner's 下家, winners drawing locked."""
        if self.over:
            return
        if len(self.won) >= 3:
            self._reveal()
            self._finish("win")
        else:
            self._draw_for((seat + 1) % 4)

    def _kong_paid(self, seat: int, meld: Meld) -> None:
        """血战 pays kongs when they are made (刮风下雨, D54); the others at the end."""
        if not self.rules.bloody:
            return
        payments = kong_payments(
            self.rules,
            self.options,
            self.base,
            self.dealer,
            [(bytes(KINDS), [meld] if s == seat else []) for s in SEATS],
            won=frozenset(self.won),
        )
        for p in payments:
            self.kong_transfers.extend(p.transfers)
            # The face apart from the reason, so that an 暗杠's can be hidden (`for_seat`).
            face = None if p.face is None else _NAME[p.face]
            self._pay(p.reason, p.transfers, seat=seat, tile=face)

    def _kongs_at_end(self) -> None:
        payments = kong_payments(
            self.rules,
            self.options,
            self.base,
            self.dealer,
            [(bytes(self.hands[s]), self.melds[s]) for s in SEATS],
            treasure=self.treasure,
        )
        for p in payments:
            self._pay(p.label, p.transfers)

    def _pay(
        self,
        reason: str,
        transfers: Sequence[Transfer],
        *,
        seat: int | None = None,
        tile: str | None = None,
    ) -> None:
        """Book a payment; ``seat`` and ``tile``: the kong paid for during play, whose
        face ``reason`` leaves out."""
        deltas = deltas_of(transfers)
        if any(deltas):
            payment = ev.Payment(reason=reason, deltas=deltas, seat=seat, tile=tile)
            self.items.append(Item(payment.text, deltas))
            self.events.append(payment)

    def _reveal(self) -> None:
        """The hand is over: lay every hand and 暗杠 open, before the end-of-hand
        payments name them."""
        kongs = [[m.face for m in melds if m.kind is _M_AN_GANG] for melds in self.melds]
        self.events.append(
            ev.Reveal(
                hands=tuple(map(format_counts, self.hands)),
                # most hands have no 暗杠: skip the formatting of nothing
                an_gang=tuple(format_tiles(faces) if faces else "" for faces in kongs),
            )
        )

    def _chase_dealer(self, seat: int, tile: int) -> None:
        """撵庄 (D41): the three seats after the dealer follow its first discard."""
        if not self.rules.chase_dealer_pays or not self.first_go_around:
            return
        if len(self.first_discards) < 4 and seat == (self.dealer + len(self.first_discards)) % 4:
            self.first_discards.append(tile)
            if len(self.first_discards) == 4:
                self._pay(
                    "撵庄 chasing the dealer",
                    chase_dealer_payments(
                        self.rules, self.options, self.base, self.dealer, self.first_discards
                    ),
                )

    def _exhausted(self) -> None:
        self.events.append(ev.Exhausted())
        self._reveal()
        if self.rules.bloody:
            self._sichuan_checks()
        else:
            self._kongs_at_end()
            self._pay(
                "流局 dealer pays", draw_payments(self.rules, self.options, self.base, self.dealer)
            )
        self._finish("draw")

    def _sichuan_checks(self) -> None:
        """查花猪, 查大叫, 退税 at exhaustion (§4.10), as the settlement layer reckons them."""
        for reason, transfers in sichuan_exhaustion(
            self.rules,
            self.options,
            self.base,
            [(bytes(self.hands[s]), self.melds[s]) for s in SEATS],
            self.won,
            self.flower_pigs,
            self.kong_transfers,
        ):
            self._pay(reason, transfers)

    def _finish(self, how: str) -> None:
        self.phase = Phase.END
        self.over = True
        self._asked, self._answers = {}, {}
        deltas = [sum(item.deltas[s] for item in self.items) for s in SEATS]
        fees = (0, 0, 0, 0) if how == ABANDONED else service_fees(self.options, deltas)
        self.settlement = {
            "end": how,
            "items": [{"reason": i.reason, "deltas": list(i.deltas)} for i in self.items],
            "deltas": deltas,
            "fees": list(fees),
            "total": [d - f for d, f in zip(deltas, fees, strict=True)],
        }
        self.events.append(ev.End(how=how, total=tuple(self.settlement["total"])))  # type: ignore[arg-type]

    # --- baicheng: treasure and 分张 ---------------------------------------------------

    def _visible(self, face: int) -> int:
        """Copies of ``face`` anyone can see: discards, laid melds, retired indicators."""
        seen = sum(map(list.count, self.rivers, repeat(face)))
        for melds in self.melds:
            for m in melds:
                if m.kind is not _M_AN_GANG:
                    seen += m.tiles.count(face)
        return seen + self.wall.indicators[:-1].count(face)

    def _check_treasure(self) -> None:
        """换宝 while every remaining copy of the treasure face is visible (D29)."""
        if not self.rules.treasure:
            return
        wall = self.wall
        while (face := wall.indicator) is not None and self._visible(face) >= 3:
            if wall.flip_indicator() is None:
                self.events.append(ev.Treasure(tile=None))
                return
            self.events.append(ev.Treasure(tile=_NAME[self._indicator()]))

    def _start_fenzhang(self, seat: int) -> None:
        """分张 (D30): the live wall's last tiles, one per seat in turn order."""
        self.phase = Phase.FENZHANG
        self._fenzhang_order = [(seat + k) % 4 for k in range(min(4, len(self.wall)))]
        self.events.append(ev.Fenzhang(order=tuple(self._fenzhang_order)))
        self._fenzhang_next()

    def _fenzhang_next(self) -> None:
        if not self._fenzhang_order:
            self._exhausted()
            return
        seat = self._fenzhang_order.pop(0)
        tile = self.wall.draw()
        self.hands[seat][tile] += 1
        self.fenzhang_kept.add(seat)
        self.events.append(ev.Draw(seat=seat, tile=_NAME[tile], fenzhang=True))
        self.turn, self.drawn, self.after_kong = seat, tile, False
        acts = []
        hand = bytes(self.hands[seat])
        treasure = self.treasure
        if self._can_win(seat, hand):
            acts.append(_HU)
        elif treasure is not None and tile == treasure:
            before = bytearray(hand)
            before[tile] -= 1
            if self._waits(seat, bytes(before)):
                acts.append(_HU)
        if acts:
            self._ask({seat: [*acts, _PASS]})
        elif self.ask_all:  # asked all the same: being asked tells nothing of the hand
            self._ask({seat: [_PASS]})
        else:
            self._fenzhang_next()

    def _fenzhang_answer(self, seat: int, action: Action) -> None:
        if action.kind is Act.HU:
            self._self_draw_win(seat)
        else:
            self._fenzhang_next()


# --- observations ----------------------------------------------------------------------


def observe(round_: Round, seat: int) -> Observation:
    """The view of ``seat``: never another seat's concealed tiles or the wall order."""
    # Bots observe before every decision. The views are built by `tuple.__new__`, fields
    # in order: a named tuple's keyword constructor costs several times as much, and
    # `_make` adds a Python frame (the two cut an observation from about 3.2 to 2.4 µs).
    ended = round_.over
    que = round_.que if None not in round_.que else _NO_QUE
    won, hands, rivers, ready, piao = (
        round_.won,
        round_.hands,
        round_.rivers,
        round_.ready,
        round_.piao,
    )
    views = []
    for s, melds in enumerate(round_.melds):
        if melds:
            shown = tuple(melds)
            if not ended and s != seat and _M_AN_GANG in map(_KIND, shown):  # laid face down
                shown = tuple(m for m in shown if m.kind is not _M_AN_GANG)
            hidden = len(melds) - len(shown)
        else:  # most seats, most of a hand
            shown, hidden = (), 0
        views.append(
            _NEW(
                SeatView,
                (
                    shown,  # melds
                    hidden,  # hidden_kongs
                    tuple(rivers[s]),  # river
                    _DIGITS(hands[s]) % 255,  # concealed: `sum`, in 2/3 of its time
                    ready[s],
                    que[s],
                    s in won,
                    piao[s],
                    round_.revealed(s) if ended or s in won else None,
                ),
            )
        )
    items = round_.items
    # each seat's sum over the items' deltas
    scores = tuple(map(sum, zip(*map(_DELTAS, items), strict=True))) if items else _NO_SCORES
    phase = round_.phase
    legal = () if seat in round_._answers else tuple(round_._asked.get(seat, ()))
    wall = round_.wall
    left = len(wall.live)  # `len(wall)`
    rules = round_.rules
    return _NEW(
        Observation,
        (
            seat,
            rules,
            phase,
            round_.dealer,
            round_.turn,
            round_.base,
            left,
            wall.indicator if rules.treasure else None,  # `Round.treasure`
            tuple(wall.indicators[:-1]),  # retired
            bytes(hands[seat]),  # hand
            round_.drawn if round_.turn == seat else None,  # drawn
            tuple(views),  # seats
            scores,
            round_.claim if phase is _CLAIM or phase is Phase.ROB else None,  # last_discard
            legal,
            # must_win: as `act` judges a passed win, at this moment (D56, D79); the
            # membership test last, as it compares by value
            rules.bloody and in_last_four(left) and _HU in legal,
        ),
    )


# --- the record a hand writes (read back and replayed by `fangcheng.engine.record`) ---


def record_of(round_: Round) -> dict[str, Any]:
    """The record of a hand (finished or not)."""
    wall = format_tiles(round_.wall.tiles, sort=False)
    return {
        "format": FORMAT,
        "version": VERSION,
        "rules": round_.rules.name,
        "options": round_.option_input,
        "seed": round_.seed,
        "dealer": round_.dealer,
        "base": round_.base,
        **({"ask_all": True} if round_.ask_all else {}),
        "wall": wall if round_.shuffled else {"head": wall},
        "decisions": list(round_.decisions),
        "events": msgspec.to_builtins(round_.events),
        "settlement": round_.settlement,
    }


def refusal(
    round_: Round, seat: object, action: object, legal: Sequence[object], problem: str | None = None
) -> IllegalActionError:
    """The error for a decision ``round_`` refuses, before recording anything: ``problem``
    (by default: ``seat`` is no seat), and what reproduces it — the rule set, seed and
    decision index, and the record so far with this decision appended."""
    if not isinstance(action, str):
        action = str(action) if isinstance(action, Action) else f"<{type(action).__name__}>"
    if problem is None:
        problem = f"{contract.quote(seat)} is not a seat (0..3): cannot {action}"
    record = record_of(round_)
    # a seat that is no int is written as its repr: replay names it as a bad seat
    plain = type(seat) is int and -(2**63) <= seat < 2**64
    record["decisions"].append({"seat": seat if plain else contract.quote(seat), "action": action})
    return IllegalActionError(
        problem,
        seat=seat,
        action=action,
        legal=tuple(map(str, legal)),
        rules=round_.rules.name,
        seed=round_.seed,
        decision=len(round_.decisions),
        record=record,
    )
