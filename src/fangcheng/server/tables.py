"""Point tables (D81): four seats, a match played hand after hand, prompts numbered and
timed, 托管 (D84), disconnects (D85) and spectators (D87).

A `Table` is plain synchronous state. Every call that can move the game carries the time
(``now``, ms since the epoch), so the table never sleeps and never reads a clock: the
server runs one task per table that sleeps until `Table.next_wake` and calls `tick`;
tests pass a fake clock. The table hands its frames (dicts of JSON values and msgspec
Structs, docs/protocol.md) to its listeners' ``send`` and each finished hand to
``on_hand``. What a step needs of the database (a hand's booking and store, a coin
hand's stake) the server runs off its event loop (`Offload`): the table waits for it,
`busy`, and goes on with its answer; tests ticking by hand, and a rebuild, run it in
the table's call.

What a seat is sent is computed from the engine's redaction only: its events are
`for_seat(events, seat)` (what `Round.events_for` returns; a spectator's ``None``), read
as the hand grows; its observation `Round.observe(seat)` (a spectator's `public_view`,
made of the seats' public parts). Nothing else about the hand is ever put in a frame.
"""

from __future__ import annotations

import contextlib
import random
import secrets
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any, Final, Literal, Protocol, TypeVar

import msgspec

from fangcheng.engine import Match, Round, record_of
from fangcheng.players import Bot, EfficientBot, make_bot
from fangcheng.protocol import Action, Event, IllegalActionError, Observation, Phase, for_seat
from fangcheng.protocol.wire import TableSettings, observation_data, observation_json
from fangcheng.rules.ruleset import OptionError, configure, find_rules
from fangcheng.server.log import LogError, Replay, TableLog, Unwritable, crash_point
from fangcheng.server.metrics import UNCOUNTED, Metrics
from fangcheng.server.security import log_event

__all__ = [
    "STORE_RETRY_MS",
    "Aside",
    "Finished",
    "Listener",
    "Offload",
    "Prompt",
    "Table",
    "TableError",
    "Thinker",
    "check_settings",
    "claim_ms",
    "public_view",
]

#: Phases whose prompt is a claim window (``claim_ms``); the others are a turn.
_WINDOWS: Final = (Phase.CLAIM, Phase.ROB)
#: A hand the database failed to store is stored again this long after (ms), and on.
STORE_RETRY_MS: Final = 1000


class TableError(Exception):
    """A refused request: ``code`` is the protocol's error code."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code, self.message = code, message


def claim_ms(settings: TableSettings) -> int:
    """The claim window: the table's, else its rule set's (D8)."""
    if settings.claim_ms is not None:
        return settings.claim_ms
    rules, _ = configure(find_rules(settings.rules), settings.options)
    return round(rules.claim_window * 1000)


def check_settings(settings: TableSettings) -> None:
    """Refuse options the engine would refuse, before any table exists."""
    try:
        configure(find_rules(settings.rules), settings.options)
    except (ValueError, OptionError) as exc:
        raise TableError("malformed", f"options: {exc}") from None


class Listener(Protocol):
    """A connection at the table: a seat's (``seat``) or a spectator's (None)."""

    seat: int | None

    def send(self, frame: dict[str, Any]) -> None: ...


class Thinker(Protocol):
    """Where slow bots decide off the server's event loop (`fangcheng.server.thinking`):
    ``think`` starts a `slow` bot's answer to prompt ``seq`` and hands it to
    `Table.thought` later (True), or leaves the decision to the table, at once (False);
    ``read`` is a person's prompt, its seat's view of which its hints read."""

    def bot(self, kind: str, rng: random.Random) -> Bot: ...

    def slow(self, bot: Bot) -> bool: ...

    def think(self, table: Table, seat: int, seq: int, bot: Bot, obs: Observation) -> bool: ...

    def read(self, table: Table, seat: int, round_: Round) -> None: ...


_T = TypeVar("_T")


class Offload(Protocol):
    """Where the server runs a table's database work off its event loop
    (`fangcheng.server.hub.Hub.offload`): ``job`` in a worker thread once the table's log
    has committed what it wrote, then ``then(its result, now)`` on the loop. The table
    is `Table.busy` meanwhile."""

    def __call__(
        self, table: Table, job: Callable[[], _T], then: Callable[[_T, int], None]
    ) -> None: ...


class Aside(Protocol):
    """Where the server runs database work of a table's that the table does not wait
    for (a coin table's platform seats given up) off its event loop
    (`fangcheng.server.hub.Hub.aside`): ``job`` in a worker thread once the table's log
    has committed what it wrote so far, after the table's earlier such work; the table
    plays on meanwhile, so ``job`` writes nothing to the table's log (the hub's close of a
    table out of play, `fangcheng.server.hub.Hub.close`, alone commits and closes it)."""

    def __call__(self, table: Table, job: Callable[[], object]) -> None: ...


#: Which of the table's players made a decision: the seat's bot, or 托管's (the table's
#: efficient bot for a person whose time ran out, or who asked for it).
Player = Literal["bot", "auto"]


@dataclass
class Seat:
    kind: Literal["person", "bot", "outside"] | None = None
    person: int | None = None  # the session's id (people and outside bots)
    name: str = ""
    bot: Bot | None = None  # the seat's player, for a bot
    auto: bool = False  # 托管: the efficient bot plays for the person
    #: 托管 the person asked for, or a timeout set: only their `auto` off ends it (a
    #: return ends only the 托管 a dropped connection set, D85)
    kept: bool = False
    connected: int = 0  # open connections
    bank: int = 0  # ms left of the time bank in this hand
    wants_next: bool = False
    #: The person's account was frozen mid-hand (D90): 托管 plays to the hand's end,
    #: then the seat is vacated, never as 逃跑.
    frozen: bool = False

    def info(self) -> dict[str, Any]:
        return {
            "name": self.name or None,
            "kind": self.kind,
            "connected": self.connected > 0 or self.kind == "bot",
            "auto": self.auto,
            "ready": self.wants_next,
        }


@dataclass
class Prompt:
    seq: int
    issued: int  # ms
    deadline: int  # ms
    window: bool  # a claim window (no bank)


@dataclass
class _Sent:
    """What one listener has been sent of the current hand."""

    deal: int = -1  # the table's deal it was sent (`Table.deals`)
    events: int = 0
    prompt: int | None = None


@dataclass(frozen=True)
class Finished:
    """A finished hand, as it is stored: ``deal`` (`Table.deals` when it was dealt) and
    the table's uid name it; the session at each seat (None: a bot); ``views``, each
    seat's redacted events and the public ones, as they were shown."""

    deal: int
    match: int
    hand: int
    round: Round
    record: dict[str, Any]  # its `record_of`
    seats: list[int | None]
    views: list[list[dict[str, Any]]]
    names: list[str] = field(default_factory=list)  # each seat's, as the table showed it


@dataclass
class Table:
    """One table; ``on_hand(table, finished)`` stores a finished hand (with its ``stored``
    entry in the table's log, in one transaction) and returns its id (None if it could
    not be stored: it waits in ``unstored``, stored again later). ``uid`` names
    it beyond the server's life (codes are reused); ``log``: its action log
    (`fangcheng.server.log`), every change the engine or the ledger depends on written
    there as it is made, and committed before a client is shown, or the database told,
    what it led to."""

    code: str
    owner: int
    settings: TableSettings
    seed: int
    on_hand: Callable[[Table, Finished], int | None] = field(repr=False)
    practice: bool = False
    uid: str = field(default_factory=lambda: secrets.token_hex(6))
    log: TableLog | None = field(default=None, repr=False)
    #: Slow bots (the expert) decide there; None: every bot at once, in the table's call.
    thinker: Thinker | None = field(default=None, repr=False)
    #: Where its timeouts (and a coin table's bookings) are counted: the server's.
    metrics: Metrics = field(default=UNCOUNTED, repr=False)
    #: Where its database work runs off the event loop (`_with_database`); None: in the
    #: table's own call (tests ticking by hand, tools, an in-memory database).
    offload: Offload | None = field(default=None, repr=False)
    #: Where its database work that nothing waits for runs off the event loop; None: in
    #: the table's own call (as ``offload``).
    aside: Aside | None = field(default=None, repr=False)
    seats: list[Seat] = field(default_factory=lambda: [Seat() for _ in range(4)])
    status: Literal["waiting", "playing", "between", "finished"] = "waiting"
    match: Match | None = None
    round: Round | None = None
    hand: int = -1  # index of the current (or last) hand in the match
    deals: int = 0  # hands dealt at the table, over all its matches
    matches: int = 0
    seq: int = 0
    prompts: dict[int, Prompt] = field(default_factory=dict)
    next_deal: int | None = None  # ms: when the next hand is dealt
    last_hand_id: int | None = None
    #: Finished hands the database failed to store, by deal: stored again on the table's
    #: timer from ``store_retry`` (ms) on, and at a rebuild (`retry_stores`).
    unstored: dict[int, Finished] = field(default_factory=dict)
    store_retry: int | None = None
    #: Why an operator closed the table (D92); None while it is open.
    closed: str | None = None
    #: People the table took off by itself (a frozen account's seat at the hand's end,
    #: D90; a person still away at a coin match's end, D85), for the hub to forget where
    #: they sat and to close a table left with nobody (`Hub._vacated`); it empties the list.
    vacated: list[int] = field(default_factory=list)
    #: Its database work is on its way (`_with_database`): the table changes nothing
    #: meanwhile (a change is refused as when its log cannot be written, `Unwritable`),
    #: and its clock waits for the work's answer.
    busy: bool = False
    _last_end: list[dict[str, Any]] = field(default_factory=list)  # sent again on return
    _at_events: int = -1  # events of the round when the prompts were opened
    _listeners: dict[Listener, _Sent] = field(default_factory=dict)
    _autos: list[Bot] = field(default_factory=list)
    #: A claim window's answers given before its floor (the bots' pace), applied at the
    #: floor: a quick "pass" then reads as a bot's, so how soon a window closes does not
    #: tell that nobody had anything to claim.
    _held: dict[int, Action] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self._claim_ms = claim_ms(self.settings)
        self._streams: dict[int | None, _SeatStream] = {}  # of the current hand
        self._streams_deal = -1
        self._written: dict[Event, dict[str, Any]] = {}  # the streams' events as JSON values
        #: Rebuilding from the log (`fangcheng.server.recovery`): each change takes its
        #: entry instead of writing one, and the table acts for no seat by itself.
        self._replay: Replay | None = None
        #: The seats whose bot is deciding off the loop, and the answers it has given (a
        #: None: it failed, 托管's bot answers), of the open prompts.
        self._thinking: set[int] = set()
        self._thoughts: dict[int, Action | None] = {}
        #: The table's players' answers to the open prompts, made and not yet logged: a
        #: log write that failed leaves its answer to be applied again, the player not
        #: asked again (it would draw and read twice where a rebuilt table's replays once,
        #: `replay_act`, and play on a draw behind).
        self._answers: dict[int, tuple[Player, Action]] = {}

    # --- the log -------------------------------------------------------------------

    def _replaying(self) -> bool:
        """Whether the table is replaying its log; at the log's end it goes on live (a
        hand that ended just before a crash is settled and stored now)."""
        if self._replay is not None and self._replay.peek() is None:
            self._replay = None
        return self._replay is not None

    def _record(self, kind: str, make: Callable[[], dict[str, Any]]) -> dict[str, Any]:
        """Write ``make()`` as the log's next entry, before acting on it; replaying, the
        logged entry instead. Refused (`Unwritable`) while the table is `busy`: its
        database work writes the log's next entries."""
        if self._replaying():
            assert self._replay is not None
            return self._replay.take(kind)
        if self.busy:
            raise Unwritable(f"table {self.code}: a hand's end is with the database")
        data = make()
        if self.log is not None:
            self.log.write(kind, data)
        return data

    def _with_database(
        self, job: Callable[[], _T], then: Callable[[_T, int], None], now: int
    ) -> None:
        """Run ``job``, the database's part of a step (a hand's booking and store, a
        coin hand's stake), and go on with ``then(its result, now)``: off the event loop
        where the server offers it (`offload`), the table `busy` until then; in this
        call when replaying (a rebuild is one synchronous pass) or without one."""
        if self.offload is None or self._replay is not None:
            then(job(), now)
            return
        self.busy = True
        self.offload(self, job, then)

    def _durable(self) -> None:
        """Commit the log's entries so far: the barrier before the database is told what
        they led to (a settlement, the platform's seat)."""
        if self.log is not None:
            self.log.commit()

    # --- seats and people ----------------------------------------------------------

    def seat_of(self, person: int) -> int | None:
        return next((i for i, s in enumerate(self.seats) if s.person == person), None)

    def people(self) -> list[int]:
        return [s.person for s in self.seats if s.person is not None]

    def info(self) -> dict[str, Any]:
        """`TableInfo` (docs/protocol.md)."""
        owner = self.seat_of(self.owner)
        return {
            "code": self.code,
            "rules": self.settings.rules,
            "status": self.status,
            "seats": [s.info() for s in self.seats],
            "owner": None if owner is None else self.seats[owner].name,
            "settings": msgspec.to_builtins(self.settings),
            "practice": self.practice,
            "hand": self.hand,
            "quan": self.match.current_quan if self.match else 0,
            "scores": self.match.scores if self.match else [0, 0, 0, 0],
        }

    def sit(self, person: int, name: str, kind: Literal["person", "outside"]) -> int:
        """Seat ``person`` (its seat if it has one); refused when the seats are taken."""
        seat = self.seat_of(person)
        if seat is not None:
            return seat
        if self.closed is not None:
            raise TableError("state", "an operator closed this table")
        if self.status not in ("waiting", "finished"):
            raise TableError("state", "the match has started: join as a spectator")
        free = next((i for i, s in enumerate(self.seats) if s.kind is None), None)
        if free is None:
            raise TableError("state", "the table is full")
        self._record("sit", lambda: {"person": person, "name": name, "kind": kind})
        self.seats[free] = Seat(kind=kind, person=person, name=name)
        self._broadcast_table()
        return free

    def leave(self, person: int, now: int, confirm: bool = False) -> None:
        """The person leaves, and `_vacate` says what becomes of the seat; ``confirm``:
        a leave that must be confirmed is (a coin table's 逃跑; a point table asks none)."""
        seat = self.seat_of(person)
        if seat is None:
            return
        self._leave_seat(seat, person)
        self._follow(now)

    def _leave_seat(self, seat: int, person: int) -> None:
        """The person is off ``seat`` (its ``leave`` entry), and its connections hear it,
        then no more of the seat."""
        self._record("leave", lambda: {"person": person})
        self._vacate(seat, person)
        heirs = [s.person for s in self.seats if s.kind == "person" and s.person is not None]
        if person == self.owner and heirs:  # the table passes to the next person
            self.owner = heirs[0]
        self._broadcast_table()
        for listener in [x for x in self._listeners if x.seat == seat]:
            self._last_events(listener, self._listeners.pop(listener))

    def freeze(self, person: int, now: int) -> None:
        """An operator froze the person's account (D90). During a hand its seat plays on
        under 托管 (a ``frozen`` entry) and is vacated when the hand is over
        (`_hand_over`), never as 逃跑; otherwise it is vacated now."""
        seat = self.seat_of(person)
        if seat is None:
            return
        r = self.round
        if self.status != "playing" or r is None or r.over:
            self.leave(person, now)  # (refused while busy: then still seated, not vacated)
            self.vacated.append(person)
            return
        self._record("frozen", lambda: {"person": person})
        s = self.seats[seat]
        s.frozen = s.auto = s.kept = True
        self._broadcast_table()
        self._follow(now)

    def _last_events(self, listener: Listener, sent: _Sent) -> None:
        """A leaving connection's last events of the hand: a 逃跑 ends it, and they lay
        every hand open (its settlement shows them, as the others' do; issue 41)."""
        if self.round is None or sent.deal != self.deals:
            return
        events = self.events_for(listener.seat)
        if len(events) > sent.events:
            start = sent.events
            listener.send(
                {"type": "events", "hand": self.hand, "start": start, "events": events[start:]}
            )

    def _vacate(self, seat: int, person: int) -> None:
        """A person left the seat: between hands it empties (a bot takes it if a match is
        on); during a hand a bot takes it at once (a point table: no 逃跑, D85)."""
        s = self.seats[seat]
        if self.status in ("playing", "between"):
            self.seats[seat] = Seat(
                kind="bot", name="efficient bot", bot=self._new_bot("efficient", seat), bank=s.bank
            )
        else:
            self.seats[seat] = Seat()

    def has(self, listener: Listener) -> bool:
        return listener in self._listeners

    def listeners(self) -> list[Listener]:
        """The connections at the table (the server closes them when it gives it up)."""
        return list(self._listeners)

    def spectator_frames(self) -> list[dict[str, Any]]:
        """What a spectator attaching now is sent (`attach`, then `_flush`, for seat
        None), without attaching: the public view only (D87), an operator's live view of
        the table (never a concealed tile before the hand is over)."""
        frames: list[dict[str, Any]] = [
            {"type": "welcome", "v": 1, "seat": None, "table": self.info()}
        ]
        if self.round is not None:
            events = self.events_for(None)
            if events:
                frames.append({"type": "events", "hand": self.hand, "start": 0, "events": events})
                frames.append({"type": "view", "observation": public_view(self.round)})
        if self.status in ("between", "finished"):
            frames += self._last_end
        return frames

    def attach(self, listener: Listener, now: int) -> None:
        """A connection joins: the welcome, then everything its seat may see so far."""
        self._listeners[listener] = _Sent()
        seat = listener.seat
        if seat is not None:
            s = self.seats[seat]
            s.connected += 1
            s.auto = s.auto and s.kept  # back at the table (D85); 托管 asked for stays
        listener.send({"type": "welcome", "v": 1, "seat": seat, "table": self.info()})
        self._broadcast_table()
        self._follow(now)
        if self.status in ("between", "finished"):
            for frame in self._last_end:
                listener.send(frame)

    def detach(self, listener: Listener, now: int) -> None:
        """A connection drops: a seat with none left goes into 托管 (D85)."""
        if self._listeners.pop(listener, None) is None or listener.seat is None:
            return
        s = self.seats[listener.seat]
        s.connected -= 1
        if not s.connected and s.kind in ("person", "outside"):
            s.auto = True
        self._broadcast_table()
        self._follow(now)

    @property
    def live(self) -> bool:
        """Whether anyone is connected (a table nobody watches can be closed)."""
        return bool(self._listeners)

    # --- the match -----------------------------------------------------------------

    def start(self, person: int, fill: str, now: int) -> None:
        """The owner starts the match, empty seats taken by ``fill`` bots."""
        if person != self.owner:
            raise TableError("forbidden", "only the table's owner starts it")
        if self.closed is not None:
            raise TableError("state", "an operator closed this table")
        if self.status not in ("waiting", "finished"):
            raise TableError("state", f"the table is {self.status}")
        empty = [i for i, s in enumerate(self.seats) if s.kind is None]
        if empty and not self.settings.bots:
            raise TableError("state", "this table takes no bots: four must sit")
        self._record("start", lambda: {"person": person, "fill": fill})
        for i in empty:
            self.seats[i] = Seat(kind="bot", name=f"{fill} bot", bot=self._new_bot(fill, i))
        rng = random.Random(self.seed + self.matches)
        self.matches += 1
        self._autos = [EfficientBot(random.Random(rng.randrange(2**63))) for _ in range(4)]
        settings = self.settings
        self.match = Match(
            settings.rules,
            seed=rng.randrange(2**63),
            options=settings.options,
            quan=settings.quan,
            ask_all=True,
        )
        self.hand = -1
        self._deal(now)

    def _new_bot(self, kind: str, seat: int) -> Bot:
        """A bot for ``seat``, seeded from the table's seed (the thinker's budget)."""
        rng = random.Random(f"{self.seed}/{self.matches}/{seat}/{kind}")
        return make_bot(kind, rng) if self.thinker is None else self.thinker.bot(kind, rng)

    def _deal(self, now: int, data: dict[str, Any] | None = None) -> None:
        """Deal the next hand; ``data``: its ``deal`` entry's, made already (else made
        now, `_deal_data`)."""
        assert self.match is not None
        made = self._deal_data if data is None else lambda: data
        if not self._open_hand(self._record("deal", made)):
            return
        self.round = self.match.new_round()
        self.hand += 1
        self.deals += 1
        self.status, self.next_deal = "playing", None
        for s in self.seats:
            s.bank, s.wants_next = self.settings.bank_ms, False
        self.prompts, self._at_events, self._last_end = {}, -1, []
        self._broadcast_table()
        self._advance(now)

    def _deal_data(self) -> dict[str, Any]:
        """The ``deal`` entry: what a hand's deal depends on beyond the table's seed."""
        return {"hand": self.hand + 1}

    def _open_hand(self, data: dict[str, Any]) -> bool:
        """Make ready to deal the hand of the ``deal`` entry; False: no hand is dealt."""
        return True

    def ready(self, person: int, now: int, on: bool = True) -> None:
        """A person is ready for the next hand (or, ``on`` false, not after all); when
        all are, it is dealt at once. Everyone sees who is ready (`Seat.info`)."""
        seat = self.seat_of(person)
        if self.status != "between" or seat is None:
            raise TableError("state", "no hand to deal")
        self.seats[seat].wants_next = on
        if all(s.wants_next or s.kind != "person" or s.auto for s in self.seats):
            self.next_deal = now
        self._broadcast_table()
        self._follow(now)

    def set_auto(self, seat: int, on: bool, now: int) -> None:
        """The person asks for 托管 or takes the seat back: the only way it ends while
        they are at the table (D84; no answer to a prompt ends it, issue 41)."""
        s = self.seats[seat]
        s.auto = s.kept = on
        self._broadcast_table()
        self._follow(now)

    def close(self, reason: str, now: int) -> None:
        """An operator closes the table (D92): everyone at it is told why (a ``closed``
        frame), a hand being played is abandoned (`Round.abandon`: no win payments, the
        kongs made so far settled, no fee, no 逃跑) and booked and stored as any hand,
        then the match ends with every seat emptied. Its ``closed`` entry is written
        first: a rebuilt table closes again where this one did."""
        if self.closed is not None:
            return
        data = self._record("closed", lambda: {"reason": reason})
        self.closed = data["reason"]
        self._send_all({"type": "closed", "what": "table", "reason": self.closed})
        r = self.round
        if self.status == "playing" and r is not None and not r.over:
            self.prompts, self._held = {}, {}
            r.abandon()
        elif self.status == "waiting":
            self._end_match()
        elif self.status == "between":
            self.next_deal = now  # no more hands: the match ends now (`_deal_or_end`)
        self._follow(now)  # the hand's end, then the match's (`_deal_or_end`)

    # --- decisions -----------------------------------------------------------------

    def open_prompt(self, seat: int, seq: int) -> tuple[Prompt, Round]:
        """``seat``'s open prompt ``seq`` and the round awaiting it; a `TableError` if
        ``seq`` is not the seat's open prompt (the check of an answer and of a hint)."""
        prompt = self.prompts.get(seat)
        r = self.round
        if prompt is None or r is None or r.over:
            raise TableError("not_your_turn", "no decision of yours is awaited")
        if seq != prompt.seq:
            raise TableError("stale", f"seq {seq} is not the open prompt's ({prompt.seq})")
        return prompt, r

    def act(self, seat: int, seq: int, text: str, now: int) -> None:
        """A seat answers prompt ``seq``; refused (nothing changes) unless it is the
        seat's open prompt and the action is among its legal ones."""
        prompt, r = self.open_prompt(seat, seq)
        if seat in self._held:
            raise TableError("stale", f"prompt {seq} is answered already")
        if seat in self._answers:  # 托管's, waiting for the log: a rebuild replays it
            raise TableError("stale", f"prompt {seq} is answered already (by 托管)")
        try:
            action = Action.parse(text)
        except IllegalActionError as exc:
            raise TableError("illegal", exc.reason) from None
        legal = r.legal_actions(seat)
        chosen = next((a for a in legal if a == action), None)
        s = self.seats[seat]
        if chosen is None:
            if s.kind == "outside":  # an outside bot's illegal answer: the default, as 托管
                self._answer(seat, lambda: ("auto", self._autos[seat].act(r.observe(seat))), now)
                self._follow(now)
            raise TableError("illegal", f"{action} is not legal now; legal: {_texts(legal)}")
        if s.auto and s.kind == "outside" and chosen != Action.parse("pass"):
            s.auto = s.kept = False  # a program has no button: its own move is its return
            self._broadcast_table()
        if prompt.window and now < prompt.issued + self.settings.bot_ms:
            self._held[seat] = chosen  # applied at the window's floor (see `_due`)
        else:
            self._apply(seat, chosen, now)
        self._follow(now)

    def _apply(self, seat: int, action: Action | str, now: int, by: Player | None = None) -> None:
        """Apply a decision, written to the log first (with the seat's time bank after it,
        the prompts' count, and which of the table's players made it, ``by``, if one did:
        a rebuilt table goes on from there, its players too, `replay_act`)."""
        assert self.round is not None
        prompt = self.prompts.get(seat)
        s = self.seats[seat]
        bank = s.bank
        if prompt is not None and not prompt.window:
            bank = max(0, s.bank - max(0, now - prompt.issued - self.settings.turn_ms))

        def entry() -> dict[str, Any]:
            data = {"seat": seat, "action": str(action), "bank": bank, "seq": self.seq}
            return data if by is None else data | {"by": by}

        data = self._record("act", entry)
        self.prompts.pop(seat, None)
        s.bank, self.seq = data["bank"], max(self.seq, data["seq"])
        self.round.act(seat, action)

    def _due(self, seat: int, prompt: Prompt) -> int:
        """When the table acts for the seat: a bot or 托管 after the pace, else at the
        deadline."""
        s = self.seats[seat]
        if s.kind == "bot" or s.auto or seat in self._held or self._forced(seat):
            return prompt.issued + self.settings.bot_ms
        return prompt.deadline

    def _forced(self, seat: int) -> bool:
        """A 血战 winner's one move (its hand is laid down): made for it, as everyone
        knows it has no choice."""
        r = self.round
        assert r is not None
        return r.phase is Phase.TURN and seat in r.won and len(r.legal_actions(seat)) == 1

    def next_wake(self) -> int | None:
        """When `tick` has something to do (ms), or None (busy: when its database work
        comes back, `Offload`)."""
        if self.busy:
            return None
        due = [t for t in (self._next_move(), self.store_retry) if t is not None]
        return min(due, default=None)

    def _next_move(self) -> int | None:
        """When the game has something to do (ms), or None."""
        if self.status == "between":
            return self.next_deal
        if self.status != "playing":
            return None
        due = (self._due(s, p) for s, p in self.prompts.items() if s not in self._thinking)
        return min(due, default=None)

    def tick(self, now: int) -> None:
        """Apply what is due: bots' moves, timeouts (the seat goes into 托管), the next
        hand's deal, storing again the hands the database failed to store; nothing
        while the table is busy."""
        if self.busy:
            return
        if self.store_retry is not None and now >= self.store_retry:  # (with the database)
            self._with_database(
                lambda: self.retry_stores(now), lambda _, at: self._advance(at), now
            )
            return
        self._advance(now)

    def _follow(self, now: int) -> None:
        """`_advance` after a change already made (a seat taken or left, a connection,
        托管, readiness, an answer applied): where the log cannot be written now, what
        falls due waits for the table's timer, which tries again (`Hub._run`), and the
        change stands."""
        with contextlib.suppress(Unwritable):
            self._advance(now)

    def _advance(self, now: int) -> None:
        """Run the table up to ``now``, then send every listener what is new (what was
        done before a failure too). Replaying, only a hand's end follows by itself: the
        log says what came next."""
        if self._replay is not None:
            r = self.round
            if self.status == "playing" and r is not None and r.over:
                self._hand_over(now)
            return
        try:
            self._run_to(now)
        finally:
            self._flush()

    def _run_to(self, now: int) -> None:
        """Deal, end hands and act for the seats whose time has come, up to ``now`` (or
        until a step's database work takes the table off the loop, `busy`)."""
        while not self.busy:
            if self.status == "between" and self.next_deal is not None:
                if now < self.next_deal:
                    break
                self._deal_or_end(now)
                continue
            r = self.round
            if self.status != "playing" or r is None:
                break
            if r.over:
                self._hand_over(now)
                continue
            self._open_prompts(r, now)
            due = [(self._due(s, p), s) for s, p in self.prompts.items()]
            due = [(t, s) for t, s in due if t <= now and s not in self._thinking]
            if not due:
                break
            _, seat = min(due)
            self._act_for(seat, now)

    def _open_prompts(self, r: Round, now: int) -> None:
        """Number and time a prompt for every awaited seat, once per decision point (a
        claim window keeps its prompts until every seat has answered)."""
        if len(r.events) == self._at_events and self.prompts:
            return
        self._at_events = len(r.events)
        settings = self.settings
        self.prompts, self._held = {}, {}
        window = r.phase in _WINDOWS
        for seat in r.pending():
            self.seq += 1
            if window:
                deadline = now + self._claim_ms
            else:
                deadline = now + settings.turn_ms + self.seats[seat].bank
            self.prompts[seat] = Prompt(self.seq, now, deadline, window)
        self._think(r)

    def _think(self, r: Round) -> None:
        """Start the slow bots' answers to the new prompts, off the loop: each is made
        while the bots' pace runs, and applied in `_act_for` when due and done. A
        person's prompt is read for its hints (the thinker follows the table from it)."""
        self._thinking, self._thoughts, self._answers = set(), {}, {}
        if self.thinker is None:
            return
        for seat, prompt in self.prompts.items():
            bot = self.seats[seat].bot if self.seats[seat].kind == "bot" else None
            if bot is None:  # a person's: what a hint will read of the table
                self.thinker.read(self, seat, r)
                continue
            if not self.thinker.slow(bot):
                continue
            if self.thinker.think(self, seat, prompt.seq, bot, r.observe(seat)):
                self._thinking.add(seat)

    def thought(self, seat: int, seq: int, action: Action | None) -> None:
        """A slow bot's answer to prompt ``seq`` (None: it failed), made off the loop:
        applied when due (the next `tick`), dropped if the prompt is no longer open."""
        prompt = self.prompts.get(seat)
        if seat in self._thinking and prompt is not None and prompt.seq == seq:
            self._thinking.discard(seat)
            self._thoughts[seat] = action

    def _act_for(self, seat: int, now: int) -> None:
        """The table decides for ``seat``: its bot, or 托管 (a person whose time ran out
        goes into it until they take the seat back, D84)."""
        r = self.round
        assert r is not None
        held = self._held.get(seat)
        if held is not None:
            self._apply(seat, held, now)
            del self._held[seat]  # (kept while its log write fails)
            return
        s = self.seats[seat]
        prompt = self.prompts[seat]
        if s.kind != "bot" and not s.auto and not self._forced(seat) and now >= prompt.deadline:
            s.auto = s.kept = True  # the bank is spent as `_apply` books the time taken
            self.metrics.timed_out(prompt.window)
            self._broadcast_table()

        def ask() -> tuple[Player, Action]:
            by: Player = "bot" if s.kind == "bot" and s.bot is not None else "auto"
            thought = seat in self._thoughts  # a slow bot's answer, made off the loop
            action = (
                self._thoughts.pop(seat) if thought else self._player(seat, by).act(r.observe(seat))
            )
            if action is None:  # its bot failed there: 托管's bot answers
                return "auto", self._autos[seat].act(r.observe(seat))
            return by, action

        self._answer(seat, ask, now)

    def _answer(self, seat: int, ask: Callable[[], tuple[Player, Action]], now: int) -> None:
        """Apply the table's answer for ``seat``: ``ask``'s (which player made it, and
        what), asked once per prompt (`_answers`)."""
        made = self._answers.get(seat)
        if made is None:
            made = self._answers[seat] = ask()
        self._apply(seat, made[1], now, made[0])
        del self._answers[seat]

    def _player(self, seat: int, by: Player) -> Bot:
        """The table's player of ``seat`` that ``by`` names: its bot, or 托管's."""
        bot = self.seats[seat].bot
        return bot if by == "bot" and bot is not None else self._autos[seat]

    def replay_act(self, data: dict[str, Any], now: int) -> None:
        """Replay a logged decision (an ``act`` entry): the table's player that made it
        is asked again, so that it plays on from the state it was in (`Bot.replay`),
        and a person's prompt is read for the hints as it was; a choice other than the
        log's is logged (the player's state differs from the one that wrote it), by the
        decision's index, never its tiles, and the log's applied all the same."""
        assert self.round is not None
        seat, by = data["seat"], data.get("by")
        s = self.seats[seat]
        if self.thinker is not None and s.kind != "bot":
            self.thinker.read(self, seat, self.round)  # as at its prompt (`_think`)
        if by is not None:
            logged, obs = Action.parse(data["action"]), self.round.observe(seat)
            if by == "auto" and s.kind == "bot" and s.bot is not None:
                self._failed_again(seat, s.bot, obs, logged)
            choice = self._player(seat, by).replay(obs, logged)
            if choice is not None and choice != logged:  # named by place: no tile logged
                decision = len(self.round.decisions)
                log_event("replay_diverged", 30, table=self.code, seat=seat, by=by, at=decision)
        self._apply(seat, data["action"], now)

    def _failed_again(self, seat: int, bot: Bot, obs: Observation, logged: Action) -> None:
        """A bot seat's decision ``logged`` as 托管's at ``obs``: its bot was asked and
        failed there (`_act_for`), having read the table first, so it reads it again
        (`Bot.replay`), as the one that failed had; the same failure is logged again, not
        raised."""
        try:
            bot.replay(obs, logged)
        except Exception:
            log_event("bot_failed", 40, code=self.code, seat=seat, replaying=True, exc_info=True)

    def _hand_over(self, now: int) -> None:
        r, match = self.round, self.match
        assert r is not None and match is not None and r.settlement is not None
        self.prompts, self._held = {}, {}
        match.finish(r)
        self._flush()  # the hand's last events before its settlement
        crash_point("hand_over")
        record = record_of(r)  # booked and stored alike
        self._with_database(lambda: self._book_and_store(r, record, now), self._hand_end, now)

    def _book_and_store(
        self, round_: Round, record: dict[str, Any], now: int
    ) -> tuple[dict[str, Any], int | None]:
        """The database's part of a hand's end: what its booking adds to the
        ``hand_end`` frame (`_settle`), and the stored hand's id (`_store`)."""
        extra = self._settle(record)
        return extra, self._store(round_, record, now)

    def _hand_end(self, done: tuple[dict[str, Any], int | None], now: int) -> None:
        """The hand is booked and stored (``done``: `_book_and_store`'s): its
        ``hand_end`` frame, and the pause before the next deal from ``now``."""
        extra, self.last_hand_id = done
        r = self.round
        assert r is not None and r.settlement is not None
        pause = 0 if self.closed is not None else self.settings.between_ms
        self.status, self.next_deal = "between", now + pause
        self._last_end = [
            {
                "type": "hand_end",
                "hand": self.hand,
                "settlement": r.settlement,
                "record": self.last_hand_id,
                "standings": self.standings(),
                "wins": [score.to_json() for score in r.win_scores],
                "next_deal": self.next_deal if self._deals_again() else None,
                **extra,
            }
        ]
        self._send_all(self._last_end[0])
        self._broadcast_table()
        for seat, s in enumerate(self.seats):  # D90: a frozen account's seat, after the hand
            if s.frozen and s.person is not None:
                self.vacated.append(s.person)
                self._leave_seat(seat, s.person)

    def _settle(self, record: dict[str, Any]) -> dict[str, Any]:
        """What a finished hand adds to its ``hand_end`` frame (a coin table's coins)."""
        return {}

    def _deals_again(self) -> bool:
        """Whether a hand follows the one just over (its ``hand_end`` says when)."""
        assert self.match is not None
        return not self.match.over and self.closed is None

    def _store(self, round_: Round, record: dict[str, Any], now: int) -> int | None:
        """Store the finished hand (``on_hand`` writes its ``stored`` entry in the same
        transaction); one the database failed waits in ``unstored``. Replaying, the id
        the log says it was stored under; a hand its log does not say was stored here
        waits too (its entry may come later, `_stored_later`; else it is stored when
        the table goes live, `retry_stores`): its decisions are in the log, so the
        replay makes it again, and a booked hand always comes to have its record."""
        if self._replaying():
            assert self._replay is not None
            data = self._replay.take_if("stored", lambda d: d["deal"] == self.deals)
            if data is not None:
                return int(data["id"])
            self.unstored[self.deals] = self._finished(round_, record)
            return None
        finished = self._finished(round_, record)
        if self.retry_stores(now):  # in order: the older ones first
            hand_id = self.on_hand(self, finished)
            if hand_id is not None:
                return hand_id
        self.unstored[finished.deal] = finished
        self.store_retry = now + STORE_RETRY_MS
        return None

    def _finished(self, round_: Round, record: dict[str, Any]) -> Finished:
        """The hand just over, as it is stored."""
        return Finished(
            deal=self.deals,
            match=self.matches,
            hand=self.hand,
            round=round_,
            record=record,
            seats=[s.person if s.kind in ("person", "outside") else None for s in self.seats],
            views=[self.events_for(s) for s in (0, 1, 2, 3, None)],
            names=[s.name for s in self.seats],
        )

    def retry_stores(self, now: int) -> bool:
        """Store again the hands the database failed to store, oldest first (each once:
        its ``stored`` entry, at the log's next number, is written in the same
        transaction); whether none is left. Replaying, nothing: the log's entries say
        which were (`_stored_later`)."""
        if self._replaying():
            return not self.unstored
        for deal, finished in sorted(self.unstored.items()):
            hand_id = self.on_hand(self, finished)
            if hand_id is None:
                self.store_retry = now + STORE_RETRY_MS
                return False
            del self.unstored[deal]
            self._stored_as(deal, hand_id)
        self.store_retry = None
        return True

    def _stored_later(self) -> None:
        """Replaying: the ``stored`` entry of a hand stored after it was over."""
        assert self._replay is not None
        data = self._replay.take("stored")
        if self.unstored.pop(data["deal"], None) is None:
            raise LogError(f"deal {data['deal']} stored, but not awaiting it")
        self._stored_as(data["deal"], int(data["id"]))

    def _stored_as(self, deal: int, hand_id: int) -> None:
        """A hand stored late: if it is the last, its ``hand_end`` frame names it."""
        if deal == self.deals and self.round is not None and self.round.over:
            self.last_hand_id = hand_id
            if self._last_end:
                self._last_end[0]["record"] = hand_id

    def _deal_or_end(self, now: int) -> None:
        assert self.match is not None
        if not self.match.over and self.closed is None:
            self._deal(now)
            return
        self._end_match()

    def _end_match(self) -> None:
        """The match is over (or ended early): ``match_end``, and the seats of bots and
        of people still away are emptied (every seat, when an operator closed it)."""
        data = self._record(
            "end",
            lambda: {
                "empty": [  # D85: a person still away is taken off
                    i
                    for i, s in enumerate(self.seats)
                    if s.kind == "bot"
                    or (s.kind in ("person", "outside") and (not s.connected or self.closed))
                ]
            },
        )
        self.status, self.next_deal = "finished", None
        self._last_end.append({"type": "match_end", "standings": self.standings()})
        self._send_all(self._last_end[-1])
        for i in data["empty"]:
            self.seats[i] = Seat()
        self._broadcast_table()

    def standings(self) -> list[dict[str, Any]]:
        """The seats by points in the match so far, highest first."""
        scores = self.match.scores if self.match else [0, 0, 0, 0]
        order = sorted(range(4), key=lambda i: -scores[i])
        return [
            {"seat": i, "name": self.seats[i].name or None, "score": scores[i], "rank": k + 1}
            for k, i in enumerate(order)
        ]

    # --- frames ----------------------------------------------------------------------

    def _send_all(self, frame: dict[str, Any]) -> None:
        for listener in self._listeners:
            listener.send(frame)

    def _broadcast_table(self) -> None:
        self._send_all({"type": "table", "table": self.info()})

    def events_for(self, seat: int | None) -> list[dict[str, Any]]:
        """The current hand's events ``seat`` may know so far, as JSON values: what its
        connections are sent and what is stored of the hand, each event redacted once."""
        assert self.round is not None
        if self._streams_deal != self.deals:
            self._streams, self._streams_deal, self._written = {}, self.deals, {}
        stream = self._streams.get(seat)
        if stream is None:
            stream = self._streams[seat] = _SeatStream(self.round, seat, self._written)
        return stream.read()

    def _flush(self) -> None:
        """Send each listener its new events, then its prompt or its view."""
        r = self.round
        if r is None or not self._listeners:
            return
        views: dict[int | None, list[dict[str, Any]]] = {}
        for listener, sent in self._listeners.items():
            seat = listener.seat
            if seat not in views:
                views[seat] = self.events_for(seat)
            events = views[seat]
            if sent.deal != self.deals:
                sent.deal, sent.events, sent.prompt = self.deals, 0, None
            new = len(events) > sent.events
            if new:
                listener.send(
                    {
                        "type": "events",
                        "hand": self.hand,
                        "start": sent.events,
                        "events": events[sent.events :],
                    }
                )
                sent.events = len(events)
            prompt = self.prompts.get(seat) if seat is not None else None
            if prompt is not None and prompt.seq != sent.prompt:
                assert seat is not None
                data = observation_data(r.observe(seat))
                listener.send(
                    {
                        "type": "prompt",
                        "seq": prompt.seq,
                        "deadline": prompt.deadline,
                        "bank_ms": self.seats[seat].bank,
                        "observation": data,
                        "legal": data.legal,  # the observation's texts, written once
                        "must_win": data.must_win,
                    }
                )
                sent.prompt = prompt.seq
            elif new:
                view = public_view(r) if seat is None else observation_data(r.observe(seat))
                listener.send({"type": "view", "observation": view})


class _Caught:
    """What `_Tap` yields when it has caught up with the hand."""


_CAUGHT: Final = _Caught()


class _Tap:
    """An iterator over the hand's growing event list that yields `_CAUGHT` instead of
    ending, so that one `for_seat` generator follows the hand from its deal to its end
    and each event is redacted once (`for_seat` passes an unknown value on as it is)."""

    def __init__(self, events: list[Event]) -> None:
        self.events, self.at = events, 0

    def __iter__(self) -> _Tap:
        return self

    def __next__(self) -> Event | _Caught:
        if self.at == len(self.events):
            return _CAUGHT
        self.at += 1
        return self.events[self.at - 1]


class _SeatStream:
    """One seat's (or the public) redacted events of a hand, as JSON values, so far:
    `Round.events_for` read as the hand grows rather than from the start every step.

    ``written``, shared by the hand's streams, holds each event's JSON value by the
    event's value: the five streams of a table hold one dict of each event they all
    see (most of them) rather than five, a fifth of the tables' memory (issue 38), and
    each is written once. The values are never changed (frames and records encode them)."""

    def __init__(
        self, round_: Round, seat: int | None, written: dict[Event, dict[str, Any]]
    ) -> None:
        tap: Iterable[Event] = _Tap(round_.events)  # type: ignore[assignment]
        self.source: Iterator[Event | _Caught] = for_seat(tap, seat)
        self.shown: list[dict[str, Any]] = []
        self.written = written

    def read(self) -> list[dict[str, Any]]:
        written, shown = self.written, self.shown
        new: Iterator[Event] = iter(self.source.__next__, _CAUGHT)  # type: ignore[arg-type]
        for event in new:
            data = written.get(event)
            if data is None:
                data = written[event] = msgspec.to_builtins(event)
            shown.append(data)
        return shown


def public_view(round_: Round) -> dict[str, Any]:
    """A spectator's observation: every seat as the other seats see it (seat 0 as seat
    1 sees it), no hand, no drawn tile, no legal actions (``seat`` null)."""
    first = round_.observe(0)
    seats = (round_.observe(1).seats[0], *first.seats[1:])
    obs = first._replace(seats=seats, hand=bytes(34), drawn=None, legal=(), must_win=False)
    view = observation_json(obs)
    view["seat"] = None
    return view


def _texts(actions: list[Action]) -> str:
    return ", ".join(map(str, actions)) or "none"
