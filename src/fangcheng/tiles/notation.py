"""Tile kinds, tile sets, and the text notation.

Inside fangcheng a tile kind is an ``int`` 0..33 and a hand is a vector of 34 counts:

====  ==========  ==================================
id    notation    tile
====  ==========  ==================================
0-8   ``1m-9m``   万 characters
9-17  ``1p-9p``   饼/筒 dots
18-26 ``1s-9s``   条 bamboo (``1s`` is 幺鸡)
27-30 ``E S W N`` 东 南 西 北 winds (``1z-4z``)
31-33 ``P F C``   白板 发财 红中 dragons (``5z-7z``)
====  ==========  ==================================

Text is accepted in compact groups (``123m456p789sCFP``), one tile at a time
(``1m2m3m``), as ``1z-7z``, as Chinese names (``五万``, ``幺鸡``, ``红中``) and as the
Unicode mahjong glyphs (``🀇``). Output is canonical ASCII: suits in the order m, p, s,
each group's digits ascending, then winds ``ESWN`` and dragons in the customary
中发白 order ``CFP``.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from operator import add, itemgetter, mul
from typing import Final

__all__ = [
    "DRAGONS",
    "HONOURS",
    "KINDS",
    "TERMINALS_AND_HONOURS",
    "TERMINAL_COUNTS",
    "WINDS",
    "InvalidNotationError",
    "TileCountError",
    "counts_of",
    "format_counts",
    "format_tiles",
    "glyph",
    "is_honour",
    "is_terminal_or_honour",
    "parse_counts",
    "parse_tiles",
    "suit_of",
    "tile_from_name",
    "tile_name",
    "tile_set",
    "tiles_of",
]

KINDS: Final = 34
SUITS: Final = "mps"
HONOUR_LETTERS: Final = "ESWNPFC"
WINDS: Final = (27, 28, 29, 30)
DRAGONS: Final = (31, 32, 33)
HONOURS: Final = WINDS + DRAGONS
TERMINALS_AND_HONOURS: Final = (0, 8, 9, 17, 18, 26, *HONOURS)
#: The counts of those thirteen faces, read from a hand of 34 counts.
TERMINAL_COUNTS: Final = itemgetter(*TERMINALS_AND_HONOURS)
#: Canonical output order of the honours: winds, then 中 发 白.
_HONOUR_OUTPUT_ORDER: Final = (27, 28, 29, 30, 33, 32, 31)


class InvalidNotationError(ValueError):
    """Text that is not tile notation: names the offending characters and their position."""


class TileCountError(ValueError):
    """A hand with a fifth copy of a face, or a tile count no hand can have."""


def suit_of(tile: int) -> str:
    """``'m'``, ``'p'``, ``'s'`` or ``'z'`` (honour)."""
    return "mpsz"[tile // 9] if tile < 27 else "z"


def is_honour(tile: int) -> bool:
    return tile >= 27


def is_terminal_or_honour(tile: int) -> bool:
    """么九牌: a 1, a 9, or an honour."""
    return tile >= 27 or tile % 9 in (0, 8)


def tile_name(tile: int) -> str:
    """The canonical notation of one tile: ``'5m'``, ``'E'``, ``'C'``."""
    if not 0 <= tile < KINDS:
        raise ValueError(f"tile id {tile!r} is not in 0..33")
    return _NAMES[tile]


#: Each face's notation, written once: every frame names the drawn tile, the last discard.
_NAMES: Final = tuple(
    f"{t % 9 + 1}{SUITS[t // 9]}" if t < 27 else HONOUR_LETTERS[t - 27] for t in range(KINDS)
)


_GLYPHS: Final = (
    [chr(0x1F007 + i) for i in range(9)]  # 🀇..🀏 characters
    + [chr(0x1F019 + i) for i in range(9)]  # 🀙..🀡 dots
    + [chr(0x1F010 + i) for i in range(9)]  # 🀐..🀘 bamboo
    + [chr(0x1F000 + i) for i in range(4)]  # 🀀..🀃 winds
    + [chr(0x1F006), chr(0x1F005), chr(0x1F004)]  # 🀆 白 🀅 发 🀄 中
)


def glyph(tile: int) -> str:
    """The Unicode mahjong glyph of a tile, for display."""
    return _GLYPHS[tile]


# --- Chinese names -------------------------------------------------------------------

_NUMERALS: Final = {c: i for i, c in enumerate("一二三四五六七八九")} | {"幺": 0, "么": 0}
_SUIT_NAMES: Final = {"万": 0, "萬": 0, "饼": 9, "餅": 9, "筒": 9, "条": 18, "條": 18}
_WORDS: Final = {
    "东": 27, "東": 27, "南": 28, "西": 29, "北": 30,
    "白板": 31, "白": 31, "发财": 32, "發財": 32, "发": 32, "發": 32, "红中": 33, "紅中": 33,
    "中": 33, "幺鸡": 18, "么鸡": 18, "幺雞": 18, "么雞": 18,
}  # fmt: skip
_CJK_INPUT: Final = dict(
    sorted(
        (
            _WORDS | {n + s: _NUMERALS[n] + _SUIT_NAMES[s] for n in _NUMERALS for s in _SUIT_NAMES}
        ).items(),
        key=lambda item: -len(item[0]),
    )
)
_GLYPH_INPUT: Final = {g: i for i, g in enumerate(_GLYPHS)}
#: Separators, and the emoji variation selector that may follow a glyph (🀄️).
_IGNORED: Final = ",\ufe0f\ufe0e"


def tile_from_name(text: str) -> int:
    """One tile from any accepted spelling: ``'5m'``, ``'5z'``, ``'C'``, ``'红中'``, ``'🀄'``."""
    tiles = parse_tiles(text)
    if len(tiles) != 1:
        raise InvalidNotationError(f"{text!r} is {len(tiles)} tiles, expected exactly one")
    return tiles[0]


def parse_tiles(text: str) -> list[int]:
    """Parse notation into tile ids, in the order written.

    Digits wait for the suit letter that ends their group (``m``, ``p``, ``s`` or ``z``);
    ``ESWNPFC`` are honours on their own; spaces are ignored. The result may hold any
    number of tiles; a fifth copy is caught where tiles become a hand (`counts_of`).
    """
    if not isinstance(text, str):
        raise TypeError(f"tile notation must be a str, not {type(text).__name__}")
    tiles: list[int] = []
    pending: list[tuple[int, int]] = []  # (digit, position) waiting for a suit letter
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        if ch.isdigit() and ch.isascii():
            pending.append((int(ch), i))
            i += 1
            continue
        if ch in "mpsz":
            if not pending:
                raise InvalidNotationError(
                    f"suit letter {ch!r} at position {i} of {text!r} has no digits before it"
                )
            for digit, pos in pending:
                if ch == "z" and not 1 <= digit <= 7:
                    raise InvalidNotationError(
                        f"'{digit}z' at position {pos} of {text!r}: honours are 1z..7z"
                    )
                if ch != "z" and digit == 0:
                    raise InvalidNotationError(
                        f"'0{ch}' at position {pos} of {text!r}: suits run 1..9"
                    )
                tiles.append(26 + digit if ch == "z" else (digit - 1) + 9 * SUITS.index(ch))
            pending.clear()
            i += 1
            continue
        if ch.isspace() or ch in _IGNORED:
            i += 1
            continue
        if pending:
            digits = "".join(str(d) for d, _ in pending)
            raise InvalidNotationError(
                f"digits {digits!r} at position {pending[0][1]} of {text!r} are followed by "
                f"{ch!r} at position {i}, not by a suit letter (m, p, s or z)"
            )
        if ch in HONOUR_LETTERS:
            tiles.append(27 + HONOUR_LETTERS.index(ch))
            i += 1
        elif ch in _GLYPH_INPUT:
            tiles.append(_GLYPH_INPUT[ch])
            i += 1
        else:
            for word, tile in _CJK_INPUT.items():
                if text.startswith(word, i):
                    tiles.append(tile)
                    i += len(word)
                    break
            else:
                end = i + 1
                while end < n and not (
                    text[end].isspace() or text[end] in HONOUR_LETTERS or text[end].isdigit()
                ):
                    end += 1
                raise InvalidNotationError(
                    f"unknown tile notation {text[i:end]!r} at position {i} of {text!r}"
                )
    if pending:
        digits = "".join(str(d) for d, _ in pending)
        raise InvalidNotationError(
            f"digits {digits!r} at position {pending[0][1]} of {text!r} are not "
            "followed by a suit letter (m, p, s or z)"
        )
    return tiles


def counts_of(tiles: Iterable[int]) -> list[int]:
    """The 34-count vector of some tiles; a fifth copy of a face is a `TileCountError`."""
    counts = [0] * KINDS
    for t in tiles:
        counts[t] += 1
    check_counts(counts)
    return counts


def check_counts(counts: Sequence[int], what: str = "hand") -> None:
    """Raise `TileCountError` unless ``counts`` is 34 counts of 0..4."""
    if len(counts) != KINDS:
        raise TileCountError(f"a {what} is 34 counts, got {len(counts)}")
    for tile, c in enumerate(counts):
        if not 0 <= c <= 4:
            shown = format_tiles(tiles_of([max(x, 0) for x in counts]))
            raise TileCountError(
                f"{what} {shown} has {c} copies of {tile_name(tile)}; a face has 4 copies"
            )


def parse_counts(text: str) -> list[int]:
    """Parse notation straight into a 34-count vector (checked for fifth copies)."""
    try:
        return counts_of(parse_tiles(text))
    except TileCountError as exc:
        raise TileCountError(f"{text!r}: {exc}") from None


def tiles_of(counts: Sequence[int]) -> list[int]:
    """The tile ids of a count vector, ascending."""
    return [t for t in range(KINDS) for _ in range(counts[t])]


#: A face's place in a sorted hand (the honours in their output order).
_ORDER: Final = {t: k for k, t in enumerate((*range(27), *_HONOUR_OUTPUT_ORDER))}
#: A face's group (its suit, or 3 for the honours), and 4 for the end of the row.
_END: Final = KINDS
_GROUP: Final = {t: min(t // 9, 3) for t in range(KINDS)} | {_END: 4}
_ROW: Final = {t: 5 * t for t in range(KINDS)}
#: At ``5 * face + next tile's group``: the face's character, and its suit letter when
#: the next tile is in another group (the run of digits ends there).
_PIECE: Final = tuple(
    (str(t % 9 + 1) + (SUITS[t // 9] if nxt != t // 9 else ""))
    if t < 27
    else HONOUR_LETTERS[t - 27]
    for t in range(KINDS)
    for nxt in range(5)
)


def format_tiles(tiles: Iterable[int], *, sort: bool = True) -> str:
    """Canonical notation of some tiles.

    With ``sort=True`` (a hand) the tiles are sorted; with ``sort=False`` (a wall, a
    discard row) the order is kept and only neighbouring tiles of a suit share a group.
    """
    # Each tile writes one piece chosen by its face and the next tile's group: the whole
    # row is a few C-level maps (a record writes the 136-tile wall of every hand).
    try:
        seq = sorted(tiles, key=_ORDER.__getitem__) if sort else list(tiles)
        nexts = map(_GROUP.__getitem__, [*seq[1:], _END])
        return "".join(map(_PIECE.__getitem__, map(add, map(_ROW.__getitem__, seq), nexts)))
    except KeyError as bad:
        raise ValueError(f"tile id {bad.args[0]!r} is not in 0..33") from None


#: The digits of a suit and the honour letters in output order, with a getter of the
#: honours' counts in that order, for `format_counts`.
_DIGITS: Final = tuple("123456789")
_HONOUR_TEXT: Final = tuple(HONOUR_LETTERS[t - 27] for t in _HONOUR_OUTPUT_ORDER)
_HONOUR_COUNTS: Final = itemgetter(*_HONOUR_OUTPUT_ORDER)


def format_counts(counts: Sequence[int]) -> str:
    """Canonical notation of a 34-count vector."""
    # Each face's character repeated by its count, a suit at a time, in C-level maps:
    # twice as fast as listing the tiles for `format_tiles` (every hand's end shows four),
    # and the suits written out, as a generator's frame was a quarter of a call.
    m = "".join(map(mul, _DIGITS, counts[0:9]))
    p = "".join(map(mul, _DIGITS, counts[9:18]))
    s = "".join(map(mul, _DIGITS, counts[18:27]))
    honours = "".join(map(mul, _HONOUR_TEXT, _HONOUR_COUNTS(counts)))
    return (m and m + "m") + (p and p + "p") + (s and s + "s") + honours


def tile_set(faces: Iterable[int]) -> list[int]:
    """Four of each face: the tile set of a rule set with these faces in play (120, 136 or
    108 tiles for the presets; a rule set's own is `RuleSet.tiles`)."""
    if isinstance(faces, str):  # a rule-set name, as this function once took
        raise TypeError(f"tile_set takes tile faces, not {faces!r}; a rule set's: RuleSet.tiles")
    out = [t for t in faces for _ in range(4)]
    if any(not 0 <= t < KINDS for t in out):
        raise ValueError(f"tile faces must be in 0..{KINDS - 1}")
    return out
