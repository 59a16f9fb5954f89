"""The operators' console API (issue 37, RULES §8.8): who may call it, what a live table
shows an operator (the spectator's view, never a concealed tile), the dispute view of a
finished hand, and an operator's close and freeze through HTTP, on SQLite and PostgreSQL,
through the ASGI test client on a fake clock."""

from __future__ import annotations

import copy
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from starlette.routing import Route

from fangcheng.server.admin import COOKIE
from fangcheng.server.app import ServerSettings, create_app
from fangcheng.server.coins import CoinTable
from ledgerdb import BACKENDS, database
from test_admin_tables import _lines_of, _play_to_a_kong, _until_closed, play_until
from test_server_coins import Server, _alone_with_house_bots, _ledger_clean, _seat, _server
from test_server_protocol import Seat

PASSWORD = "correct horse battery"


def _admin_routes() -> list[tuple[str, str]]:
    """Every (method, path) of the app under /api/admin/ but the log-in: the app's own
    list, so that a route added anywhere is checked."""
    app = create_app(ServerSettings(db="sqlite://", timers=False))
    found = []
    for route in app.routes:
        if isinstance(route, Route) and route.path.startswith("/api/admin/"):
            for method in sorted((route.methods or set()) - {"HEAD"}):
                if (method, route.path) != ("POST", "/api/admin/session"):
                    found.append((method, route.path))
    return found


ROUTES = _admin_routes()
WRITES = [(m, p) for m, p in ROUTES if m != "GET" and p != "/api/admin/session"]


def _url(path: str) -> str:
    return path.replace("{id}", "1").replace("{code}", "ABCDEF")


class Operators:
    """A coin server with an admin and a support operator logged in."""

    def __init__(self, server: Server) -> None:
        self.server = server
        platform = server.hub.platform
        for name, role in (("root", "admin"), ("helpdesk", "support")):
            platform.create_operator(name, PASSWORD, role)
        self.admin = self.log_in("root")
        self.support = self.log_in("helpdesk")

    def log_in(self, name: str) -> dict[str, str]:
        answer = self.server.client.post(
            "/api/admin/session", json={"name": name, "password": PASSWORD}
        )
        assert answer.status_code == 200, answer.text
        return {"Authorization": f"Bearer {answer.json()['token']}"}


@pytest.fixture(params=BACKENDS)
def ops(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Operators]:
    for url in database(request.param, tmp_path):
        for server in _server(url):
            yield Operators(server)


def test_the_app_serves_every_route_of_the_console() -> None:
    """The routes the console's client calls (the parametrized tests below take the app's
    whole list, these and any other)."""
    assert {
        ("DELETE", "/api/admin/session"),
        ("GET", "/api/admin/people"),
        ("GET", "/api/admin/people/{id}"),
        ("POST", "/api/admin/people/{id}/freeze"),
        ("POST", "/api/admin/people/{id}/unfreeze"),
        ("POST", "/api/admin/people/{id}/adjust"),
        ("GET", "/api/admin/audit"),
        ("GET", "/api/admin/tables"),
        ("GET", "/api/admin/tables/{code}"),
        ("POST", "/api/admin/tables/{code}/close"),
        ("GET", "/api/admin/hands/{id}"),
    } <= set(ROUTES)


@pytest.mark.parametrize(("method", "path"), ROUTES)
def test_every_admin_route_refuses_anonymous_and_players(
    ops: Operators, method: str, path: str
) -> None:
    client = ops.server.client
    player = ops.server.sign_up("Ann")
    client.cookies.clear()  # (the log-ins' cookie)
    for headers in ({}, player, {"Authorization": "Bearer forged"}):
        answer = client.request(method, _url(path), headers=headers, json={})
        assert answer.status_code == 401, (headers, answer.text)
        assert answer.json()["error"]["code"] == "unauthorized"


@pytest.mark.parametrize(("method", "path"), WRITES)
def test_a_support_operator_cannot_write_any_route(ops: Operators, method: str, path: str) -> None:
    client = ops.server.client
    client.cookies.clear()
    answer = client.request(method, _url(path), headers=ops.support, json={"reason": "x"})
    assert answer.status_code == 403 and answer.json()["error"]["code"] == "forbidden"
    rows = client.get("/api/admin/audit", headers=ops.support).json()["audit"]
    assert {r["action"] for r in rows} <= {"operator_create", "log_in"}


def test_the_cookie_session_reads_and_a_foreign_page_cannot_write(ops: Operators) -> None:
    client = ops.server.client
    client.cookies.clear()
    ops.server.sign_up("Pat")
    for name, password in (("root", "wrong horse battery"), ("Pat", "correct horse")):
        wrong = client.post("/api/admin/session", json={"name": name, "password": password})
        assert wrong.status_code == 401 and COOKIE not in wrong.headers.get("set-cookie", "")
    assert client.get("/admin").status_code == 200  # the page, or its placeholder
    answer = client.post("/api/admin/session", json={"name": "root", "password": PASSWORD})
    cookie = answer.headers["set-cookie"]
    assert f"{COOKIE}=" in cookie and "HttpOnly" in cookie and "SameSite=strict" in cookie
    assert client.get("/api/admin/people?q=a").status_code == 200  # by the cookie
    ann = ops.server.profile(ops.server.sign_up("Ann"))["account"]
    foreign = {"Origin": "https://evil.example"}
    refused = client.post(f"/api/admin/people/{ann}/freeze", json={"reason": "x"}, headers=foreign)
    assert refused.status_code == 403
    assert client.delete("/api/admin/session").status_code == 200
    client.cookies.clear()
    assert client.get("/api/admin/people?q=a").status_code == 401


def _view(ops: Operators, code: str) -> list[dict[str, Any]]:
    answer = ops.server.client.get(f"/api/admin/tables/{code}", headers=ops.support)
    assert answer.status_code == 200, answer.text
    frames: list[dict[str, Any]] = answer.json()["frames"]
    return frames


def test_an_operators_live_view_is_the_spectators_and_holds_no_concealed_tile(
    ops: Operators,
) -> None:
    server = ops.server
    ann, table = _alone_with_house_bots(server, "Ann")
    listed = server.client.get("/api/admin/tables", headers=ops.support).json()
    (row,) = listed["tables"]
    assert row["code"] == table.code and row["kind"] == "coin" and row["room"] == "free"
    assert row["people"] == ["Ann"] and row["process"] == "local" and row["hand"] == 0
    eve = server.sign_up("Eve")
    with (
        server.client.websocket_connect("/ws") as ws,
        server.client.websocket_connect("/ws") as watching,
    ):  # Ann stays, so that 托管 does not play her hand out
        seat = Seat(ws)
        seat.hello(ann, table.code)
        play_until(table, seat, lambda: len(table.round.events) > 20)  # type: ignore[union-attr]
        spectator = Seat(watching)
        spectator.hello(eve, table.code)
        watched = spectator.drain()
        seen = _view(ops, table.code)
        assert seen[0]["type"] == "welcome" and seen[0]["seat"] is None
        events = next(f for f in seen if f["type"] == "events")["events"]
        assert events == spectator.events(table.hand)
        view = next(f for f in seen if f["type"] == "view")
        assert view == next(f for f in reversed(watched) if f["type"] == "view")
        round_ = table.round
        assert round_ is not None and not round_.over
        hands = copy.deepcopy(round_.hands)
        for s in range(4):  # other concealed tiles at every seat, as many: the same view
            counts = round_.hands[s]
            held = sum(counts)
            counts[:] = bytes(34)
            for k in range(held):
                counts[(s * 7 + k) % 34] += 1
        try:
            assert _view(ops, table.code) == seen
        finally:
            for s in range(4):
                round_.hands[s][:] = hands[s]


def test_d92_an_admin_closes_a_table_by_http_audited(ops: Operators) -> None:
    server = ops.server
    ann, table = _alone_with_house_bots(server, "Ann")
    with server.client.websocket_connect("/ws") as ws:
        seat = Seat(ws)
        seat.hello(ann, table.code)
        _play_to_a_kong(table, seat)
        hand_id = table.hand_id()
        url = f"/api/admin/tables/{table.code}/close"
        assert server.client.post(url, json={"reason": " "}, headers=ops.admin).status_code == 400
        answer = server.client.post(url, json={"reason": "a bot ring"}, headers=ops.admin)
        assert answer.status_code == 200, answer.text
        frames = _until_closed(seat)
    assert {"type": "closed", "what": "table", "reason": "a bot ring"} in frames
    memos = [memo for *_, memo in _lines_of(server, hand_id)]
    assert memos and all("杠" in m for m in memos)  # the kongs, no fee, no 逃跑
    rows = server.client.get("/api/admin/audit", headers=ops.support).json()["audit"]
    close = next(r for r in rows if r["action"] == "close_table")
    assert close["target"] == f"table:{table.code}" and close["reason"] == "a bot ring"
    assert close["before"]["people"] == ["Ann"]
    assert server.client.get("/api/admin/tables", headers=ops.admin).json()["tables"] == []
    assert server.client.post(url, json={"reason": "again"}, headers=ops.admin).status_code == 404
    _ledger_clean(server.url)


def test_the_dispute_view_lays_a_finished_hand_open_and_refuses_a_live_one(
    ops: Operators,
) -> None:
    server = ops.server
    ann, table = _alone_with_house_bots(server, "Ann")
    live = table.hand_id()
    refused = server.client.get(f"/api/admin/hands/{live}", headers=ops.support)
    assert refused.status_code == 409 and refused.json()["error"]["code"] == "state"
    server.client.portal.call(table.set_auto, _seat(table, server, ann), True, server.clock.now)  # type: ignore[union-attr]
    server.tick()  # 托管 and the house bots play the hand out
    (first,) = server.hub.store.stored_id(table.code, table.matches, 0)  # the hand `live` was
    for key in (str(first), live):
        answer = server.client.get(f"/api/admin/hands/{key}", headers=ops.support)
        assert answer.status_code == 200, answer.text
        view = answer.json()
        assert view["id"] == first and view["reproduces"] is True
        deal = next(e for e in view["record"]["events"] if e["type"] == "deal")
        assert all(isinstance(h, str) for h in deal["hands"])  # every hand open
        assert view["settlement"] == view["record"]["settlement"]
        coins = view["coins"]
        assert coins["hand_id"] == live and coins["lines"]
        assert sum(line["amount"] for line in coins["lines"]) == 0
    missing = server.client.get("/api/admin/hands/999999", headers=ops.support)
    assert missing.status_code == 404


def test_d90_an_admin_freezes_an_account_mid_hand_by_http(ops: Operators) -> None:
    server = ops.server
    ann, table = _alone_with_house_bots(server, "Ann")
    account = server.profile(ann)["account"]
    with server.client.websocket_connect("/ws") as ws:
        seat = Seat(ws)
        seat.hello(ann, table.code)
        seat.drain()
        answer = server.client.post(
            f"/api/admin/people/{account}/freeze", json={"reason": "collusion"}, headers=ops.admin
        )
        assert answer.status_code == 200, answer.text
        assert answer.json()["table"] == table.code
        frames = _until_closed(seat)
    assert {"type": "closed", "what": "account", "reason": "collusion"} in frames
    assert server.client.get("/api/account", headers=ann).status_code == 401  # sessions ended
    for _ in range(50):
        if table.round is not None and table.round.over:
            break
        server.clock.now += 60_000
        server.tick()
    assert all(s.person is None or s.kind != "person" for s in table.seats)
    settlement = (
        table.last_end["settlement"] if isinstance(table, CoinTable) and table.last_end else {}
    )
    assert settlement and not any(i["reason"].startswith("逃跑") for i in settlement["items"])
    profile = server.client.get(f"/api/admin/people/{account}", headers=ops.support).json()
    assert profile["frozen"]["reason"] == "collusion"
    _ledger_clean(server.url)


def test_a_persons_profile_lists_the_addresses_they_logged_in_from(ops: Operators) -> None:
    server = ops.server
    ann = server.profile(server.sign_up("Ann"))["account"]
    again = server.client.post(
        "/api/account/login", json={"name": "Ann", "password": "correct horse"}
    )
    assert again.status_code == 200, again.text
    profile = server.client.get(f"/api/admin/people/{ann}", headers=ops.support).json()
    assert "testclient" in profile["addresses"]  # (the test client's address)
    found = server.client.get("/api/admin/people?q=an", headers=ops.support).json()["people"]
    assert [p["id"] for p in found] == [ann] and found[0]["frozen"] is False


def test_d92_a_practice_table_closed_mid_hand_ends_its_hand_as_abandoned(ops: Operators) -> None:
    server = ops.server
    guest = server.client.post("/api/session", json={"name": "Gus"}).json()
    headers = {"Authorization": f"Bearer {guest['token']}"}
    opened = server.client.post(
        "/api/practice", json={"rules": "sichuan", "bot": "efficient"}, headers=headers
    )
    code = opened.json()["code"]
    table = server.hub.tables[code]
    (row,) = server.client.get("/api/admin/tables", headers=ops.admin).json()["tables"]
    assert row["kind"] == "practice" and row["people"] == ["Gus"] and row["room"] is None
    round_ = table.round
    assert round_ is not None and not round_.over  # (the guest's prompt holds it)
    url = f"/api/admin/tables/{code}/close"
    answer = server.client.post(url, json={"reason": "test"}, headers=ops.admin)
    assert answer.status_code == 200, answer.text
    settlement = round_.settlement
    assert settlement is not None and settlement["end"] == "abandoned"
    assert settlement["fees"] == [0, 0, 0, 0]
    assert all("杠" in i["reason"] or "风" in i["reason"] for i in settlement["items"])
    assert table.match is not None and table.match.scores == settlement["total"]
    stored = server.client.get(f"/api/hands/{table.last_hand_id}", headers=headers).json()
    assert stored["record"]["settlement"] == settlement
