"""The platform's refusals. Each says what was refused and why; when one is raised,
nothing has moved (the transaction, if any, is rolled back). Each carries a ``code``,
the server's error code for it (`fangcheng.server.http`), so that a caller maps a
refusal without a table of classes."""

from __future__ import annotations

from typing import ClassVar

__all__ = [
    "BadName",
    "BadPassword",
    "CannotSit",
    "Conflict",
    "Forbidden",
    "Frozen",
    "HandConflict",
    "Insufficient",
    "InvalidToken",
    "LoginFailed",
    "Malformed",
    "NameTaken",
    "PlatformError",
    "ReliefRefused",
    "SettlementError",
    "Unauthorized",
    "UnknownPerson",
]


class PlatformError(ValueError):
    """Any refusal of the platform."""

    #: The server's error code for it.
    code: ClassVar[str] = "forbidden"

    @property
    def message(self) -> str:
        return str(self)


class BadName(PlatformError):
    """A name that cannot be an account's."""


class NameTaken(PlatformError):
    """Another account has this name (compared case-folded)."""


class BadPassword(PlatformError):
    """A password too short or too long to accept."""


class LoginFailed(PlatformError):
    """Wrong name or password (one message for both: it does not tell which names exist)."""


class InvalidToken(PlatformError):
    """A session token that is unknown, logged out, forged or expired."""


class UnknownPerson(PlatformError):
    """No account by that name or id."""

    code = "not_found"


class ReliefRefused(PlatformError):
    """Relief is for balances below 100, once per UTC day (D86)."""


class CannotSit(PlatformError):
    """A seat refused: fewer than 100 coins, the same person twice, or a house bot in the
    anti-cheat room."""


class SettlementError(PlatformError):
    """A hand that cannot be settled as given."""


class HandConflict(PlatformError):
    """A hand id already settled with other content: the first settlement stands."""


class Unauthorized(PlatformError):
    """No operator: an operator token unknown, logged out, expired or a player's, or an
    operator's name and password wrong (one message for both)."""

    code = "unauthorized"


class Forbidden(PlatformError):
    """An operator's write refused: a ``support`` operator only reads."""

    code = "forbidden"


class Frozen(PlatformError):
    """A frozen account (D90): it cannot sign in, sit or be matched; ``reason`` is the
    operator's."""

    code = "frozen"

    def __init__(self, reason: str) -> None:
        super().__init__(f"the account is frozen: {reason}")
        self.reason = reason


class Insufficient(PlatformError):
    """An adjustment that would leave a balance negative (D91)."""

    code = "insufficient"


class Malformed(PlatformError):
    """An operator's request that cannot be done as given: a bad amount, reason, role or
    key."""

    code = "malformed"


class Conflict(PlatformError):
    """Not in this state: freezing a frozen account, unfreezing one that is not, an
    adjustment's key used before for another adjustment."""

    code = "state"
