"""The input of one win, as the `fangcheng score` contract gives it, validated.

`SituationInput` is the shape of ARCHITECTURE.md "Win situation" as msgspec `Struct`s
(types, seat ranges, lengths, required and unknown keys; its JSON Schema is published in
``docs/schemas/``). `load_situation` (parsed JSON) and `read_situation` (JSON text) check
that shape, then what a shape cannot say (notation, tile counts, meld shapes, who may
call from whom, how the win came), and build a frozen `Situation`; any problem is a
`SituationError` naming the field path (``seats[2].melds[0].from``) and the problem.
Tiles are ids inside; notation stays at this edge.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from operator import attrgetter
from typing import Annotated, Any, Final

import msgspec

from fangcheng import contract
from fangcheng.rules.requirements import declarable, wait_set
from fangcheng.rules.ruleset import OptionError, Options, RuleSet, configure, find_rules
from fangcheng.tiles.melds import Meld, MeldKind
from fangcheng.tiles.notation import (
    DRAGONS,
    KINDS,
    SUITS,
    InvalidNotationError,
    format_counts,
    format_tiles,
    parse_tiles,
    tile_name,
)

__all__ = [
    "MAX_BASE",
    "MeldInput",
    "RulesName",
    "Seat",
    "SeatIndex",
    "SeatInput",
    "Situation",
    "SituationError",
    "SituationInput",
    "TableOptions",
    "WinBy",
    "load_situation",
    "read_situation",
    "situation_json",
    "situation_schema",
]


_OPENS: Final = attrgetter("opens")


class SituationError(ValueError):
    """Malformed or impossible win input; the message starts with the field path."""


class WinBy(Enum):
    """How the winning tile came (``win_by``)."""

    DISCARD = "discard"
    SELF_DRAW = "self_draw"
    ROBBED_KONG = "robbed_kong"  # 抢杠: the konger counts as the discarder
    TREASURE = "treasure"  # 摸宝: the drawn treasure face stands in for a winning tile
    FENZHANG = "fenzhang"  # a tile drawn during 分张 (baicheng)

    @property
    def has_discarder(self) -> bool:
        return self in (WinBy.DISCARD, WinBy.ROBBED_KONG)


@dataclass(frozen=True, slots=True)
class Seat:
    """One seat's tiles: concealed counts (34 bytes) and laid melds."""

    concealed: bytes
    melds: tuple[Meld, ...] = ()
    #: No meld but 暗杠 (RULES.md §0.3; a laid 旋风杠 opens too, D21).
    closed: bool = field(init=False)

    def __post_init__(self) -> None:
        # mapped in C: the engine builds four seats for every win it scores
        object.__setattr__(self, "closed", not any(map(_OPENS, self.melds)))


@dataclass(frozen=True, kw_only=True)
class Situation:
    """One win, as scored: the table, the winner, how it won and every seat's tiles."""

    rules: RuleSet
    options: Options = field(default_factory=Options)
    base: int = 1
    dealer: int = 0
    winner: int = 0
    win_tile: int = 0
    win_by: WinBy = WinBy.SELF_DRAW
    source: int | None = None  # ``from``: the discarder, or the robbed konger
    after_kong: bool = False
    treasure: int | None = None  # the current treasure face (baicheng)
    retired_treasure: tuple[int, ...] = ()  # earlier indicators retired by 换宝
    declared_ready: tuple[bool, ...] = (False, False, False, False)
    seats: tuple[Seat, ...] = ()
    won: frozenset[int] = frozenset()  # seats that won earlier in this hand (sichuan)
    last_tile: bool = False  # the winning tile was the wall's last (海底)
    first_draw: bool = False  # 天胡 / 地胡
    fenzhang_drawn: frozenset[int] = frozenset()  # seats holding a kept 分张 tile
    # per-seat views, kept once for the scorer's hot path
    closed: tuple[bool, ...] = field(init=False, repr=False, compare=False)
    concealed: tuple[bytes, ...] = field(init=False, repr=False, compare=False)
    melds: tuple[tuple[Meld, ...], ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "closed", tuple(seat.closed for seat in self.seats))
        object.__setattr__(self, "concealed", tuple(seat.concealed for seat in self.seats))
        object.__setattr__(self, "melds", tuple(seat.melds for seat in self.seats))


# --- the input shape ----------------------------------------------------------------------

#: The largest 底注 accepted: every amount a win moves stays an exact JSON number.
MAX_BASE: Final = 1_000_000_000

_Unset = msgspec.UnsetType


SeatIndex = Annotated[int, msgspec.Meta(ge=0, le=3, description="A seat, 0..3.")]
RulesName = Annotated[
    str,
    msgspec.Meta(
        max_length=40,
        description="A rule set: baicheng, baishan, baishan_platform, sichuan.",
    ),
]
Tiles = Annotated[
    str,
    msgspec.Meta(
        max_length=200,
        description="Tile notation: 123m456p789s, honours ESWNPFC or 1z..7z.",
        extra={"expected": "tile notation (a string)"},
    ),
]


class TableOptions(msgspec.Struct, kw_only=True, forbid_unknown_fields=True, frozen=True):
    """A table's options, each optional. Which apply, and their values, depend on the rule
    set (`fangcheng.rules.ruleset.configure` checks them and names the valid ones)."""

    room: (
        Annotated[
            str,
            msgspec.Meta(
                max_length=40, description="Room type (baishan_platform): free, junior, ..."
            ),
        ]
        | _Unset
    ) = msgspec.UNSET
    piao: (
        Annotated[list[int], contract.about("Four 漂 bets, × 底注, each one the rule set offers.")]
        | _Unset
    ) = msgspec.UNSET
    que: (
        Annotated[
            list[Annotated[str, msgspec.Meta(max_length=8)]],
            contract.about("Four 缺 suits (sichuan), each m, p or s."),
        ]
        | _Unset
    ) = msgspec.UNSET
    claim_window: (
        Annotated[int | float, contract.about("Seconds a claim window stays open, (0, 60].")]
        | _Unset
    ) = msgspec.UNSET
    cap: Annotated[int, contract.about("A cap in the rule set's own unit, ≥ 1.")] | _Unset = (
        msgspec.UNSET
    )

    def given(self) -> dict[str, object]:
        """The options given, as `configure` and `Round` take them."""
        given: dict[str, object] = msgspec.to_builtins(self)
        return given


class MeldInput(msgspec.Struct, kw_only=True, forbid_unknown_fields=True, frozen=True):
    """One laid meld."""

    kind: Annotated[MeldKind, msgspec.Meta(extra={"noun": "a meld kind"})]
    tiles: Tiles
    source: Annotated[
        SeatIndex | None,
        contract.about(
            "The seat whose discard was called: required for chi, peng, ming_gang and"
            " bu_gang (for a bu_gang, the seat whose discard made the peng); none for"
            " an_gang and xuanfeng."
        ),
    ] = msgspec.field(name="from", default=None)
    treasure: Annotated[bool, contract.about("A peng made as 叉宝 (baicheng).")] = False


class SeatInput(msgspec.Struct, kw_only=True, forbid_unknown_fields=True, frozen=True):
    """One seat's tiles."""

    concealed: Annotated[
        Tiles, contract.about("Concealed tiles; the winner's without the winning tile.")
    ]
    melds: Annotated[list[MeldInput], msgspec.Meta(max_length=4, extra={"noun": "melds"})] = []


class SituationInput(msgspec.Struct, kw_only=True, forbid_unknown_fields=True, frozen=True):
    """One win, as `fangcheng score` reads it (ARCHITECTURE.md "Win situation")."""

    rules: RulesName
    options: TableOptions = msgspec.field(default_factory=TableOptions)
    base: Annotated[int, msgspec.Meta(ge=1, le=MAX_BASE, description="The table stake 底注.")]
    dealer: SeatIndex
    winner: SeatIndex
    win_tile: Tiles
    win_by: WinBy
    source: Annotated[
        SeatIndex | None,
        contract.about("The discarder, or the seat whose kong was robbed; none for other wins."),
    ] = msgspec.field(name="from", default=None)
    after_kong: Annotated[
        bool,
        contract.about(
            "Won on a kong's replacement tile (the winner has a kong meld), or on the"
            " discard right after the discarder's kong (the discarder has one); a 旋风杠"
            " counts once a dragon is added to it."
        ),
    ] = False
    treasure: Annotated[Tiles | None, contract.about("The current treasure face (baicheng).")] = (
        None
    )
    retired_treasure: Annotated[
        list[Tiles] | Tiles,
        contract.about("Faces of earlier treasure indicators, retired by 换宝."),
    ] = []
    declared_ready: Annotated[
        list[bool],
        msgspec.Meta(
            min_length=4,
            max_length=4,
            description="Per seat: declared 报听 (baishan).",
            extra={"noun": "values"},
        ),
    ] = msgspec.field(default_factory=lambda: [False] * 4)
    seats: Annotated[
        list[SeatInput], msgspec.Meta(min_length=4, max_length=4, extra={"noun": "seats"})
    ]
    won: Annotated[
        list[SeatIndex], contract.about("Seats that won earlier in the hand (sichuan).")
    ] = []
    last_tile: Annotated[bool, contract.about("The winning tile was the wall's last (海底).")] = (
        False
    )
    first_draw: Annotated[
        bool, contract.about("天胡 / 地胡: won on the first tiles, no call before.")
    ] = False
    fenzhang_drawn: Annotated[
        list[SeatIndex], contract.about("Seats holding a kept 分张 tile (one tile more).")
    ] = []
    id: Annotated[str | None, contract.about("A label of a case file, ignored.")] = None
    note: Annotated[str | None, contract.about("A label of a case file, ignored.")] = None
    expect: Annotated[Any, contract.about("A case file's expected figures, ignored.")] = None


def situation_schema() -> dict[str, Any]:
    """The JSON Schema of the `score` input (published as docs/schemas/situation.schema.json)."""
    return contract.json_schema(SituationInput)


def situation_json(s: Situation) -> dict[str, Any]:
    """The `score` input of ``s``, which `load_situation` reads back to score the same: how
    the engine's wins are told to `fangcheng score`. ``s.rules`` is a preset, or a preset
    with its cap changed (a rule set of one's own has no name the contract knows). Keys
    whose value is the default are left out where the contract leaves them optional."""
    preset = find_rules(s.rules.name)
    options: dict[str, Any] = {}
    if s.options.room is not None and s.options.room != preset.rooms[0]:
        options["room"] = s.options.room.name
    if any(s.options.piao):
        options["piao"] = list(s.options.piao)
    if s.options.que is not None:
        options["que"] = [SUITS[q] for q in s.options.que]
    if (s.rules.cap_fans, s.rules.cap_base) != (preset.cap_fans, preset.cap_base):
        options["cap"] = s.rules.cap_fans if preset.cap_fans is not None else s.rules.cap_base
    data: dict[str, Any] = {
        "rules": s.rules.name,
        "options": options,
        "base": s.base,
        "dealer": s.dealer,
        "winner": s.winner,
        "win_tile": tile_name(s.win_tile),
        "win_by": s.win_by.value,
        "after_kong": s.after_kong,
        "treasure": None if s.treasure is None else tile_name(s.treasure),
        "declared_ready": list(s.declared_ready),
        "seats": [
            {"concealed": format_counts(seat.concealed), "melds": list(map(_meld_json, seat.melds))}
            for seat in s.seats
        ],
        "won": sorted(s.won),
        "last_tile": s.last_tile,
        "first_draw": s.first_draw,
    }
    if s.source is not None:
        data["from"] = s.source
    if s.retired_treasure:
        data["retired_treasure"] = [tile_name(t) for t in s.retired_treasure]
    if s.fenzhang_drawn:
        data["fenzhang_drawn"] = sorted(s.fenzhang_drawn)
    return data


def _meld_json(meld: Meld) -> dict[str, Any]:
    data: dict[str, Any] = {"kind": meld.kind.value, "tiles": format_tiles(meld.tiles, sort=False)}
    if meld.source is not None:
        data["from"] = meld.source
    if meld.treasure:
        data["treasure"] = True
    return data


# --- reading -------------------------------------------------------------------------------


def read_situation(text: bytes | str) -> Situation:
    """The `Situation` of JSON text (raises `SituationError`, also for text that is not
    UTF-8 or not JSON)."""
    return _build(contract.decode(text, SituationInput, SituationError, "situation"))


def load_situation(data: object) -> Situation:
    """The `Situation` of parsed JSON (raises `SituationError`)."""
    if isinstance(data, SituationInput):
        return _build(data)
    return _build(contract.convert(data, SituationInput, SituationError, "situation"))


_CALLED: Final = {MeldKind.CHI, MeldKind.PENG, MeldKind.MING_GANG, MeldKind.BU_GANG}
#: Melds whose making draws a replacement tile: a 旋风杠 only once a dragon is added (D21).
_REPLACED: Final = {MeldKind.AN_GANG, MeldKind.MING_GANG, MeldKind.BU_GANG}


def _fail(path: str, problem: str) -> SituationError:
    return SituationError(f"{path}: {problem}")


def _tiles(text: str, path: str, rules: RuleSet) -> list[int]:
    try:
        tiles = parse_tiles(text)
    except InvalidNotationError as exc:
        raise _fail(path, str(exc)) from None
    for t in tiles:
        if t not in rules.faces:
            raise _fail(path, f"{tile_name(t)} is not a tile of {rules.name}")
    return tiles


def _one_tile(text: str, path: str, rules: RuleSet) -> int:
    tiles = _tiles(text, path, rules)
    if len(tiles) != 1:
        raise _fail(path, f"expected exactly one tile, got {len(tiles)}")
    return tiles[0]


def _seat_set(seats: list[int], path: str) -> frozenset[int]:
    if len(set(seats)) != len(seats):
        raise _fail(path, "a seat is listed twice")
    return frozenset(seats)


def _meld(data: MeldInput, path: str, seat: int, rules: RuleSet) -> Meld:
    kind = data.kind
    tiles = tuple(sorted(_tiles(data.tiles, f"{path}.tiles", rules)))
    _check_meld_tiles(kind, tiles, f"{path}.tiles", rules)
    source = data.source
    if kind in _CALLED:
        if source is None:
            if kind is MeldKind.BU_GANG:
                raise _fail(
                    f"{path}.from",
                    "a bu_gang always carries 'from': the seat whose discard made the peng"
                    " it extends",
                )
            raise _fail(f"{path}.from", f"a {kind.value} needs the seat it was called from")
        if source == seat:
            raise _fail(f"{path}.from", f"seat {seat} cannot call its own discard")
        if kind is MeldKind.CHI and source != (seat + 3) % 4:
            raise _fail(
                f"{path}.from",
                f"a chi is called from the 上家, seat {(seat + 3) % 4}, not seat {source}",
            )
    elif source is not None:
        raise _fail(f"{path}.from", f"a {kind.value} is not called from anyone")
    if data.treasure and (kind is not MeldKind.PENG or not rules.treasure):
        raise _fail(f"{path}.treasure", "叉宝 is a peng of the treasure face in baicheng")
    return Meld(kind, tiles, source, data.treasure)


def _check_meld_tiles(kind: MeldKind, tiles: tuple[int, ...], path: str, rules: RuleSet) -> None:
    shown = format_counts([tiles.count(t) for t in range(KINDS)]) if tiles else "an empty meld"
    if kind is MeldKind.CHI:
        if not rules.chi:
            raise _fail(path, f"{rules.name} has no chi (D48)")
        first = tiles[0] if tiles else -1
        ok = len(tiles) == 3 and 0 <= first < 27 and first % 9 <= 6
        if not ok or tiles != (first, first + 1, first + 2):
            raise _fail(path, f"a chi is three consecutive tiles of one suit, not {shown}")
    elif kind is MeldKind.XUANFENG:
        if not rules.xuanfeng:
            raise _fail(path, f"{rules.name} has no 旋风杠")
        if len(tiles) < 3 or any(t not in DRAGONS for t in tiles) or len(set(tiles)) != 3:
            raise _fail(path, f"a xuanfeng is C F P plus any added dragons, not {shown}")
    else:
        size = 3 if kind is MeldKind.PENG else 4
        if len(tiles) != size or len(set(tiles)) != 1:
            raise _fail(path, f"a {kind.value} is {size} identical tiles, not {shown}")


def _seat(data: SeatInput, path: str, index: int, rules: RuleSet) -> Seat:
    counts = [0] * KINDS
    for t in _tiles(data.concealed, f"{path}.concealed", rules):
        counts[t] += 1
    melds = tuple(_meld(m, f"{path}.melds[{i}]", index, rules) for i, m in enumerate(data.melds))
    if max(counts) > 4:
        raise _fail(f"{path}.concealed", "a fifth copy of a face")
    return Seat(bytes(counts), melds)


def _build(data: SituationInput) -> Situation:
    """The `Situation` of a well-shaped input, once what a shape cannot say is checked."""
    try:
        preset = find_rules(data.rules)
    except ValueError as exc:
        raise _fail("rules", str(exc)) from None
    try:
        rules, options = configure(preset, data.options.given())
    except OptionError as exc:
        raise _fail("options", str(exc)) from None
    win_tile = _one_tile(data.win_tile, "win_tile", rules)
    seats = tuple(_seat(s, f"seats[{i}]", i, rules) for i, s in enumerate(data.seats))
    treasure = None if data.treasure is None else _one_tile(data.treasure, "treasure", rules)
    if isinstance(data.retired_treasure, str):
        retired = tuple(_tiles(data.retired_treasure, "retired_treasure", rules))
    else:
        retired = tuple(
            _one_tile(v, f"retired_treasure[{i}]", rules)
            for i, v in enumerate(data.retired_treasure)
        )
    if not rules.treasure and (treasure is not None or retired):
        raise _fail("treasure", f"{rules.name} has no treasure tile; use null")
    declared = tuple(data.declared_ready)
    if any(declared) and not rules.declare_ready:
        raise _fail("declared_ready", f"{rules.name} has no 报听 declaration")
    won = _seat_set(data.won, "won")
    fenzhang = _seat_set(data.fenzhang_drawn, "fenzhang_drawn")
    win_by, source = data.win_by, data.source
    if win_by.has_discarder:
        if source is None:
            raise _fail("from", f"a {win_by.value} win needs the seat it came from")
        if source == data.winner:
            raise _fail("from", "the winner cannot win on its own discard")
    elif source is not None:
        raise _fail("from", f"a {win_by.value} win has no 'from'")

    situation = Situation(
        rules=rules,
        options=options,
        base=data.base,
        dealer=data.dealer,
        winner=data.winner,
        win_tile=win_tile,
        win_by=win_by,
        source=source,
        after_kong=data.after_kong,
        treasure=treasure,
        retired_treasure=retired,
        declared_ready=declared,
        seats=seats,
        won=won,
        last_tile=data.last_tile,
        first_draw=data.first_draw,
        fenzhang_drawn=fenzhang,
    )
    _check_consistency(situation)
    return situation


def _check_consistency(s: Situation) -> None:
    """Rules across fields: how the win came, tile counts per seat and over the table."""
    rules = s.rules
    if s.win_by in (WinBy.TREASURE, WinBy.FENZHANG) and not rules.treasure:
        raise _fail("win_by", f"{rules.name} has no {s.win_by.value} wins")
    if s.win_by is WinBy.TREASURE and (s.treasure is None or s.win_tile != s.treasure):
        raise _fail("win_tile", "a treasure win is on the treasure face")
    if s.after_kong and s.win_by in (WinBy.ROBBED_KONG, WinBy.FENZHANG):
        raise _fail("after_kong", f"a {s.win_by.value} win is never after a kong (D69)")
    if s.win_by is WinBy.ROBBED_KONG:
        assert s.source is not None
        robbed = [
            m
            for m in s.seats[s.source].melds
            if (m.kind is MeldKind.PENG and m.face == s.win_tile)
            or (m.kind is MeldKind.XUANFENG and s.win_tile in DRAGONS)
        ]
        if not robbed:
            raise _fail("from", f"seat {s.source} has no peng of {tile_name(s.win_tile)} to add to")
    if s.won and not rules.multiple_winners:
        raise _fail("won", f"{rules.name} has one winner per hand")
    if s.winner in s.won:
        raise _fail("won", "the winner cannot have won already")
    if len(s.won) > 2 and not s.win_by.has_discarder:
        # a fourth wins only beside the third, on one discard or robbed kong (D80)
        raise _fail("won", "the hand ends at three winners, but for a 一炮多响 (D80)")
    if s.fenzhang_drawn and (s.win_by not in _DURING_FENZHANG or s.after_kong):
        raise _fail("fenzhang_drawn", "only during 分张: a fenzhang or treasure win on its draw")
    if s.winner in s.fenzhang_drawn:
        raise _fail("fenzhang_drawn", "the winner's 分张 tile is the winning tile")
    if s.first_draw and (s.win_by is not WinBy.SELF_DRAW or s.after_kong):
        raise _fail("first_draw", "天胡 / 地胡 are self-draws on the first tiles")
    if s.first_draw and any(m.opens for seat in s.seats for m in seat.melds):
        raise _fail("first_draw", "no call may come before a first-draw win")
    que = s.options.que
    for i, seat in enumerate(s.seats):
        path = f"seats[{i}]"
        size = sum(seat.concealed) + 3 * len(seat.melds)
        allowed = {13}
        if i in s.fenzhang_drawn or i in s.won:
            allowed.add(14)
        if size not in allowed:
            want = " or ".join(str(n) for n in sorted(allowed))
            who = "the winner without the winning tile" if i == s.winner else f"seat {i}"
            raise _fail(
                f"{path}.concealed",
                f"{sum(seat.concealed)} concealed tiles and {len(seat.melds)} melds make "
                f"{size}; {who} holds {want} (3 per meld)",
            )
        for j, meld in enumerate(seat.melds):
            if meld.treasure and meld.face not in (s.treasure, *s.retired_treasure):
                raise _fail(f"{path}.melds[{j}].treasure", "叉宝 is a peng of a treasure face")
            if que is not None and meld.face < 27 and meld.face // 9 == que[i]:
                raise _fail(f"{path}.melds[{j}]", "no peng or kong of one's 缺 suit (D48)")
        if s.declared_ready[i]:
            _check_declared(s, i, path)
    _check_fifth_copies(s)
    if s.after_kong:
        konger = s.winner if s.source is None else s.source
        if not any(_replaced(m) for m in s.seats[konger].melds):
            who = "the winner" if s.source is None else "the discarder"
            raise _fail(
                "after_kong",
                f"{who}, seat {konger}, has no kong meld (D69: a replacement win follows the"
                " winner's kong, 杠上炮 the discarder's)",
            )


_DURING_FENZHANG: Final = (WinBy.FENZHANG, WinBy.TREASURE)


def _replaced(meld: Meld) -> bool:
    """Whether making ``meld`` drew a replacement tile."""
    return meld.kind in _REPLACED or (meld.kind is MeldKind.XUANFENG and len(meld.tiles) > 3)


def _check_declared(s: Situation, seat: int, path: str) -> None:
    """报听 needs exactly one winning face (D32), and the lock keeps it so."""
    hand = s.seats[seat]
    concealed = hand.concealed
    if sum(concealed) % 3 != 1:
        raise _fail(f"declared_ready[{seat}]", "a declared hand holds 13 tiles")
    if not declarable(s.rules, concealed, hand.melds):
        found = wait_set(s.rules, concealed, hand.melds)
        raise _fail(
            f"declared_ready[{seat}]",
            f"{path} {format_counts(concealed)} waits on {len(found)} faces; 报听 needs one (D32)",
        )


def _check_fifth_copies(s: Situation) -> None:
    total = [0] * KINDS
    for seat in s.seats:
        for t in range(KINDS):
            total[t] += seat.concealed[t]
        for meld in seat.melds:
            for t in meld.tiles:
                total[t] += 1
    total[s.win_tile] += 1
    for indicator in (s.treasure, *s.retired_treasure):
        if indicator is not None:
            total[indicator] += 1
    for t in range(KINDS):
        if total[t] > 4:
            raise _fail(
                "seats",
                f"{total[t]} copies of {tile_name(t)} across the seats, melds, winning tile "
                "and treasure indicators; a face has 4",
            )
