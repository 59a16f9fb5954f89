"""Hand analysis: win check, shanten, waits, wait shapes and decompositions.

Every function takes a hand as notation (``"123m456p789s11z"``) or as 34 counts; a
``bytes`` of 34 counts is the fast path (lists and tuples are converted). The hand is
the *concealed* tiles: exposed melds are already fixed, so a hand of ``14 - 3k`` tiles
(``13 - 3k`` before its last tile) has ``k`` melds laid down and needs ``4 - k`` more.

Analysis is independent of any rule set; what a rule set allows is a `Shapes` value:
seven pairs, whether a quad counts as two of them, thirteen orphans, and baicheng's
中发白 set as a meld. The work is done by table lookups (`fangcheng.analysis.tables`): one
dict probe per suit, its key cut from the hand by one `struct` unpack. Where the package
was installed with a C compiler, the win check, shanten, waits, draw and discard shanten
run in a compiled kernel over dense copies of the same tables (``_kernel.c``, about 17 MB
and a few milliseconds at import), 2.5–12× faster a call, and so do the standard readings
of `decompositions` (by the walk of its Python code, 2× faster); the Python code stays as
the fallback and as the kernel's reference (``tests/test_analysis_kernel.py``). Its dicts
take a quarter of a second to build, so they are built on its first call (`_dicts`),
which a process with the kernel seldom makes.
"""

from __future__ import annotations

import itertools
import struct
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from enum import Enum, IntEnum
from functools import cache
from typing import Final, NamedTuple, TypeAlias

from fangcheng.analysis import _fast, tables
from fangcheng.tiles.notation import (
    KINDS,
    TERMINALS_AND_HONOURS,
    TileCountError,
    check_counts,
    format_counts,
    parse_tiles,
)

__all__ = [
    "CLASSIC",
    "Arrangement",
    "Form",
    "Group",
    "GroupKind",
    "Hand",
    "Shapes",
    "WaitShape",
    "decompositions",
    "discard_shanten",
    "draw_shanten",
    "is_win",
    "shanten",
    "shanten_flush",
    "shanten_seven_pairs",
    "shanten_standard",
    "shanten_thirteen_orphans",
    "wait_shapes",
    "waits",
]

Hand: TypeAlias = "str | bytes | Sequence[int]"


@dataclass(frozen=True, slots=True, kw_only=True)
class Shapes:
    """Which winning shapes a rule set allows, beyond four melds and a pair."""

    seven_pairs: bool = True
    #: A quad counts as two of the seven pairs (Sichuan 龙七对).
    quad_pairs: bool = False
    thirteen_orphans: bool = True
    #: 中发白 (one each of C, F, P) is a meld (baicheng).
    dragon_set: bool = False


#: Standard form, seven distinct pairs and thirteen orphans (the riichi defaults).
CLASSIC: Final = Shapes()
_STANDARD_ONLY: Final = {
    dragons: Shapes(seven_pairs=False, thirteen_orphans=False, dragon_set=dragons)
    for dragons in (False, True)
}


class Form(Enum):
    STANDARD = "standard"
    SEVEN_PAIRS = "seven_pairs"
    THIRTEEN_ORPHANS = "thirteen_orphans"


class GroupKind(IntEnum):
    PAIR = 0
    PUNG = 1
    CHOW = 2
    DRAGONS = 3  # 中发白, one each of P F C (baicheng)
    ORPHANS = 4  # the thirteen orphans, as one group


class Group(NamedTuple):
    """One block of a decomposition; ``tile`` is its lowest tile."""

    kind: GroupKind
    tile: int

    def tiles(self) -> tuple[int, ...]:
        if self.kind is GroupKind.PAIR:
            return (self.tile, self.tile)
        if self.kind is GroupKind.PUNG:
            return (self.tile,) * 3
        if self.kind is GroupKind.CHOW:
            return (self.tile, self.tile + 1, self.tile + 2)
        if self.kind is GroupKind.DRAGONS:
            return (31, 32, 33)
        return TERMINALS_AND_HONOURS

    def __repr__(self) -> str:
        from fangcheng.tiles.notation import format_tiles

        return f"{self.kind.name.lower()}({format_tiles(self.tiles())})"


class Arrangement(NamedTuple):
    """One way to read a complete concealed hand: its groups, pair included."""

    form: Form
    groups: tuple[Group, ...]

    @property
    def pair(self) -> int | None:
        """The face of the pair (for thirteen orphans: the doubled face)."""
        for g in self.groups:
            if g.kind is GroupKind.PAIR:
                return g.tile
        return None


class WaitShape(Enum):
    """Where the winning tile sits in a decomposition."""

    EDGE = "边"  # the 3 of 1-2-3 or the 7 of 7-8-9
    CLOSED = "坎"  # the middle of a chow
    TWO_SIDED = "两面"  # an open end of a chow
    SINGLE = "单吊"  # one tile of the pair
    #: 单吊 on the end of a four-tile run (1234m waiting 1m/4m): 两头吊.
    SINGLE_RUN_END = "两头吊"
    PUNG = "对倒"  # completes a pung from a pair (two pairs waiting)
    DRAGONS = "中发白"  # the missing dragon of a 中发白 set


# Enum members looked up once: reading one off its class costs ~0.15 µs on Python 3.11,
# and decompositions and wait shapes are found for every win scored.
_STANDARD: Final = Form.STANDARD
_PAIR: Final = GroupKind.PAIR
_PUNG: Final = GroupKind.PUNG
_CHOW: Final = GroupKind.CHOW
_DRAGON_SET: Final = GroupKind.DRAGONS
_ORPHANS: Final = GroupKind.ORPHANS
#: Each face's pair, built once (seven pairs reads seven of them).
_PAIRS: Final = tuple(Group(_PAIR, t) for t in range(KINDS))
_WAIT_SHAPES: Final = tuple(WaitShape)
#: Every set of wait shapes by bit mask (bit i: ``_WAIT_SHAPES[i]``): `shapes_in` names its
#: finding by bits, since hashing an enum member is a Python-level call.
_SHAPE_SETS: Final = tuple(
    frozenset(w for i, w in enumerate(_WAIT_SHAPES) if mask >> i & 1)
    for mask in range(1 << len(_WAIT_SHAPES))
)
_BIT: Final = {w: 1 << i for i, w in enumerate(_WAIT_SHAPES)}
_EDGE_BIT: Final = _BIT[WaitShape.EDGE]
_CLOSED_BIT: Final = _BIT[WaitShape.CLOSED]
_TWO_SIDED_BIT: Final = _BIT[WaitShape.TWO_SIDED]
_SINGLE_BIT: Final = _BIT[WaitShape.SINGLE]
_RUN_END_BIT: Final = _BIT[WaitShape.SINGLE_RUN_END]
_PUNG_BIT: Final = _BIT[WaitShape.PUNG]
_DRAGONS_BIT: Final = _BIT[WaitShape.DRAGONS]
#: Named tuples built with tuple.__new__, skipping their Python-level __new__.
_new: Final = tuple.__new__


# --- tables ----------------------------------------------------------------------------

#: The compiled kernel (`fangcheng.analysis._fast`), its tables copied from the file's
#: arrays, or None: every function below then runs its Python code, which is also the
#: kernel's reference.
_K = _fast.kernel(tables.read())
#: The same, for the bots' own measures in it (`fangcheng.players.bots`), tables loaded.
KERNEL: Final = _K
if _K is not None:  # its decompositions hand back these very groups (kind × 34 + tile)
    _K.load_groups(tuple(Group(kind, t) for kind in GroupKind for t in range(KINDS)))
_INCOMPLETE: Final = tables.INCOMPLETE
_W0: Final = tables.W0_SHIFT
_W1: Final = tables.W1_SHIFT
_ID: Final = tables.ID_SHIFT
_COUNT: Final = tables.COUNT_SHIFT
_WIN_MASK: Final = (1 << _COUNT) - 1

# The tables as dicts, for the Python code: empty until `_dicts` fills them, which every
# Python path that reads them calls first (``_T or _dicts()``).
_T: tables.Tables | None = None
_SUIT: dict[bytes, int] = {}
_SUIT_WAITS: dict[bytes, int] = {}
_TWO_SUITS: list[int] = []
_N_SUIT = 0
_WIN_SUIT: dict[bytes, int] = {}
_WIN_HONOURS: dict[bytes, int] = {}
_WIN_DRAGONS: dict[bytes, int] = {}


def _complete(entries: dict[bytes, int]) -> dict[bytes, int]:
    """The win code (pair + 16 × melds) of each complete component: the win check's
    tables, a twentieth of the full ones, so their probes mostly hit the CPU cache."""
    return {k: e & _WIN_MASK for k, e in entries.items() if e & _WIN_MASK < tables.NOT_COMPLETE}


def _dicts() -> tables.Tables:
    """The tables as dicts (`tables.load`) and what the Python code derives from them,
    built on the first call: the module's globals above, then `_AFTER`."""
    global _T, _SUIT, _SUIT_WAITS, _TWO_SUITS, _N_SUIT, _WIN_SUIT, _WIN_HONOURS, _WIN_DRAGONS
    if _T is not None:
        return _T
    t = tables.load()
    _SUIT, _SUIT_WAITS, _TWO_SUITS, _N_SUIT = t.suit.entries, t.suit.waits, t.two_suits, t.suit.size
    _WIN_SUIT = _complete(_SUIT)
    _WIN_HONOURS = _complete(t.honours.component.entries)
    _WIN_DRAGONS = _complete(t.dragon_set.component.entries)
    rows = ((t.honours, _rows(t.honours)), (t.dragon_set, _rows(t.dragon_set)))
    _AFTER.update({1: _after(rows), -1: _after(rows)})
    _MASK_TILES.update(
        (base, [tuple(base + i for i in range(9) if mask >> i & 1) for mask in range(512)])
        for base in (0, 9, 18, 27)
    )
    _T = t
    return t


_NO_WIN: Final = 1000
#: One pair and k melds: the complete concealed hands of 14 - 3k tiles.
_WIN_CODES: Final = frozenset(16 * melds + 1 for melds in range(5))
_LEGAL_COUNTS: Final = bytes(range(5))
#: A hand's three suits and honours as four ``bytes`` keys, in one C call.
_SPLIT: Final = struct.Struct("9s9s9s7s").unpack
_NONE_OR_ONE: Final = bytes(range(2))
_EVEN_COUNTS: Final = bytes((0, 2, 4))

#: The terminals and honours in the order `_orphan_counts` reads them.
_ORPHAN_FACES: Final = (0, 9, 18, 8, 17, 26, 27, 28, 29, 30, 31, 32, 33)
_ORPHAN_SET: Final = frozenset(TERMINALS_AND_HONOURS)

#: For each component offset, wait mask -> the faces it names (`_dicts` fills it: only
#: the Python code's waits read it).
_MASK_TILES: Final[dict[int, list[tuple[int, ...]]]] = {}


# --- input -----------------------------------------------------------------------------


def _counts(hand: Hand) -> bytes:
    """A hand as 34 count bytes, checked: no face above four."""
    if isinstance(hand, str):
        counts = [0] * KINDS
        for t in parse_tiles(hand):
            counts[t] += 1
        if max(counts) > 4:
            check_counts(counts, f"hand {hand!r}")
        return bytes(counts)
    if len(hand) != KINDS:
        raise TileCountError(f"a hand is 34 counts (one per face), got {len(hand)}")
    try:
        # bytes() copies the raw memory of a buffer (a numpy array, an array.array), so
        # anything but bytes, a list or a tuple is read item by item.
        out = bytes(hand if type(hand) in (bytes, list, tuple) else list(hand))
    except (ValueError, TypeError):
        out = b""
    if not out or max(out) > 4:
        check_counts(list(hand))
    if not out:
        raise TypeError(f"a hand's counts are integers, got {list(hand)!r}")
    return out


def _checked(hand: Hand, rest: tuple[int, ...], what: str) -> tuple[bytes, int]:
    """The hand as count bytes and its tile count, which must be ``rest`` mod 3, ≤ 14."""
    h = hand if type(hand) is bytes and len(hand) == KINDS else _counts(hand)
    if h.translate(None, _LEGAL_COUNTS):
        raise _bad_counts(h)
    n = _tile_count(h)
    if n % 3 not in rest or n > 14:
        _check_size(n, h, rest, what)
    return h, n


def _tile_count(h: bytes) -> int:
    """The sum of a hand's 34 counts in two C calls: 256 ≡ 1 (mod 255), and the sum of
    legal counts is at most 136."""
    return int.from_bytes(h, "little") % 255


def _orphan_counts(h: bytes) -> bytes:
    """The counts of the thirteen orphans' faces, in the order of `_ORPHAN_FACES`."""
    return h[0:27:9] + h[8:27:9] + h[27:34]


def _meld_counts(melds: Iterable[str | Sequence[int]]) -> list[int]:
    used = [0] * KINDS
    for meld in melds:
        for t in parse_tiles(meld) if isinstance(meld, str) else meld:
            used[t] += 1
    return used


# --- win check -------------------------------------------------------------------------


def _bad_counts(hand: Hand) -> TileCountError:
    """The error for a hand whose counts no table holds: a fifth copy, or too many tiles."""
    h = _counts(hand)  # raises for a fifth copy
    return TileCountError(f"hand {format_counts(h)} has {sum(h)} tiles; a hand has at most 14")


def _check_size(total: int, h: bytes, rest: tuple[int, ...], what: str) -> int:
    if total % 3 not in rest or total > 14:
        ok = " or ".join({1: "13 - 3k", 2: "14 - 3k"}[r] for r in rest)
        raise TileCountError(
            f"{what} needs {ok} concealed tiles (k melds laid down); "
            f"hand {format_counts(h)} has {total}"
        )
    return total


def is_win(hand: Hand, *, shapes: Shapes = CLASSIC) -> bool:
    """Whether the concealed hand (``14 - 3k`` tiles) is complete.

    >>> is_win("123m456p789s11122z")
    True
    """
    h = hand if type(hand) is bytes and len(hand) == KINDS else _counts(hand)
    if _K is not None:
        found: bool | None = _K.is_win1(
            h, shapes.seven_pairs, shapes.quad_pairs, shapes.thirteen_orphans, shapes.dragon_set
        )
        if found is not None:
            return found
    _T or _dicts()
    m, p, s, z = _SPLIT(h)
    honours = _WIN_HONOURS if shapes is CLASSIC or not shapes.dragon_set else _WIN_DRAGONS
    # A component missing from the tables (incomplete) adds _NO_WIN: no win code then.
    code = (
        _WIN_SUIT.get(m, _NO_WIN)
        + _WIN_SUIT.get(p, _NO_WIN)
        + _WIN_SUIT.get(s, _NO_WIN)
        + honours.get(z, _NO_WIN)
    )
    if code in _WIN_CODES:
        return True
    # Not a standard win: check the hand is one before looking at the other forms.
    if h.translate(None, _LEGAL_COUNTS):
        raise _bad_counts(h)
    n = int.from_bytes(h, "little") % 255  # as `_tile_count`, inline on this hot path
    if n != 14:
        _check_size(n, h, (2,), "a win")
        return False
    # Seven pairs hold no single (and no three unless quads count); thirteen orphans
    # hold every honour. A byte search rules most hands out of both.
    if 1 not in h and shapes.seven_pairs:
        return h.count(2) == 7 or (shapes.quad_pairs and 3 not in h)
    if shapes.thirteen_orphans and 0 not in z:
        orphans = _orphan_counts(h)
        return 0 not in orphans and sum(orphans) == 14
    return False


# --- shanten ---------------------------------------------------------------------------


_NO_CHANGE: Final = 99  # reported for a face that cannot be drawn (four held) or discarded
_FAR: Final = _NO_CHANGE + 1  # the same, as shanten + 1


def _standard(
    h: bytes, dragon_set: bool, rest: tuple[int, ...] = (1, 2), melds: int | None = None
) -> tuple[int, int]:
    """(standard-form shanten, tile count) of a checked hand, toward ``melds`` melds and a
    pair (by default as many melds as its tile count holds)."""
    t = _T or _dicts()
    honours = t.dragon_set if dragon_set else t.honours
    m, p, s, z = _SPLIT(h)
    try:
        a, b, c, d = _SUIT[m], _SUIT[p], _SUIT[s], honours.component.entries[z]
    except KeyError:
        raise _bad_counts(h) from None
    n = (a + b + c + d) >> _COUNT & 63
    if n % 3 not in rest or n > 14:
        _check_size(n, h, rest, "shanten")
    two = _TWO_SUITS[(a >> _ID) * _N_SUIT + (b >> _ID)]
    joined = honours.pairs[(c >> _ID) * honours.component.size + (d >> _ID)]
    target = n // 3 if melds is None else melds
    return honours.final[(two * honours.size + joined) * 5 + target] - 1, n


def shanten_standard(hand: Hand, *, shapes: Shapes = CLASSIC) -> int:
    """Shanten of the four-melds-and-a-pair form (-1: complete, 0: ready)."""
    h = hand if type(hand) is bytes and len(hand) == KINDS else _counts(hand)
    if _K is not None:
        found: int | None = _K.shanten1(h, False, False, False, shapes.dragon_set)
        if found is not None:
            return found
    return _standard(h, shapes.dragon_set)[0]


def shanten_flush(hand: Hand, suit: int, *, honours: bool = False, shapes: Shapes = CLASSIC) -> int:
    """Standard-form shanten toward a flush of ``suit`` (0 m, 1 p, 2 s), with honours
    allowed too if ``honours`` (a half flush). Tiles of other faces are set aside: each
    must be discarded, and a tile of the flush drawn in its place.

    >>> shanten_standard("123m456p789s1122z"), shanten_flush("123m456p789s1122z", 0, honours=True)
    (0, 6)
    """
    h, n = _checked(hand, (1, 2), "flush shanten")
    kept = (int.from_bytes(h) & _FLUSH_FACES[suit, honours]).to_bytes(KINDS)
    return _standard(kept, shapes.dragon_set, (0, 1, 2), n // 3)[0]


#: For `shanten_flush`: by (suit, honours too), a mask keeping those faces' count bytes.
_FLUSH_FACES: Final = {
    (suit, honours): int.from_bytes(
        bytes(255 if t // 9 == suit or (honours and t >= 27) else 0 for t in range(KINDS))
    )
    for suit in range(3)
    for honours in (False, True)
}


# Both forms count faces with C-level bytes methods: deleting the 0 and 1 bytes leaves
# one byte per face held two or more times.


def _seven_pairs(h: bytes, quad_pairs: bool, below: int = _NO_CHANGE) -> int:
    """The form's shanten; a hand whose pairs alone show it is ``below`` or more gets that
    bound instead, without the second count (most hands hold too few pairs to matter)."""
    pairs = len(h.translate(None, _NONE_OR_ONE))
    least = 6 - pairs * (2 if quad_pairs else 1)  # every pair a quad, no face missing
    if least >= below:
        return least
    if quad_pairs:
        return 6 - pairs - h.count(4)
    kinds = KINDS - h.count(0)
    return 6 - pairs + (7 - kinds if kinds < 7 else 0)


def _thirteen_orphans(h: bytes) -> int:
    orphans = _orphan_counts(h)
    return orphans.count(0) - (1 if orphans.translate(None, _NONE_OR_ONE) else 0)


def shanten_seven_pairs(hand: Hand, *, shapes: Shapes = CLASSIC) -> int:
    """Shanten toward seven pairs (distinct, or with quads as two pairs)."""
    h = hand if type(hand) is bytes and len(hand) == KINDS else _counts(hand)
    if _standard(h, False)[1] < 13:
        raise TileCountError("seven pairs needs a closed hand of 13 or 14 tiles")
    return _seven_pairs(h, shapes.quad_pairs)


def shanten_thirteen_orphans(hand: Hand) -> int:
    """Shanten toward thirteen orphans."""
    h = hand if type(hand) is bytes and len(hand) == KINDS else _counts(hand)
    if _standard(h, False)[1] < 13:
        raise TileCountError("thirteen orphans needs a closed hand of 13 or 14 tiles")
    return _thirteen_orphans(h)


def shanten(hand: Hand, *, shapes: Shapes = CLASSIC) -> int:
    """The least shanten over the forms ``shapes`` allows (-1: complete, 0: ready).

    >>> shanten("123m456p789s1122z")
    0
    """
    h = hand if type(hand) is bytes and len(hand) == KINDS else _counts(hand)
    if _K is not None:
        found: int | None = _K.shanten1(
            h, shapes.seven_pairs, shapes.quad_pairs, shapes.thirteen_orphans, shapes.dragon_set
        )
        if found is not None:
            return found
    best, n = _standard(h, shapes.dragon_set)
    if n >= 13 and best > -1:
        if shapes.seven_pairs and (pairs := _seven_pairs(h, shapes.quad_pairs, best)) < best:
            best = pairs
        # Each honour face not held costs one draw toward thirteen orphans (one of them
        # may be saved by the pair), so that count often rules the form out unread.
        if shapes.thirteen_orphans and h.count(0, 27) <= best:
            best = min(best, _thirteen_orphans(h))
    return best


class _Rows(NamedTuple):
    """The tables of one honours kind re-laid for `bytes.translate`, which maps every
    byte of a string through a 256-byte row in one C call. A component's neighbours (its
    id after one more or one fewer of each face) are a ``bytes`` of ids, `_NO_ID`
    standing for no such hand; translating them through these rows gives the hand's
    shanten + 1 after each change, one byte each (`_FAR`: no such hand)."""

    two: tuple[bytes, ...]  # per suit id: other suit id -> two-suit id
    joined_by_suit: tuple[bytes, ...]  # per honours id: suit id -> joined id
    joined_by_honours: tuple[bytes, ...]  # per suit id: honours id -> joined id
    by_two: tuple[bytes, ...]  # per joined id * 5 + melds: two-suit id -> shanten + 1
    by_joined: tuple[bytes, ...]  # per two-suit id * 5 + melds: joined id -> shanten + 1


#: In a row of ids, the id of no hand; rows of shanten + 1 map it (and any id past their
#: table) to `_FAR`.
_NO_ID: Final = 255
#: What `_neighbour_ids` finds of a component: its id, its neighbours' ids, its tile count.
_Neighbours: TypeAlias = tuple[int, bytes, int]


def _row(values: Iterable[int], fill: int) -> bytes:
    """A translate row: the values, then ``fill`` up to 256 bytes."""
    row = bytes(values)
    return row + bytes((fill,)) * (256 - len(row))


def _rows(honours: tables.Honours) -> _Rows:
    n_suit, n_hon, size, final = _N_SUIT, honours.component.size, honours.size, honours.final
    n_two = len(final) // (size * 5)
    pairs = honours.pairs
    return _Rows(
        two=tuple(_row(_TWO_SUITS[i * n_suit : (i + 1) * n_suit], _NO_ID) for i in range(n_suit)),
        joined_by_suit=tuple(_row(pairs[d::n_hon], _NO_ID) for d in range(n_hon)),
        joined_by_honours=tuple(
            _row(pairs[c * n_hon : (c + 1) * n_hon], _NO_ID) for c in range(n_suit)
        ),
        # The tables hold shanten + 1 already.
        by_two=tuple(
            _row(final[j * 5 + m :: size * 5], _FAR) for j in range(size) for m in range(5)
        ),
        by_joined=tuple(
            _row(final[t * size * 5 + m : (t + 1) * size * 5 : 5], _FAR)
            for t in range(n_two)
            for m in range(5)
        ),
    )


class _After(NamedTuple):
    """What `_standard_after_each` reads for one honours kind and one step."""

    rows: _Rows
    honours: tables.Honours
    suit_memo: dict[bytes, _Neighbours]  # `_neighbour_ids` of suits, for this step
    honours_memo: dict[bytes, _Neighbours]  # the same of the honours


def _after(rows: tuple[tuple[tables.Honours, _Rows], ...]) -> tuple[_After, ...]:
    """The plain honours' and baicheng's (中发白 a meld) `_After` for one step, from
    their ``rows``: the rows are shared by both steps, the memos are the step's own."""
    suit_memo: dict[bytes, _Neighbours] = {}
    return tuple(_After(r, honours, suit_memo, {}) for honours, r in rows)


#: By step (1: a draw, -1: a discard), then by whether 中发白 is a meld (`_dicts` fills it).
_AFTER: Final[dict[int, tuple[_After, ...]]] = {}


def _neighbour_ids(
    key: bytes, entries: dict[bytes, int], memo: dict[bytes, _Neighbours], step: int
) -> _Neighbours:
    """A component's distance-vector id, its ids with one more (``step`` 1) or one fewer
    (-1) of each face, `_NO_ID` where that is no hand, and its tile count. Kept in
    ``memo`` (the caller looks there first): a bot asks about the same suits turn after
    turn."""
    ids = []
    for face, count in enumerate(key):
        changed = count + step
        entry = (
            entries.get(key[:face] + bytes((changed,)) + key[face + 1 :])
            if 0 <= changed <= 4
            else None
        )
        ids.append(_NO_ID if entry is None else entry >> _ID)
    found = memo[key] = (entries[key] >> _ID, bytes(ids), sum(key))
    return found


def _standard_after_each(h: bytes, step: int, dragon_set: bool) -> tuple[bytes, int, int]:
    """Standard-form shanten + 1 after one more (or one fewer) of each face, one byte each,
    by lookups — only the changed tile's component moves; the other three stay joined —
    the hand's own standard shanten, and its tile count."""
    _T or _dicts()
    rows, honours, suit_memo, hon_memo = _AFTER[step][dragon_set]
    two_rows, by_suit, by_honours, by_two, by_joined = rows
    m, p, s, z = _SPLIT(h)
    ia, na, ca = suit_memo.get(m) or _neighbour_ids(m, _SUIT, suit_memo, step)
    ib, nb, cb = suit_memo.get(p) or _neighbour_ids(p, _SUIT, suit_memo, step)
    ic, nc, cc = suit_memo.get(s) or _neighbour_ids(s, _SUIT, suit_memo, step)
    id_, nd, cd = hon_memo.get(z) or _neighbour_ids(z, honours.component.entries, hon_memo, step)
    n = ca + cb + cc + cd
    melds = (n + step) // 3  # the same as n // 3: n is 3k + 1 or 3k + 2
    two = _TWO_SUITS[ia * _N_SUIT + ib]
    joined = honours.pairs[ic * honours.component.size + id_]
    # A change in the first two suits moves the two-suit id; in the others, the joined id.
    # Each pair's ids share their last row, so they are translated through it together.
    suits = na.translate(two_rows[ib]) + nb.translate(two_rows[ia])
    others = nc.translate(by_suit[id_]) + nd.translate(by_honours[ic])
    out = suits.translate(by_two[joined * 5 + melds]) + others.translate(by_joined[two * 5 + melds])
    return out, honours.final[(two * honours.size + joined) * 5 + melds] - 1, n


#: The top bit of each of a hand's 34 bytes, as an integer (`_least`).
_TOP_BITS: Final = int.from_bytes(b"\x80" * KINDS)
#: 255 in each count byte of a thirteen orphans face, as an integer.
_ORPHAN_BYTES: Final = int.from_bytes(bytes(255 if t in _ORPHAN_SET else 0 for t in range(KINDS)))


def _least(a: bytes, b: bytes) -> bytes:
    """The lesser of each pair of bytes (all below 128), in a few whole-integer operations:
    in each byte, (a + 128) - b lies in 1..255, so no borrow crosses into the next byte,
    and its top bit is set exactly where b <= a."""
    x, y = int.from_bytes(a), int.from_bytes(b)
    b_least = ((x | _TOP_BITS) - y & _TOP_BITS) >> 7  # 1 in each byte where b <= a
    return (x ^ (x ^ y) & b_least * 255).to_bytes(KINDS)


def _by_count(h: bytes, shanten: tuple[int, ...]) -> bytes:
    """A form's shanten + 1 after changing each face, when it depends only on how many of
    that face the hand holds: ``shanten`` by count (0 to 4)."""
    return h.translate(_count_row(shanten))


@cache
def _count_row(shanten: tuple[int, ...]) -> bytes:
    """The translate row of `_by_count` (a few dozen occur, each built once)."""
    return _row([s + 1 for s in shanten], _FAR)


def _orphans_by_count(h: bytes, orphans: tuple[int, ...], others: tuple[int, ...]) -> bytes:
    """`_by_count` for thirteen orphans: its faces by ``orphans``, the other faces by
    ``others``."""
    mixed = (
        int.from_bytes(_by_count(h, orphans)) & _ORPHAN_BYTES
        | int.from_bytes(_by_count(h, others)) & ~_ORPHAN_BYTES
    )
    return mixed.to_bytes(KINDS)


#: Bytes of shanten + 1 to bytes of shanten, -1 as 255: signed chars for `_SIGNED`.
_LESS_ONE: Final = bytes((v - 1) % 256 for v in range(256))
_SIGNED: Final = struct.Struct(f"{KINDS}b").unpack


def _signed(after: bytes) -> tuple[int, ...]:
    """Each byte of shanten + 1 as the shanten (-1 for a complete hand)."""
    return _SIGNED(after.translate(_LESS_ONE))


def draw_shanten_bytes(h: bytes, shapes: Shapes) -> bytes:
    """`draw_shanten` of a legal ``13 - 3k`` hand as bytes of shanten + 1, unchecked: what
    the bots read, adding their own terms to it as one integer."""
    if _K is not None:
        found: bytes | None = _K.after1(
            h, shapes.seven_pairs, shapes.quad_pairs, shapes.thirteen_orphans, shapes.dragon_set, 1
        )
        if found is not None:
            return found
    out, standard, n = _standard_after_each(h, 1, shapes.dragon_set)
    # A draw lowers a form's shanten by one at most and never raises the standard one, so
    # a form at least two behind the standard form cannot matter.
    if (
        n == 13
        and shapes.seven_pairs
        and (now := _seven_pairs(h, shapes.quad_pairs, standard + 1)) <= standard
    ):
        # The form's shanten after a draw depends only on how many of the face are held:
        # by count, a new face or a second copy helps (a third only toward a quad pair).
        if shapes.quad_pairs:
            by_count = (now, now - 1, now, now - 1, _NO_CHANGE)
        else:
            kinds = KINDS - h.count(0)
            by_count = (now - (kinds < 7), now - 1, now, now, _NO_CHANGE)
        pairs = _by_count(h, by_count)
        # Ahead of the standard form, this one stays at least as low after every draw.
        out = pairs if now < standard else _least(out, pairs)
    # Thirteen orphans is at least one short per honour face not held, less the pair.
    if (
        n == 13
        and shapes.thirteen_orphans
        and h.count(0, 27) <= standard + 1
        and (now := _thirteen_orphans(h)) <= standard
    ):
        # A new orphan face helps, and a second copy of one while none is paired.
        paired = max(_orphan_counts(h)) >= 2
        orphans = (now - 1, now - (not paired), now, now, _NO_CHANGE)
        out = _least(out, _orphans_by_count(h, orphans, (now,) * 4 + (_NO_CHANGE,)))
    return out


def draw_shanten(hand: Hand, *, shapes: Shapes = CLASSIC) -> tuple[int, ...]:
    """For each face, the shanten of the hand after drawing it (``13 - 3k`` tiles in).

    The tiles that help are those whose entry is below ``shanten(hand)`` (ukeire); a
    face already held four times gets 99.

    >>> s = draw_shanten("123m456p789s1234z")
    >>> [t for t in range(34) if s[t] < shanten("123m456p789s1234z")]
    [27, 28, 29, 30]
    """
    h, _ = _checked(hand, (1,), "draw shanten")
    return _signed(draw_shanten_bytes(h, shapes))


def discard_shanten(hand: Hand, *, shapes: Shapes = CLASSIC) -> tuple[int, ...]:
    """For each face, the shanten of the hand after discarding one (``14 - 3k`` tiles in);
    99 for a face not held.

    >>> s = discard_shanten("123m456p789s11223z")  # keep EE SS, let the W go
    >>> [t for t in range(34) if s[t] == 0]
    [29]
    """
    h, n = _checked(hand, (2,), "discard shanten")
    if _K is not None:
        return _signed(
            _K.after1(
                h,
                shapes.seven_pairs,
                shapes.quad_pairs,
                shapes.thirteen_orphans,
                shapes.dragon_set,
                -1,
            )
        )
    out, standard, _ = _standard_after_each(h, -1, shapes.dragon_set)
    # A discard raises a form's shanten by one at most and never lowers it below the
    # hand's, so a form already behind the worst standard discard cannot matter.
    worst = standard + 1
    if (
        n == 14
        and shapes.seven_pairs
        and (now := _seven_pairs(h, shapes.quad_pairs, worst)) < worst
    ):
        # By count, as in `draw_shanten`: losing a face or breaking a pair costs one.
        if shapes.quad_pairs:
            by_count = (_NO_CHANGE, now, now + 1, now, now + 1)
        else:
            kinds = KINDS - h.count(0)
            by_count = (_NO_CHANGE, now + (kinds <= 7), now + 1, now, now)
        pairs = _by_count(h, by_count)
        # Ahead of the standard form, this one stays at least as low after every discard.
        out = pairs if now < standard else _least(out, pairs)
    if (
        n == 14
        and shapes.thirteen_orphans
        and h.count(0, 27) <= worst
        and (now := _thirteen_orphans(h)) < worst
    ):
        # Losing an orphan face costs one, and so does breaking the only pair of them.
        doubled = len(_orphan_counts(h).translate(None, _NONE_OR_ONE))
        orphans = (_NO_CHANGE, now + 1, now + (doubled == 1), now, now)
        out = _least(out, _orphans_by_count(h, orphans, (_NO_CHANGE,) + (now,) * 4))
    return _signed(out)


# --- waits -----------------------------------------------------------------------------


def _standard_waits(h: bytes, dragon_set: bool) -> tuple[int, ...]:
    t = _T or _dicts()
    hw = (t.dragon_set if dragon_set else t.honours).component.waits
    sw = _SUIT_WAITS
    m, p, s, z = _SPLIT(h)
    a, b, c, d = (
        sw.get(m, _INCOMPLETE),
        sw.get(p, _INCOMPLETE),
        sw.get(s, _INCOMPLETE),
        hw.get(z, _INCOMPLETE),
    )
    words = (a, b, c, d)
    codes = (a & 3, b & 3, c & 3, d & 3)
    short = codes.count(_INCOMPLETE)
    if short == 1:
        pairs = sum(codes) - _INCOMPLETE
        if pairs > 1:
            return ()
        i = codes.index(_INCOMPLETE)
        return _MASK_TILES[9 * i][words[i] >> (_W0 if pairs else _W1) & 511]
    if short == 0 and sum(codes) == 2:  # two pairs: either becomes a pung
        return tuple(
            t for i in range(4) if codes[i] for t in _MASK_TILES[9 * i][words[i] >> _W0 & 511]
        )
    return ()


def waits(
    hand: Hand, *, shapes: Shapes = CLASSIC, melds: Iterable[str | Sequence[int]] = ()
) -> tuple[int, ...]:
    """The faces that complete a ready hand of ``13 - 3k`` concealed tiles, ascending.

    ``melds`` are the exposed melds' tiles: a face whose four copies are all in the
    hand and its melds is no wait. A face whose copies are all visible elsewhere still is
    (RULES.md D1: waits are judged by shape).

    >>> from fangcheng import format_tiles
    >>> format_tiles(waits("1234m"))
    '14m'
    """
    h, n = _checked(hand, (1,), "waits")
    found: tuple[int, ...] | None = None
    if _K is not None:
        found = _K.waits1(
            h, shapes.seven_pairs, shapes.quad_pairs, shapes.thirteen_orphans, shapes.dragon_set
        )
    if found is None:
        found = _shape_waits(h, n, shapes)
    if melds:
        used = _meld_counts(melds)
        total = [a + b for a, b in zip(h, used, strict=True)]
        if max(total) > 4:  # checked face by face only to name the fifth copy
            check_counts(total, "hand and melds")
        found = tuple(t for t in found if h[t] + used[t] < 4)
    return found


def _shape_waits(h: bytes, n: int, shapes: Shapes) -> tuple[int, ...]:
    """`waits` of a checked hand, without melds: the Python reference of the kernel's."""
    found = _standard_waits(h, shapes.dragon_set)
    if n == 13 and (shapes.seven_pairs or shapes.thirteen_orphans):
        extra: set[int] = set()
        if shapes.seven_pairs:
            # Six pairs and a single: the one face held an odd number of times (a three,
            # when quads count as two pairs; never with a quad, when they do not).
            odd = h.translate(None, _EVEN_COUNTS)
            if len(odd) == 1 and (shapes.quad_pairs or (odd == b"\x01" and 4 not in h)):
                extra.add(h.index(odd))
        if shapes.thirteen_orphans and h.count(0, 27) <= 1:  # at most one honour missing
            orphans = _orphan_counts(h)
            missing = orphans.count(0)
            if missing <= 1 and sum(orphans) == 13:
                if missing == 0:
                    extra.update(TERMINALS_AND_HONOURS)
                else:
                    extra.add(_ORPHAN_FACES[orphans.index(0)])
        if extra:
            found = tuple(sorted(extra.union(found)))
    return found


# --- decompositions --------------------------------------------------------------------


@cache
def _component_arrangements(
    key: bytes, base: int, honours: bool, dragon_set: bool
) -> tuple[tuple[Group, ...], ...]:
    """Every split of one component's tiles into groups (at most one pair)."""
    counts = list(key)
    out: list[tuple[Group, ...]] = []

    def walk(start: int, groups: list[Group], paired: bool) -> None:
        i = start
        while i < len(counts) and counts[i] == 0:
            i += 1
        if i == len(counts):
            out.append(tuple(groups))
            return
        if counts[i] >= 3:
            counts[i] -= 3
            walk(i, [*groups, Group(GroupKind.PUNG, base + i)], paired)
            counts[i] += 3
        if counts[i] >= 2 and not paired:
            counts[i] -= 2
            walk(i, [*groups, Group(GroupKind.PAIR, base + i)], True)
            counts[i] += 2
        if not honours and i <= 6 and counts[i + 1] and counts[i + 2]:
            for j in (i, i + 1, i + 2):
                counts[j] -= 1
            walk(i, [*groups, Group(GroupKind.CHOW, base + i)], paired)
            for j in (i, i + 1, i + 2):
                counts[j] += 1
        if dragon_set and i == 4 and counts[5] and counts[6]:
            for j in (4, 5, 6):
                counts[j] -= 1
            walk(i, [*groups, Group(GroupKind.DRAGONS, 31)], paired)
            for j in (4, 5, 6):
                counts[j] += 1

    walk(0, [], False)
    # The walk can find the same groups in two orders (11123: the pair first or the
    # chow first); keep each reading once, as first found.
    readings: dict[tuple[Group, ...], tuple[Group, ...]] = {}
    for groups in out:
        readings.setdefault(tuple(sorted(groups)), groups)
    return tuple(readings.values())


def _standard_readings(h: bytes, dragon_set: bool) -> list[tuple[Group, ...]]:
    """The groups of every standard reading of ``h``, 万 first: the kernel's reference."""
    # The win check also validates a hand that fails it: its counts and its size.
    if not is_win(h, shapes=_STANDARD_ONLY[dragon_set]):
        return []
    # Each complete component's readings all hold the same number of pairs (its tile
    # count fixes it), so every combination is a reading of the hand.
    m, p, s, z = _SPLIT(h)
    return [
        (*a, *b, *c, *d)
        for a, b, c, d in itertools.product(
            _component_arrangements(m, 0, False, False),
            _component_arrangements(p, 9, False, False),
            _component_arrangements(s, 18, False, False),
            _component_arrangements(z, 27, True, dragon_set),
        )
    ]


def decompositions(hand: Hand, *, shapes: Shapes = CLASSIC) -> list[Arrangement]:
    """Every arrangement of a complete concealed hand into melds and a pair.

    The standard readings come first, then seven pairs and thirteen orphans where
    ``shapes`` allows them. An incomplete hand has none.

    >>> [a.groups for a in decompositions("111222333m11p")]  # doctest: +NORMALIZE_WHITESPACE
    [(pung(111m), pung(222m), pung(333m), pair(11p)),
     (chow(123m), chow(123m), chow(123m), pair(11p))]
    """
    h = hand if type(hand) is bytes and len(hand) == KINDS else _counts(hand)
    found = _K.decompose1(h, shapes.dragon_set) if _K is not None else None
    if found is None:  # no kernel, or a hand it leaves to the Python code (which refuses)
        found = _standard_readings(h, shapes.dragon_set)
    out = [_new(Arrangement, (_STANDARD, groups)) for groups in found]
    fourteen = len(out[0].groups) == 5 if out else _tile_count(h) == 14
    if (
        fourteen
        and shapes.seven_pairs
        and 1 not in h
        and (h.count(2) == 7 or (shapes.quad_pairs and 3 not in h))
    ):
        pairs = tuple(_PAIRS[t] for t in range(KINDS) for _ in range(h[t] // 2))
        out.append(Arrangement(Form.SEVEN_PAIRS, pairs))
    if fourteen and shapes.thirteen_orphans and not out:  # it shares no hand with the others
        orphans = _orphan_counts(h)
        if 0 not in orphans and sum(orphans) == 14:
            pair = _ORPHAN_FACES[orphans.index(2)]
            out.append(
                Arrangement(
                    Form.THIRTEEN_ORPHANS,
                    (Group(GroupKind.ORPHANS, 0), Group(GroupKind.PAIR, pair)),
                )
            )
    return out


# --- wait shapes -----------------------------------------------------------------------


def shapes_in(arrangement: Arrangement, tile: int) -> frozenset[WaitShape]:
    """Every position the winning ``tile`` can take in a complete ``arrangement``."""
    found = 0
    groups = arrangement.groups
    for kind, first in groups:
        if kind is _PAIR and first == tile:
            suited = tile < 27 and arrangement.form is _STANDARD
            lo, hi = tile - 3, tile + 1
            run_end = suited and any(
                o.kind is _CHOW and o.tile in (lo, hi) and o.tile // 9 == tile // 9 for o in groups
            )
            found |= _RUN_END_BIT if run_end else _SINGLE_BIT
        elif kind is _PUNG and first == tile:
            found |= _PUNG_BIT
        elif kind is _CHOW and first <= tile <= first + 2:
            offset = tile - first
            if offset == 1:
                found |= _CLOSED_BIT
            elif (offset == 2 and first % 9 == 0) or (offset == 0 and first % 9 == 6):
                found |= _EDGE_BIT
            else:
                found |= _TWO_SIDED_BIT
        elif kind is _DRAGON_SET and tile >= 31:
            found |= _DRAGONS_BIT
        elif kind is _ORPHANS and tile in TERMINALS_AND_HONOURS:
            found |= _SINGLE_BIT
    return _SHAPE_SETS[found]


def wait_shapes(
    hand: Hand, *, shapes: Shapes = CLASSIC, melds: Iterable[str | Sequence[int]] = ()
) -> dict[int, frozenset[WaitShape]]:
    """For each winning face of a ready hand, every wait shape it completes.

    >>> from fangcheng import tile_name
    >>> {tile_name(t): sorted(s.value for s in v) for t, v in wait_shapes("1234m").items()}
    {'1m': ['两头吊'], '4m': ['两头吊']}
    """
    h, _ = _checked(hand, (1,), "wait shapes")
    out: dict[int, frozenset[WaitShape]] = {}
    for t in waits(h, shapes=shapes, melds=melds):
        grown = bytearray(h)
        grown[t] += 1
        found: frozenset[WaitShape] = frozenset()
        for arrangement in decompositions(bytes(grown), shapes=shapes):
            found |= shapes_in(arrangement, t)
        out[t] = found
    return out
