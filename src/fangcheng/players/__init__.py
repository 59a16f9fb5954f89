"""Players that act on observations alone: the bots."""

from fangcheng.players.bots import (
    BOTS,
    Bot,
    EfficientBot,
    RandomBot,
    StrongBot,
    Table,
    make_bot,
    table_of,
)

__all__ = [
    "BOTS",
    "Bot",
    "EfficientBot",
    "RandomBot",
    "StrongBot",
    "Table",
    "make_bot",
    "table_of",
]
