"""The expert bot at the server (`fangcheng.server.thinking`): expert tables play over
the real protocol with their decisions made off the event loop (another table plays a
whole hand while an expert is held mid-thought), logged and reproducible from the
table's seed; hints for a seat's open prompt, made once from its own observation
(tables differing only in hidden tiles give the same hints), refused to spectators,
at other moments and where the table gives none.

The apps run on a fake clock with no bot pace; their timer tasks run (an expert's answer
comes back to the table's task), so a test waits for frames, never for a time."""

from __future__ import annotations

import asyncio
import logging
import os
import random
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import msgspec
import pytest

from fangcheng.ai import expert
from fangcheng.ai.expert import ExpertBot
from fangcheng.cli import main
from fangcheng.players import StrongBot
from fangcheng.protocol.wire import TableSettings
from fangcheng.server import tables, thinking
from fangcheng.server.app import ServerSettings
from fangcheng.server.log import read_log
from fangcheng.server.recovery import rebuild, replay
from fangcheng.server.thinking import MAX_PLAYOUTS, MAX_WORKERS, Thinker
from test_expert import readings
from test_server_protocol import Seat, Server, _server
from test_server_recovery import state
from test_server_tables import T0, Seen, _twin_wall, dealt_table, new_table

pytestmark = pytest.mark.timeout(300)

#: A small budget: the tests check the plumbing, not the bot's strength.
PLAYOUTS = 4


def _experts(**more: Any) -> Iterator[Server]:
    """A server of small experts, given time enough never to run out of it (but where a
    test says otherwise): a test waits for frames, never for a time. Unless a test says
    otherwise (``expert_workers=1``: a process, the server's default), they think in a
    thread of the test's own process, where a test can hold or change them."""
    options = {"expert_seconds": 600.0, "expert_playouts": PLAYOUTS, "expert_workers": 0}
    options |= more
    yield from _server(timers=True, between_ms=600_000, **options)


def _practice(server: Server, bot: str = "expert", rules: str = "baicheng") -> tuple[Any, str]:
    headers = server.session()
    answer = server.client.post("/api/practice", json={"rules": rules, "bot": bot}, headers=headers)
    assert answer.status_code == 200, answer.text
    return headers, answer.json()["code"]


def _until(seat: Seat, kind: str) -> dict[str, Any]:
    """The next frame of ``kind`` (every frame before it kept in ``seat.frames``)."""
    while (frame := seat.next())["type"] != kind:
        pass
    return frame


@contextmanager
def _in_tuoguan(server: Server, headers: Any, code: str) -> Iterator[Seat]:
    """The person at their practice table, in 托管: the table plays on by itself."""
    with server.client.websocket_connect("/ws") as ws:
        me = Seat(ws)
        me.hello(headers, code)
        ws.send_json({"type": "auto", "on": True})
        yield me


def _hand(server: Server) -> tuple[list[Any], dict[str, Any]]:
    """A practice hand of three experts, the person in 托管: its events and settlement."""
    headers, code = _practice(server)
    table = server.hub.tables[code]
    assert [s.bot.name for s in table.seats[1:] if s.bot is not None] == ["expert"] * 3
    assert all(isinstance(s.bot, ExpertBot) and s.bot.playouts == PLAYOUTS for s in table.seats[1:])
    with _in_tuoguan(server, headers, code) as me:
        end = _until(me, "hand_end")
    assert table.round is not None
    entries = read_log(server.hub.store.engine, table.uid)
    acts = [d for kind, d in entries if kind == "act"]
    assert [a["action"] for a in acts] == [d["action"] for d in table.round.decisions]
    return msgspec.to_builtins(table.round.events), end["settlement"]


def test_an_expert_practice_table_plays_a_hand_to_its_end_as_its_seed_says() -> None:
    """Every decision is logged before it is made, in the order made; a second server of
    the same seed plays the same hand, whether its experts think in a process or in a
    thread (the order in which a claim window's answers come back from the worker may
    differ; what they decide does not)."""
    hands = [_hand(server) for workers in (1, 0) for server in _experts(expert_workers=workers)]
    assert hands[0] == hands[1]


def test_an_expert_whose_reading_fails_is_answered_by_tuoguan(
    caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The table's expert reads the table on the loop before its copy searches
    (`ExpertBot.fork`): a bug there fails that decision as a failed search would, 托管's
    bot answering it, and never the table's call."""
    caplog.set_level(logging.WARNING, logger="fangcheng.server")
    fork, calls = ExpertBot.fork, []

    def failing(self: ExpertBot, obs: Any) -> bytes:
        calls.append(obs)
        if len(calls) == 3:
            raise RuntimeError("a bug in the reading")
        return fork(self, obs)

    monkeypatch.setattr(ExpertBot, "fork", failing)
    for server in _experts(expert_workers=1):
        headers, code = _practice(server)
        table = server.hub.tables[code]
        with _in_tuoguan(server, headers, code) as me:
            assert _until(me, "hand_end")["hand"] == 0
        acts = [d for kind, d in read_log(server.hub.store.engine, table.uid) if kind == "act"]
        assert [d["by"] for d in acts if d["seat"] != 0].count("auto") == 1
    assert "bot_failed" in caplog.text and "tick_failed" not in caplog.text


def test_experts_whose_workers_cannot_start_yet_play_once_they_can(
    caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A table that seats experts starts their workers; where none can be had then, the
    table opens all the same and its first decision starts them."""
    caplog.set_level(logging.WARNING, logger="fangcheng.server")
    start, starts = thinking.start_workers, []

    def flaky(workers: int) -> Any:
        starts.append(workers)
        if len(starts) == 1:
            raise OSError("no process to be had")
        return start(workers)

    monkeypatch.setattr(thinking, "start_workers", flaky)
    for server in _experts():
        assert _hand(server)
    assert "expert_workers_failed" in caplog.text and len(starts) == 2


async def _worker(thinker: Thinker) -> int:
    """The process id of the thinker's worker (on the loop)."""
    return await thinker._run(os.getpid)


def test_experts_think_in_a_process_of_their_own_and_one_that_dies_is_replaced(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A table that seats experts starts the worker process; killed, it fails only the
    decisions asked of it before its pool saw it die (托管's bot answers them: at most a
    claim window's three), a new process takes its place, and the experts play on."""
    caplog.set_level(logging.WARNING, logger="fangcheng.server")
    for server in _experts(expert_workers=1):
        headers, code = _practice(server)
        table = server.hub.tables[code]
        portal = server.client.portal
        assert portal is not None
        first = portal.call(_worker, server.hub.thinker)
        assert first != os.getpid()
        os.kill(first, signal.SIGKILL)
        with _in_tuoguan(server, headers, code) as me:
            assert _until(me, "hand_end")["hand"] == 0
        assert "expert_workers_replaced" in caplog.text
        second = portal.call(_worker, server.hub.thinker)
        assert second not in (first, os.getpid())
        acts = [d for kind, d in read_log(server.hub.store.engine, table.uid) if kind == "act"]
        experts = [d["by"] for d in acts if d["seat"] != 0]
        assert experts.count("auto") <= 3 and experts.count("bot") > 10  # one prompt's


def test_another_table_plays_a_hand_while_an_expert_thinks(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    started, release = threading.Event(), threading.Event()
    act = ExpertBot.act

    threads = []

    def held(self: ExpertBot, obs: Any, deadline: float | None = None) -> Any:
        threads.append(threading.current_thread().name)
        started.set()
        release.wait(60)
        return act(self, obs, deadline)

    monkeypatch.setattr(ExpertBot, "act", held)
    for server in _experts():  # a thread: a process could not be held
        ann, expert_code = _practice(server)
        bob, plain_code = _practice(server, "efficient")
        experts = server.hub.tables[expert_code]
        with _in_tuoguan(server, ann, expert_code) as me:
            assert started.wait(60)  # an expert is deciding in the worker, held there
            with _in_tuoguan(server, bob, plain_code) as you:
                assert _until(you, "hand_end")["hand"] == 0
            assert experts.status == "playing" and not release.is_set()
            release.set()
            assert _until(me, "hand_end")["hand"] == 0
    assert threads and all(name.startswith("expert") for name in threads)  # the worker


def test_the_budget_is_the_servers_and_bounded() -> None:
    assert ServerSettings().expert_playouts == expert.TABLE_PLAYOUTS
    assert ServerSettings().expert_seconds == expert.TABLE_SECONDS
    assert ServerSettings().expert_workers == expert.TABLE_WORKERS
    with pytest.raises(ValueError, match="expert playouts"):
        Thinker(MAX_PLAYOUTS + 1, lambda table: None)
    with pytest.raises(ValueError, match="expert seconds"):
        Thinker(PLAYOUTS, lambda table: None, -1.0)
    with pytest.raises(ValueError, match="expert workers"):
        Thinker(PLAYOUTS, lambda table: None, 1.0, MAX_WORKERS + 1)


_SERVER = """
import os, sys, time
from fangcheng.server.workers import start_workers
workers = start_workers(1)
print(workers.submit(os.getpid).result(), flush=True)
time.sleep(600)
"""


def test_a_worker_ends_when_its_server_is_killed() -> None:
    """A server killed outright cannot stop its worker: the worker sees it gone and ends,
    rather than wait on its queue for ever."""
    server = subprocess.Popen([sys.executable, "-c", _SERVER], stdout=subprocess.PIPE, text=True)
    assert server.stdout is not None
    worker = int(server.stdout.readline())
    assert worker != server.pid and _alive(worker)
    server.kill()
    server.wait()
    for _ in range(100):
        if not _alive(worker):
            return
        time.sleep(0.1)
    os.kill(worker, signal.SIGKILL)
    raise AssertionError("the worker outlived its server")


def _alive(pid: int) -> bool:
    """Whether process ``pid`` runs (not a zombie: its state in /proc)."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


@pytest.mark.parametrize(
    ("flag", "value"),
    [("--expert-playouts", "0"), ("--expert-seconds", "-1"), ("--expert-workers", "-1"),
     ("--expert-workers", str(MAX_WORKERS + 1))],
)  # fmt: skip
def test_serve_refuses_an_expert_budget_time_or_workers_out_of_range(
    flag: str, value: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["serve", flag, value]) == 2
    assert f"fangcheng serve: {flag}: " in capsys.readouterr().err


def _events(server: Server, bot: str) -> list[Any]:
    """A baicheng practice hand of three ``bot`` seats, the person in 托管: its events."""
    headers, code = _practice(server, bot)
    table = server.hub.tables[code]
    with _in_tuoguan(server, headers, code) as me:
        _until(me, "hand_end")
    assert table.round is not None
    return msgspec.to_builtins(table.round.events)


def test_experts_out_of_time_play_the_strong_bots_game_and_say_so(
    caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A search not done in the server's ``expert_seconds`` (here none has any) is given
    up for the strong bot's choice: the table plays on as experts that keep every choice
    of their strong bots would (the strong bots' game), and each decision given up is
    logged ``expert_late`` and counted in the metrics. With the time to search, the
    experts' hand is another (the test could fail)."""
    caplog.set_level(logging.WARNING, logger="fangcheng.server")
    late, given_up = [], None
    for server in _experts(expert_seconds=0, expert_workers=1):
        late.append(_events(server, "expert"))
        given_up = server.hub.metrics.registry.get_sample_value("fangcheng_expert_given_up_total")
    assert "expert_late" in caplog.text
    assert given_up == caplog.text.count("expert_late")
    caplog.clear()
    timely = [_events(server, "expert") for server in _experts(expert_playouts=24)]
    assert "expert_late" not in caplog.text
    with monkeypatch.context() as patch:
        patch.setattr(ExpertBot, "search", lambda self, obs, options, deadline=None: options[0])
        strong = [_events(server, "expert") for server in _experts()]
    assert late == strong != timely


# --- hints ---------------------------------------------------------------------------------


def _prompted(server: Server, headers: Any, code: str, ws: Any) -> tuple[Seat, dict[str, Any]]:
    me = Seat(ws)
    me.hello(headers, code)
    return me, _until(me, "prompt")


def test_a_hint_is_one_of_the_legal_actions_with_why_made_once_per_prompt(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    made = []
    advise = thinking.advise

    def counted(*args: Any, **kwargs: Any) -> Any:
        made.append(args[0])
        return advise(*args, **kwargs)

    monkeypatch.setattr(thinking, "advise", counted)
    for server in _experts():
        headers, code = _practice(server, "efficient")
        with server.client.websocket_connect("/ws") as ws:
            me, prompt = _prompted(server, headers, code, ws)
            ws.send_json({"type": "hint", "seq": prompt["seq"]})
            first = _until(me, "hint")
            ws.send_json({"type": "hint", "seq": prompt["seq"]})
            again = _until(me, "hint")
            assert first == again and len(made) == 1
            assert first["seq"] == prompt["seq"] and first["action"] in prompt["legal"]
            assert "向听 (shanten)" in first["why"] or "听 ready" in first["why"]
            stale = me.send({"type": "hint", "seq": prompt["seq"] + 1})
            assert stale[-1]["type"] == "error" and stale[-1]["code"] == "stale"
            me.send({"type": "act", "seq": prompt["seq"], "action": first["action"]})
            late = me.send({"type": "hint", "seq": prompt["seq"]})  # answered: no hint
            assert late[-1]["code"] in ("not_your_turn", "stale")


def test_a_hint_is_refused_to_spectators_and_where_the_table_gives_none() -> None:
    for server in _experts():
        ann, eve = server.session("Ann"), server.session("Eve")
        c = server.client
        for hints in (True, False):
            opened = c.post("/api/tables", json={"hints": hints}, headers=ann).json()
            assert opened["table"]["settings"]["hints"] is hints
            code = opened["code"]
            with c.websocket_connect("/ws") as ws:
                me = Seat(ws)
                me.hello(ann, code)
                ws.send_json({"type": "start", "fill": "efficient"})
                prompt = _until(me, "prompt")
                refused = me.send({"type": "hint", "seq": prompt["seq"]})
                if not hints:
                    assert refused[-1]["code"] == "forbidden"
                    continue
                with c.websocket_connect("/ws") as watching:
                    spectator = Seat(watching)
                    assert spectator.hello(eve, code)["seat"] is None
                    answer = spectator.send({"type": "hint", "seq": prompt["seq"]})
                    assert answer[-1]["code"] == "forbidden"
                    assert "spectator" in answer[-1]["message"]


def test_a_seat_in_tuoguan_gets_no_hint(monkeypatch: pytest.MonkeyPatch) -> None:
    """托管's bot answers at the pace, before an expert's hint would come: refused with
    what to do, and no expert time spent on it."""
    made = []
    monkeypatch.setattr(thinking, "advise", lambda *args, **kwargs: made.append(args))
    for server in _experts():
        headers, code = _practice(server, "efficient")
        with server.client.websocket_connect("/ws") as ws:
            me, prompt = _prompted(server, headers, code, ws)
            ws.send_json({"type": "auto", "on": True})
            refused = me.send({"type": "hint", "seq": prompt["seq"]})
            assert refused[-1]["code"] == "state" and "托管" in refused[-1]["message"]
    assert not made


@pytest.mark.parametrize("rules", ["baicheng", "sichuan"])
def test_tables_differing_only_in_hidden_tiles_give_the_same_hints(
    rules: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A hint is made from the seat's observation alone: two tables that deal another
    seat one different concealed tile give seat 0 the same hint at every decision."""
    seed, wall_a, wall_b, decisions = _twin_wall(rules)
    hints = []
    for wall in (wall_a, wall_b):
        table, seen = dealt_table(monkeypatch, rules, seed, wall)
        hints.append(asyncio.run(_hints_of(table, seen[0], decisions)))
    assert len(hints[0]) > 5
    assert hints[0] == hints[1]


def test_a_hints_expert_reads_the_table_as_the_seats_prompts_showed_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The faces each other seat let pass since its hand last changed, which the hint's
    worlds keep out of that seat's waits, are read from every prompt of the seat this
    hand, as a strong bot seeing them would read them; one observation shows none."""
    passed = readings(monkeypatch)
    seed, wall, _, decisions = _twin_wall("baicheng")
    table, seen = dealt_table(monkeypatch, "baicheng", seed, wall)
    asyncio.run(_hints_of(table, seen[0], decisions, StrongBot(random.Random(0)), passed))
    assert len(passed) > 5 and any(any(p) for p in passed)


async def _hints_of(
    table: tables.Table,
    me: Seen,
    decisions: list[dict[str, Any]],
    adviser: StrongBot | None = None,
    passed: list[list[frozenset[int]]] | None = None,
) -> list[Any]:
    """Seat 0's hint at each of its decisions (of more than one action) of the hand, the
    other seats efficient bots. With an ``adviser``, a strong bot shown each of seat 0's
    prompts: each hint's expert read the table as it did (its reading the last in
    ``passed``)."""
    thinker = Thinker(PLAYOUTS, lambda table: None, workers=0)  # its test reads the worker
    table.thinker = thinker
    table.start(1, "efficient", T0)
    r = table.round
    assert r is not None
    asked: set[int] = set()
    hinted = 0
    while not r.over:
        prompt = table.prompts.get(0)
        if prompt is not None and prompt.seq not in asked:
            asked.add(prompt.seq)
            if adviser is not None:
                adviser.track(r.observe(0))
            if len(r.legal_actions(0)) > 1:
                hinted += 1
                thinker.hint(table, me, prompt.seq)
                while len(me.of("hint")) < hinted:
                    await asyncio.sleep(0.01)
                if adviser is not None and passed is not None:
                    assert passed[-1] == adviser.passed()
        d = decisions[len(r.decisions)]
        table.act(d["seat"], table.prompts[d["seat"]].seq, d["action"], T0)
    thinker.close()
    return me.of("hint")


def test_an_expert_table_rebuilt_while_an_expert_thinks_is_the_table(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A decision being made in the worker is not in the log yet: the table rebuilt from
    its log then is the table as it stands (and shares the server's thinker)."""
    asked, answers = threading.Semaphore(0), threading.Semaphore(0)
    act = ExpertBot.act

    def held(self: ExpertBot, obs: Any, deadline: float | None = None) -> Any:
        asked.release()
        answers.acquire(timeout=60)
        return act(self, obs, deadline)

    monkeypatch.setattr(ExpertBot, "act", held)
    for server in _experts():
        headers, code = _practice(server)
        table = server.hub.tables[code]
        with _in_tuoguan(server, headers, code) as me:
            for _ in range(3):  # a few expert decisions in, the fourth held in the worker
                assert asked.acquire(timeout=60)
                answers.release()
            assert asked.acquire(timeout=60)
            assert server.client.portal is not None
            server.client.portal.call(_rebuilt_is, server.hub, table)
            for _ in range(1000):
                answers.release()
            assert _until(me, "hand_end")["hand"] == 0


def _rebuilt_is(hub: Any, table: tables.Table) -> None:
    """On the loop (the table waits on the worker): the table rebuilt from its log."""
    assert table._thinking
    again = rebuild(hub, table.uid, read_log(hub.store.engine, table.uid), hub.now())
    assert state(again) == state(table)
    assert again.thinker is hub.thinker


class _Deferred:
    """A thinker that keeps what it is asked, for the test to answer (or not)."""

    def __init__(self) -> None:
        self.asked: list[tuple[int, int, Any]] = []

    def bot(self, kind: str, rng: Any) -> Any:
        return Thinker(PLAYOUTS, lambda table: None).bot(kind, rng)

    def slow(self, bot: Any) -> bool:
        return isinstance(bot, ExpertBot)

    def think(self, table: Any, seat: int, seq: int, bot: Any, obs: Any) -> bool:
        self.asked.append((seat, seq, obs))
        return True

    def read(self, table: Any, seat: int, round_: Any) -> None:
        """A person's prompt: these tests ask no hints."""


def test_a_table_waits_for_its_thinking_bots_drops_stale_answers_and_survives_a_failure(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Nothing is applied for a seat whose bot thinks, and no wake is due for it; an
    answer to another prompt is dropped; a failed one falls to 托管's bot. The table
    never asks the expert itself."""

    def never(self: ExpertBot, obs: Any) -> Any:
        raise AssertionError("the table asked its expert on the loop")

    monkeypatch.setattr(ExpertBot, "act", never)
    table, _ = new_table(TableSettings(rules="baicheng"), people=1)
    deferred = _Deferred()
    table.thinker = deferred
    table.start(1, "expert", T0)
    table.set_auto(0, True, T0)  # the person's seat plays as 托管, at once
    r = table.round
    assert r is not None

    def answered() -> int:
        return sum(d["seat"] != 0 for d in r.decisions)

    seen = 0
    while not r.over and answered() < 40:
        fresh = deferred.asked[seen:]
        seen = len(deferred.asked)
        assert fresh and {seat for seat, _, _ in fresh} == table._thinking == set(table.prompts)
        assert table.next_wake() is None
        before = answered()
        table.tick(T0)
        assert answered() == before  # it waits for them
        for k, (seat, seq, obs) in enumerate(fresh):
            assert obs == r.observe(seat)  # what the seat sees, and only that
            table.thought(seat, seq + 1, obs.legal[-1])  # another prompt's: dropped
            assert seat in table._thinking
            # the first fails (托管's bot answers), the others answer
            table.thought(seat, seq, None if k == 0 else obs.legal[0])
        table.tick(T0)
        assert answered() == before + len(fresh)
    assert answered() >= 40 or r.over


class _Listed:
    """An action log kept in a list (`TableLog`'s ``write`` and ``commit``)."""

    def __init__(self) -> None:
        self.entries: list[tuple[str, dict[str, Any]]] = []

    def write(self, kind: str, data: dict[str, Any]) -> None:
        self.entries.append((kind, msgspec.json.decode(msgspec.json.encode(data))))

    def commit(self) -> None:
        pass


def test_an_expert_that_failed_reads_the_table_again_when_rebuilt(
    caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An expert whose answer failed had read the table and counted the decision before
    failing, and 托管's bot answered (logged ``auto``). Rebuilt from the log, the expert
    reads that decision again, so its count, which seeds its later searches, is the
    count it had: it plays on as it would have."""
    table, _ = new_table(TableSettings(rules="baicheng"), people=1)
    log = table.log = _Listed()
    deferred = _Deferred()
    table.thinker = deferred
    table.start(1, "expert", T0)
    table.set_auto(0, True, T0)
    r = table.round
    assert r is not None
    seen = failed = 0
    failing: list[Any] = []
    while not r.over and len(r.decisions) < 60:
        fresh = deferred.asked[seen:]
        seen = len(deferred.asked)
        for seat, seq, obs in fresh:
            bot = table.seats[seat].bot
            assert isinstance(bot, ExpertBot)
            if failed < 3 and seat == 1 + failed:  # read, then failed (its search raised)
                bot._read(obs)
                table.thought(seat, seq, None)
                failed += 1
                failing.append(obs)
            else:
                table.thought(seat, seq, bot.act(obs))
        table.tick(T0)
    assert failed == 3 and any(d.get("by") == "auto" for k, d in log.entries if k == "act")
    again = tables.Table(
        code=table.code, owner=1, settings=table.settings, seed=5, on_hand=table.on_hand,
        thinker=_Deferred(),
    )  # fmt: skip
    replay(again, log.entries, T0)
    counts = [s.bot._decisions for s in table.seats[1:] if isinstance(s.bot, ExpertBot)]
    rebuilt = [s.bot._decisions for s in again.seats[1:] if isinstance(s.bot, ExpertBot)]
    assert len(counts) == 3 and rebuilt == counts

    read = ExpertBot.replay

    def fails(self: ExpertBot, obs: Any, action: Any) -> None:
        if obs in failing:
            raise RuntimeError("the same bug again")
        read(self, obs, action)

    monkeypatch.setattr(ExpertBot, "replay", fails)
    caplog.set_level(logging.ERROR, logger="fangcheng.server")
    once_more = tables.Table(
        code=table.code, owner=1, settings=table.settings, seed=5, on_hand=table.on_hand,
        thinker=_Deferred(),
    )  # fmt: skip
    replay(once_more, log.entries, T0)  # the failure is logged, the table rebuilt
    assert once_more.round is not None and once_more.round.decisions == r.decisions
    assert "bot_failed" in caplog.text
