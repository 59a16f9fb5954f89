"""fangcheng (方城): the regional mahjong of Jilin and Sichuan — Baishan, Baicheng and
Sichuan 血战到底 — as a library: tiles and notation, hand analysis, rule sets, scoring.

The names a user needs are here; the modules hold the rest.
"""

from fangcheng.analysis import (
    CLASSIC,
    Arrangement,
    Form,
    Group,
    GroupKind,
    Shapes,
    WaitShape,
    decompositions,
    discard_shanten,
    draw_shanten,
    is_win,
    shanten,
    shanten_flush,
    shanten_seven_pairs,
    shanten_standard,
    shanten_thirteen_orphans,
    wait_shapes,
    waits,
)
from fangcheng.tiles import (
    InvalidNotationError,
    TileCountError,
    format_counts,
    format_tiles,
    glyph,
    parse_counts,
    parse_tiles,
    tile_name,
    tile_set,
)

__version__ = "0.1.0"

__all__ = [
    "CLASSIC",
    "Arrangement",
    "Form",
    "Group",
    "GroupKind",
    "InvalidNotationError",
    "Shapes",
    "TileCountError",
    "WaitShape",
    "__version__",
    "decompositions",
    "discard_shanten",
    "draw_shanten",
    "format_counts",
    "format_tiles",
    "glyph",
    "is_win",
    "parse_counts",
    "parse_tiles",
    "shanten",
    "shanten_flush",
    "shanten_seven_pairs",
    "shanten_standard",
    "shanten_thirteen_orphans",
    "tile_name",
    "tile_set",
    "wait_shapes",
    "waits",
]
