"""What a seat can do: one small value per decision, with a text form for records and play.

Text forms (`str(action)` and `Action.parse`): ``discard 5m``, ``ting 5m`` (discard and
declare 报听), ``chi 345m`` (the run; the called tile is the discard), ``peng 5m``,
``gang 5m`` (明杠 on a discard), ``angang 5m``, ``bugang 5m``, ``xuanfeng`` (lay the
中发白 set), ``add C`` (a dragon added to the laid 旋风杠), ``hu``, ``pass``, ``que m``,
``piao 5``.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import Any, Final

from fangcheng.tiles.melds import Meld, MeldKind
from fangcheng.tiles.notation import (
    KINDS,
    InvalidNotationError,
    format_tiles,
    parse_tiles,
    tile_name,
)

__all__ = ["Act", "Action", "IllegalActionError", "called_meld"]


class Act(Enum):
    PIAO = "piao"  # 漂 bet before dealing (baishan_platform)
    QUE = "que"  # 定缺 (sichuan)
    DISCARD = "discard"
    READY = "ting"  # discard and declare 报听 (Baishan)
    CHI = "chi"
    PENG = "peng"
    GANG = "gang"  # 明杠 / 直杠 on a discard
    AN_GANG = "angang"
    BU_GANG = "bugang"
    XUANFENG = "xuanfeng"  # lay the 中发白 set (baicheng)
    ADD = "add"  # add a dragon to the laid 旋风杠 (baicheng)
    HU = "hu"
    PASS = "pass"


_TILE_ACTS = {Act.DISCARD, Act.READY, Act.PENG, Act.GANG, Act.AN_GANG, Act.BU_GANG, Act.ADD}
_SUITS = "mps"
#: The longest action text read (the longest written, ``discard 5m``, has 10 characters).
_LONGEST = 40
# enum members looked up once (a lookup on the class is slow): every call reads them
_CHI, _PENG, _GANG = Act.CHI, Act.PENG, Act.GANG
_CHI_MELD, _PENG_MELD, _GANG_MELD = MeldKind.CHI, MeldKind.PENG, MeldKind.MING_GANG


#: The text of each tile action on each tile, and of the plain ones, by (the kind's
#: value, the tile): each prompt writes all its legal actions (a turn's dozen discards),
#: and a table is read where an f-string and `tile_name` were a Python call each (keyed
#: by the value, a str: an enum member's hash is Python-level).
_TEXTS: Final[dict[tuple[str, int | None], str]] = {
    (kind.value, tile): f"{kind.value} {tile_name(tile)}"
    for kind in _TILE_ACTS
    for tile in range(KINDS)
} | {(kind.value, None): kind.value for kind in (Act.HU, Act.PASS, Act.XUANFENG)}


class IllegalActionError(ValueError):
    """An action that is not among a seat's legal actions, or a text that is no action.

    Raised by a round, it carries what reproduces it: ``seat``, ``action`` (its text),
    ``legal`` (the texts of the seat's legal actions), ``rules`` (the rule set's name),
    ``seed``, ``decision`` (how many decisions were recorded before it) and ``record``:
    the hand's record so far with this decision appended, a JSON-able dict that
    ``fangcheng replay`` stops on with the same problem. ``reason`` is the problem alone;
    the message adds the rule set, seed and decision index and says how to reproduce it.
    Raised by `Action.parse` on its own, it carries the problem only.
    """

    def __init__(
        self,
        reason: str,
        *,
        seat: object = None,
        action: str | None = None,
        legal: tuple[str, ...] = (),
        rules: str | None = None,
        seed: int | None = None,
        decision: int | None = None,
        record: dict[str, Any] | None = None,
    ) -> None:
        self.reason = reason
        self.seat, self.action, self.legal = seat, action, legal
        self.rules, self.seed, self.decision, self.record = rules, seed, decision, record
        if rules is not None:
            reason += (
                f" [{rules}, seed {seed}, decision {decision}: `fangcheng replay` of the"
                " error's record reproduces it]"
            )
        super().__init__(reason)


@dataclass(frozen=True, slots=True)
class Action:
    kind: Act
    tile: int | None = None  # the tile discarded, called, konged or added
    run: tuple[int, ...] = ()  # chi: the three tiles of the run
    value: int = 0  # piao: the bet (× 底注); que: the suit 0 m, 1 p, 2 s

    def __str__(self) -> str:
        text = _TEXTS.get((self.kind._value_, self.tile))
        if text is not None:
            return text
        kind = self.kind
        if kind in _TILE_ACTS and self.tile is not None:
            return f"{kind.value} {tile_name(self.tile)}"
        if kind is Act.CHI:
            return f"chi {format_tiles(self.run)}"
        if kind is Act.QUE:
            return f"que {_SUITS[self.value]}"
        if kind is Act.PIAO:
            return f"piao {self.value}"
        return str(kind.value)

    @classmethod
    def parse(cls, text: str) -> Action:
        """The action of a text form; an unknown form is an `IllegalActionError`."""
        if not isinstance(text, str):
            raise IllegalActionError(f"an action is a text, not {type(text).__name__}")
        if len(text) > _LONGEST:  # so that no message repeats a long text
            raise IllegalActionError(f"{len(text)} characters; an action is at most {_LONGEST}")
        words = text.split()
        if not words:
            raise IllegalActionError("an empty action")
        try:
            kind = Act(words[0].lower())
        except ValueError:
            names = ", ".join(a.value for a in Act)
            raise IllegalActionError(f"unknown action {words[0]!r}; actions: {names}") from None
        arg = "".join(words[1:])
        try:
            if kind in _TILE_ACTS:
                tiles = parse_tiles(arg)
                if len(tiles) != 1:
                    raise IllegalActionError(f"{kind.value} takes one tile, got {arg!r}")
                return cls(kind, tiles[0])
            if kind is Act.CHI:
                run = tuple(sorted(parse_tiles(arg)))
                if len(run) != 3:
                    raise IllegalActionError(f"chi takes the three tiles of the run, got {arg!r}")
                return cls(kind, run=run)
        except InvalidNotationError as exc:
            raise IllegalActionError(f"{text!r}: {exc}") from None
        if kind is Act.QUE:
            if arg not in tuple(_SUITS) or not arg:
                raise IllegalActionError(f"que takes a suit m, p or s, got {arg!r}")
            return cls(kind, value=_SUITS.index(arg))
        if kind is Act.PIAO:
            if not arg.isdigit():
                raise IllegalActionError(f"piao takes a bet (0, 5 or 10), got {arg!r}")
            return cls(kind, value=int(arg))
        if arg:
            raise IllegalActionError(f"{kind.value} takes nothing after it, got {arg!r}")
        return cls(kind)


def called_meld(
    action: Action, tile: int, source: int, *, treasure: int | None = None
) -> tuple[Meld, tuple[int, ...]]:
    """The meld a chi, peng or gang on ``tile`` (discarded by ``source``) lays down, and
    the tiles it takes from the caller's hand. A peng of the treasure face is 叉宝."""
    kind = action.kind
    if kind is _CHI:
        taken = list(action.run)
        taken.remove(tile)
        return Meld(_CHI_MELD, action.run, source), tuple(taken)
    if kind is _PENG:
        return Meld(_PENG_MELD, (tile,) * 3, source, treasure=tile == treasure), (tile,) * 2
    if kind is _GANG:
        return Meld(_GANG_MELD, (tile,) * 4, source), (tile,) * 3
    raise ValueError(f"{action} does not call a discard")
