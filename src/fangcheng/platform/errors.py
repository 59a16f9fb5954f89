"""The platform's refusals. Each says what was refused and why; when one is raised,
nothing has moved (the transaction, if any, is rolled back)."""

from __future__ import annotations

__all__ = [
    "BadName",
    "BadPassword",
    "CannotSit",
    "HandConflict",
    "InvalidToken",
    "LoginFailed",
    "NameTaken",
    "PlatformError",
    "ReliefRefused",
    "SettlementError",
    "UnknownPerson",
]


class PlatformError(ValueError):
    """Any refusal of the platform."""


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


class ReliefRefused(PlatformError):
    """Relief is for balances below 100, once per UTC day (D86)."""


class CannotSit(PlatformError):
    """A seat refused: fewer than 100 coins, the same person twice, or a house bot in the
    anti-cheat room."""


class SettlementError(PlatformError):
    """A hand that cannot be settled as given."""


class HandConflict(PlatformError):
    """A hand id already settled with other content: the first settlement stands."""
