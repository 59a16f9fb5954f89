"""Fans (番): one small definition each, and the fan table of every rule set.

A `Fan` is data: its Chinese and English name, its value, its scope (RULES.md §0.4: the
winner's side, a payer's own, or both ways), the fans it replaces, a short reason, and
typed predicates. The winner predicate reads the decomposed hand (an `Arrangement` of the
concealed tiles plus the winning tile) and a read-only `WinContext`; the payer predicate
reads the context and a payer's seat. A predicate returns how many times the fan applies
(0 = not at all; 一般高, 四过一 and 根 count per instance).

The tables at the end list each rule set's fans in the order of its RULES.md section;
`fangcheng.scoring.scorer` is the one scorer that reads them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from enum import Enum
from operator import attrgetter
from typing import Final, NamedTuple

from fangcheng.analysis.hand import Arrangement, Form, GroupKind, WaitShape
from fangcheng.tiles.melds import Meld, MeldKind
from fangcheng.tiles.notation import TERMINAL_COUNTS, TERMINALS_AND_HONOURS

__all__ = [
    "BAICHENG_FANS",
    "BAISHAN_FANS",
    "BAISHAN_PLATFORM_FANS",
    "SICHUAN_FANS",
    "AppliedFan",
    "Fan",
    "PayerTest",
    "Scope",
    "WinContext",
    "WinnerTest",
]


class Scope(Enum):
    """Whose N a fan adds to (RULES.md §0.4)."""

    WINNER = "winner"  # W: every payer's N
    PAYER = "payer"  # L: only the N of the payer it describes
    BOTH = "both"  # WL: W when the winner has it, L for each payer that has it


class WinContext(NamedTuple):
    """Everything about one win that is not the decomposition: who, how, on what.

    A named tuple, so frozen: the scorer builds one per candidate tile in one C call
    (tuple.__new__), where a frozen dataclass's nineteen ``object.__setattr__`` calls
    cost more than its cheaper field reads save over the predicates of a win.
    ``tile`` is the winning face; under 摸宝 it is the face the treasure stands in for.
    ``concealed`` are 34-count vectors per seat, the winner's *without* the winning tile;
    ``final`` is the winner's whole hand (concealed, melds and the winning tile);
    ``suits`` how many of 万 饼 条 it holds and ``honours`` whether it holds an honour.
    ``shapes`` are the positions ``tile`` takes in the decomposition being judged, one
    legal reading (D77; found only for tables with a fan that reads them,
    `Fan.wait_shapes`).
    """

    winner: int
    dealer: int
    tile: int
    self_drawn: bool
    discarder: int | None
    robbed: bool
    after_kong: bool
    treasure: int | None
    treasure_win: bool
    last_tile: bool
    first_draw: bool
    declared: tuple[bool, ...]
    closed: tuple[bool, ...]
    melds: tuple[tuple[Meld, ...], ...]
    concealed: tuple[bytes, ...]
    final: bytes
    suits: int
    honours: bool
    shapes: frozenset[WaitShape]


WinnerTest = Callable[[WinContext, Arrangement], int]
PayerTest = Callable[[WinContext, int], int]


@dataclass(frozen=True, slots=True, kw_only=True)
class Fan:
    """One fan: names, value, scope, relations and the predicates that detect it."""

    name: str
    en: str
    value: int
    scope: Scope
    #: Why it applies, in a few words (shown by ``Score.explain``).
    why: str
    winner: WinnerTest | None = None
    payer: PayerTest | None = None
    #: Names of fans this one removes, for the winner and every payer, when it applies.
    replaces: frozenset[str] = frozenset()
    #: A flat payment of ``flat × 底注`` per payer instead of ``2^N``; no other fan counts.
    flat: int | None = None
    #: Worth the rule set's fan cap rather than ``value`` (天胡, 地胡: D76).
    at_cap: bool = False
    #: The winner predicate reads ``WinContext.shapes`` (the scorer finds them on demand).
    wait_shapes: bool = False
    #: This fan applied once at its own value, the scorer's usual finding, built once.
    once: AppliedFan = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        wants_winner = self.scope is not Scope.PAYER
        wants_payer = self.scope is not Scope.WINNER
        if (self.winner is not None) != wants_winner or (self.payer is not None) != wants_payer:
            raise ValueError(f"fan {self.name}: predicates do not match scope {self.scope.value}")
        object.__setattr__(self, "once", AppliedFan(self, True, self.value))


class AppliedFan(NamedTuple):
    """A fan that applies, how many times, and what it is worth in all."""

    fan: Fan
    times: int
    value: int


# --- shared facts about a hand -----------------------------------------------------------

_TERMINALS: Final = TERMINALS_AND_HONOURS
# Enum members looked up once: reading one off its class costs ~0.2 µs on Python 3.11,
# and the predicates below run for every reading of every win.
_CHOW: Final = GroupKind.CHOW
_PAIR: Final = GroupKind.PAIR
_STANDARD: Final = Form.STANDARD
_SEVEN_PAIRS: Final = Form.SEVEN_PAIRS
_THIRTEEN_ORPHANS: Final = Form.THIRTEEN_ORPHANS
_CHI: Final = MeldKind.CHI
_PENG: Final = MeldKind.PENG
_AN_GANG: Final = MeldKind.AN_GANG
_KIND: Final = attrgetter("kind")
_JIA_SHAPES: Final = frozenset(
    {WaitShape.EDGE, WaitShape.CLOSED, WaitShape.SINGLE, WaitShape.DRAGONS}
)


def _all_pungs(c: WinContext, a: Arrangement) -> bool:
    """Every meld a pung or kong (or a 中发白 set), plus one pair: 飘 / 对对胡 / 碰碰胡."""
    if a.form is not _STANDARD:
        return False
    for g in a.groups:
        if g.kind is _CHOW:
            return False
    return _CHI not in map(_KIND, c.melds[c.winner])  # in C: a generator costs a call


def _winner_runs(c: WinContext, a: Arrangement) -> list[int]:
    runs = []
    for g in a.groups:  # a plain loop: a comprehension costs a call
        if g.kind is _CHOW:
            runs.append(g.tile)
    for m in c.melds[c.winner]:
        if m.kind is _CHI:
            runs.append(m.face)
    return runs


def _payer_runs(c: WinContext, seat: int) -> list[int]:
    melds = c.melds[seat]
    if len(melds) < 2:
        return []
    return [m.face for m in melds if m.kind is _CHI]


def _pairs_of_runs(runs: list[int], three: int) -> int:
    """一般高 instances among runs (D70): 2 → 1, 3 → ``three``, 4 → 2."""
    if len(runs) < 2 or len(set(runs)) == len(runs):
        return 0
    return sum(three if n == 3 else n // 2 for n in map(runs.count, set(runs)))


def _triples_of_runs(runs: list[int]) -> int:
    """两般高 instances: three identical runs of one face (D70)."""
    if len(runs) < 3 or len(set(runs)) == len(runs):
        return 0
    return sum(n == 3 for n in map(runs.count, set(runs)))


def _no_an_gang(melds: tuple[Meld, ...]) -> bool:
    return all(m.kind is not _AN_GANG for m in melds)


def _jia_shape(c: WinContext) -> bool:
    """夹 (D16): 坎, 边, 吊 (not a run end) or dragon sandwich, or a lone 么九 (D16 b)."""
    if not c.shapes.isdisjoint(_JIA_SHAPES):
        return True
    return c.tile in _TERMINALS and sum(TERMINAL_COUNTS(c.final)) == 1


def _pair_wait(c: WinContext, a: Arrangement) -> bool:
    """Whether the winning tile completes the pair: in an all-pung reading (no chow to
    make it a 两头吊) that is where `shapes_in` finds 单吊. A group is a (kind, tile) tuple."""
    return (_PAIR, c.tile) in a.groups


# --- predicates --------------------------------------------------------------------------


def _winner_is_dealer(c: WinContext, a: Arrangement) -> bool:
    return c.winner == c.dealer


def _payer_is_dealer(c: WinContext, seat: int) -> bool:
    return seat == c.dealer


def _self_drawn(c: WinContext, a: Arrangement) -> bool:
    return c.self_drawn


def _winner_closed(c: WinContext, a: Arrangement) -> bool:
    return c.closed[c.winner]


def _payer_closed(c: WinContext, seat: int) -> bool:
    return c.closed[seat]


def _payer_discarded(c: WinContext, seat: int) -> bool:
    return seat == c.discarder


def _with_chicken(c: WinContext, a: Arrangement) -> bool:
    """带鸡: a 1s in the final hand, or a drawn 1s treasure (D64)."""
    return c.final[18] > 0 or (c.treasure_win and c.treasure == 18)


def _jia(c: WinContext, a: Arrangement) -> bool:
    return _jia_shape(c)


def _dan_piao(c: WinContext, a: Arrangement) -> bool:
    return _all_pungs(c, a) and _pair_wait(c, a)


def _shuang_piao(c: WinContext, a: Arrangement) -> bool:
    return _all_pungs(c, a) and not _pair_wait(c, a)


def _treasure_draw(c: WinContext, a: Arrangement) -> bool:
    return c.treasure_win


def _treasure_on_wait(c: WinContext, a: Arrangement) -> bool:
    """宝中宝 (D20, D62): the treasure face is itself a 夹-shaped winning tile."""
    return c.treasure_win and c.tile == c.treasure and _jia_shape(c)


def _kong_bloom(c: WinContext, a: Arrangement) -> bool:
    """杠上开花 (D69): a self-drawn win on one's own replacement tile."""
    return c.after_kong and c.self_drawn


def _kong_discard_payer(c: WinContext, seat: int) -> bool:
    """杠后炮 for the payer (D69): the discard right after the discarder's replacement."""
    return seat == c.discarder and c.after_kong and not c.self_drawn and not c.robbed


def _kong_discard_winner(c: WinContext, a: Arrangement) -> bool:
    """杠上炮 as a winner's fan (sichuan, D69)."""
    return c.after_kong and not c.self_drawn and not c.robbed


def _winner_declared(c: WinContext, a: Arrangement) -> bool:
    return c.declared[c.winner]


def _payer_declared(c: WinContext, seat: int) -> bool:
    return c.declared[seat]


def _winner_one_tile(c: WinContext, a: Arrangement) -> bool:
    """手把一: one concealed tile before the win (so a 单吊), and no 暗杠."""
    melds = c.melds[c.winner]  # one concealed tile of 13 means four melds
    return len(melds) == 4 and sum(c.concealed[c.winner]) == 1 and _no_an_gang(melds)


def _payer_one_tile(c: WinContext, seat: int) -> bool:
    """A payer's 手把一 (D72): one concealed tile at settlement and no 暗杠."""
    melds = c.melds[seat]
    return len(melds) == 4 and sum(c.concealed[seat]) == 1 and _no_an_gang(melds)


def _winner_two_runs(c: WinContext, a: Arrangement) -> int:
    """一般高 where three identical runs are 两般高 instead (baishan_platform, D70)."""
    return _pairs_of_runs(_winner_runs(c, a), 0)


def _payer_two_runs(c: WinContext, seat: int) -> int:
    return _pairs_of_runs(_payer_runs(c, seat), 0)


def _winner_two_runs_of_three(c: WinContext, a: Arrangement) -> int:
    """一般高 where three identical runs still count once (baishan has no 两般高, D59)."""
    return _pairs_of_runs(_winner_runs(c, a), 1)


def _payer_two_runs_of_three(c: WinContext, seat: int) -> int:
    return _pairs_of_runs(_payer_runs(c, seat), 1)


def _winner_three_runs(c: WinContext, a: Arrangement) -> int:
    return _triples_of_runs(_winner_runs(c, a))


def _payer_three_runs(c: WinContext, seat: int) -> int:
    return _triples_of_runs(_payer_runs(c, seat))


def _winner_four_of_a_face(c: WinContext, a: Arrangement) -> int:
    """四过一 (D71): suited faces with all four copies in the hand and no kong of them."""
    final = c.final
    n = final.count(4, 0, 27)
    if n:
        for m in c.melds[c.winner]:  # a kong's face holds its four copies
            if m.is_kong and m.face < 27 and final[m.face] == 4:
                n -= 1
    return n


def _payer_four_of_a_face(c: WinContext, seat: int) -> int:
    """A payer's 四过一 (D71): four copies of a suited face inside its exposed 吃/碰."""
    melds = c.melds[seat]
    if len(melds) < 2:
        return 0
    counts: dict[int, int] = {}
    for m in melds:
        if m.kind is _CHI or m.kind is _PENG:
            for t in m.tiles:
                counts[t] = counts.get(t, 0) + 1
    return sum(1 for t, n in counts.items() if n == 4 and t < 27)


def _all_pungs_test(c: WinContext, a: Arrangement) -> bool:
    return _all_pungs(c, a)


def _three_closed_payers(c: WinContext, a: Arrangement) -> bool:
    closed = c.closed
    return not closed[c.winner] and sum(closed) == 3


def _all_closed(c: WinContext, a: Arrangement) -> bool:
    return all(c.closed)


def _half_flush(c: WinContext, a: Arrangement) -> bool:
    return c.suits == 1 and c.honours


def _full_flush(c: WinContext, a: Arrangement) -> bool:
    return c.suits == 1 and not c.honours


def _seven_pairs(c: WinContext, a: Arrangement) -> bool:
    return a.form is _SEVEN_PAIRS


def _thirteen_orphans(c: WinContext, a: Arrangement) -> bool:
    return a.form is _THIRTEEN_ORPHANS


def _always(c: WinContext, a: Arrangement) -> bool:
    return True


def _golden_hook(c: WinContext, a: Arrangement) -> bool:
    """金钩钓 (D63): four pung/kong melds laid, 单吊 on the one concealed tile."""
    melds = c.melds[c.winner]
    return (
        len(melds) == 4 and sum(c.concealed[c.winner]) == 1 and all(m.is_pung_like for m in melds)
    )


def _only_258(final: bytes) -> bool:
    return not any(final[t] for t in range(34) if t >= 27 or t % 9 not in (1, 4, 7))


def _258_pungs(c: WinContext, a: Arrangement) -> bool:
    """将对: all pungs of 2/5/8 with a 2/5/8 pair."""
    return _all_pungs(c, a) and _only_258(c.final)


def _258_golden_hook(c: WinContext, a: Arrangement) -> bool:
    return _golden_hook(c, a) and _258_pungs(c, a)


def _has_terminal_run(tile: int) -> bool:
    return tile < 27 and tile % 9 in (0, 6)


def _terminals_everywhere(c: WinContext, a: Arrangement) -> bool:
    """带幺九 (D74): every meld, exposed or concealed, and the pair hold a 1 or 9."""
    if a.form is not _STANDARD:
        return False
    for g in a.groups:
        if g.kind is _CHOW:
            if not _has_terminal_run(g.tile):
                return False
        elif g.tile not in _TERMINALS:
            return False
    for m in c.melds[c.winner]:
        ok = _has_terminal_run(m.face) if m.kind is _CHI else m.face in _TERMINALS
        if not ok:
            return False
    return True


def _roots(c: WinContext, a: Arrangement) -> int:
    """根 (D74): every face with four copies in the final hand, konged or not."""
    return c.final.count(4)


def _robbed_kong(c: WinContext, a: Arrangement) -> bool:
    return c.robbed


def _last_tile_draw(c: WinContext, a: Arrangement) -> bool:
    return c.last_tile and c.self_drawn


def _heavenly(c: WinContext, a: Arrangement) -> bool:
    return c.first_draw and c.winner == c.dealer


def _earthly(c: WinContext, a: Arrangement) -> bool:
    return c.first_draw and c.winner != c.dealer


# --- definitions -------------------------------------------------------------------------

W, L, WL = Scope.WINNER, Scope.PAYER, Scope.BOTH

SELF_DRAW: Final = Fan(
    name="自摸", en="self-draw", value=1, scope=W, why="won on a tile it drew",
    winner=_self_drawn,
)  # fmt: skip
DISCARDER: Final = Fan(
    name="点炮", en="dealt in", value=1, scope=L,
    why="discarded the winning tile (or had its kong robbed)", payer=_payer_discarded,
)  # fmt: skip

# baicheng §2.7
BC_DEALER: Final = Fan(
    name="庄家", en="dealer", value=1, scope=WL, why="the dealer wins, or the payer deals",
    winner=_winner_is_dealer, payer=_payer_is_dealer,
)  # fmt: skip
BC_STANDING: Final = Fan(
    name="站立", en="closed winner", value=1, scope=W,
    why="no 吃, 碰, exposed kong or laid 旋风杠 (暗杠 allowed)", winner=_winner_closed,
)  # fmt: skip
BC_CHICKEN: Final = Fan(
    name="带鸡", en="with the yaoji", value=1, scope=W,
    why="a 1s in the hand or won on (D64)", winner=_with_chicken,
)  # fmt: skip
BC_JIA: Final = Fan(
    name="夹胡", en="closed wait", value=1, scope=W,
    why="坎, 边, 单吊 or dragon sandwich, or a lone 么九 (D16)", winner=_jia,
    wait_shapes=True,
)  # fmt: skip
BC_SHUANG_PIAO: Final = Fan(
    name="双飘", en="all pungs, pung wait", value=2, scope=W,
    why="all pungs; the winning tile completes a pung or the 中发白 set (D17)",
    winner=_shuang_piao, replaces=frozenset({"夹胡"}),
)  # fmt: skip
BC_DAN_PIAO: Final = Fan(
    name="单飘", en="all pungs, pair wait", value=3, scope=W,
    why="all pungs; the winning tile completes the pair (D17)",
    winner=_dan_piao, replaces=frozenset({"夹胡"}),
)  # fmt: skip
BC_MOBAO: Final = Fan(
    name="摸宝", en="treasure draw", value=2, scope=W,
    why="drew the treasure face while ready; it stands in for a wait (D19)",
    winner=_treasure_draw, replaces=frozenset({"自摸"}),
)  # fmt: skip
BC_BAOZHONGBAO: Final = Fan(
    name="宝中宝", en="treasure on the wait", value=3, scope=W,
    why="the treasure face is the 夹 winning tile itself (D20, D62)",
    winner=_treasure_on_wait, replaces=frozenset({"摸宝", "自摸"}), wait_shapes=True,
)  # fmt: skip
BC_KONG_BLOOM: Final = Fan(
    name="杠上开花", en="win on a kong replacement", value=1, scope=W,
    why="won on its own replacement tile (D69)", winner=_kong_bloom,
)  # fmt: skip
BC_CLOSED_PAYER: Final = Fan(
    name="门清", en="closed payer", value=1, scope=L,
    why="the payer is closed (背靠背)", payer=_payer_closed,
)  # fmt: skip

# baishan_platform §3.6 and baishan §5.6
BS_READY: Final = Fan(
    name="报听", en="declared ready", value=1, scope=WL, why="declared ready (报听)",
    winner=_winner_declared, payer=_payer_declared,
)  # fmt: skip
BS_CLOSED: Final = Fan(
    name="立门", en="closed hand", value=1, scope=WL, why="no 吃, 碰 or exposed kong",
    winner=_winner_closed, payer=_payer_closed,
)  # fmt: skip
BS_DEALER: Final = Fan(
    name="坐庄", en="dealer", value=1, scope=WL, why="the dealer wins, or the payer deals",
    winner=_winner_is_dealer, payer=_payer_is_dealer,
)  # fmt: skip
BS_ONE_TILE: Final = Fan(
    name="手把一", en="one tile in hand", value=1, scope=WL,
    why="one concealed tile, no 暗杠 (D72)", winner=_winner_one_tile, payer=_payer_one_tile,
)  # fmt: skip
P_KONG_BLOOM: Final = Fan(
    name="杠上开花", en="win on a kong replacement", value=1, scope=W,
    why="won on its own replacement tile (D69)", winner=_kong_bloom,
)  # fmt: skip
P_KONG_DISCARD: Final = Fan(
    name="杠后炮", en="discard after a kong", value=1, scope=L,
    why="dealt in with the discard after its own kong (D69)", payer=_kong_discard_payer,
)  # fmt: skip
P_TWO_RUNS: Final = Fan(
    name="一般高", en="two identical chows", value=1, scope=WL,
    why="two identical chows; a payer's must both be exposed (D37, D70)",
    winner=_winner_two_runs, payer=_payer_two_runs,
)  # fmt: skip
BS_FOUR_OF_A_FACE: Final = Fan(
    name="四过一", en="four of a face, not konged", value=1, scope=WL,
    why="all four copies of a suited face, not as a kong (D71)",
    winner=_winner_four_of_a_face, payer=_payer_four_of_a_face,
)  # fmt: skip
P_ALL_PUNGS: Final = Fan(
    name="碰碰胡", en="all pungs", value=2, scope=W, why="four pungs or kongs and a pair",
    winner=_all_pungs_test,
)  # fmt: skip
P_THREE_CLOSED: Final = Fan(
    name="三家清", en="three closed payers", value=2, scope=W,
    why="an open winner against three closed payers; replaces their 立门 (D36)",
    winner=_three_closed_payers, replaces=frozenset({"立门"}),
)  # fmt: skip
P_HALF_FLUSH: Final = Fan(
    name="混一色", en="half flush", value=2, scope=W, why="one suit plus honours",
    winner=_half_flush,
)  # fmt: skip
P_THREE_RUNS: Final = Fan(
    name="两般高", en="three identical chows", value=2, scope=WL,
    why="three identical chows; a payer's must all be exposed (D70)",
    winner=_winner_three_runs, payer=_payer_three_runs,
)  # fmt: skip
P_SEVEN_PAIRS: Final = Fan(
    name="七小对", en="seven pairs", value=3, scope=W, why="seven distinct pairs (D35)",
    winner=_seven_pairs,
)  # fmt: skip
P_FULL_FLUSH: Final = Fan(
    name="清一色", en="full flush", value=3, scope=W, why="one suit, no honours",
    winner=_full_flush,
)  # fmt: skip
P_ALL_CLOSED: Final = Fan(
    name="四家清", en="all four closed", value=4, scope=W,
    why="all four players closed; no 立门 for anyone (D36)",
    winner=_all_closed, replaces=frozenset({"立门"}),
)  # fmt: skip
P_THIRTEEN_ORPHANS: Final = Fan(
    name="十三幺", en="thirteen orphans", value=0, scope=W,
    why="thirteen orphans: a flat 2 × cap = 100 × 底注 per payer (D38)",
    winner=_thirteen_orphans, flat=100,
)  # fmt: skip

B_KONG_BLOOM: Final = Fan(
    name="杠后开花", en="win on a kong replacement", value=2, scope=W,
    why="won on its own replacement tile (D58, D69)", winner=_kong_bloom,
)  # fmt: skip
B_KONG_DISCARD: Final = Fan(
    name="杠后炮", en="discard after a kong", value=2, scope=L,
    why="dealt in with the discard after its own kong (D58, D69)",
    payer=_kong_discard_payer,
)  # fmt: skip
B_ALL_PUNGS: Final = Fan(
    name="对对胡", en="all pungs", value=1, scope=W, why="four pungs or kongs and a pair",
    winner=_all_pungs_test,
)  # fmt: skip
B_HALF_FLUSH: Final = Fan(
    name="混一色", en="half flush", value=1, scope=W, why="one suit plus honours",
    winner=_half_flush,
)  # fmt: skip
B_TWO_RUNS: Final = Fan(
    name="一般高", en="two identical chows", value=1, scope=WL,
    why="two identical chows (three count once, D59); a payer's must be exposed (D70)",
    winner=_winner_two_runs_of_three, payer=_payer_two_runs_of_three,
)  # fmt: skip
B_FULL_FLUSH: Final = Fan(
    name="清一色", en="full flush", value=2, scope=W, why="one suit, no honours",
    winner=_full_flush,
)  # fmt: skip
B_THREE_CLOSED: Final = Fan(
    name="三家清", en="three closed payers", value=2, scope=W,
    why="an open winner against three closed payers; replaces their 立门 (D36)",
    winner=_three_closed_payers, replaces=frozenset({"立门"}),
)  # fmt: skip
B_SEVEN_PAIRS: Final = Fan(
    name="七小对", en="seven pairs", value=3, scope=W, why="seven distinct pairs (D35)",
    winner=_seven_pairs,
)  # fmt: skip
B_ALL_CLOSED: Final = Fan(
    name="四家清", en="all four closed", value=3, scope=W,
    why="all four players closed; no 立门 for anyone (D36)",
    winner=_all_closed, replaces=frozenset({"立门"}),
)  # fmt: skip
B_THIRTEEN_ORPHANS: Final = Fan(
    name="十三幺", en="thirteen orphans", value=4, scope=W,
    why="thirteen orphans; stacks with other fans", winner=_thirteen_orphans,
)  # fmt: skip

# sichuan §4.6: one base pattern (the others replace 平胡 and each other), then additions
S_PLAIN: Final = Fan(
    name="平胡", en="plain win", value=0, scope=W, why="no higher base pattern",
    winner=_always,
)  # fmt: skip
S_ALL_PUNGS: Final = Fan(
    name="对对胡", en="all pungs", value=1, scope=W, why="four pungs or kongs and a pair",
    winner=_all_pungs_test, replaces=frozenset({"平胡"}),
)  # fmt: skip
S_GOLDEN_HOOK: Final = Fan(
    name="金钩钓", en="golden hook", value=2, scope=W,
    why="four pung/kong melds laid, 单吊 on the last tile (D63)",
    winner=_golden_hook, replaces=frozenset({"平胡", "对对胡"}),
)  # fmt: skip
S_258_PUNGS: Final = Fan(
    name="将对", en="all pungs of 2-5-8", value=3, scope=W,
    why="all pungs of 2, 5 and 8 with a 2/5/8 pair",
    winner=_258_pungs, replaces=frozenset({"平胡", "对对胡"}),
)  # fmt: skip
S_258_GOLDEN_HOOK: Final = Fan(
    name="将金钩钓", en="golden hook of 2-5-8", value=4, scope=W,
    why="将对 that is also 金钩钓",
    winner=_258_golden_hook, replaces=frozenset({"平胡", "对对胡", "金钩钓", "将对"}),
)  # fmt: skip
S_TERMINALS: Final = Fan(
    name="带幺九", en="terminals in every set", value=2, scope=W,
    why="every meld and the pair hold a 1 or 9 (D74)",
    winner=_terminals_everywhere, replaces=frozenset({"平胡", "对对胡"}),
)  # fmt: skip
S_SEVEN_PAIRS: Final = Fan(
    name="七对", en="seven pairs", value=2, scope=W,
    why="seven pairs; four of a face may be two (D50)",
    winner=_seven_pairs, replaces=frozenset({"平胡"}),
)  # fmt: skip
S_FULL_FLUSH: Final = Fan(
    name="清一色", en="full flush", value=2, scope=W, why="one suit only",
    winner=_full_flush,
)  # fmt: skip
S_ROOT: Final = Fan(
    name="根", en="root", value=1, scope=W,
    why="a face with all four copies in the hand, konged or not (D74)", winner=_roots,
)  # fmt: skip
S_KONG_BLOOM: Final = Fan(
    name="杠上花", en="win on a kong replacement", value=1, scope=W,
    why="won on its own replacement tile (D69)", winner=_kong_bloom,
)  # fmt: skip
S_KONG_DISCARD: Final = Fan(
    name="杠上炮", en="discard after a kong", value=1, scope=W,
    why="won on the discard that followed the discarder's kong (D69)",
    winner=_kong_discard_winner,
)  # fmt: skip
S_ROB_KONG: Final = Fan(
    name="抢杠胡", en="robbing a kong", value=1, scope=W, why="won on a robbed 弯杠",
    winner=_robbed_kong,
)  # fmt: skip
S_LAST_TILE: Final = Fan(
    name="海底捞月", en="last tile self-draw", value=1, scope=W,
    why="self-drew the last tile of the wall", winner=_last_tile_draw,
)  # fmt: skip
S_HEAVENLY: Final = Fan(
    name="天胡", en="heavenly hand", value=0, scope=W,
    why="the dealer won on its first 14 tiles; worth the cap (D76)",
    winner=_heavenly, at_cap=True,
)  # fmt: skip
S_EARTHLY: Final = Fan(
    name="地胡", en="earthly hand", value=0, scope=W,
    why="won on its first draw with no call before it; worth the cap (D76)",
    winner=_earthly, at_cap=True,
)  # fmt: skip

BAICHENG_FANS: Final = (
    BC_DEALER, SELF_DRAW, BC_STANDING, BC_CHICKEN, BC_JIA, BC_SHUANG_PIAO, BC_DAN_PIAO,
    BC_MOBAO, BC_BAOZHONGBAO, BC_KONG_BLOOM, BC_CLOSED_PAYER, DISCARDER,
)  # fmt: skip
BAISHAN_PLATFORM_FANS: Final = (
    BS_READY, BS_CLOSED, DISCARDER, SELF_DRAW, BS_DEALER, BS_ONE_TILE, P_KONG_BLOOM,
    P_KONG_DISCARD, P_TWO_RUNS, BS_FOUR_OF_A_FACE, P_ALL_PUNGS, P_THREE_CLOSED, P_HALF_FLUSH,
    P_THREE_RUNS, P_SEVEN_PAIRS, P_FULL_FLUSH, P_ALL_CLOSED, P_THIRTEEN_ORPHANS,
)  # fmt: skip
BAISHAN_FANS: Final = (
    BS_READY, BS_CLOSED, DISCARDER, SELF_DRAW, BS_DEALER, B_ALL_PUNGS, BS_ONE_TILE,
    B_HALF_FLUSH, B_TWO_RUNS, BS_FOUR_OF_A_FACE, B_FULL_FLUSH, B_KONG_DISCARD, B_THREE_CLOSED,
    B_KONG_BLOOM, B_SEVEN_PAIRS, B_ALL_CLOSED, B_THIRTEEN_ORPHANS,
)  # fmt: skip
SICHUAN_FANS: Final = (
    S_PLAIN, S_ALL_PUNGS, S_GOLDEN_HOOK, S_258_PUNGS, S_258_GOLDEN_HOOK, S_TERMINALS,
    S_SEVEN_PAIRS, S_FULL_FLUSH, S_ROOT, SELF_DRAW, S_KONG_BLOOM, S_KONG_DISCARD, S_ROB_KONG,
    S_LAST_TILE, S_HEAVENLY, S_EARTHLY,
)  # fmt: skip
