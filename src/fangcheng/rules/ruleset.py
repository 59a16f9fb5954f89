"""Rule sets as data: one frozen `RuleSet` per regional game, read by one scorer.

Every knob has a default and a comment; the four presets (`BAICHENG`, `BAISHAN`,
`BAISHAN_PLATFORM`, `SICHUAN`) set the knobs RULES.md fixes for them, and differ
otherwise only in their fan tables (`fangcheng.rules.fans`). Nothing outside this package
asks a rule set its name to decide anything: the tile set, the wall, the dice, every
limit is a field, so a renamed and overridden preset (``dataclasses.replace(BAISHAN,
name="baishan_house", cap_base=20)``) plays, records and replays like a preset.
`find_rules` finds a preset by name; `configure` validates a table's options (room, 漂,
缺, claim window, cap) and returns the rule set with the overrides applied, plus the
per-table `Options`."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import Enum
from typing import Final

from fangcheng.analysis.hand import CLASSIC, Arrangement, Shapes
from fangcheng.rules.fans import (
    BAICHENG_FANS,
    BAISHAN_FANS,
    BAISHAN_PLATFORM_FANS,
    SICHUAN_FANS,
    Fan,
    PayerTest,
    WinnerTest,
)
from fangcheng.tiles.notation import DRAGONS, KINDS, tile_set

__all__ = [
    "ALL_RULES",
    "BAICHENG",
    "BAISHAN",
    "BAISHAN_PLATFORM",
    "ROOMS",
    "SICHUAN",
    "Dice",
    "KongPayers",
    "KongTable",
    "OptionError",
    "Options",
    "Room",
    "RuleSet",
    "configure",
    "find_rules",
]

SUIT_LETTERS: Final = "mps"


class OptionError(ValueError):
    """An unknown option or value: the message names it and lists the valid ones."""


class Dice(Enum):
    """How the wall is broken (§1.4): cosmetic under the linear wall (D5), but logged."""

    #: baicheng: no dice; the dealer starts at the end of their own wall
    NONE = "none"
    #: baishan: one throw ``s``; the ``s``-th seat counted clockwise from the dealer
    #: (dealer = 1, D6), ``s`` stacks in
    ONE_THROW = "one_throw"
    #: sichuan: the seat the first throw ``s1`` reaches in play order throws ``s2``;
    #: ``s1 + s2`` stacks in on that seat's wall
    TWO_THROWS = "two_throws"


class KongPayers(Enum):
    """Who pays for one kind of kong."""

    OTHERS = "others"  # the three other players
    UNFINISHED = "unfinished"  # the other players who have not won yet (sichuan, D75)
    SOURCE = "source"  # only the seat whose discard was called (点杠 / 点碰)


@dataclass(frozen=True, kw_only=True)
class KongTable:
    """Kong money per payer, in multiples of 底注, and who pays it."""

    ming: int = 0  # 明杠 / 直杠 (from a discard)
    bu: int = 0  # 补杠 / 弯杠 (added to one's own 碰)
    an: int = 0  # 暗杠
    xuanfeng: int = 0  # a 中发白 set, laid or concealed (baicheng §2.6, D23)
    extra_dragon: int = 0  # each dragon added to a 旋风杠
    treasure_peng: int = 0  # 叉宝: a 碰 of the treasure face, scored as a 明杠
    treasure_triplet: int = 0  # three treasure-face tiles concealed at settlement (D27)
    big_faces: frozenset[int] = frozenset()  # 大杠 faces (1m 1p 1s)
    big_multiplier: int = 1  # × for a 大杠
    dealer_multiplier: int = 1  # 杠随庄走: × when the konger or the payer deals (D61)
    ming_payers: KongPayers = KongPayers.OTHERS
    bu_payers: KongPayers = KongPayers.OTHERS
    an_payers: KongPayers = KongPayers.OTHERS
    #: In the anti-cheat room 明杠 and 补杠 are paid by the 点杠 / 点碰 seat alone (D40).
    anti_cheat_single_payer: bool = False


@dataclass(frozen=True, slots=True)
class Room:
    """A baishan_platform room type (§3.7, §3.12)."""

    name: str
    chinese: str
    fee_percent: int  # service fee on a positive net result, floored (D45)
    anti_cheat: bool = False  # doubled base, only the discarder pays a discard win


ROOMS: Final = (
    Room("free", "自由场", 3),
    Room("junior", "初级场", 5),
    Room("intermediate", "中级场", 3),
    Room("anti_cheat", "高级防作弊场", 2, anti_cheat=True),
)


#: The fields that remember hands met (`RuleSet.legal_memo`, `RuleSet.win_memo`).
_MEMOS: Final = ("legal_memo", "win_memo")


@dataclass(frozen=True, kw_only=True)
class RuleSet:
    """Everything that differs between the rule sets, with neutral defaults."""

    name: str
    chinese: str = ""
    seed: str = ""  # the seed file this reading comes from
    faces: tuple[int, ...] = tuple(range(KINDS))  # tile faces in play, four of each
    #: Stacks (墩, two tiles) in front of the dealer, then of each seat in play order
    #: (§1.3): twice their sum is the size of the tile set (checked).
    wall_stacks: tuple[int, int, int, int] = (17, 17, 17, 17)
    dice: Dice = Dice.ONE_THROW  # how the break is thrown (§1.4)
    shapes: Shapes = CLASSIC  # legal shapes beyond four melds and a pair
    # --- actions --------------------------------------------------------------------
    chi: bool = True  # 吃 from the 上家 is allowed
    xuanfeng: bool = False  # 中发白 sets and 旋风杠 (baicheng)
    treasure: bool = False  # 宝牌, 摸宝, 分张 (baicheng)
    declare_ready: bool = False  # 报听 exists (Baishan)
    void_suit_choice: bool = False  # 定缺 (sichuan)
    #: Kong actions the dealer may make on the first turn, before the first discard
    #: (baicheng: 1, "no consecutive kongs", §2.3 item 10, D12); None: no limit.
    dealer_opening_kongs: int | None = None
    #: 血战到底 (sichuan): a win does not end the hand, wins and kongs are paid when they
    #: happen, the hand ends at three winners or the wall, then 查花猪 / 查大叫 / 退税.
    bloody: bool = False
    multiple_winners: bool = False  # 一炮多响 (True) or 截胡 (False)
    claim_window: float = 5.0  # seconds to claim a discard (D8)
    # --- dealer rotation ------------------------------------------------------------
    dealer_by_dice: bool = True  # the first dealer by dice (D31); else seat E (§2.2)
    dealer_stays_on_draw: bool = False  # 流局 keeps the dealer (D11, D47); else it passes
    first_winner_deals: bool = False  # the first winner deals next (sichuan, D47)
    # --- win requirements (checked on the final hand, melds and winning tile included)
    three_suits: bool = False  # 三门全: 万, 饼 and 条 all present
    terminal: bool = False  # 么九: a 1, 9 or honour present (seven pairs too)
    pung: bool = False  # 必须有碰: a pung or kong, exposed or concealed (D14)
    dragon_pair_is_pung: bool = False  # a 中/发/白 pair stands in for the pung
    dragon_set_is_pung: bool = False  # a 中发白 set or 旋风杠 stands in for the pung
    void_suit: bool = False  # 缺一门: no tile of the 缺 suit (or, unknown, of one suit)
    # --- fans and win payments ------------------------------------------------------
    fans: tuple[Fan, ...] = ()  # the fan table, in RULES.md order
    cap_fans: int | None = None  # N is capped at this many fans (sichuan: 4)
    cap_base: int | None = None  # a payment is capped at this × 底注 (platform: 50)
    discarder_only: bool = False  # a discard win is paid by the discarder alone
    unfinished_pay_self_draw: bool = False  # a self-draw is paid by those not yet won
    piao_bets: tuple[int, ...] = ()  # allowed 漂 bets in × 底注 (platform: 0, 5, 10)
    rooms: tuple[Room, ...] = ()  # room types (platform); the first is the default
    # --- other coins ----------------------------------------------------------------
    kongs: KongTable = KongTable()
    draw_dealer_pays: int = 0  # 流局: the dealer pays each other player this × 底注
    chase_dealer_pays: int = 0  # 撵庄: the dealer pays each other player this × 底注
    escape_pays: int = 0  # 逃跑: the leaver pays each other player this × 底注
    flower_pig_pays: int = 0  # 查花猪: a 花猪 pays each non-花猪 this × 底注
    # (fan, worth, predicate) of each fan with a winner / payer predicate, kept once for
    # the scorer's hot path; a fan worth the cap (天胡, 地胡) is worth ``cap_fans`` here
    winner_tests: tuple[tuple[Fan, int, WinnerTest], ...] = field(
        init=False, repr=False, compare=False
    )
    payer_tests: tuple[tuple[Fan, int, PayerTest], ...] = field(
        init=False, repr=False, compare=False
    )
    wait_shapes: bool = field(init=False, repr=False, compare=False)  # a fan reads them
    #: The tile set, four of each face in ``faces`` order: every hand shuffles a copy.
    tiles: tuple[int, ...] = field(init=False, repr=False, compare=False)
    #: The memo of `fangcheng.rules.requirements.legal_readings` under these rules: (hand,
    #: final hand, 缺, a laid pung) -> the legal readings. Kept on the rule set, so a
    #: replaced rule set starts its own.
    legal_memo: dict[tuple[bytes, bytes, int | None, bool], tuple[Arrangement, ...]] = field(
        init=False, repr=False, compare=False
    )
    #: The memo of `fangcheng.rules.requirements.legal_win`: (concealed, winning tile,
    #: the melds' tiles, 缺) -> (final hand, suits, an honour, the legal readings).
    win_memo: dict[
        tuple[bytes, int, tuple[tuple[int, ...], ...], int | None],
        tuple[bytes, int, bool, tuple[Arrangement, ...]],
    ] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if 2 * sum(self.wall_stacks) != 4 * len(self.faces) or len(self.wall_stacks) != 4:
            raise ValueError(
                f"{self.name}: wall_stacks {self.wall_stacks} hold {2 * sum(self.wall_stacks)}"
                f" tiles in {len(self.wall_stacks)} sides; {len(self.faces)} faces make"
                f" {4 * len(self.faces)} in 4"
            )

        def worth(fan: Fan) -> int:
            return (self.cap_fans or 0) if fan.at_cap else fan.value

        winner = tuple((f, worth(f), f.winner) for f in self.fans if f.winner is not None)
        payer = tuple((f, worth(f), f.payer) for f in self.fans if f.payer is not None)
        object.__setattr__(self, "winner_tests", winner)
        object.__setattr__(self, "payer_tests", payer)
        object.__setattr__(self, "wait_shapes", any(f.wait_shapes for f in self.fans))
        object.__setattr__(self, "tiles", tuple(tile_set(self.faces)))
        object.__setattr__(self, "legal_memo", {})
        object.__setattr__(self, "win_memo", {})

    def __getstate__(self) -> dict[str, object]:
        """Pickled without its memos: an expert's fork carries its observation's rules
        to its worker for every decision, and a warm memo holds thousands of readings."""
        return {k: v for k, v in self.__dict__.items() if k not in _MEMOS}

    def __setstate__(self, state: dict[str, object]) -> None:
        self.__dict__.update(state, legal_memo={}, win_memo={})

    def forget(self) -> None:
        """Empty the memos (`legal_readings`, `legal_win`): what a benchmark of new hands
        does before each round."""
        self.legal_memo.clear()
        self.win_memo.clear()

    def fan(self, name: str) -> Fan:
        """The fan of this table with that Chinese name."""
        for f in self.fans:
            if f.name == name:
                return f
        raise KeyError(f"{self.name} has no fan {name!r}")


BAICHENG: Final = RuleSet(
    name="baicheng",
    chinese="白城麻将",
    seed="000_dcabb5f546616ca7.txt",
    faces=(*range(27), *DRAGONS),
    wall_stacks=(15, 15, 15, 15),  # "每人门前码15摞"
    dice=Dice.NONE,
    shapes=Shapes(seven_pairs=False, thirteen_orphans=False, dragon_set=True),  # D15
    xuanfeng=True,
    treasure=True,
    dealer_opening_kongs=1,  # D12
    dealer_by_dice=False,
    dealer_stays_on_draw=True,  # D11
    three_suits=True,
    terminal=True,
    pung=True,
    dragon_pair_is_pung=True,
    dragon_set_is_pung=True,
    fans=BAICHENG_FANS,
    kongs=KongTable(
        ming=5, bu=5, an=10, xuanfeng=5, extra_dragon=5, treasure_peng=5, treasure_triplet=10
    ),
)

BAISHAN_PLATFORM: Final = RuleSet(
    name="baishan_platform",
    chinese="白山麻将 (金币平台)",
    seed="001_8cd9383eae384481.txt",
    shapes=Shapes(seven_pairs=True, thirteen_orphans=True),  # D35: distinct pairs
    declare_ready=True,
    claim_window=3.0,
    terminal=True,  # D34
    pung=True,
    fans=BAISHAN_PLATFORM_FANS,
    cap_base=50,  # D39
    piao_bets=(0, 5, 10),
    rooms=ROOMS,
    kongs=KongTable(
        ming=2,
        bu=2,
        an=4,
        big_faces=frozenset({0, 9, 18}),
        big_multiplier=2,
        anti_cheat_single_payer=True,
    ),
    draw_dealer_pays=2,
    chase_dealer_pays=2,  # D41
    escape_pays=50,  # D42
)

BAISHAN: Final = RuleSet(
    name="baishan",
    chinese="白山麻将",
    seed="003_ebd3baaa937da22a.txt",
    shapes=Shapes(seven_pairs=True, thirteen_orphans=True),
    declare_ready=True,
    claim_window=3.0,
    terminal=True,
    pung=True,
    fans=BAISHAN_FANS,
    kongs=KongTable(
        ming=1,
        bu=1,
        an=2,
        big_faces=frozenset({0, 9, 18}),
        big_multiplier=2,
        dealer_multiplier=2,
    ),  # D61
)

SICHUAN: Final = RuleSet(
    name="sichuan",
    chinese="四川麻将 血战到底",
    seed="002_209487f84af2dab8.txt",
    faces=tuple(range(27)),
    wall_stacks=(14, 13, 14, 13),  # D4: 108 tiles make no four equal sides
    dice=Dice.TWO_THROWS,
    shapes=Shapes(seven_pairs=True, quad_pairs=True, thirteen_orphans=False),  # D50
    chi=False,  # D48
    void_suit_choice=True,
    bloody=True,
    multiple_winners=True,
    dealer_stays_on_draw=True,  # D47
    first_winner_deals=True,
    void_suit=True,
    fans=SICHUAN_FANS,
    cap_fans=4,  # D51
    discarder_only=True,
    unfinished_pay_self_draw=True,  # D52
    kongs=KongTable(
        ming=2,
        bu=1,
        an=2,
        ming_payers=KongPayers.SOURCE,
        bu_payers=KongPayers.UNFINISHED,
        an_payers=KongPayers.UNFINISHED,
    ),  # D54
    flower_pig_pays=16,  # D55
)

ALL_RULES: Final = (BAICHENG, BAISHAN, BAISHAN_PLATFORM, SICHUAN)
_BY_NAME: Final = {r.name: r for r in ALL_RULES}


def find_rules(name: str) -> RuleSet:
    """The preset of that name; an unknown name lists the valid ones."""
    try:
        return _BY_NAME[name]
    except (KeyError, TypeError):
        valid = ", ".join(sorted(_BY_NAME))
        raise ValueError(f"unknown rule set {name!r}; valid: {valid}") from None


# --- options -------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class Options:
    """Per-table choices that are not part of the rule set itself."""

    room: Room | None = None  # baishan_platform room type
    piao: tuple[int, ...] = (0, 0, 0, 0)  # 漂 bets per seat, × 底注
    que: tuple[int, ...] | None = None  # 缺 suit per seat, 0 m / 1 p / 2 s; None if unknown
    #: The room doubles 底注 and lets only the discarder pay (§3.7); kept as a field, not a
    #: property, since the scorer reads it for every win.
    anti_cheat: bool = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "anti_cheat", self.room is not None and self.room.anti_cheat)


def _option_names(rules: RuleSet) -> tuple[str, ...]:
    names = ["claim_window"]
    if rules.rooms:
        names.append("room")
    if rules.piao_bets:
        names.append("piao")
    if rules.void_suit_choice:
        names.append("que")
    if rules.cap_fans is not None or rules.cap_base is not None:
        names.append("cap")
    return tuple(names)


def _four(value: object, what: str, valid: str) -> list[object]:
    if not isinstance(value, list | tuple) or len(value) != 4:
        raise OptionError(f"option {what!r} must be a list of four values, each {valid}")
    return list(value)


def configure(rules: RuleSet, options: Mapping[str, object]) -> tuple[RuleSet, Options]:
    """Validate a table's options; return the rule set with overrides and the `Options`.

    ``claim_window`` (seconds, > 0 and ≤ 60) and ``cap`` (the rule set's own cap unit:
    fans in sichuan, × 底注 on the platform) override the preset; ``room``, ``piao`` and
    ``que`` go into `Options`. Anything else is an `OptionError` naming the valid keys.
    """
    valid_names = _option_names(rules)
    for key in options:
        if key not in valid_names:
            raise OptionError(
                f"unknown option {key!r} for {rules.name}; valid: {', '.join(valid_names)}"
            )
    changes: dict[str, object] = {}
    if "claim_window" in options:
        window = options["claim_window"]
        if isinstance(window, bool) or not isinstance(window, int | float) or not 0 < window <= 60:
            raise OptionError(f"option 'claim_window' is {window!r}; valid: seconds in (0, 60]")
        changes["claim_window"] = float(window)
    if "cap" in options:
        cap = options["cap"]
        if isinstance(cap, bool) or not isinstance(cap, int) or cap < 1:
            raise OptionError(f"option 'cap' is {cap!r}; valid: a positive integer")
        changes["cap_fans" if rules.cap_fans is not None else "cap_base"] = cap
    room = rules.rooms[0] if rules.rooms else None
    if "room" in options:
        by_name = {r.name: r for r in rules.rooms}
        if options["room"] not in by_name:
            raise OptionError(f"option 'room' is {options['room']!r}; valid: {', '.join(by_name)}")
        room = by_name[str(options["room"])]
    piao: tuple[int, ...] = (0, 0, 0, 0)
    if "piao" in options:
        bets = ", ".join(map(str, rules.piao_bets))
        values = _four(options["piao"], "piao", f"one of {bets}")
        for seat, bet in enumerate(values):
            if isinstance(bet, bool) or bet not in rules.piao_bets:
                raise OptionError(f"option 'piao' seat {seat} is {bet!r}; valid: {bets}")
        piao = tuple(int(str(b)) for b in values)
    que = None
    if "que" in options:
        values = _four(options["que"], "que", "one of m, p, s")
        for seat, suit in enumerate(values):
            if not isinstance(suit, str) or suit not in SUIT_LETTERS or len(suit) != 1:
                raise OptionError(f"option 'que' seat {seat} is {suit!r}; valid: m, p, s")
        que = tuple(SUIT_LETTERS.index(str(s)) for s in values)
    configured = dataclasses.replace(rules, **changes) if changes else rules  # type: ignore[arg-type]
    return configured, Options(room=room, piao=piao, que=que)
