"""The expert bot at the server: its decisions and the hints, off the event loop.

An expert decision is tens to hundreds of ms of CPU (its playouts), where the other
bots take about a millisecond; made on the event loop, one expert table would hold up
every other table and connection for that long. So the `Thinker` makes them in worker
processes of their own (``workers``, by default one; 0: one thread of the server's
process): a table's slow bot starts its answer when its prompt opens (`Table._think`),
while the bots' pace runs, and the table applies it when due, through `Table._apply`
like any decision, so it is logged before it is made and a rebuilt table replays it
from the log (the bot replays it without searching again, `ExpertBot.replay`).

A worker decides with a copy of the table's bot, forked at the prompt (`ExpertBot.fork`:
the bot reads the table there on the loop, about a millisecond, as the other bots do,
and each search is seeded by its decision's number), so a decision is the same in a
process, in the thread or in the table's own call, and a worker keeps nothing of a
table's: any worker may make any decision, and one that dies (killed, out of memory)
fails only the searches asked of its pool before the pool saw it die, which 托管's bot
answers, before a new pool takes its place. In a thread, Python runs one thread at a
time, and the loop, which gives up the interpreter at every socket call, waits up to its
switch interval (5 ms) to have it back each time: beside four expert tables thinking in
a thread, 100 tables of people at human pace waited 500 ms (median) for each move to be
answered, against 2.6 ms beside a worker process and 2.4 ms with no experts
(benchmarks/RESULTS.md).

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
when it is asked (its wait for a worker counted), after which its search is given up
for the strong bot's choice (`ExpertBot.act`), logged ``expert_late``: a server with
more expert tables than its workers can think for plays their bots' strong game, and
the hints say so, rather than keep every table waiting on the queue.
"""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Callable
from concurrent.futures import Executor
from concurrent.futures.process import BrokenProcessPool
from typing import Any, Final, TypeVar

from fangcheng.ai.advice import advise
from fangcheng.ai.expert import TABLE_SECONDS, TABLE_WORKERS, ExpertBot, decide
from fangcheng.engine import Round
from fangcheng.players import Bot, StrongBot, make_bot
from fangcheng.protocol import Action, Observation
from fangcheng.server.coins import CoinTable
from fangcheng.server.metrics import UNCOUNTED, Metrics
from fangcheng.server.security import log_event
from fangcheng.server.tables import Listener, Prompt, Table, TableError
from fangcheng.server.workers import start_workers

__all__ = ["MAX_PLAYOUTS", "MAX_WORKERS", "Thinker"]

#: The most playouts per decision a server may give its experts (about 2 s of a core).
MAX_PLAYOUTS: Final = 256
#: The most worker processes a server may give its experts.
MAX_WORKERS: Final = 64
#: Seconds a hint at a claim window keeps for its way to the browser before it closes.
HINT_MARGIN_S: Final = 0.5
_T = TypeVar("_T")


class Thinker:
    """Where the server's slow bots and hints think: ``workers`` processes (0: one
    thread of this one); ``poke(table)`` wakes a table's timer when an answer is in
    (`fangcheng.server.hub.Hub.poke`); ``seconds``: the time each may take from when it
    is asked; ``metrics``: where searches given up are counted."""

    def __init__(
        self,
        playouts: int,
        poke: Callable[[Table], None],
        seconds: float = TABLE_SECONDS,
        workers: int = TABLE_WORKERS,
        metrics: Metrics = UNCOUNTED,
    ) -> None:
        if not 1 <= playouts <= MAX_PLAYOUTS:
            raise ValueError(f"expert playouts: 1..{MAX_PLAYOUTS}, not {playouts}")
        if not seconds >= 0:
            raise ValueError(f"expert seconds: 0 or more, not {seconds}")
        if not 0 <= workers <= MAX_WORKERS:
            raise ValueError(f"expert workers: 0..{MAX_WORKERS}, not {workers}")
        self.playouts, self.poke, self.seconds, self.workers = playouts, poke, seconds, workers
        self.metrics = metrics
        self._pool: Executor | None = None  # made when a table first seats an expert
        #: (table uid, seat) → (prompt seq, its hint, done or under way)
        self._hints: dict[tuple[str, int], tuple[int, asyncio.Future[tuple[Action, str]]]] = {}
        #: (table uid, seat) → (the table and its hand, by `Table.deals`, read; the
        #: seat's reading): a table rebuilt from its log reads its prompts anew
        self._readings: dict[tuple[str, int], tuple[Table, int, StrongBot]] = {}
        #: (table uid, seat) → (prompt seq, when it opened on this process's clock)
        self._opened: dict[tuple[str, int], tuple[int, float]] = {}

    def close(self) -> None:
        """Stop the workers (what they have not begun is dropped)."""
        if self._pool is not None:
            self._pool.shutdown(wait=False, cancel_futures=True)

    def _workers(self) -> Executor:
        """The workers, started on first use (a process takes about half a second to
        start, so a table that seats an expert starts them, `bot`, before it asks)."""
        if self._pool is None:
            self._pool = start_workers(self.workers)
        return self._pool

    def _run(self, work: Callable[..., _T], *args: Any) -> asyncio.Future[_T]:
        """``work(*args)`` in a worker; a pool a dead process broke is replaced (its
        searches under way failed: 托管 answered them). Where no worker can be had, the
        future fails: never the table's call."""
        loop = asyncio.get_running_loop()
        try:
            return loop.run_in_executor(self._workers(), work, *args)
        except BrokenProcessPool:
            log_event("expert_workers_replaced", 40, workers=self.workers)
            self._pool = None
        try:
            return loop.run_in_executor(self._workers(), work, *args)
        except Exception as exc:
            return _failed(exc)

    # --- bots ------------------------------------------------------------------------

    def bot(self, kind: str, rng: random.Random) -> Bot:
        """The bot of ``kind``; an expert with the server's budget (its table will ask
        the workers soon: they start now, if there is an event loop)."""
        if kind != ExpertBot.name:
            return make_bot(kind, rng)
        if _on_loop():  # else a table driven without a server: it asks its bots at once
            try:
                self._workers()
            except Exception:  # its first decision tries again, and fails alone
                log_event("expert_workers_failed", 40, workers=self.workers, exc_info=True)
        return ExpertBot(rng, playouts=self.playouts)

    def slow(self, bot: Bot) -> bool:
        """Whether ``bot`` decides in a worker: an expert."""
        return isinstance(bot, ExpertBot)

    def think(self, table: Table, seat: int, seq: int, bot: Bot, obs: Observation) -> bool:
        """Start a slow bot's answer in a worker, handed to `Table.thought` when made;
        False without an event loop (the table asks the bot at once)."""
        if not _on_loop():  # a table driven without a server (tests, tools)
            return False
        assert isinstance(bot, ExpertBot)

        def done(future: asyncio.Future[tuple[Action, bool]]) -> None:
            if future.cancelled():
                return
            action = None
            try:
                action, late = future.result()
            except Exception:  # a bug of the bot's, or its worker died: 托管's bot answers
                log_event("bot_failed", 40, code=table.code, seat=seat, exc_info=True)
            else:
                if late:
                    bot.late += 1
                    self.metrics.expert_given_up.inc()
                    log_event("expert_late", 30, code=table.code, seat=seat, seconds=self.seconds)
            table.thought(seat, seq, action)
            self.poke(table)

        deadline = time.monotonic() + self.seconds
        try:
            forked = bot.fork(obs)
        except Exception as exc:  # its reading of the table failed: as a search would
            made = _failed(exc)
        else:
            made = self._run(decide, forked, obs, deadline)
        made.add_done_callback(done)
        return True

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
        prompt = table.prompts.get(seat)
        if prompt is not None:  # when its claim window, if it is one, began to run
            self._opened[(table.uid, seat)] = (prompt.seq, time.monotonic())

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
        prompt, r = table.open_prompt(seat, seq)
        key = (table.uid, seat)
        known = self._hints.get(key)
        if known is None or known[0] != seq:
            obs = r.observe(seat)  # the seat's own view: all a hint is made from
            rng = random.Random(f"{table.seed}/hint/{table.deals}/{seq}")
            reading = StrongBot(random.Random(0))  # a copy: the loop reads on meanwhile
            own = self._reading(table, seat)
            if own is not None:
                reading.follow(own)
            deadline = time.monotonic() + self._budget(key, prompt)
            made = self._run(advise, obs, rng, self.playouts, reading, deadline)
            known = self._hints[key] = (seq, made)
        known[1].add_done_callback(lambda future: _send(listener, seq, future))

    def _budget(self, key: tuple[str, int], prompt: Prompt) -> float:
        """The seconds a hint may search: the server's, and at a claim window no more
        than what is left of it (less `HINT_MARGIN_S` to reach the browser): a window
        closes by itself, and a hint after it is no use (issue 41). Out of time, the
        hint is the strong bot's choice, said so."""
        opened = self._opened.get(key)
        if not prompt.window or opened is None or opened[0] != prompt.seq:
            return self.seconds
        left = (prompt.deadline - prompt.issued) / 1000 - (time.monotonic() - opened[1])
        return max(0.0, min(self.seconds, left - HINT_MARGIN_S))

    def forget(self, table: Table) -> None:
        """A closed table's hints and readings are dropped."""
        for known in (self._hints, self._readings, self._opened):
            for key in [k for k in known if k[0] == table.uid]:
                del known[key]


def _gives_hints(table: Table) -> bool:
    """Point and practice tables whose owner allows them: never a coin table."""
    return table.settings.hints and not isinstance(table, CoinTable)  # (a log of before)


def _on_loop() -> bool:
    """Whether this is a running event loop's thread (a server's)."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True


def _failed(exc: Exception) -> asyncio.Future[Any]:
    """A future that failed with ``exc``: handled as a worker's failure is, later on the
    loop, never in the table's call."""
    failed: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
    failed.set_exception(exc)
    return failed


def _send(listener: Listener, seq: int, future: asyncio.Future[tuple[Action, str]]) -> None:
    """The ``hint`` frame of prompt ``seq``, made (`advise`): the action and why."""
    if future.cancelled():
        return
    try:
        action, why = future.result()
    except Exception:
        log_event("hint_failed", 40, seq=seq, exc_info=True)
        listener.send(
            {"type": "error", "code": "internal", "message": "no hint was made", "seq": seq}
        )
    else:
        listener.send({"type": "hint", "seq": seq, "action": str(action), "why": why})
