"""The input of one win, as the `fangcheng score` contract gives it, validated.

`load_situation` turns the parsed JSON of ARCHITECTURE.md "Win situation" into a frozen
`Situation`, or raises `SituationError` naming the field path (``seats[2].melds[0].from``)
and the problem. Tiles are ids inside; notation stays at this edge.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import Enum
from operator import attrgetter
from typing import Final

from fangcheng.rules.requirements import declarable, wait_set
from fangcheng.rules.ruleset import OptionError, Options, RuleSet, configure, find_rules
from fangcheng.tiles.melds import Meld, MeldKind
from fangcheng.tiles.notation import (
    DRAGONS,
    KINDS,
    InvalidNotationError,
    format_counts,
    parse_tiles,
    tile_name,
)

__all__ = ["Seat", "Situation", "SituationError", "WinBy", "load_situation"]


_OPENS: Final = attrgetter("opens")


class SituationError(ValueError):
    """Malformed or impossible win input; the message starts with the field path."""


class WinBy(Enum):
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


# --- parsing helpers ---------------------------------------------------------------------

_KEYS: Final = {
    "rules", "options", "base", "dealer", "winner", "win_tile", "win_by", "from",
    "after_kong", "treasure", "retired_treasure", "declared_ready", "seats", "won",
    "last_tile", "first_draw", "fenzhang_drawn",
    # labels of a case file, ignored: its id, a note, and the expected figures
    "id", "note", "expect",
}  # fmt: skip
_REQUIRED: Final = ("rules", "base", "dealer", "winner", "win_tile", "win_by", "seats")
_SEAT_KEYS: Final = {"concealed", "melds"}
_MELD_KEYS: Final = {"kind", "tiles", "from", "treasure"}
_CALLED: Final = {MeldKind.CHI, MeldKind.PENG, MeldKind.MING_GANG, MeldKind.BU_GANG}


def _fail(path: str, problem: str) -> SituationError:
    return SituationError(f"{path}: {problem}")


def _type_name(value: object) -> str:
    return "null" if value is None else type(value).__name__


def _bool(value: object, path: str) -> bool:
    if not isinstance(value, bool):
        raise _fail(path, f"expected true or false, got {_type_name(value)} {value!r}")
    return value


def _int(value: object, path: str, low: int, high: int | None = None) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise _fail(path, f"expected an integer, got {_type_name(value)} {value!r}")
    if value < low or (high is not None and value > high):
        span = f"{low}..{high}" if high is not None else f"≥ {low}"
        raise _fail(path, f"{value} is out of range ({span})")
    return value


def _seat(value: object, path: str) -> int:
    return _int(value, path, 0, 3)


def _list(value: object, path: str) -> list[object]:
    if not isinstance(value, list):
        raise _fail(path, f"expected a list, got {_type_name(value)}")
    return value


def _tiles(value: object, path: str, rules: RuleSet) -> list[int]:
    if not isinstance(value, str):
        raise _fail(path, f"expected tile notation (a string), got {_type_name(value)}")
    try:
        tiles = parse_tiles(value)
    except InvalidNotationError as exc:
        raise _fail(path, str(exc)) from None
    for t in tiles:
        if t not in rules.faces:
            raise _fail(path, f"{tile_name(t)} is not a tile of {rules.name}")
    return tiles


def _one_tile(value: object, path: str, rules: RuleSet) -> int:
    tiles = _tiles(value, path, rules)
    if len(tiles) != 1:
        raise _fail(path, f"expected exactly one tile, got {len(tiles)}")
    return tiles[0]


def _seat_set(value: object, path: str) -> frozenset[int]:
    seats = [_seat(v, f"{path}[{i}]") for i, v in enumerate(_list(value, path))]
    if len(set(seats)) != len(seats):
        raise _fail(path, "a seat is listed twice")
    return frozenset(seats)


def _check_keys(data: Mapping[str, object], allowed: set[str], path: str) -> None:
    for key in data:
        if key not in allowed:
            valid = ", ".join(sorted(allowed))
            raise _fail(f"{path}.{key}", f"unknown key; valid: {valid}")


def _object(value: object, path: str) -> Mapping[str, object]:
    if not isinstance(value, dict):
        raise _fail(path, f"expected an object, got {_type_name(value)}")
    for key in value:
        if not isinstance(key, str):
            raise _fail(path, f"key {key!r} is not a string")
    return value


# --- melds and seats ---------------------------------------------------------------------


def _meld(data: object, path: str, seat: int, rules: RuleSet) -> Meld:
    obj = _object(data, path)
    _check_keys(obj, _MELD_KEYS, path)
    if "kind" not in obj or "tiles" not in obj:
        raise _fail(path, "a meld needs 'kind' and 'tiles'")
    kinds = {k.value: k for k in MeldKind}
    if obj["kind"] not in kinds:
        valid = ", ".join(kinds)
        raise _fail(f"{path}.kind", f"{obj['kind']!r} is not a meld kind; valid: {valid}")
    kind = kinds[str(obj["kind"])]
    tiles = tuple(sorted(_tiles(obj["tiles"], f"{path}.tiles", rules)))
    _check_meld_tiles(kind, tiles, f"{path}.tiles", rules)
    source: int | None = None
    if kind in _CALLED:
        if "from" not in obj:
            raise _fail(f"{path}.from", f"a {kind.value} needs the seat it was called from")
        source = _seat(obj["from"], f"{path}.from")
        if source == seat:
            raise _fail(f"{path}.from", f"seat {seat} cannot call its own discard")
        if kind is MeldKind.CHI and source != (seat + 3) % 4:
            raise _fail(
                f"{path}.from",
                f"a chi is called from the 上家, seat {(seat + 3) % 4}, not seat {source}",
            )
    elif "from" in obj:
        raise _fail(f"{path}.from", f"a {kind.value} is not called from anyone")
    treasure = False
    if "treasure" in obj:
        treasure = _bool(obj["treasure"], f"{path}.treasure")
        if treasure and (kind is not MeldKind.PENG or not rules.treasure):
            raise _fail(f"{path}.treasure", "叉宝 is a peng of the treasure face in baicheng")
    return Meld(kind, tiles, source, treasure)


def _check_meld_tiles(kind: MeldKind, tiles: tuple[int, ...], path: str, rules: RuleSet) -> None:
    shown = format_counts([tiles.count(t) for t in range(KINDS)])
    if kind is MeldKind.CHI:
        if not rules.chi:
            raise _fail(path, f"{rules.name} has no chi (D48)")
        first = tiles[0]
        ok = len(tiles) == 3 and first < 27 and first % 9 <= 6
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


def _seat_data(data: object, path: str, index: int, rules: RuleSet) -> Seat:
    obj = _object(data, path)
    _check_keys(obj, _SEAT_KEYS, path)
    if "concealed" not in obj:
        raise _fail(f"{path}.concealed", "missing")
    concealed = _tiles(obj["concealed"], f"{path}.concealed", rules)
    counts = [0] * KINDS
    for t in concealed:
        counts[t] += 1
    melds = tuple(
        _meld(m, f"{path}.melds[{i}]", index, rules)
        for i, m in enumerate(_list(obj.get("melds", []), f"{path}.melds"))
    )
    if len(melds) > 4:
        raise _fail(f"{path}.melds", f"{len(melds)} melds; a hand has at most four")
    if max(counts) > 4:
        raise _fail(f"{path}.concealed", "a fifth copy of a face")
    return Seat(bytes(counts), melds)


# --- the whole situation -------------------------------------------------------------


def load_situation(data: object) -> Situation:
    """Validate parsed JSON of one win and build the `Situation` (raises `SituationError`)."""
    obj = _object(data, "situation")
    for key in obj:
        if key not in _KEYS:
            raise _fail(key, f"unknown key; valid: {', '.join(sorted(_KEYS))}")
    for key in _REQUIRED:
        if key not in obj:
            raise _fail(key, "missing")
    try:
        preset = find_rules(obj["rules"])  # type: ignore[arg-type]
    except ValueError as exc:
        raise _fail("rules", str(exc)) from None
    try:
        rules, options = configure(preset, _object(obj.get("options", {}), "options"))
    except OptionError as exc:
        raise _fail("options", str(exc)) from None

    base = _int(obj["base"], "base", 1)
    dealer = _seat(obj["dealer"], "dealer")
    winner = _seat(obj["winner"], "winner")
    win_tile = _one_tile(obj["win_tile"], "win_tile", rules)
    by_values = {w.value: w for w in WinBy}
    if obj["win_by"] not in by_values:
        raise _fail("win_by", f"{obj['win_by']!r}; valid: {', '.join(by_values)}")
    win_by = by_values[str(obj["win_by"])]
    after_kong = _bool(obj.get("after_kong", False), "after_kong")
    last_tile = _bool(obj.get("last_tile", False), "last_tile")
    first_draw = _bool(obj.get("first_draw", False), "first_draw")

    raw_seats = _list(obj["seats"], "seats")
    if len(raw_seats) != 4:
        raise _fail("seats", f"expected four seats, got {len(raw_seats)}")
    seats = tuple(_seat_data(s, f"seats[{i}]", i, rules) for i, s in enumerate(raw_seats))

    treasure_value = obj.get("treasure")
    treasure = None if treasure_value is None else _one_tile(treasure_value, "treasure", rules)
    retired: tuple[int, ...] = ()
    if "retired_treasure" in obj:
        value = obj["retired_treasure"]
        if isinstance(value, list):
            retired = tuple(
                _one_tile(v, f"retired_treasure[{i}]", rules) for i, v in enumerate(value)
            )
        else:
            retired = tuple(_tiles(value, "retired_treasure", rules))
    if not rules.treasure and (treasure is not None or retired):
        raise _fail("treasure", f"{rules.name} has no treasure tile; use null")

    declared: tuple[bool, ...] = (False,) * 4
    if "declared_ready" in obj:
        raw = _list(obj["declared_ready"], "declared_ready")
        if len(raw) != 4:
            raise _fail("declared_ready", f"expected four values, got {len(raw)}")
        declared = tuple(_bool(v, f"declared_ready[{i}]") for i, v in enumerate(raw))
        if any(declared) and not rules.declare_ready:
            raise _fail("declared_ready", f"{rules.name} has no 报听 declaration")
    won = _seat_set(obj.get("won", []), "won")
    fenzhang = _seat_set(obj.get("fenzhang_drawn", []), "fenzhang_drawn")

    source: int | None = None
    if win_by.has_discarder:
        if "from" not in obj:
            raise _fail("from", f"a {win_by.value} win needs the seat it came from")
        source = _seat(obj["from"], "from")
        if source == winner:
            raise _fail("from", "the winner cannot win on its own discard")
    elif obj.get("from") is not None:
        raise _fail("from", f"a {win_by.value} win has no 'from'")

    situation = Situation(
        rules=rules,
        options=options,
        base=base,
        dealer=dealer,
        winner=winner,
        win_tile=win_tile,
        win_by=win_by,
        source=source,
        after_kong=after_kong,
        treasure=treasure,
        retired_treasure=retired,
        declared_ready=declared,
        seats=seats,
        won=won,
        last_tile=last_tile,
        first_draw=first_draw,
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
    if len(s.won) > 2:
        raise _fail("won", "the hand ends at three winners")
    if s.fenzhang_drawn and s.win_by is not WinBy.FENZHANG:
        raise _fail("fenzhang_drawn", "only during a 分张 win")
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
