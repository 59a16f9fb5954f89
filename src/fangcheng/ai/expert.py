"""The expert bot: search over worlds sampled from what one seat knows.

A world is an engine `Round` rebuilt from one `Observation` alone: the seat's own hand
and every public fact (melds, rivers, counts, 定缺, 漂, the treasure, the wall count) as
they are, and the tiles the seat cannot see dealt at random to the other hands, their
face-down 暗杠 and the wall. It receives nothing but the observation (and, from the
expert, the strong bot's reading of it), so it cannot use hidden information.

The tiles are not dealt uniformly: a uniform deal gives every other seat a hand far from
ready, and a search in such worlds finds every discard safe and every attack free (the
first versions dealt in twice as often as the strong bot). So a seat that declared 报听
is dealt a ready hand; one that may be ready by its discards and calls (the strong bot's
estimate, halved for a seat that has not declared where 报听 exists: strong bots declare
when ready) is dealt a ready hand with that chance, else one a few tiles off; a sichuan
seat whose latest discard is outside its 缺 holds none of it, nor does any seat dealt a
ready hand. A ready hand is built set by set, each drawn as often as its copies can be
taken from the unseen tiles (drawn uniformly among the kinds of set, concealed pungs
came three times as often as in strong bots' ready hands). In sichuan it is built of
the tiles its seat cannot see, the observer's hand among them, all but its winning tile
from the unseen (built of the unseen alone, its winning tile had to be unseen too, and
a face of the observer's hand whose other copies are all in sight was a wait a third as
often as in strong bots' hands: the observer's discards looked safer than they are;
`_of_observers_tiles`). A ready hand dealt waits on no face its seat let pass since its
hand last changed (bots take every win offered) and on none of its own discards
(players seldom do): dealt uniformly, its waits made the faces the table shows safe
look dangerous, and the others safe.

Worlds are rebuilt at the seat's own turn, at a claim window on another seat's discard
(the discarder's turn, replayed to the window; the other seats answer in the world), and
at 定缺 (just after the deal). What an observation does not say is set to its usual
value: the tile to move on (or the discard) did not follow a kong, no 刮风下雨 is owed
back (退税). `_set_state` is the one place that writes the engine's state directly.

`ExpertBot` keeps the strong bot's choice unless a rival beats it clearly: at a turn its
next best discards at the least distance, the safest discard while another seat may well
be ready (the strong bot folds only against 报听), the same discard with or without 报听, a
kong made or not; in sichuan (`searched`; elsewhere on request, `ExpertBot.phases`) at a
claim every other answer; on request every other 缺. Each is played out to the end of
the hand in the same sampled worlds with the same playout seeds (common random
numbers), the seat by its own playout policy (the strong bot, starting from the
expert's reading of the table: efficient playouts misjudged its follow-up) and the
others by efficient bots (strong ones cost 2–3.5× and measured no better): a pilot of a
few worlds for every option, then the rest of the budget on the choice and the rival
that led. That rival is taken only where its mean coins for the seat beat the strong
bot's choice by `MARGIN` standard errors of the paired differences. The strong bot
inside draws the seat's own generator, so an expert that keeps every choice plays the
strong bot's game. 漂 is the strong bot's: playouts of equal bots cannot value a bet.

How strong it is (benchmarks/RESULTS.md): its overrules, each judged in worlds holding
the true hands (`benchmarks/bench_oracle.py --overrules --claims`), gain +0.14 ± 0.10
coins a hand in sichuan at `PLAYOUTS` and +0.26 ± 0.13 at `TABLE_PLAYOUTS`, much of it
a 碰 where the strong bot makes a 直杠; in duplicate play against three strong bots
+0.11 ± 0.09 (7,200 hands at 24). In the Jilin sets it is not shown better than the
strong bot: its overrules are right about as often as not. No nearby variant of the
strong bot's heuristics beats it either (`benchmarks/bench_policy.py`); judged in worlds
holding the true hands, no kind of rival it searches gains on average in any rule set
but that 碰 (`--rivals`), and a perfect choice among them, by 80 such worlds, is worth
+0.7 ± 0.9 coins a hand in sichuan (`--stakes`): the strong bot's neighbours seldom
differ enough to matter.
"""

from __future__ import annotations

import pickle
import random
import threading
import time
from collections import deque
from collections.abc import Collection, Sequence
from math import sqrt
from statistics import fmean, stdev
from typing import ClassVar, Final

from fangcheng.engine.round import Item, Round, shared_action
from fangcheng.players.bots import Bot, EfficientBot, StrongBot, register_bot, table_of
from fangcheng.protocol.actions import Act, Action
from fangcheng.protocol.observation import Observation, Phase
from fangcheng.rules.requirements import in_void_suit, wait_set
from fangcheng.rules.ruleset import RuleSet
from fangcheng.tiles.melds import Meld, MeldKind
from fangcheng.tiles.notation import KINDS, SUITS

__all__ = ["ExpertBot", "decide", "play_out", "sample_world"]

#: Playouts per decision and discards compared, by default: small enough for simulation
#: (tens of ms a decision).
PLAYOUTS: Final = 24
CANDIDATES: Final = 3
#: Playouts per decision where a person waits on it (the server's experts and hints, the
#: terminal's hint): 0.1–0.3 s a decision on average. Judged decision by decision in
#: sichuan, the expert's overrules gain +0.26 ± 0.13 coins a hand at 96 playouts against
#: +0.14 ± 0.10 at 24, paired +0.11 ± 0.11 (benchmarks/RESULTS.md, eighth look).
TABLE_PLAYOUTS: Final = 96
#: Where a person waits, the time a decision may take from when it is asked, s (then the
#: strong bot's choice, `ExpertBot.act`): met unless the core is shared, as a decision
#: takes at most `TABLE_CPU` of it.
TABLE_SECONDS: Final = 2.0
#: Where a person waits, the CPU time (of the thread deciding) a decision may take, s:
#: then the search is given up for the strong bot's choice, as at `TABLE_SECONDS`. At
#: `TABLE_PLAYOUTS` decisions took 0.12–0.22 s on average but up to 0.6–0.8 s (1.2 s
#: on a busier machine); wall time alone did not cut them where the core was free, and
#: cut them at random where it was shared. With it the longest took 0.44–0.50 s, one
#: decision in thirty cut at a load of 5 on 2 cores, one in eight at 9–16 (CPU time
#: grows with the load too; `benchmarks/bench_expert.py time`, history 2026-12-06).
TABLE_CPU: Final = 0.5
#: Where a person waits, the processes experts think in beside the one serving the
#: table (`fangcheng.server.thinking`): a 2-core machine's other core.
TABLE_WORKERS: Final = 1
#: Standard errors by which a rival must beat the strong bot's choice to be taken.
MARGIN: Final = 1.5
#: A seat's chance of being ready from which the safest discard is searched too.
FOLD: Final = 0.5
#: Where 报听 exists, the share of the strong bot's threat by which an undeclared seat is
#: dealt a ready hand: strong bots declare whenever the wait is live, so one that has not
#: is seldom ready (in 60 hands of four strong bots a seat read at 0.3–0.6 was ready about
#: half as often as read, in baishan and baishan_platform alike; sichuan, without 报听,
#: within a few points of it).
UNDECLARED: Final = 0.5
#: The decisions searched by default: the seat's own turns (and claims, `searched`).
TURNS: Final = frozenset({Phase.TURN})


def searched(rules: RuleSet) -> frozenset[Phase]:
    """The decisions searched by default under ``rules``: the seat's turns, and its claims
    too where a 碰 and the later 补杠 of the fourth tile held are paid otherwise than a
    直杠 of it (the kong table). There the choice is worth a coin: judged one by one in
    worlds holding the true hands, sichuan's claim overrules gain about 0.15 coins a
    hand, most of it a 碰 where the strong bot makes a 直杠 (the 补杠 pays 1 from each of
    three seats still playing, the 直杠 2 from its discarder alone: +0.94 ± 0.06 each).
    Where the two are paid alike (baicheng, baishan) claim overrules were noise, and
    searched in play they lost clearly in baicheng (benchmarks/RESULTS.md). 定缺 is
    searched on request only."""
    kongs = rules.kongs
    if (kongs.ming, kongs.ming_payers) != (kongs.bu, kongs.bu_payers):
        return TURNS | {Phase.CLAIM}
    return TURNS


class WorldError(ValueError):
    """The observation is of a decision this sampler does not rebuild."""


class _Late(Exception):
    """A search's deadline passed, or its CPU budget ran out, before it was done."""


def _options(obs: Observation) -> dict[str, object]:
    rules = obs.rules
    options: dict[str, object] = {}
    if rules.piao_bets:
        options["piao"] = [view.piao for view in obs.seats]
    ques = [view.que for view in obs.seats]
    if rules.void_suit_choice and None not in ques:
        options["que"] = [SUITS[q] for q in ques if q is not None]
    return options


def sample_world(
    obs: Observation,
    rng: random.Random,
    ready: Sequence[float] | None = None,
    safe: Sequence[Collection[int]] | None = None,
) -> Round:
    """A round at ``obs``'s decision that agrees with all ``obs`` shows, the unseen tiles
    dealt at random: the seat's own turn, a claim window on another seat's discard, or
    定缺; a `WorldError` for any other decision.

    ``ready``: each seat's chance of being ready, as read from its discards and calls (a
    seat that declared 报听 is ready whatever it says): such a seat is dealt a ready hand
    with that chance, and else a hand a few tiles off one; without it only the declared
    seats' hands are built, the others' dealt uniformly.

    ``safe``: per seat, faces a ready hand of it does not wait on (public facts: those it
    let pass since its hand last changed, as bots take every win offered); a ready hand
    built for it also waits on none of its own discards (players seldom wait on a face
    they threw: a strong bot's ready hand did in 5% of sichuan's turns and none of
    baishan's, a ready hand built at random in 15–20%). Bounded tries, then any ready
    hand."""
    if ready is None:
        ready = (0.0,) * 4
    if safe is None:
        safe = ((),) * 4
    claim = obs.last_discard if obs.phase is Phase.CLAIM else None
    own_turn = obs.phase is Phase.TURN and obs.turn == obs.seat
    rebuilt = own_turn or obs.phase is Phase.QUE or (claim is not None and claim[0] != obs.seat)
    if not obs.legal or not rebuilt:
        raise WorldError(f"{obs.phase.value} is not rebuilt: a turn, a claim or 定缺 is")
    rules = obs.rules
    world = Round(rules, seed=0, dealer=obs.dealer, base=obs.base, options=_options(obs))
    unseen = bytearray(table_of(obs).unseen)
    win_tiles: dict[int, int] = {}
    mine = obs.seats[obs.seat].revealed
    if mine is not None:  # the seat's own winning tile lies face up beside its hand
        for t in range(KINDS):
            if mine[t] > obs.hand[t]:
                unseen[t] -= 1
                win_tiles[obs.seat] = t
    pool = [t for t in range(KINDS) for _ in range(unseen[t])]
    rng.shuffle(pool)
    counts = bytearray(KINDS)
    for t in pool:
        counts[t] += 1
    hands = [bytearray(KINDS) for _ in range(4)]
    melds: list[list[Meld]] = [list(view.melds) for view in obs.seats]
    for s, view in enumerate(obs.seats):
        for _ in range(view.hidden_kongs if s != obs.seat else 0):  # faces still unseen
            faces = [t for t in range(KINDS) if counts[t] == 4]
            if not faces:
                raise WorldError("no face left for a hidden kong")
            face = rng.choice(faces)
            counts[face] = 0
            pool = [t for t in pool if t != face]
            melds[s].append(Meld(MeldKind.AN_GANG, (face,) * 4))
    hidden = []
    for s, view in enumerate(obs.seats):
        if s == obs.seat:
            hands[s][:] = obs.hand
        elif view.revealed is not None:  # a sichuan winner's hand lies face up
            hands[s][:] = view.revealed
            if sum(view.revealed) > view.concealed:  # with its winning tile, not told apart
                tile = next(t for t in range(KINDS) if hands[s][t])
                hands[s][tile] -= 1
                win_tiles[s] = tile
        else:
            hidden.append(s)
    # a seat whose latest discard is outside its 缺 has shed the 缺 first, as players do
    voids = {
        s: v.que if v.river and not in_void_suit(v.river[-1], v.que) else None
        for s, v in enumerate(obs.seats)
    }
    # the most constrained first: a declared hand is ready, then a hand without its 缺
    hidden.sort(key=lambda s: (not obs.seats[s].ready, voids[s] is None))
    for s in hidden:
        view = obs.seats[s]
        if view.ready or rng.random() < ready[s]:
            avoid = frozenset(safe[s]).union(view.river)
            dealt = _built_hand(obs, s, pool, rng, view.que, 0, avoid)  # it holds no 缺 tile
        elif ready[s]:  # not ready yet, but a hand kept for many turns is rarely far off
            dealt = _built_hand(obs, s, pool, rng, voids[s], max(1, 5 - len(view.river) // 2))
        else:
            dealt = None
        if dealt is None:
            dealt = _void_hand(pool, view.concealed, voids[s])
        hands[s][:] = dealt
        pool = _without(pool, dealt)
    extra = len(pool) - obs.wall
    if extra < 0 or (extra and not rules.treasure) or extra > 4:
        raise WorldError(f"{len(pool)} unseen tiles for a wall of {obs.wall}")
    _set_state(world, obs, hands, melds, pool, win_tiles)
    return world


def _without(pool: list[int], hand: bytes | bytearray) -> list[int]:
    """``pool`` in its order less the tiles of ``hand``."""
    left = bytearray(hand)
    out = []
    for t in pool:
        if left[t]:
            left[t] -= 1
        else:
            out.append(t)
    return out


def _void_hand(pool: list[int], n: int, void: int | None) -> bytearray:
    """The first ``n`` tiles of ``pool`` outside the ``void`` suit (then any, if too few:
    the seats dealt before may have taken them)."""
    hand = bytearray(KINDS)
    picked = 0
    for t in pool:
        if picked < n and not in_void_suit(t, void):
            hand[t] += 1
            picked += 1
    if picked < n:  # too few tiles outside the suit left unseen
        for t in _without(pool, hand)[: n - picked]:
            hand[t] += 1
    return hand


def _of_observers_tiles(rules: RuleSet) -> bool:
    """Whether ready hands are built of the observer's hand too (their winning tile may
    be the observer's): under 血战 rules (`RuleSet.bloody`), where that was measured to
    match strong bots' ready hands. A face of the observer's hand whose other copies
    are all in sight is a wait of 0.052 of them in sichuan (built so 0.066; of the
    unseen tiles alone 0.019), but of 0.006–0.012 in baicheng and baishan, for a reason
    not found; built so there it was of 0.044–0.053, and the expert's overrules, judged
    in true-hand worlds, fared no better (benchmarks/RESULTS.md)."""
    return rules.bloody


#: Tries at building a ready hand from the unseen tiles.
READY_TRIES: Final = 30


def _built_hand(
    obs: Observation,
    s: int,
    pool: list[int],
    rng: random.Random,
    void: int | None,
    spoil: int,
    avoid: frozenset[int] = frozenset(),
) -> bytearray | None:
    """A hand for seat ``s`` of the unseen tiles in ``pool`` (none of the ``void`` suit):
    a complete hand (sets and a pair) built at random, one tile taken out and ``spoil``
    more swapped for random ones. Unspoilt, it is ready, and built of what seat ``s``
    cannot see, the observer's hand too: the tile taken out is the one copy that is the
    observer's, if any (two or more: built anew). It is kept once the rules let it win
    on some face and on none of ``avoid`` (a random deal is almost never ready, and a
    ready seat that cannot win would make every discard look safe); if every try wins on
    one of ``avoid``, the first ready hand. None if none is found.

    So under 血战 rules only (`_of_observers_tiles`); under the others of the pool alone.

    Sets are drawn as often as their copies can be taken from the pool (a run of three
    faces has up to 64 ways, a pung 4): drawn uniformly among the kinds of set, a built
    ready hand held three times the concealed pungs of strong bots' ready hands.
    """
    fallback = None
    view = obs.seats[s]
    n = view.concealed
    if n % 3 != 1:
        return None
    counts = bytearray(KINDS)
    for t in pool:
        if not in_void_suit(t, void):
            counts[t] += 1
    seen = bytearray(counts)  # what seat s cannot see: the pool and the observer's hand
    if not spoil and _of_observers_tiles(obs.rules):
        for t in range(KINDS):
            if not in_void_suit(t, void):
                seen[t] += obs.hand[t]
    spoil = min(spoil, n)  # of the n + 1 tiles built, at least one is kept
    for _ in range(READY_TRIES):
        left, hand = bytearray(seen), bytearray(KINDS)
        sets = [(t, t, t) for t in range(KINDS) if left[t] >= 3]
        sets += [(t, t + 1, t + 2) for t in range(27) if t % 9 <= 6 and all(left[t : t + 3])]
        pairs = [t for t in range(KINDS) if left[t] >= 2]
        if not pairs:
            return None
        pair = rng.choices(pairs, [left[t] * (left[t] - 1) for t in pairs])[0]
        hand[pair] += 2
        left[pair] -= 2
        for _ in range(n // 3):
            sets = [m for m in sets if all(left[t] >= m.count(t) for t in m)]
            if not sets:
                break
            for t in rng.choices(sets, [_ways(left, m) for m in sets])[0]:
                hand[t] += 1
                left[t] -= 1
        else:
            over = [t for t in range(KINDS) if hand[t] > counts[t]]
            if len(over) > 1 or (over and hand[over[0]] - counts[over[0]] > 1):
                continue  # more of the observer's tiles than the one it waits on
            if over:  # the winning tile is the observer's: the seat cannot see it
                hand[over[0]] -= 1
            else:
                hand[rng.choice([t for t in range(KINDS) if hand[t]])] -= 1
            for _ in range(spoil):
                hand[rng.choice([t for t in range(KINDS) if hand[t]])] -= 1
            for _ in range(spoil):
                spares = [t for t in range(KINDS) if left[t] and hand[t] < 4]
                if not spares:  # too few unseen tiles left outside the void suit
                    return None
                t = rng.choice(spares)
                hand[t] += 1
                left[t] -= 1
            if spoil:
                return hand
            wins = wait_set(obs.rules, bytes(hand), view.melds, view.que)
            if wins and fallback is None:
                fallback = hand
            if wins and avoid.isdisjoint(wins):
                return hand
    return fallback


def _ways(left: bytearray, meld: tuple[int, int, int]) -> int:
    """The ways to take ``meld`` from the tiles ``left`` (as many as there are sets of
    those copies): a pung's choice of 3 copies, a run's one copy of each face."""
    a, b, c = meld
    if a == b:
        return left[a] * (left[a] - 1) * (left[a] - 2) // 6
    return left[a] * left[b] * left[c]


def _set_state(
    world: Round,
    obs: Observation,
    hands: list[bytearray],
    melds: list[list[Meld]],
    pool: list[int],
    win_tiles: dict[int, int],
) -> None:
    """Put ``world`` (a fresh `Round` of the table's rules) at ``obs``'s decision with the
    dealt ``hands``, ``melds`` and unseen ``pool`` (the wall, then the reserve).

    The one place that writes the engine's state directly (its private fields and its
    `_rest`, `_begin_turn` and `_open_claims` steps), so a change of the engine's fields
    is met here alone; the sampler's tests check the result against the observation.
    What an observation does not say is set to its usual value: the tile to move on (or
    the discard) did not follow a kong, no 刮风下雨 is owed back (退税)."""
    rules = obs.rules
    wall = world.wall
    wall.live = deque(pool[: obs.wall])
    wall.reserve = deque(pool[obs.wall :])
    if rules.treasure:
        wall.indicators = [*obs.retired, *([obs.treasure] if obs.treasure is not None else [])]
        wall.indicator = obs.treasure
    world.hands, world.melds, world.win_tiles = hands, melds, win_tiles
    world.rivers = [list(view.river) for view in obs.seats]
    world.ready = [view.ready for view in obs.seats]
    world.que = [view.que for view in obs.seats]
    world.piao = [view.piao for view in obs.seats]
    world.won = [s for s, view in enumerate(obs.seats) if view.won]
    world.items = [Item("before the sample", obs.scores)] if any(obs.scores) else []
    world.events = []
    world.decisions = []
    world.over = False
    world.claim, world.rob_kind = None, None
    # the first go-around lasts until a call, or the dealer's second draw
    discards = sum(len(view.river) for view in obs.seats)
    world.first_go_around = not any(melds) and discards < 4 + (obs.last_discard is not None)
    world.first_discards = []  # 撵庄's: the first discards in turn from the dealer's
    for s in ((obs.dealer + i) % 4 for i in range(4)):
        if not (rules.chase_dealer_pays and world.first_go_around and world.rivers[s]):
            break
        world.first_discards.append(world.rivers[s][0])
    if obs.phase is Phase.QUE:  # just dealt: every seat chooses its 缺
        for s in range(4):
            if s != obs.dealer:  # as the deal leaves them
                world._rest(s, -1)
        return
    if obs.last_discard is not None:  # a claim window on the discard just made
        source, tile = obs.last_discard
        for s in range(4):
            world._rest(s, -1)
        world.turn, world.drawn, world.phase = source, None, Phase.TURN
        world.after_kong = world.kong_discard = world.just_chowed = False
        nxt = hands[(source + 1) % 4]
        chis = [
            shared_action(Action(Act.CHI, run=run))
            for run in ((s, s + 1, s + 2) for s in (tile - 2, tile - 1, tile))
            if rules.chi
            and tile < 27
            and run[0] >= tile // 9 * 9
            and run[2] < tile // 9 * 9 + 9
            and all(nxt[x] for x in run if x != tile)
        ]
        world._open_claims(source, tile, chis)
        return
    seat = obs.seat
    opening = seat == obs.dealer and not obs.seats[seat].river
    world.dealer_kongs = len(melds[seat]) if opening else 0
    last = melds[seat][-1] if melds[seat] else None
    world.just_chowed = (
        obs.drawn is None and not opening and last is not None and last.kind is MeldKind.CHI
    )
    for s in range(4):
        if s != seat:
            world._rest(s, -1)
    world._rested[seat] = (frozenset(), -1)  # not the deal's: "says nothing"
    # after_kong: the waits of the hand before the draw are worked out, not read from a
    # rest this world never had; the flag itself is the usual value, False
    world._begin_turn(
        seat,
        obs.drawn,
        after_kong=obs.drawn is not None,
        called=obs.drawn is None and not opening,
    )
    world.after_kong = False


def play_out(world: Round, seat: int, action: Action, bots: Sequence[Bot]) -> int:
    """Coins ``seat`` moves in ``world`` from here to the end, taking ``action`` first,
    every later decision of seat ``s`` the bot ``bots[s]``'s (fresh for this hand)."""
    before = sum(item.deltas[seat] for item in world.items)
    world.act(seat, action)
    while not world.over:
        for s in world.pending():
            world.act(s, bots[s].act(world.observe(s)))
    assert world.settlement is not None
    return int(world.settlement["total"][seat]) - before


_KONGS: Final = frozenset({Act.AN_GANG, Act.BU_GANG, Act.XUANFENG, Act.ADD})


class ExpertBot(Bot):
    """The strong bot, with its discards, 报听, kongs and claims checked by playouts in
    sampled worlds."""

    name: ClassVar[str] = "expert"

    def __init__(
        self,
        rng: random.Random,
        playouts: int = PLAYOUTS,
        candidates: int = CANDIDATES,
        policy: type[Bot] = StrongBot,
        phases: frozenset[Phase] | None = None,
        margin: float = MARGIN,
        opponents: type[Bot] = EfficientBot,
        fold: float | None = FOLD,
        cpu: float | None = None,
    ) -> None:
        """``playouts`` per searched decision, shared among its options; ``candidates``:
        the discards compared; ``policy``: the seat's own playout bot; ``phases``: the
        decisions searched (of `Phase.TURN`, `Phase.CLAIM` and `Phase.QUE`; None: the
        rule set's, `searched`); ``margin``: the standard errors by which a rival must
        win; ``opponents``: the other seats' playout bot; ``fold``: the threat (a seat's
        chance of being ready) from which the safest discard is a rival too (None:
        never); ``cpu``: the CPU seconds a decision may take in the thread deciding, or
        None (`act`).

        The strong bot inside draws from ``rng`` itself, exactly as a plain strong bot
        at this seat would (it breaks ties at random, and ties are common), and each
        search from a generator seeded by a copy of ``rng``'s state and the decision's
        number, not by a draw from ``rng``: where the expert keeps every choice it plays
        the strong bot's very game, so in duplicate mode (each seat's generator fixed by
        the wall and the seat) a wall on which it never overrules differs from the
        strong rotations by exactly 0. Seeded per decision, not run on from one search
        to the next, a search is the same whether or not the ones before it were made:
        a rebuilt table's replay (`replay`) need not make them again."""
        super().__init__(rng)
        self.strong = StrongBot(rng)
        self.search_seed = repr(rng.getstate())
        self.search_rng = random.Random(self.search_seed)  # reseeded by each search
        self.playouts, self.candidates, self.policy = playouts, candidates, policy
        self.phases, self.margin, self.opponents, self.fold = phases, margin, opponents, fold
        self.cpu = cpu
        self._until: float | None = None  # the thread's CPU time by which to decide (`act`)
        self._players: dict[int, list[Bot]] = {}  # the playout bots of this hand, by seat
        self._wall = -1  # the wall's count at the last observation: it shrinks in a hand
        self._decisions = 0  # observations acted on
        self.late = 0  # searches cut short by their deadline

    @classmethod
    def budgeted(cls, rng: random.Random, playouts: int) -> Bot:
        """``expert@N``: an expert with ``N`` playouts a decision."""
        return cls(rng, playouts=playouts)

    def act(self, observation: Observation, deadline: float | None = None) -> Action:
        """The strong bot's choice, or a rival the search finds clearly better. A search
        not done by ``deadline`` (a `time.monotonic` time; None: no limit), or once the
        decision has taken the bot's ``cpu`` seconds of its thread's CPU time (None: no
        limit), is given up for the strong bot's choice, and counted in ``late``: where a
        person waits (the server), a busy machine plays the strong bot's game rather than
        keep the table waiting, and no decision holds a core longer than ``cpu``. Only
        these limits make the choice depend on anything but the seed."""
        self._until = None if self.cpu is None else time.thread_time() + self.cpu
        choice = self._read(observation)
        if len(observation.legal) < 2:
            return choice
        options = self.options(observation, choice)
        if len(options) < 2:
            return choice
        try:
            return self.search(observation, options, deadline)
        except WorldError:
            return choice
        except _Late:
            self.late += 1
            return choice

    def fork(self, observation: Observation) -> bytes:
        """This bot as it is before deciding at ``observation``, pickled, to decide there
        in another thread or process (`decide`); this one then reads the table as deciding
        would (`replay`). As each search is seeded by its decision's number, its later
        decisions are those it would make had it searched itself, whatever becomes of
        the copy's search. The copy is without its playout bots (`decide` lends it
        those of its process)."""
        forked = pickle.dumps(self)
        self._read(observation)
        return forked

    def __getstate__(self) -> dict[str, object]:
        return {**self.__dict__, "_players": {}}

    def replay(self, observation: Observation, action: Action) -> None:
        """The state deciding at ``observation`` left, without the search (its generator
        is the decision's own, so the later searches do not depend on it): the strong
        bot's reading and draws, and the count of decisions."""
        self._read(observation)

    def _read(self, observation: Observation) -> Action:
        """The strong bot's choice at ``observation``, which it reads (every observation:
        it tracks the table), counted as a decision."""
        if observation.wall > self._wall:  # a new hand
            self._players.clear()
        self._wall = observation.wall
        self._decisions += 1
        return self.strong.act(observation)

    def options(self, obs: Observation, choice: Action) -> list[Action]:
        """The strong bot's ``choice`` first, then the rivals worth a search: at a turn its
        next best discards, the same discard with or without 报听, a kong made or not; in
        a claim window every other answer but a win it takes (a win passed is a rival);
        every other 缺."""
        phases = searched(obs.rules) if self.phases is None else self.phases
        if obs.phase not in phases:
            return [choice]
        if obs.phase is Phase.CLAIM:
            if choice.kind is Act.HU:
                return [choice]
            return [choice, *(a for a in obs.legal if a != choice)]
        if obs.phase is Phase.QUE:
            return [choice, *(a for a in obs.legal if a != choice)]
        if obs.phase is not Phase.TURN:  # 漂: playouts of equal bots cannot value a bet
            return [choice]
        discards = [a for a in obs.legal if a.kind is Act.DISCARD]
        if choice.kind in _KONGS:  # the rival: the discard it would make instead
            state = self.rng.getstate()  # its tie-break is not a draw of the seat's game
            instead = self.strong.discard(table_of(obs), discards)
            self.rng.setstate(state)
            return [choice, instead]
        if choice.kind not in (Act.DISCARD, Act.READY):
            return [choice]
        out = self.choices(obs, choice)
        declared = Action(Act.DISCARD if choice.kind is Act.READY else Act.READY, choice.tile)
        if declared in obs.legal:
            out.insert(1, declared)
        out += (a for a in obs.legal if a.kind in _KONGS)
        return out

    def choices(self, obs: Observation, choice: Action) -> list[Action]:
        """The strong bot's choice, its next best discards by its ranking of those at the
        least distance (a discard further from ready rarely wins, and every rival is a
        chance of a noisy overrule), and while another seat may well be ready the safest
        discard by its reading (it folds only against a declared seat): the playouts,
        whose worlds deal that seat a ready hand as often, weigh folding against attack."""
        legal = [a for a in obs.legal if a.kind is Act.DISCARD]
        discards = {a.tile: a for a in legal}
        table = table_of(obs)
        ranked = self.strong.ranked_discards(table, legal)
        out = [choice]
        for d, _, tile in ranked:
            if len(out) >= self.candidates or d > ranked[0][0]:
                break
            if tile != choice.tile:
                out.append(discards[tile])
        safest = self.folding(obs, ranked)
        if safest is not None and safest.tile != choice.tile and safest not in out:
            out.append(safest)
        return out

    def folding(
        self, obs: Observation, ranked: Sequence[tuple[int, float, int]] | None = None
    ) -> Action | None:
        """The safest discard by the strong bot's reading while another seat may well be
        ready (`fold`), else None; ``ranked``: the strong bot's ranking of the discards,
        if made."""
        threat = self.strong.threats(obs)
        if self.fold is None or max(threat) < self.fold:
            return None
        legal = [a for a in obs.legal if a.kind is Act.DISCARD]
        table = table_of(obs)
        if ranked is None:
            ranked = self.strong.ranked_discards(table, legal)
        return self.strong.safest(table, legal, threat, ranked)

    def readiness(self, obs: Observation) -> list[float]:
        """Each seat's chance of being ready, as the worlds deal it: the strong bot's
        threat, less for an undeclared seat where 报听 exists (`UNDECLARED`)."""
        threat = self.strong.threats(obs)
        if not obs.rules.declare_ready:
            return threat
        return [p if v.ready else p * UNDECLARED for p, v in zip(threat, obs.seats, strict=True)]

    def search(
        self, obs: Observation, options: list[Action], deadline: float | None = None
    ) -> Action:
        """The strong bot's choice (``options[0]``) unless a rival's mean playout result
        beats it by ``margin`` standard errors of the paired differences: a few noisy
        playouts would otherwise overrule a good heuristic at random. The budget goes
        where it decides: a pilot of a few worlds for every option, then the rest to the
        choice and the rival that led the pilot, none when no rival led. The rival is
        judged on the fresh worlds alone: on the pilot's, where it was picked for leading,
        it would be favoured by its luck there. Its worlds are drawn from the decision's
        own generator (`__init__`). `_Late` once ``deadline`` passes, or the decision's CPU
        time (`act`)."""
        self.search_rng.seed(f"{self.search_seed}/{self._decisions}")
        ready = self.readiness(obs)
        safe = self.strong.passed()
        results: list[list[int]] = [[] for _ in options]
        pilot = max(2, self.playouts // (2 * len(options)))
        self.play(obs, options, range(len(options)), pilot, ready, safe, results, deadline)
        gains = [fmean(_diffs(results, i)) for i in range(1, len(options))]
        rival = 1 + gains.index(max(gains))
        if gains[rival - 1] <= 0:
            return options[0]
        rest = max(2, (self.playouts - pilot * len(options)) // 2)
        self.play(obs, options, (0, rival), rest, ready, safe, results, deadline)
        diffs = _diffs(results, rival)[pilot:]  # the pilot chose the rival: not its judge
        if fmean(diffs) > self.margin * stdev(diffs) / sqrt(len(diffs)):
            return options[rival]
        return options[0]

    def play(
        self,
        obs: Observation,
        options: list[Action],
        which: Sequence[int],
        worlds: int,
        ready: Sequence[float],
        safe: Sequence[Collection[int]],
        results: list[list[int]],
        deadline: float | None = None,
    ) -> None:
        """Play the options ``which`` out in ``worlds`` more sampled worlds, the same
        worlds and playout seeds for each (common random numbers), into ``results``;
        `_Late` if ``deadline`` (`time.monotonic`) passes first, or before a playout that
        would end past the decision's CPU time (`time.thread_time`, `act`) if it took
        twice as long as the last (checked after each playout alone, a 0.5 s budget was
        overrun by up to 10 ms; predicted at the last one's length, by up to 3 ms)."""
        rng = self.search_rng
        bots = self.players(obs.seat)
        budget = self._until
        last = 0.0  # the CPU time of the last playout
        for _ in range(worlds):
            if deadline is not None and time.monotonic() >= deadline:
                raise _Late
            seeds = [rng.getrandbits(64) for _ in range(4)]
            state = rng.getstate()
            for i in which:
                if budget is not None:
                    start = time.thread_time()
                    if start + 2 * last >= budget:
                        raise _Late
                rng.setstate(state)  # the same world for every option
                world = sample_world(obs, rng, ready, safe)
                self.restart_players(bots, obs.seat, seeds)
                results[i].append(play_out(world, obs.seat, options[i], bots))
                if budget is not None:
                    last = time.thread_time() - start

    def players(self, seat: int) -> list[Bot]:
        """The playout bots of the four seats: the seat's ``policy``, the others'
        ``opponents``. The same ones play every playout of a hand, restarted each time:
        what they measured of hands stays true, and the seat's own hands recur from one
        decision to the next (about 7% less CPU for a hand with one expert than new bots
        each playout; benchmarks/RESULTS.md). A new hand drops them (`act`), so what they
        measured does not pile up over a match."""
        bots = self._players.get(seat)
        if bots is None:
            kinds = [self.policy if s == seat else self.opponents for s in range(4)]
            bots = self._players[seat] = [kind(random.Random(0)) for kind in kinds]
        return bots

    def restart_players(self, bots: list[Bot], seat: int, seeds: Sequence[int]) -> None:
        """``bots`` as fresh as new ones seeded by ``seeds``; a strong one of the seat
        starts from this seat's reading of the table (the faces each seat let pass since
        its hand changed)."""
        for bot, seed in zip(bots, seeds, strict=True):
            bot.restart(random.Random(seed))
        own = bots[seat]
        if isinstance(own, StrongBot):
            own.follow(self.strong)


#: The playout bots of the experts `decide` runs in this thread (a server's worker), by
#: their kinds: each fork would start without what they measured of hands, which stays
#: true from one to the next (without them a sichuan decision took a fifth more CPU).
_FORKS = threading.local()


def decide(
    forked: bytes, observation: Observation, deadline: float | None, cpu: float | None = TABLE_CPU
) -> tuple[Action, bool]:
    """The decision at ``observation`` of an expert forked there (`ExpertBot.fork`), and
    whether its search ran out of time. ``deadline`` is a `time.monotonic` time, which
    every process of the machine reads alike; ``cpu`` the CPU seconds the decision may
    take in the thread that runs it (`ExpertBot.cpu`)."""
    bot = pickle.loads(forked)
    if not isinstance(bot, ExpertBot):
        raise TypeError(f"an expert forked to decide, not {type(bot).__name__}")
    players: dict[tuple[type[Bot], type[Bot]], dict[int, list[Bot]]]
    players = _FORKS.__dict__.setdefault("players", {})
    bot._players = players.setdefault((bot.policy, bot.opponents), {})
    bot.cpu, late = cpu, bot.late
    return bot.act(observation, deadline), bot.late > late


def _diffs(results: list[list[int]], i: int) -> list[int]:
    """Option ``i``'s results less the strong bot's choice's, world by world."""
    return [a - b for a, b in zip(results[i], results[0], strict=True)]


register_bot(ExpertBot)
