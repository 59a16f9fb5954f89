"""The web client in a real browser: Debian's Chromium driven by Playwright, against the
real app under uvicorn on a loopback port (bots at pace 0, a short pause between hands).

Three players' paths: a whole hand at a practice table played by clicking, to the
settlement; two browsers at one private table (joined by code), each seeing its own hand
and not the other's; a reload mid-hand that comes back to the same seat and plays on.
Screenshots of the table and the settlement go to ``tests/artifacts/`` (git-ignored).
Skipped only where /usr/bin/chromium is absent (CI installs it: ``.ci/run``).
"""

from __future__ import annotations

import contextlib
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

CHROMIUM = Path("/usr/bin/chromium")
if not CHROMIUM.exists():
    pytest.skip(
        "no /usr/bin/chromium (Debian's chromium package; .ci/run installs it)",
        allow_module_level=True,
    )

uvicorn = pytest.importorskip("uvicorn")
sync_api = pytest.importorskip("playwright.sync_api")

from fangcheng.server.app import ServerSettings, create_app  # noqa: E402
from serving import serving  # noqa: E402

ARTIFACTS = Path(__file__).parent / "artifacts"
LAUNCH_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
    "--disable-sync",
]
#: What a player can do now: a tile to discard, a call button, or the hand is over.
ACTIONABLE = ".settlement, .hand.mine .tile.playable, .actions button.act:not([disabled])"
LAPTOP = {"width": 1366, "height": 768}  # the laptop of issue 41
PHONE = {"width": 390, "height": 844}
WAIT_MS = 10_000  # the longest any one step may take before the test fails

pytestmark = pytest.mark.timeout(120)


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    """The app in a thread (`serving`); its base URL."""
    with serving(create_app(ServerSettings(bot_ms=0, between_ms=60_000, seed=7))) as url:
        yield url


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """Debian's Chromium, headless (each browser test module takes this fixture)."""
    assert CHROMIUM.exists()
    ARTIFACTS.mkdir(exist_ok=True)
    with sync_api.sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=LAUNCH_ARGS)
        yield b
        b.close()


#: The contexts the current test opened (`_page`), closed at its end (`_closed_pages`).
_CONTEXTS: list[Any] = []


@pytest.fixture(autouse=True)
def _closed_pages() -> Iterator[None]:
    """Close every page a test opened when it ends: a page left open plays on (its
    table's bots, its animations, its sounds) and loaded the machine for every later
    test of the module (a module's last tests ran beside twenty live pages)."""
    yield
    while _CONTEXTS:
        with contextlib.suppress(Exception):  # (a browser already gone)
            _CONTEXTS.pop().close()


def _page(browser: Any, **kw: Any) -> Any:
    context = browser.new_context(viewport=LAPTOP, **kw)
    _CONTEXTS.append(context)
    page = context.new_page()
    page.set_default_timeout(WAIT_MS)
    # a page load fetches the whole client (a cold cache: a few dozen modules and tiles),
    # which a loaded 2-core machine has been seen to take past WAIT_MS over
    page.set_default_navigation_timeout(3 * WAIT_MS)
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    # what the Content-Security-Policy refused (a console error, no page error)
    page.on(
        "console",
        lambda m: errors.append(m.text) if "Content Security Policy" in m.text else None,
    )
    page.errors = errors
    return page


def _login(page: Any, url: str, name: str) -> None:
    page.goto(url)
    page.fill("input[name=name]", name)
    page.click("form.login button")
    page.wait_for_selector(".practice")


def _hand(page: Any) -> list[str]:
    """The tiles of my hand as shown, in order."""
    tiles: list[str] = page.eval_on_selector_all(
        ".hand.mine .tile[data-tile]", "els => els.map(e => e.dataset.tile)"
    )
    return tiles


def _my_river(page: Any) -> list[str]:
    tiles: list[str] = page.eval_on_selector_all(
        ".river-wrap.bottom .tile[data-tile]", "els => els.map(e => e.dataset.tile)"
    )
    return tiles


def _play_one(page: Any) -> bool:
    """Make one decision by clicking, as a plain player would; False once the hand is over."""
    page.wait_for_selector(ACTIONABLE, state="attached")
    if page.locator(".settlement").count():
        return False
    for choice in (".act-hu", ".act-que", ".act-piao", ".act-pass"):
        button = page.locator(f".actions {choice}:not([disabled])")
        if button.count():
            button.first.click()
            return True
    tiles = page.locator(".hand.mine .tile.playable")
    if tiles.count():
        tiles.last.click()  # the drawn tile, or the last of the hand
        return True
    page.locator(".actions button.act:not([disabled])").first.click()
    return True


def test_a_whole_hand_at_a_practice_table_by_clicking(server: str, browser: Any) -> None:
    ARTIFACTS.mkdir(exist_ok=True)
    page = _page(browser)
    _login(page, server, "Ann")
    page.click(".practice-sichuan")
    page.wait_for_selector(".hand.mine .tile")
    tile = page.locator(".hand.mine .tile[data-tile]").first
    name = tile.get_attribute("title") or ""  # the hover: Chinese and English
    assert re.search(r"[\u4e00-\u9fff]", name), name
    assert re.search(r"of (characters|dots|bamboo)|wind|dragon", name), name
    decisions = 0
    while _play_one(page):
        decisions += 1
        if decisions == 8:
            page.wait_for_selector(ACTIONABLE, state="attached")
            page.screenshot(path=ARTIFACTS / "table.png")
            page.set_viewport_size(PHONE)
            page.screenshot(path=ARTIFACTS / "table-phone.png", full_page=True)
            page.set_viewport_size(LAPTOP)
        assert decisions < 400, "the hand never ended"
    settlement = page.locator(".settlement")
    assert settlement.locator("table.items tr.total").count() == 1
    assert "本盘 this hand" in settlement.inner_text()
    page.screenshot(path=ARTIFACTS / "settlement.png", full_page=True)
    page.set_viewport_size(PHONE)
    page.screenshot(path=ARTIFACTS / "settlement-phone.png", full_page=True)
    page.set_viewport_size(LAPTOP)
    # the hand is listed among mine and replays to its end
    page.goto(server + "#/hands")
    page.click("a.replay")
    page.wait_for_selector(".replay-page .controls")
    page.click(".controls .last")
    page.wait_for_selector(".replay-page .settlement")
    # each seat by its name, not its wind only (issue 41): on the board and in the settlement
    names = page.locator(".replay-page .board .plate .name").all_inner_texts()
    assert names[0] == "Ann (你)" and all(n.endswith(" bot") for n in names[1:]), names
    head = page.locator(".replay-page .settlement table.items tr").first.inner_text()
    assert head.count(" bot") == 3, head
    page.screenshot(path=ARTIFACTS / "replay.png", full_page=True)
    assert page.errors == []


@pytest.fixture(scope="module")
def experts() -> Iterator[tuple[str, Any]]:
    """A server whose experts play at a small budget: its base URL and its hub."""
    app = create_app(ServerSettings(bot_ms=0, between_ms=60_000, seed=8, expert_playouts=4))
    with serving(app) as url:
        yield url, app.state.hub


def test_the_hint_button_at_an_expert_practice_table(
    experts: tuple[str, Any], browser: Any
) -> None:
    """Practice against the expert: 提示 shows the suggested action, its tile framed, and
    why; asked once per decision; the hand is played to its settlement."""
    url, hub = experts
    page = _page(browser)
    _login(page, url, "Ann")
    page.select_option(".practice-bot", "expert")
    page.click(".practice-baicheng")
    page.wait_for_selector(".hand.mine .tile")
    table = next(iter(hub.tables.values()))
    assert [s.name for s in table.seats[1:]] == ["expert bot"] * 3
    hinted = False
    while True:
        page.wait_for_selector(ACTIONABLE, state="attached")
        if page.locator(".settlement").count():
            break
        if not hinted and page.locator(".hand.mine .tile.playable").count():
            page.click(".actions .advise")
            advice = page.wait_for_selector(".actions .advice")
            action = advice.inner_text()
            assert "提示 hint" in action and ("向听 (shanten)" in action or "听 ready" in action)
            assert page.locator(".actions .advise").is_disabled()  # one hint a decision
            tile = page.locator(".hand.mine .tile.advised")
            assert tile.count() == 1
            page.screenshot(path=ARTIFACTS / "hint.png")
            tile.click()  # take the hint
            hinted = True
            continue
        _play_one(page)
    assert hinted and page.errors == []


def test_two_browsers_at_one_private_table_see_only_their_own_hands(
    server: str, browser: Any
) -> None:
    owner, friend = _page(browser), _page(browser)
    _login(owner, server, "Ann")
    _login(friend, server, "Bo")
    owner.select_option("form.open select.rules", "baishan")
    owner.click("form.open button.primary")
    code = owner.locator(".waiting .code").inner_text().strip()
    assert len(code) == 6
    friend.fill("form.join input[name=code]", code)
    friend.click("form.join button.primary")
    friend.wait_for_selector(".waiting")
    owner.wait_for_selector(".waiting li:has-text('Bo')")
    owner.click(".waiting button.start-table")
    seats = []
    for page in (owner, friend):
        page.wait_for_selector(".hand.mine .tile[data-tile]")
        bottom = page.locator(".seat.bottom").get_attribute("data-seat")
        seats.append(int(bottom or -1))
        assert len(_hand(page)) >= 13
    assert seats[0] != seats[1]
    for page, other in ((owner, seats[1]), (friend, seats[0])):
        # the other person's seat: face-down tiles only, as many as they hold
        other_hand = page.locator(f".seat[data-seat='{other}'] .hand .tile")
        assert other_hand.count() >= 13
        assert page.locator(f".seat[data-seat='{other}'] .hand .tile[data-tile]").count() == 0
    # a spectator, from the lobby: every hand face down (D87)
    watcher = _page(browser)
    _login(watcher, server, "Wu")
    watcher.locator(f".lobby li:has-text('{code}') button.link").click()
    watcher.wait_for_selector(".board .seat .hand .tile")
    assert watcher.locator(".board .hand .tile[data-tile]").count() == 0
    ARTIFACTS.mkdir(exist_ok=True)
    friend.screenshot(path=ARTIFACTS / "private-table.png")
    assert owner.errors == friend.errors == watcher.errors == []


def test_a_reload_mid_hand_restores_the_seat_and_play_goes_on(server: str, browser: Any) -> None:
    page = _page(browser)
    _login(page, server, "Cy")
    page.click(".practice-baishan")
    page.wait_for_selector(".hand.mine .tile")
    for _ in range(3):
        assert _play_one(page), "the hand ended before the reload"
    # reload on my turn to discard: nothing moves until I do (a claim window would close)
    while not page.locator(".hand.mine .tile.playable").count():
        assert _play_one(page), "the hand ended before the reload"
        page.wait_for_selector(ACTIONABLE, state="attached")
    river = _my_river(page)
    url = page.url
    page.reload()  # the seat goes into 托管 while away (D85): play may move on meanwhile
    page.wait_for_selector(".hand.mine .tile[data-tile]")
    assert page.url == url
    page.wait_for_function(
        "n => document.querySelectorAll('.river-wrap.bottom .tile[data-tile]').length >= n",
        arg=len(river),
    )
    # the seat's view is back from the hand's first event: the deal, my discards, my hand
    assert page.locator(".log li").first.inner_text().startswith("第1盘")
    assert _my_river(page)[: len(river)] == river
    held = len(_hand(page)) + 3 * page.locator(".seat.bottom .meld").count()
    assert held in (13, 14)
    assert page.locator(".conn.on").count() == 1
    # and play goes on: I make a discard
    before = len(_my_river(page))
    while not page.locator(".settlement").count() and len(_my_river(page)) <= before:
        if not _play_one(page):
            break
    assert page.locator(".settlement").count() or len(_my_river(page)) > before
    assert page.errors == []


def test_a_hint_asked_at_a_claim_window_shows_and_the_window_stays_open(
    experts: tuple[str, Any], browser: Any
) -> None:
    """A discard I may 碰 or 胡 at a practice table: 提示 in the claim window shows the
    suggestion, and the window stays open for my answer (its 60 s, asked of the practice
    table, leave the hint no race to run)."""
    url, _ = experts
    page = _page(browser)

    def longer_window(route: Any) -> None:
        body = {**json.loads(route.request.post_data or "{}"), "options": {"claim_window": 60}}
        route.continue_(post_data=json.dumps(body))

    page.route("**/api/practice", longer_window)
    _login(page, url, "Hw")
    page.click(".practice-baishan")
    page.wait_for_selector(".hand.mine .tile")
    offer = ".actions .countdown.window ~ .buttons :is(.act-peng, .act-hu):not([disabled])"
    for _ in range(2000):
        page.wait_for_selector(ACTIONABLE, state="attached")
        if page.locator(offer).count():
            break
        if page.locator(".settlement").count():  # no such discard this hand: the next
            page.click(".settlement button.next")
            page.wait_for_selector(".settlement", state="detached")
            continue
        _play_one(page)
    else:
        pytest.fail("no discard to 碰 or 胡 was offered")
    offered = page.locator(offer).first.get_attribute("data-action")
    page.click(".actions .advise")
    advice = page.wait_for_selector(".actions .advice")
    assert "提示 hint" in advice.inner_text()
    # still the same window: its countdown, the offer and the pass open to me
    assert page.locator(".actions .countdown.window").count() == 1
    assert page.locator(f".actions button.act[data-action='{offered}']:not([disabled])").count()
    assert page.locator(".actions .act-pass:not([disabled])").count() == 1
    assert page.locator(".actions .hint-late").count() == 0
    assert page.locator(".actions .advise").is_disabled()  # one hint a decision
    page.screenshot(path=ARTIFACTS / "hint-claim.png")
    page.click(".actions .act-pass")
    assert page.errors == []
