"""Scoring one win: requirements, fans, the best reading, payments, kongs and fees.

`score` reads a `Situation` and the fan table of its rule set. For every candidate
winning tile (the tile itself, or under 摸宝 each face the treasure may stand in for, D19)
and every legal decomposition, it evaluates the fans, applies replacements, and pays
each payer ``底注 × 2^N`` (capped, flat or 漂 where the rule set says so). The reading
that pays the winner most is kept (D2). `Score.to_json` is the `fangcheng score` output.
"""

from __future__ import annotations

from collections.abc import Sequence
from operator import attrgetter
from typing import Final, NamedTuple

from fangcheng.analysis.hand import Arrangement, WaitShape, shapes_in, waits
from fangcheng.rules.fans import AppliedFan, Fan, WinContext
from fangcheng.rules.requirements import legal_win, no_win_reason
from fangcheng.rules.ruleset import Options, RuleSet
from fangcheng.scoring.payments import (
    KongPayment,
    Transfer,
    deltas_of,
    effective_base,
    kong_payments,
    may_pay_kongs,
    piao_payments,
    service_fees,
)
from fangcheng.scoring.situation import Seat, Situation, WinBy
from fangcheng.tiles.melds import Meld
from fangcheng.tiles.notation import format_counts, format_tiles, tile_name

__all__ = [
    "AppliedFan",
    "Cap",
    "Payment",
    "Reading",
    "Score",
    "best_reading",
    "best_ready_fans",
    "cap_of",
    "evaluate",
    "payer_fans",
    "readings",
    "score",
]

SEAT_NAMES: Final = "ESWN"
_ZERO: Final = (0, 0, 0, 0)
_NO_SHAPES: Final[frozenset[WaitShape]] = frozenset()
_NO_NAMES: Final[frozenset[str]] = frozenset()
_ROBBED: Final = WinBy.ROBBED_KONG  # looked up once: an enum class lookup is slow
_OTHERS: Final = tuple(tuple(p for p in range(4) if p != seat) for seat in range(4))


class Payment(NamedTuple):
    """What one payer pays the winner: its fans (the winner's plus its own), N, coins."""

    seat: int
    fans: tuple[AppliedFan, ...]
    total: int
    amount: int


class Cap(NamedTuple):
    """A payment held below 底注 × 2^N by the rule set's cap 封顶 (D39, D51): at ``fans``
    fans (a fan cap) or at ``coins`` (a cap on the amount); ``uncapped`` is 底注 × 2^N."""

    fans: int | None
    coins: int | None
    uncapped: int


def cap_of(situation: Situation, payment: Payment) -> Cap | None:
    """The cap that held ``payment`` down, if one did (a flat payment is never capped)."""
    rules = situation.rules
    if any(a.fan.flat is not None for a in payment.fans):
        return None
    base = effective_base(situation.options, situation.base)
    uncapped = base << payment.total
    if rules.cap_fans is not None and payment.total > rules.cap_fans:
        return Cap(fans=rules.cap_fans, coins=None, uncapped=uncapped)
    if rules.cap_base is not None and payment.amount == rules.cap_base * base < uncapped:
        return Cap(fans=None, coins=payment.amount, uncapped=uncapped)
    return None


class Reading(NamedTuple):
    """The fans and payments of one candidate tile and one decomposition."""

    tile: int
    arrangement: Arrangement
    fans: tuple[AppliedFan, ...]
    payers: tuple[Payment, ...]
    gross: int  # what the winner receives in all (the D2 criterion)


# The readings loop (`evaluate`, `_readings`: every candidate tile and decomposition of a
# win) builds its named tuples with tuple.__new__, skipping their Python-level __new__
# (half the cost), and reads a field of many with map; so does `score` for the `Score`,
# ten fields; the rest, built once per win or less, is built by keyword.
_new: Final = tuple.__new__
_VALUE: Final = attrgetter("value")
_TOTAL: Final = attrgetter("total")


def _applied(fan: Fan, value: int, n: int | bool) -> AppliedFan:
    """``fan`` applied ``n`` times (True: once) at ``value`` each; the fan's shared
    once-at-its-own-value instance when that is what it is."""
    return fan.once if n is True and value == fan.value else _new(AppliedFan, (fan, n, value * n))


class Score(NamedTuple):
    """The result of one win (or the reason it is none), as the CLI prints it.

    A named tuple, like its parts: a frozen dataclass of ten fields takes ten times as
    long to build, a sizeable share of scoring one win."""

    situation: Situation
    win: bool
    reason: str = ""
    reading: Reading | None = None
    piao: tuple[Transfer, ...] = ()  # 漂 (baishan_platform)
    kong_items: tuple[KongPayment, ...] = ()
    deltas: tuple[int, ...] = _ZERO
    kongs: tuple[int, ...] = _ZERO
    fees: tuple[int, ...] = _ZERO
    total: tuple[int, ...] = _ZERO

    def to_json(self) -> dict[str, object]:
        """The contract output of `fangcheng score` (ARCHITECTURE.md "Win situation")."""
        if not self.win or self.reading is None:
            return {"win": False, "reason": self.reason}
        return {
            "win": True,
            "fans": [
                {"name": a.fan.name, "en": a.fan.en, "value": a.value, "scope": a.fan.scope.value}
                for a in self.reading.fans
            ],
            "payers": [self._payer_json(p) for p in self.reading.payers],
            "deltas": list(self.deltas),
            "kongs": list(self.kongs),
            "fees": list(self.fees),
            "total": list(self.total),
        }

    def _payer_json(self, p: Payment) -> dict[str, object]:
        """A payer in the contract output; ``cap`` only where the cap held it down."""
        out: dict[str, object] = {
            "seat": p.seat,
            "fan": p.total,
            "fans": [a.fan.name for a in p.fans],
            "amount": p.amount,
        }
        cap = cap_of(self.situation, p)
        if cap is not None:
            out["cap"] = {k: v for k, v in cap._asdict().items() if v is not None}
        return out

    def explain(self) -> str:
        """A readable table: every fan and why, each payer's N and coins, kongs, fees."""
        s = self.situation
        how = s.win_by.value.replace("_", " ")
        if s.source is not None:
            how += f" from seat {_seat(s.source)}"
        lines = [
            f"{s.rules.name}: seat {_seat(s.winner)} wins on {tile_name(s.win_tile)} by {how}"
            f"; dealer {_seat(s.dealer)}; 底注 {s.base}"
        ]
        if not self.win or self.reading is None:
            lines.append(f"no win: {self.reason}")
            return "\n".join(lines)
        r = self.reading
        seat = s.seats[s.winner]
        melds = " ".join(_meld_text(m) for m in seat.melds)
        lines.append(
            f"hand {format_counts(seat.concealed)} + {tile_name(r.tile)}"
            + (f"  melds {melds}" if melds else "")
        )
        if r.tile != s.win_tile:
            lines.append(f"the treasure {tile_name(s.win_tile)} stands in for {tile_name(r.tile)}")
        lines.append("reading " + " ".join(map(repr, r.arrangement.groups)))
        lines.append("winner's fans:")
        for a in r.fans:
            scope = a.fan.scope.value
            lines.append(
                f"  {a.fan.name:<6}{a.fan.en:<28}{a.value:>3}  [{scope}] {_times(a)}{a.fan.why}"
            )
        if not r.fans:
            lines.append("  (none)")
        lines.append("payers:")
        for p in r.payers:
            own = p.fans[len(r.fans) :]
            extra = "".join(f" + {a.fan.name} {a.value}" for a in own)
            lines.append(
                f"  seat {_seat(p.seat)}: N = winner's {sum(a.value for a in r.fans)}{extra}"
                f" = {p.total} -> pays {p.amount}{_capped(s, p)}"
            )
        for t in self.piao:
            lines.append(f"  漂: seat {_seat(t.payer)} pays {t.amount}")
        lines.append("kongs:" + ("" if self.kong_items else " (none)"))
        for k in self.kong_items:
            each = ", ".join(f"{_seat(t.payer)} {t.amount}" for t in k.transfers)
            lines.append(f"  seat {_seat(k.seat)} {k.label}: {each or 'nobody pays'}")
        lines.append("            " + "".join(f"{_seat(i):>8}" for i in range(4)))
        for name, row in (
            ("win", self.deltas),
            ("kongs", self.kongs),
            ("fees", self.fees),
            ("total", self.total),
        ):
            lines.append(f"  {name:<10}" + "".join(f"{v:>8}" for v in row))
        return "\n".join(lines)


def _seat(seat: int) -> str:
    return f"{seat} ({SEAT_NAMES[seat]})"


def _capped(s: Situation, p: Payment) -> str:
    if any(a.fan.flat is not None for a in p.fans):
        return " (a flat payment)"
    cap = cap_of(s, p)
    if cap is None:
        return ""
    if cap.fans is not None:
        return f" (capped at {cap.fans} fans)"
    return f" (capped at {s.rules.cap_base} × 底注)"


def _times(a: AppliedFan) -> str:
    return f"×{a.times} " if a.times > 1 else ""


def _meld_text(meld: Meld) -> str:
    text = f"{meld.kind.value}:{format_tiles(meld.tiles)}"
    return text + (f"<-{meld.source}" if meld.source is not None else "")


# --- the evaluation ------------------------------------------------------------------

PayerFans = dict[int, list[AppliedFan]]


def payer_fans(rules: RuleSet, context: WinContext, payers: Sequence[int]) -> PayerFans:
    """Each payer's own (L and WL) fans, before replacements: they do not depend on the
    tile or the reading, so they are found once per win."""
    tests = rules.payer_tests
    out: PayerFans = {}
    for p in payers:  # plain loops: a comprehension costs a call, per payer
        own = out[p] = []
        for f, v, test in tests:
            if n := test(context, p):
                own.append(_applied(f, v, n))
    return out


def evaluate(
    rules: RuleSet,
    context: WinContext,
    arrangement: Arrangement,
    payers: PayerFans,
    base: int,
) -> Reading:
    """The reading of the hand as ``arrangement``: its fans, after replacements, and each
    payer's N and payment.

    ``payers`` are the payers' own fans (`payer_fans`); ``base`` is the effective 底注
    (doubled in the anti-cheat room).
    """
    tile = context.tile
    won = []
    winner_total = 0
    dropped = _NO_NAMES
    for f, v, test in rules.winner_tests:
        n = test(context, arrangement)
        if not n:
            continue
        a = _applied(f, v, n)
        if f.flat is not None:  # the platform's 十三幺: a flat payment, nothing else counts
            only = (a,)
            amount = f.flat * base
            paid = tuple([_new(Payment, (p, only, v * n, amount)) for p in payers])
            return _new(Reading, (tile, arrangement, only, paid, amount * len(paid)))
        won.append(a)
        winner_total += v * n
        if f.replaces:
            dropped |= f.replaces
    if dropped:
        won = [a for a in won if a.fan.name not in dropped]
        winner_total = sum(map(_VALUE, won))
    winner_fans = tuple(won)
    # 底注 × 2^N, with the rule set's fan cap and per-payer cap (D39, D51)
    cap_fans = rules.cap_fans
    most = base * rules.cap_base if rules.cap_base is not None else None
    out = []
    gross = 0
    for p, own in payers.items():
        fans, total = winner_fans, winner_total
        if own:
            if dropped:
                own = [a for a in own if a.fan.name not in dropped]
            fans += tuple(own)
            total += sum(map(_VALUE, own))
        amount = base << (total if cap_fans is None or total <= cap_fans else cap_fans)
        if most is not None and amount > most:
            amount = most
        gross += amount
        out.append(_new(Payment, (p, fans, total, amount)))
    return _new(Reading, (tile, arrangement, winner_fans, tuple(out), gross))


def _payers(s: Situation) -> tuple[int, ...]:
    """Who pays the win (§2.8, §3.7, §4.7, §5.7; D52, D67, D75)."""
    rules = s.rules
    if s.source is not None and (rules.discarder_only or s.options.anti_cheat):
        return (s.source,)
    others = _OTHERS[s.winner]
    if s.source is None and s.won and rules.unfinished_pay_self_draw:
        return tuple(p for p in others if p not in s.won)
    return others


def _readings(
    s: Situation, tiles: Sequence[int], treasure_win: bool, payers: tuple[int, ...]
) -> list[Reading]:
    """Every legal reading of the winner's hand with each of ``tiles``, fans and payments
    found; the payers' own fans are found once, with the first tile that wins.

    Each reading is judged on its own (D77): the wait shapes a fan reads (夹, and so
    宝中宝) are where the tile sits in *that* decomposition, which `legal_readings`
    has found to be a legal win, never in another reading of the same tiles."""
    rules = s.rules
    wait_shapes = rules.wait_shapes
    winner = s.winner
    concealed, melds = s.concealed[winner], s.melds[winner]
    options = s.options
    que = options.que[winner] if options.que is not None else None
    base = effective_base(options, s.base)
    own: PayerFans | None = None
    out: list[Reading] = []
    for tile in tiles:
        final, suits, honours, legal = legal_win(rules, concealed, tile, melds, que)
        if not legal:
            continue
        # positional, in field order (``shapes``, the last, is added per reading): this is
        # the hot path, and a named tuple is built in one C call with tuple.__new__
        head = (
            winner,
            s.dealer,
            tile,
            s.source is None,  # self-drawn: every win but a discard or a robbed kong
            s.source,
            s.win_by is _ROBBED,
            s.after_kong,
            s.treasure,
            treasure_win,
            s.last_tile,
            s.first_draw,
            s.declared_ready,
            s.closed,
            s.melds,
            s.concealed,
            final,
            suits,
            honours,
        )
        if not wait_shapes:
            context = _new(WinContext, (*head, _NO_SHAPES))
            if own is None:
                own = payer_fans(rules, context, payers)
            for a in legal:
                out.append(evaluate(rules, context, a, own, base))
            continue
        for a in legal:
            context = _new(WinContext, (*head, shapes_in(a, tile)))
            if own is None:
                own = payer_fans(rules, context, payers)
            out.append(evaluate(rules, context, a, own, base))
    return out


def _is_treasure_draw(s: Situation) -> bool:
    """摸宝 (D68): a drawn treasure face, by normal draw, replacement or 分张."""
    return s.treasure is not None and s.win_tile == s.treasure and s.source is None


def _waits(rules: RuleSet, seat: Seat) -> tuple[int, ...]:
    """The faces that complete the seat's hand by shape: `_readings` finds which are
    legal wins (the requirements of `wait_set`) as it reads them."""
    return waits(seat.concealed, shapes=rules.shapes, melds=[m.tiles for m in seat.melds])


def readings(s: Situation) -> list[Reading]:
    """Every legal reading of the win: each decomposition of each candidate tile (the
    winning tile, or under 摸宝 every face the treasure may stand in for, D19, D68)."""
    if not _is_treasure_draw(s):
        return _readings(s, (s.win_tile,), False, _payers(s))
    return _readings(s, _waits(s.rules, s.seats[s.winner]), True, _payers(s))


def best_reading(s: Situation) -> Reading | None:
    """The reading that pays the winner most (D2); ties go to the most fans, then to the
    first found. None if the hand does not win."""
    found = readings(s)
    if len(found) < 2:
        return found[0] if found else None
    best, best_key = found[0], (-1, -1)
    for reading in found:
        key = (reading.gross, sum(map(_TOTAL, reading.payers)))
        if key > best_key:
            best, best_key = reading, key
    return best


def score(situation: Situation) -> Score:
    """Score one win: the best reading (D2, D19), its payments, kongs, fees and totals."""
    s = situation
    best = best_reading(s)
    if best is None:
        return Score(s, False, _no_win(s))
    deltas = [0, 0, 0, 0]
    for seat, _, _, amount in best.payers:  # unpacked: a named field read is slower
        deltas[seat] -= amount
    deltas[s.winner] += best.gross
    options = s.options
    piao: tuple[Transfer, ...] = ()
    if any(options.piao):
        piao = piao_payments(options, s.base, s.winner, [p.seat for p in best.payers])
        for t in piao:
            deltas[t.payer] -= t.amount
            deltas[t.payee] += t.amount
    kong_items: tuple[KongPayment, ...] = ()
    if may_pay_kongs(s.rules, s.concealed, s.melds, s.treasure):
        kong_items = kong_payments(
            s.rules,
            options,
            s.base,
            s.dealer,
            zip(s.concealed, s.melds, strict=True),
            treasure=s.treasure,
            won=s.won,
        )
    if kong_items:
        kongs = deltas_of(t for k in kong_items for t in k.transfers)
        nets = tuple([d + k for d, k in zip(deltas, kongs, strict=True)])
    else:
        kongs, nets = _ZERO, tuple(deltas)
    fees: tuple[int, ...] = _ZERO
    total = nets
    if options.room is not None:
        fees = service_fees(options, nets)
        total = tuple([n - f for n, f in zip(nets, fees, strict=True)])
    return _new(Score, (s, True, "", best, piao, kong_items, tuple(deltas), kongs, fees, total))


def _no_win(s: Situation) -> str:
    winner = s.seats[s.winner]
    que = s.options.que[s.winner] if s.options.que is not None else None
    if _is_treasure_draw(s):
        return f"摸宝 needs a ready hand: {format_counts(winner.concealed)} waits on nothing"
    hand = bytearray(winner.concealed)
    hand[s.win_tile] += 1
    return no_win_reason(s.rules, bytes(hand), winner.melds, s.win_tile, que)


def best_ready_fans(
    rules: RuleSet, concealed: bytes, melds: Sequence[Meld] = (), que: int | None = None
) -> int | None:
    """The most fans a ready hand could score on any wait, as a discard win with no
    situational fans (查大叫, D55), capped; None if the hand is not ready."""
    seat = Seat(concealed, tuple(melds))
    tiles = _waits(rules, seat)
    if not tiles:
        return None
    blank = Seat(bytes(34))
    s = Situation(
        rules=rules, options=Options(que=(que, 0, 0, 0)) if que is not None else Options(),
        dealer=1, winner=0, win_tile=tiles[0], win_by=WinBy.DISCARD, source=1,
        seats=(seat, blank, blank, blank),
    )  # fmt: skip
    best: int | None = None
    for reading in _readings(s, tiles, False, ()):  # no payers: only the winner's fans count
        n = sum(a.value for a in reading.fans)
        n = min(n, rules.cap_fans) if rules.cap_fans is not None else n
        best = n if best is None else max(best, n)
    return best
