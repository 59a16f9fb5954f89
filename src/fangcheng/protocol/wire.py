"""The table protocol's frames (docs/protocol.md, version 1) and the observation's JSON.

Every websocket frame is a frozen msgspec `Struct` in a tagged union on ``"type"``, as
the events are, so a frame is validated as it is decoded: a bool is no integer, a seat
is 0..3, strings are bounded. `decode_client` reads what a client sends and refuses
anything else with a `WireError` whose ``code`` is the protocol's error code and whose
message names the field (``seq: expected an integer, got str '3'``), in the words of
`fangcheng.contract`. The server's frames are read back by `decode_server`, for
the reference bot client and tests.

`observation_data` writes an `Observation` with tiles in notation (a hand as ``123m45p``,
melds as ``{kind, tiles, from}``, legal actions as their texts); `observation_from_json`
rebuilds the engine's value exactly from it and the table's configured rule set, so an
outside bot can run the project's bots on what the server sends.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from typing import Annotated, Any, Final, Literal, get_args

import msgspec

from fangcheng import contract
from fangcheng.protocol.actions import Action, IllegalActionError
from fangcheng.protocol.events import Event
from fangcheng.protocol.observation import Observation, Phase, SeatView
from fangcheng.rules.ruleset import RuleSet
from fangcheng.tiles.melds import Meld, MeldKind
from fangcheng.tiles.notation import (
    SUITS,
    InvalidNotationError,
    format_counts,
    format_tiles,
    parse_counts,
    parse_tiles,
    tile_name,
)

__all__ = [
    "BOT_KINDS",
    "CLIENT_TYPES",
    "ERROR_CODES",
    "MAX_CLIENT_FRAME",
    "VERSION",
    "ActFrame",
    "AutoFrame",
    "ClientFrame",
    "ClosedFrame",
    "ErrorFrame",
    "EventsFrame",
    "HandEndFrame",
    "HelloFrame",
    "HintAnswerFrame",
    "HintFrame",
    "LeaveFrame",
    "MatchEndFrame",
    "MeldData",
    "NextFrame",
    "ObservationData",
    "PingFrame",
    "PongFrame",
    "PromptFrame",
    "SeatData",
    "SeatInfo",
    "ServerFrame",
    "Standing",
    "StartFrame",
    "TableFrame",
    "TableInfo",
    "TableSettings",
    "ViewFrame",
    "WelcomeFrame",
    "WireError",
    "decode_client",
    "decode_server",
    "encode",
    "observation_data",
    "observation_from_data",
    "observation_from_json",
    "observation_json",
    "table_settings",
]

VERSION: Final = 1
#: The most bytes a client's frame may hold (docs/protocol.md: 4 KiB).
MAX_CLIENT_FRAME: Final = 4096
#: The error codes of an `ErrorFrame`: docs/protocol.md's, and ``internal`` (the server
#: failed on the frame; nothing changed).
ErrorCode = Literal[
    "malformed",
    "version",
    "unauthorized",
    "stale",
    "not_your_turn",
    "illegal",
    "rate",
    "too_big",
    "forbidden",
    "not_found",
    "state",
    "internal",
    "confirm",  # a coin table: leaving mid-hand is 逃跑, leave again to confirm (D85)
    "unavailable",  # many processes: the table's lease (Redis) or the database is out of reach
]
ERROR_CODES: Final[tuple[str, ...]] = get_args(ErrorCode)
#: The project's bots a table can seat (`fangcheng.players.make_bot` names).
BotKind = Literal["random", "efficient", "strong", "expert"]
BOT_KINDS: Final[tuple[str, ...]] = get_args(BotKind)
RulesName = Literal["baicheng", "baishan", "baishan_platform", "sichuan"]


class WireError(ValueError):
    """A frame or an observation that cannot be read: ``code`` is the protocol's error
    code (``malformed``, ``version``, ``too_big``), the message names the field."""

    def __init__(self, message: str, code: ErrorCode = "malformed") -> None:
        # msgspec's words that `contract.explain` passes on as they are, said plainly
        regex = _REGEX.search(message)
        if regex is not None and regex["pattern"] in _PATTERN_WORDS:
            message = message[: regex.start()] + "not " + _PATTERN_WORDS[regex["pattern"]]
        length = _ARRAY.search(message)
        if length is not None:
            bound = "at least" if length["op"] == ">=" else "at most"
            message = f"{message[: length.start()]}expected a list of {bound} {length['n']} items"
        super().__init__(message)
        self.code: ErrorCode = code


# --- field types ---------------------------------------------------------------------

SeatNo = Annotated[int, msgspec.Meta(ge=0, le=3)]
Count = Annotated[int, msgspec.Meta(ge=0, le=2**31 - 1)]
#: Coins and points: any integer a hand or a match can reach, bounded.
Points = Annotated[int, msgspec.Meta(ge=-(2**53), le=2**53)]
Name = Annotated[str, msgspec.Meta(min_length=1, max_length=40)]
#: A table's code: six letters or digits.
_CODE: Final = r"^[0-9A-Za-z]{6}$"  # the server reads a code in either case
_TILE: Final = r"^([1-9][mps]|[ESWNCFP])$"
_TILES: Final = r"^([1-9]+[mps]|[ESWNCFP])*$"
#: What a pattern admits, in words (msgspec's message quotes the regular expression).
_PATTERN_WORDS: Final = {
    _CODE: "a table code (six letters or digits)",
    _TILE: "one tile in notation (5m, E, C)",
    _TILES: "tile notation (345m, CFP)",
}
_REGEX: Final = re.compile(r"expected `str` matching regex '(?P<pattern>.*)'$")
_ARRAY: Final = re.compile(r"expected `array` of length (?P<op>[<>]=) (?P<n>\d+)$")
Code = Annotated[str, msgspec.Meta(pattern=_CODE)]
Token = Annotated[str, msgspec.Meta(min_length=1, max_length=256)]
ActionText = Annotated[str, msgspec.Meta(min_length=1, max_length=40)]
Message = Annotated[str, msgspec.Meta(max_length=1000)]
Tile = Annotated[str, msgspec.Meta(pattern=_TILE, extra={"expected": "one tile (a string)"})]
Tiles = Annotated[
    str,
    msgspec.Meta(pattern=_TILES, max_length=300, extra={"expected": "tile notation (a string)"}),
]
Millis = Annotated[int, msgspec.Meta(ge=0, le=2**53)]
Suit = Literal["m", "p", "s"]
PhaseName = Literal["piao", "que", "turn", "claim", "rob", "fenzhang", "end"]
MeldKindName = Literal["chi", "peng", "ming_gang", "bu_gang", "an_gang", "xuanfeng"]
#: Each seat's points, in seat order.
Scores = Annotated[tuple[Points, ...], msgspec.Meta(min_length=4, max_length=4)]


class _Struct(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """Shapes a client sends: an unknown key is refused, naming the valid ones."""


class _Open(msgspec.Struct, frozen=True, kw_only=True):
    """Shapes the server sends: a client ignores keys a later server adds."""


# --- tables --------------------------------------------------------------------------


class TableSettings(_Struct, frozen=True):
    """What the owner of a private table chooses (``POST /api/tables``); omitted fields
    take these defaults. ``options`` go to `fangcheng.rules.configure`, which checks them."""

    rules: RulesName = "baishan"
    options: Annotated[
        dict[Annotated[str, msgspec.Meta(max_length=20)], Any], msgspec.Meta(max_length=8)
    ] = {}
    quan: Annotated[int, msgspec.Meta(ge=1, le=16)] = 1
    #: The claim window; null: the rule set's (D8, D84).
    claim_ms: Annotated[int, msgspec.Meta(ge=500, le=60_000)] | None = None
    turn_ms: Annotated[int, msgspec.Meta(ge=1_000, le=120_000)] = 10_000
    bank_ms: Annotated[int, msgspec.Meta(ge=0, le=600_000)] = 20_000
    bots: bool = True
    outside_bots: bool = False
    spectators: bool = True
    public: bool = True
    #: How long the table's bots wait before they act, at a table with people.
    bot_ms: Annotated[int, msgspec.Meta(ge=0, le=600_000)] = 500
    #: The pause after a hand (or until every person has sent `NextFrame`).
    between_ms: Annotated[int, msgspec.Meta(ge=0, le=600_000)] = 10_000
    #: Whether a seated person may ask for a hint (`HintFrame`); never at coin tables.
    hints: bool = True


class SeatInfo(_Open, frozen=True):
    """Who sits in one seat; an empty seat has neither name nor kind."""

    name: Name | None = None
    kind: Literal["person", "bot", "outside"] | None = None
    connected: bool = False
    auto: bool = False  # in 托管
    ready: bool = False  # between hands: ready for the next (the `next` frame)


class TableInfo(_Open, frozen=True):
    """A table as the lobby and its players see it."""

    code: Code
    rules: RulesName
    status: Literal["waiting", "playing", "between", "finished"]
    seats: Annotated[tuple[SeatInfo, ...], msgspec.Meta(min_length=4, max_length=4)]
    owner: Name | None = None  # the owner's name, while the owner sits at the table
    settings: TableSettings = msgspec.field(default_factory=TableSettings)
    practice: bool = False  # one person and three bots, started at once
    hand: Annotated[int, msgspec.Meta(ge=-1)] = -1  # the current (or last) hand, from 0
    quan: Count = 0  # the 圈 being played, from 1 (0: no match yet)
    scores: Scores = (0, 0, 0, 0)  # the match's points so far


class Standing(_Open, frozen=True):
    """One seat's place in a match."""

    seat: SeatNo
    name: Name | None
    score: Points
    rank: Annotated[int, msgspec.Meta(ge=1, le=4)]


#: The seats by score, highest first.
Standings = Annotated[tuple[Standing, ...], msgspec.Meta(min_length=4, max_length=4)]


def table_settings(data: object) -> TableSettings:
    """The body of ``POST /api/tables`` (parsed JSON) as `TableSettings`, strictly."""
    return contract.convert(data, TableSettings, WireError, "settings")


# --- the observation -----------------------------------------------------------------


class MeldData(_Struct, frozen=True):
    kind: MeldKindName
    tiles: Tiles  # in the meld's order (a 旋风杠 as laid, extra dragons after)
    source: Annotated[SeatNo | None, msgspec.Meta(description="whose discard")] = msgspec.field(
        default=None, name="from"
    )
    treasure: bool = False  # a 碰 of the treasure face (叉宝, baicheng)


class SeatData(_Struct, frozen=True):
    melds: tuple[MeldData, ...]
    hidden_kongs: Annotated[int, msgspec.Meta(ge=0, le=4)]
    river: Tiles  # in order
    concealed: Annotated[int, msgspec.Meta(ge=0, le=14)]
    ready: bool
    que: Suit | None
    won: bool
    piao: Count
    revealed: Tiles | None = None


class ObservationData(_Struct, frozen=True):
    """`Observation` in JSON: tiles in notation, actions as their texts. A spectator's
    view has no ``seat`` (null), an empty ``hand`` and no legal actions."""

    seat: SeatNo | None
    rules: Annotated[str, msgspec.Meta(max_length=40)]
    phase: PhaseName
    dealer: SeatNo
    turn: SeatNo
    base: Count
    wall: Annotated[int, msgspec.Meta(ge=0, le=144)]
    treasure: Tile | None
    retired: Tiles
    hand: Tiles
    drawn: Tile | None
    seats: Annotated[tuple[SeatData, ...], msgspec.Meta(min_length=4, max_length=4)]
    scores: Scores
    last_discard: tuple[SeatNo, Tile] | None
    legal: Annotated[tuple[ActionText, ...], msgspec.Meta(max_length=200)]
    must_win: bool = False


def _meld_data(meld: Meld) -> MeldData:
    return MeldData(
        kind=meld.kind.value,
        tiles=format_tiles(meld.tiles, sort=False),
        source=meld.source,
        treasure=meld.treasure,
    )


@functools.lru_cache(maxsize=4096)
def _seat_data(view: SeatView) -> SeatData:
    """One seat's public part in notation. Cached by value: a server writes the same
    seat's river and melds into every other seat's view after each move, and the views
    of a table's four seats (and its next views) share most of them."""
    return SeatData(
        melds=tuple(map(_meld_data, view.melds)),
        hidden_kongs=view.hidden_kongs,
        river=format_tiles(view.river, sort=False),
        concealed=view.concealed,
        ready=view.ready,
        que=None if view.que is None else SUITS[view.que],  # type: ignore[arg-type]
        won=view.won,
        piao=view.piao,
        revealed=None if view.revealed is None else format_counts(view.revealed),
    )


def observation_data(obs: Observation) -> ObservationData:
    """An observation with its tiles in notation (what a prompt or a view carries)."""
    seats = tuple(map(_seat_data, obs.seats))
    last = obs.last_discard
    return ObservationData(
        seat=obs.seat,
        rules=obs.rules.name,
        phase=obs.phase.value,
        dealer=obs.dealer,
        turn=obs.turn,
        base=obs.base,
        wall=obs.wall,
        treasure=None if obs.treasure is None else tile_name(obs.treasure),
        retired=format_tiles(obs.retired, sort=False) if obs.retired else "",  # most rules: none
        hand=format_counts(obs.hand),
        drawn=None if obs.drawn is None else tile_name(obs.drawn),
        seats=seats,
        scores=obs.scores,
        last_discard=None if last is None else (last[0], tile_name(last[1])),
        legal=tuple(map(str, obs.legal)),
        must_win=obs.must_win,
    )


def observation_json(obs: Observation) -> dict[str, Any]:
    """`observation_data` as plain JSON values (dicts, lists, strings, numbers)."""
    result: dict[str, Any] = msgspec.json.decode(_ENCODER.encode(observation_data(obs)))
    return result


def observation_from_json(data: Mapping[str, Any], rules: RuleSet) -> Observation:
    """The engine's `Observation` from its JSON (parsed) and the table's configured rule
    set; a bad field is a `WireError` naming it (``seats[2].river: …``)."""
    return observation_from_data(
        contract.convert(data, ObservationData, WireError, "observation"), rules
    )


def observation_from_data(data: ObservationData, rules: RuleSet) -> Observation:
    """The engine's `Observation` from `ObservationData` (a decoded prompt's)."""
    if data.rules != rules.name:
        raise WireError(f"rules: {contract.quote(data.rules)} is not this table's ({rules.name})")
    if data.seat is None:
        raise WireError("seat: null (a spectator's view) is no seat's observation")
    seats = tuple(
        SeatView(
            melds=tuple(
                Meld(
                    MeldKind(m.kind),
                    _tiles(m.tiles, f"seats[{s}].melds[{k}].tiles"),
                    m.source,
                    m.treasure,
                )
                for k, m in enumerate(seat.melds)
            ),
            hidden_kongs=seat.hidden_kongs,
            river=_tiles(seat.river, f"seats[{s}].river"),
            concealed=seat.concealed,
            ready=seat.ready,
            que=None if seat.que is None else SUITS.index(seat.que),
            won=seat.won,
            piao=seat.piao,
            revealed=None
            if seat.revealed is None
            else _counts(seat.revealed, f"seats[{s}].revealed"),
        )
        for s, seat in enumerate(data.seats)
    )
    legal = []
    for k, text in enumerate(data.legal):
        try:
            legal.append(Action.parse(text))
        except IllegalActionError as exc:
            raise WireError(f"legal[{k}]: {exc.reason}") from None
    last = data.last_discard
    return Observation(
        seat=data.seat,
        rules=rules,
        phase=Phase(data.phase),
        dealer=data.dealer,
        turn=data.turn,
        base=data.base,
        wall=data.wall,
        treasure=None if data.treasure is None else _tile(data.treasure),
        retired=_tiles(data.retired, "retired"),
        hand=_counts(data.hand, "hand"),
        drawn=None if data.drawn is None else _tile(data.drawn),
        seats=seats,
        scores=data.scores,
        last_discard=None if last is None else (last[0], _tile(last[1])),
        legal=tuple(legal),
        must_win=data.must_win,
    )


def _tile(text: str) -> int:
    return parse_tiles(text)[0]  # the pattern admits one tile only


def _tiles(text: str, path: str) -> tuple[int, ...]:
    try:
        return tuple(parse_tiles(text))
    except InvalidNotationError as exc:  # the pattern admits notation only; kept for safety
        raise WireError(f"{path}: {exc}") from None


def _counts(text: str, path: str) -> bytes:
    try:
        return bytes(parse_counts(text))
    except ValueError as exc:  # more than four of a tile
        raise WireError(f"{path}: {exc}") from None


# --- client → server -----------------------------------------------------------------


class _ClientFrame(_Struct, frozen=True, tag_field="type"):
    """A frame a client sends; the tag is the ``type`` field."""


class HelloFrame(_ClientFrame, frozen=True, tag="hello"):
    """The first frame: attach to one's seat, or as a spectator, at ``table``."""

    v: Count
    token: Token
    table: Code


class ActFrame(_ClientFrame, frozen=True, tag="act"):
    """The answer to the prompt numbered ``seq``: one action's text (`Action.parse`)."""

    seq: Count
    action: ActionText

    def parsed(self) -> Action:
        """The action (`decode_client` has checked that the text is one)."""
        return Action.parse(self.action)


class StartFrame(_ClientFrame, frozen=True, tag="start"):
    """The owner fills the empty seats with bots of this kind and starts the match."""

    fill: BotKind = "efficient"


class NextFrame(_ClientFrame, frozen=True, tag="next"):
    """Ready for the next hand (an extension of version 1): once every person at the
    table is, it is dealt without waiting out the pause. ``on`` false: not ready after
    all (a toggle between hands)."""

    on: bool = True


class LeaveFrame(_ClientFrame, frozen=True, tag="leave"):
    """Leave the table (between hands; during a hand the seat goes into 托管)."""


class AutoFrame(_ClientFrame, frozen=True, tag="auto"):
    """Ask for 托管 (``on``), or end it."""

    on: bool


class PingFrame(_ClientFrame, frozen=True, tag="ping"):
    pass


class HintFrame(_ClientFrame, frozen=True, tag="hint"):
    """Ask for the expert bot's suggestion for the open prompt ``seq`` (an extension of
    version 1): answered by a `HintAnswerFrame`, or an error."""

    seq: Count


ClientFrame = (
    HelloFrame | ActFrame | StartFrame | NextFrame | LeaveFrame | AutoFrame | PingFrame | HintFrame
)
_CLIENT: Final[dict[str, type[_ClientFrame]]] = {
    "hello": HelloFrame,
    "act": ActFrame,
    "start": StartFrame,
    "next": NextFrame,
    "leave": LeaveFrame,
    "auto": AutoFrame,
    "ping": PingFrame,
    "hint": HintFrame,
}
#: The ``type`` of each frame a client may send.
CLIENT_TYPES: Final = tuple(_CLIENT)


def decode_client(raw: bytes | str) -> ClientFrame:
    """A client's frame, validated; anything else is a `WireError`: ``too_big`` over
    `MAX_CLIENT_FRAME` bytes, ``version`` for a hello of another version, else
    ``malformed``, the message naming the field and the problem."""
    size = len(raw.encode("utf-8") if isinstance(raw, str) else raw)
    if size > MAX_CLIENT_FRAME:
        raise WireError(f"frame: {size} bytes; at most {MAX_CLIENT_FRAME}", "too_big")
    try:
        data = contract.decode(raw, Any, WireError, "frame")
    except WireError as exc:  # not UTF-8, not JSON, too deep
        raise WireError(f"frame: {exc}") from None
    if not isinstance(data, dict):
        raise WireError(f"frame: expected an object, got {_json_name(data)}")
    valid = ", ".join(sorted(_CLIENT))
    if "type" not in data:
        raise WireError(f"type: missing; valid: {valid}")
    kind = data["type"]
    if not isinstance(kind, str) or kind not in _CLIENT:
        raise WireError(f"type: {contract.quote(kind)} is not a frame type; valid: {valid}")
    frame: ClientFrame = contract.convert(data, _CLIENT[kind], WireError, "frame")  # type: ignore[assignment]
    if isinstance(frame, HelloFrame) and frame.v != VERSION:
        raise WireError(
            f"v: version {frame.v} is not spoken here; this server speaks {VERSION}", "version"
        )
    if isinstance(frame, ActFrame):
        try:
            Action.parse(frame.action)
        except IllegalActionError as exc:
            raise WireError(f"action: {exc.reason}") from None
    return frame


def _json_name(value: object) -> str:
    names = {list: "a list", str: "a string", bool: "true or false", type(None): "null"}
    return names.get(type(value), "a number")


# --- server → client -----------------------------------------------------------------


class _ServerFrame(_Open, frozen=True, tag_field="type"):
    """A frame the server sends; the tag is the ``type`` field."""


class WelcomeFrame(_ServerFrame, frozen=True, kw_only=True, tag="welcome"):
    """The hello was accepted (``seat`` null: a spectator); the full state follows."""

    v: Count = VERSION
    seat: SeatNo | None
    table: TableInfo


class TableFrame(_ServerFrame, frozen=True, tag="table"):
    """The table changed: someone sat, left, dropped, went into 托管."""

    table: TableInfo


class EventsFrame(_ServerFrame, frozen=True, tag="events"):
    """The next events of hand ``hand``, redacted for this seat, from index ``start``."""

    hand: Count
    start: Count
    events: tuple[Event, ...]


class PromptFrame(_ServerFrame, frozen=True, tag="prompt"):
    """A decision is awaited: answer with an `ActFrame` of this ``seq`` by ``deadline``
    (ms since the epoch)."""

    seq: Count
    deadline: Millis
    bank_ms: Millis
    observation: ObservationData
    legal: tuple[ActionText, ...]
    must_win: bool = False


class ViewFrame(_ServerFrame, frozen=True, tag="view"):
    """The seat's observation when no decision is its own."""

    observation: ObservationData


class HandEndFrame(_ServerFrame, frozen=True, tag="hand_end"):
    """A hand's settlement (the engine's), its stored record's id and the match so far
    (each seat's points)."""

    hand: Count
    settlement: dict[str, Any]
    record: Count | None
    standings: Standings
    #: Each win in turn as `fangcheng score` reports it (fans, each payer's N and amount,
    #: ``cap`` where 封顶 held a payment down): the engine's own scores, so a client shows
    #: them without working anything out.
    wins: list[dict[str, Any]] = []
    #: When the next hand is dealt (ms since the epoch; sooner if every person is
    #: ready), None after the match's last hand: a client counts down to it.
    next_deal: int | None = None


class MatchEndFrame(_ServerFrame, frozen=True, tag="match_end"):
    standings: Standings


class ErrorFrame(_ServerFrame, frozen=True, tag="error"):
    """A refused frame; nothing changed. ``seq``: the `ActFrame`'s it answers."""

    code: ErrorCode
    message: Message
    seq: Count | None = None


class PongFrame(_ServerFrame, frozen=True, tag="pong"):
    pass


class HintAnswerFrame(_ServerFrame, frozen=True, tag="hint"):
    """The suggestion for prompt ``seq``: one of its legal actions, and why in one line
    (the seat's own tiles and public ones only)."""

    seq: Count
    action: ActionText
    why: Message


class ClosedFrame(_ServerFrame, frozen=True, tag="closed"):
    """An operator acted (RULES §8.8), and the server closes this socket (1000) once
    it has sent what follows:
    ``what`` ``table``, the table was closed (D92: a hand being played was abandoned,
    its ``hand_end`` and ``match_end`` follow); ``account``, this person's account was
    frozen (D90: the seat plays on under 托管 until the hand's end, then is vacated).
    ``reason`` is the operator's, as they wrote it."""

    what: Literal["table", "account"]
    reason: Message


ServerFrame = (
    WelcomeFrame
    | TableFrame
    | EventsFrame
    | PromptFrame
    | ViewFrame
    | HandEndFrame
    | MatchEndFrame
    | ErrorFrame
    | PongFrame
    | HintAnswerFrame
    | ClosedFrame
)
_SERVER: Final[dict[str, type[_ServerFrame]]] = {
    "welcome": WelcomeFrame,
    "table": TableFrame,
    "events": EventsFrame,
    "prompt": PromptFrame,
    "view": ViewFrame,
    "hand_end": HandEndFrame,
    "match_end": MatchEndFrame,
    "error": ErrorFrame,
    "pong": PongFrame,
    "hint": HintAnswerFrame,
    "closed": ClosedFrame,
}
_ENCODER: Final = msgspec.json.Encoder()
_SERVER_DECODER: Final = msgspec.json.Decoder(ServerFrame)


def encode(frame: ClientFrame | ServerFrame) -> bytes:
    """A frame's JSON text."""
    return _ENCODER.encode(frame)


def decode_server(raw: bytes | str) -> ServerFrame:
    """A server's frame (for clients); a bad one is a `WireError` naming the field."""
    try:
        frame: ServerFrame = _SERVER_DECODER.decode(raw)
    except msgspec.ValidationError as exc:
        data = _plain(raw)
        kind = data.get("type") if isinstance(data, dict) else None
        shape = _SERVER.get(kind, ServerFrame) if isinstance(kind, str) else ServerFrame
        raise WireError(contract.explain(exc, data, shape, "frame")) from None  # type: ignore[arg-type]
    except msgspec.DecodeError as exc:
        raise WireError(f"frame: the text is not JSON: {exc}") from None
    return frame


def _plain(raw: bytes | str) -> object:
    try:
        return msgspec.json.decode(raw)
    except msgspec.DecodeError:
        return None
