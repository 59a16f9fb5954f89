"""What the modules that rebuild and take over tables need of the hub (`TableHost`):
`fangcheng.server.recovery` and `fangcheng.server.cluster` act through it, so that they
depend on this small face and the hub (`fangcheng.server.hub.Hub`) on them, not both ways."""

from __future__ import annotations

from typing import Protocol

from fangcheng.platform import Platform
from fangcheng.server.metrics import Metrics
from fangcheng.server.store import Store
from fangcheng.server.tables import Finished, Table, Thinker

__all__ = ["TableHost"]


class TableHost(Protocol):
    """The hub as the rebuilding and the taking over of tables see it."""

    store: Store
    #: code → the table this process runs; person → the code of the table they sit at
    tables: dict[str, Table]
    sitting: dict[int, str]
    metrics: Metrics

    @property
    def platform(self) -> Platform: ...

    @property
    def thinker(self) -> Thinker: ...

    def now(self) -> int: ...

    def run(self, table: Table) -> None:
        """Put a table in play here."""

    def retire(self, table: Table) -> None:
        """Close a table nobody sits at once every hand dealt there is booked."""

    def drop(self, table: Table) -> None:
        """Stop running a table at once: another process owns it now."""

    def give(self, table: Table) -> None:
        """Hand a table on to another process, gracefully (rebalancing)."""

    def lobby_tables(self) -> list[Table]: ...

    def store_hand(self, table: Table, hand: Finished) -> int | None:
        """Keep a finished hand (its ``stored`` entry in the table's log)."""
