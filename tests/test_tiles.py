"""Tiles and notation: the contract of ARCHITECTURE.md "Tiles and notation" and RULES.md §0.1.

Covers every accepted input spelling, the canonical output, round trips (hypothesis),
the tile set of each rule set, and the errors for bad notation and fifth copies.
"""

from __future__ import annotations

import re
from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fangcheng.tiles import (
    InvalidNotationError,
    TileCountError,
    format_counts,
    format_tiles,
    glyph,
    parse_counts,
    parse_tiles,
    tile_name,
    tile_set,
)
from fangcheng.tiles.notation import counts_of, tile_from_name, tiles_of

# The contract's kind order, written out independently of the implementation.
KIND_NAMES = (
    [f"{d}m" for d in range(1, 10)]
    + [f"{d}p" for d in range(1, 10)]
    + [f"{d}s" for d in range(1, 10)]
    + ["E", "S", "W", "N", "P", "F", "C"]
)
WIND_IDS = {"E": 27, "S": 28, "W": 29, "N": 30}
DRAGON_IDS = {"P": 31, "F": 32, "C": 33}


def ids(text: str) -> list[int]:
    """Tile ids of canonical single-tile names separated by spaces, via KIND_NAMES."""
    return [KIND_NAMES.index(name) for name in text.split()]


# --- kinds --------------------------------------------------------------------------


def test_tile_ids_follow_the_contract_order() -> None:
    assert [tile_name(t) for t in range(34)] == KIND_NAMES


@pytest.mark.parametrize("bad", [-1, 34, 100])
def test_tile_name_rejects_ids_outside_0_to_33(bad: int) -> None:
    with pytest.raises(ValueError, match=str(bad)):
        tile_name(bad)


# --- parsing: every accepted form ------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # compact suit groups, in the order written
        ("123m456p789s", ids("1m 2m 3m 4p 5p 6p 7s 8s 9s")),
        ("987s", ids("9s 8s 7s")),
        ("1122m", ids("1m 1m 2m 2m")),
        # one tile at a time
        ("1m2m3m", ids("1m 2m 3m")),
        ("5m", ids("5m")),
        ("9p", ids("9p")),
        ("1s", ids("1s")),
        # honours by letter
        ("ESWNPFC", ids("E S W N P F C")),
        ("C", ids("C")),
        # honours as 1z..7z: 1z E, 2z S, 3z W, 4z N, 5z P, 6z F, 7z C
        ("1234567z", ids("E S W N P F C")),
        ("7z", ids("C")),
        ("5z6z", ids("P F")),
        # mixed, with spaces and commas between tiles
        ("123m 456p, 789s CF", ids("1m 2m 3m 4p 5p 6p 7s 8s 9s C F")),
        ("  5m\t7z ", ids("5m C")),
        ("", []),
    ],
)
def test_parse_ascii_forms(text: str, expected: list[int]) -> None:
    assert parse_tiles(text) == expected


@pytest.mark.parametrize(
    ("text", "name"),
    [
        ("五万", "5m"),
        ("五萬", "5m"),
        ("一万", "1m"),
        ("九万", "9m"),
        ("五饼", "5p"),
        ("五筒", "5p"),
        ("九饼", "9p"),
        ("五条", "5s"),
        ("九条", "9s"),
        ("幺鸡", "1s"),
        ("么鸡", "1s"),
        ("一条", "1s"),
        ("东", "E"),
        ("南", "S"),
        ("西", "W"),
        ("北", "N"),
        ("红中", "C"),
        ("中", "C"),
        ("发财", "F"),
        ("发", "F"),
        ("白板", "P"),
        ("白", "P"),
    ],
)
def test_parse_chinese_names(text: str, name: str) -> None:
    assert parse_tiles(text) == ids(name)
    assert tile_from_name(text) == KIND_NAMES.index(name)


def test_parse_chinese_names_in_a_row_take_the_longest_name() -> None:
    # 红中 is one tile, not 红 + 中; 发财 and 白板 likewise; 中中 is two 红中.
    assert parse_tiles("红中发财白板") == ids("C F P")
    assert parse_tiles("中发白") == ids("C F P")
    assert parse_tiles("红中中") == ids("C C")
    assert parse_tiles("五万 幺鸡 东") == ids("5m 1s E")


def test_chinese_and_ascii_mix() -> None:
    assert parse_tiles("123m五万东E") == ids("1m 2m 3m 5m E E")


@pytest.mark.parametrize(
    ("char", "name"),
    [
        ("🀇", "1m"),
        ("🀏", "9m"),
        ("🀙", "1p"),
        ("🀡", "9p"),
        ("🀐", "1s"),
        ("🀘", "9s"),
        ("🀀", "E"),
        ("🀁", "S"),
        ("🀂", "W"),
        ("🀃", "N"),
        ("🀆", "P"),
        ("🀅", "F"),
        ("🀄", "C"),
    ],
)
def test_glyphs_of_known_tiles(char: str, name: str) -> None:
    tile = KIND_NAMES.index(name)
    assert glyph(tile) == char
    assert parse_tiles(char) == [tile]


def test_every_glyph_parses_back_and_glyphs_are_distinct() -> None:
    glyphs = [glyph(t) for t in range(34)]
    assert len(set(glyphs)) == 34
    assert all(len(g) == 1 for g in glyphs)
    assert parse_tiles("".join(glyphs)) == list(range(34))


@pytest.mark.parametrize("text", ["5m", "5z", "P", "白板", "🀆", " C "])
def test_tile_from_name_reads_one_tile(text: str) -> None:
    assert tile_name(tile_from_name(text)) == format_tiles(parse_tiles(text))


@pytest.mark.parametrize(("text", "count"), [("12m", 2), ("", 0), ("中发", 2)])
def test_tile_from_name_wants_exactly_one_tile(text: str, count: int) -> None:
    with pytest.raises(InvalidNotationError, match=f"is {count} tiles, expected exactly one"):
        tile_from_name(text)


# --- canonical output ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "canonical"),
    [
        ("123m456p789sCFP", "123m456p789sCFP"),
        # suits m, p, s; digits ascending; winds ESWN, then dragons 中发白 = C F P
        ("PFC NWSE 987s 654p 321m", "123m456p789sESWNCFP"),
        ("1234567z", "ESWNCFP"),
        ("1m2m3m", "123m"),
        ("五万五饼五筒五条幺鸡", "5m55p15s"),
        ("东红中中发财发白板白", "ECCFFPP"),
        ("🀄🀅🀆🀇", "1mCFP"),
        ("5p1m", "1m5p"),
        ("", ""),
    ],
)
def test_format_is_canonical(text: str, canonical: str) -> None:
    assert format_tiles(parse_tiles(text)) == canonical
    assert format_counts(parse_counts(text)) == canonical


def test_format_without_sorting_keeps_order_and_groups_only_neighbours() -> None:
    tiles = ids("1m 2m 1p 3m C E 9s 9s")
    assert format_tiles(tiles, sort=False) == "12m1p3mCE99s"
    assert parse_tiles(format_tiles(tiles, sort=False)) == tiles


def test_format_accepts_any_iterable() -> None:
    assert format_tiles(iter(ids("C 1m"))) == "1mC"
    assert format_tiles(ids("C 1m"), sort=False) == "C1m"


# --- round trips (hypothesis) ----------------------------------------------------------

tile_ids = st.integers(min_value=0, max_value=33)
#: A hand: at most 14 tiles, no face more than four times.
hand_counts = (
    st.lists(tile_ids, max_size=14)
    .map(lambda tiles: [tiles.count(t) for t in range(34)])
    .filter(lambda counts: max(counts) <= 4)
)


def _spellings(tile: int) -> list[str]:
    """Every way to write one tile on its own (written out from the contract)."""
    name = KIND_NAMES[tile]
    numerals = "一二三四五六七八九"
    forms = [name]
    if tile < 27:
        digit, suit = int(name[0]), name[1]
        forms.append(glyph(tile))
        words = {"m": ["万", "萬"], "p": ["饼", "筒"], "s": ["条"]}[suit]
        forms += [numerals[digit - 1] + w for w in words]
        if name == "1s":
            forms += ["幺鸡", "么鸡"]
    else:
        forms.append(f"{tile - 26}z")
        forms.append(glyph(tile))
        forms += {
            "E": ["东"],
            "S": ["南"],
            "W": ["西"],
            "N": ["北"],
            "P": ["白板", "白"],
            "F": ["发财", "发"],
            "C": ["红中", "中"],
        }[name]
    return forms


@st.composite
def written_hands(draw: st.DrawFn) -> tuple[str, list[int]]:
    """Notation mixing every spelling, one tile at a time, and the tiles it names."""
    tiles = draw(st.lists(tile_ids, max_size=20))
    parts = [draw(st.sampled_from(_spellings(t))) for t in tiles]
    seps = [draw(st.sampled_from(["", "", " ", ","])) for _ in parts]
    return "".join(p + s for p, s in zip(parts, seps, strict=True)), tiles


@settings(derandomize=True, max_examples=300)
@given(st.lists(tile_ids, max_size=40))
def test_parse_of_unsorted_format_is_identity(tiles: list[int]) -> None:
    assert parse_tiles(format_tiles(tiles, sort=False)) == tiles


@settings(derandomize=True, max_examples=300)
@given(st.lists(tile_ids, max_size=40))
def test_sorted_format_keeps_the_multiset_and_is_canonical(tiles: list[int]) -> None:
    text = format_tiles(tiles)
    assert Counter(parse_tiles(text)) == Counter(tiles)
    assert format_tiles(parse_tiles(text)) == text
    assert re.fullmatch(r"(\d+m)?(\d+p)?(\d+s)?E*S*W*N*C*F*P*", text)


@settings(derandomize=True, max_examples=300)
@given(hand_counts)
def test_counts_round_trip(counts: list[int]) -> None:
    assert parse_counts(format_counts(counts)) == counts
    assert format_counts(counts) == format_tiles(tiles_of(counts))  # the sorted hand's text


@settings(derandomize=True, max_examples=300)
@given(written_hands())
def test_any_spelling_parses_to_its_tiles_and_formats_canonically(
    written: tuple[str, list[int]],
) -> None:
    text, tiles = written
    assert parse_tiles(text) == tiles
    canonical = format_tiles(parse_tiles(text))
    assert canonical == format_tiles(tiles)
    assert canonical.isascii()
    assert format_tiles(parse_tiles(canonical)) == canonical


# --- tile sets -------------------------------------------------------------------------


def test_tile_set_is_four_of_each_face() -> None:
    assert tile_set([0, 33]) == [0, 0, 0, 0, 33, 33, 33, 33]


def test_tile_set_refuses_a_rule_set_name_and_a_face_out_of_range() -> None:
    with pytest.raises(TypeError, match=r"'baicheng'.*RuleSet.tiles"):
        tile_set("baicheng")
    with pytest.raises(ValueError, match=r"0\.\.33"):
        tile_set([34])


# --- errors ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "fragments"),
    [
        ("abc", ["'abc'", "position 0"]),
        ("123m x", ["'x'", "position 5"]),
        ("1m2m五X", ["'五X'", "position 4"]),
        ("1mQ", ["'Q'", "position 2"]),
        ("五", ["'五'", "position 0"]),
        ("１m", ["'１m'", "position 0"]),  # a full-width digit is not a digit here
        ("8z", ["'8z'", "position 0", "1z..7z"]),
        ("12m0z", ["'0z'", "position 3"]),
        ("1m0p", ["'0p'", "position 2", "1..9"]),
        ("m", ["suit letter 'm'", "position 0"]),
        ("123m s", ["suit letter 's'", "position 5"]),
        ("123", ["digits '123'", "position 0", "suit letter"]),
        ("11m456", ["digits '456'", "position 3"]),
        ("12x", ["digits '12'", "position 0"]),
        ("1m 45", ["digits '45'", "position 3"]),
    ],
)
def test_bad_notation_names_the_characters_and_their_position(
    text: str, fragments: list[str]
) -> None:
    with pytest.raises(InvalidNotationError) as info:
        parse_tiles(text)
    for fragment in fragments:
        assert fragment in str(info.value)
    assert repr(text) in str(info.value)


def test_invalid_notation_error_is_a_value_error() -> None:
    assert issubclass(InvalidNotationError, ValueError)
    assert issubclass(TileCountError, ValueError)


@pytest.mark.parametrize("value", [None, 5, ["1m"], b"1m"])
def test_parse_wants_a_string(value: object) -> None:
    with pytest.raises(TypeError, match="must be a str"):
        parse_tiles(value)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("text", "face"),
    [
        ("11111m", "1m"),
        ("5p5p5p5p5p", "5p"),
        ("CCCC中", "C"),
        ("EEEE1z", "E"),
        ("🀄🀄🀄🀄红中", "C"),
    ],
)
def test_fifth_copy_names_the_face(text: str, face: str) -> None:
    assert len(parse_tiles(text)) == 5  # any count of tiles parses ...
    with pytest.raises(TileCountError) as info:  # ... but a hand has four of a face
        parse_counts(text)
    message = str(info.value)
    assert f"5 copies of {face}" in message
    assert repr(text) in message


def test_counts_of_rejects_a_fifth_copy_and_accepts_four() -> None:
    assert counts_of([9] * 4)[9] == 4
    with pytest.raises(TileCountError, match="5 copies of 1p"):
        counts_of([9] * 5)


@settings(derandomize=True, max_examples=200)
@given(st.lists(tile_ids, max_size=30))
def test_a_parsed_hand_never_holds_five_of_a_face(tiles: list[int]) -> None:
    text = format_tiles(tiles)
    if max(Counter(tiles).values(), default=0) > 4:
        with pytest.raises(TileCountError):
            parse_counts(text)
    else:
        assert max(parse_counts(text)) <= 4


def test_spaces_are_ignored_even_inside_a_group():
    """ARCHITECTURE notation contract: "spaces ignored"."""
    assert parse_tiles("45 p 6 7s") == parse_tiles("45p67s")


def test_emoji_variation_selector_after_a_glyph_is_ignored():
    assert parse_tiles("🀄\ufe0f🀅") == parse_tiles("CF")


def test_digits_followed_by_a_stray_letter_name_the_letter_and_its_position():
    with pytest.raises(InvalidNotationError, match=r"'12' at position 0 .* 'x' at position 2"):
        parse_tiles("12x")


def test_fifth_copy_message_shows_all_five():
    with pytest.raises(TileCountError, match="11111m"):
        counts_of(parse_tiles("11111m"))


@pytest.mark.parametrize("tiles", [[34], [1, -1], [0, 35, 2]])
def test_format_tiles_names_a_tile_id_out_of_range(tiles: list[int]) -> None:
    bad = next(t for t in tiles if not 0 <= t < 34)
    for sort in (True, False):
        with pytest.raises(ValueError, match=f"tile id {bad} is not in 0..33"):
            format_tiles(tiles, sort=sort)


def test_format_tiles_keeps_a_row_in_order_and_groups_neighbouring_suit_tiles() -> None:
    row = parse_tiles("12m3m9pEE1mC5s6s")
    assert format_tiles(row, sort=False) == "123m9pEE1mC56s"
    assert format_tiles(row) == "1123m9p56sEEC"
