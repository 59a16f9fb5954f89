"""The AI research API: a PettingZoo AEC environment over any rule set, and a Gymnasium
single-seat wrapper with the other three seats played by bots.

Requires the ``pettingzoo`` and ``gymnasium`` packages (the ``rl`` extra).

Agents and turns
================
Four agents, ``player_0`` … ``player_3``, are the engine's seats 0–3 (``player_k`` is
seat ``k``; the dealer is the ``dealer`` argument, 0 unless changed). ``agent_selection``
is the first seat whose decision the engine awaits. A claim window after a discard (or a
robbable 补杠 / dragon addition) is a simultaneous decision in the engine: here the asked
seats answer one after another in seat order, no seat sees another's answer, and the
engine resolves the window (win, then peng/kong, then chi) once the last has answered.
Every seat still playing is asked, even one that can only pass, so ``agent_selection``
never tells who could claim (``ask_all=False`` asks only those, in about a third of the
steps, at the price of that leak; the single-seat environment needs no such care, since
its one agent only learns its own options). When the hand ends every agent is terminated
(there is no truncation: every hand ends by itself) and, as PettingZoo requires, each
is stepped once more with ``None`` to leave.

Action space: ``Discrete(237)``, the same for every rule set
============================================================
One index per distinct engine `Action`; a rule set simply never makes some of them legal.

======  ====  ============  ==================================================
offset  size  action        index within the block
======  ====  ============  ==================================================
0       34    ``discard``   the tile (0–33, see `fangcheng.tiles.notation`)
34      34    ``ting``      the tile discarded while declaring 报听
68      21    ``chi``       the run's lowest tile: 7 × suit + rank − 1 (runs 1–7)
89      34    ``peng``      the discard's face
123     34    ``gang``      the discard's face (明杠 on a discard)
157     34    ``angang``    the face (暗杠)
191     34    ``bugang``    the face (补杠 onto one's own 碰)
225     1     ``xuanfeng``  lay the 中发白 set (baicheng)
226     3     ``add``       the dragon added to a laid 旋风杠: 白 P, 发 F, 中 C
229     1     ``hu``        win (discard, self-draw, robbed kong, 摸宝, 分张)
230     1     ``pass``      decline a claim, a robbery or a 分张 win
231     3     ``que``       定缺 suit: m, p, s (sichuan)
234     3     ``piao``      漂 bet: 0, 5, 10 × 底注 (baishan_platform)
======  ====  ============  ==================================================

A chi is named by its run; the called tile is always the open discard
(``last_discard``), so the run alone identifies the call. `action_to_index` and
`index_to_action` convert, `legal_mask` builds the mask of a legal list. The mask is
``observation["action_mask"]`` (``int8``, 1 = legal); it is all zeros for an agent whose
decision is not awaited.

Observation: ``Dict(observation=Box(float32, (1508,)), action_mask=Box(int8, (237,)))``
=======================================================================================
The tensor is built from the seat's own `fangcheng.protocol.Observation` and nothing else
(`encode_observation`): its own concealed tiles, and of the others only what the table
shows. Seats are *relative*: block ``r`` describes seat ``(me + r) % 4`` — 0 yourself,
1 下家 (next to play), 2 对家 (across), 3 上家 (before you). Tile sections are 34 wide
in tile-id order. Each section's range is part of the space's bounds.

Own:

======  ====  ============  ===========  ==============================================
offset  size  section       range        meaning
======  ====  ============  ===========  ==============================================
0       34    hand          0–4          own concealed tiles (the drawn tile included)
34      34    drawn         0/1          one-hot: the tile just drawn, if any
68      34    unseen        0–4          copies of each face this seat has not seen:
                                         4 per face of the rule set's tile set, less
                                         own hand, all rivers, all shown melds and
                                         the retired treasure indicators
======  ====  ============  ===========  ==============================================

Then four seat blocks of 320 each, at 102, 422, 742 and 1062 (block ``r`` starts at
102 + 320 × r); offsets below are within the block:

======  ====  ============  ===========  ==============================================
offset  size  section       range        meaning
======  ====  ============  ===========  ==============================================
0       34    river         0–4          its discards still in front of it
34      136   recent        0/1          its last four discards, most recent first,
                                         one-hot each (34 × 4)
170     34    chi           0–4          tiles in its chi melds
204     34    peng          0/1          faces of its pengs
238     34    kong          0/1          faces of its exposed kongs (明杠, 补杠)
272     34    angang        0/1          faces of its concealed kongs as this seat
                                         sees them: its own always, others' only
                                         once the hand has ended
306     3     xuanfeng      0–4          dragons in its laid 旋风杠 (P, F, C)
309     1     hidden_kongs  0–4          its concealed kongs whose face is hidden
310     1     concealed     0–1          how many concealed tiles it holds, / 14
311     1     ready         0/1          declared 报听
312     1     won           0/1          has won (sichuan winners play on)
313     3     que           0/1          its 缺 suit m/p/s, once all four have chosen
316     3     piao          0/1          its 漂 bet 0/5/10 (0 where there are none)
319     1     score         (−1, 1)      coins moved so far this hand, squashed:
                                         x / (|x| + 16) with x = coins / base
======  ====  ============  ===========  ==============================================

Table, from offset 1382:

======  ====  ============  ===========  ==============================================
offset  size  section       range        meaning
======  ====  ============  ===========  ==============================================
1382    4     dealer        0/1          relative seat of the dealer
1386    4     turn          0/1          relative seat whose turn it is
1390    7     phase         0/1          piao, que, turn, claim, rob, fenzhang, end
1397    34    claim_tile    0/1          the discard or kong addition open to claims
1431    4     claim_seat    0/1          relative seat that made it
1435    34    treasure      0/1          the treasure face (baicheng)
1469    34    retired       0–4          treasure indicators retired by 换宝
1503    1     wall          0–1          tiles left in the live wall / tiles in the set
1504    4     rules         0/1          the rule set's features: 宝 treasure, 报听,
                                         漂 bets, 血战 (baicheng 1000, baishan 0100,
                                         baishan_platform 0110, sichuan 0001)
======  ====  ============  ===========  ==============================================

`OBSERVATION_LAYOUT` holds the same table as data (name, offset, size, bounds), with
the seat sections named ``seat0.river`` … ``seat3.score``.

Speed
=====
An observation is written by a small C extension (``_encode.c``, built from source by the
install where the machine has a compiler) straight into a fresh ``float32`` array, or a
caller's (``out=``); without it the same tensor comes from this module's Python encoder,
several times slower (a warning says so once). For training where the claim-window leak
does not matter (self-play, a learner that never reads ``agent_selection`` for
information), pass ``ask_all=False``: a hand then takes about a third of the decisions.
``benchmarks/bench_env.py`` (baishan, random masked agents, one core, process CPU time, a
quiet machine, 2026-12-03) measured 451–577 hands/s with ``ask_all=False`` against
187–216 with ``ask_all=True`` (47,000–60,000 and 67,000–78,000 decisions/s; riichienv's
Rust environment about 49,000 in the same runs; benchmarks/RESULTS.md).

Rewards
=======
Score deltas in coins, times ``reward_scale``: after every step each seat is rewarded
the change in its running total since its last reward — Sichuan's wins and kongs as
they are paid, the other rule sets' at the end — and the last step pays the settlement
(after service fees). A hand's rewards add up to ``settlement["total"]`` per seat, and
over the table to minus the fees (zero where no fees are taken).

Determinism
===========
``reset(seed=s)`` deals ``Round(rules, seed=s)``; a ``reset()`` without a seed draws the
next hand's seed from a generator seeded by the last seed given, so a seeded sequence of
hands replays exactly.

Illegal actions
===============
The raw environment (`FangchengEnv`, also `raw_env`) raises
`fangcheng.protocol.actions.IllegalActionError` on an action outside the mask. `env` makes
the checked environment (`CheckedEnv`), which keeps PettingZoo's wrappers' promises at
the raw step's speed: an illegal action ends the hand with ``illegal_reward`` to the
offender, and calls out of order are errors.
For the single-seat environment, `FallbackOnIllegal` replaces an illegal index by a
legal default (pass, else discarding the drawn tile, else the lowest legal index).

>>> e = env(rules="baicheng")
>>> e.reset(seed=7)
>>> obs, reward, terminated, truncated, info = e.last()
>>> obs["observation"].shape, obs["action_mask"].shape
((1508,), (237,))
"""

from __future__ import annotations

import importlib
import operator
import random
import warnings
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Final, Protocol, SupportsFloat

import gymnasium
import numpy as np
from gymnasium import spaces
from numpy.typing import NDArray
from pettingzoo import AECEnv  # type: ignore[import-untyped]
from pettingzoo.utils.env_logger import EnvLogger  # type: ignore[import-untyped]

from fangcheng.engine.round import Round, shared_action
from fangcheng.engine.round import observe as _observe  # `Round.observe` without its frame
from fangcheng.protocol.actions import Act, Action, IllegalActionError
from fangcheng.protocol.observation import Observation, Phase
from fangcheng.rules.ruleset import ALL_RULES, RuleSet, configure, find_rules
from fangcheng.tiles.melds import Meld, MeldKind
from fangcheng.tiles.notation import DRAGONS, KINDS

_CHI: Final = MeldKind.CHI
_PENG: Final = MeldKind.PENG
_AN_GANG: Final = MeldKind.AN_GANG
_XUANFENG: Final = MeldKind.XUANFENG
_FIRST_DRAGON: Final = DRAGONS[0]

__all__ = [
    "ACTION_LAYOUT",
    "ACTION_SIZE",
    "OBSERVATION_LAYOUT",
    "OBSERVATION_SIZE",
    "CheckedEnv",
    "FallbackOnIllegal",
    "FangchengEnv",
    "Policy",
    "RandomPolicy",
    "Section",
    "SingleSeatEnv",
    "action_to_index",
    "encode_observation",
    "env",
    "index_to_action",
    "legal_mask",
    "raw_env",
]

SEATS: Final = 4
#: The 漂 bets of the action space (one action each): every bet a preset allows. A rule
#: set with another bet cannot be played here (`FangchengEnv` refuses it).
PIAO_BETS: Final = tuple(sorted({b for r in ALL_RULES for b in r.piao_bets}))
#: The rule-set features the observation shows (its ``rules`` section), read from the
#: table's configured `RuleSet`, so that a house variant is described by what it plays,
#: not by a name: 宝 treasure, 报听, 漂 bets, 血战.
_RULE_FEATURES: Final[tuple[Callable[[RuleSet], bool], ...]] = (
    lambda r: r.treasure,
    lambda r: r.declare_ready,
    lambda r: bool(r.piao_bets),
    lambda r: r.bloody,
)

# --- the action space ----------------------------------------------------------------


def _actions() -> tuple[tuple[tuple[str, int, int], ...], tuple[Action, ...]]:
    tiles = range(KINDS)
    blocks: list[tuple[str, list[Action]]] = [
        ("discard", [Action(Act.DISCARD, t) for t in tiles]),
        ("ting", [Action(Act.READY, t) for t in tiles]),
        (
            "chi",
            [
                Action(Act.CHI, run=(s, s + 1, s + 2))
                for s in (9 * suit + rank for suit in range(3) for rank in range(7))
            ],
        ),
        ("peng", [Action(Act.PENG, t) for t in tiles]),
        ("gang", [Action(Act.GANG, t) for t in tiles]),
        ("angang", [Action(Act.AN_GANG, t) for t in tiles]),
        ("bugang", [Action(Act.BU_GANG, t) for t in tiles]),
        ("xuanfeng", [Action(Act.XUANFENG)]),
        ("add", [Action(Act.ADD, t) for t in DRAGONS]),
        ("hu", [Action(Act.HU)]),
        ("pass", [Action(Act.PASS)]),
        ("que", [Action(Act.QUE, value=v) for v in range(3)]),
        ("piao", [Action(Act.PIAO, value=b) for b in PIAO_BETS]),
    ]
    layout: list[tuple[str, int, int]] = []
    flat: list[Action] = []
    for name, acts in blocks:
        layout.append((name, len(flat), len(acts)))
        flat += map(shared_action, acts)  # the engine's own values: `act` matches by identity
    return tuple(layout), tuple(flat)


_BUILT: Final = _actions()
#: (block name, offset, size) of each block of the action space, in order.
ACTION_LAYOUT: Final = _BUILT[0]
_INDEX_TO_ACTION: Final = _BUILT[1]
ACTION_SIZE: Final = len(_INDEX_TO_ACTION)
_ACTION_TO_INDEX: Final = {a: i for i, a in enumerate(_INDEX_TO_ACTION)}
# By identity first: an action is almost always one of the engine's shared values (those
# of `_INDEX_TO_ACTION`, alive as long as the module), and hashing an `Action` hashes
# its fields through `Enum.__hash__`, a Python call (about 1 µs a lookup).
_INDEX_OF_ID: Final = {id(a): i for i, a in enumerate(_INDEX_TO_ACTION)}


def action_to_index(action: Action) -> int:
    """The index of ``action`` in the action space; a `ValueError` if it has none.

    >>> action_to_index(Action.parse("chi 345m")), action_to_index(Action.parse("hu"))
    (70, 229)
    """
    found = _INDEX_OF_ID.get(id(action))
    if found is not None:
        return found
    try:
        return _ACTION_TO_INDEX[action]
    except KeyError:
        raise ValueError(f"action {action} ({action!r}) has no index in the action space") from None


def index_to_action(index: int) -> Action:
    """The engine action of an index (``0 <= index < ACTION_SIZE``).

    >>> str(index_to_action(89 + 4))
    'peng 5m'
    """
    i = int(index)
    if not 0 <= i < ACTION_SIZE:
        raise ValueError(f"action index {index!r} is outside 0..{ACTION_SIZE - 1}")
    return _INDEX_TO_ACTION[i]


def legal_mask(legal: Sequence[Action]) -> NDArray[np.int8]:
    """The ``int8`` mask of a legal-action list: 1 at each legal action's index."""
    mask = bytearray(ACTION_SIZE)  # item stores into a bytearray, then one numpy view
    try:  # the indices of the shared values, found in C-level maps (see `_INDEX_OF_ID`)
        for i in map(_INDEX_OF_ID.get, map(id, legal)):
            mask[i] = 1  # type: ignore[index]  # None raises the TypeError below
    except TypeError:  # an index of None: an action that is not a shared value
        for action in legal:
            mask[action_to_index(action)] = 1  # raises if it has none
    return np.frombuffer(mask, np.int8)


# --- the observation tensor ----------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Section:
    """One named piece of the observation tensor."""

    name: str
    offset: int
    size: int
    low: float
    high: float

    @property
    def slice(self) -> slice:
        return slice(self.offset, self.offset + self.size)


_OWN: Final = (("hand", 34, 0.0, 4.0), ("drawn", 34, 0.0, 1.0), ("unseen", 34, 0.0, 4.0))
_SEAT: Final = (
    ("river", 34, 0.0, 4.0),
    ("recent", 4 * 34, 0.0, 1.0),
    ("chi", 34, 0.0, 4.0),
    ("peng", 34, 0.0, 1.0),
    ("kong", 34, 0.0, 1.0),
    ("angang", 34, 0.0, 1.0),
    ("xuanfeng", 3, 0.0, 4.0),
    ("hidden_kongs", 1, 0.0, 4.0),
    ("concealed", 1, 0.0, 1.0),
    ("ready", 1, 0.0, 1.0),
    ("won", 1, 0.0, 1.0),
    ("que", 3, 0.0, 1.0),
    ("piao", len(PIAO_BETS), 0.0, 1.0),
    ("score", 1, -1.0, 1.0),
)
_TABLE: Final = (
    ("dealer", 4, 0.0, 1.0),
    ("turn", 4, 0.0, 1.0),
    ("phase", len(Phase), 0.0, 1.0),
    ("claim_tile", 34, 0.0, 1.0),
    ("claim_seat", 4, 0.0, 1.0),
    ("treasure", 34, 0.0, 1.0),
    ("retired", 34, 0.0, 4.0),
    ("wall", 1, 0.0, 1.0),
    ("rules", len(_RULE_FEATURES), 0.0, 1.0),
)


def _layout() -> tuple[Section, ...]:
    pieces = list(_OWN)
    for r in range(SEATS):
        pieces += [(f"seat{r}.{name}", *rest) for name, *rest in _SEAT]  # type: ignore[misc]
    pieces += list(_TABLE)
    out, offset = [], 0
    for name, size, low, high in pieces:
        out.append(Section(name, offset, size, low, high))
        offset += size
    return tuple(out)


#: Every section of the observation tensor, in order (see the module docstring).
OBSERVATION_LAYOUT: Final = _layout()
OBSERVATION_SIZE: Final = OBSERVATION_LAYOUT[-1].offset + OBSERVATION_LAYOUT[-1].size
_AT: Final = {s.name: s.offset for s in OBSERVATION_LAYOUT}
_SEAT_BLOCK: Final = sum(size for _, size, _, _ in _SEAT)
_OBS_LOW: Final = np.concatenate([np.full(s.size, s.low, np.float32) for s in OBSERVATION_LAYOUT])
_OBS_HIGH: Final = np.concatenate([np.full(s.size, s.high, np.float32) for s in OBSERVATION_LAYOUT])
#: A phase's place, by the ``id`` of its member (they live as long as the module): an
#: `Enum`'s hash is a Python call.
_PHASES: Final = {id(p): i for i, p in enumerate(Phase)}

# The Python encoder (the compiled one's fallback and reference; its tricks were measured
# on Python alone) writes every whole-number section as one byte each into a scratch
# ``bytearray`` (a C-level store per item, where a numpy item store costs ten times as
# much), converts it to float32 in one numpy call, then writes the nine fractional
# entries (four ``concealed``, four ``score``, ``wall``) in one fancy-indexed store.
_HAND: Final = _AT["hand"]
_DRAWN: Final = _AT["drawn"]
_UNSEEN: Final = _AT["unseen"]
_SEAT0: Final = _AT["seat0.river"]
_DEALER: Final = _AT["dealer"]
_TURN: Final = _AT["turn"]
_PHASE: Final = _AT["phase"]
_CLAIM_TILE: Final = _AT["claim_tile"]
_CLAIM_SEAT: Final = _AT["claim_seat"]
_TREASURE: Final = _AT["treasure"]
_RETIRED: Final = _AT["retired"]
_RULES_AT: Final = _AT["rules"]
#: Where the fractional entries go: each seat's concealed and score, then the wall.
_FRACTIONS: Final = np.array(
    [_SEAT0 + r * _SEAT_BLOCK + k for r in range(SEATS) for k in (310, 319)] + [_AT["wall"]]
)
_ZERO_SCRATCH: Final = bytes(OBSERVATION_SIZE)
#: seen copies -> unseen copies (4 - seen, never below 0), for `bytes.translate`.
_UNSEEN_ROW: Final = bytes(max(0, 4 - v) for v in range(256))
_PIAO_AT: Final = {bet: k for k, bet in enumerate(PIAO_BETS)}
#: The seats in relative order, seen from each seat.
_ROTATION: Final = tuple(tuple((me + r) % SEATS for r in range(SEATS)) for me in range(SEATS))
#: A face's place among tile counts held as the base-256 digits of one integer (face 0
#: the highest): ``_PLACE(t)`` is 256 ** (33 - t). No count reaches 256 (4 copies a face).
_PLACE: Final = tuple(1 << 8 * (KINDS - 1 - t) for t in range(KINDS)).__getitem__
_RIVER_BLOCK: Final = 34 + 4 * 34  # a seat block's river and recent sections
_NO_RECENT: Final = bytes(4 * 34)
_ONE_HOT: Final = tuple(bytes(t) + b"\x01" + bytes(KINDS - 1 - t) for t in range(KINDS))
_THREE_RECENT: Final = KINDS + 3 * KINDS  # the end of a river block's three first recent

# Rivers kept between decisions: a river's two sections (its counts and its last four
# discards) and its counts as one integer, by the river's tiles as bytes. A river grows by
# one tile between a seat's decisions (or loses its last to a claim), and is seen by every
# seat: most are found here, the rest are made from the river one tile shorter. Looping
# over every river's tiles, twice a tile, was about a third of an encoding (about 150,000
# instructions a call mid-hand). The key is the tiles as bytes, which keep their hash and
# compare with memcmp: a tuple key was hashed anew at each of a grown river's three
# look-ups, and the look-ups were still a quarter of an encoding.
_RIVERS: dict[bytes, tuple[bytes, int]] = {}


def _river_block(river: bytes) -> tuple[bytes, int]:
    """The river's two sections and its counts (see `_RIVERS`), made and kept."""
    shorter = _RIVERS.get(river[:-1])
    if shorter is None:
        counts = sum(map(_PLACE, river))
        block = bytearray(counts.to_bytes(KINDS) + _NO_RECENT)
        recent = KINDS
        for t in river[:-5:-1]:
            block[recent + t] = 1
            recent += KINDS
        found = bytes(block), counts
    else:  # the most recent discard, then the shorter river's three most recent
        last = river[-1]
        counts = shorter[1] + _PLACE(last)
        found = counts.to_bytes(KINDS) + _ONE_HOT[last] + shorter[0][KINDS:_THREE_RECENT], counts
    if len(_RIVERS) > 4096:  # a long run: the hands before this one are done with
        _RIVERS.clear()
    _RIVERS[river] = found
    return found


# Laid melds kept by ``id``: a meld is the engine's own object from decision to decision,
# and random opponents lay four or five a hand, so that working out each one's tiles and
# kind again was about a sixth of an encoding. Each: the meld itself (its id is trusted only
# while it is that object), its tiles as base-256 digits (see `_PLACE`), and the offsets in
# a seat block of its entries, each one more (no two melds of a seat set one flag twice).
_MELDS: dict[int, tuple[Meld, int, tuple[int, ...]]] = {}


def _meld_entries(meld: Meld) -> tuple[Meld, int, tuple[int, ...]]:
    """A meld's `_MELDS` entry, made and kept."""
    kind, tiles, face = meld.kind, meld.tiles, meld.face
    if kind is _CHI:
        offsets = tuple(170 + t for t in tiles)
    elif kind is _PENG:
        offsets = (204 + face,)
    elif kind is _AN_GANG:
        offsets = (272 + face,)
    elif kind is _XUANFENG:
        offsets = tuple(306 + t - _FIRST_DRAGON for t in tiles)
    else:  # 明杠, 补杠
        offsets = (238 + face,)
    found = meld, sum(map(_PLACE, tiles)), offsets
    if len(_MELDS) > 4096:  # a long run: the hands before this one are done with
        _MELDS.clear()
    _MELDS[id(meld)] = found
    return found


#: By ``id`` of a table's `RuleSet` (hashing one hashes every field): the rule set itself
#: (the id is trusted only while it is that object), a bytewise mask with 255 in the count
#: byte of each face in play, the wall's full size, the ``rules`` section's bytes, and the
#: mask's bytes (the compiled encoder's).
_BY_RULES: dict[int, tuple[RuleSet, int, int, bytes, bytes]] = {}


def _rules_facts(rules: RuleSet) -> tuple[RuleSet, int, int, bytes, bytes]:
    faces = rules.faces
    in_play = bytes(255 if t in faces else 0 for t in range(KINDS))
    found = (
        rules,
        int.from_bytes(in_play),
        4 * len(faces),
        bytes(int(feature(rules)) for feature in _RULE_FEATURES),
        in_play,
    )
    if len(_BY_RULES) > 64:  # a long run over many configured tables
        _BY_RULES.clear()
    _BY_RULES[id(rules)] = found
    return found


def _compiled_encoder() -> Callable[..., None] | None:
    """The compiled encoder (``_encode.c``) set up with this layout, or None (and a
    `RuntimeWarning` says so, once) where the install built none: in Python an encoding
    was a quarter of a single-seat step, in C it is a few percent."""
    try:
        from fangcheng.ai import _encode
    except ImportError:
        warnings.warn(
            "fangcheng.ai.env: the compiled observation encoder was not built (no C compiler"
            " when the package was installed); observations are encoded by its Python code,"
            " several times slower",
            RuntimeWarning,
            stacklevel=2,
        )
        return None
    # in the order of _encode.c's offsets: the table's, then a seat block's
    own = [_AT[name] for name in ("hand", "drawn", "unseen")] + [_SEAT0, _SEAT_BLOCK]
    table = ("dealer", "turn", "phase", "claim_tile", "claim_seat", "treasure", "retired")
    block: tuple[str, ...] = ("river", "recent", "chi", "peng", "kong", "angang", "xuanfeng")
    block += ("hidden_kongs", "concealed", "ready", "won", "que", "piao", "score")
    offsets = (
        *own,
        *(_AT[name] for name in (*table, "wall", "rules")),
        OBSERVATION_SIZE,
        *(_AT[f"seat0.{name}"] - _SEAT0 for name in block),
    )
    kinds = (_CHI, _PENG, _AN_GANG, _XUANFENG)
    _encode.setup(offsets, tuple(Phase), kinds, _FIRST_DRAGON, PIAO_BETS)
    return _encode.encode


#: ``encode(obs, out, base, facts)``, or None: `encode_observation` then runs
#: `_encode_python`, which is also the compiled encoder's reference.
_ENCODE: Final = _compiled_encoder()


def encode_observation(
    obs: Observation, *, base: int = 1, out: NDArray[np.float32] | None = None
) -> NDArray[np.float32]:
    """The observation tensor of one seat's `Observation` (layout: module docstring).

    ``base`` is the table's 底注 (scores are read in units of it). The tile faces in play
    and the rule-set features are the observation's own rule set, as the table configured it.
    ``out`` (a float32 array of `OBSERVATION_SIZE`) is filled and returned instead of a new
    array, for a caller that keeps one buffer per slot.
    """
    rules = obs[1]
    facts = _BY_RULES.get(id(rules))
    if facts is None or facts[0] is not rules:
        facts = _rules_facts(rules)
    if _ENCODE is None:
        return _encode_python(obs, base, out, facts)
    if out is None:
        out = np.empty(OBSERVATION_SIZE, np.float32)
    _ENCODE(obs, out, base, facts)
    return out


def _encode_python(
    obs: Observation,
    base: int,
    out: NDArray[np.float32] | None,
    facts: tuple[RuleSet, int, int, bytes, bytes],
) -> NDArray[np.float32]:
    """`encode_observation` on Python alone: where the compiled encoder was not built, and
    its reference."""
    c = bytearray(_ZERO_SCRATCH)
    # the fields at once (one unpacking, not a dozen attribute reads)
    me, _, phase, dealer, turn, _, wall, treasure, retired, hand, drawn, seats = obs[:12]
    scores, last_discard = obs.scores, obs.last_discard
    seen = int.from_bytes(hand)  # the copies this seat has seen, as base-256 digits
    c[_HAND : _HAND + KINDS] = hand
    if drawn is not None:
        c[_DRAWN + drawn] = 1
    fractions = [0.0] * 9
    rivers = _RIVERS
    for r, s in enumerate(_ROTATION[me]):
        melds, hidden, river, concealed, ready, que, won, piao, _ = seats[s]
        b = _SEAT0 + r * _SEAT_BLOCK
        if river:
            tiles = bytes(river)  # a tile is below 256
            found = rivers.get(tiles)
            if found is None:
                found = _river_block(tiles)
            c[b : b + _RIVER_BLOCK] = found[0]
            seen += found[1]
        for meld in melds:
            laid = _MELDS.get(id(meld))
            if laid is None or laid[0] is not meld:
                laid = _meld_entries(meld)
            seen += laid[1]
            for k in laid[2]:
                c[b + k] += 1
        # The view was unpacked at once above, and its rare entries are tested before a
        # store: eight attribute reads and four stores of zeros a seat fewer.
        if hidden:
            c[b + 309] = hidden
        if ready:
            c[b + 311] = 1
        if won:
            c[b + 312] = 1
        if que is not None:
            c[b + 313 + que] = 1
        bet = _PIAO_AT.get(piao)
        if bet is not None:
            c[b + 316 + bet] = 1
        fractions[2 * r] = concealed / 14.0
        if scores[s]:  # 0 most of a hand: 0 squashed is 0
            x = scores[s] / base
            fractions[2 * r + 1] = x / (abs(x) + 16.0)
    c[_DEALER + (dealer - me) % SEATS] = 1
    c[_TURN + (turn - me) % SEATS] = 1
    c[_PHASE + _PHASES[id(phase)]] = 1
    if last_discard is not None:
        seat, tile = last_discard
        c[_CLAIM_TILE + tile] = 1
        c[_CLAIM_SEAT + (seat - me) % SEATS] = 1
    if treasure is not None:
        c[_TREASURE + treasure] = 1
    for t in retired:
        c[_RETIRED + t] += 1
        seen += _PLACE(t)
    _, in_play, wall_size, features, _ = facts
    unseen = int.from_bytes(seen.to_bytes(KINDS).translate(_UNSEEN_ROW)) & in_play
    c[_UNSEEN : _UNSEEN + KINDS] = unseen.to_bytes(KINDS)
    fractions[8] = min(1.0, wall / wall_size)
    c[_RULES_AT : _RULES_AT + len(_RULE_FEATURES)] = features
    counts = np.frombuffer(c, np.int8)
    if out is None:
        out = counts.astype(np.float32)
    else:
        out[:] = counts
    out[_FRACTIONS] = fractions
    return out


def observation_space() -> spaces.Dict:
    """The observation space: the tensor and the legal-action mask."""
    return spaces.Dict(
        {
            "observation": spaces.Box(_OBS_LOW, _OBS_HIGH, dtype=np.float32),
            "action_mask": spaces.Box(0, 1, (ACTION_SIZE,), dtype=np.int8),
        }
    )


# --- the PettingZoo environment -------------------------------------------------------


def _agent(seat: int) -> str:
    return f"player_{seat}"


_AGENTS: Final = tuple(map(_agent, range(SEATS)))
_SEAT_OF: Final = {a: s for s, a in enumerate(_AGENTS)}


class FangchengEnv(AECEnv):  # type: ignore[misc]
    """One hand of ``rules`` per episode, four agents, as a PettingZoo AEC environment.

    ``options`` are the table options of `fangcheng.rules.ruleset.configure` (room, piao, que,
    claim_window, cap). ``dealer`` is the dealing seat, or None to draw it for each hand
    from the seeded generator; ``base`` the 底注; ``reward_scale`` multiplies every
    reward. ``reset(options={"dealer": k})`` overrides the dealer for one hand; other
    keys of ``reset``'s options are ignored. ``ask_all`` (default) asks every seat still
    playing in a claim window, so the turn order hides who could claim.
    """

    metadata: ClassVar[dict[str, Any]] = {
        "name": "fangcheng_v0",
        "render_modes": ["human", "ansi"],
        "is_parallelizable": False,
        "render_fps": 1,
    }

    def __init__(
        self,
        rules: str | RuleSet = "baishan",
        *,
        options: Mapping[str, object] | None = None,
        dealer: int | None = 0,
        base: int = 1,
        reward_scale: float = 1.0,
        render_mode: str | None = None,
        ask_all: bool = True,
    ) -> None:
        super().__init__()
        self.rules = find_rules(rules) if isinstance(rules, str) else rules
        if set(self.rules.piao_bets) - set(PIAO_BETS):
            bets = ", ".join(map(str, PIAO_BETS))
            raise ValueError(f"{self.rules.name}: 漂 bets {self.rules.piao_bets}; valid: {bets}")
        self.table_options = dict(options or {})
        configure(self.rules, self.table_options)  # an unknown option fails here, not later
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(
                f"render_mode {render_mode!r}; valid: {', '.join(self.metadata['render_modes'])}"
            )
        if dealer is not None and dealer not in range(SEATS):
            raise ValueError(f"dealer {dealer!r}; valid: 0..3 or None")
        self.dealer = dealer
        self.base = base
        self.reward_scale = float(reward_scale)
        self.render_mode = render_mode
        self.ask_all = ask_all
        self.possible_agents = [_agent(s) for s in range(SEATS)]
        self.agents: list[str] = []
        self.action_spaces = {a: spaces.Discrete(ACTION_SIZE) for a in self.possible_agents}
        self.observation_spaces = {a: observation_space() for a in self.possible_agents}
        self.round: Round | None = None
        self._seed: int | None = None  # the last seed given to `reset`
        self._rng: np.random.Generator | None = None  # see `_generator`
        self._paid = [0] * SEATS
        self._counted = 0
        self._quiet = False
        self.rewards: dict[str, float] = {}
        self._cumulative_rewards: dict[str, float] = {}
        self.terminations: dict[str, bool] = {}
        self.truncations: dict[str, bool] = {}
        self.infos: dict[str, dict[str, Any]] = {}
        self.agent_selection: str = ""

    def observation_space(self, agent: str) -> spaces.Space[Any]:
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Space[Any]:
        return self.action_spaces[agent]

    def reset(self, seed: int | None = None, options: Mapping[str, Any] | None = None) -> None:
        if seed is not None:
            hand_seed = int(seed)
            if hand_seed < 0:  # as the generator seeded by it would say
                raise ValueError(f"seed {seed!r}: expected a non-negative integer")
            self._seed, self._rng = seed, None
        else:
            hand_seed = int(self._generator().integers(2**63))
        dealer = self.dealer
        if options and "dealer" in options:
            dealer = options["dealer"]
            if dealer not in range(SEATS):
                raise ValueError(f"reset option 'dealer' is {dealer!r}; valid: 0..3")
        if dealer is None:
            dealer = int(self._generator().integers(SEATS))
        self.round = Round(
            self.rules,
            seed=hand_seed,
            dealer=dealer,
            base=self.base,
            options=self.table_options,
            ask_all=self.ask_all,
        )
        self.agents = self.possible_agents[:]
        self.rewards = dict.fromkeys(self.agents, 0.0)
        self._cumulative_rewards = dict.fromkeys(self.agents, 0.0)
        self.terminations = dict.fromkeys(self.agents, False)
        self.truncations = dict.fromkeys(self.agents, False)
        self.infos = {a: {} for a in self.agents}
        self._paid = [0] * SEATS
        self._counted = 0  # of the round's payment items, those in self._paid
        self._quiet = False  # the rewards are those of a step that paid nothing
        self.agent_selection = _AGENTS[self.round.pending()[0]]
        if self.render_mode == "human":
            self.render()

    def _generator(self) -> np.random.Generator:
        """The generator of unseeded resets and drawn dealers, seeded by the last seed
        given (else by the system): made when first drawn from, as `default_rng` was
        about 3% of a single-seat step, whose every hand is seeded and has its dealer."""
        if self._rng is None:
            self._rng = np.random.default_rng(self._seed)
        return self._rng

    def _round(self) -> Round:
        if self.round is None:
            raise RuntimeError("call reset() before using the environment")
        return self.round

    def observe(self, agent: str) -> dict[str, NDArray[Any]]:
        obs = _observe(self._round(), _SEAT_OF[agent])
        return {
            "observation": encode_observation(obs, base=self.base),
            "action_mask": legal_mask(obs.legal),
        }

    def step(self, action: int | np.integer[Any] | None) -> None:
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        if action is None:
            raise IllegalActionError(f"{agent} must act; None is only for a finished agent")
        self._play(_SEAT_OF[agent], index_to_action(int(action)))  # or raise
        if self.render_mode == "human":
            self.render()

    def _play(self, seat: int, action: Action) -> None:
        """`step` of the agent to move (``seat``) with an engine action, as the
        single-seat environment plays its bots' moves (without converting each to an
        index and back)."""
        r = self.round  # set: an agent to move was selected by `reset`
        assert r is not None
        r.act(seat, action)  # or raise
        self._cumulative_rewards[_AGENTS[seat]] = 0.0
        if r.over:
            self._reward_all(r)
            assert r.settlement is not None
            for a in self.agents:
                self.terminations[a] = True
                self.infos[a] = {"settlement": _copy(r.settlement)}
        else:
            if not self._quiet or len(r.items) != self._counted:
                self._reward_all(r)
            self.agent_selection = _AGENTS[r.pending()[0]]
        # Most steps pay nothing: their rewards are zeros (of either sign, with a negative
        # scale), which leave every sum as it was. Skipping the two loops was about 3% of
        # a single-seat step.
        if not self._quiet:
            self._accumulate_rewards()

    def _reward_all(self, r: Round) -> None:
        items = r.items
        if r.settlement is not None:
            totals = list(r.settlement["total"])
        elif len(items) == self._counted:  # most steps pay nothing: the totals stand
            totals = self._paid
        else:  # the payments since the last step (items are only ever appended)
            totals = self._paid[:]
            for item in items[self._counted :]:
                for s, delta in enumerate(item.deltas):
                    totals[s] += delta
            self._counted = len(items)
        scale = self.reward_scale
        rewards, paid = self.rewards, self._paid
        for s, agent in enumerate(self.possible_agents):
            rewards[agent] = (totals[s] - paid[s]) * scale
        self._quiet = totals is paid  # nothing paid: every reward is 0 × scale
        self._paid = totals

    def render(self) -> str | None:
        """The view of the agent to move (`Observation.text`); "human" prints it."""
        if self.render_mode is None:
            gymnasium.logger.warn("render() called without a render_mode")
            return None
        r = self._round()
        seat = self.possible_agents.index(self.agent_selection) if self.agents else 0
        text = r.observe(seat).text()
        if r.settlement is not None:
            text += f"\n  settlement {r.settlement['total']} ({r.settlement['end']})"
        if self.render_mode == "human":
            print(text)
            return None
        return text

    def close(self) -> None:
        pass


raw_env = FangchengEnv

#: What `CheckedEnv` refuses to show before its first reset (PettingZoo's order rules).
_UNTIL_RESET: Final = frozenset(
    {"rewards", "terminations", "truncations", "infos", "agent_selection", "agents", "num_agents"}
)


class CheckedEnv(FangchengEnv):
    """`FangchengEnv` with the guarantees of PettingZoo's three standard wrappers, as
    `env` makes it: an illegal action ends the hand with ``illegal_reward`` to the
    offender (``TerminateIllegalWrapper``); an action that is no index of the space is a
    ``TypeError`` or ``ValueError`` (``AssertOutOfBoundsWrapper``); stepping, iterating
    or reading the state before ``reset``, and an ``agent_iter`` loop that does not step,
    are errors (``OrderEnforcingWrapper``; observing or rendering before it is the raw
    environment's error).

    A subclass, not a wrapper around an instance: each of PettingZoo's wrappers forwards
    every attribute read of `last` and `step` through ``__getattr__``, and the three
    together made a step 3.2–3.3× the raw one; here an illegal action is the engine's
    refusal, caught (the engine refuses before it changes anything), and the attributes
    not to be read before ``reset`` simply do not exist until then. A step takes
    1.07–1.17× the raw step's time (``benchmarks/bench_env.py``, baishan and sichuan).
    """

    def __init__(
        self, rules: str | RuleSet = "baishan", *, illegal_reward: float = -1.0, **kwargs: Any
    ) -> None:
        super().__init__(rules, **kwargs)
        self.illegal_reward = float(illegal_reward)
        self._has_reset = False
        self._updated = False  # stepped (or reset) since `agent_iter` last gave an agent
        for name in _UNTIL_RESET - {"num_agents"}:  # that one is a property of them
            delattr(self, name)

    def __getattr__(self, name: str) -> Any:
        """Only reached for a missing attribute: before ``reset``, one of `_UNTIL_RESET`."""
        if name in _UNTIL_RESET:
            raise AttributeError(f"{name} cannot be accessed before reset")
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    def reset(self, seed: int | None = None, options: Mapping[str, Any] | None = None) -> None:
        super().reset(seed=seed, options=options)
        self._has_reset = self._updated = True

    def step(self, action: int | np.integer[Any] | None) -> None:
        if not self._has_reset:
            EnvLogger.error_step_before_reset()
        self._updated = True
        if not self.agents:
            EnvLogger.warn_step_after_terminated_truncated()
            return
        # an index is an integer (`operator.index`: a float or a string is a TypeError);
        # one outside the space is `index_to_action`'s ValueError
        super().step(None if action is None else operator.index(action))

    def _play(self, seat: int, action: Action) -> None:
        try:
            super()._play(seat, action)
        except IllegalActionError:
            self._end_by_illegal_action(_AGENTS[seat])

    def _end_by_illegal_action(self, agent: str) -> None:
        """``TerminateIllegalWrapper``'s policy: every agent is done, the offender gets
        ``illegal_reward``, the others nothing more."""
        EnvLogger.warn_on_illegal_move()
        self._cumulative_rewards[agent] = 0.0
        self.terminations = dict.fromkeys(self.agents, True)
        self.truncations = dict.fromkeys(self.agents, True)
        self.rewards = dict.fromkeys(self.agents, 0.0)
        self.rewards[agent] = self.illegal_reward
        self._accumulate_rewards()
        self._deads_step_first()

    def agent_iter(self, max_iter: int = 2**63) -> Iterator[str]:
        if not self._has_reset:
            EnvLogger.error_agent_iter_before_reset()
        return self._agents_in_turn(max_iter)

    def _agents_in_turn(self, max_iter: int) -> Iterator[str]:
        for _ in range(max_iter):
            if not self.agents:
                return
            if not self._updated:
                raise AssertionError("need to call step() or reset() in a loop over `agent_iter`")
            self._updated = False
            yield self.agent_selection


def env(illegal_reward: float = -1.0, **kwargs: Any) -> CheckedEnv:
    """The environment a PettingZoo user expects (`CheckedEnv`): an illegal action ends
    the hand with ``illegal_reward`` to the offender; out-of-range actions and calls out
    of order are errors."""
    return CheckedEnv(illegal_reward=illegal_reward, **kwargs)


# --- the Gymnasium single-seat environment --------------------------------------------


class Policy(Protocol):
    """Anything that plays a seat: the interface of `fangcheng.players.bots`.

    A policy that decides from its legal actions alone may also offer ``choose(legal)
    -> Action``, returning what ``act`` would for an observation with those ``legal``
    actions: the single-seat environment then calls it and builds no observation (for
    three random opponents, that was three of a step's four `Round.observe` calls)."""

    def act(self, observation: Observation) -> Action: ...


class RandomPolicy:
    """Uniform over the legal actions, from a seeded `random.Random`: the same draws as
    `fangcheng.players.bots`' random bot given the same generator."""

    def __init__(self, rng: random.Random | None = None) -> None:
        self.rng = rng or random.Random()

    def act(self, observation: Observation) -> Action:
        return self.choose(observation.legal)

    def choose(self, legal: Sequence[Action]) -> Action:
        """`act` without the observation (see `Policy`)."""
        rng = self.rng
        n = len(legal)
        if type(rng) is not random.Random or not n:  # another generator draws its own way
            return rng.choice(legal)
        # `random.Random.choice`'s draw (``n.bit_length()`` bits, again while past the
        # end) without its two Python frames: three opponents choose on most steps.
        bits = rng.getrandbits
        k = n.bit_length()
        i = bits(k)
        while i >= n:
            i = bits(k)
        return legal[i]


def _make_policy(spec: str | Policy, rng: random.Random) -> Policy:
    if not isinstance(spec, str):
        return spec
    if spec == "random":  # the bots module's draws, and it offers `choose`
        return RandomPolicy(rng)
    try:  # imported when first needed: the bots depend on more than the environment does
        bots = importlib.import_module("fangcheng.players.bots")
    except ImportError:
        raise ValueError(f"bot {spec!r} needs fangcheng.players.bots; without it: random") from None
    bot: Policy = bots.make_bot(spec, rng)
    return bot


class SingleSeatEnv(gymnasium.Env[dict[str, Any], np.int64]):
    """One seat of `FangchengEnv` as a Gymnasium environment; bots play the other three.

    ``opponents`` is one bot for all three other seats or one per seat in seat order
    (skipping ``seat``); each is a bot name (``expert@N`` too), built for every hand by
    ``fangcheng.players.bots.make_bot(name, rng)`` with a generator seeded from the episode seed
    (``"random"`` is `RandomPolicy`, the bots module's random draws without the module),
    or an object with ``act(observation) -> Action`` (and optionally ``choose``, see
    `Policy`), used as it is. Episodes are hands; a hand that ends
    before ``seat`` has a decision to make (a dealer's 天胡) is skipped for the next.
    The reward of a step is the seat's coin delta since its previous decision, other
    seats' moves included. Observations, rewards and the rest are `FangchengEnv`'s.
    """

    # gymnasium declares it an instance variable, so no ClassVar here
    metadata: dict[str, Any] = {"render_modes": ["human", "ansi"], "render_fps": 1}  # noqa: RUF012

    def __init__(
        self,
        rules: str | RuleSet = "baishan",
        *,
        seat: int = 0,
        opponents: str | Policy | Sequence[str | Policy] = "random",
        options: Mapping[str, object] | None = None,
        dealer: int | None = 0,
        base: int = 1,
        reward_scale: float = 1.0,
        render_mode: str | None = None,
    ) -> None:
        if seat not in range(SEATS):
            raise ValueError(f"seat {seat!r}; valid: 0..3")
        others = [s for s in range(SEATS) if s != seat]
        if isinstance(opponents, str) or not isinstance(opponents, Sequence):
            specs: list[str | Policy] = [opponents] * 3
        else:
            specs = list(opponents)
            if len(specs) != 3:
                raise ValueError(f"opponents: one bot or three, got {len(specs)}")
        self.seat = seat
        self.agent = _agent(seat)
        self.specs = dict(zip(others, specs, strict=True))
        self.table = FangchengEnv(
            rules,
            options=options,
            dealer=dealer,
            base=base,
            reward_scale=reward_scale,
            render_mode="ansi" if render_mode else None,
            ask_all=False,
        )
        self.render_mode = render_mode
        self.observation_space = observation_space()
        self.action_space = spaces.Discrete(ACTION_SIZE)
        self.bots: dict[int, Policy] = {}
        self._choosers: dict[int, Callable[[Sequence[Action]], Action] | None] = {}

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[dict[str, NDArray[Any]], dict[str, Any]]:
        super().reset(seed=seed)
        hand_seed = seed
        while True:
            if hand_seed is None:
                hand_seed = int(self.np_random.integers(2**63))
            self.table.reset(seed=hand_seed, options=options)
            bot_seed = int(self.np_random.integers(2**63))
            self.bots = {
                s: _make_policy(spec, random.Random(bot_seed + s)) for s, spec in self.specs.items()
            }
            self._choosers = {s: getattr(bot, "choose", None) for s, bot in self.bots.items()}
            self._play_others()
            if not self.table.terminations[self.agent]:
                break
            hand_seed = None
        if self.render_mode == "human":
            self.render()
        return self.table.observe(self.agent), {}

    def _play_others(self) -> None:
        table, r, bots, choosers = self.table, self.table._round(), self.bots, self._choosers
        while not r.over and table.agent_selection != self.agent:
            seat = _SEAT_OF[table.agent_selection]
            choose = choosers[seat]
            if choose is None:
                action = bots[seat].act(r.observe(seat))
            else:  # no observation to build (see `Policy`)
                action = choose(r.legal_actions(seat))
            if id(action) not in _INDEX_OF_ID:
                action_to_index(action)  # a ValueError for an action outside the space
            table._play(seat, action)

    def step(
        self, action: int | np.integer[Any]
    ) -> tuple[dict[str, NDArray[Any]], SupportsFloat, bool, bool, dict[str, Any]]:
        table = self.table
        if table.terminations.get(self.agent, True):
            raise RuntimeError("the hand is over: call reset()")
        # the agent is the one to move (see `_play_others`): `FangchengEnv.step`'s checks
        # are the one above
        table._play(self.seat, index_to_action(int(action)))
        self._play_others()
        reward = float(table._cumulative_rewards[self.agent])
        terminated = table.terminations[self.agent]
        info: dict[str, Any] = {}
        if terminated:
            settlement = table._round().settlement
            assert settlement is not None
            info["settlement"] = _copy(settlement)
        if self.render_mode == "human":
            self.render()
        return table.observe(self.agent), reward, terminated, False, info

    def render(self) -> str | None:
        if self.render_mode is None:
            gymnasium.logger.warn("render() called without a render_mode")
            return None
        r = self.table._round()
        text = r.observe(self.seat).text()
        if r.settlement is not None:
            text += f"\n  settlement {r.settlement['total']} ({r.settlement['end']})"
        if self.render_mode == "human":
            print(text)
            return None
        return text


def _copy(value: Any) -> Any:
    if isinstance(value, list):
        return [_copy(v) for v in value]
    if isinstance(value, dict):
        return {k: _copy(v) for k, v in value.items()}
    return value


class FallbackOnIllegal(gymnasium.Wrapper[dict[str, Any], np.int64, dict[str, Any], np.int64]):
    """Replaces an action outside the mask by a legal default and says so in the info
    (``illegal_action``: the index asked for); ``penalty`` is added to that step's reward.

    The default is pass if it is legal, else discarding the drawn tile, else the lowest
    legal index.
    """

    def __init__(self, env: SingleSeatEnv, penalty: float = 0.0) -> None:
        super().__init__(env)
        self.single = env
        self.penalty = float(penalty)
        self._mask: NDArray[np.int8] | None = None

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[dict[str, NDArray[Any]], dict[str, Any]]:
        obs, info = self.env.reset(seed=seed, options=options)
        self._mask = obs["action_mask"].copy()
        return obs, info

    def step(
        self, action: Any
    ) -> tuple[dict[str, NDArray[Any]], SupportsFloat, bool, bool, dict[str, Any]]:
        mask = self._mask
        index = int(action)
        illegal = mask is not None and not (0 <= index < ACTION_SIZE and mask[index])
        if illegal:
            assert mask is not None
            index = self.fallback(mask)
        obs, reward, terminated, truncated, info = self.env.step(np.int64(index))
        self._mask = obs["action_mask"].copy()
        if illegal:
            info["illegal_action"] = int(action)
            reward = float(reward) + self.penalty
        return obs, reward, terminated, truncated, info

    def fallback(self, mask: NDArray[np.int8]) -> int:
        """The legal index played in place of an illegal one."""
        if mask[_PASS_INDEX]:
            return _PASS_INDEX
        drawn = self.single.table._round().observe(self.single.seat).drawn
        if drawn is not None and mask[action_to_index(Action(Act.DISCARD, drawn))]:
            return action_to_index(Action(Act.DISCARD, drawn))
        return int(np.flatnonzero(mask)[0])


_PASS_INDEX: Final = action_to_index(Action(Act.PASS))
