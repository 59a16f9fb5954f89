"""Coins that move apart from a win's fans: kongs, 流局, 撵庄, escape, 漂, fees, stakes.

Pure functions over a hand-end state (seats, dealer, base, the table's `Options`); the
engine calls them when a hand ends and `fangcheng.scoring.scorer` calls the kong and fee parts
for one win. Amounts are integers; every function returns per-seat deltas (or transfers)
that sum to zero, except the service fee, which leaves the game.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from functools import cache
from typing import Final, NamedTuple

from fangcheng.rules.ruleset import KongPayers, KongTable, Options, RuleSet
from fangcheng.tiles.melds import Meld, MeldKind
from fangcheng.tiles.notation import tile_name

__all__ = [
    "RANKS",
    "STAKE_TIERS",
    "KongPayment",
    "Transfer",
    "chase_dealer_payments",
    "deltas_of",
    "draw_payments",
    "effective_base",
    "escape_payments",
    "kong_payments",
    "may_pay_kongs",
    "piao_payments",
    "rank_title",
    "scale_for_insolvency",
    "service_fees",
    "stake_for_balances",
]

SEATS: Final = range(4)
_OTHERS: Final = tuple(tuple(p for p in SEATS if p != seat) for seat in SEATS)
# enum members looked up once (a lookup on the class is slow): kong_payments reads the
# meld kinds for every meld of every win
_BY_SOURCE: Final = KongPayers.SOURCE
_BY_UNFINISHED: Final = KongPayers.UNFINISHED
_PENG: Final = MeldKind.PENG
_XUANFENG: Final = MeldKind.XUANFENG
_MING_GANG: Final = MeldKind.MING_GANG
_BU_GANG: Final = MeldKind.BU_GANG
_AN_GANG: Final = MeldKind.AN_GANG


#: `_kong` builds its named tuples with tuple.__new__, in field order, skipping their
#: Python-level __new__: the kongs of a win that has any in 4.6 µs instead of 7.6 (the
#: golden corpus's wins; each kong pays three transfers or one).
_new: Final = tuple.__new__


class Transfer(NamedTuple):
    """``amount`` coins from ``payer`` to ``payee``, with a short reason."""

    payer: int
    payee: int
    amount: int
    reason: str = ""


def deltas_of(transfers: Iterable[Transfer]) -> tuple[int, ...]:
    """Per-seat net of some transfers."""
    out = [0, 0, 0, 0]
    for payer, payee, amount, _ in transfers:  # unpacked: a named field read is slower
        out[payer] -= amount
        out[payee] += amount
    return tuple(out)


def effective_base(options: Options, base: int) -> int:
    """The 底注 used for every amount: doubled in the anti-cheat room (§3.7, D66)."""
    return base * 2 if options.anti_cheat else base


# --- kongs ---------------------------------------------------------------------------


class KongPayment(NamedTuple):
    """One kong (or kong-like holding) and what it moves."""

    seat: int
    #: What is paid for, without the face: ``暗杠``, ``大杠 明杠``, ``旋风杠 +1 补``.
    reason: str
    transfers: tuple[Transfer, ...]
    #: The kong's (or 叉宝's, or three treasures') face where it has one: kept apart so
    #: that an 暗杠 paid during play can be shown without it (`for_seat`).
    face: int | None = None

    @property
    def label(self) -> str:
        """The reason with the face, as the transfers and the explanation name it."""
        return _label(self.reason, self.face)

    @property
    def deltas(self) -> tuple[int, ...]:
        return deltas_of(self.transfers)


@cache  # a few reasons × 34 faces: a kong's label is then a lookup, not two formattings
def _label(reason: str, face: int | None) -> str:
    return reason if face is None else f"{reason} {tile_name(face)}"


def _payers(
    policy: KongPayers, seat: int, meld: Meld | None, won: frozenset[int]
) -> tuple[int, ...]:
    if policy is _BY_SOURCE and meld is not None and meld.source is not None:
        return (meld.source,)
    others = _OTHERS[seat]
    if policy is _BY_UNFINISHED and won:
        return tuple(p for p in others if p not in won)
    return others


def _kong(
    table: KongTable,
    seat: int,
    reason: str,
    each: int,
    payers: Sequence[int],
    dealer: int,
    meld: Meld | None = None,
    face: int | None = None,
) -> KongPayment:
    """One kong's transfers, ``each`` coins a payer (unit × effective 底注) before the
    大杠 and dealer multipliers; only a real kong meld of a 大杠 face is a 大杠."""
    if meld is not None and meld.face in table.big_faces:
        each *= table.big_multiplier
        reason = f"大杠 {reason}"
    label = _label(reason, face)
    dealer_times = table.dealer_multiplier
    transfers = []
    for p in payers:
        amount = each * dealer_times if dealer_times != 1 and dealer in (seat, p) else each
        transfers.append(_new(Transfer, (p, seat, amount, label)))
    return _new(KongPayment, (seat, reason, tuple(transfers), face))


def may_pay_kongs(
    rules: RuleSet,
    concealed: Sequence[bytes],
    melds: Sequence[Sequence[Meld]],
    treasure: int | None = None,
) -> bool:
    """Whether `kong_payments` can find anything in these seats: a meld that pays
    (`Meld.pays`), or in baicheng a concealed 中发白 set (D23) or three concealed
    treasures (D27). False means it finds nothing: a win's scorer asks this first, since
    most wins have no kong (of the golden corpus's 2,030, 1,300), and on one
    `kong_payments` costs six times this screen (2.0 against 0.34 µs)."""
    for seat_melds in melds:  # plain loops: three iterators in C cost more (0.37 µs a
        for meld in seat_melds:  # win against 0.20, the kong-free golden wins)
            if meld.pays:
                return True
    table = rules.kongs
    if rules.xuanfeng and table.xuanfeng:
        for c in concealed:
            if c[31] and c[32] and c[33]:
                return True
    if treasure is not None and table.treasure_triplet:
        for c in concealed:
            if c[treasure] >= 3:
                return True
    return False


def kong_payments(
    rules: RuleSet,
    options: Options,
    base: int,
    dealer: int,
    seats: Iterable[tuple[bytes, Sequence[Meld]]],
    *,
    treasure: int | None = None,
    won: frozenset[int] = frozenset(),
) -> tuple[KongPayment, ...]:
    """Every kong payment a hand end shows: each seat's (concealed, melds) as they lie.

    Covers kong melds, 旋风杠 and added dragons, 叉宝 and, in baicheng, concealed 中发白
    sets (D23) and three concealed treasure tiles (D27). A winner's concealed tiles are
    given *without* the winning tile (D23, D65). Robbed kongs are not melds, so they pay
    nothing. ``won``: seats that had won when the kongs were made (sichuan, D75).
    """
    table = rules.kongs
    b = effective_base(options, base)
    dragon_sets = rules.xuanfeng and table.xuanfeng
    triplets = treasure is not None and table.treasure_triplet
    out: list[KongPayment] = []
    for seat, (concealed, melds) in enumerate(seats):
        others = _OTHERS[seat]  # who pays a kong of the OTHERS policy (`_payers`)
        for meld in melds:
            if not meld.pays:
                continue
            kind = meld.kind
            if kind is _XUANFENG:
                extra = len(meld.tiles) - 3
                unit = table.xuanfeng + table.extra_dragon * extra
                label = "旋风杠" + (f" +{extra} 补" if extra else "")
                out.append(_kong(table, seat, label, unit * b, others, dealer))
            elif kind is _PENG:  # 叉宝
                if table.treasure_peng:
                    each = table.treasure_peng * b
                    out.append(_kong(table, seat, "叉宝", each, others, dealer, face=meld.face))
            else:
                if kind is _MING_GANG:
                    name, unit, policy = "明杠", table.ming, table.ming_payers
                elif kind is _BU_GANG:
                    name, unit, policy = "补杠", table.bu, table.bu_payers
                else:
                    name, unit, policy = "暗杠", table.an, table.an_payers
                if kind is not _AN_GANG and options.anti_cheat and table.anti_cheat_single_payer:
                    policy = _BY_SOURCE
                payers = _payers(policy, seat, meld, won)
                out.append(_kong(table, seat, name, unit * b, payers, dealer, meld, meld.face))
        if dragon_sets and concealed[31] and concealed[32] and concealed[33]:
            each = table.xuanfeng * b
            for _ in range(min(concealed[31], concealed[32], concealed[33])):
                out.append(_kong(table, seat, "中发白 (concealed)", each, others, dealer))
        if triplets and treasure is not None and concealed[treasure] >= 3:
            each = table.treasure_triplet * b
            out.append(_kong(table, seat, "three treasure", each, others, dealer, face=treasure))
    return tuple(out)


# --- other hand-end payments -----------------------------------------------------------


def _dealer_pays_each(dealer: int, amount: int, reason: str) -> tuple[Transfer, ...]:
    return tuple(Transfer(dealer, p, amount, reason) for p in SEATS if p != dealer)


def draw_payments(rules: RuleSet, options: Options, base: int, dealer: int) -> tuple[Transfer, ...]:
    """流局: the dealer pays each other player ``draw_dealer_pays × 底注`` (§3.9). No 漂."""
    amount = rules.draw_dealer_pays * effective_base(options, base)
    return _dealer_pays_each(dealer, amount, "流局") if amount else ()


def chase_dealer_payments(
    rules: RuleSet, options: Options, base: int, dealer: int, first_discards: Sequence[int]
) -> tuple[Transfer, ...]:
    """撵庄 (D41): the first four discards, dealer first, in play order, with no call
    between them, all of one face: the dealer pays each other player. A call breaks the
    chain, so the engine passes only the discards made before it."""
    amount = rules.chase_dealer_pays * effective_base(options, base)
    if amount and len(first_discards) == 4 and len(set(first_discards)) == 1:
        return _dealer_pays_each(dealer, amount, "撵庄")
    return ()


def escape_payments(
    rules: RuleSet, options: Options, base: int, leaver: int
) -> tuple[Transfer, ...]:
    """逃跑 (D42): the leaver pays each other player the cap; kongs are settled apart."""
    amount = rules.escape_pays * effective_base(options, base)
    if not amount:
        return ()
    return tuple(Transfer(leaver, p, amount, "逃跑") for p in SEATS if p != leaver)


def piao_payments(
    options: Options, base: int, winner: int, payers: Iterable[int]
) -> tuple[Transfer, ...]:
    """漂 (D43, D66): each win payer also pays piao(winner) + piao(payer) × 底注."""
    b = effective_base(options, base)
    out = []
    for p in payers:
        amount = (options.piao[winner] + options.piao[p]) * b
        if amount:
            out.append(Transfer(p, winner, amount, "漂"))
    return tuple(out)


def service_fees(options: Options, nets: Sequence[int]) -> tuple[int, ...]:
    """服务费 (D45): floor(rate × net) on each positive net of the hand; 0 without a room."""
    if options.room is None:
        return (0,) * len(nets)
    rate = options.room.fee_percent
    return tuple(n * rate // 100 if n > 0 else 0 for n in nets)


# --- the platform's coins ------------------------------------------------------------

#: (lowest table minimum balance, 底注), highest first (§3.11; the tier-5 typo fixed, D44).
STAKE_TIERS: Final = (
    (100_000_000, 1_000_000),
    (10_000_000, 100_000),
    (1_000_000, 10_000),
    (100_000, 1_000),
    (10_000, 100),
    (1_000, 10),
    (100, 1),
)


def stake_for_balances(balances: Sequence[int]) -> int:
    """The table's 底注 from the smallest balance seated (D44); the anti-cheat room doubles
    it later (`effective_base`). Fewer than 100 coins cannot sit."""
    low = min(balances)
    for floor, stake in STAKE_TIERS:
        if low >= floor:
            return stake
    raise ValueError(f"a balance of {low} is below 100 coins: that player cannot sit")


def scale_for_insolvency(
    transfers: Sequence[Transfer], balances: Sequence[int]
) -> tuple[Transfer, ...]:
    """Cap each payer's total at its balance at hand start (D44): when capped, every one
    of its payments is scaled by balance ÷ liability and floored, so the payees get
    exactly what is paid."""
    liability = [0, 0, 0, 0]
    for t in transfers:
        liability[t.payer] += t.amount
    out = []
    for t in transfers:
        owed, balance = liability[t.payer], max(balances[t.payer], 0)
        amount = t.amount * balance // owed if owed > balance else t.amount
        out.append(Transfer(t.payer, t.payee, amount, t.reason))
    return tuple(out)


#: (minimum 积分, title), lowest first (§3.13); 木骰 covers everything below 1,000 (D46).
RANKS: Final = (
    (None, "木骰"), (1_000, "铁骰"), (2_000, "铜骰"), (4_000, "银骰"), (8_000, "金骰"),
    (20_000, "雀蛋"), (40_000, "雀仔"), (80_000, "麻雀"), (200_000, "雀头"),
    (400_000, "银雀"), (800_000, "金雀"), (2_000_000, "雀霸"), (4_000_000, "雀王"),
    (8_000_000, "雀帝"), (20_000_000, "雀妖"), (40_000_000, "雀仙"), (80_000_000, "雀魔"),
    (200_000_000, "雀圣"), (400_000_000, "雀神"), (800_000_000, "雀佛"),
)  # fmt: skip


def rank_title(points: int) -> str:
    """The rank title of a cumulative net-coin 积分 (D46)."""
    title = RANKS[0][1]
    for threshold, name in RANKS[1:]:
        if threshold is not None and points >= threshold:
            title = name
    return title
