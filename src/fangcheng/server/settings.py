"""How the table server runs: `ServerSettings`, which `fangcheng serve` fills from its
options and tests build by hand (a fake clock, no bot pace, no timer tasks)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from argon2 import PasswordHasher

from fangcheng.ai.expert import TABLE_PLAYOUTS, TABLE_SECONDS, TABLE_WORKERS
from fangcheng.protocol import wire
from fangcheng.server.cluster import LEASE_MS
from fangcheng.server.security import now_ms

__all__ = ["ServerSettings"]


@dataclass
class ServerSettings:
    """How the server runs. ``clock`` gives ms since the epoch; ``bot_ms`` and
    ``between_ms``, when set, replace every table's own (0 in tests); ``timers``: run a
    task per table that applies deadlines (tests call `Hub.tick` instead); ``seed``:
    tables' seeds from it (reproducible tests), else random."""

    db: str = "sqlite://"
    clock: Callable[[], int] = now_ms
    bot_ms: int | None = None
    between_ms: int | None = None
    timers: bool = True
    seed: int | None = None
    origins: frozenset[str] = frozenset()
    rate: float = 20.0
    burst: float = 40.0
    #: The reverse proxies (addresses or networks, ``10.0.0.0/24``) whose
    #: ``X-Forwarded-For`` and ``X-Forwarded-Proto`` are believed: a caller's address is
    #: then the right-most forwarded one that is not such a proxy. Nobody else's is.
    trusted_proxies: frozenset[str] = frozenset()
    #: Coin tables: the quick match's wait before house bots fill (D82), which bot, and
    #: whether the rules by address apply — 防作弊场 keeps two accounts of one address
    #: apart (D83), the sign-up grant thrice a day an address (D89); off for tests on
    #: one machine; ``hasher``: argon2id parameters (cheap ones in tests).
    match_wait_ms: int = 15_000
    house_bot: wire.BotKind = "efficient"
    address_checks: bool = True
    hasher: PasswordHasher | None = None
    #: The expert bot's playouts per decision, at tables and in hints
    #: (`fangcheng.server.thinking`: off the event loop, at most `MAX_PLAYOUTS`).
    expert_playouts: int = TABLE_PLAYOUTS
    #: The time each expert decision or hint may take from when it is asked, s; then the
    #: strong bot's choice (`fangcheng.server.thinking`).
    expert_seconds: float = TABLE_SECONDS
    #: The worker processes the experts think in (0: one thread of the server's).
    expert_workers: int = TABLE_WORKERS
    #: The collector policy (`collector`): how often the server freezes its heap, s;
    #: None leaves the collector as Python sets it.
    freeze_s: float | None = 5.0
    #: Many processes (docs/deploy.md): Redis's URL (None: this process alone), the
    #: prefix of its keys, this process's URL as the others reach it, the leases' ttl.
    redis: str | None = None
    redis_prefix: str = "fangcheng:"
    advertise: str = "http://127.0.0.1:8000"
    lease_ms: int = LEASE_MS
    #: ``GET /metrics`` (docs/operations.md): loopback may read it; elsewhere only the
    #: bearer of this token (None: nobody else); ``metrics_address`` (host, port): a
    #: listener of its own that serves it to whoever reaches it (None: none).
    metrics_token: str | None = None
    metrics_address: tuple[str, int] | None = None
