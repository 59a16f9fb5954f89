"""``fangcheng play``: hands driven through the Textual app, read off an 80×24 screen."""

from __future__ import annotations

import asyncio
import json
import random
import re

import pytest
from textual.widgets import Static

from fangcheng.engine.record import replay
from fangcheng.players.bots import EfficientBot
from fangcheng.protocol import events as ev
from fangcheng.protocol.actions import Act, Action
from fangcheng.tiles.notation import tile_name
from fangcheng.ui.terminal.app import PlayApp
from fangcheng.ui.terminal.game import Game, InputError, main, suggest
from fangcheng.ui.terminal.view import (
    MUST_WIN,
    PASSED_WIN,
    board,
    event_line,
    settlement,
    standings,
)

GLYPHS = re.compile("[\U0001f000-\U0001f02f]")


def screen(app: PlayApp) -> list[str]:
    """The terminal's rows as text (Textual renders them for the pilot's 80×24 screen)."""
    return [strip.text for strip in app.screen._compositor.render_strips()]


def unwrapped(rows: list[str]) -> str:
    return "".join(row.rstrip() for row in rows)


async def enter(pilot, text: str) -> None:
    await pilot.press(*["space" if c == " " else c for c in text], "enter")
    await pilot.pause()


def what_to_type(game: Game, action: Action, turn: int) -> str:
    """What to type for ``action``, alternately: a discard's position or its tile, another
    action's key or its text form (``ting 7s``)."""
    obs = game.observe()
    if action.kind is Act.DISCARD and action.tile is not None:
        if turn % 2:
            return str(game.order(obs).index(action.tile) + 1)
        return tile_name(action.tile)
    if turn % 2:
        return str(action)
    return next(k.key for k in game.keys(obs) if k.action == action)


def drive_hand(game: Game, *, ascii: bool = False) -> tuple[list[str], list[list[str]]]:
    """Play one hand at the keyboard with the efficient bot's choices; return the
    screen at the end and the screens seen at each decision."""
    me = EfficientBot(random.Random(0))
    seen: list[list[str]] = []

    async def run() -> list[str]:
        app = PlayApp(game, ascii=ascii)
        async with app.run_test(size=(80, 24)) as pilot:
            await pilot.pause()
            turn = 0
            while not game.round.over:
                rows = screen(app)
                seen.append(rows)
                obs = game.observe()
                names = " ".join(tile_name(t) for t in game.order(obs))
                assert any(" ".join(row.split()) == names for row in rows), (names, rows)
                action = me.act(obs)
                key = what_to_type(game, action, turn)
                if action.kind is not Act.DISCARD and key != str(action):
                    assert f" {key} " in unwrapped(rows), (key, rows)
                before = len(game.round.decisions)
                await enter(pilot, key)
                assert game.round.decisions[before] == {"seat": game.seat, "action": str(action)}
                turn += 1
            return screen(app)

    return asyncio.run(run()), seen


def test_a_hand_played_through_the_screen(tmp_path):
    game = Game("baishan", seat=0, bots="efficient", seed=16, quan=1, records=tmp_path)
    end, seen = drive_hand(game)
    kinds = {d["action"].split()[0] for d in game.round.decisions if d["seat"] == 0}
    assert {"chi", "peng", "ting", "hu"} <= kinds  # the keys c, p, t5m and h were typed
    assert all("hint  suggest" in unwrapped(rows) for rows in seen)  # the keys fit in 80×24
    assert any("your call" in row for rows in seen for row in rows)
    text = "\n".join(end)
    assert "you win on" in text and "pays" in text and "running total" in text
    fans = game.round.win_scores[0].reading.fans
    assert all(a.fan.name in text and a.fan.en in text for a in fans)
    path = game.record
    assert path is not None and str(path) in unwrapped(end)
    assert replay(json.loads(path.read_text())).divergence is None


def test_mistyped_input_explains_in_one_line_and_keeps_the_game(tmp_path):
    game = Game("baicheng", seat=0, bots="efficient", seed=3, quan=1, records=tmp_path)

    async def run() -> list[tuple[str, str, list[str]]]:
        app = PlayApp(game)
        out = []
        async with app.run_test(size=(80, 24)) as pilot:
            for typed in ("xyz", "99", "t3", "p", "9z", "[bold]", "peng C", "hint"):
                await enter(pilot, typed)
                message = app.query_one("#message", Static).content
                out.append((typed, message.plain, screen(app)))
            assert app.is_running
        return out

    answers = asyncio.run(run())
    assert game.round.decisions == []  # nothing was played
    expected = {
        "xyz": "'xyz' is not an action here",
        "99": "there is no tile at 99: your hand is 1-14",
        "t3": "报听 is not possible",
        "p": "'p' is not an action here",
        "9z": "honours are 1z..7z",
        "[bold]": "'[bold]' is not an action here",
        "peng C": "peng C is not possible now",
    }
    for typed, message, rows in answers:
        if typed == "hint":
            assert re.match(r"hint: \d+ \(discard \w+\) · shanten \d", message), message
        else:
            assert expected[typed] in message, (typed, message)
            assert rows[-2].rstrip() == message  # shown whole, on the line above the prompt
        assert rows[-1].startswith("> ")


def test_ascii_screen_has_no_glyphs(tmp_path):
    game = Game("baicheng", seat=2, bots="efficient", seed=5, quan=1, records=tmp_path)
    end, seen = drive_hand(game, ascii=True)
    for rows in [*seen, end]:
        assert not GLYPHS.search("\n".join(rows))
    assert "running total" in "\n".join(end)


def test_keys_and_the_choices_they_make(tmp_path):
    game = Game("baicheng", seat=0, bots="efficient", seed=3, quan=1, records=tmp_path)
    obs = game.observe()
    order = game.order(obs)
    assert len(order) == 14 and game.choose("1") == Action(Act.DISCARD, order[0])
    assert game.choose(" discard  " + tile_name(order[-1])) == Action(Act.DISCARD, order[-1])
    with pytest.raises(InputError, match="type one of: 1-14 or a tile"):
        game.choose("")
    with pytest.raises(InputError, match="not in your hand"):
        game.choose(next(tile_name(t) for t in range(27) if not obs.hand[t]))
    best = suggest(obs)[0]
    assert game.hint().startswith(f"hint: {order.index(best.tile) + 1} ({best})")


@pytest.mark.parametrize("rules", ["sichuan", "baishan_platform"])
def test_que_and_piao_are_chosen_by_key(tmp_path, rules):
    game = Game(rules, seat=1, bots="random", seed=2, quan=1, records=tmp_path)
    obs = game.observe()
    keys = {k.key: k.action for k in game.keys(obs)}
    if rules == "sichuan":
        assert keys == {s: Action(Act.QUE, value=i) for i, s in enumerate("mps")}
        assert "缺万 void m" in board(game, []).plain
    else:
        assert keys == {str(b): Action(Act.PIAO, value=b) for b in (0, 5, 10)}
        assert "漂 10" in board(game, []).plain
    with pytest.raises(InputError, match="you cannot discard now"):
        game.choose("1")


def test_a_whole_match_ends_in_standings(tmp_path):
    game = Game("baishan", seat=3, bots="efficient", seed=4, quan=1, records=tmp_path)
    rng = random.Random(1)
    while True:
        while not game.round.over:
            game.play(rng.choice(game.observe().legal))
        assert "running total" in settlement(game).plain
        if game.match.over:
            break
        game.next_hand()
    text = standings(game).plain
    assert "match over" in text and f"{len(game.saved)} hands" in text
    assert len(game.saved) == game.hands == len(list(tmp_path.iterdir()))


def test_main_refuses_bad_arguments_and_a_pipe(capsys):
    assert main(["--quan", "0"]) == 2
    assert main(["--records", "x"]) == 2  # pytest's stdout is not a terminal
    assert "needs a terminal" in capsys.readouterr().err


def test_resizing_redraws_for_the_new_size(tmp_path):
    game = Game("baicheng", seat=0, bots="efficient", seed=3, quan=1, records=tmp_path)
    names = " ".join(tile_name(t) for t in game.order(game.observe()))

    async def run() -> list[list[str]]:
        app = PlayApp(game)
        out = []
        async with app.run_test(size=(80, 24)) as pilot:
            for size in ((120, 40), (60, 16), (80, 24)):
                await pilot.resize_terminal(*size)
                await pilot.pause()
                out.append(screen(app))
        return out

    for rows, height in zip(asyncio.run(run()), (40, 16, 24), strict=True):
        assert len(rows) == height
        assert any(" ".join(row.split()) == names for row in rows)  # the hand stays in view
        assert rows[-1].startswith("> ")


@pytest.mark.parametrize("rules", ["baicheng", "baishan", "baishan_platform", "sichuan"])
def test_every_key_chooses_its_action_and_every_page_renders(tmp_path, rules):
    """Random hands: each listed key names its action, positions name the tiles shown,
    and the table and settlement render (without glyphs in ascii)."""
    rng = random.Random(rules)
    game = Game(rules, seat=rng.randrange(4), bots="random", seed=7, quan=1, records=tmp_path)
    for _ in range(3):
        while not game.round.over:
            obs = game.observe()
            assert not GLYPHS.search(board(game, [], ascii=True).plain)
            keys = game.keys(obs)
            assert len({k.key for k in keys}) == len(keys)
            for k in keys:
                assert game.choose(k.key) == k.action
            for position, t in enumerate(game.order(obs), 1):
                if Action(Act.DISCARD, t) in obs.legal:
                    assert game.choose(str(position)) == Action(Act.DISCARD, t)
            game.play(rng.choice(keys).action)
        assert not GLYPHS.search(settlement(game, ascii=True).plain)
        assert "running total" in settlement(game).plain
        if game.match.over:
            break
        game.next_hand()


def test_the_log_shows_no_face_of_another_seats_concealed_kong(tmp_path):
    """The log reads the player's redacted stream: another seat's 暗杠 and its 下雨
    payment are logged without the face (once ``paid: 暗杠 4p`` gave it away, sichuan
    seed 794348 hand 6), until the hand ends."""
    me = EfficientBot(random.Random(0))
    game = Game("sichuan", seat=0, bots="strong", seed=794348, quan=4, records=tmp_path)
    while True:
        while not game.round.over:
            game.play(me.act(game.observe()))
        kongs = [
            e
            for e in game.round.events
            if isinstance(e, ev.Kong) and e.kind == "an_gang" and e.seat != game.seat
        ]
        if kongs:
            break
        assert not game.match.over, "no other seat's 暗杠 in the match"
        game.next_hand()
    events = game.events()
    reveal = next(i for i, e in enumerate(events) if isinstance(e, ev.Reveal))
    lines = [line for e in events[:reveal] if (line := event_line(game, e))]
    assert "paid: 暗杠 (concealed kong)" in lines
    assert any(line.endswith("a 暗杠 (concealed kong)") for line in lines)
    assert not any(
        f"暗杠 {k.tile}" in line or f"kong of {k.tile}" in line for k in kongs for line in lines
    )


def test_d79_a_win_in_the_last_four_tiles_is_offered_with_the_warning(tmp_path, monkeypatch):
    """The prompt says what passing costs before the rule punishes it (D56, D79): it reads
    the observation's ``must_win``, which the engine sets there and only there."""
    game = Game("sichuan", seat=0, bots="random", seed=2, quan=1, records=tmp_path)
    assert MUST_WIN not in board(game, []).plain
    warned = game.observe()._replace(must_win=True)
    monkeypatch.setattr(game, "observe", lambda: warned)
    assert MUST_WIN.strip() in board(game, []).plain


def test_d56_the_settlement_names_a_passed_win_as_the_cause_of_a_flower_pig(tmp_path):
    """A 花猪 for passing a win in the last four tiles holds no 缺 tile, so the settlement
    says why (the flag is public once the hand is over)."""
    game = Game("sichuan", seat=0, bots="random", seed=2, quan=1, records=tmp_path)
    rng = random.Random(1)
    while not game.round.over:
        game.play(rng.choice(game.observe().legal))
    assert PASSED_WIN not in settlement(game).plain
    game.round.flower_pigs.add(2)
    assert f"West {PASSED_WIN}" in settlement(game).plain
