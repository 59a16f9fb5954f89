"""Legality, in one place: the win requirements of each rule set and the reason in words
when a hand fails them, the legal readings of a win, the requirement-aware wait set
(RULES.md §0.3: "hand + t is a legal win for that variant"), 报听 validity and sichuan's
last-four zone. The engine, the scorer, the bots and the tests all ask these functions;
none keeps a copy of a rule.

The requirements are knobs of `RuleSet`: 三门全, 么九, 必须有碰 and its substitutes, 缺一门.
Seven pairs are exempt from the pung rule, thirteen orphans from all of them (§3.4, §5.4).
`legal_arrangements` is also the scorer's fast path (it runs for every win scored), so it
is written with plain loops and enum members looked up once.
"""

from __future__ import annotations

from collections.abc import Sequence
from operator import attrgetter
from typing import Final

from fangcheng.analysis.hand import Arrangement, Form, GroupKind, decompositions, is_win, waits
from fangcheng.rules.ruleset import SUIT_LETTERS, RuleSet
from fangcheng.tiles.melds import Meld, MeldKind
from fangcheng.tiles.notation import (
    DRAGONS,
    TERMINAL_COUNTS,
    format_counts,
    format_tiles,
    tile_name,
)

__all__ = [
    "declarable",
    "final_counts",
    "hand_failure",
    "has_pung",
    "holds_void_suit",
    "in_last_four",
    "in_void_suit",
    "is_legal_win",
    "legal_arrangements",
    "legal_readings",
    "legal_win",
    "may_meld_discard",
    "meld_has_pung",
    "no_win_reason",
    "wait_set",
]

_SUIT_NAMES: Final = ("万 (m)", "饼 (p)", "条 (s)")
# enum members looked up once (a lookup on the class is slow on the hot path)
_STANDARD: Final = Form.STANDARD
_XUANFENG: Final = MeldKind.XUANFENG
_PUNG: Final = GroupKind.PUNG
_PAIR: Final = GroupKind.PAIR
_DRAGON_SET: Final = GroupKind.DRAGONS


def final_counts(concealed: bytes, melds: Sequence[Meld]) -> bytes:
    """The whole hand as 34 counts: concealed tiles plus every meld's tiles."""
    if not melds:
        return concealed
    counts = bytearray(concealed)
    for meld in melds:
        for t in meld.tiles:
            counts[t] += 1
    return bytes(counts)


def in_void_suit(tile: int, que: int | None) -> bool:
    """Whether ``tile`` is of the seat's 缺 suit (sichuan §4.4): never punged or konged
    (D48), and a hand holding one cannot win."""
    return que is not None and tile < 27 and tile // 9 == que


def may_meld_discard(tile: int, declared: bool, que: int | None) -> bool:
    """Whether a seat may take another's ``tile`` (a discard, or a robbed dragon, D13) into
    a 碰, 明杠 or 吃: not once it has declared 报听 (D32), never of its 缺 suit (D48). It
    is never a 旋风杠 (D88: 攒杠 completes from draws), and a sichuan winner is not asked
    at all (D53); a win on the tile is `is_legal_win`'s to judge."""
    return not declared and not in_void_suit(tile, que)


def holds_void_suit(counts: bytes, que: int | None) -> bool:
    """Whether 34 counts hold a tile of the 缺 suit ``que``: such a hand cannot win, and at
    the end of the wall its seat is a 花猪 (§4.10 item 1)."""
    return que is not None and any(counts[9 * que : 9 * que + 9])


def hand_failure(rules: RuleSet, final: bytes, que: int | None = None) -> str | None:
    """The first requirement the whole hand fails that no reading can fix, or None."""
    if rules.void_suit or rules.three_suits:
        present = [any(final[0:9]), any(final[9:18]), any(final[18:27])]
        if rules.void_suit:
            if que is not None and present[que]:
                return f"缺一门 fails: the hand holds tiles of its 缺 suit {SUIT_LETTERS[que]}"
            if que is None and all(present):
                return "缺一门 fails: the hand holds all three suits (D73)"
        if rules.three_suits and not all(present):
            missing = ", ".join(n for n, p in zip(_SUIT_NAMES, present, strict=True) if not p)
            return f"三门全 fails: no {missing} tile in the hand"
    if rules.terminal and not any(TERMINAL_COUNTS(final)):
        return "不能缺么九 fails: no 1, 9 or honour tile in the hand"
    return None


def meld_has_pung(rules: RuleSet, meld: Meld) -> bool:
    """必须有碰 met by a laid meld: a pung or kong, or a 旋风杠 where it stands for one."""
    return meld.is_pung_like or (rules.dragon_set_is_pung and meld.kind is _XUANFENG)


def has_pung(rules: RuleSet, arrangement: Arrangement, melds: Sequence[Meld]) -> bool:
    """必须有碰 for one reading: a pung or kong anywhere, or a rule set's substitute."""
    if arrangement.form is not _STANDARD:
        return True  # seven pairs and thirteen orphans are exempt
    for meld in melds:
        if meld_has_pung(rules, meld):
            return True
    for g in arrangement.groups:
        kind = g.kind
        if kind is _PUNG or (rules.dragon_set_is_pung and kind is _DRAGON_SET):
            return True
        if kind is _PAIR and rules.dragon_pair_is_pung and g.tile in DRAGONS:
            return True
    return False


def legal_arrangements(
    rules: RuleSet, hand14: bytes, melds: Sequence[Meld], que: int | None = None
) -> list[Arrangement]:
    """The readings of a complete concealed hand that meet every requirement: the only
    readings a win may be scored by (D77), so an empty list says the hand is no win."""
    return list(legal_readings(rules, hand14, final_counts(hand14, melds), melds, que))


#: Entries `legal_readings` keeps per rule set before it starts again (a few MB at most).
_MEMO_SIZE: Final = 1 << 16


def legal_readings(
    rules: RuleSet, hand14: bytes, final: bytes, melds: Sequence[Meld], que: int | None
) -> tuple[Arrangement, ...]:
    """`legal_arrangements` with the whole hand's counts (`final_counts`) given, memoised.

    The readings depend only on the concealed and the final counts, the 缺 suit and
    whether a laid meld is a pung, so they are kept by those, per rule set: the scorer
    asks this for every win, and the bots score the same hands again and again. A hit
    costs a fifth of finding them (0.36 µs against 1.7 µs, the golden corpus's wins)."""
    laid = False
    if rules.pung:
        for m in melds:  # a plain loop: a generator costs a call
            if meld_has_pung(rules, m):
                laid = True
                break
    key = (hand14, final, que, laid)
    memo = rules.legal_memo
    found = memo.get(key)
    if found is None:
        found = _legal_readings(rules, hand14, final, que, laid)
        if len(memo) >= _MEMO_SIZE:
            memo.clear()
        memo[key] = found
    return found


_TILES: Final = attrgetter("tiles")
_NO_SUIT: Final = bytes(9)  # a suit's counts with no tile of it
_NO_HONOUR: Final = bytes(7)


def legal_win(
    rules: RuleSet, concealed: bytes, tile: int, melds: Sequence[Meld], que: int | None
) -> tuple[bytes, int, bool, tuple[Arrangement, ...]]:
    """The hand ``concealed`` + ``tile`` with ``melds`` laid, as the scorer reads it:
    its whole hand's counts (`final_counts`), how many of 万 饼 条 it holds, whether it
    holds an honour, and its legal readings (`legal_readings`; none: no win).

    Memoised per rule set by the tiles alone (a meld's tiles tell its kind apart as far
    as legality goes: a run, a pung or kong, or a 中发白 set), so that a win met again
    costs one dict probe instead of building the hand, its counts and these facts: the
    scorer asks this for every win, and the bots score the same hands again and again."""
    key = (concealed, tile, tuple(map(_TILES, melds)), que)  # the tiles mapped in C
    memo = rules.win_memo
    found = memo.get(key)
    if found is None:
        hand = bytearray(concealed)
        hand[tile] += 1
        hand14 = bytes(hand)
        final = final_counts(hand14, melds)
        suits = (final[0:9] != _NO_SUIT) + (final[9:18] != _NO_SUIT) + (final[18:27] != _NO_SUIT)
        readings = legal_readings(rules, hand14, final, melds, que)
        found = (final, suits, final[27:34] != _NO_HONOUR, readings)
        if len(memo) >= _MEMO_SIZE:
            memo.clear()
        memo[key] = found
    return found


def _legal_readings(
    rules: RuleSet, hand14: bytes, final: bytes, que: int | None, laid: bool
) -> tuple[Arrangement, ...]:
    """`legal_readings` found: the decompositions that meet every requirement."""
    found = decompositions(hand14, shapes=rules.shapes)  # none for an incomplete hand
    if not found or hand_failure(rules, final, que) is not None:
        return ()
    if laid or not rules.pung:
        return tuple(found)
    return tuple(a for a in found if has_pung(rules, a, ()))


def is_legal_win(
    rules: RuleSet, hand14: bytes, melds: Sequence[Meld], que: int | None = None
) -> bool:
    """Whether `legal_arrangements` finds a reading, without listing them: the engine's and
    `wait_set`'s fast path (the readings are enumerated only for 必须有碰, and only until
    one has a pung)."""
    if not is_win(hand14, shapes=rules.shapes):
        return False
    if hand_failure(rules, final_counts(hand14, melds), que) is not None:
        return False
    if not rules.pung:
        return True
    return any(has_pung(rules, a, melds) for a in decompositions(hand14, shapes=rules.shapes))


def _shape_words(rules: RuleSet) -> str:
    words = ["four melds and a pair"]
    if rules.shapes.seven_pairs:
        words.append("seven pairs")
    if rules.shapes.thirteen_orphans:
        words.append("thirteen orphans")
    return " or ".join(words)


def no_win_reason(
    rules: RuleSet, hand14: bytes, melds: Sequence[Meld], tile: int, que: int | None = None
) -> str:
    """Why the concealed ``hand14`` (winning ``tile`` included) is not a win, in words."""
    before = bytearray(hand14)
    before[tile] -= 1
    shown = f"{format_counts(before)} + {tile_name(tile)}"
    if melds:
        shown += " with " + " ".join(format_tiles(m.tiles) for m in melds) + " laid"
    if not is_win(hand14, shapes=rules.shapes):
        return f"incomplete: {shown} is not {_shape_words(rules)}"
    failure = hand_failure(rules, final_counts(hand14, melds), que)
    if failure is not None:
        return failure
    if rules.pung:
        return f"必须有碰 fails: no reading of {shown} has a pung or kong" + (
            " or a 中发白 set / dragon pair" if rules.dragon_set_is_pung else ""
        )
    return f"{shown} is not a win under {rules.name}"


def wait_set(
    rules: RuleSet, concealed: bytes, melds: Sequence[Meld] = (), que: int | None = None
) -> tuple[int, ...]:
    """Every face that makes ``concealed`` (13 - 3k tiles) a legal win, ascending.

    By shape, so a face whose copies all lie in others' discards and melds still counts
    (D1); but not a face whose four copies are all the seat's own, concealed or laid: that
    tile cannot come (D78). 报听, the treasure's stand-ins, 查大叫 and 退税 read this set.
    """
    meld_tiles = [m.tiles for m in melds]
    out = []
    for t in waits(concealed, shapes=rules.shapes, melds=meld_tiles):
        grown = bytearray(concealed)
        grown[t] += 1
        if is_legal_win(rules, bytes(grown), melds, que):
            out.append(t)
    return tuple(out)


def declarable(
    rules: RuleSet, concealed: bytes, melds: Sequence[Meld] = (), que: int | None = None
) -> bool:
    """报听 (D32): ``concealed`` (13 - 3k tiles) may be declared ready only while it waits
    on exactly one face of `wait_set` (so, D78, never on a fifth copy of its own)."""
    return len(wait_set(rules, concealed, melds, que)) == 1


#: The last-four zone begins with the draw made when this many tiles remain (D79).
_LAST_FOUR: Final = 4


def in_last_four(left: int) -> bool:
    """Sichuan's 最后四张有胡必胡 zone (D56, D79), ``left`` tiles being in the wall now: the
    draws made when 4, 3, 2 or 1 tiles remained before the draw, and every discard after
    the first of them. Both leave fewer than four behind; a draw from five (leaving four),
    and the discard after it, come before the zone."""
    return left < _LAST_FOUR
