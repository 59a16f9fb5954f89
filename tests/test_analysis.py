"""Hand analysis: win check, shanten, waits, wait shapes and decompositions.

Hand-written cases for every wait shape and edge named in issue 2 (两头吊, 三七边, 坎, 两面,
对倒, the 中发白 sandwich, seven pairs with a quad, the 13-sided thirteen orphans wait,
手把一 with exposed melds), property tests tying the functions to each other, and bad
input, which must raise a clear error and never give an answer.
"""

from __future__ import annotations

import array
from collections import Counter
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fangcheng.analysis import (
    Form,
    GroupKind,
    Shapes,
    WaitShape,
    decompositions,
    discard_shanten,
    draw_shanten,
    is_win,
    shanten,
    shanten_flush,
    shanten_seven_pairs,
    shanten_standard,
    shanten_thirteen_orphans,
    wait_shapes,
    waits,
)
from fangcheng.tiles import (
    InvalidNotationError,
    TileCountError,
    format_counts,
    format_tiles,
    parse_tiles,
    tile_name,
)

EDGE, CLOSED, TWO_SIDED = WaitShape.EDGE, WaitShape.CLOSED, WaitShape.TWO_SIDED
SINGLE, RUN_END, PUNG = WaitShape.SINGLE, WaitShape.SINGLE_RUN_END, WaitShape.PUNG
DRAGONS = WaitShape.DRAGONS

DRAGON_SET = Shapes(dragon_set=True)
QUAD_PAIRS = Shapes(quad_pairs=True)
STANDARD_ONLY = Shapes(seven_pairs=False, thirteen_orphans=False)
#: Every combination of options a rule set can choose.
ALL_SHAPES = [
    Shapes(seven_pairs=sp, quad_pairs=qp, thirteen_orphans=to, dragon_set=ds)
    for sp in (False, True)
    for qp in (False, True)
    for to in (False, True)
    for ds in (False, True)
    if sp or not qp
]
ORPHANS = "19m19p19sESWNPFC"


def tile(name: str) -> int:
    (t,) = parse_tiles(name)
    return t


def wait_names(hand: str, **kw: Any) -> str:
    return format_tiles(waits(hand, **kw))


def shape_names(hand: str, **kw: Any) -> dict[str, set[WaitShape]]:
    return {tile_name(t): set(shapes) for t, shapes in wait_shapes(hand, **kw).items()}


def add(counts: bytes | list[int], t: int, n: int = 1) -> bytes:
    grown = bytearray(counts)
    grown[t] += n
    return bytes(grown)


# --- wait shapes -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("hand", "expected"),
    [
        # 两头吊: a single on either end of a four-tile run
        ("1234m", {"1m": {RUN_END}, "4m": {RUN_END}}),
        ("6789p", {"6p": {RUN_END}, "9p": {RUN_END}}),
        ("3456s123m456p789p", {"3s": {RUN_END}, "6s": {RUN_END}}),
        # a plain 单吊, including next to a run of another suit (9m 123p, 789m 1p)
        ("1m", {"1m": {SINGLE}}),
        ("C", {"C": {SINGLE}}),
        ("9m123p", {"9m": {SINGLE}}),
        ("789m1p", {"1p": {SINGLE}}),
        ("5m123p456p789pEEE", {"5m": {SINGLE}}),
        # 三七边: 12 waits only on 3, 89 only on 7
        ("12m456p789s123sEE", {"3m": {EDGE}}),
        ("89m456p789s123sEE", {"7m": {EDGE}}),
        ("12s89pCCC", {}),  # two edge partials and no pair: not ready
        # 坎 closed
        ("13m456p789s123sEE", {"2m": {CLOSED}}),
        ("79p123m456m789sNN", {"8p": {CLOSED}}),
        # 两面 two-sided, including 23 (waits 1 and 4) and 78 (waits 6 and 9)
        ("23m456p789s123sEE", {"1m": {TWO_SIDED}, "4m": {TWO_SIDED}}),
        ("78s123m456m789pWW", {"6s": {TWO_SIDED}, "9s": {TWO_SIDED}}),
        ("45p19s", {}),  # a two-sided partial but no pair: not ready
        # 对倒: two pairs, either becomes a pung
        ("11m22p456p789s123s", {"1m": {PUNG}, "2p": {PUNG}}),
        ("EECC123m456p789s", {"E": {PUNG}, "C": {PUNG}}),
        # several shapes for one face
        ("2223m", {"1m": {TWO_SIDED}, "3m": {SINGLE}, "4m": {TWO_SIDED}}),
        ("1112m", {"2m": {SINGLE}, "3m": {EDGE}}),
    ],
)
def test_wait_shapes(hand: str, expected: dict[str, set[WaitShape]]) -> None:
    assert shape_names(hand) == expected
    assert wait_names(hand) == format_tiles(tile(n) for n in expected)


def test_nine_gates_waits_on_all_nine_with_their_shapes() -> None:
    assert shape_names("1112345678999m") == {
        "1m": {PUNG, TWO_SIDED},
        "2m": {RUN_END},
        "3m": {EDGE, TWO_SIDED},
        "4m": {TWO_SIDED},
        "5m": {RUN_END},
        "6m": {TWO_SIDED},
        "7m": {EDGE, TWO_SIDED},
        "8m": {RUN_END},
        "9m": {PUNG, TWO_SIDED},
    }


@pytest.mark.parametrize(
    ("hand", "missing"),
    [("CF123m456p789sEE", "P"), ("CP11s", "F"), ("FP123m99p", "C"), ("CFEE", "P")],
)
def test_dragon_sandwich_waits_on_the_missing_dragon(hand: str, missing: str) -> None:
    assert shape_names(hand, shapes=DRAGON_SET) == {missing: {DRAGONS}}
    assert shanten(hand, shapes=DRAGON_SET) == 0
    # without baicheng's 中发白 meld the same tiles are not ready
    assert waits(hand) == ()
    assert shanten(hand) == 1


def test_dragon_set_or_pair_on_the_same_face() -> None:
    # CCFP: CC pair + FP waiting C for the set, or CFP set + C waiting for its pair
    assert shape_names("CCFP", shapes=DRAGON_SET) == {"C": {DRAGONS, SINGLE}}


# --- seven pairs -----------------------------------------------------------------------

SIX_PAIRS_WITH_QUAD = "1111m2233p4455sC"  # 13 tiles, no standard reading near


def test_seven_pairs_wait_is_the_single() -> None:
    assert shape_names("112233445566m7p") == {"7p": {SINGLE}}
    assert waits("2255m3366p4477sE") == (tile("E"),)
    assert waits("2255m3366p4477sE", shapes=STANDARD_ONLY) == ()


def test_seven_pairs_with_a_quad_only_when_a_quad_is_two_pairs() -> None:
    assert wait_names(SIX_PAIRS_WITH_QUAD, shapes=QUAD_PAIRS) == "C"
    assert waits(SIX_PAIRS_WITH_QUAD) == ()
    won = SIX_PAIRS_WITH_QUAD + "C"
    assert is_win(won, shapes=QUAD_PAIRS)
    assert not is_win(won)
    assert shanten_seven_pairs(won, shapes=QUAD_PAIRS) == -1
    assert shanten_seven_pairs(won) == 1  # six distinct faces paired, one face short
    assert shanten(won, shapes=QUAD_PAIRS) == -1
    (arrangement,) = decompositions(won, shapes=QUAD_PAIRS)
    assert arrangement.form is Form.SEVEN_PAIRS
    assert [g.tile for g in arrangement.groups] == parse_tiles("1m 1m 2p 3p 4s 5s C")
    assert decompositions(won) == []


def test_three_quads_are_six_pairs() -> None:
    won = "1111m2222p3333s55s"
    assert is_win(won, shapes=QUAD_PAIRS)
    assert not is_win(won)
    # 13 tiles: three quads and a single wait on the single, quad pairs only
    assert wait_names("1111m2222p3333s5s", shapes=QUAD_PAIRS) == "5s"


def test_seven_pairs_needs_distinct_pairs_by_default() -> None:
    assert not is_win("11112233445577m")
    assert is_win("11112233445577m", shapes=QUAD_PAIRS)
    assert is_win("11223344556677m")
    assert is_win("1133557799m2233p")
    assert not is_win("1133557799m2233p", shapes=Shapes(seven_pairs=False))


# --- thirteen orphans ------------------------------------------------------------------


def test_thirteen_orphans_thirteen_sided_wait() -> None:
    shapes = shape_names(ORPHANS)
    assert set(shapes) == {tile_name(t) for t in parse_tiles(ORPHANS)}
    assert all(s == {SINGLE} for s in shapes.values())
    assert shanten_thirteen_orphans(ORPHANS) == 0
    assert waits(ORPHANS, shapes=Shapes(thirteen_orphans=False)) == ()


def test_thirteen_orphans_single_wait_and_win() -> None:
    hand = ORPHANS.replace("F", "C")  # 1m9m1p9p1s9sESWNPCC: F missing, C doubled
    assert wait_names(hand) == "F"
    won = hand + "F"
    assert is_win(won) and shanten(won) == -1
    assert not is_win(won, shapes=Shapes(thirteen_orphans=False))
    (arrangement,) = decompositions(won)
    assert arrangement.form is Form.THIRTEEN_ORPHANS
    assert arrangement.pair == tile("C")


# --- exposed melds: 手把一 and the four-copy limit --------------------------------------

FOUR_MELDS = ["123p", "EEE", "CCCC", "789s"]


@pytest.mark.parametrize("face", ["1m", "5p", "9s", "E", "C"])
def test_one_tile_hand_waits_on_its_own_face(face: str) -> None:
    melds = [m for m in FOUR_MELDS if face not in m]
    assert waits(face) == (tile(face),)
    assert waits(face, melds=melds) == (tile(face),)
    assert shape_names(face, melds=melds) == {face: {SINGLE}}
    assert is_win(face * 2) and shanten(face) == 0 and shanten(face * 2) == -1


def test_melds_holding_the_other_copies_remove_the_wait() -> None:
    # 1m in hand and three 1m exposed: the only 1m left would be a fifth
    assert waits("1m", melds=["111m", "EEE", "CCC", "789s"]) == ()
    assert wait_shapes("1m", melds=["111m"]) == {}
    assert waits("1m", melds=["11m"]) == (tile("1m"),)  # two exposed: one copy left
    assert waits("C", melds=[[33, 33, 33], "EEE"]) == ()  # melds as tile ids too
    # 1234m with 4m pung exposed: 4m is gone, 1m is still a wait
    assert wait_names("1234m", melds=["444m"]) == "1m"


def test_a_fifth_copy_across_hand_and_melds_is_an_error() -> None:
    with pytest.raises(TileCountError, match="5 copies of 1m"):
        waits("1m", melds=["1111m"])


def test_four_copies_in_hand_are_no_wait() -> None:
    assert waits("5555m") == ()
    assert shanten("5555m") == 1
    assert waits("1111m234p567s789s") == ()
    assert shanten("1111m234p567s789s") == 1
    # 111m + 12m waits 3m; 1111m is never read as a pung plus a single waiting 1m
    assert shape_names("1111m2m567s789sEE") == {"3m": {EDGE}}


# --- decompositions --------------------------------------------------------------------


def groups_of(hand: str, **kw: Any) -> set[tuple[tuple[GroupKind, int], ...]]:
    return {tuple(sorted((g.kind, g.tile) for g in a.groups)) for a in decompositions(hand, **kw)}


def test_three_identical_chows_or_three_pungs() -> None:
    readings = decompositions("111222333m11p")
    assert len(readings) == 2
    assert all(a.form is Form.STANDARD and a.pair == tile("1p") for a in readings)
    kinds = sorted(Counter(g.kind for g in a.groups)[GroupKind.CHOW] for a in readings)
    assert kinds == [0, 3]


def test_pure_double_chow_hand_has_three_readings_and_seven_pairs() -> None:
    readings = decompositions("11223344556677m")
    forms = Counter(a.form for a in readings)
    assert forms == {Form.STANDARD: 3, Form.SEVEN_PAIRS: 1}
    assert {a.pair for a in readings if a.form is Form.STANDARD} == set(parse_tiles("1m4m7m"))


def test_dragon_set_is_a_meld_in_baicheng_decompositions() -> None:
    hand = "CFP123m456p789s11s"
    assert groups_of(hand, shapes=DRAGON_SET) == {
        tuple(
            sorted(
                [
                    (GroupKind.CHOW, tile("1m")),
                    (GroupKind.CHOW, tile("4p")),
                    (GroupKind.CHOW, tile("7s")),
                    (GroupKind.PAIR, tile("1s")),
                    (GroupKind.DRAGONS, tile("P")),
                ]
            )
        )
    }
    assert is_win(hand, shapes=DRAGON_SET)
    assert decompositions(hand) == [] and not is_win(hand)


def test_three_dragon_pungs_or_three_dragon_sets() -> None:
    readings = groups_of("CCCFFFPPP11m", shapes=DRAGON_SET)
    assert len(readings) == 2
    assert {frozenset(kind for kind, _ in groups) for groups in readings} == {
        frozenset({GroupKind.PUNG, GroupKind.PAIR}),
        frozenset({GroupKind.DRAGONS, GroupKind.PAIR}),
    }
    assert len(decompositions("CCCFFFPPP11m")) == 1


def test_a_reading_is_listed_once() -> None:
    # 11123m: the pair then the chow, or the chow then the pair, is one reading
    (arrangement,) = decompositions("11123m")
    assert sorted(arrangement.groups) == [(GroupKind.PAIR, 0), (GroupKind.CHOW, 0)]
    assert len(decompositions("11123m456p789s")) == 1


def test_incomplete_hand_has_no_decomposition() -> None:
    assert decompositions("123m456p789s123sEW") == []


@pytest.mark.parametrize("hand", ["11m", "11123m", "123m11p456s", "111m222pEEE11s"])
def test_decompositions_of_hands_with_exposed_melds(hand: str) -> None:
    (arrangement,) = decompositions(hand)
    rebuilt = Counter(t for g in arrangement.groups for t in g.tiles())
    assert rebuilt == Counter(parse_tiles(hand))


# --- is_win and shanten with 0..4 melds laid down --------------------------------------


@pytest.mark.parametrize(
    ("hand", "win", "steps"),
    [
        ("11m", True, -1),
        ("EE", True, -1),
        ("12m", False, 0),
        ("1m9p", False, 0),
        ("11123m", True, -1),
        ("11124m", False, 0),
        ("1m5m9mEC", False, 2),
        ("123m456p11s", True, -1),
        ("123m456p12s", False, 0),
        ("1m4m7m1p4p7p1s4s", False, 4),
        ("123m456p789s11s", True, -1),
        ("111m222p33sCFP", False, 1),  # a win with baicheng's 中发白
        ("123m456p789s123s11z", True, -1),
        ("123m456p789s123sEW", False, 0),
        ("147m258p369sESWNC", False, 6),  # seven pairs and thirteen orphans: 6
        ("1m4m7m2p5p8p3s6s9sEESWN", False, 5),  # standard 7, seven pairs 5, orphans 6
    ],
)
def test_is_win_and_shanten_for_every_hand_size(hand: str, win: bool, steps: int) -> None:
    assert is_win(hand) is win
    assert shanten(hand) == steps
    assert (steps == -1) is win


def test_shanten_forms_and_their_minimum() -> None:
    hand = "1m4m7m1p4p7p1s4s7sESWN"  # 13 tiles
    assert len(parse_tiles(hand)) == 13
    standard = shanten_standard(hand)
    pairs = shanten_seven_pairs(hand)
    orphans = shanten_thirteen_orphans(hand)
    assert (standard, pairs, orphans) == (8, 6, 6)
    assert shanten(hand) == 6
    assert shanten_standard("11223344556677m") == -1
    assert shanten_seven_pairs("1122334455667m8m") == 0
    assert shanten_thirteen_orphans(ORPHANS) == 0
    assert shanten_thirteen_orphans("19m19p19sESWNPF1m") == 0


def test_shanten_drops_forms_the_rule_set_forbids() -> None:
    hand = "1133557799m2233p"  # seven pairs complete, standard 3 away
    assert shanten(hand) == -1
    assert shanten(hand, shapes=STANDARD_ONLY) == shanten_standard(hand) > 0
    assert shanten(ORPHANS, shapes=STANDARD_ONLY) == shanten_standard(ORPHANS) > 0


def test_dragon_set_shanten() -> None:
    assert shanten_standard("CFP123m456p789s1s", shapes=DRAGON_SET) == 0
    assert shanten_standard("CFP123m456p789s1s") == 2
    assert is_win("111m222p33sCFP", shapes=DRAGON_SET)


# --- property tests --------------------------------------------------------------------

SIZES_13 = (1, 4, 7, 10, 13)
SIZES_14 = (2, 5, 8, 11, 14)


@st.composite
def random_hands(draw: st.DrawFn, sizes: tuple[int, ...]) -> bytes:
    """A hand of one of ``sizes`` tiles drawn from a 136-tile wall (never five of a face)."""
    n = draw(st.sampled_from(sizes))
    wall = [t for t in range(34) for _ in range(4)]
    picks = draw(st.permutations(range(136)))[:n]
    return bytes(Counter(wall[i] for i in picks).get(t, 0) for t in range(34))


@st.composite
def near_complete_hands(draw: st.DrawFn, sizes: tuple[int, ...]) -> bytes:
    """A complete hand (chows, pungs, 中发白 sets, a pair) with up to two tiles replaced
    and trimmed to one of ``sizes`` tiles: the region where waits and wins are common."""
    target = draw(st.sampled_from(sizes))
    melds = (target + 1) // 3 if target % 3 == 1 else target // 3
    counts = [0] * 34
    for _ in range(melds):
        kind = draw(st.sampled_from(["chow", "pung", "dragons"]))
        if kind == "chow":
            start = 9 * draw(st.integers(0, 2)) + draw(st.integers(0, 6))
            faces = [start, start + 1, start + 2]
        elif kind == "pung":
            faces = [draw(st.integers(0, 33))] * 3
        else:
            faces = [31, 32, 33]
        for t in faces:
            counts[t] += 1
    counts[draw(st.integers(0, 33))] += 2
    # replace up to two tiles, then drop one if the target is a 13 - 3k hand
    for _ in range(draw(st.integers(0, 2))):
        held = [t for t in range(34) for _ in range(counts[t])]
        counts[draw(st.sampled_from(held))] -= 1
        counts[draw(st.integers(0, 33))] += 1
    if target % 3 == 1:
        held = [t for t in range(34) for _ in range(counts[t])]
        counts[draw(st.sampled_from(held))] -= 1
    if max(counts) > 4:  # a fifth copy: keep the shape, clamp to four by swapping a face
        counts = [min(c, 4) for c in counts]
        while sum(counts) < target:
            counts[counts.index(min(counts))] += 1
    assert sum(counts) == target
    return bytes(counts)


def hands(sizes: tuple[int, ...]) -> st.SearchStrategy[bytes]:
    return st.one_of(random_hands(sizes), near_complete_hands(sizes))


hands_13 = hands(SIZES_13)
hands_14 = hands(SIZES_14)
shapes_variants = st.sampled_from(ALL_SHAPES)
PROPERTY = settings(derandomize=True, max_examples=400, deadline=None)


@PROPERTY
@given(hands(SIZES_13 + SIZES_14))
def test_generated_hands_never_hold_five_of_a_face(hand: bytes) -> None:
    assert len(hand) == 34 and max(hand) <= 4 and sum(hand) <= 14


@PROPERTY
@given(hands_14, shapes_variants)
def test_is_win_iff_shanten_is_minus_one(hand: bytes, shapes: Shapes) -> None:
    assert is_win(hand, shapes=shapes) == (shanten(hand, shapes=shapes) == -1)


@PROPERTY
@given(hands(SIZES_13 + SIZES_14), shapes_variants)
def test_shanten_is_the_least_over_allowed_forms(hand: bytes, shapes: Shapes) -> None:
    forms = [shanten_standard(hand, shapes=shapes)]
    if sum(hand) >= 13:
        if shapes.seven_pairs:
            forms.append(shanten_seven_pairs(hand, shapes=shapes))
        if shapes.thirteen_orphans:
            forms.append(shanten_thirteen_orphans(hand))
    assert shanten(hand, shapes=shapes) == min(forms)


@PROPERTY
@given(hands(SIZES_13 + SIZES_14), st.integers(0, 2), st.booleans())
def test_flush_shanten_counts_each_tile_outside_the_flush_as_one_exchange(
    hand: bytes, suit: int, honours: bool
) -> None:
    def inside(t: int) -> bool:
        return t // 9 == suit or (honours and t >= 27)

    flush = shanten_flush(hand, suit, honours=honours)
    plain = shanten_standard(hand)
    assert flush >= plain
    outside = [t for t in range(34) if hand[t] and not inside(t)]
    if not outside:
        assert flush == plain
    else:  # swapping a tile outside for the right face inside is one step nearer
        swapped = add(hand, outside[0], -1)
        nearer = min(
            shanten_flush(add(swapped, f, 1), suit, honours=honours)
            for f in range(34)
            if inside(f) and swapped[f] < 4
        )
        assert nearer == flush - 1


@PROPERTY
@given(hands_14, shapes_variants)
def test_shanten_of_14_tiles_is_the_best_discard(hand: bytes, shapes: Shapes) -> None:
    # A complete hand is one from ready after any discard; otherwise some discard keeps
    # the distance (a tile the nearest complete hand does not use).
    after = min(shanten(add(hand, t, -1), shapes=shapes) for t in range(34) if hand[t])
    assert max(shanten(hand, shapes=shapes), 0) == after


@PROPERTY
@given(hands_13, shapes_variants)
def test_waits_are_exactly_the_winning_faces(hand: bytes, shapes: Shapes) -> None:
    found = waits(hand, shapes=shapes)
    winning = tuple(t for t in range(34) if hand[t] < 4 and is_win(add(hand, t), shapes=shapes))
    assert found == winning
    assert all(hand[t] < 4 for t in found)  # never a fifth copy


@PROPERTY
@given(hands_13, shapes_variants)
def test_ready_iff_some_wait(hand: bytes, shapes: Shapes) -> None:
    assert (shanten(hand, shapes=shapes) == 0) == bool(waits(hand, shapes=shapes))
    assert shanten(hand, shapes=shapes) >= 0


@PROPERTY
@given(hands_13, shapes_variants)
def test_wait_shapes_cover_every_wait(hand: bytes, shapes: Shapes) -> None:
    found = wait_shapes(hand, shapes=shapes)
    assert tuple(found) == waits(hand, shapes=shapes)
    assert all(found.values())  # every winning face has at least one shape
    for t, kinds in found.items():
        if DRAGONS in kinds:
            assert shapes.dragon_set and t >= 31


@PROPERTY
@given(hands_14, shapes_variants)
def test_every_decomposition_reassembles_to_the_hand(hand: bytes, shapes: Shapes) -> None:
    readings = decompositions(hand, shapes=shapes)
    assert bool(readings) == is_win(hand, shapes=shapes)
    # no reading twice, even with its groups in another order
    assert len({tuple(sorted(a.groups)) for a in readings}) == len(readings)
    for arrangement in readings:
        rebuilt = Counter(t for g in arrangement.groups for t in g.tiles())
        assert [rebuilt[t] for t in range(34)] == list(hand)
        kinds = Counter(g.kind for g in arrangement.groups)
        if arrangement.form is Form.STANDARD:
            assert kinds[GroupKind.PAIR] == 1
            assert kinds[GroupKind.ORPHANS] == 0
            assert shapes.dragon_set or kinds[GroupKind.DRAGONS] == 0
        elif arrangement.form is Form.SEVEN_PAIRS:
            assert kinds == {GroupKind.PAIR: 7}
        else:
            assert kinds == {GroupKind.ORPHANS: 1, GroupKind.PAIR: 1}


@PROPERTY
@given(hands(SIZES_13 + SIZES_14))
def test_every_input_form_gives_the_same_answer(hand: bytes) -> None:
    forms: list[Any] = [
        hand,
        list(hand),
        tuple(hand),
        bytearray(hand),
        format_counts(hand),
        np.array(list(hand)),  # int64: bytes() of it would be its raw memory
        array.array("i", list(hand)),
    ]
    if sum(hand) % 3 == 2:
        assert len({is_win(h) for h in forms}) == 1
    else:
        assert len({waits(h) for h in forms}) == 1
    assert len({shanten(h) for h in forms}) == 1


# --- bad input -------------------------------------------------------------------------

Analysis = Callable[..., object]
ON_14: list[Analysis] = [is_win, decompositions]
ON_13: list[Analysis] = [waits, wait_shapes]
ON_ANY: list[Analysis] = [shanten, shanten_standard]
EVERY = ON_14 + ON_13 + ON_ANY


@pytest.mark.parametrize("func", ON_14)
@pytest.mark.parametrize("hand", ["123m456p789s111p", "123m456p789s11p3s", "", "1m"])
def test_complete_hand_functions_want_14_minus_3k_tiles(func: Analysis, hand: str) -> None:
    with pytest.raises(TileCountError, match=r"14 - 3k.* has \d+"):
        func(hand)


@pytest.mark.parametrize("func", ON_13)
@pytest.mark.parametrize("hand", ["123m456p789s123sEE", "11m", "", "123m"])
def test_wait_functions_want_13_minus_3k_tiles(func: Analysis, hand: str) -> None:
    with pytest.raises(TileCountError, match=r"13 - 3k.* has \d+"):
        func(hand)


@pytest.mark.parametrize("func", ON_ANY)
@pytest.mark.parametrize("hand", ["", "123m", "123m456p789s111p"])
def test_shanten_wants_a_hand_size(func: Analysis, hand: str) -> None:
    with pytest.raises(TileCountError, match="concealed tiles"):
        func(hand)


@pytest.mark.parametrize("func", [shanten_seven_pairs, shanten_thirteen_orphans])
def test_closed_forms_want_13_or_14_tiles(func: Analysis) -> None:
    with pytest.raises(TileCountError, match="13 or 14 tiles"):
        func("11223344m55p")


@pytest.mark.parametrize("func", EVERY)
@pytest.mark.parametrize(
    "hand",
    [
        "1111222233334444m",  # 16
        "11122233344455566m",  # 17
        [4] * 4 + [0] * 30,  # 16, as counts
        bytes([2] * 9 + [0] * 25),  # 18, as bytes (the fast path)
    ],
)
def test_more_than_14_tiles_is_an_error(func: Analysis, hand: object) -> None:
    with pytest.raises(TileCountError, match=r"has 1[5-8]"):
        func(hand)


@pytest.mark.parametrize("func", EVERY)
@pytest.mark.parametrize(
    ("hand", "fragment"),
    [("123m456p789sX11z", "'X' at position 12"), ("123m456p78", "digits '78'")],
)
def test_unknown_characters_are_an_error(func: Analysis, hand: str, fragment: str) -> None:
    with pytest.raises(InvalidNotationError, match=fragment):
        func(hand)


@pytest.mark.parametrize("func", EVERY)
@pytest.mark.parametrize(
    "hand",
    [
        "11111m456p789s11p",
        [5] + [0] * 8 + [1] * 9 + [0] * 16,
        bytes([5] + [0] * 8 + [1] * 9 + [0] * 16),
        bytes([0] * 27 + [5, 0, 0, 0, 0, 0, 0]),
    ],
)
def test_a_fifth_copy_is_an_error_naming_the_face(func: Analysis, hand: object) -> None:
    with pytest.raises(TileCountError, match=r"5 copies of (1m|E)"):
        func(hand)


@pytest.mark.parametrize("func", EVERY)
@pytest.mark.parametrize("size", [0, 9, 33, 35])
def test_a_count_vector_has_34_counts(func: Analysis, size: int) -> None:
    for hand in ([0] * size, bytes(size)):
        with pytest.raises(TileCountError, match=f"34 counts.*got {size}"):
            func(hand)


@pytest.mark.parametrize("func", EVERY)
def test_negative_counts_are_an_error(func: Analysis) -> None:
    hand = [2, -1] + [0] * 32
    with pytest.raises(TileCountError, match="-1 copies of 2m"):
        func(hand)


@pytest.mark.parametrize("func", EVERY)
def test_non_integer_counts_are_an_error(func: Analysis) -> None:
    with pytest.raises(TypeError, match="integers"):
        func([0.5] * 28 + [0] * 6)


@PROPERTY
@given(hands_13, shapes_variants)
def test_draw_shanten_is_the_shanten_after_each_draw(hand: bytes, shapes: Shapes) -> None:
    after = draw_shanten(hand, shapes=shapes)
    for t in range(34):
        expected = 99 if hand[t] == 4 else shanten(add(hand, t, 1), shapes=shapes)
        assert after[t] == expected, tile_name(t)


def test_draw_shanten_names_the_useful_draws():
    before = shanten("123m456p789s1234z")
    after = draw_shanten("123m456p789s1234z")
    assert [tile_name(t) for t in range(34) if after[t] < before] == ["E", "S", "W", "N"]
    with pytest.raises(TileCountError):
        draw_shanten("123m456p789s11223z")


@PROPERTY
@given(hands_14, shapes_variants)
def test_discard_shanten_is_the_shanten_after_each_discard(hand: bytes, shapes: Shapes) -> None:
    after = discard_shanten(hand, shapes=shapes)
    for t in range(34):
        expected = 99 if not hand[t] else shanten(add(hand, t, -1), shapes=shapes)
        assert after[t] == expected, tile_name(t)


@PROPERTY
@given(hands((13, 14)))
def test_seven_pairs_and_orphans_shanten_follow_their_definitions(hand: bytes) -> None:
    # The analysis counts faces with bytes methods; this is the plain reading of the forms.
    counts = list(hand)
    pairs, kinds = sum(c >= 2 for c in counts), sum(c >= 1 for c in counts)
    assert shanten_seven_pairs(hand) == 6 - pairs + max(0, 7 - kinds)
    assert shanten_seven_pairs(hand, shapes=QUAD_PAIRS) == 6 - sum(c // 2 for c in counts)
    orphans = [counts[t] for t in (0, 8, 9, 17, 18, 26, 27, 28, 29, 30, 31, 32, 33)]
    held = sum(c >= 1 for c in orphans)
    assert shanten_thirteen_orphans(hand) == 13 - held - any(c >= 2 for c in orphans)
