"""Game records: reading the JSON form of one hand back, and replaying it (ARCHITECTURE.md
contract). The engine writes a record (`record_of`, kept beside `Round`, which it reads).

A record holds the rules, options, seed, dealer, base, the whole wall in draw order and
every decision; with those the engine re-creates the hand, and `replay` checks that the
events and the settlement come out identical. The events are the engine's omniscient
stream (`fangcheng.protocol.events`), written as their JSON and validated when read
back; a record written before the ``reveal`` event and the split kong payment reason
still replays.

A record is bound to its seed: a wall written as notation is the one the seed shuffles
(with the dice, which the seed throws first), and `replay` refuses a record whose wall
does not follow from its seed. A wall that was not shuffled from the seed (a `Round`
given its wall) is written in parts, ``{"head": every tile}``. A record without
``events`` is a *scripted hand*: its wall may be given as ``{"head": ..., "tail": ...}``
(the tiles drawn first, and the tiles at the end of the wall read from the very last one:
replacements, then baicheng's treasure indicator), the middle filled from the seed.
Instead of a head, ``"hands"`` (each seat's starting tiles: 14 for the dealer, 13 for the
others) and ``"draws"`` (the tiles drawn after the deal, in order) may be given.

Reading is type-strict (a bool is no integer, nor is 1.0), the events and the settlement
included, and a key that no event has is refused: what is compared is what was recorded.

`RecordInput` is the record's shape as msgspec `Struct`s (its JSON Schema is published in
``docs/schemas/``); `replay` and `read_record` check it and report any problem as a
`RecordError` naming the field (``decisions[3].seat: 9 is out of range (0..3)``).
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from typing import Annotated, Any, Final, Literal

import msgspec

from fangcheng import contract
from fangcheng.engine.round import ABANDONED, FORMAT, VERSION, Round, record_of, refusal
from fangcheng.engine.wall import deal_order
from fangcheng.protocol import events as ev
from fangcheng.protocol.actions import Action, IllegalActionError
from fangcheng.rules.ruleset import OptionError, RuleSet, find_rules
from fangcheng.scoring.situation import MAX_BASE, RulesName, SeatIndex, TableOptions
from fangcheng.tiles.notation import InvalidNotationError, parse_tiles

__all__ = [
    "ESCAPE",
    "FORMAT",
    "VERSION",
    "Decision",
    "RecordError",
    "RecordInput",
    "Replay",
    "Settlement",
    "SettlementItem",
    "WallParts",
    "head_for",
    "read_record",
    "record_of",
    "record_schema",
    "refusal",
    "replay",
    "wall_of",
]

#: The escape decision's text (逃跑; not an `Action`: a seat may leave at any time).
ESCAPE: Final = "escape"


class RecordError(ValueError):
    """A record that cannot be read: names the field and the problem."""


# --- the record's shape --------------------------------------------------------------------

_Unset = msgspec.UnsetType


Notation = Annotated[
    str,
    msgspec.Meta(
        max_length=1000,
        description="Tile notation, in draw order where order matters.",
        extra={"expected": "tile notation (a string)"},
    ),
]


class WallParts(msgspec.Struct, kw_only=True, forbid_unknown_fields=True, frozen=True):
    """A scripted hand's wall: its head (or the starting hands and the draws after the
    deal) and its tail read from the last tile; the middle is shuffled from the seed."""

    head: Notation | _Unset = msgspec.UNSET
    hands: (
        Annotated[list[Notation], msgspec.Meta(min_length=4, max_length=4, extra={"noun": "hands"})]
        | _Unset
    ) = msgspec.UNSET
    draws: Notation = ""
    tail: Notation = ""


class Decision(msgspec.Struct, kw_only=True, forbid_unknown_fields=True, frozen=True):
    """One choice: the seat and the action's text form (``discard 5m``; see `Action`), or
    ``escape``."""

    seat: SeatIndex
    action: Annotated[str, msgspec.Meta(max_length=100)]


Deltas = Annotated[
    list[int],
    msgspec.Meta(min_length=4, max_length=4, description="Per seat.", extra={"noun": "amounts"}),
]


class SettlementItem(msgspec.Struct, kw_only=True, forbid_unknown_fields=True, frozen=True):
    """One movement of coins, with its reason."""

    reason: Annotated[str, msgspec.Meta(max_length=200)]
    deltas: Deltas


class Settlement(msgspec.Struct, kw_only=True, forbid_unknown_fields=True, frozen=True):
    """The end of a hand: how it ended, every movement, their sum, fees and the totals."""

    end: Literal["win", "draw", "escape", "abandoned"]
    items: Annotated[list[SettlementItem], msgspec.Meta(max_length=1000, extra={"noun": "items"})]
    deltas: Deltas
    fees: Deltas
    total: Deltas


class RecordInput(msgspec.Struct, kw_only=True, forbid_unknown_fields=True, frozen=True):
    """One hand (ARCHITECTURE.md "Game records"). Without ``events`` it is a scripted hand,
    whose wall may be given in parts."""

    format: Literal["fangcheng-record"]
    version: Literal[1]
    rules: RulesName
    options: TableOptions = msgspec.field(default_factory=TableOptions)
    seed: Annotated[
        int,
        msgspec.Meta(
            ge=-(2**63),
            le=2**63 - 1,
            description="Throws the dice, then shuffles the wall (a played hand's wall in"
            " notation is the seed's shuffle) or a scripted wall's middle.",
        ),
    ] = 0
    dealer: SeatIndex = 0
    base: Annotated[int, msgspec.Meta(ge=1, le=MAX_BASE, description="The table stake 底注.")] = 1
    ask_all: Annotated[
        bool,
        contract.about(
            "Every decision point asks every seat a rule could ask: a claim window every"
            " seat still playing, a 分张 draw its drawer."
        ),
    ] = False
    wall: Annotated[
        Notation | WallParts,
        contract.about(
            "All tiles in draw order, as the seed shuffles them; or parts of them (a wall"
            " of one's own: its head is every tile)."
        ),
    ]
    decisions: Annotated[list[Decision], contract.about("Every choice made, in order.")] = []
    # what the engine produced: compared as they are (the protocol types them)
    events: (
        Annotated[list[dict[str, Any]], contract.about("What the engine produced.")] | _Unset
    ) = msgspec.UNSET
    settlement: Annotated[Settlement | None, contract.about("The final transfers.")] | _Unset = (
        msgspec.UNSET
    )


class _Wall(msgspec.Struct, frozen=True):
    """A wall alone, as `wall_of` takes it from parsed JSON."""

    wall: Notation | WallParts


def record_schema() -> dict[str, Any]:
    """The JSON Schema of a record (published as docs/schemas/record.schema.json)."""
    return contract.json_schema(RecordInput)


def read_record(text: bytes | str) -> RecordInput:
    """A record's JSON text, checked against its shape (raises `RecordError`, also for
    text that is not UTF-8 or not JSON)."""
    return contract.decode(text, RecordInput, RecordError, "record")


# --- writing -------------------------------------------------------------------------------


# --- walls ---------------------------------------------------------------------------------


def head_for(hands: Sequence[str], dealer: int) -> list[int]:
    """The head of a wall that deals these starting hands (§1.5)."""
    tiles = [_tiles(h, f"wall.hands[{s}]") for s, h in enumerate(hands)]
    for seat, held in enumerate(tiles):
        want = 14 if seat == dealer else 13
        if len(held) != want:
            raise RecordError(f"wall.hands[{seat}]: {len(held)} tiles, the deal gives {want}")
    taken = [0, 0, 0, 0]
    head = []
    for seat in deal_order(dealer):
        head.append(tiles[seat][taken[seat]])
        taken[seat] += 1
    return head


def wall_of(
    spec: str | WallParts | Mapping[str, Any], rules: RuleSet | str, seed: int, dealer: int = 0
) -> list[int]:
    """The wall of a record: the full draw order, or a head and a tail around seeded tiles
    (``spec`` as in a record: notation, `WallParts` or its parsed JSON). A full draw order
    is as given: `Round` checks that it is the rule set's tile set."""
    if isinstance(spec, Mapping):
        spec = contract.convert({"wall": spec}, _Wall, RecordError, "record").wall
    if isinstance(spec, str):
        return _tiles(spec, "wall")
    ruleset = find_rules(rules) if isinstance(rules, str) else rules
    full = Counter(ruleset.tiles)
    if not isinstance(spec.hands, msgspec.UnsetType):
        if not isinstance(spec.head, msgspec.UnsetType):
            raise RecordError("wall: give either head or hands, not both")
        head = head_for(spec.hands, dealer) + _tiles(spec.draws, "wall.draws")
    else:
        head = _tiles(spec.head or "", "wall.head")
    tail = _tiles(spec.tail, "wall.tail")
    rest = full - Counter(head) - Counter(tail)
    if (Counter(head) + Counter(tail)) - full:
        raise RecordError("wall: head and tail hold more copies of a face than the set has")
    middle = sorted(rest.elements())
    random.Random(seed).shuffle(middle)
    return head + middle + tail[::-1]


def _tiles(text: str, field: str) -> list[int]:
    try:
        return parse_tiles(text)
    except InvalidNotationError as exc:
        raise RecordError(f"{field}: {exc}") from None


# --- replaying -----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Replay:
    """A replayed hand and the first place it differs from the record (None: identical)."""

    round: Round
    divergence: str | None
    scripted: bool


def replay(record: RecordInput | Mapping[str, Any], rules: RuleSet | None = None) -> Replay:
    """Re-run the engine from a record's wall and decisions; compare what it produces.
    A record that does not fit its shape, or a decision the engine refuses, is a
    `RecordError`.

    A record names its rule set; a preset is found by that name. A rule set of one's own
    (a house variant) is not in the record: pass it as ``rules``, under the recorded name.
    """
    if not isinstance(record, RecordInput):
        record = contract.convert(record, RecordInput, RecordError, "record")
    if rules is None:
        try:
            rules = find_rules(record.rules)
        except ValueError as exc:
            raise RecordError(f"rules: {exc}") from None
    elif rules.name != record.rules:
        raise RecordError(f"rules: the record is of {record.rules!r}, not {rules.name!r}")
    actions = [_action(d, i) for i, d in enumerate(record.decisions)]
    wall = wall_of(record.wall, rules, record.seed, record.dealer)
    # a played hand's wall in notation is its seed's shuffle: the round shuffles it anew
    seeded = isinstance(record.wall, str) and not isinstance(record.events, msgspec.UnsetType)
    try:
        round_ = Round(
            rules,
            seed=record.seed,
            dealer=record.dealer,
            base=record.base,
            options=record.options.given(),
            wall=None if seeded else wall,
            ask_all=record.ask_all,
        )
    except OptionError as exc:  # an option the rule set does not have, or a bad value
        raise RecordError(f"options: {exc}") from None
    except ValueError as exc:  # what the shape lets through and `Round` refuses: named
        raise RecordError(str(exc)) from None
    if seeded and list(round_.wall.tiles) != wall:  # this checks its tiles too
        shuffled = round_.wall.tiles
        pairs = enumerate(zip(wall, shuffled, strict=False))  # (a wall short of tiles too)
        at = next((i for i, (a, b) in pairs if a != b), min(len(wall), len(shuffled)))
        raise RecordError(
            f"wall: not what seed {record.seed} shuffles for {rules.name} (tile {at} differs);"
            ' a wall not shuffled from the seed is written {"head": ...}'
        )
    for i, (decision, action) in enumerate(zip(record.decisions, actions, strict=True)):
        try:
            if action is None:
                round_.escape(decision.seat)
            else:
                round_.act(decision.seat, action)
        except IllegalActionError as exc:
            raise RecordError(f"decisions[{i}]: {exc.reason}") from None
    settlement = None if isinstance(record.settlement, msgspec.UnsetType) else record.settlement
    if settlement is not None and settlement.end == ABANDONED and not round_.over:
        round_.abandon()  # an operator closed the table there (D92): no seat's decision
    if isinstance(record.events, msgspec.UnsetType):
        return Replay(round_, None, True)
    return Replay(round_, _first_divergence(record.events, settlement, round_), False)


class _Events(msgspec.Struct, frozen=True):
    """A record's events alone, as the protocol types them."""

    events: list[ev.Event]


def _action(decision: Decision, index: int) -> Action | None:
    """A decision's action (None for an escape)."""
    if decision.action == ESCAPE:
        return None
    try:
        return Action.parse(decision.action)
    except IllegalActionError as exc:
        raise RecordError(f"decisions[{index}].action: {exc}") from None


def _first_divergence(
    recorded: list[dict[str, Any]], settlement: Settlement | None, round_: Round
) -> str | None:
    expected = contract.convert({"events": recorded}, _Events, RecordError, "record").events
    for i, (raw, event) in enumerate(zip(recorded, expected, strict=True)):
        # the protocol's decoder passes over unknown keys (newer writers may add some);
        # a record is compared as it is, so a key no event has is a change
        known = _keys(type(event))
        extra = raw.keys() - known
        if extra:
            raise RecordError(
                f"events[{i}]: unknown key {contract.quote(min(extra))} in a {raw['type']} event;"
                f" valid: {', '.join(sorted(known))}"
            )
    produced = round_.events
    if not any(type(e) is ev.Reveal for e in expected):  # a record from before `reveal`
        produced = [e for e in produced if type(e) is not ev.Reveal]
    for i, (want, got) in enumerate(zip(expected, produced, strict=False)):
        if want != got and not _legacy_payment(want, got):
            return f"event {i}: recorded {_json(want)}, replay gives {_json(got)}"
    if len(expected) != len(produced):
        return f"the record has {len(expected)} events, the replay {len(produced)}"
    recorded_settlement = msgspec.to_builtins(settlement)  # typed: 1.0 and True were refused
    replayed = round_.settlement
    if recorded_settlement is None or replayed is None:
        if (recorded_settlement is None) != (replayed is None):
            return f"settlement: recorded {recorded_settlement}, replay gives {replayed}"
        return None
    for name, want in recorded_settlement.items():
        if want != replayed[name]:
            return f"settlement.{name}: recorded {want}, replay gives {replayed[name]}"
    return None


@cache
def _keys(event_type: type[ev.Event]) -> frozenset[str]:
    """The JSON keys of an event type, its tag included."""
    return frozenset(f.encode_name for f in msgspec.structs.fields(event_type)) | {"type"}


def _json(event: ev.Event) -> str:
    return msgspec.json.encode(event).decode()


def _legacy_payment(want: ev.Event, got: ev.Event) -> bool:
    """A payment recorded before a kong's payment named its seat and tile apart from
    the reason (``暗杠 7p`` whole), matching the one replayed."""
    return (
        type(want) is ev.Payment
        and type(got) is ev.Payment
        and want.seat is None
        and (want.text, want.deltas) == (got.text, got.deltas)
    )
