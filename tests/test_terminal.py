"""``fangcheng play``: hands driven through the Textual app, read off an 80×24 screen."""

from __future__ import annotations

import asyncio
import json
import random
import re
import shlex
import subprocess
import threading
from pathlib import Path

import pytest
from rich.cells import cell_len
from textual.widgets import Static

from fangcheng.ai.advice import advise, measures
from fangcheng.cli import main as cli_main
from fangcheng.engine.record import read_record, replay
from fangcheng.players.bots import EfficientBot, StrongBot
from fangcheng.protocol import events as ev
from fangcheng.protocol.actions import Act, Action
from fangcheng.rules import fans
from fangcheng.scoring.scorer import score
from fangcheng.scoring.situation import read_situation
from fangcheng.tiles.notation import format_tiles, parse_tiles, tile_name
from fangcheng.ui.terminal.app import PlayApp
from fangcheng.ui.terminal.game import Game, InputError, ReplayView, replay_command
from fangcheng.ui.terminal.play import build_parser, glyphs_likely, main
from fangcheng.ui.terminal.view import (
    BACK,
    MUST_WIN,
    PASSED_WIN,
    board,
    capped,
    event_line,
    gloss,
    help_text,
    plain,
    settlement,
    standings,
)

CASES = Path(__file__).parent / "cases"

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
                await app.workers.wait_for_complete()  # the hint's, on its thread
                await pilot.pause()
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
            assert re.match(r"hint: \d+ \(discard \w+\) · 向听 \(shanten\) \d", message), message
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
    rng = random.Random(f"3/1/{len(game.round.decisions)}")  # the game's seed, hand, decision
    best = advise(obs, rng, strong=StrongBot(random.Random(1)))[0]
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
    assert main(["--base", "2000000000"]) == 2  # above the engine's limit: refused, named
    assert "--base 1.." in capsys.readouterr().err
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


# --- issue 16: the table as a new player meets it ----------------------------------------


def run_app(app: PlayApp, typed: list[str], size: tuple[int, int] = (80, 24)) -> list[list[str]]:
    """Type each line into ``app``; the screens after each (the first: before any)."""

    async def run() -> list[list[str]]:
        async with app.run_test(size=size) as pilot:
            await pilot.pause()
            out = [screen(app)]
            for text in typed:
                await enter(pilot, text)
                out.append(screen(app))
            return out

    return asyncio.run(run())


def message(app: PlayApp) -> str:
    return app.query_one("#message", Static).content.plain


def test_one_quan_is_the_default_and_the_first_screen_says_so(tmp_path):
    assert build_parser().parse_args([]).quan == 1
    game = Game("baishan", seat=0, bots="efficient", seed=3, records=tmp_path)
    assert game.match.quan == 1
    app = PlayApp(game)
    first = unwrapped(run_app(app, [])[0])
    assert "1 圈 (round of deals)" in first and "type ascii" in first
    assert "圈 1/1" in first


def test_ascii_can_be_chosen_at_the_table(tmp_path):
    game = Game("baicheng", seat=0, bots="efficient", seed=3, records=tmp_path)
    app = PlayApp(game)
    before, after, again = run_app(app, ["ascii", "ascii"])
    assert GLYPHS.search("\n".join(before)) and not GLYPHS.search("\n".join(after))
    assert GLYPHS.search("\n".join(again)) and game.round.decisions == []


def glyphs_unnamed(text: str) -> list[str]:
    """Runs of glyphs not followed by their notation (face-down tiles aside)."""
    out = []
    for m in re.finditer(f"{GLYPHS.pattern}+", text):
        run = m.group()
        if set(run) == {BACK}:
            continue
        tiles = parse_tiles(run)
        after = text[m.end() :].lstrip(" ")
        names = (format_tiles(tiles, sort=False), format_tiles(tiles))
        if not after.startswith(names):
            out.append(run)
    return out


def without_hand_faces(text: str) -> str:
    """The board without the row of the player's hand glyphs (its notation is the row
    below it)."""
    rows = text.split("\n")
    i = next(i for i, row in enumerate(rows) if row.startswith("hand  1"))
    return "\n".join(rows[: i + 1] + rows[i + 2 :])


@pytest.mark.parametrize("rules", ["baicheng", "baishan", "sichuan"])
def test_every_glyph_has_its_notation_beside_it(tmp_path, rules):
    """Rivers, melds, 吃 choices and the settlement hands: a font without mahjong tiles
    shows boxes, and the notation beside them still tells the tiles apart."""
    rng = random.Random(rules)
    game = Game(rules, seat=0, bots="efficient", seed=2, records=tmp_path)
    chis = 0
    while not game.round.over:
        obs = game.observe()
        text = board(game, [], width=200, height=60).plain
        if obs.hand and game.order(obs):
            text = without_hand_faces(text)
        assert not glyphs_unnamed(text), text
        for k in game.keys(obs):
            if k.action.kind is Act.CHI:
                chis += 1
                assert format_tiles(k.action.run) in text
        calls = [a for a in obs.legal if a.kind in (Act.CHI, Act.PENG)]
        game.play(calls[0] if calls else rng.choice(obs.legal))
    assert not glyphs_unnamed(settlement(game, width=200).plain)
    if rules != "sichuan":
        assert chis  # a 吃 choice was seen


def test_d39_d51_a_capped_payment_shows_the_cap(tmp_path):
    """2^N is not what a payer pays under the cap: the line says 封顶 (cap)."""
    for name, capped_too in (
        ("baishan_platform-three-chows-capped.json", True),
        ("sichuan-dragon-seven-pairs-capped.json", True),
        ("baicheng-B1.json", False),
    ):
        data = json.loads((CASES / name).read_text(encoding="utf-8"))
        data.pop("expect")
        result = score(read_situation(json.dumps(data)))
        texts = [capped(result.situation, p) for p in result.reading.payers]
        assert any("封顶 (cap)" in t for t in texts) is capped_too, (name, texts)
        for p, t in zip(result.reading.payers, texts, strict=True):
            if "封顶" in t:
                assert f"{p.amount}" in t or f"2^{p.total}" not in t


def test_bots_are_paced_one_step_a_tick(tmp_path):
    """Paced, the bots move on a timer; its ticks are driven here (no sleeping): each
    shows something new in the log, until the player is asked and the timer stops."""
    game = Game("baicheng", seat=2, bots="efficient", seed=3, records=tmp_path, paced=True)
    assert game.round.dealer == 0  # East, South move first
    assert not game.observe().legal and game.round.decisions == []

    async def run() -> list[int]:
        app = PlayApp(game, pace=60.0)  # never fires during the test
        lines = []
        async with app.run_test(size=(80, 24)) as pilot:
            await pilot.pause()
            assert app.timer is not None
            while app.timer is not None:
                before = len(app.log_lines)
                app.tick()
                assert len(app.log_lines) > before
                lines.append(len(app.log_lines))
            obs = game.observe()
            assert obs.legal  # the player is asked
            await enter(pilot, what_to_type(game, EfficientBot(random.Random(0)).act(obs), 0))
            assert app.timer is not None  # the bots are paced again
        return lines

    lines = asyncio.run(run())
    assert len(lines) >= 3  # East's discard, South's draw and discard, at least


def test_paced_at_zero_the_bots_play_at_once(tmp_path):
    game = Game("baicheng", seat=0, bots="efficient", seed=3, records=tmp_path, paced=True)
    run_app(PlayApp(game, pace=0.0), [])
    assert game.observe().legal


def test_speed_is_an_option_and_not_negative(capsys):
    assert build_parser().parse_args([]).speed == 0.4
    assert build_parser().parse_args(["--speed", "0"]).speed == 0
    assert main(["--speed", "-1"]) == 2
    assert "--speed" in capsys.readouterr().err


def test_the_log_scrolls_with_pageup_and_pagedown(tmp_path):
    game = Game("baishan", seat=0, bots="efficient", seed=0, records=tmp_path)
    me = EfficientBot(random.Random(0))
    while len(game.events()) < 60:
        game.play(me.act(game.observe()))
    assert not game.round.over

    async def run() -> tuple[list[str], list[str], list[str]]:
        app = PlayApp(game)
        async with app.run_test(size=(80, 24)) as pilot:
            await pilot.pause()
            latest = screen(app)
            await pilot.press(*["pageup"] * 20)  # to the first line, and no further
            await pilot.pause()
            older = screen(app)
            await pilot.press(*["pagedown"] * 20)
            await pilot.pause()
            return latest, older, screen(app)

    latest, older, back = asyncio.run(run())
    assert latest == back and older != latest
    assert any("newer lines: PageDown" in row for row in older)
    assert any(row.startswith("hand 1 dealt") for row in older)
    assert not any(row.startswith("hand 1 dealt") for row in latest)


@pytest.mark.parametrize("rules", ["baicheng", "baishan", "baishan_platform", "sichuan"])
def test_the_table_speaks_one_style_without_rule_ids(tmp_path, rules):
    """No "you pays", no (D16) at the table, every settlement term glossed."""
    rng = random.Random(rules)
    game = Game(rules, seat=1, bots="efficient", seed=21, quan=2, records=tmp_path)
    log: list[str] = []
    reasons: set[str] = set()
    while True:
        while not game.round.over:
            game.play(rng.choice(game.observe().legal))
        log += [line for e in game.events() if (line := event_line(game, e))]
        text = settlement(game, width=200).plain + "\n".join(log)
        assert not re.search(r"\bD\d+\b", text), text
        assert not re.search(r"\byou (pays|wins|discards|draws)\b", text), text
        reasons |= {item["reason"] for item in game.round.settlement["items"]}
        if game.match.over:
            break
        game.next_hand()
    assert reasons and all(gloss(r) != r for r in reasons), reasons  # each term glossed
    every = [f for f in vars(fans).values() if isinstance(f, fans.Fan)]
    assert len(every) > 30
    assert all(not re.search(r"\bD\d+", plain(f.why)) for f in every)


def test_gloss_writes_the_chinese_term_then_its_english():
    assert gloss("查大叫 not ready") == "查大叫 (not-ready check)"
    assert gloss("three treasure 9p") == "三宝 (three treasure tiles) 9p"
    assert gloss("大杠 明杠 5m") == "大杠 (big kong) 明杠 (exposed kong) 5m"
    assert gloss("胡 West") == "胡 (win) West"
    assert plain("two identical chows (three count once, D59); exposed (D70)") == (
        "two identical chows (three count once); exposed"
    )


def claim_state(rules: str, kind: Act, tmp_path) -> Game:
    """A game paused where the player may make a ``kind`` claim."""
    for seed in range(200):
        game = Game(rules, seat=0, bots="efficient", seed=seed, records=tmp_path)
        me = EfficientBot(random.Random(0))
        while not game.round.over:
            obs = game.observe()
            if any(a.kind is kind for a in obs.legal):
                return game
            game.play(me.act(obs))
    raise AssertionError(f"no {kind} for the player")


def test_a_claim_window_takes_claim_keys_first(tmp_path):
    """P is 碰 in a claim window (it was read as discarding 白板), C is 吃, N is pass."""
    game = claim_state("baicheng", Act.PENG, tmp_path)
    peng = next(a for a in game.observe().legal if a.kind is Act.PENG)
    assert game.choose("P") == game.choose("p") == peng
    assert game.choose("N") == Action(Act.PASS)
    game = claim_state("baicheng", Act.CHI, tmp_path)
    chis = [a for a in game.observe().legal if a.kind is Act.CHI]
    if len(chis) == 1:
        assert game.choose("C") == chis[0]
    else:
        assert game.choose("C1") == chis[0]


def test_escape_closes_help_and_q_asks_before_quitting(tmp_path):
    game = Game("baicheng", seat=0, bots="efficient", seed=3, records=tmp_path)

    async def run() -> None:
        app = PlayApp(game)
        async with app.run_test(size=(80, 24)) as pilot:
            await pilot.press("f1")
            await pilot.pause()
            assert app.page == "help" and "Esc" in unwrapped(screen(app))
            await pilot.press("escape")
            await pilot.pause()
            assert app.page == "table"
            await enter(pilot, "q")
            assert app.is_running and "quit the match?" in message(app)
            await enter(pilot, "")
            assert app.is_running and not app.quitting
            await enter(pilot, "q")
            await enter(pilot, "y")
            assert not app.is_running

    asyncio.run(run())
    assert game.round.decisions == []


def finished_record(tmp_path) -> Path:
    game = Game("baishan", seat=0, bots="efficient", seed=16, records=tmp_path)
    me = EfficientBot(random.Random(0))
    while not game.round.over:
        game.play(me.act(game.observe()))
    assert game.record is not None
    return game.record


def test_the_replay_command_is_exact_and_runs(tmp_path):
    """The end screen's command runs as printed (the venv's fangcheng after make play)."""
    path = finished_record(tmp_path)
    command = replay_command(path)
    argv = shlex.split(command)
    assert argv[-3:] == ["replay", str(path), "--show"]
    program = argv[0]
    assert program == "fangcheng" or Path(program).exists()
    done = subprocess.run([*argv[:-1]], capture_output=True, text=True, check=False)
    assert done.returncode == 0 and "replay identically" in done.stdout, done
    game = Game("baishan", seat=0, bots="random", seed=4, records=tmp_path)
    rng = random.Random(0)
    while not game.match.over:
        while not game.round.over:
            game.play(rng.choice(game.observe().legal))
        if not game.match.over:
            game.next_hand()
    assert replay_command(game.saved[-1]) in unwrapped(standings(game).plain.split("\n"))


def test_the_viewer_steps_forward_and_back_through_a_hand(tmp_path):
    path = finished_record(tmp_path)
    view = ReplayView(read_record(path.read_text()), seat=0, path=path)
    assert view.at == 0 and not view.round.decisions
    boards = [board(view, [], actions=False).plain]
    seen = [len(view.events())]
    while view.at < len(view.moves) - 1:
        view.goto(view.at + 1)
        seen.append(len(view.events()))
        if not view.round.over:
            boards.append(board(view, [], actions=False).plain)
    assert view.round.over and "running total" in settlement(view).plain
    assert seen == sorted(seen) and len(set(seen)) == len(seen)  # each step shows more
    view.goto(1)
    assert board(view, [], actions=False).plain == boards[1]
    recorded = replay(json.loads(path.read_text())).round
    assert view.round.events == recorded.events[: len(view.round.events)]
    view.side(2)  # the same point seen from West: West's hand, not East's
    assert view.seat == 2 and board(view, [], actions=False).plain != boards[1]


def test_the_viewer_at_the_keyboard(tmp_path):
    path = finished_record(tmp_path)
    view = ReplayView(read_record(path.read_text()), seat=0, path=path)
    app = PlayApp(view)
    screens = run_app(app, ["", "", "b", "e", "v", "x"])
    assert "replay step 0/" in unwrapped(screens[0])
    assert "replay step 2/" in unwrapped(screens[2])
    assert "replay step 1/" in unwrapped(screens[3])
    assert "running total" in unwrapped(screens[4])
    assert view.seat == 1
    assert "'x'" in unwrapped(screens[6])
    assert not any("you" in row.split() for row in screens[2])  # seats by name


def test_replay_show_needs_a_terminal(tmp_path, capsys):
    path = finished_record(tmp_path)
    assert cli_main(["replay", str(path), "--show"]) == 2
    assert "needs a terminal" in capsys.readouterr().err


def test_hint_is_the_experts_and_says_why(tmp_path, monkeypatch):
    """The hint is the expert's (its playouts drawn from the game's seed: asked twice,
    the same), with the strong bot's measures: against a declared seat it names the
    danger."""
    game = Game("baishan", seat=0, bots="efficient", seed=3, records=tmp_path)
    obs = game.observe()
    declared = obs._replace(seats=(obs.seats[0], obs.seats[1]._replace(ready=True), *obs.seats[2:]))
    monkeypatch.setattr(game, "observe", lambda: declared)
    hint = game.hint()
    assert hint == game.hint()
    assert "danger" in hint and "South 报听" in hint and "useful tiles unseen" in hint
    rng = random.Random(f"3/1/{len(game.round.decisions)}")  # the game's seed, hand, decision
    expert, why = advise(declared, rng, strong=StrongBot(random.Random(1)))
    assert f"({expert})" in hint and hint.endswith(why)


def test_the_hint_thinks_off_the_screen_and_is_dropped_once_the_player_decides(
    tmp_path, monkeypatch
):
    """The expert's playouts run on a worker thread: the prompt takes what is typed
    while they run, and a hint that comes after the player has decided is not shown."""
    game = Game("baicheng", seat=0, bots="efficient", seed=3, quan=1, records=tmp_path)
    release = threading.Event()

    def slow(*args, **kwargs):
        release.wait(30)
        return advise(*args, **kwargs)

    monkeypatch.setattr("fangcheng.ui.terminal.game.advise", slow)

    async def run() -> tuple[str, int, str]:
        app = PlayApp(game)
        async with app.run_test(size=(80, 24)) as pilot:
            await enter(pilot, "hint")
            asked = app.query_one("#message", Static).content.plain
            await enter(pilot, "1")  # typed while the hint is thought out
            played = len(game.round.decisions)
            release.set()
            await app.workers.wait_for_complete()
            await pilot.pause()
            return asked, played, app.query_one("#message", Static).content.plain

    asked, played, shown = asyncio.run(run())
    assert asked == "hint: thinking…" and played > 0
    assert not shown.startswith("hint:"), shown


def test_hint_says_where_the_playouts_overruled_the_strong_bot(tmp_path):
    """Over a few hands the expert overrules the strong bot somewhere, and its hint then
    names the strong bot's choice; elsewhere it is the strong bot's own."""
    overruled = agreed = 0
    for seed in range(3):
        game = Game("baicheng", seat=0, bots="efficient", seed=seed, records=tmp_path)
        me = EfficientBot(random.Random(0))
        while not game.round.over and not (overruled and agreed):
            obs = game.observe()
            if sum(a.kind is Act.DISCARD for a in obs.legal) > 1:
                hint = game.hint()
                if "playouts chose it over the strong bot's discard" in hint:
                    overruled += 1
                else:
                    agreed += 1
            game.play(me.act(obs))
        if overruled and agreed:
            return
    raise AssertionError(f"overruled {overruled}, agreed {agreed}")


def test_hint_names_the_waits_when_ready(tmp_path):
    for seed in range(50):
        game = Game("baicheng", seat=0, bots="efficient", seed=seed, records=tmp_path)
        me = EfficientBot(random.Random(0))
        while not game.round.over:
            obs = game.observe()
            if any(a.kind is Act.DISCARD for a in obs.legal):
                action = StrongBot(random.Random(0)).act(obs)
                why = measures(obs, action, game.adviser)
                if why.startswith("听 ready: waits"):
                    assert action.kind in (Act.DISCARD, Act.READY)
                    return
            game.play(me.act(obs))
    raise AssertionError("never ready")


def test_a_console_without_the_glyphs_starts_in_ascii():
    assert glyphs_likely({"TERM": "xterm-256color"}, "utf-8")
    assert not glyphs_likely({"TERM": "linux"}, "utf-8")  # the Linux console's font
    assert not glyphs_likely({"TERM": "xterm"}, "ANSI_X3.4-1968")  # LANG=C


def test_a_winners_fan_reason_names_the_winner(tmp_path):
    """ "won on a tile it drew" at the table reads "won on a tile you drew"."""
    for seed in range(40):
        game = Game("baicheng", seat=0, bots="efficient", seed=seed, records=tmp_path)
        me = EfficientBot(random.Random(0))
        while not game.round.over:
            game.play(me.act(game.observe()))
        text = settlement(game, width=200).plain
        if "自摸" in text and game.round.win_scores:
            winner = game.round.win_scores[0].situation.winner
            name = "you" if winner == 0 else ("East", "South", "West", "North")[winner]
            assert f"won on a tile {name} drew" in text and "it drew" not in text
            return
    raise AssertionError("no self-drawn win")


def test_the_help_page_fits_80_by_24():
    rows = help_text().plain.split("\n")
    assert len(rows) <= 22 and max(cell_len(row) for row in rows) < 80
