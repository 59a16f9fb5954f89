"""Rule sets as data: `RuleSet` and its presets, the fan tables, and the win
requirements. Every difference between rule sets is a field here; no code outside this
package branches on a rule set's name.
"""

from fangcheng.rules.fans import (
    BAICHENG_FANS,
    BAISHAN_FANS,
    BAISHAN_PLATFORM_FANS,
    SICHUAN_FANS,
    AppliedFan,
    Fan,
    PayerTest,
    Scope,
    WinContext,
    WinnerTest,
)
from fangcheng.rules.requirements import (
    final_counts,
    hand_failure,
    has_pung,
    legal_arrangements,
    no_win_reason,
    wait_set,
)
from fangcheng.rules.ruleset import (
    ALL_RULES,
    BAICHENG,
    BAISHAN,
    BAISHAN_PLATFORM,
    ROOMS,
    SICHUAN,
    KongPayers,
    KongTable,
    OptionError,
    Options,
    Room,
    RuleSet,
    configure,
    find_rules,
)

__all__ = [
    "ALL_RULES",
    "BAICHENG",
    "BAICHENG_FANS",
    "BAISHAN",
    "BAISHAN_FANS",
    "BAISHAN_PLATFORM",
    "BAISHAN_PLATFORM_FANS",
    "ROOMS",
    "SICHUAN",
    "SICHUAN_FANS",
    "AppliedFan",
    "Fan",
    "KongPayers",
    "KongTable",
    "OptionError",
    "Options",
    "PayerTest",
    "Room",
    "RuleSet",
    "Scope",
    "WinContext",
    "WinnerTest",
    "configure",
    "final_counts",
    "find_rules",
    "hand_failure",
    "has_pung",
    "legal_arrangements",
    "no_win_reason",
    "wait_set",
]
