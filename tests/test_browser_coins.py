"""Issue 18's "done when" in a real browser (Chromium by Playwright, the app under uvicorn,
house bots at pace 0, a quick match's wait of 0 unless people must meet):

- a newcomer signs up (the 2,000-coin grant), plays a hand in 自由场 by clicking and one
  in 初级场 and in 中级场 under 托管, leaving between hands (no 逃跑), and sees the
  profile and the leaderboard change;
- 防作弊场 (D83): two accounts of one network address are never seated together (the
  address comes through uvicorn's proxy headers, as behind a proxy: loopback itself is
  not told apart); four people at one table, people only, every name hidden behind a
  rank title, no spectator (by the join form or the table's link), a hand under 托管;
- two people at one 初级场 table with two house bots, at stake 100 after an operator's
  grant (``fangcheng ledger grant``): one leaves mid-hand, is asked first (a "no" changes
  nothing), confirms, and the 逃跑 settlement (§3.9 item 3) lifts the other's title;
- at the end ``fangcheng ledger check`` is clean.

Every settlement the browser shows is checked against RULES.md and the ledger: the fee
is floor(net × the room's rate) of a positive net (§3.12), the total the items less the
fee, the new balance the old one plus the total, the journal's lines per seat those
totals, the title that of the 积分 (§3.13). Screenshots (laptop and phone width) go to
``tests/artifacts/``.
"""

from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest
import sqlalchemy as sa

import test_browser
from fangcheng.platform import schema
from fangcheng.server.app import ServerSettings, create_app
from fangcheng.server.hub import Hub
from ledgerdb import FAST_HASHER
from serving import serving
from test_browser import ARTIFACTS, PHONE, _page, _play_one

uvicorn = pytest.importorskip("uvicorn")
sync_api = pytest.importorskip("playwright.sync_api")
pytestmark = pytest.mark.timeout(120)

PASSWORD = "correct horse"
#: §3.12: the service fee per room, in percent.
FEE_PERCENT = {"free": 3, "junior": 5, "intermediate": 3, "anti_cheat": 2}
ROOM_CHINESE = {
    "free": "自由场", "junior": "初级场", "intermediate": "中级场", "anti_cheat": "高级防作弊场"
}  # fmt: skip
#: §3.13: the rank titles by their least 积分, highest first (木骰 below 1,000).
TITLES = (
    (800_000_000, "雀佛"), (400_000_000, "雀神"), (200_000_000, "雀圣"), (80_000_000, "雀魔"),
    (40_000_000, "雀仙"), (20_000_000, "雀妖"), (8_000_000, "雀帝"), (4_000_000, "雀王"),
    (2_000_000, "雀霸"), (800_000, "金雀"), (400_000, "银雀"), (200_000, "雀头"),
    (80_000, "麻雀"), (40_000, "雀仔"), (20_000, "雀蛋"), (8_000, "金骰"), (4_000, "银骰"),
    (2_000, "铜骰"), (1_000, "铁骰"),
)  # fmt: skip
ALL_TITLES = "|".join(["木骰", *(t for _, t in TITLES)])
#: Settling a hand under 托管 at bot pace 0 takes a few hundred frames: a loaded machine
#: may need this long.
HAND_MS = 40_000


def stake_of(balance: int) -> int:
    """§3.11: the 底注 of a table whose smallest balance is ``balance`` (≥ 100)."""
    return 10 ** min(len(str(balance)) - 3, 6)


def title_of(points: int) -> str:
    return next((title for least, title in TITLES if points >= least), "木骰")


@dataclass
class Served:
    url: str
    db: str  # the database URL
    hub: Hub
    ledger: sa.Engine


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    db = f"sqlite:///{tmp_path_factory.mktemp('coins') / 'coins.db'}"
    settings = ServerSettings(
        db=db, bot_ms=0, between_ms=60_000, seed=7, match_wait_ms=0, hasher=FAST_HASHER
    )
    app = create_app(settings)
    with serving(app) as url:
        engine = sa.create_engine(db)
        yield Served(url, db, app.state.hub, engine)
        engine.dispose()


browser = test_browser.browser  # Debian's Chromium, one a module
_closed_pages = test_browser._closed_pages  # each test's pages closed at its end


# --- what the pages say ---------------------------------------------------------------


def _sign_up(page: Any, url: str, name: str) -> None:
    page.goto(url)
    page.fill("input[name=account-name]", name)
    page.fill("input[name=password]", PASSWORD)
    page.click("form.account .sign-up")
    page.wait_for_selector(".account-bar .balance")


def _match(page: Any, room: str) -> str:
    """Quick match from the start page; the table's code."""
    page.click(f".match-{room}")
    page.wait_for_url(re.compile(r"#/t/[A-Z0-9]+$"))
    return str(page.url.rsplit("/", 1)[1])


def _auto(page: Any) -> None:
    """托管: the efficient bot plays the seat (D84)."""
    page.click(".actions button.auto:not(.on)")


def _settled(page: Any) -> None:
    page.locator(".settlement .coins .balance").wait_for(timeout=HAND_MS)


_READ_SETTLEMENT = """() => {
  const s = document.querySelector('.settlement');
  const num = (t) => (t.trim() === '·' ? 0 : Number(t.trim()));
  const text = (sel) => { const el = s.querySelector(sel); return el ? el.innerText : null; };
  const rows = [...s.querySelectorAll('table.items tr')];
  return {
    heads: [...rows[0].querySelectorAll('th.num')].map((th) => th.innerText.trim()),
    rows: rows.slice(1).map((tr) => ({
      kind: tr.className, label: tr.cells[0].innerText,
      values: [...tr.querySelectorAll('td.num')].map((td) => num(td.innerText)),
    })),
    title: text('h2'), room: text('.coins .room'), stake: text('.coins .stake'),
    fee: text('.coins .fee'), total: text('.coins .coin-total'), balance: text('.coins .balance'),
    hand: text('.coins .hand-id'),
  };
}"""


@dataclass
class Shown:
    """A coin hand's settlement as the page showed it, checked."""

    hand: str
    seat: int  # mine
    items: dict[str, list[int]]  # by label
    total: list[int]  # the coins that moved, per seat
    fees: list[int]  # the fees booked, per seat
    capped: bool  # a balance capped the hand (D44): what moved is not the items' total
    balance: int
    heads: list[str]


def _settlement(page: Any, served: Served, room: str, before: int, stake: int) -> Shown:
    """Read the settlement and check it against RULES.md and the hand's journal: the fee
    is floor(net × rate) on a positive net (§3.12), the total the items less the fee, the
    balance ``before`` plus my total; the journal (room, 底注, lines per seat) agrees. When
    a balance capped the hand (D44) a "coins paid" row shows what the journal moved: the
    fees are then taken on what was really won."""
    s = page.evaluate(_READ_SETTLEMENT)
    me = s["heads"].index("你 You")
    items = [r for r in s["rows"] if r["kind"] not in ("fee", "total", "standing", "paid")]
    net = [sum(r["values"][k] for r in items) for k in range(4)]
    rate = FEE_PERCENT[room]
    fees = [n * rate // 100 if n > 0 else 0 for n in net]
    fee_rows = [r["values"] for r in s["rows"] if r["kind"] == "fee"]
    assert fee_rows == ([[-f for f in fees]] if any(fees) else []), (fee_rows, net)
    total = [n - f for n, f in zip(net, fees, strict=True)]
    assert [r["values"] for r in s["rows"] if r["kind"] == "total"] == [total]
    assert sum(total) == -sum(fees)  # the fees leave the game (§3.12)
    paid = [r["values"] for r in s["rows"] if r["kind"] == "paid"]
    assert s["room"] == f"{ROOM_CHINESE[room]} · 台费 fee {rate}%"
    assert int(s["stake"]) == stake
    booked, booked_fees, base, booked_room = _journal(served, s["hand"])
    assert booked_room == room and base * (2 if room == "anti_cheat" else 1) == stake
    if paid:
        assert booked == paid[0] != total
        won = [t + f for t, f in zip(booked, booked_fees, strict=True)]
        assert booked_fees == [n * rate // 100 if n > 0 else 0 for n in won]
    else:
        assert booked == total and booked_fees == fees
    assert int(s["fee"]) == booked_fees[me] and int(s["total"]) == booked[me]
    assert int(s["balance"]) == before + booked[me]
    return Shown(
        hand=s["hand"],
        seat=me,
        items={r["label"]: r["values"] for r in items},
        total=booked,
        fees=booked_fees,
        capped=bool(paid),
        balance=int(s["balance"]),
        heads=s["heads"],
    )


def _journal(served: Served, hand: str) -> tuple[list[int], list[int], int, str]:
    """The ledger's view of a hand: each seat's total and fee, the 底注, the room."""
    h, lines = schema.coin_hands, schema.journal_lines
    with served.ledger.connect() as conn:
        row = conn.execute(sa.select(h.c).where(h.c.hand_id == hand)).one()
        of_hand = lines.c.journal_id == row.journal_id
        booked = conn.execute(sa.select(lines.c.seat, lines.c.amount, lines.c.memo).where(of_hand))
    total, fees = [0] * 4, [0] * 4
    for seat, amount, memo in booked:
        if seat is not None:
            total[seat] += amount
            if memo == "服务费":
                fees[seat] -= amount
    return total, fees, row.base, row.room


def _profile(page: Any, url: str) -> dict[str, Any]:
    page.goto(url + "#/profile")
    page.wait_for_selector(".profile .title")
    page.wait_for_selector(".profile .recent, .profile p.note")
    facts = ("balance", "title", "points", "hands-played")
    text = {k: page.inner_text(f".profile .{k}") for k in facts}
    recent = page.evaluate(
        "() => [...document.querySelectorAll('.profile table.recent tr')].slice(1)"
        ".map((tr) => [...tr.cells].map((td) => td.innerText))"
    )
    return {**text, "recent": recent}


def _leaders(page: Any, url: str) -> dict[str, tuple[int, str, int, int]]:
    """The leaderboard page: name → (place, title, 积分, hands); its rows in order of 积分,
    each title that of its 积分 (§3.13)."""
    page.goto(url + "#/leaders")
    page.wait_for_selector(".leaders table tr.leader")
    rows = page.evaluate(
        "() => [...document.querySelectorAll('.leaders tr.leader')].map((tr) => "
        "['place', 'name', 'title', 'points', 'hands']"
        ".map((k) => tr.querySelector('.' + k).innerText))"
    )
    points = [int(r[3]) for r in rows]
    assert points == sorted(points, reverse=True)
    assert [int(r[0]) for r in rows] == list(range(1, len(rows) + 1))
    assert all(r[2] == title_of(int(r[3])) for r in rows), rows
    return {r[1]: (int(r[0]), r[2], int(r[3]), int(r[4])) for r in rows}


def _leave_between_hands(page: Any) -> None:
    """The settlement's leave: between hands, no 逃跑; back on the start page."""
    page.click(".settlement button.leave")
    page.wait_for_selector(".rooms .match-free")


# --- the tests ------------------------------------------------------------------------


def test_a_newcomer_plays_a_hand_in_each_normal_room(server: Served, browser: Any) -> None:
    page = _page(browser)
    _sign_up(page, server.url, "Ann")
    assert page.inner_text(".account-bar .balance") == "2000"
    assert "木骰" in page.inner_text(".account-bar")
    page.screenshot(path=ARTIFACTS / "coins-start.png", full_page=True)
    page.set_viewport_size(PHONE)
    page.screenshot(path=ARTIFACTS / "coins-start-phone.png", full_page=True)
    assert _leaders(page, server.url)["Ann"][1:] == ("木骰", 0, 0)
    page.goto(server.url)
    balance, shown = 2000, []
    for room in ("free", "junior", "intermediate"):
        page.wait_for_selector(f".rooms .match-{room}")
        _match(page, room)
        page.wait_for_selector(".hand.mine .tile, .actions .act-piao")
        if room == "free":  # by clicking; each 漂 says what it bets (issue 41)
            bet = page.locator(".actions button[data-action='piao 5']")
            assert bet.inner_text().endswith("5 × 10 = 50 金币 coins")
            decisions = 0
            while _play_one(page):
                decisions += 1
                assert decisions < 400, "the hand never ended"
        elif room == "junior":  # a reload drops the connection: 托管, never 逃跑 (D85)
            page.wait_for_selector(".topbar:has-text('初级场 · 底注 10 · 台费 5%')")
            page.screenshot(path=ARTIFACTS / "coins-table-phone.png")
            page.reload()
            page.wait_for_selector(".settlement .coins .balance, .actions button.auto.on")
        else:
            _auto(page)
        _settled(page)
        hand = _settlement(page, server, room, balance, stake=10)  # 2,000 coins: 底注 10
        assert "逃跑 escape" not in hand.items
        shown.append(hand)
        balance = hand.balance
        if room == "free":
            page.screenshot(path=ARTIFACTS / "coins-settlement-phone.png", full_page=True)
        _leave_between_hands(page)
    points = sum(s.total[s.seat] for s in shown)
    profile = _profile(page, server.url)
    assert profile["balance"] == str(balance) and profile["hands-played"] == "3"
    assert profile["points"] == str(points) and profile["title"] == title_of(points)
    assert [r[:3] for r in profile["recent"]] == [
        [s.hand, ROOM_CHINESE[room], str(s.total[s.seat])]
        for s, room in reversed(list(zip(shown, ("free", "junior", "intermediate"), strict=True)))
    ]
    page.screenshot(path=ARTIFACTS / "coins-profile-phone.png", full_page=True)
    assert page.locator(".profile table.recent a.replay").count() == 3  # each replays
    page.locator(".profile table.recent a.replay").first.click()
    page.wait_for_selector(".replay-page .controls")
    assert _leaders(page, server.url)["Ann"][1:] == (title_of(points), points, 3)
    page.screenshot(path=ARTIFACTS / "coins-leaders-phone.png", full_page=True)
    assert page.errors == []
    page.context.close()


def test_anti_cheat_room_people_only_titles_for_names_apart_by_address_no_spectators(
    server: Served, browser: Any
) -> None:
    def person(name: str, address: str) -> Any:
        page = _page(browser, extra_http_headers={"X-Forwarded-For": address})
        _sign_up(page, server.url, name)
        return page

    # two accounts of one address: never at one table (D83)
    fay, gus = person("Fay", "10.0.0.9"), person("Gus", "10.0.0.9")
    assert _match(fay, "anti_cheat") != _match(gus, "anti_cheat")
    for page in (fay, gus):
        page.click(".waiting button.leave")  # before the match: the seat empties
        page.wait_for_selector(".rooms .match-anti_cheat")
    gus.context.close()

    names = ["Aoife", "Bryn", "Ciaran", "Dorcas"]
    people = [person(n, f"10.0.0.{i}") for i, n in enumerate(names, 1)]
    codes = {_match(page, "anti_cheat") for page in people}
    assert len(codes) == 1, codes  # four people of four addresses: one table
    code = codes.pop()
    for page in people:
        page.wait_for_selector(".actions button.auto")  # the hand is dealt: no bots waited for
    people[0].wait_for_selector(".topbar:has-text('高级防作弊场 · 底注 20 · 台费 2%')")
    people[0].screenshot(path=ARTIFACTS / "coins-anti-cheat-table.png")

    # no spectators: neither by the join form nor by the table's link
    fay.fill("form.join input[name=code]", code)
    fay.check("form.join input[name=spectate]")
    fay.click("form.join button")
    fay.wait_for_selector("p.error:has-text('spectators')")
    fay.goto(server.url + f"#/t/{code}")
    fay.wait_for_selector("text=不能入座 Cannot sit at this table")

    for page in people:
        _auto(page)
    shown = []
    for page in people:
        _settled(page)
        shown.append(_settlement(page, server, "anti_cheat", 2000, stake=2 * 10))  # §3.7
    people[1].screenshot(path=ARTIFACTS / "coins-anti-cheat-settlement.png", full_page=True)
    assert sorted(s.seat for s in shown) == [0, 1, 2, 3]
    assert all(s.total == shown[0].total for s in shown)  # one hand, seen alike
    for page, mine, s in zip(people, names, shown, strict=True):
        text = page.inner_text("body")
        assert not [n for n in names if n in text], (mine, text)  # names hidden (D83)
        others = [head for k, head in enumerate(s.heads) if k != s.seat]
        assert all(re.fullmatch(rf"\S ({ALL_TITLES})", head) for head in others), others

    # hand 2: the poorest takes the seat back (托管 ends only so: D84, issue 41), asks for
    # the hand and escapes at 漂. 50 × the doubled
    # 底注 to each of three may be more than its balance at hand start: then each payment
    # is scaled by balance ÷ liability and floored (§3.11 item 3). No bot takes the seat:
    # the table closes after the hand (§8.4).
    balances = [x.balance for x in shown]
    runner = min(range(4), key=lambda i: balances[i])
    cost = 50 * 2 * stake_of(min(balances))
    each = cost if balances[runner] >= 3 * cost else cost * balances[runner] // (3 * cost)
    people[runner].on("dialog", lambda dialog: dialog.accept())
    people[runner].click(".settlement button.take-back")
    people[runner].wait_for_selector(".settlement button.take-back", state="detached")
    people[runner].click(".settlement button.next")
    people[runner].click(".actions button.escape")  # the others are in 托管: dealt at once
    for i, page in enumerate(people):
        page.wait_for_selector(".settlement h2:has-text('第2盘 Hand 2 · 逃跑')")
        again = _settlement(
            page, server, "anti_cheat", balances[i], stake=2 * stake_of(min(balances))
        )
        assert again.capped == (each < cost)
        assert page.locator(".settlement .win-box").count() == 0  # at 漂: none of hand 1's
        assert again.total[shown[runner].seat] == -3 * each
        if i != runner:
            assert again.total[shown[i].seat] == each - each * 2 // 100
            page.wait_for_selector(".settlement .match-again")  # the match is over
            assert page.locator(".settlement button.next").count() == 0
    people[runner].screenshot(path=ARTIFACTS / "coins-anti-cheat-escape.png", full_page=True)
    for page in [*people, fay]:
        assert page.errors == []
        page.context.close()


def test_two_people_at_one_table_one_escapes_the_other_rises_a_title(
    server: Served, browser: Any
) -> None:
    dan, eve = _page(browser), _page(browser)
    for page, name in ((dan, "Dan"), (eve, "Eve")):
        _sign_up(page, server.url, name)
        grant = subprocess.run(
            [sys.executable, "-m", "fangcheng", "ledger", "grant", name, "20000",
             "--reason", "a browser test at 底注 100", "--db", server.db],
            capture_output=True, text=True, check=False,
        )  # fmt: skip
        assert grant.returncode == 0, grant.stderr
        page.reload()
        page.wait_for_selector(".account-bar .balance:text-is('22000')")
    before = _leaders(dan, server.url)
    assert before["Dan"][1:] == before["Eve"][1:] == ("木骰", 0, 0)
    dan.goto(server.url)
    eve.goto(server.url)
    eve.wait_for_selector(".rooms .match-junior")
    dan.wait_for_selector(".rooms .match-junior")
    server.hub.settings.match_wait_ms = 4000  # long enough for the two to meet
    try:
        code = _match(dan, "junior")
        assert _match(eve, "junior") == code  # one stake tier (22,000: 底注 100), one table
    finally:
        server.hub.settings.match_wait_ms = 0
    dan.wait_for_selector(".waiting .seats:has-text('Eve · 木骰')")
    eve.wait_for_selector(".waiting .seats:has-text('Dan · 木骰')")
    for page in (dan, eve):  # after the wait two house bots sit and the hand is dealt
        page.wait_for_selector(".actions .act-piao", timeout=15_000)
        page.wait_for_selector(".topbar:has-text('初级场 · 底注 100 · 台费 5%')")

    asked: list[str] = []

    def answer(dialog: Any) -> None:
        asked.append(dialog.message)
        if len(asked) == 1:
            dialog.dismiss()  # not now: nothing happens
        else:
            dialog.accept()

    eve.on("dialog", answer)
    with eve.expect_event("dialog"):
        eve.click(".actions button.escape")
    assert "逃跑" in asked[0] and "5000 coins" in asked[0]  # 50 × 底注 100 (§3.9)
    assert eve.locator(".settlement").count() == 0 and dan.locator(".settlement").count() == 0
    with eve.expect_event("dialog"):
        eve.click(".actions button.escape")
    _settled(eve)
    escaped = _settlement(eve, server, "junior", 22_000, stake=100)
    assert "逃跑" in eve.inner_text(".settlement h2")
    assert escaped.items["逃跑 escape"] == [
        -15_000 if k == escaped.seat else 5000 for k in range(4)
    ]  # each of three (§3.9 item 3)
    assert escaped.balance == 7000
    assert eve.inner_text(".actions") == "你已离桌 you left the table (逃跑)"
    eve.screenshot(path=ARTIFACTS / "coins-escape.png", full_page=True)
    _settled(dan)
    stayed = _settlement(dan, server, "junior", 22_000, stake=100)
    assert stayed.total[stayed.seat] == 5000 - 250 and stayed.hand == escaped.hand
    assert title_of(4750) == "银骰"
    dan.wait_for_selector(".plate:has-text('Dan · 银骰')")  # the seat's title moved at once
    dan.set_viewport_size(PHONE)
    dan.screenshot(path=ARTIFACTS / "coins-escape-other-phone.png", full_page=True)
    _leave_between_hands(dan)
    profile = _profile(dan, server.url)
    assert (profile["title"], profile["points"], profile["balance"]) == ("银骰", "4750", "26750")
    after = _leaders(dan, server.url)
    assert after["Dan"][1:] == ("银骰", 4750, 1) and after["Eve"][1:] == ("木骰", -15_000, 1)
    assert after["Dan"][0] < after["Eve"][0]
    eve_profile = _profile(eve, server.url)
    assert eve_profile["balance"] == "7000"
    assert eve_profile["recent"][0][1:3] == ["初级场", "-15000"]
    assert dan.errors == [] and eve.errors == []
    for page in (dan, eve):
        page.context.close()


def test_the_ledger_check_is_clean_after_the_browser_hands(server: Served) -> None:
    check = subprocess.run(
        [sys.executable, "-m", "fangcheng", "ledger", "check", "--db", server.db],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert check.returncode == 0, check.stderr
    with server.ledger.connect() as conn:
        hands = conn.execute(sa.select(sa.func.count()).select_from(schema.coin_hands)).scalar()
    assert f"{hands} hands" in check.stdout, check.stdout
