"""A coin table in a real browser (Chromium by Playwright, the app under uvicorn): sign
up, see the 2,000-coin grant, quick-match into 自由场 (house bots fill at once: a match
wait of 0, bot pace 0), play a hand by clicking, see the fee and the new balance in the
settlement, and the title on the profile; and a leave mid-hand that asks first and, once
confirmed, is an escape. Screenshots go to ``tests/artifacts/``."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest

from fangcheng.server.app import ServerSettings, create_app
from ledgerdb import FAST_HASHER
from serving import serving
from test_browser import ARTIFACTS, CHROMIUM, LAUNCH_ARGS, _page, _play_one

uvicorn = pytest.importorskip("uvicorn")
sync_api = pytest.importorskip("playwright.sync_api")
pytestmark = pytest.mark.timeout(120)


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    db = tmp_path_factory.mktemp("coins") / "coins.db"
    settings = ServerSettings(
        db=f"sqlite:///{db}", bot_ms=0, between_ms=60_000, seed=7, match_wait_ms=0,
        hasher=FAST_HASHER,
    )  # fmt: skip
    with serving(create_app(settings)) as url:
        yield url


def test_sign_up_quick_match_a_hand_against_house_bots_and_the_coins(server: str) -> None:
    assert CHROMIUM.exists()
    ARTIFACTS.mkdir(exist_ok=True)
    with sync_api.sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=LAUNCH_ARGS)
        page = _page(browser)
        page.goto(server)
        page.fill("input[name=account-name]", "Ann")
        page.fill("input[name=password]", "correct horse")
        page.click("form.account .sign-up")
        page.wait_for_selector(".account-bar .balance")
        assert page.inner_text(".account-bar .balance") == "2000"
        assert "木骰" in page.inner_text(".account-bar")
        page.screenshot(path=ARTIFACTS / "coins-start.png", full_page=True)
        page.click(".match-free")
        page.wait_for_selector(".hand.mine .tile, .actions .act-piao")
        decisions = 0
        while _play_one(page):
            decisions += 1
            assert decisions < 400, "the hand never ended"
        settlement = page.locator(".settlement")
        settlement.locator(".coins .balance").wait_for()
        fee = int(settlement.locator(".coins .fee").inner_text())
        total = int(settlement.locator(".coins .coin-total").inner_text())
        balance = int(settlement.locator(".coins .balance").inner_text())
        assert balance == 2000 + total and fee >= 0
        page.screenshot(path=ARTIFACTS / "coins-settlement.png", full_page=True)
        page.goto(server + "#/profile")
        page.wait_for_selector(".profile .title")
        assert page.inner_text(".profile .balance") == str(balance)
        assert re.fullmatch(r"\S+", page.inner_text(".profile .title"))
        assert page.inner_text(".profile .hands-played") == "1"
        page.screenshot(path=ARTIFACTS / "coins-profile.png", full_page=True)
        assert page.errors == []
        browser.close()


def test_leaving_mid_hand_asks_first_and_a_confirmed_leave_is_an_escape(server: str) -> None:
    with sync_api.sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=LAUNCH_ARGS)
        page = _page(browser)
        page.goto(server)
        page.fill("input[name=account-name]", "Bob")
        page.fill("input[name=password]", "correct horse")
        page.click("form.account .sign-up")
        page.wait_for_selector(".match-junior")
        page.click(".match-junior")
        page.wait_for_selector(".actions .act-piao")
        dialogs: list[str] = []

        def answer(dialog: Any) -> None:
            dialogs.append(dialog.message)
            if len(dialogs) == 1:
                dialog.dismiss()  # not now: nothing happens
            else:
                dialog.accept()

        page.on("dialog", answer)
        with page.expect_event("dialog"):
            page.click(".actions button.escape")
        assert "逃跑" in dialogs[0] and "500 coins" in dialogs[0]
        assert page.locator(".settlement").count() == 0
        with page.expect_event("dialog"):
            page.click(".actions button.escape")
        page.wait_for_selector(".settlement .coins .balance")
        assert page.inner_text(".settlement .coins .coin-total") == "-1500"
        assert page.inner_text(".settlement .coins .balance") == "500"
        page.screenshot(path=ARTIFACTS / "coins-escape.png", full_page=True)
        assert page.errors == []
        browser.close()
