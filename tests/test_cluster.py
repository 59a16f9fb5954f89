"""Many processes (issue 19): real ``fangcheng serve --redis`` processes on loopback
sharing one PostgreSQL test database and one Redis prefix (`clustering`).

People connected to different processes play at one table, the lobby agrees across
processes; the owner of tables killed (``kill -9``) mid-hand at random times: the
tables resume on another process, every hand is settled and stored once, the ledger is
clean, and what every client was shown is what the log's replay (the stored hands)
says; Redis killed and started again mid-hand: the tables pause, then go on.

Each process start costs a few seconds (imports); the tests share one group of three,
on a ``redis-server`` of their own (the Redis test kills it; the machine's is left be).
"""

from __future__ import annotations

import asyncio
import os
import random
import shutil
import time
from collections.abc import Iterator

import httpx
import pytest

from clustering import (
    LEASE_MS,
    Client,
    Cluster,
    RedisServer,
    account,
    call,
    cluster,
    session,
)
from crashing import _settled_once, ledger_check

pytestmark = pytest.mark.timeout(240)


@pytest.fixture(scope="module")
def redis_server() -> Iterator[RedisServer]:
    if shutil.which("redis-server") is None:
        pytest.skip("redis-server is not installed")
    server = RedisServer()
    yield server
    server.kill()


@pytest.fixture(scope="module")
def group(tmp_path_factory: pytest.TempPathFactory, redis_server: RedisServer) -> Iterator[Cluster]:
    with cluster(tmp_path_factory.mktemp("cluster"), 3, redis=redis_server.url) as processes:
        yield processes


def lobby(url: str) -> list[dict[str, object]]:
    answer = httpx.get(f"{url}/api/lobby", timeout=10)
    assert answer.status_code == 200, answer.text
    rows: list[dict[str, object]] = answer.json()["tables"]
    return rows


def agreed_lobby(urls: list[str], want: str, limit_s: float = 10.0) -> list[dict[str, object]]:
    """The lobby once every process shows the same one, with table ``want`` in it."""
    deadline = time.monotonic() + limit_s
    while True:
        seen = [lobby(url) for url in urls]
        if all(s == seen[0] for s in seen) and any(t["code"] == want for t in seen[0]):
            return seen[0]
        assert time.monotonic() < deadline, f"the lobbies disagree: {seen}"
        time.sleep(0.05)


def test_people_on_three_processes_play_at_one_table(group: Cluster) -> None:
    a, b, c = group.live()[:3]
    ann, bob, cat = session(a, "ann"), session(b, "bob"), session(c, "cat")
    code = call(a, "/api/tables", ann, {"rules": "baishan", "quan": 1})["code"]
    assert call(b, f"/api/tables/{code}/join", bob, {})["seat"] == 1  # passed on to a
    assert call(c, f"/api/tables/{code}/join", cat, {})["seat"] == 2
    row = next(t for t in agreed_lobby([a, b, c], code) if t["code"] == code)
    assert [s["name"] for s in row["seats"]] == ["ann", "bob", "cat", None]  # type: ignore[index]
    assert call(c, f"/api/tables/{code}", cat)["table"]["status"] == "waiting"
    clients = [Client(ann, code, 1, start=True), Client(bob, code, 2), Client(cat, code, 3)]
    urls = {ann: a, bob: b, cat: c}  # each stays with its own process

    async def play() -> None:
        await asyncio.gather(*(cl.run(lambda cl=cl: [urls[cl.token]]) for cl in clients))

    asyncio.run(play())
    assert all(cl.seat.over for cl in clients)
    assert sum(cl.check_views(group.db) for cl in clients) >= 3 * 4  # a 圈: 4 hands or more
    assert all(cl.connections == 1 for cl in clients)
    # the lobby no longer lists it, on any process
    deadline = time.monotonic() + 10
    while any(t["code"] == code for url in (a, b, c) for t in lobby(url)):
        assert time.monotonic() < deadline
        time.sleep(0.05)


def _coin_and_point_tables(group: Cluster, seed: int) -> tuple[list[Client], str]:
    """Two accounts quick-matched (through two processes) into one coin table, and a
    guest's point table with three bots on a third; their clients, and the coin code."""
    a, b, c = group.live()[:3]
    one, two = account(a, f"one{seed}"), account(b, f"two{seed}")
    code = call(a, "/api/coins/match", one, {"room": "free"})["code"]
    assert call(b, "/api/coins/match", two, {"room": "free"})["code"] == code  # one matcher
    guest = session(c, f"g{seed}")
    point = call(c, "/api/tables", guest, {"rules": "baishan", "quan": 1})["code"]
    clients = [
        Client(one, code, seed * 10),
        Client(two, code, seed * 10 + 1),
        Client(guest, point, seed * 10 + 2, start=True),
    ]
    return clients, code


def _check(group: Cluster, clients: list[Client]) -> None:
    for cl in clients:
        cl.check_views(group.db)
    ledger_check(group.db)
    assert _settled_once(group.db) > 0


#: Failover seeds: two in `make test`; more for a soak (FANGCHENG_CLUSTER_SEEDS=20).
SEEDS = range(1, 1 + int(os.environ.get("FANGCHENG_CLUSTER_SEEDS", "2")))


@pytest.mark.parametrize("seed", SEEDS)
def test_the_owner_killed_mid_hand_its_tables_go_on_elsewhere(group: Cluster, seed: int) -> None:
    rng = random.Random(seed)
    clients, code = _coin_and_point_tables(group, seed)
    owner = group.owner(code)

    async def play() -> None:
        async def kill() -> None:
            # at a random point of the first hand or two, counted in the events a coin
            # seat was shown (a time would outlast the whole match on a quiet machine:
            # its bots act every 2 ms)
            at = rng.randint(1, 100)
            while sum(map(len, clients[0].events.values())) < at:
                await asyncio.sleep(0.002)
            assert not clients[0].seat.over
            owner.kill()  # kill -9, mid-hand: the coin match is several hands long
            await asyncio.to_thread(group.add)  # a process to take the dead one's place

        await asyncio.gather(kill(), *(cl.run(group.live) for cl in clients))

    asyncio.run(play())
    assert not owner.alive
    assert group.owner(code) is not owner or all(cl.done for cl in clients)
    assert all(cl.connections > 1 for cl in clients[:2])  # the coin seats reconnected
    _check(group, clients)


def test_redis_restarted_mid_hand_the_tables_pause_then_go_on(
    group: Cluster, redis_server: RedisServer
) -> None:
    clients, _ = _coin_and_point_tables(group, 7)
    paused: list[int] = []

    async def play() -> None:
        async def outage() -> None:
            while not clients[0].events:  # mid-hand
                await asyncio.sleep(0.02)
            await asyncio.sleep(0.3)
            redis_server.kill()
            await asyncio.sleep(LEASE_MS / 1000 + 0.3)  # every lease has lapsed by now
            paused.append(group.log_entries())
            await asyncio.sleep(1.0)
            paused.append(group.log_entries())
            await asyncio.to_thread(redis_server.start)  # empty: every key is lost

        await asyncio.gather(outage(), *(cl.run(group.live) for cl in clients))

    asyncio.run(play())
    assert paused[0] == paused[1], "a table acted while Redis was away"
    assert all(cl.seat.over for cl in clients)
    _check(group, clients)
