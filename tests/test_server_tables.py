"""The table logic without a network: prompts, timers and 托管 on a fake clock (D84),
disconnects (D85), spectators and what every seat is sent (D87), for all four rule sets."""

from __future__ import annotations

import random
from typing import Any

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fangcheng.engine import Match, Round
from fangcheng.players import EfficientBot
from fangcheng.protocol import Action, IllegalActionError, Phase
from fangcheng.protocol.wire import TableSettings, decode_server, observation_json
from fangcheng.rules.ruleset import ALL_RULES
from fangcheng.server import tables
from fangcheng.server.tables import Finished, Table, TableError, public_view

T0 = 1_800_000_000_000  # the fake clock's start, ms


def plain(value: object) -> Any:
    """A value as the JSON a client reads."""
    return msgspec.json.decode(msgspec.json.encode(value))


class Seen:
    """A listener that keeps what it is sent and checks each frame as it arrives: it
    must decode as a server frame, and a seat's observation must be exactly the
    engine's redaction at that moment."""

    def __init__(self, table: Table, seat: int | None) -> None:
        self.table, self.seat = table, seat
        self.frames: list[dict[str, Any]] = []

    def send(self, frame: dict[str, Any]) -> None:
        frame = plain(frame)  # as a client reads it
        decode_server(msgspec.json.encode(frame))
        if "observation" in frame:
            r = self.table.round
            assert r is not None
            if self.seat is None:
                assert frame["observation"] == public_view(r)
                assert frame["observation"]["hand"] == "" and not frame["observation"]["legal"]
            else:
                assert frame["observation"] == observation_json(r.observe(self.seat))
        self.frames.append(frame)

    def of(self, kind: str) -> list[dict[str, Any]]:
        return [f for f in self.frames if f["type"] == kind]

    def prompt(self) -> dict[str, Any] | None:
        """The open prompt, if the last prompt is still the seat's open one."""
        prompts = self.of("prompt")
        open_ = self.table.prompts.get(self.seat) if self.seat is not None else None
        if prompts and open_ is not None and prompts[-1]["seq"] == open_.seq:
            return prompts[-1]
        return None

    def events(self, hand: int) -> list[dict[str, Any]]:
        """The hand's events as sent, put in place by ``start``."""
        out: list[dict[str, Any]] = []
        for f in self.of("events"):
            if f["hand"] == hand:
                assert f["start"] == len(out)
                out.extend(f["events"])
        return out


class Stored:
    """A table's ``on_hand``: keeps the finished hands (``rounds``, of every match)."""

    def __init__(self) -> None:
        self.rounds: list[Round] = []

    def __call__(self, table: Table, hand: Finished) -> int:
        self.rounds.append(hand.round)
        return len(self.rounds)


def played(table: Table) -> list[Round]:
    """The hands a `new_table` table has finished, in order."""
    assert isinstance(table.on_hand, Stored)
    return table.on_hand.rounds


def new_table(
    settings: TableSettings | None = None, *, people: int = 1, bot_ms: int = 0, code: str = "ABCDEF"
) -> tuple[Table, list[Seen]]:
    settings = msgspec.structs.replace(settings or TableSettings(), bot_ms=bot_ms, between_ms=0)
    table = Table(code=code, owner=1, settings=settings, seed=5, on_hand=Stored())
    seen = []
    for p in range(1, people + 1):
        seat = table.sit(p, f"p{p}", "person")
        listener = Seen(table, seat)
        table.attach(listener, T0)
        seen.append(listener)
    return table, seen


def answer(table: Table, seat: int, now: int, bot: EfficientBot) -> None:
    """The seat answers its open prompt as the efficient bot would."""
    assert table.round is not None
    action = bot.act(table.round.observe(seat))
    table.act(seat, table.prompts[seat].seq, str(action), now)


def test_d84_a_turn_times_out_into_tuoguan() -> None:
    table, (me,) = new_table(TableSettings(rules="baishan", turn_ms=10_000, bank_ms=20_000))
    table.start(1, "efficient", T0)
    assert table.round is not None
    # the first decision is the dealer's; wait for a turn of seat 0 (bots act at once)
    prompt = me.prompt()
    assert prompt is not None
    decisions = len(table.round.decisions)
    window = table.round.phase in (Phase.CLAIM, Phase.ROB)
    assert prompt["deadline"] == T0 + (3_000 if window else 30_000)
    table.tick(prompt["deadline"] - 1)
    assert len(table.round.decisions) == decisions and not table.seats[0].auto
    table.tick(prompt["deadline"])
    assert table.seats[0].auto
    assert me.of("table")[-1]["table"]["seats"][0]["auto"] is True
    # in 托管 the bot plays the seat; the whole match runs out with bot_ms 0
    assert table.status in ("between", "finished") or len(table.round.decisions) > decisions


def test_d84_the_time_bank_is_spent_past_the_turn_timer() -> None:
    table, (me,) = new_table(TableSettings(rules="baicheng", turn_ms=10_000, bank_ms=20_000))
    table.start(1, "efficient", T0)
    bot = EfficientBot(random.Random(1))
    now = T0
    for _ in range(200):  # answer claims at once until a turn of ours is open
        prompt = me.prompt()
        assert prompt is not None and table.round is not None
        if table.round.phase is Phase.TURN:
            break
        answer(table, 0, now, bot)
    else:
        pytest.fail("no turn for seat 0")
    assert prompt["bank_ms"] == 20_000 and prompt["deadline"] == now + 30_000
    now += 15_000  # 5 s past the turn timer
    answer(table, 0, now, bot)
    assert table.seats[0].bank == 15_000 and not table.seats[0].auto


def test_d84_bots_wait_their_pace() -> None:
    table, _ = new_table(TableSettings(rules="sichuan"), bot_ms=500)
    table.start(1, "efficient", T0)
    assert table.round is not None and table.round.phase is Phase.QUE
    answer(table, 0, T0, EfficientBot(random.Random(1)))  # 定缺: the bots have not chosen yet
    assert table.round.phase is Phase.QUE
    assert table.next_wake() == T0 + 500
    table.tick(T0 + 499)
    assert table.round.phase is Phase.QUE
    table.tick(T0 + 500)
    assert table.round.phase is not Phase.QUE


def test_d84_a_quick_pass_in_a_claim_window_waits_for_the_bots_pace() -> None:
    """A person's pass given at once is applied at the window's floor, as a bot's pass
    would be: how soon a window closes cannot tell that nobody had a claim."""
    table, _ = new_table(TableSettings(rules="baishan"), bot_ms=500)
    table.start(1, "efficient", T0)
    bot, now = EfficientBot(random.Random(1)), T0
    for _ in range(400):
        r = table.round
        assert r is not None
        prompt = table.prompts.get(0)
        if prompt is not None and prompt.window and r.legal_actions(0) == [Action.parse("pass")]:
            break
        if prompt is not None:
            answer(table, 0, now, bot)
        else:
            wake = table.next_wake()
            assert wake is not None
            now = max(now, wake)
            table.tick(now)
    else:
        pytest.fail("no pass-only claim window for seat 0")
    decisions = len(r.decisions)
    table.act(0, prompt.seq, "pass", prompt.issued)
    with pytest.raises(TableError, match="answered already"):
        table.act(0, prompt.seq, "pass", prompt.issued)
    table.tick(prompt.issued + 499)
    assert len(r.decisions) == decisions and table.prompts[0] is prompt
    table.tick(prompt.issued + 500)
    assert r.decisions[decisions] == {"seat": 0, "action": "pass"}


def test_d85_a_dropped_seat_is_in_tuoguan_until_it_returns() -> None:
    table, seen = new_table(TableSettings(rules="baishan"), people=2)
    table.start(1, "efficient", T0)
    table.detach(seen[1], T0)
    assert table.seats[1].auto and not table.seats[1].connected
    back = Seen(table, 1)
    table.attach(back, T0)
    assert not table.seats[1].auto
    assert table.round is not None
    assert back.events(table.hand) == plain(table.round.events_for(1))


def test_refusals_change_nothing() -> None:
    table, _ = new_table(TableSettings(rules="baishan"), people=2)
    table.start(1, "efficient", T0)
    r = table.round
    assert r is not None
    asked = next(s for s in (0, 1) if s in table.prompts)
    other = 1 - asked if (1 - asked) not in table.prompts else None
    seq = table.prompts[asked].seq
    before = (len(r.decisions), len(r.events), table.seq, dict(table.prompts))
    refusals = [
        (asked, seq - 1, "pass", "stale"),
        (asked, seq + 1, "pass", "stale"),
        (asked, seq, "hu", "illegal"),
        (asked, seq, "discard 9s" if r.hands[asked][26] == 0 else "angang 1m", "illegal"),
    ]
    if other is not None:
        refusals.append((other, seq, "pass", "not_your_turn"))
    for seat, s, text, code in refusals:
        if text == "hu" and Action.parse("hu") in r.legal_actions(seat):
            continue
        with pytest.raises(TableError) as refused:
            table.act(seat, s, text, T0)
        assert refused.value.code == code, (text, refused.value.message)
    assert (len(r.decisions), len(r.events), table.seq, dict(table.prompts)) == before
    with pytest.raises(TableError, match="owner"):
        table.start(2, "efficient", T0)


def _play_out(table: Table, seen: list[Seen], rng_seed: int = 0) -> None:
    """Every person answers its prompts as the efficient bot does, to the match's end."""
    bots = {s.seat: EfficientBot(random.Random(rng_seed + i)) for i, s in enumerate(seen)}
    now = T0
    for _ in range(5000):
        if table.status == "finished":
            return
        now += 1
        for listener in seen:
            assert listener.seat is not None
            if listener.seat in table.prompts:
                answer(table, listener.seat, now, bots[listener.seat])
                break
        else:
            table.tick(now)
    pytest.fail("the match did not end")


@pytest.mark.parametrize("rules", [r.name for r in ALL_RULES])
def test_d87_every_frame_holds_only_what_its_seat_may_know(rules: str) -> None:
    """Four people and a spectator play a match; each seat's events are exactly
    `events_for(seat)`, each observation exactly `observe(seat)` when it was sent (the
    listener checks), the spectator's events `events_for(None)` and its views the
    public one, with no hand."""
    table, seen = new_table(TableSettings(rules=rules), people=4)
    spectator = Seen(table, None)
    table.attach(spectator, T0)
    table.start(1, "efficient", T0)
    _play_out(table, seen)
    assert table.match is not None
    for hand, round_ in enumerate(played(table)):
        for listener in [*seen, spectator]:
            expected = plain(round_.events_for(listener.seat))
            assert listener.events(hand) == expected
    assert not spectator.of("prompt") and spectator.of("view")
    ends = [f["settlement"] for f in spectator.of("hand_end")]
    assert ends == [r.settlement for r in played(table)]
    standings = spectator.of("match_end")[0]["standings"]
    assert [s["score"] for s in sorted(standings, key=lambda s: s["seat"])] == table.match.scores


def test_a_hands_streams_hold_one_value_of_each_event_they_see_alike() -> None:
    """Memory (issue 38): the four seats' and the public streams of a hand hold one JSON
    value of each event they see alike (a discard, another seat's hidden draw), not one
    a stream; what each is sent is still its own redaction (the test above)."""
    table, seen = new_table(TableSettings(rules="baishan"), people=4)
    table.start(1, "efficient", T0)
    _play_out(table, seen)
    streams = [table.events_for(s) for s in (0, 1, 2, 3, None)]
    values = {id(e): e for stream in streams for e in stream}
    texts = {msgspec.json.encode(e) for e in values.values()}
    assert sum(map(len, streams)) > 2 * len(values)  # most are seen alike
    assert len(values) == len(texts)


# --- the strong form: hidden tiles that differ change nothing a seat is sent -------------


def _play_hand(rules: str, seed: int) -> Round:
    r = Round(rules, seed=seed, ask_all=True)
    bots = [EfficientBot(random.Random(seed + s)) for s in range(4)]
    while not r.over:
        for s in r.pending():
            r.act(s, bots[s].act(r.observe(s)))
    return r


def _replayed(rules: str, seed: int, wall: list[int], decisions: list[dict[str, Any]]) -> Round:
    r = Round(rules, seed=seed, wall=wall, ask_all=True)
    for d in decisions:
        r.act(d["seat"], d["action"])
    return r


def _public_until_reveal(r: Round, seat: int | None) -> list[Any]:
    out = []
    for e in r.events_for(seat):
        if type(e).__name__ == "Reveal":
            break
        out.append(msgspec.to_builtins(e))
    return out


def _deal(r: Round) -> Any:
    return next(e for e in r.events if type(e).__name__ == "Deal")


def _twin_wall(rules: str) -> tuple[int, list[int], list[int], list[dict[str, Any]]]:
    """A seed and two walls that deal seat 2 one different concealed tile (kept to the
    end, in place of a tile nobody draws), with the same decisions and the same public
    play."""
    for seed in range(40):
        a = _play_hand(rules, seed)
        wall, live = list(a.wall.tiles), list(a.wall.live)
        decisions = list(a.decisions)
        kept = {t for t in range(34) if a.hands[2][t]}
        first = next(f for f in range(len(wall)) if wall[f : f + len(live)] == live)
        undrawn = range(first + 2, first + len(live) - 8)  # clear of both ends
        for i in (i for i in range(53) if wall[i] in kept):
            for j in (j for j in undrawn if wall[j] != wall[i]):
                twin = list(wall)
                twin[i], twin[j] = twin[j], twin[i]
                try:
                    b = _replayed(rules, seed, twin, decisions)
                except (IllegalActionError, AssertionError, ValueError):
                    break
                hands_a, hands_b = _deal(a).hands, _deal(b).hands
                if hands_a[2] == hands_b[2] or [*hands_a[:2], hands_a[3]] != [
                    *hands_b[:2],
                    hands_b[3],
                ]:
                    break
                if all(_public_until_reveal(a, s) == _public_until_reveal(b, s) for s in (0, None)):
                    return seed, wall, twin, decisions
                break
    raise AssertionError("no twin walls found")


def dealt_table(
    monkeypatch: pytest.MonkeyPatch, rules: str, seed: int, wall: list[int]
) -> tuple[tables.Table, list[Seen]]:
    """A table of four people whose hands are dealt from ``wall`` (dealer East)."""

    class Dealt(Match):
        def new_round(self) -> Round:
            return Round(self.rules, seed=seed, dealer=0, wall=wall, ask_all=True)

    monkeypatch.setattr(tables, "Match", Dealt)
    return new_table(TableSettings(rules=rules), people=4)


@pytest.mark.parametrize("rules", [r.name for r in ALL_RULES])
def test_d87_two_tables_differing_only_in_hidden_tiles_send_identical_frames(
    rules: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    seed, wall_a, wall_b, decisions = _twin_wall(rules)
    sent = []
    for wall in (wall_a, wall_b):
        table, seen = dealt_table(monkeypatch, rules, seed, wall)
        spectator = Seen(table, None)
        table.attach(spectator, T0)
        table.start(1, "efficient", T0)
        r = table.round
        assert r is not None
        while not r.over:
            d = decisions[len(r.decisions)]
            table.act(d["seat"], table.prompts[d["seat"]].seq, d["action"], T0)
        frames = []
        for listener in (seen[0], spectator):
            shown = []
            for f in listener.frames:
                if any(e["type"] == "reveal" for e in f.get("events", ())):
                    break
                shown.append(f)
            frames.append(shown)
        sent.append(frames)
    assert len(sent[0][0]) > 20
    assert sent[0] == sent[1]


def test_the_owner_leaving_passes_the_table_on() -> None:
    table, _ = new_table(TableSettings(rules="baishan"), people=2)
    table.leave(1, T0)
    assert table.owner == 2 and table.seats[0].kind is None
    with pytest.raises(TableError, match="owner"):
        table.start(1, "efficient", T0)
    table.start(2, "efficient", T0)
    assert table.status == "playing"


def test_d81_a_finished_table_plays_again() -> None:
    table, seen = new_table(TableSettings(rules="baicheng"), people=1)
    table.set_auto(0, True, T0)
    table.start(1, "random", T0)
    assert table.status == "finished" and seen[0].of("match_end")
    first = len(played(table))
    table.start(1, "efficient", T0)
    assert table.matches == 2 and table.status == "finished" and len(played(table)) > first
    assert len(seen[0].of("match_end")) == 2
    assert table.match is not None
    # the second match's hands were sent whole, from start 0
    starts = [f for f in seen[0].of("events") if f["start"] == 0]
    assert len(starts) == len(played(table))


_TEXTS = st.sampled_from(
    ["pass", "hu", "discard 5m", "discard E", "peng 5m", "chi 345m", "angang 1m", "que m"]
)


@settings(max_examples=25, deadline=None)
@given(
    rules=st.sampled_from([r.name for r in ALL_RULES]),
    moves=st.lists(
        st.tuples(st.integers(0, 3), st.integers(-2, 2), _TEXTS | st.text(max_size=12)),
        max_size=40,
    ),
)
def test_any_answer_is_refused_without_change_or_is_a_legal_decision(
    rules: str, moves: list[tuple[int, int, str]]
) -> None:
    """Whatever four seats send, a refused answer changes nothing and an accepted one
    was the seat's legal action on its open prompt."""
    table, _ = new_table(TableSettings(rules=rules), people=4)
    table.start(1, "efficient", T0)
    for seat, offset, text in moves:
        r = table.round
        assert r is not None
        if r.over:
            break
        prompt = table.prompts.get(seat)
        seq = (prompt.seq if prompt else table.seq) + offset
        before = (len(r.decisions), len(r.events), table.seq)
        legal = [str(a) for a in r.legal_actions(seat)]
        try:
            table.act(seat, seq, text, T0)
        except TableError:
            assert (len(r.decisions), len(r.events), table.seq) == before
        else:
            assert prompt is not None and offset == 0
            assert str(Action.parse(text)) in legal
