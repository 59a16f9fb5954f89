"""The server's HTTP edge against strangers (issue 35): behind a reverse proxy the
client's address is the one the proxy reports (and nobody else's report is believed),
password hashing is bounded, every call that makes a session counts against its
address, bad input is a precise 4xx, sockets per address are capped, and every answer
carries its security headers.

The app runs on a fake clock with no timer tasks, as in `test_server_protocol`; a client
address is set per test client (Starlette's ``client``, httpx's ``ASGITransport``)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import subprocess
import sys
import threading
import time
import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
import sqlalchemy as sa
from alembic import command
from alembic.config import Config
from argon2 import PasswordHasher

import ledgerdb
from ledgerdb import BACKENDS, FAST_HASHER, database
from test_server_protocol import Clock

with warnings.catch_warnings():  # starlette's notice that httpx2 is preferred
    warnings.simplefilter("ignore")
    from starlette.testclient import TestClient
from starlette.requests import Request
from starlette.websockets import WebSocketDisconnect

from fangcheng.cli import build_parser, main
from fangcheng.platform import LoginFailed, NameTaken, Platform
from fangcheng.platform.database import MIGRATIONS
from fangcheng.server import relay
from fangcheng.server.app import ServerSettings, create_app
from fangcheng.server.hub import SESSIONS_PER_MINUTE, Hub
from fangcheng.server.passwords import HASH_QUEUE, HASHING, LOGIN_FAILURES
from fangcheng.server.websocket import SOCKETS_PER_ADDRESS

PROXY = ("10.0.0.2", 40_000)
PASSWORD = "correct horse"


@dataclass
class Server:
    client: TestClient
    clock: Clock
    hub: Hub

    def post(self, path: str, body: Any = None, forwarded: str | None = None, **kw: Any) -> Any:
        headers = dict(kw.pop("headers", {}))
        if forwarded is not None:
            headers["x-forwarded-for"] = forwarded
        return self.client.post(path, json={} if body is None else body, headers=headers, **kw)

    def guest(self, forwarded: str | None = None) -> dict[str, str]:
        answer = self.post("/api/session", {"name": "Ann"}, forwarded)
        assert answer.status_code == 200, answer.text
        return {"Authorization": f"Bearer {answer.json()['token']}"}


@contextlib.contextmanager
def serving(
    client: tuple[str, int] = ("testclient", 50_000), base_url: str = "http://testserver",
    **options: Any,
) -> Iterator[Server]:  # fmt: skip
    clock = Clock()
    options = {"timers": False, "seed": 7, "hasher": FAST_HASHER, "bot_ms": 0, **options}
    app = create_app(ServerSettings(clock=clock, **options))
    with TestClient(app, client=client, base_url=base_url) as test_client:
        yield Server(test_client, clock, app.state.hub)


def _code(answer: Any) -> tuple[int, str]:
    return answer.status_code, answer.json()["error"]["code"]


# --- 9. behind a reverse proxy ------------------------------------------------------------


def test_behind_a_trusted_proxy_each_client_has_its_own_session_limit() -> None:
    with serving(PROXY, trusted_proxies=frozenset({"10.0.0.2"})) as server:
        made = [server.post("/api/session", {}, "198.51.100.1") for _ in range(21)]
        assert [m.status_code for m in made].count(200) == 2 * SESSIONS_PER_MINUTE
        assert _code(made[-1]) == (429, "rate")
        # another client behind the same proxy is not held back by the first
        assert server.post("/api/session", {}, "198.51.100.2").status_code == 200
        assert set(server.hub.session_limits) == {"198.51.100.1", "198.51.100.2"}


def test_the_client_is_the_right_most_forwarded_address_not_a_trusted_proxy() -> None:
    trusted = frozenset({"10.0.0.0/24"})
    with serving(PROXY, trusted_proxies=trusted) as server:
        # a client's own header (a forged 192.0.2.9), then two proxies of ours appended
        server.post("/api/session", {}, "192.0.2.9, 198.51.100.7, 10.0.0.3")
        assert set(server.hub.session_limits) == {"198.51.100.7"}


def test_nobody_elses_forwarded_address_is_believed() -> None:
    with serving(("203.0.113.5", 1), trusted_proxies=frozenset({"10.0.0.2"})) as server:
        made = [server.post("/api/session", {}, f"198.51.100.{n}") for n in range(21)]
        assert _code(made[-1]) == (429, "rate")  # all of them are 203.0.113.5's
        assert set(server.hub.session_limits) == {"203.0.113.5"}


def test_d83_anti_cheat_seats_two_clients_of_one_trusted_proxy_together(tmp_path: Path) -> None:
    """防作弊场 behind a proxy: two people behind it (of their own addresses) meet, two
    accounts of one address never do (on main every account was the proxy's)."""
    options = {"trusted_proxies": frozenset({"10.0.0.2"}), "address_checks": True}
    with serving(PROXY, db=f"sqlite:///{tmp_path / 'd83.db'}", **options) as server:

        def account(name: str, address: str) -> dict[str, str]:
            body = {"name": name, "password": PASSWORD}
            answer = server.post("/api/account/signup", body, address)
            assert answer.status_code == 200, answer.text
            return {"Authorization": f"Bearer {answer.json()['token']}"}

        def match(who: dict[str, str], address: str) -> str:
            answer = server.post("/api/coins/match", {"room": "anti_cheat"}, address, headers=who)
            assert answer.status_code == 200, answer.text
            code: str = answer.json()["code"]
            return code

        ann, bob = account("Ann", "198.51.100.1"), account("Bob", "198.51.100.2")
        cat = account("Cat", "198.51.100.1")
        table = match(ann, "198.51.100.1")
        assert match(bob, "198.51.100.2") == table
        assert match(cat, "198.51.100.1") != table


def test_a_relayed_call_carries_the_callers_address_to_the_tables_owner() -> None:
    """Many processes: the owner of a table (or of a room's quick match) sees the
    client's address, not the relaying process's, when it trusts the other processes."""
    seen: list[httpx.Request] = []

    class Directory:
        def http(self) -> httpx.AsyncClient:
            def answer(request: httpx.Request) -> httpx.Response:
                seen.append(request)
                return httpx.Response(200, json={})

            return httpx.AsyncClient(transport=httpx.MockTransport(answer))

    scope = {
        "type": "http", "method": "POST", "path": "/api/coins/match", "query_string": b"",
        "headers": [(b"authorization", b"Bearer t"), (b"x-forwarded-for", b"192.0.2.1")],
        "client": ("198.51.100.7", 1),
    }  # fmt: skip

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": b"{}", "more_body": False}

    request = Request(scope, receive)
    asyncio.run(relay.http(Directory(), request, "http://10.0.0.6:8001"))  # type: ignore[arg-type]
    assert seen[0].headers["x-forwarded-for"] == "198.51.100.7"  # (not what the client said)
    assert seen[0].headers["authorization"] == "Bearer t"


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextlib.contextmanager
def _served(tmp_path: Path, *flags: str) -> Iterator[str]:
    """``fangcheng serve`` in a process of its own (uvicorn as an operator runs it)."""
    port = _free_port()
    url = f"http://127.0.0.1:{port}"
    script = Path(sys.executable).with_name("fangcheng")
    command = [str(script)] if script.exists() else [sys.executable, "-m", "fangcheng"]
    db = f"sqlite:///{tmp_path / 'served.db'}"
    process = subprocess.Popen(
        [*command, "serve", "--port", str(port), "--db", db, *flags],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 30
        while True:
            assert process.poll() is None, "the server died at start"
            assert time.monotonic() < deadline, "the server did not start"
            try:
                httpx.get(f"{url}/api/lobby", timeout=1)
                break
            except httpx.TransportError:
                time.sleep(0.05)
        yield url
    finally:
        process.terminate()
        process.wait(timeout=15)


def test_fangcheng_serve_believes_no_forwarded_address_unless_told(tmp_path: Path) -> None:
    """A client on the server's own machine could name itself anyone with
    ``X-Forwarded-For`` (uvicorn believes loopback's by default); ``--trusted-proxy``
    names whose header is believed."""
    forged = {"x-forwarded-for": "198.51.100.1"}
    with _served(tmp_path) as url:  # loopback itself: exempt from the session limit
        made = [httpx.post(f"{url}/api/session", json={}, headers=forged) for _ in range(21)]
        assert {m.status_code for m in made} == {200}
    with _served(tmp_path, "--trusted-proxy", "127.0.0.1") as url:
        made = [httpx.post(f"{url}/api/session", json={}, headers=forged) for _ in range(21)]
        assert made[-1].status_code == 429


def test_the_trusted_proxy_flag_takes_lists_and_refuses_what_is_no_address(
    capsys: pytest.CaptureFixture[str],
) -> None:
    args = build_parser().parse_args(
        ["serve", "--trusted-proxy", "10.0.0.2, 10.0.1.0/24", "--trusted-proxy", "::1"]
    )
    assert args.trusted_proxy == ["10.0.0.2, 10.0.1.0/24", "::1"]
    assert main(["serve", "--trusted-proxy", "proxy.example.org"]) == 2
    assert "'proxy.example.org' is not an address or a network" in capsys.readouterr().err


# --- 10. password hashing is bounded; failed log-ins per account ---------------------------


class GatedHasher(PasswordHasher):
    """Cheap argon2id that counts the hashes running at once, each held until the test
    opens the gate (so that every request can arrive while the first are hashing)."""

    def __init__(self) -> None:
        super().__init__(time_cost=1, memory_cost=8, parallelism=1)
        self.gate = threading.Event()
        self.lock = threading.Lock()
        self.running = self.most = self.calls = 0

    def _held(self, work: Any, *args: Any) -> Any:
        with self.lock:
            self.running += 1
            self.calls += 1
            self.most = max(self.most, self.running)
        try:
            self.gate.wait(30)
            return work(*args)
        finally:
            with self.lock:
                self.running -= 1

    def hash(self, password: str | bytes, *, salt: bytes | None = None) -> str:
        result: str = self._held(super().hash, password)
        return result

    def verify(self, hash: str | bytes, password: str | bytes) -> bool:
        result: bool = self._held(super().verify, hash, password)
        return result


def test_password_hashing_is_bounded_and_the_excess_refused(tmp_path: Path) -> None:
    """40 wrong log-ins at once (2 GiB of argon2id on main): `HASHING` hash at a time,
    `HASH_QUEUE` wait, the rest are refused ``rate`` at once."""
    hasher = GatedHasher()
    db = f"sqlite:///{tmp_path / 'hashing.db'}"
    app = create_app(ServerSettings(db=db, clock=Clock(), timers=False, hasher=hasher))
    hub: Hub = app.state.hub
    hub.platform  # noqa: B018  (migrated before the rush)
    transport = httpx.ASGITransport(app=app, client=("127.0.0.1", 1))  # loopback: no limit

    async def rush() -> list[httpx.Response]:
        async with httpx.AsyncClient(transport=transport, base_url="http://t") as client:
            tries = [
                asyncio.create_task(
                    client.post("/api/account/login", json={"name": f"n{i}", "password": "x" * 8})
                )
                for i in range(40)
            ]
            refused = 40 - HASHING - HASH_QUEUE
            try:
                for _ in range(1000):  # until every request has arrived (or hashes)
                    done = sum(t.done() for t in tries)
                    if hasher.running + done >= HASHING + refused:
                        break
                    await asyncio.sleep(0.01)
                assert hasher.running == HASHING
            finally:
                hasher.gate.set()
            return await asyncio.gather(*tries)

    answers = asyncio.run(rush())
    codes = [a.json()["error"]["code"] for a in answers]
    assert codes.count("rate") == 40 - HASHING - HASH_QUEUE
    assert codes.count("forbidden") == HASHING + HASH_QUEUE  # wrong name or password
    assert {a.status_code for a in answers if a.json()["error"]["code"] == "rate"} == {429}
    assert hasher.most == HASHING


def test_failed_log_ins_to_one_name_are_limited_from_any_address(tmp_path: Path) -> None:
    with serving(("127.0.0.1", 1), db=f"sqlite:///{tmp_path / 'logins.db'}") as server:
        body = {"name": "Ann", "password": PASSWORD}
        assert server.post("/api/account/signup", body).status_code == 200
        wrong = {"name": "Ann", "password": "not the one"}
        for _ in range(LOGIN_FAILURES):
            assert _code(server.post("/api/account/login", wrong)) == (403, "forbidden")
        for attempt in (wrong, body, {"name": "ANN", "password": PASSWORD}):
            assert _code(server.post("/api/account/login", attempt)) == (429, "rate")
        other = {"name": "Bob", "password": "x" * 8}  # another name: its own count
        assert _code(server.post("/api/account/login", other)) == (403, "forbidden")
        server.clock.now += 15 * 60_000 // LOGIN_FAILURES  # one more try in a while
        assert server.post("/api/account/login", body).status_code == 200
        for _ in range(LOGIN_FAILURES):  # a success forgot the failures
            assert _code(server.post("/api/account/login", wrong)) == (403, "forbidden")


# --- 11. every call that makes a session counts -------------------------------------------


def test_bot_tokens_count_against_the_sessions_of_an_address() -> None:
    with serving(("198.51.100.3", 1)) as server:
        owner = server.guest()
        made, answers = 1, []
        for _ in range(8):  # tables of three outside bots each, while the address may
            opened = server.post("/api/tables", {"outside_bots": True}, headers=owner)
            if opened.status_code != 200:
                break
            code = opened.json()["code"]
            for _ in range(3):
                answers.append(server.post(f"/api/tables/{code}/bot-token", headers=owner))
        made += sum(a.status_code == 200 for a in answers)
        assert made == 2 * SESSIONS_PER_MINUTE
        assert _code(answers[-1]) == (429, "rate")
        assert _code(server.post("/api/session", {})) == (429, "rate")


# --- 12. bad input is a precise 4xx; internal is 500 ---------------------------------------


@pytest.mark.parametrize("path", ["/api/tables", "/api/practice"])
@pytest.mark.parametrize("depth", [900, 2000])
def test_json_nested_too_deep_is_malformed(path: str, depth: int) -> None:
    with serving() as server:
        ann = server.guest()
        deep = "[" * depth + "]" * depth
        body = ('{"options": {"claim_window": ' + deep + "}}").encode()
        answer = server.client.post(path, content=body, headers=ann)
        assert _code(answer) == (400, "malformed")
        message = answer.json()["error"]["message"]
        assert "nested too deeply" in message or "claim_window" in message


@pytest.fixture(params=BACKENDS)
def db_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    yield from database(request.param, tmp_path)


def test_a_hand_id_past_the_databases_integers_is_not_found(db_url: str) -> None:
    with serving(db=db_url) as server:
        ann = server.guest()
        for id_ in ("99999999999999999999", str(2**63), "0", "-1"):
            answer = server.client.get(f"/api/hands/{id_}", headers=ann)
            assert _code(answer) == (404, "not_found"), id_


def test_a_control_character_in_a_name_is_refused_before_the_database(db_url: str) -> None:
    with serving(db=db_url) as server:
        answer = server.post("/api/session", {"name": "A\x00nn"})
        assert _code(answer) == (400, "malformed") and "control" in answer.text
        answer = server.post("/api/account/signup", {"name": "A\x00nn", "password": PASSWORD})
        assert _code(answer) == (403, "forbidden") and "control characters" in answer.text
        answer = server.post("/api/account/login", {"name": "A\x00nn", "password": PASSWORD})
        assert _code(answer) == (403, "forbidden") and "wrong name or password" in answer.text


def test_a_failure_of_the_server_is_internal_500(monkeypatch: pytest.MonkeyPatch) -> None:
    with serving() as server:
        ann = server.guest()

        def broken(person: int) -> None:
            raise RuntimeError("a bug")

        monkeypatch.setattr(server.hub.store, "hands_of", broken)
        assert _code(server.client.get("/api/hands", headers=ann)) == (500, "internal")


def test_a_client_gone_mid_request_is_logged_at_info(caplog: pytest.LogCaptureFixture) -> None:
    app = create_app(ServerSettings(clock=Clock(), timers=False))
    scope = {
        "type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": "POST",
        "scheme": "http", "path": "/api/session", "raw_path": b"/api/session",
        "query_string": b"", "root_path": "", "headers": [(b"host", b"t")],
        "client": ("198.51.100.9", 1), "server": ("t", 80), "app": app,
    }  # fmt: skip
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        return {"type": "http.disconnect"}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    with caplog.at_level(logging.INFO, "fangcheng.server"):
        asyncio.run(app(scope, receive, send))
    events = [(r.levelno, r.getMessage()) for r in caplog.records]
    assert (logging.INFO, "client_gone") in events
    assert all(level < logging.ERROR for level, _ in events)


# --- 13. sockets per address; headers ------------------------------------------------------


def test_sockets_from_one_address_are_capped() -> None:
    with serving(("198.51.100.4", 1)) as server, contextlib.ExitStack() as stack:
        for _ in range(SOCKETS_PER_ADDRESS):
            stack.enter_context(server.client.websocket_connect("/ws"))
        with server.client.websocket_connect("/ws") as ws:
            assert ws.receive_json()["code"] == "rate"
            with pytest.raises(WebSocketDisconnect) as closed:
                ws.receive_json()
            assert closed.value.code == 4429
        stack.close()  # they go: the address may connect again
        with server.client.websocket_connect("/ws") as ws:
            ws.send_json({"type": "hello", "v": 1, "token": "forged", "table": "AAAAAA"})
            assert ws.receive_json()["code"] == "unauthorized"


def test_sockets_are_capped_per_client_behind_a_trusted_proxy() -> None:
    with serving(PROXY, trusted_proxies=frozenset({"10.0.0.2"})) as server:
        first = {"x-forwarded-for": "198.51.100.1"}
        with contextlib.ExitStack() as stack:
            for _ in range(SOCKETS_PER_ADDRESS):
                stack.enter_context(server.client.websocket_connect("/ws", headers=first))
            assert server.hub.sockets == {"198.51.100.1": SOCKETS_PER_ADDRESS}
            other = {"x-forwarded-for": "198.51.100.2"}
            with server.client.websocket_connect("/ws", headers=other) as ws:
                ws.send_json({"type": "hello", "v": 1, "token": "forged", "table": "AAAAAA"})
                assert ws.receive_json()["code"] == "unauthorized"


def test_every_answer_has_a_content_security_policy_and_https_ones_hsts() -> None:
    with serving() as server:
        for path in ("/", "/api/lobby", "/static/app.css"):
            answer = server.client.get(path)
            policy = answer.headers["content-security-policy"]
            assert "default-src 'self'" in policy and "frame-ancestors 'none'" in policy
            assert "strict-transport-security" not in answer.headers
        forged = server.client.get("/api/lobby", headers={"x-forwarded-proto": "https"})
        assert "strict-transport-security" not in forged.headers  # nobody's proxy
    with serving(base_url="https://testserver") as server:
        assert "max-age=" in server.client.get("/").headers["strict-transport-security"]
    with serving(PROXY, trusted_proxies=frozenset({"10.0.0.2"})) as server:
        answer = server.client.get("/api/lobby", headers={"x-forwarded-proto": "https"})
        assert "max-age=" in answer.headers["strict-transport-security"]


# --- 13a. lookalike names ------------------------------------------------------------------

platform = ledgerdb.platform
clock = ledgerdb.clock


def test_a_name_that_reads_as_a_taken_one_is_refused(platform: Platform) -> None:
    platform.sign_up("Alice", PASSWORD)
    for lookalike in ("Аlice", "ΑLICE", "Αlіcе", "Ａｌｉｃｅ"):  # Cyrillic, Greek, both, fullwidth
        with pytest.raises(NameTaken, match="taken"):
            platform.sign_up(lookalike, PASSWORD)
    with pytest.raises(LoginFailed):  # nor does the lookalike open Alice's account
        platform.log_in("Аlice", PASSWORD)
    assert platform.log_in("ALICE", PASSWORD).person.name == "Alice"
    for name in ("张三", "张四", "Иван", "Ὀδυσσεύς", "Alice2"):  # their own names
        assert platform.sign_up(name, PASSWORD).person.name == name
    with pytest.raises(NameTaken, match="looks like 'Иван'"):
        platform.sign_up("ИBAH", PASSWORD)


def test_the_migration_gives_existing_names_their_skeleton(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'old.db'}"
    engine = sa.create_engine(url)
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    with engine.begin() as conn:
        config.attributes["connection"] = conn
        command.upgrade(config, "0003")
        conn.execute(sa.text("INSERT INTO accounts (id, kind) VALUES (100, 'person')"))
        conn.execute(
            sa.text(
                "INSERT INTO people (id, name, name_key, password_hash, created_at)"
                " VALUES (100, 'Аlice', 'аlice', 'x', 0)"
            )
        )
    engine.dispose()
    migrated = Platform.open(url, hasher=FAST_HASHER)
    with pytest.raises(NameTaken, match="looks like 'Аlice'"):
        migrated.sign_up("Alice", PASSWORD)
    migrated.engine.dispose()
