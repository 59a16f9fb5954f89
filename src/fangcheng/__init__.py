"""fangcheng (方城): the regional mahjong of Jilin and Sichuan — Baicheng, Baishan and
Sichuan 血战到底 — as a library: tiles and notation, hand analysis, rule sets as data, a
scorer, an engine with records and replay, and bots.

Here are the names a user reaches for first, in the order of a first session: read and
write tiles, analyse a hand, find a rule set, score a win, play a hand (with bots),
record it and replay it. Everything else lives in the layer that holds it
(`fangcheng.tiles`, `analysis`, `rules`, `scoring`, `protocol`, `engine`, `players`,
`ai`, `ui`).

>>> import fangcheng as fc
>>> fc.format_tiles(fc.parse_tiles("五万 红中 1z"))
'5mEC'
>>> fc.shanten("123m456p789s1122z"), fc.format_tiles(fc.waits("1234m"))
(0, '14m')
"""

import fangcheng.ai.expert  # noqa: F401  (registers the `expert` bot with `make_bot`)
from fangcheng.analysis import (
    CLASSIC,
    Shapes,
    decompositions,
    is_win,
    shanten,
    wait_shapes,
    waits,
)
from fangcheng.engine import (
    Match,
    RecordError,
    Round,
    record_of,
    replay,
)
from fangcheng.engine.record import read_record
from fangcheng.players import make_bot
from fangcheng.protocol import Action, IllegalActionError, Observation
from fangcheng.rules import ALL_RULES, RuleSet, configure, find_rules
from fangcheng.scoring import Score, SituationError, load_situation, score
from fangcheng.scoring.situation import read_situation
from fangcheng.tiles import (
    InvalidNotationError,
    TileCountError,
    format_counts,
    format_tiles,
    parse_counts,
    parse_tiles,
    tile_name,
)

__version__ = "0.3.0"

__all__ = [
    "ALL_RULES",
    "CLASSIC",
    "Action",
    "IllegalActionError",
    "InvalidNotationError",
    "Match",
    "Observation",
    "RecordError",
    "Round",
    "RuleSet",
    "Score",
    "Shapes",
    "SituationError",
    "TileCountError",
    "__version__",
    "configure",
    "decompositions",
    "find_rules",
    "format_counts",
    "format_tiles",
    "is_win",
    "load_situation",
    "make_bot",
    "parse_counts",
    "parse_tiles",
    "read_record",
    "read_situation",
    "record_of",
    "replay",
    "score",
    "shanten",
    "tile_name",
    "wait_shapes",
    "waits",
]
