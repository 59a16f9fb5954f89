"""The coin platform: accounts and sessions, the double-entry ledger, stakes, ranks.

`Platform` is what the table server calls (and `fangcheng ledger`): one object made of
the parts of what it serves — accounts and sessions (`fangcheng.platform.accounts`),
seats and the start of a hand (`seats`), booking a finished hand (`settlement`), 积分
and the leaderboard (`ranks`), and its operators (`operators`: their accounts and
audit, freezes and coin adjustments, built on the accounts) — each booking coins through the ledger
(`fangcheng.platform.ledger`: journals that sum to zero, one transaction each, keyed so
that a retry books nothing twice).
"""

from __future__ import annotations

from typing import Any

from fangcheng.platform.database import connect
from fangcheng.platform.operators import Operators
from fangcheng.platform.ranks import Ranks
from fangcheng.platform.seats import Seats
from fangcheng.platform.settlement import Settlements

__all__ = ["Platform"]


class Platform(Operators, Seats, Settlements, Ranks):
    """Accounts, sessions and the coin ledger on one database: one object, its parts each
    in the module of what it serves (`fangcheng.platform.accounts`, `seats`,
    `settlement`, `ranks`, `operators`, whose part is the accounts' with the
    operators'), all booking through `fangcheng.platform.ledger.Ledger`."""

    @classmethod
    def open(cls, url: str, **options: Any) -> Platform:
        """A platform on the database at ``url`` (migrated first)."""
        return cls(connect(url), **options)
