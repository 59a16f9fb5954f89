"""Game records: the JSON form of one hand, and replaying it (ARCHITECTURE.md contract).

A record holds the rules, options, seed, dealer, base, the whole wall in draw order and
every decision; with those the engine re-creates the hand, and `replay` checks that the
events and the settlement come out identical. The events are the engine's omniscient
stream (`fangcheng.protocol.events`), written as their JSON and validated when read
back; a record written before the ``reveal`` event and the split kong payment reason
still replays. A record without ``events`` is a
*scripted hand*: its wall may be given as ``{"head": ..., "tail": ...}`` (the tiles drawn
first, and the tiles at the end of the wall read from the very last one: replacements,
then baicheng's treasure indicator), the middle filled from the seed. Instead of a head,
``"hands"`` (each seat's starting tiles: 14 for the dealer, 13 for the others) and
``"draws"`` (the tiles drawn after the deal, in order) may be given.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

import msgspec

from fangcheng.engine.round import Round
from fangcheng.engine.wall import deal_order
from fangcheng.protocol import events as ev
from fangcheng.protocol.actions import IllegalActionError
from fangcheng.rules.ruleset import find_rules
from fangcheng.tiles.notation import InvalidNotationError, format_tiles, parse_tiles, tile_set

__all__ = [
    "FORMAT",
    "VERSION",
    "RecordError",
    "Replay",
    "head_for",
    "record_of",
    "replay",
    "wall_of",
]

FORMAT: Final = "fangcheng-record"
VERSION: Final = 1


class RecordError(ValueError):
    """A record that cannot be read: names the field and the problem."""


def record_of(round_: Round) -> dict[str, Any]:
    """The record of a hand (finished or not)."""
    return {
        "format": FORMAT,
        "version": VERSION,
        "rules": round_.rules.name,
        "options": round_.option_input,
        "seed": round_.seed,
        "dealer": round_.dealer,
        "base": round_.base,
        **({"ask_all": True} if round_.ask_all else {}),
        "wall": format_tiles(round_.wall.tiles, sort=False),
        "decisions": list(round_.decisions),
        "events": msgspec.to_builtins(round_.events),
        "settlement": round_.settlement,
    }


def head_for(hands: object, dealer: int) -> list[int]:
    """The head of a wall that deals these starting hands (§1.5)."""
    if not isinstance(hands, list | tuple) or len(hands) != 4:
        raise RecordError("wall.hands: expected four hands in notation")
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


def wall_of(spec: object, rules: str, seed: int, dealer: int = 0) -> list[int]:
    """The wall of a record: the full draw order, or a head and a tail around seeded tiles."""
    full = Counter(tile_set(rules))
    if isinstance(spec, str):
        tiles = _tiles(spec, "wall")
        if Counter(tiles) != full:
            raise RecordError(f"wall: not the {rules} tile set ({len(tiles)} tiles given)")
        return tiles
    if not isinstance(spec, Mapping) or set(spec) - {"head", "tail", "hands", "draws"}:
        raise RecordError(
            'wall: expected tile notation, {"head": ..., "tail": ...} '
            'or {"hands": [...], "draws": ..., "tail": ...}'
        )
    if "hands" in spec:
        if "head" in spec:
            raise RecordError("wall: give either head or hands, not both")
        head = head_for(spec["hands"], dealer) + _tiles(spec.get("draws", ""), "wall.draws")
    else:
        head = _tiles(spec.get("head", ""), "wall.head")
    tail = _tiles(spec.get("tail", ""), "wall.tail")
    rest = full - Counter(head) - Counter(tail)
    if (Counter(head) + Counter(tail)) - full:
        raise RecordError("wall: head and tail hold more copies of a face than the set has")
    middle = sorted(rest.elements())
    random.Random(seed).shuffle(middle)
    return head + middle + tail[::-1]


def _tiles(value: object, field: str) -> list[int]:
    if not isinstance(value, str):
        raise RecordError(f"{field}: expected tile notation")
    try:
        return parse_tiles(value)
    except InvalidNotationError as exc:
        raise RecordError(f"{field}: {exc}") from None


@dataclass(frozen=True, slots=True)
class Replay:
    """A replayed hand and the first place it differs from the record (None: identical)."""

    round: Round
    divergence: str | None
    scripted: bool


def replay(record: Mapping[str, Any]) -> Replay:
    """Re-run the engine from a record's wall and decisions; compare what it produces."""
    if record.get("format") != FORMAT or record.get("version") != VERSION:
        raise RecordError(f"not a {FORMAT} version {VERSION} record")
    try:
        rules = find_rules(record["rules"]).name
        seed, dealer = int(record.get("seed", 0)), int(record.get("dealer", 0))
        round_ = Round(
            rules,
            seed=seed,
            dealer=dealer,
            base=int(record.get("base", 1)),
            options=record.get("options") or {},
            wall=wall_of(record["wall"], rules, seed, dealer),
            ask_all=bool(record.get("ask_all", False)),
        )
    except KeyError as exc:
        raise RecordError(f"missing field {exc.args[0]!r}") from None
    except ValueError as exc:
        raise RecordError(str(exc)) from None
    for i, decision in enumerate(record.get("decisions", [])):
        try:
            if decision["action"] == "escape":
                round_.escape(int(decision["seat"]))
            else:
                round_.act(int(decision["seat"]), decision["action"])
        except (IllegalActionError, KeyError, TypeError) as exc:
            raise RecordError(f"decisions[{i}] {decision!r}: {exc}") from None
    scripted = "events" not in record
    if scripted:
        return Replay(round_, None, True)
    return Replay(round_, _first_divergence(record, round_), False)


def _first_divergence(record: Mapping[str, Any], round_: Round) -> str | None:
    try:
        expected = ev.from_builtins(record.get("events") or [])
    except msgspec.ValidationError as exc:
        raise RecordError(str(exc).replace("`$", "`events")) from None
    produced = round_.events
    if not any(type(e) is ev.Reveal for e in expected):  # a record from before `reveal`
        produced = [e for e in produced if type(e) is not ev.Reveal]
    for i, (want, got) in enumerate(zip(expected, produced, strict=False)):
        if want != got and not _legacy_payment(want, got):
            return f"event {i}: recorded {_json(want)}, replay gives {_json(got)}"
    if len(expected) != len(produced):
        return f"the record has {len(expected)} events, the replay {len(produced)}"
    if record.get("settlement") != round_.settlement:
        return f"settlement: recorded {record.get('settlement')}, replay gives {round_.settlement}"
    return None


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
