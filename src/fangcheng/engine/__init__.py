"""Playing hands: the wall, one hand (`Round`), a match of hands with dealer rotation
(`Match`), and records that replay exactly.
"""

from fangcheng.engine.match import (
    Match,
    first_dealer,
    next_dealer,
)
from fangcheng.engine.record import (
    ESCAPE,
    FORMAT,
    VERSION,
    Decision,
    RecordError,
    RecordInput,
    Replay,
    WallParts,
    head_for,
    read_record,
    record_of,
    record_schema,
    refusal,
    replay,
    wall_of,
)
from fangcheng.engine.round import (
    ABANDONED,
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
    "ABANDONED",
    "ESCAPE",
    "FORMAT",
    "VERSION",
    "Break",
    "Decision",
    "Item",
    "Match",
    "RecordError",
    "RecordInput",
    "Replay",
    "Round",
    "Wall",
    "WallParts",
    "deal_order",
    "first_dealer",
    "head_for",
    "next_dealer",
    "observe",
    "read_record",
    "record_of",
    "record_schema",
    "refusal",
    "replay",
    "throw_break",
    "wall_of",
    "wall_sides",
]
