"""The operators' console (issue 37) in a real browser (Chromium by Playwright, the app
under uvicorn on a coin server, house bots at a slow pace so that a hand lasts):

- an operator logs in; a support operator sees no working write control, and the server
  refuses its writes anyway (403);
- an admin freezes an account whose person sits mid-hand at a coin table: the person's
  page says so in the operator's words, the hand ends without a 逃跑 (D90), and the
  dispute view of that finished hand lays every hand open beside its journal lines;
- an adjustment (D91) shows in the person's own profile and in ``fangcheng ledger
  check``'s output;
- the live tables' list, a table's spectator view (no concealed tile), and its close.

Screenshots at laptop size go to ``tests/artifacts/console-*.png``.
"""

from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest

import test_browser
from fangcheng.server.app import ServerSettings, create_app
from fangcheng.server.hub import Hub
from ledgerdb import FAST_HASHER
from serving import serving
from test_browser import ARTIFACTS, _page
from test_browser_coins import PASSWORD, _match, _sign_up

sync_api = pytest.importorskip("playwright.sync_api")
pytestmark = pytest.mark.timeout(180)

HAND_MS = 120_000  # a hand at the house bots' pace, on a loaded machine


@dataclass
class Served:
    url: str
    db: str
    hub: Hub


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    """A coin server (SQLite file) with an admin ``root`` and a support ``helpdesk``."""
    db = f"sqlite:///{tmp_path_factory.mktemp('console') / 'console.db'}"
    settings = ServerSettings(
        db=db, bot_ms=150, between_ms=60_000, seed=5, match_wait_ms=0, hasher=FAST_HASHER
    )
    app = create_app(settings)
    with serving(app) as url:
        hub = app.state.hub
        hub.platform.create_operator("root", PASSWORD, "admin")
        hub.platform.create_operator("helpdesk", PASSWORD, "support")
        yield Served(url, db, hub)


browser = test_browser.browser  # Debian's Chromium, one a module
_closed_pages = test_browser._closed_pages  # each test's pages closed at its end


def _console(browser: Any, served: Served, operator: str) -> Any:
    """A page of the console, logged in as ``operator``."""
    page = _page(browser)
    page.goto(served.url.rstrip("/") + "/admin")
    page.fill(".admin-login input[name=name]", operator)
    page.fill(".admin-login input[name=password]", PASSWORD)
    page.click(".admin-login button")
    page.wait_for_selector(".admin-nav .log-out")
    return page


def _person(page: Any, name: str) -> None:
    """Find ``name`` and open the profile."""
    page.fill("form.search input[name=q]", name)
    page.click("form.search button")
    page.click(f"table.people a.to-name:text-is('{name}')")
    page.wait_for_selector(".person .facts .balance")


def _seated(player: Any) -> str:
    """Quick match into 自由场 (house bots fill the seats), no 漂 bet, dealt: the code."""
    code = _match(player, "free")
    player.click(".actions button[data-action='piao 0']")
    player.wait_for_selector(".hand.mine .tile")
    return code


def _shot(page: Any, name: str) -> None:
    page.screenshot(path=ARTIFACTS / f"console-{name}.png", full_page=True, timeout=30_000)


def test_a_support_operator_has_no_working_write_control(server: Served, browser: Any) -> None:
    player = _page(browser)
    _sign_up(player, server.url, "Sue")
    page = _console(browser, server, "helpdesk")
    assert "只读 read only" in page.locator(".admin-nav .who").inner_text()
    _person(page, "Sue")
    writes = page.locator(".person button.write")
    assert writes.count() == 2  # freeze, adjust: shown, and disabled
    assert all(b.is_disabled() for b in writes.all())
    assert page.locator(".person form input:not([disabled])").count() == 0
    _shot(page, "support-profile")
    # the server refuses a support operator's write whatever the page shows
    refused = page.evaluate(
        """async () => {
        const { token } = JSON.parse(sessionStorage.getItem("fangcheng.operator"));
        const id = document.querySelector(".person .facts .id").textContent;
        const r = await fetch(`/api/admin/people/${id}/freeze`, {method: "POST",
          headers: {"Content-Type": "application/json", Authorization: `Bearer ${token}`},
          body: JSON.stringify({reason: "try"})});
        return [r.status, (await r.json()).error.code];
    }"""
    )
    assert refused == [403, "forbidden"]
    page.goto(server.url.rstrip("/") + "/admin#/tables")
    page.wait_for_selector(".tables-list")
    assert page.locator("button.write:not([disabled])").count() == 0
    assert page.errors == [] and player.errors == []


def test_d90_an_admin_freezes_a_seated_account_and_its_hand_ends_without_an_escape(
    server: Served, browser: Any
) -> None:
    player = _page(browser)
    _sign_up(player, server.url, "Fay")
    _seated(player)
    page = _console(browser, server, "root")
    _person(page, "Fay")
    page.fill("form.freeze input[name=reason]", "collusion seen in 3 hands")
    page.click("form.freeze button.write")
    page.wait_for_selector(".person .state.frozen")
    assert "collusion seen in 3 hands" in page.locator(".person .state").inner_text()
    _shot(page, "frozen")
    # the person is told, in the operator's words, and the page does not reconnect
    note = player.wait_for_selector(".closed-note.closed-account")
    assert "collusion seen in 3 hands" in note.inner_text()
    player.wait_for_selector(".conn:has-text('已断开 closed')")
    player.screenshot(path=ARTIFACTS / "console-frozen-player.png")
    # the seat plays on under 托管 to the hand's end: booked, no 逃跑
    _wait_booked(page, "Fay")
    hand = page.locator("table.recent a.to-hand_id").first
    hand.click()
    page.wait_for_selector(".dispute .replay-page .settlement")
    text = page.locator(".dispute").inner_text()
    assert "逃跑" not in text
    assert page.locator(".dispute .reproduces.ok").count() == 1
    # every hand laid open (the record's events): four hands of tiles face up
    open_hands = page.locator(".dispute .settlement .open-hand")
    assert open_hands.count() == 4
    for row in open_hands.all():
        assert row.locator(".tile[data-tile]").count() >= 1
    assert page.locator(".dispute .journal table.journal tr").count() >= 2
    _shot(page, "dispute")
    # the freeze is in the audit
    page.click(".admin-nav .nav-audit")
    page.wait_for_selector("table.audit")
    assert page.locator("table.audit tr:has-text('freeze')").count() >= 1
    _shot(page, "audit")
    assert page.errors == [] and player.errors == []


def _wait_booked(page: Any, name: str) -> None:
    """Reload the person's profile until a hand of theirs is booked."""
    for _ in range(HAND_MS // 2000):
        page.reload()
        page.wait_for_selector(".person .facts .balance")
        if page.locator("table.recent a.to-hand_id").count():
            return
        page.wait_for_timeout(2000)
    pytest.fail(f"no hand of {name}'s booked")


def test_d91_an_adjustment_shows_in_the_profile_and_in_the_ledger_check(
    server: Served, browser: Any
) -> None:
    player = _page(browser)
    _sign_up(player, server.url, "Gus")
    before = int(player.locator(".account-bar .balance").inner_text())
    page = _console(browser, server, "root")
    _person(page, "Gus")
    key = page.locator(".adjust-form input[name=key]").input_value()
    assert re.fullmatch(r"[0-9a-f-]{36}", key)  # a random UUID, made by the form
    page.fill(".adjust-form input[name=amount]", "500")
    page.fill(".adjust-form input[name=reason]", "refund: lost connection")
    page.click(".adjust-form button.write")
    page.wait_for_selector("table.adjustments td:has-text('refund: lost connection')")
    assert page.locator(".person .facts .balance").inner_text() == str(before + 500)
    _shot(page, "adjusted")
    player.goto(server.url + "#/profile")
    player.wait_for_selector(".profile .balance")
    assert player.locator(".profile .balance").inner_text() == str(before + 500)
    check = subprocess.run(
        [sys.executable, "-m", "fangcheng", "ledger", "check", "--db", server.db],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert check.returncode == 0, check.stdout + check.stderr
    assert re.search(r"adjustments: [1-9]\d*, \+\d+ coins to people", check.stdout), check.stdout
    assert page.errors == [] and player.errors == []


def test_the_tables_list_a_spectator_view_and_a_close(server: Served, browser: Any) -> None:
    player = _page(browser)
    _sign_up(player, server.url, "Hal")
    code = _seated(player)
    page = _console(browser, server, "root")
    page.click(".admin-nav .nav-tables")
    row = page.locator(f"table.tables tr:has(a.to-code:text-is('{code}'))")
    assert "Hal" in row.inner_text() and "自由场 free" in row.inner_text()
    _shot(page, "tables")
    row.locator("a.to-code").click()
    page.wait_for_selector(".spectate .board")
    # a spectator's view: no concealed tile of any seat (every hand shown as backs)
    assert page.locator(".spectate .board .hand .tile[data-tile]").count() == 0
    assert page.locator(".spectate .board .hand .tile").count() >= 13 * 4
    _shot(page, "table")
    page.fill("form.close-table input[name=reason]", "server maintenance")
    page.click("form.close-table button.write")
    page.wait_for_selector(".tables-list")
    note = player.wait_for_selector(".closed-note.closed-table")
    assert "server maintenance" in note.inner_text()
    player.wait_for_selector(".settlement h2:has-text('运营关桌')")
    # the close empties every seat: its settlement and standings still name them as the
    # hand was played (the house bots by name, not by their winds alone)
    player.wait_for_selector(".settlement .final .standings li")
    for shown in (".settlement table.items th.num", ".settlement .final .standings li"):
        names = player.locator(shown).all_inner_texts()
        assert len(names) == 4 and sum("efficient bot" in n for n in names) == 3, names
    # … and so does the board behind them, once the table's last frame (its seats empty)
    # is in and the socket closed: not "空 empty" for the seats the close emptied
    player.wait_for_selector(".topbar .conn.off")
    plates = player.locator(".board .plate .name").all_inner_texts()
    mine = [n for n in plates if n.startswith("Hal") and n.endswith("(你)")]  # (a title)
    assert sum("efficient bot" in n for n in plates) == 3 and len(mine) == 1, plates
    player.screenshot(path=ARTIFACTS / "console-closed-player.png")
    page.wait_for_function(
        "c => ![...document.querySelectorAll('table.tables a.to-code')]"
        ".some((a) => a.textContent === c)",
        arg=code,
        timeout=15_000,
    )
    # the closed hand's dispute view, by the 盘号 the player quotes
    quoted = player.locator(".settlement .coins .hand-id").inner_text()
    page.click(".admin-nav .nav-people")
    page.fill("form.open-hand-form input[name=hand]", quoted)
    page.click("form.open-hand-form button")
    page.wait_for_selector(".dispute .replay-page .settlement h2:has-text('运营关桌')")
    assert page.locator(".dispute .reproduces.ok").count() == 1
    assert "运营关桌 closed by an operator" in page.locator(".dispute .log").inner_text()
    _shot(page, "dispute-closed")
    assert page.errors == [] and player.errors == []
