"""Laid-down melds: the kinds a seat can show in front of it, and what each one means.

A meld is a value: its kind, its tiles (sorted ids) and the seat it was called from. Rule
sets, fans and scoring all read melds through the few properties here, so "is this hand
closed" or "is this a kong" has one answer everywhere.
"""

from __future__ import annotations

from dataclasses import dataclass, field
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


# Compared by identity: an enum member's hash and a lookup on its class are Python-level.
_PENG, _AN_GANG = MeldKind.PENG, MeldKind.AN_GANG
_MING_GANG, _BU_GANG = MeldKind.MING_GANG, MeldKind.BU_GANG
_XUANFENG = MeldKind.XUANFENG


@dataclass(frozen=True, slots=True)
class Meld:
    """One laid meld. ``source`` is the seat whose discard was called (``from``)."""

    kind: MeldKind
    tiles: tuple[int, ...]
    source: int | None = None
    #: A 碰 of the treasure face (叉宝, baicheng): scored as a 明杠.
    treasure: bool = False
    # derived once, as plain attributes, for the scorer's hot path
    #: The lowest tile: the face of a pung or kong, the start of a run.
    face: int = field(init=False, repr=False, compare=False)
    is_kong: bool = field(init=False, repr=False, compare=False)
    #: A pung or a kong (exposed or concealed): what "all pungs" and "has a 碰" count.
    is_pung_like: bool = field(init=False, repr=False, compare=False)
    #: Whether the meld opens the hand: every kind but the 暗杠 does (RULES.md §0.3).
    opens: bool = field(init=False, repr=False, compare=False)
    #: A kong, a 旋风杠 or a 叉宝: the melds a kong payment is made for (a 吃 or a plain
    #: 碰 never is), so that a win's scorer skips the kongs of a hand that has none.
    pays: bool = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        set_ = object.__setattr__
        kind = self.kind
        is_kong = kind is _MING_GANG or kind is _BU_GANG or kind is _AN_GANG
        set_(self, "face", self.tiles[0])
        set_(self, "is_kong", is_kong)
        set_(self, "is_pung_like", is_kong or kind is _PENG)
        set_(self, "opens", kind is not _AN_GANG)
        set_(self, "pays", is_kong or kind is _XUANFENG or (kind is _PENG and self.treasure))
