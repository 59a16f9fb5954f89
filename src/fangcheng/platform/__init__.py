"""The coin platform: accounts, sessions, the double-entry coin ledger, stakes and ranks
(SQLAlchemy 2 with Alembic migrations; SQLite by default, PostgreSQL by URL). Only
`fangcheng.server` and `fangcheng.cli` (``fangcheng ledger``) import it.

`Platform` is the one entry point: `Platform.open(url)` migrates the database and gives
sign-up, log-in and sessions, relief and grants, `Platform.start_hand` (the stake and
the balances that cap a hand), `Platform.settle_hand` (a finished hand's coins, once),
profiles and the leaderboard, and the operators' side (`fangcheng.platform.operators`:
operator accounts, the audit, freezes and coin adjustments). `check_ledger` proves the
stored ledger right.
"""

from fangcheng.platform.accounts import RELIEF, RELIEF_BELOW, SIGNUP_GRANT, Person, Session
from fangcheng.platform.check import Report, check_ledger
from fangcheng.platform.coins import MIN_TO_SIT, ROOMS, HandCoins, hand_coins, table_stake
from fangcheng.platform.database import DEFAULT_URL, connect, database_url, migrate
from fangcheng.platform.errors import (
    BadName,
    BadPassword,
    CannotSit,
    Conflict,
    Forbidden,
    Frozen,
    HandConflict,
    Insufficient,
    InvalidToken,
    LoginFailed,
    Malformed,
    NameTaken,
    PlatformError,
    ReliefRefused,
    SettlementError,
    Unauthorized,
    UnknownPerson,
)
from fangcheng.platform.operators import (
    OPERATOR_SESSION_S,
    Adjustment,
    AuditRow,
    Operator,
    OperatorSession,
    PersonRow,
)
from fangcheng.platform.ranks import Profile, Result, Standing
from fangcheng.platform.seats import HandStart
from fangcheng.platform.service import Platform
from fangcheng.platform.settlement import Settled

__all__ = [
    "DEFAULT_URL",
    "MIN_TO_SIT",
    "OPERATOR_SESSION_S",
    "RELIEF",
    "RELIEF_BELOW",
    "ROOMS",
    "SIGNUP_GRANT",
    "Adjustment",
    "AuditRow",
    "BadName",
    "BadPassword",
    "CannotSit",
    "Conflict",
    "Forbidden",
    "Frozen",
    "HandCoins",
    "HandConflict",
    "HandStart",
    "Insufficient",
    "InvalidToken",
    "LoginFailed",
    "Malformed",
    "NameTaken",
    "Operator",
    "OperatorSession",
    "Person",
    "PersonRow",
    "Platform",
    "PlatformError",
    "Profile",
    "ReliefRefused",
    "Report",
    "Result",
    "Session",
    "Settled",
    "SettlementError",
    "Standing",
    "Unauthorized",
    "UnknownPerson",
    "check_ledger",
    "connect",
    "database_url",
    "hand_coins",
    "migrate",
    "table_stake",
]
