"""The expert bot at the server: its decisions and the hints, off the event loop.

An expert decision is tens to hundreds of ms of CPU (its playouts), where the other
bots take about a millisecond; made on the event loop, one expert table would hold up
every other table and connection for that long. So the `Thinker` makes them in one
worker thread, in the order asked: a table's slow bot starts its answer when its prompt
opens (`Table._think`), while the bots' pace runs, and the table applies it when due,
through `Table._apply` like any decision, so it is logged before it is made and a
rebuilt table replays it from the log (the bot replays it without searching again,
`ExpertBot.replay`). A bot is asked one observation at a time and in order (the one
worker), as it keeps the hand's state.
Python runs one thread at a time, so the loop is not faster for it, but it is never held
for more than the interpreter's switch interval (5 ms): frames, timers and the other
tables go on while an expert thinks.

Hints (``{"type": "hint", "seq": N}``, docs/protocol.md) are made there too, from the
seat's own observations alone (`fangcheng.ai.advice`), once per seat and prompt: a
second request for the same prompt is answered with the same hint. The hint's expert
reads the table as a strong bot that has seen each of the seat's prompts this hand
(`Thinker.read`): the faces each other seat let pass since its hand last changed, which
its worlds keep out of that seat's waits; one observation alone shows none of them.
Hints are offered at point and practice tables whose owner allows them (``hints``),
never at coin tables, where an adviser would play for a person against others' coins,
nor to a seat in 托管, whose bot answers before a hint would come.

The budget of both is the server's (``ServerSettings.expert_playouts``): playouts per
decision, at most `MAX_PLAYOUTS`; and each has ``ServerSettings.expert_seconds`` from
when it is asked (its wait in the worker's queue counted), after which its search is
given up for the strong bot's choice (`ExpertBot.act`), logged ``expert_late``: a server
with more expert tables than its core can think for plays their bots' strong game, and
the hints say so, rather than keep every table waiting on the queue.
"""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Final

from fangcheng.ai.advice import advise
from fangcheng.ai.expert import TABLE_SECONDS, ExpertBot
from fangcheng.engine import Round
from fangcheng.players import Bot, StrongBot, make_bot
from fangcheng.protocol import Action, Observation
from fangcheng.server.coins import CoinTable
from fangcheng.server.security import log_event
from fangcheng.server.tables import Listener, Table, TableError

__all__ = ["MAX_PLAYOUTS", "Thinker"]

#: The most playouts per decision a server may give its experts (about 2 s of a core).
MAX_PLAYOUTS: Final = 256


class Thinker:
    """One worker thread for the server's slow bots and hints; ``poke(table)`` wakes a
    table's timer when an answer is in (`fangcheng.server.app.Hub.poke`); ``seconds``:
    the time each may take from when it is asked."""

    def __init__(
        self, playouts: int, poke: Callable[[Table], None], seconds: float = TABLE_SECONDS
    ) -> None:
        if not 1 <= playouts <= MAX_PLAYOUTS:
            raise ValueError(f"expert playouts: 1..{MAX_PLAYOUTS}, not {playouts}")
        if not seconds >= 0:
            raise ValueError(f"expert seconds: 0 or more, not {seconds}")
        self.playouts, self.poke, self.seconds = playouts, poke, seconds
        self._pool = ThreadPoolExecutor(1, thread_name_prefix="expert")
        #: (table uid, seat) → (prompt seq, its hint, done or under way)
        self._hints: dict[tuple[str, int], tuple[int, asyncio.Future[dict[str, Any]]]] = {}
        #: (table uid, seat) → (the table and its hand, by `Table.deals`, read; the
        #: seat's reading): a table rebuilt from its log reads its prompts anew
        self._readings: dict[tuple[str, int], tuple[Table, int, StrongBot]] = {}

    def close(self) -> None:
        """Stop the worker (what it has not begun is dropped)."""
        self._pool.shutdown(wait=False, cancel_futures=True)

    # --- bots ------------------------------------------------------------------------

    def bot(self, kind: str, rng: random.Random) -> Bot:
        """The bot of ``kind``; an expert with the server's budget."""
        if kind == ExpertBot.name:
            return ExpertBot(rng, playouts=self.playouts)
        return make_bot(kind, rng)

    def slow(self, bot: Bot) -> bool:
        """Whether ``bot`` decides in the worker: an expert."""
        return isinstance(bot, ExpertBot)

    def think(self, table: Table, seat: int, seq: int, bot: Bot, obs: Observation) -> bool:
        """Start a slow bot's answer in the worker, handed to `Table.thought` when made;
        False without an event loop (the table asks the bot at once)."""
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # a table driven without a server (tests, tools)
            return False

        def done(future: asyncio.Future[Action]) -> None:
            if future.cancelled():
                return
            action = None
            try:
                action = future.result()
            except Exception:  # a bug of the bot's: 托管's bot answers for it
                log_event("bot_failed", 40, code=table.code, seat=seat, exc_info=True)
            table.thought(seat, seq, action)
            self.poke(table)

        assert isinstance(bot, ExpertBot)
        deadline = time.monotonic() + self.seconds
        decide = loop.run_in_executor(self._pool, self._decide, table, seat, bot, obs, deadline)
        decide.add_done_callback(done)
        return True

    def _decide(
        self, table: Table, seat: int, bot: ExpertBot, obs: Observation, deadline: float
    ) -> Action:
        """``bot``'s answer (in the worker), logged if its search ran out of time."""
        late = bot.late
        action = bot.act(obs, deadline)
        if bot.late > late:
            log_event("expert_late", 30, code=table.code, seat=seat, seconds=self.seconds)
        return action

    # --- hints -----------------------------------------------------------------------

    def read(self, table: Table, seat: int, round_: Round) -> None:
        """A person's prompt in ``round_``: its hints' reading of the table follows the
        seat's view of it (on the event loop, in the order of the prompts; a new hand, a
        new reading; a rebuilt table reads the prompts of its log again,
        `Table.replay_act`). Nothing, not even the view, where no hints are given."""
        if not _gives_hints(table):
            return
        reading = self._reading(table, seat)
        if reading is None:
            reading = StrongBot(random.Random(0))
            self._readings[(table.uid, seat)] = (table, table.deals, reading)
        reading.track(round_.observe(seat))

    def _reading(self, table: Table, seat: int) -> StrongBot | None:
        """The seat's reading of this table's hand being played, if it has one."""
        known = self._readings.get((table.uid, seat))
        if known is None or known[0] is not table or known[1] != table.deals:
            return None
        return known[2]

    def hint(self, table: Table, listener: Listener, seq: int) -> None:
        """Send ``listener`` (a seat's connection) the hint for its open prompt ``seq``
        when it is made: at once if it was made before; a `TableError` if there is none
        to give (a spectator, a table without hints, a seat in 托管, no such prompt)."""
        seat = listener.seat
        if seat is None:
            raise TableError("forbidden", "a spectator gets no hints")
        if not _gives_hints(table):
            raise TableError("forbidden", "this table gives no hints")
        if table.seats[seat].auto:  # its bot answers at the pace: the hint would come late
            raise TableError("state", "your seat is in 托管: end it (auto off) for hints")
        _, r = table.open_prompt(seat, seq)
        key = (table.uid, seat)
        known = self._hints.get(key)
        if known is None or known[0] != seq:
            obs = r.observe(seat)  # the seat's own view: all a hint is made from
            rng = random.Random(f"{table.seed}/hint/{table.deals}/{seq}")
            reading = StrongBot(random.Random(0))  # a copy: the loop reads on meanwhile
            own = self._reading(table, seat)
            if own is not None:
                reading.follow(own)
            deadline = time.monotonic() + self.seconds
            made = asyncio.get_running_loop().run_in_executor(
                self._pool, _hint, obs, rng, self.playouts, seq, reading, deadline
            )
            known = self._hints[key] = (seq, made)
        known[1].add_done_callback(lambda future: _send(listener, seq, future))

    def forget(self, table: Table) -> None:
        """A closed table's hints and readings are dropped."""
        for known in (self._hints, self._readings):
            for key in [k for k in known if k[0] == table.uid]:
                del known[key]


def _gives_hints(table: Table) -> bool:
    """Point and practice tables whose owner allows them: never a coin table."""
    return table.settings.hints and not isinstance(table, CoinTable)  # (a log of before)


def _hint(
    obs: Observation,
    rng: random.Random,
    playouts: int,
    seq: int,
    reading: StrongBot,
    deadline: float,
) -> dict[str, Any]:
    """The ``hint`` frame of ``obs`` (made in the worker), the table as ``reading`` read it."""
    action, why = advise(obs, rng, playouts, strong=reading, deadline=deadline)
    return {"type": "hint", "seq": seq, "action": str(action), "why": why}


def _send(listener: Listener, seq: int, future: asyncio.Future[dict[str, Any]]) -> None:
    if future.cancelled():
        return
    try:
        listener.send(future.result())
    except Exception:
        log_event("hint_failed", 40, seq=seq, exc_info=True)
        listener.send(
            {"type": "error", "code": "internal", "message": "no hint was made", "seq": seq}
        )
