"""The game of ``fangcheng play`` (a match against three bots in the terminal), without the
screen.

This module is the game without the screen: it deals the hands of a `Match`, lets the
bots answer for their seats, turns what the player types into one of the seat's legal
actions (or a one-line reason why not), and saves each hand's record. `view` draws it,
`app` runs it with Textual, and `play` is the command that puts them together; Textual is
imported only to play, so the library keeps no dependency.

The bots move one `Game.step` at a time when the game is ``paced`` (the app times the
steps, ``--speed`` seconds apart); `ReplayView` puts a saved record on the same table,
step by step (``fangcheng replay FILE --show``). Hints are the expert bot's
(`fangcheng.ai.advice`).

What the player types, besides the keys listed on screen: a position in the hand
(``3``), a tile in any notation (``5m``, ``五万``, ``C``), ``t`` and a position or tile
for 报听, an action's text form (``discard 5m``, ``chi 345m``), and Enter alone when
there is one thing to do. In a claim window a claim key wins over a tile of the same
letter, in either case (``P`` is 碰 there, not 白板).
"""

from __future__ import annotations

import json
import os
import random
import shlex
import shutil
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Final

import msgspec

from fangcheng.ai.advice import advise
from fangcheng.engine.match import Match
from fangcheng.engine.record import ESCAPE, RecordInput, record_of, replay
from fangcheng.players.bots import StrongBot, make_bot
from fangcheng.protocol.actions import Act, Action, IllegalActionError
from fangcheng.protocol.events import Draw, Event, Replacement
from fangcheng.protocol.observation import Observation
from fangcheng.tiles.notation import (
    InvalidNotationError,
    format_counts,
    parse_tiles,
    tile_name,
)

__all__ = ["Game", "InputError", "Key", "ReplayView", "default_records", "replay_command"]

SUIT_KEYS: Final = "mps"


class InputError(ValueError):
    """What the player typed is not an action now; the message says why, in one line."""


@dataclass(frozen=True, slots=True)
class Key:
    """One legal action and what to type for it."""

    key: str
    action: Action


class Game:
    """A match between the player at ``seat`` and three bots, one decision at a time."""

    named = False  # the player's seat is "you"; a replay names every seat

    def __init__(
        self,
        rules: str,
        *,
        seat: int = 0,
        bots: str = "strong",
        seed: int = 0,
        base: int = 1,
        quan: int = 1,
        records: Path,
        paced: bool = False,
    ) -> None:
        self.match = Match(rules, seed=seed, base=base, quan=quan)
        self.seat, self.seed, self.records = seat, seed, records
        rng = random.Random(seed)
        self.bot_name = bots
        # one generator per seat, whichever seat the player takes
        self.bots = {s: make_bot(bots, random.Random(rng.randrange(2**63))) for s in range(4)}
        del self.bots[seat]
        self.paced = paced  # the app lets the bots play one `step` at a time
        self.stamp = time.strftime("%Y%m%d-%H%M%S")
        self.saved: list[Path] = []
        self.hands = 0
        self._deal()

    @property
    def rules(self) -> str:
        return self.match.rules.name

    def _deal(self) -> None:
        self.hands += 1
        self.before = tuple(self.match.scores)  # the running totals before this hand
        self.record: Path | None = None  # where this hand's record was saved
        self.save_error = ""
        self.round = self.match.new_round()
        # the hint's measures: a strong bot that tracks one hand's table
        self.adviser = StrongBot(random.Random(self.hands))
        if not self.paced:
            self.advance()

    def next_hand(self) -> None:
        """Deal the next hand of the match (the current one must be over)."""
        if not self.round.over or self.match.over:
            raise ValueError("the hand is still on, or the match is over")
        self._deal()

    def advance(self) -> None:
        """Let the bots decide until the player is asked (or the hand ends)."""
        while self.step():
            pass

    def step(self) -> bool:
        """One move of the bots (every bot the engine waits on), or a 血战 winner's forced
        discard (its hand is laid down); False when the player is asked or the hand is
        over. The app calls it on a timer to pace the bots."""
        r = self.round
        if self.asked():
            return False
        if r.pending() == [self.seat]:  # a laid-down 血战 winner's one discard
            r.act(self.seat, r.legal_actions(self.seat)[0])
        else:
            for s in r.pending():
                if s != self.seat:
                    r.act(s, self.bots[s].act(r.observe(s)))
        if r.over:
            self.match.finish(r)
            self.save()
        return True

    def where(self) -> str:
        """The place in the match, for the table's header."""
        return f"圈 {self.match.current_quan}/{self.match.quan} · hand {self.hands}"

    def save(self) -> Path | None:
        """Write the hand's record (finished or not); None, with ``save_error``, if the
        file system refuses."""
        path = self.records / f"{self.stamp}-{self.rules}-seed{self.seed}-{self.hands:02d}.json"
        try:
            self.records.mkdir(parents=True, exist_ok=True)
            path.write_text(json.dumps(record_of(self.round), ensure_ascii=False, indent=1))
        except OSError as exc:
            self.save_error = f"could not save the record {path}: {exc.strerror}"
            return None
        if path not in self.saved:
            self.saved.append(path)
        self.record, self.save_error = path, ""
        return path

    def observe(self) -> Observation:
        return self.round.observe(self.seat)

    def events(self) -> list[Event]:
        """The hand's events as the player may know them: the log reads only these."""
        return self.round.events_for(self.seat)

    def order(self, obs: Observation) -> list[int]:
        """The player's concealed tiles as shown: sorted, the tile just drawn last."""
        hand = bytearray(obs.hand)
        if obs.drawn is not None:
            hand[obs.drawn] -= 1
        tiles = parse_tiles(format_counts(hand))  # the canonical order: suits, ESWN, CFP
        return tiles + ([obs.drawn] if obs.drawn is not None else [])

    def keys(self, obs: Observation) -> list[Key]:
        """Every legal action with its key; discards are keyed by their tile."""
        legal = obs.legal
        kongs = [a for a in legal if a.kind in (Act.AN_GANG, Act.BU_GANG)]
        adds = [a for a in legal if a.kind is Act.ADD]
        chis = [a for a in legal if a.kind is Act.CHI]
        out = []
        for a in legal:
            kind = a.kind
            name = tile_name(a.tile) if a.tile is not None else ""
            if kind is Act.DISCARD:
                key = name
            elif kind is Act.READY:
                key = "t" + name
            elif kind is Act.HU:
                key = "h"
            elif kind is Act.PASS:
                key = "n"
            elif kind in (Act.PENG, Act.GANG):
                key = kind.value[0]
            elif kind in (Act.AN_GANG, Act.BU_GANG):
                key = "g" if len(kongs) == 1 else "g" + name
            elif kind is Act.ADD:
                key = "a" if len(adds) == 1 else "a" + name
            elif kind is Act.XUANFENG:
                key = "x"
            elif kind is Act.CHI:
                key = "c" if len(chis) == 1 else f"c{chis.index(a) + 1}"
            elif kind is Act.QUE:
                key = SUIT_KEYS[a.value]
            else:  # Act.PIAO
                key = str(a.value)
            out.append(Key(key, a))
        return out

    def choose(self, text: str) -> Action:
        """The legal action that ``text`` names; `InputError` says why there is none."""
        obs = self.observe()
        legal = obs.legal
        if not legal:
            raise InputError("nothing to decide now")
        typed = text.strip()
        compact = "".join(typed.split())
        if not compact:
            if len(legal) == 1:
                return legal[0]
            raise InputError(f"type one of: {self.summary(obs)}")
        keys = self.keys(obs)
        by_key = {k.key: k.action for k in keys}
        if compact in by_key:
            return by_key[compact]
        # a claim key in either case before a tile: P is 碰 in a claim window, not 白板
        calls = {k.key: k.action for k in keys if k.action.kind is not Act.DISCARD}
        if compact.lower() in calls:
            return calls[compact.lower()]
        if typed.split()[0].lower() in {a.value for a in Act}:
            try:
                action = Action.parse(typed)
            except IllegalActionError as exc:
                raise InputError(str(exc)) from None
            if action in legal:
                return action
            raise InputError(f"{action} is not possible now; type one of: {self.summary(obs)}")
        if compact.isdigit():
            if not any(a.kind is Act.DISCARD for a in legal):
                raise InputError(f"you cannot discard now; type one of: {self.summary(obs)}")
            return self._discard(obs, self._at(obs, int(compact)), Act.DISCARD)
        if compact[0] == "t" and len(compact) > 1:
            rest = compact[1:]
            tile = self._at(obs, int(rest)) if rest.isdigit() else self._tile(rest)
            return self._discard(obs, tile, Act.READY)
        try:
            tile = self._tile(compact)
        except InputError:
            if compact[0].isdigit():  # meant as a tile: say what is wrong with it
                raise
            raise InputError(
                f"{typed!r} is not an action here; type one of: {self.summary(obs)} (or help)"
            ) from None
        return self._discard(obs, tile, Act.DISCARD)

    def _at(self, obs: Observation, position: int) -> int:
        order = self.order(obs)
        if not 1 <= position <= len(order):
            raise InputError(f"there is no tile at {position}: your hand is 1-{len(order)}")
        return order[position - 1]

    @staticmethod
    def _tile(text: str) -> int:
        try:
            tiles = parse_tiles(text)
        except InvalidNotationError as exc:
            raise InputError(str(exc)) from None
        if len(tiles) != 1:
            raise InputError(f"{text!r} is {len(tiles)} tiles; name one")
        return tiles[0]

    def _discard(self, obs: Observation, tile: int, kind: Act) -> Action:
        legal = obs.legal
        action = Action(kind, tile)
        if action in legal:
            return action
        name = tile_name(tile)
        allowed = [tile_name(a.tile) for a in legal if a.kind is kind and a.tile is not None]
        if not obs.hand[tile]:
            raise InputError(f"{name} is not in your hand")
        if kind is Act.READY:
            if allowed:
                raise InputError(
                    f"报听 is not possible discarding {name}; it is on: {' '.join(allowed)}"
                )
            raise InputError("报听 is not possible now: the hand is not ready on one discard")
        if not allowed:
            raise InputError(f"you cannot discard now; type one of: {self.summary(obs)}")
        if len(allowed) == 1 and obs.drawn is not None:
            raise InputError(
                f"your hand is locked (报听 or won): discard the tile drawn, {allowed[0]}"
            )
        raise InputError(f"{name} cannot be discarded now; you may discard: {' '.join(allowed)}")

    def hint(self) -> str:
        """The expert bot's suggestion (`advise`), with what to type for it (a discard's
        position) and why; the same for one decision however often it is asked (its
        playouts are drawn from the game's seed, the hand and the decision)."""
        return self.hinter()()

    def hinter(self) -> Callable[[], str]:
        """`hint` as a call to make later, perhaps on another thread (its playouts take a
        fraction of a second): it holds the observation and a copy of the adviser's
        reading, so it reads nothing of the game, which may play on meanwhile. An
        `InputError` at once when there is nothing to decide."""
        obs = self.observe()
        if not obs.legal:
            raise InputError("nothing to decide now: the bots are playing")
        rng = random.Random(f"{self.seed}/{self.hands}/{len(self.round.decisions)}")
        adviser = StrongBot(random.Random(0))
        adviser.follow(self.adviser)
        order, keys = self.order(obs), self.keys(obs)

        def hint() -> str:
            action, measure = advise(obs, rng, strong=adviser)
            if action.kind is Act.DISCARD and action.tile is not None:
                key = str(order.index(action.tile) + 1)
            else:
                key = next(k.key for k in keys if k.action == action)
            return f"hint: {key} ({action})" + (f" · {measure}" if measure else "")

        return hint

    def decision(self) -> tuple[int, int]:
        """Which decision the player is at (the hand, the decisions made in it): a hint
        made for another is not shown."""
        return self.hands, len(self.round.decisions)

    def summary(self, obs: Observation) -> str:
        """The keys of the moment in one short list, discards as a position range."""
        keys = self.keys(obs)
        out = []
        if any(k.action.kind is Act.DISCARD for k in keys):
            out.append(f"1-{len(self.order(obs))} or a tile")
        out += [k.key for k in keys if k.action.kind is not Act.DISCARD]
        return ", ".join(out)

    def asked(self) -> bool:
        """Whether the bots wait on the player (or the hand is over): no `step` to make."""
        r = self.round
        if r.over:
            return True
        if r.pending() != [self.seat]:
            return False
        return self.seat not in r.won or len(r.legal_actions(self.seat)) > 1

    def play(self, action: Action) -> None:
        """Make the player's decision, then let the bots play on (unless paced)."""
        r = self.round
        self.adviser.track(self.observe())  # the hint's reading of the table, as it went
        r.act(self.seat, action)
        if r.over:
            self.match.finish(r)
            self.save()
        elif not self.paced:
            self.advance()

    def quit(self) -> Path | None:
        """Save the unfinished hand (its record replays as far as it went)."""
        return None if self.round.over else self.save()


class ReplayView(Game):
    """A recorded hand on the terminal table, one visible move at a time, from ``seat``'s
    side (what that seat knew; the hands are laid open at the end). ``goto`` moves it."""

    named = True

    def __init__(self, record: RecordInput, *, seat: int = 0, path: Path | None = None) -> None:
        self.match = Match(record.rules, seed=record.seed, base=record.base, quan=1)
        self.seat, self.seed, self.records = seat, record.seed, Path()
        self.bot_name, self.bots, self.paced = "", {}, True
        self.stamp, self.saved, self.hands = "", [], 1
        self.before, self.record, self.save_error = (0, 0, 0, 0), path, ""
        self.adviser = StrongBot(random.Random(0))
        self.source = msgspec.structs.replace(
            record, events=msgspec.UNSET, settlement=msgspec.UNSET
        )
        self.moves = [0]
        self.at = 0
        self.side(seat)

    def side(self, seat: int) -> None:
        """See the hand from ``seat``'s side, at the same point of it: a step is a
        decision after which that seat's events show something new."""
        decisions = self.source.decisions
        played = self.moves[self.at]
        self.seat = seat
        self.round = replay(msgspec.structs.replace(self.source, decisions=[])).round
        self.moves = [0]  # decisions played at each step
        shown = self._shown()
        for k, decision in enumerate(decisions, 1):
            if decision.action == ESCAPE:
                self.round.escape(decision.seat)
            else:
                self.round.act(decision.seat, Action.parse(decision.action))
            now = self._shown()
            if now > shown or k == len(decisions):
                self.moves.append(k)
            shown = now
        self.at = -1  # the round is the whole hand's: goto replays to the step
        self.goto(next(i for i, k in enumerate(self.moves) if k >= played))

    def _shown(self) -> int:
        """How many of the seat's events show something (another seat's draw does not)."""
        return sum(
            1 for e in self.events() if not (isinstance(e, Draw | Replacement) and e.tile is None)
        )

    def goto(self, step: int) -> None:
        """Show the table after ``step`` of the steps (clamped to the hand)."""
        step = max(0, min(step, len(self.moves) - 1))
        if step != self.at:
            prefix = self.source.decisions[: self.moves[step]]
            self.round = replay(msgspec.structs.replace(self.source, decisions=prefix)).round
            self.match = Match(self.rules, seed=self.seed, base=self.round.base, quan=1)
            if self.round.over:
                self.match.finish(self.round)
        self.at = step

    def where(self) -> str:
        return f"replay step {self.at}/{len(self.moves) - 1}"


def replay_command(path: Path) -> str:
    """The command that shows ``path`` on the table, runnable as is: the ``fangcheng``
    beside this Python (the venv's, after ``make play``) when the PATH has another or
    none, relative to the working directory when it lies below it."""
    here = Path(sys.executable).parent / "fangcheng"
    found = shutil.which("fangcheng")
    if found is not None and Path(found).resolve() == here.resolve():
        program = "fangcheng"
    elif here.exists():
        program = str(_near(here))
    else:
        program = f"{sys.executable} -m fangcheng"
    return f"{program} replay {shlex.quote(str(_near(path)))} --show"


def _near(path: Path) -> Path:
    """``path`` relative to the working directory if it lies below it."""
    try:
        return path.absolute().relative_to(Path.cwd())
    except ValueError:
        return path


def default_records() -> Path:
    """``$XDG_DATA_HOME/fangcheng/records`` (``~/.local/share/...`` by default)."""
    data = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(data) / "fangcheng" / "records"
