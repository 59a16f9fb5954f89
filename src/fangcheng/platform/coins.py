"""What a coin hand moves, as pure functions: the table's stake, and the ledger's view of
an engine settlement (insolvency applied, fees taken on what was really won).

The engine settles a hand as items (each win, kong, 漂 with its win, 流局, 撵庄, escape)
in seat deltas, at unlimited balances. On the platform a seat cannot pay more than its
balance at hand start (D44): every item of ``baishan_platform`` is one payee and its
payers, or one payer and its payees, so its transfers are read back from its deltas,
scaled by `fangcheng.scoring.scale_for_insolvency`, and the fee (D45) is taken on each
seat's net after scaling (none on a hand an operator abandoned, D92). With balances
that cover the hand this is exactly the engine's settlement
(`tests/test_ledger_engine.py` checks it on hundreds of hands).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from fangcheng.engine.round import ABANDONED
from fangcheng.platform.errors import CannotSit, SettlementError
from fangcheng.rules.ruleset import BAISHAN_PLATFORM, Options
from fangcheng.scoring.payments import (
    STAKE_TIERS,
    Transfer,
    scale_for_insolvency,
    service_fees,
    stake_for_balances,
)

__all__ = ["MIN_TO_SIT", "ROOMS", "HandCoins", "hand_coins", "table_stake"]

#: The coin rooms by name (§3.7): the platform rule set's.
ROOMS: Final = {room.name: room for room in BAISHAN_PLATFORM.rooms}

#: The fewest coins a person may sit with (§3.11, §8.2): the stake table's lowest tier.
MIN_TO_SIT: Final = STAKE_TIERS[-1][0]
#: The balance of a seat that is never capped: a house bot's (the house pays it all).
_UNLIMITED: Final = 1 << 62


def table_stake(balances: Sequence[int | None]) -> int:
    """The table's 底注 from the smallest balance seated (§3.11); ``None`` is a house bot,
    which counts as the highest balance and so never lowers the stake (D82)."""
    people = [b for b in balances if b is not None]
    if not people:  # a refusal: the table's match ends (`CoinTable._open_hand`)
        raise CannotSit("a coin table needs at least one person")
    return stake_for_balances(people)


@dataclass(frozen=True, slots=True)
class HandCoins:
    """A hand's coins as they move: per item its reason and seat deltas, per seat the fee
    and the total (items minus fee), and what each seat owed before any cap (D44). The
    caps act only through ``min(cap, owed)``: caps that agree on it give the same
    coins."""

    items: tuple[tuple[str, tuple[int, ...]], ...]
    fees: tuple[int, ...]
    total: tuple[int, ...]
    owed: tuple[int, ...]


def _transfers(index: int, deltas: Sequence[int]) -> list[Transfer]:
    """An item's transfers: from each payer to its one payee, or from its one payer to
    each payee (the reason is the item's index)."""
    if len(deltas) != 4 or not all(type(d) is int for d in deltas) or sum(deltas) != 0:
        raise SettlementError(f"settlement.items[{index}]: deltas {list(deltas)} do not balance")
    gain = [s for s in range(4) if deltas[s] > 0]
    loss = [s for s in range(4) if deltas[s] < 0]
    tag = str(index)
    if not gain:  # nothing moves
        return []
    if len(gain) == 1:
        return [Transfer(p, gain[0], -deltas[p], tag) for p in loss]
    if len(loss) == 1:
        return [Transfer(loss[0], p, deltas[p], tag) for p in gain]
    raise SettlementError(
        f"settlement.items[{index}]: deltas {list(deltas)} are not one payee or one payer"
    )


def hand_coins(
    settlement: Mapping[str, Any], options: Options, caps: Sequence[int | None]
) -> HandCoins:
    """The coins of an engine ``settlement`` when each seat pays at most its ``caps``
    entry (its balance at hand start; ``None``: a house bot, never capped)."""
    items = settlement.get("items")
    if not isinstance(items, list):
        raise SettlementError("settlement.items: missing")
    reasons: list[str] = []
    transfers: list[Transfer] = []
    for i, item in enumerate(items):
        if not isinstance(item, Mapping) or not isinstance(item.get("reason"), str):
            raise SettlementError(f"settlement.items[{i}]: not a reason with deltas")
        reasons.append(item["reason"])
        deltas = item.get("deltas")
        if not isinstance(deltas, list):
            raise SettlementError(f"settlement.items[{i}].deltas: missing")
        transfers += _transfers(i, deltas)
    owed = [0, 0, 0, 0]
    for transfer in transfers:
        owed[transfer.payer] += transfer.amount
    limits = [_UNLIMITED if c is None else c for c in caps]
    per_item = [[0, 0, 0, 0] for _ in reasons]
    for payer, payee, amount, tag in scale_for_insolvency(transfers, limits):
        row = per_item[int(tag)]
        row[payer] -= amount
        row[payee] += amount
    nets = [sum(row[s] for row in per_item) for s in range(4)]
    # an operator's close takes no fee (D92): the hand was nobody's to finish
    fees = (0, 0, 0, 0) if settlement.get("end") == ABANDONED else service_fees(options, nets)
    return HandCoins(
        items=tuple((r, tuple(row)) for r, row in zip(reasons, per_item, strict=True)),
        fees=fees,
        total=tuple(n - f for n, f in zip(nets, fees, strict=True)),
        owed=tuple(owed),
    )
