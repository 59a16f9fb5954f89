"""D89 (RULES §8.8): the 2,000-coin sign-up grant is given at most three times per
address per UTC day; later accounts from that address start at 0 coins and may claim
relief. Through the platform on both backends, and through the server, where the address
is the caller's (behind a trusted proxy, the client's as the proxy reports it)."""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from pathlib import Path

import pytest

import ledgerdb
from fangcheng.platform import RELIEF, SIGNUP_GRANT, Platform, check_ledger
from fangcheng.platform.accounts import SIGNUP_GRANTS_PER_ADDRESS
from fangcheng.server.app import ServerSettings, create_app
from ledgerdb import FAST_HASHER, invariants
from test_server_protocol import Clock

with warnings.catch_warnings():  # starlette's notice that httpx2 is preferred
    warnings.simplefilter("ignore")
    from starlette.testclient import TestClient

db_url, clock, platform = ledgerdb.db_url, ledgerdb.clock, ledgerdb.platform
PASSWORD = "correct horse"


def _balance(platform: Platform, name: str, address: str | None) -> int:
    return platform.balance(platform.sign_up(name, PASSWORD, address).person.id)


def test_d89_the_sign_up_grant_thrice_an_address_a_utc_day(
    platform: Platform, clock: ledgerdb.FakeClock
) -> None:
    home = "198.51.100.1"
    granted = [_balance(platform, f"p{i}", home) for i in range(SIGNUP_GRANTS_PER_ADDRESS)]
    assert granted == [SIGNUP_GRANT] * 3
    fourth = platform.sign_up("p3", PASSWORD, home).person.id
    assert platform.balance(fourth) == 0
    assert platform.claim_relief(fourth) == RELIEF  # below 100: relief as anyone
    assert _balance(platform, "elsewhere", "198.51.100.2") == SIGNUP_GRANT
    assert _balance(platform, "unknown", None) == SIGNUP_GRANT  # the operator's, no address
    clock.now = (clock.now // 86_400 + 1) * 86_400 - 1  # the day's last second: still none
    assert _balance(platform, "p4", home) == 0
    clock.advance(1)  # a new UTC day
    assert _balance(platform, "p5", home) == SIGNUP_GRANT
    invariants(platform)
    assert check_ledger(platform.engine).problems == []


@pytest.fixture(params=ledgerdb.BACKENDS)
def server_db(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    yield from ledgerdb.database(request.param, tmp_path)


def test_d89_the_server_counts_the_callers_address(server_db: str) -> None:
    """A person's fourth account of the day from one address starts at 0 coins; behind
    a trusted proxy the address counted is the client's; this machine is not counted."""
    settings = ServerSettings(
        db=server_db, clock=Clock(), timers=False, hasher=FAST_HASHER,
        trusted_proxies=frozenset({"10.0.0.2"}),
    )  # fmt: skip
    app = create_app(settings)

    def balances(client: TestClient, names: list[str], **headers: str) -> list[int]:
        found = []
        for name in names:
            body = {"name": name, "password": PASSWORD}
            made = client.post("/api/account/signup", json=body, headers=headers)
            assert made.status_code == 200, made.text
            token = {"Authorization": f"Bearer {made.json()['token']}"}
            found.append(client.get("/api/account", headers=token).json()["balance"])
        return found

    g = SIGNUP_GRANT
    with TestClient(app, client=("203.0.113.5", 1)) as client:
        assert balances(client, ["a1", "a2", "a3", "a4"]) == [g, g, g, 0]
    with TestClient(app, client=("10.0.0.2", 1)) as proxy:
        one = {"x-forwarded-for": "198.51.100.1"}
        assert balances(proxy, ["b1", "b2", "b3", "b4"], **one) == [g, g, g, 0]
        assert balances(proxy, ["c1"], **{"x-forwarded-for": "198.51.100.2"}) == [g]
    with TestClient(app, client=("127.0.0.1", 1)) as local:
        assert balances(local, ["d1", "d2", "d3", "d4"]) == [g, g, g, g]
    app.state.hub.platform.engine.dispose()
    app.state.hub.store.engine.dispose()
