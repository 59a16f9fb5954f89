"""Laid-down melds: the kinds a seat can show in front of it, and what each one means.

A meld is a value: its kind, its tiles (sorted ids) and the seat it was called from. Rule
sets, fans and scoring all read melds through the few properties here, so "is this hand
closed" or "is this a kong" has one answer everywhere.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

__all__ = ["Meld", "MeldKind"]


class MeldKind(Enum):
    """The meld kinds of the `score` input (ARCHITECTURE.md "Win situation")."""

    CHI = "chi"  # 吃: a run called from the 上家
    PENG = "peng"  # 碰 (叉): a pung called from any seat
    MING_GANG = "ming_gang"  # 明杠 / 直杠: a kong called on a discard
    BU_GANG = "bu_gang"  # 补杠 / 弯杠: the fourth tile added to one's own 碰
    AN_GANG = "an_gang"  # 暗杠: four self-drawn tiles, laid face down
    XUANFENG = "xuanfeng"  # 旋风杠: 中发白 laid down, extra dragons appended (baicheng)


_KONGS = frozenset({MeldKind.MING_GANG, MeldKind.BU_GANG, MeldKind.AN_GANG})
_PUNG_LIKE = _KONGS | {MeldKind.PENG}


@dataclass(frozen=True, slots=True)
class Meld:
    """One laid meld. ``source`` is the seat whose discard was called (``from``)."""

    kind: MeldKind
    tiles: tuple[int, ...]
    source: int | None = None
    #: A 碰 of the treasure face (叉宝, baicheng): scored as a 明杠.
    treasure: bool = False

    @property
    def face(self) -> int:
        """The lowest tile: the face of a pung or kong, the start of a run."""
        return self.tiles[0]

    @property
    def is_kong(self) -> bool:
        return self.kind in _KONGS

    @property
    def is_pung_like(self) -> bool:
        """A pung or a kong (exposed or concealed): what "all pungs" and "has a 碰" count."""
        return self.kind in _PUNG_LIKE

    @property
    def opens(self) -> bool:
        """Whether the meld opens the hand: every kind but the 暗杠 does (RULES.md §0.3)."""
        return self.kind is not MeldKind.AN_GANG
