"""Sichuan's end-of-hand checks when the wall runs out (RULES.md §4.10, D55, D56).

Applied in order, each as its own transfers: 查花猪 (a player still holding its 缺 suit,
or flagged for passing a win in the last four tiles, pays every non-花猪 16 × 底注),
查大叫 (a player who is not ready pays each ready player what that hand could score at
best, D55), 退税 (a player who is not ready returns the kong money it took). Winners
take part only as receivers of 查花猪.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

from fangcheng.rules.requirements import final_counts, holds_void_suit
from fangcheng.rules.ruleset import Options, RuleSet
from fangcheng.scoring.payments import Transfer, effective_base
from fangcheng.scoring.scorer import best_ready_fans
from fangcheng.tiles.melds import Meld

__all__ = ["sichuan_exhaustion"]

SEATS = range(4)


def sichuan_exhaustion(
    rules: RuleSet,
    options: Options,
    base: int,
    seats: Sequence[tuple[bytes, Sequence[Meld]]],
    won: Collection[int],
    flagged: Collection[int],
    kong_transfers: Sequence[Transfer],
) -> list[tuple[str, tuple[Transfer, ...]]]:
    """The transfers of 查花猪, 查大叫 and 退税, as (reason, transfers) in that order.

    ``seats`` are each seat's concealed counts and melds at the end; ``flagged`` the
    seats that passed a win in the last four tiles (D56); ``kong_transfers`` every
    刮风下雨 payment made during the hand.
    """
    unit = effective_base(options, base)
    que = options.que or (None, None, None, None)
    pigs = {
        s
        for s in SEATS
        if s not in won and (s in flagged or holds_void_suit(final_counts(*seats[s]), que[s]))
    }
    out: list[tuple[str, tuple[Transfer, ...]]] = []
    pig_pays = rules.flower_pig_pays * unit
    pig_transfers = tuple(
        Transfer(pig, other, pig_pays, "查花猪")
        for pig in sorted(pigs)
        for other in SEATS
        if other not in pigs
    )
    if pig_transfers:
        out.append(("查花猪 flower pig", pig_transfers))
    contenders = [s for s in SEATS if s not in won and s not in pigs]
    best = {s: best_ready_fans(rules, seats[s][0], seats[s][1], que[s]) for s in contenders}
    ready = [s for s in contenders if best[s] is not None]
    not_ready = [s for s in contenders if best[s] is None]
    call_transfers = []
    for payer in not_ready:
        for payee in ready:
            fans = best[payee]
            assert fans is not None
            call_transfers.append(Transfer(payer, payee, unit * 2**fans, "查大叫"))
    if call_transfers:
        out.append(("查大叫 not ready", tuple(call_transfers)))
    refunds = tuple(
        Transfer(t.payee, t.payer, t.amount, "退税") for t in kong_transfers if t.payee in not_ready
    )
    if refunds:
        out.append(("退税 kong money returned", refunds))
    return out
