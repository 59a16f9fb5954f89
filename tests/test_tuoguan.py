"""托管 stays on (issue 41, D84, D85): once a person asks for it, or a timeout sets it, it
ends only when they take the seat back (`auto` off). No answer ends it: not the `pass` a
client sends by itself at a pass-only claim window, not what the table plays for the
seat, not a reconnect. A whole hand is played so, in each rule set, on a fake clock."""

from __future__ import annotations

from typing import Any

import pytest

from fangcheng.protocol.wire import TableSettings
from fangcheng.rules.ruleset import ALL_RULES
from fangcheng.server.tables import Table, TableError
from test_server_tables import T0, Seen, new_table


class PassingClient(Seen):
    """A client that answers every pass-only prompt with ``pass`` by itself (as the web
    client did), and keeps every ``table`` frame's 托管 flag of its seat."""

    def __init__(self, table: Table, seat: int | None) -> None:
        super().__init__(table, seat)
        self.passes: list[int] = []
        self.answered = 0

    def send(self, frame: dict[str, Any]) -> None:
        super().send(frame)
        if frame["type"] == "prompt" and list(frame["legal"]) == ["pass"]:
            self.passes.append(frame["seq"])

    def autos(self) -> list[bool]:
        assert self.seat is not None
        return [f["table"]["seats"][self.seat]["auto"] for f in self.of("table")]


def _play_hand(table: Table, me: PassingClient, now: int) -> int:
    """Run the table to the hand's end, answering the client's passes at once (each is
    held to the window's floor); the clock at the end."""
    hand = table.hand
    for _ in range(5_000):
        if table.status != "playing" or table.hand != hand:
            return now
        while me.passes:
            seq = me.passes.pop(0)
            try:
                table.act(0, seq, "pass", now)
                me.answered += 1
            except TableError:  # 托管's bot answered first
                pass
            assert table.seats[0].auto, "a pass ended 托管"
        wake = table.next_wake()
        assert wake is not None
        now = max(now, wake)
        table.tick(now)
        assert table.seats[0].auto, "the table ended 托管"
    pytest.fail("the hand never ended")


def _table(rules: str) -> tuple[Table, PassingClient]:
    table, _ = new_table(TableSettings(rules=rules, quan=2), people=0, bot_ms=500)
    table.sit(1, "p1", "person")
    me = PassingClient(table, 0)
    table.attach(me, T0)
    return table, me


@pytest.mark.parametrize("rules", [r.name for r in ALL_RULES])
def test_tuoguan_asked_for_stays_on_for_a_whole_hand(rules: str) -> None:
    table, me = _table(rules)
    table.start(1, "efficient", T0)
    table.set_auto(0, True, T0)
    seq = table.seq
    _play_hand(table, me, T0)
    assert [f["hand"] for f in me.of("hand_end")] == [0]  # (between_ms 0: the next is dealt)
    assert table.seq > seq + 20  # the hand was played through, under 托管
    autos = me.autos()
    first = autos.index(True)
    assert all(autos[first:]), "a table frame showed 托管 off"
    assert me.of("prompt"), "the seat was shown its prompts all along"
    assert me.answered > 5, "the client's passes were sent"


@pytest.mark.parametrize("rules", [r.name for r in ALL_RULES])
def test_tuoguan_set_by_a_timeout_stays_on_and_only_auto_off_ends_it(rules: str) -> None:
    table, me = _table(rules)
    table.start(1, "efficient", T0)
    while 0 not in table.prompts:  # the bots play up to the seat's first decision
        wake = table.next_wake()
        assert wake is not None
        table.tick(wake)
    prompt = table.prompts[0]
    table.tick(prompt.deadline)  # nobody answered: 托管
    assert table.seats[0].auto and table.seats[0].kept
    now = _play_hand(table, me, prompt.deadline)
    assert all(me.autos()[me.autos().index(True) :])
    table.set_auto(0, False, now)  # the deliberate click
    assert not table.seats[0].auto and me.autos()[-1] is False


def test_a_return_keeps_tuoguan_asked_for_and_ends_the_one_a_drop_set() -> None:
    table, me = _table("baishan")
    table.start(1, "efficient", T0)
    table.set_auto(0, True, T0)
    table.detach(me, T0)
    back = PassingClient(table, 0)
    table.attach(back, T0)
    assert table.seats[0].auto, "asked for: a reload keeps it"
    table.set_auto(0, False, T0)
    table.detach(back, T0)
    assert table.seats[0].auto  # dropped: 托管 while away (D85)
    again = PassingClient(table, 0)
    table.attach(again, T0)
    assert not table.seats[0].auto  # back at the table
