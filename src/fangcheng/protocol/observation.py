"""What one seat may know: the types every client reads (bots, the env, the terminal,
and next the table server). The engine builds them by redaction (`fangcheng.engine.observe`);
nothing here imports the engine."""

from __future__ import annotations

from enum import Enum
from typing import NamedTuple

from fangcheng.protocol.actions import Action
from fangcheng.rules.ruleset import RuleSet
from fangcheng.tiles.melds import Meld
from fangcheng.tiles.notation import format_counts, format_tiles, tile_name

__all__ = ["Observation", "Phase", "SeatView"]


class Phase(Enum):
    PIAO = "piao"  # 漂 bets before dealing
    QUE = "que"  # 定缺 after dealing
    TURN = "turn"  # the seat to move holds 14 - 3k tiles
    CLAIM = "claim"  # other seats answer a discard
    ROB = "rob"  # other seats may rob a 补杠 or a dragon addition
    FENZHANG = "fenzhang"  # baicheng's last-tile split
    END = "end"


class SeatView(NamedTuple):
    """What everyone can see of one seat. (Named tuples, as `Observation`: a view is
    built for every decision, and a tuple is built in one call.)"""

    melds: tuple[Meld, ...]  # laid melds; another seat's 暗杠 is only counted below
    hidden_kongs: int  # 暗杠 face down (shown to the others only when the hand ends)
    river: tuple[int, ...]  # discards still in front of the seat, in order
    concealed: int  # how many concealed tiles it holds
    ready: bool  # declared 报听
    que: int | None  # 定缺 suit, once all four have chosen
    won: bool
    piao: int
    #: The concealed tiles, once laid face up: a sichuan winner's (亮倒), everyone's at the end.
    revealed: bytes | None = None


class Observation(NamedTuple):
    """Exactly what ``seat`` may know: the public table, its own hand, its legal actions."""

    seat: int
    #: The table's rule set as configured (a cap, a claim window): the engine's own
    #: object, passed, not copied, so a bot values a hand by the table's numbers.
    rules: RuleSet
    phase: Phase
    dealer: int
    turn: int
    base: int  # 底注 of the table (before the anti-cheat room's doubling)
    wall: int  # tiles left for normal draws
    treasure: int | None  # the treasure indicator's face (baicheng)
    retired: tuple[int, ...]  # earlier indicators, retired by 换宝
    hand: bytes  # own concealed tiles, 34 counts
    drawn: int | None  # own tile just drawn
    seats: tuple[SeatView, ...]
    scores: tuple[int, ...]  # coins moved so far in this hand
    last_discard: tuple[int, int] | None  # (seat, tile) open to claims
    legal: tuple[Action, ...]
    #: Passing the win offered now makes this seat a 花猪 (sichuan's last four tiles, D56,
    #: D79): a client warns before the rule punishes, and a bot can read it.
    must_win: bool = False

    def text(self) -> str:
        """A plain rendering for debugging and logs."""
        lines = [
            f"{self.rules.name} seat {self.seat}  phase {self.phase.value}  dealer {self.dealer}"
            f"  turn {self.turn}  wall {self.wall}"
            + (f"  treasure {tile_name(self.treasure)}" if self.treasure is not None else "")
        ]
        for s, view in enumerate(self.seats):
            melds = " ".join(f"{m.kind.value}:{format_tiles(m.tiles)}" for m in view.melds)
            melds += " [####]" * view.hidden_kongs
            flags = "".join(
                [
                    " 报听" if view.ready else "",
                    f" 缺{'mps'[view.que]}" if view.que is not None else "",
                    " won" if view.won else "",
                ]
            )
            if s == self.seat:
                mine = format_counts(self.hand)
            elif view.revealed is not None:
                mine = format_counts(view.revealed)
            else:
                mine = f"{view.concealed} tiles"
            lines.append(
                f"  {s}{'*' if s == self.seat else ' '} {mine:<22} {melds:<30} "
                f"river {format_tiles(view.river, sort=False)}{flags}  score {self.scores[s]}"
            )
        if self.legal:
            lines.append("  legal: " + ", ".join(map(str, self.legal)))
        if self.must_win:
            lines.append("  passing the win makes a 花猪 (the last four tiles)")
        return "\n".join(lines)
