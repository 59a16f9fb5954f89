"""Playing hands: the wall, one hand (`Round`), a match of hands with dealer rotation
(`Match`), and records that replay exactly.
"""

from fangcheng.engine.match import (
    Match,
    first_dealer,
    next_dealer,
)
from fangcheng.engine.record import (
    FORMAT,
    VERSION,
    RecordError,
    Replay,
    head_for,
    record_of,
    replay,
    wall_of,
)
from fangcheng.engine.round import (
    Item,
    Round,
    observe,
)
from fangcheng.engine.wall import (
    Break,
    Wall,
    deal_order,
    throw_break,
    wall_sides,
)

__all__ = [
    "FORMAT",
    "VERSION",
    "Break",
    "Item",
    "Match",
    "RecordError",
    "Replay",
    "Round",
    "Wall",
    "deal_order",
    "first_dealer",
    "head_for",
    "next_dealer",
    "observe",
    "record_of",
    "replay",
    "throw_break",
    "wall_of",
    "wall_sides",
]
