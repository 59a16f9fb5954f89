"""Issue 38 item 3: a request's database calls (the token's person, a guest's session, a
person's hands, the accounts' and the console's calls, the websocket's hello) run off
the event loop, so a slow database holds up that request and no other table.

Each database call is replaced by one that asks the loop to run a callback and waits
for it: run in a worker thread it sees the callback run (the loop was free meanwhile);
run on the loop itself it cannot, and waits out its timeout. No wall-clock threshold is
asserted: the callback either ran during the call or it did not."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from test_admin_api import PASSWORD
from test_server_coins import Server, _server

#: How long a call waits for the loop's callback: only the old tree (the call on the
#: loop) waits it out, so it bounds the failing run, never a passing one's.
_WAIT_S = 2.0


class Slow:
    """Database calls that each wait for the event loop to run a callback."""

    def __init__(self, server: Server) -> None:
        assert server.client.portal is not None
        self.loop = server.client.portal.call(_running_loop)
        self.calls: list[tuple[str, bool]] = []  # (the call, whether the loop ran meanwhile)

    def patch(self, monkeypatch: pytest.MonkeyPatch, owner: object, name: str) -> None:
        original = getattr(owner, name)

        def slow(*args: Any, **kwargs: Any) -> Any:
            ran = threading.Event()
            self.loop.call_soon_threadsafe(ran.set)
            self.calls.append((name, ran.wait(_WAIT_S)))
            return original(*args, **kwargs)

        monkeypatch.setattr(owner, name, slow)


async def _running_loop() -> asyncio.AbstractEventLoop:
    return asyncio.get_running_loop()


@pytest.fixture
def server(tmp_path: Path) -> Iterator[Server]:
    yield from _server(f"sqlite:///{tmp_path / 'coins.db'}")


def _guest(server: Server) -> dict[str, str]:
    answer = server.client.post("/api/session", json={"name": "Ann"})
    assert answer.status_code == 200, answer.text
    return {"Authorization": f"Bearer {answer.json()['token']}"}


def _operator(server: Server) -> dict[str, str]:
    server.hub.platform.create_operator("root", PASSWORD, "admin")
    answer = server.client.post("/api/admin/session", json={"name": "root", "password": PASSWORD})
    assert answer.status_code == 200, answer.text
    return {"Authorization": f"Bearer {answer.json()['token']}"}


_Call = Callable[[Server], int]  # a request, answered with its status


def _ws_hello(server: Server) -> int:
    token = _guest(server)["Authorization"].partition(" ")[2]
    with server.client.websocket_connect("/ws") as ws:
        ws.send_json({"type": "hello", "v": 1, "token": token, "table": "NOSUCH"})
        frame = ws.receive_json()
    assert frame["code"] == "not_found", frame  # a known token, an unknown table
    return 404


# (which database, the call made slow, the request, the status it answers as before)
CASES: list[tuple[str, str, _Call, int]] = [
    ("store", "new_session", lambda s: s.client.post("/api/session", json={}).status_code, 200),
    ("store", "person", lambda s: s.client.get("/api/hands", headers=_guest(s)).status_code, 200),
    ("store", "hands_of", lambda s: s.client.get("/api/hands", headers=_guest(s)).status_code, 200),
    ("store", "hand", lambda s: s.client.get("/api/hands/7", headers=_guest(s)).status_code, 404),
    ("store", "person", _ws_hello, 404),
    ("platform", "authenticate", lambda s: s.client.get("/api/account", headers=s.sign_up("Bo")).status_code, 200),
    ("store", "account_person", lambda s: s.client.get("/api/account", headers=s.sign_up("Bo")).status_code, 200),
    ("platform", "profile", lambda s: s.client.get("/api/account", headers=s.sign_up("Bo")).status_code, 200),
    ("platform", "leaderboard", lambda s: s.client.get("/api/leaderboard").status_code, 200),
    # a new account is too rich for relief: the platform's refusal, raised in the thread
    ("platform", "claim_relief", lambda s: s.client.post("/api/account/relief", headers=s.sign_up("Bo")).status_code, 403),
    ("platform", "log_out", lambda s: s.client.post("/api/account/logout", json={}, headers=s.sign_up("Bo")).status_code, 200),
    ("platform", "operator", lambda s: s.client.get("/api/admin/people", headers=_operator(s)).status_code, 200),
    ("platform", "find_people", lambda s: s.client.get("/api/admin/people", headers=_operator(s)).status_code, 200),
    ("platform", "audit_rows", lambda s: s.client.get("/api/admin/audit", headers=_operator(s)).status_code, 200),
    ("platform", "admin_profile", lambda s: s.client.get("/api/admin/people/999", headers=_operator(s)).status_code, 404),
]  # fmt: skip


@pytest.mark.parametrize(("owner", "name", "call", "status"), CASES)
def test_a_requests_database_call_leaves_the_event_loop_free(
    server: Server,
    monkeypatch: pytest.MonkeyPatch,
    owner: str,
    name: str,
    call: _Call,
    status: int,
) -> None:
    slow = Slow(server)
    slow.patch(monkeypatch, getattr(server.hub, owner), name)
    assert call(server) == status
    assert slow.calls, f"{owner}.{name} was not called"
    assert all(ran for _, ran in slow.calls), slow.calls
