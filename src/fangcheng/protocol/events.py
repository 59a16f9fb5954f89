"""What happens in a hand, one event per step: the record's ``events``, the terminal's
log and the table server's messages are these same values.

Events are a tagged union of frozen msgspec Structs (``"type"`` names the variant), so a
stream read from JSON is validated as it is decoded, and a bad event is reported with
its path (``$[5].seat``). The engine's stream is *omniscient* (it is the record);
`for_seat` maps it to what one seat, or a spectator, may know. Redaction happens on
read, not when emitting: the engine appends one shared value per draw and discard, and
only a reader pays for a view.

What a seat may not know until the hand ends, and how its stream shows it:

- another seat's drawn or replacement tile: ``tile`` is null;
- the deal: only its own hand (the others null);
- the face of another seat's 暗杠, in its ``kong`` event and in the ``payment`` for it
  (sichuan's 下雨 is paid at once): ``tile`` is null;
- another seat's 花猪 for passing a win in the last four tiles (it would tell that the
  seat was ready on that tile): withheld until the hand's end, just before ``reveal``.

The ``reveal`` event lays every hand and 暗杠 face open at the hand's end, before the
end-of-hand payments (which name the faces); from it on, nothing is hidden. 定缺 and
漂 are evented once all four have chosen, so they need no redaction; the wall is never
evented.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from typing import Annotated, Final, Literal

import msgspec
from msgspec.structs import replace

__all__ = [
    "Add",
    "Call",
    "Deal",
    "Discard",
    "Draw",
    "End",
    "Escape",
    "Event",
    "Exhausted",
    "Fenzhang",
    "FlowerPig",
    "Kong",
    "Payment",
    "Piao",
    "Que",
    "Replacement",
    "Reveal",
    "Robbed",
    "Treasure",
    "Win",
    "decode",
    "encode",
    "for_seat",
    "from_builtins",
    "schema",
    "schema_text",
]

SeatNo = Annotated[int, msgspec.Meta(ge=0, le=3)]
#: One tile in notation (``5m``, ``E``, ``C``).
Tile = Annotated[str, msgspec.Meta(pattern=r"^([1-9][mps]|[ESWNCFP])$")]
#: Tiles in notation (``345m``, ``CFP``), or empty.
Tiles = Annotated[str, msgspec.Meta(pattern=r"^([1-9]+[mps]|[ESWNCFP])*$")]


class _Event(
    msgspec.Struct,
    frozen=True,
    kw_only=True,
    omit_defaults=True,
    tag_field="type",
    gc=False,
):
    """The fields every variant shares: none; the tag is the ``type`` field."""


class Deal(_Event, frozen=True, tag="deal"):
    dealer: SeatNo
    dice: tuple[tuple[int, ...], ...]  # each throw, as the break was found
    stacks: tuple[int, ...]  # each seat's wall side, in stacks
    wall_break: tuple[SeatNo, int]  # whose side the wall opens on, stacks in
    hands: tuple[Tiles | None, ...]  # each seat's starting tiles, sorted; null: hidden


class Treasure(_Event, frozen=True, tag="treasure"):
    """A treasure indicator is flipped (baicheng); null: none is left."""

    tile: Tile | None


class Piao(_Event, frozen=True, tag="piao"):
    bets: tuple[int, ...]  # each seat's 漂, once all four have bet


class Que(_Event, frozen=True, tag="que"):
    suits: tuple[Literal["m", "p", "s"], ...]  # each seat's 定缺, once all four have chosen


class Draw(_Event, frozen=True, tag="draw"):
    seat: SeatNo
    tile: Tile | None  # null: another seat's draw
    fenzhang: bool = False  # one of baicheng's last tiles, one per seat


class Replacement(_Event, frozen=True, tag="replacement"):
    """A kong's replacement tile from the wall's end."""

    seat: SeatNo
    tile: Tile | None  # null: another seat's


class Discard(_Event, frozen=True, tag="discard"):
    seat: SeatNo
    tile: Tile
    ready: bool = False  # with it, the seat declares 报听


class Call(_Event, frozen=True, tag="call"):
    seat: SeatNo
    kind: Literal["chi", "peng", "ming_gang"]
    tiles: Tiles
    source: SeatNo


class Kong(_Event, frozen=True, tag="kong"):
    """A kong laid: an 暗杠 (``tile``), a 补杠 or dragon addition that was not robbed
    (``tile``), or the 旋风杠 中发白 (``tiles``)."""

    seat: SeatNo
    kind: Literal["an_gang", "bugang", "add", "xuanfeng"]
    tile: Tile | None = None  # an 暗杠's face is null for the other seats until the end
    tiles: Tiles | None = None


class Add(_Event, frozen=True, tag="add"):
    """A 补杠 or a dragon addition is announced: the others may rob it."""

    seat: SeatNo
    kind: Literal["bugang", "add"]
    tile: Tile


class Robbed(_Event, frozen=True, tag="robbed"):
    seat: SeatNo
    tile: Tile


class Win(_Event, frozen=True, tag="win", kw_only=True):
    seat: SeatNo
    tile: Tile
    by: Literal["discard", "self_draw", "robbed_kong", "treasure", "fenzhang"]
    source: SeatNo | None = None  # the discarder, or the robbed konger
    fans: tuple[str, ...]
    deltas: tuple[int, ...]


class Payment(_Event, frozen=True, tag="payment"):
    """Coins moved for a reason other than a win's score. A kong paid during play
    (sichuan's 刮风下雨) names its ``seat`` and ``tile`` apart from the ``reason``, so an
    暗杠's face can be hidden; `text` is the reason as written (``暗杠 7p``)."""

    reason: str
    deltas: tuple[int, ...]
    seat: SeatNo | None = None
    tile: Tile | None = None

    @property
    def text(self) -> str:
        """The reason with its tile, as the settlement writes it."""
        return self.reason if self.tile is None else f"{self.reason} {self.tile}"


class Escape(_Event, frozen=True, tag="escape"):
    seat: SeatNo


class Exhausted(_Event, frozen=True, tag="exhausted"):
    """The wall is exhausted (流局)."""


class Fenzhang(_Event, frozen=True, tag="fenzhang"):
    order: tuple[SeatNo, ...]  # the seats that take the last tiles, in turn


class FlowerPig(_Event, frozen=True, tag="flower_pig"):
    """Sichuan: the seat passed a win in the last four tiles (D56)."""

    seat: SeatNo


class Reveal(_Event, frozen=True, tag="reveal"):
    """The hand is over: every seat's concealed tiles and 暗杠 faces, laid open."""

    hands: tuple[Tiles, ...]
    an_gang: tuple[Tiles, ...]  # each seat's 暗杠 faces


class End(_Event, frozen=True, tag="end"):
    how: Literal["win", "draw", "escape", "abandoned"]
    total: tuple[int, ...]  # each seat's coins for the hand, after fees


Event = (
    Deal
    | Treasure
    | Piao
    | Que
    | Draw
    | Replacement
    | Discard
    | Call
    | Kong
    | Add
    | Robbed
    | Win
    | Payment
    | Escape
    | Exhausted
    | Fenzhang
    | FlowerPig
    | Reveal
    | End
)

_EVENTS: Final = list[Event]
_DECODER: Final = msgspec.json.Decoder(_EVENTS)
_ENCODER: Final = msgspec.json.Encoder()


def encode(events: Iterable[Event]) -> bytes:
    """A stream as a JSON array."""
    return _ENCODER.encode(list(events))


def decode(data: bytes | str) -> list[Event]:
    """A stream from a JSON array; `msgspec.ValidationError` names the bad field's path."""
    return _DECODER.decode(data)


def from_builtins(data: object) -> list[Event]:
    """A stream from parsed JSON (lists and dicts), validated as `decode` does."""
    return msgspec.convert(data, _EVENTS)


def schema() -> dict[str, object]:
    """The JSON Schema of a stream (published as docs/schemas/events.schema.json)."""
    return msgspec.json.schema(_EVENTS)


def schema_text() -> str:
    """`schema` as the published file's text: sorted keys, two-space indents."""
    return json.dumps(schema(), indent=2, sort_keys=True, ensure_ascii=False) + "\n"


# --- redaction -------------------------------------------------------------------------


def for_seat(events: Iterable[Event], seat: int | None) -> Iterator[Event]:
    """What ``seat`` may know of an omniscient stream, in order (``None``: a spectator,
    who sees only what is public). A prefix of the stream maps to a prefix of the
    view, so a reader may map a growing stream again and skip what it has shown."""
    hidden_kongs: set[tuple[int, str | None]] = set()  # (seat, face) of others' 暗杠
    pigs: list[FlowerPig] = []  # other seats' 花猪, withheld until the end
    events = iter(events)
    for event in events:
        if isinstance(event, Draw | Replacement):
            yield event if event.seat == seat else replace(event, tile=None)
        elif isinstance(event, Deal):
            yield replace(
                event, hands=tuple(h if s == seat else None for s, h in enumerate(event.hands))
            )
        elif isinstance(event, Kong) and event.kind == "an_gang" and event.seat != seat:
            hidden_kongs.add((event.seat, event.tile))
            yield replace(event, tile=None)
        elif isinstance(event, Payment) and (event.seat, event.tile) in hidden_kongs:
            yield replace(event, tile=None)
        elif isinstance(event, FlowerPig) and event.seat != seat:
            pigs.append(event)
        elif isinstance(event, Reveal):
            yield from pigs
            yield event
            yield from events  # the hand is open: the rest as it is
        else:
            yield event
