"""What ``fangcheng play`` shows: the table, the end-of-hand settlement, the standings.

Each view is a pure function of the `Game` returning Rich `Text`, so the screen is the
same under Textual and in a test. The table is laid out for 80 columns and 24 rows;
wider terminals only get longer lines. Tiles are glyphs with their notation beside them
(a font without mahjong tiles draws boxes), or notation alone with ``ascii``; only public
information is shown of the other seats (their draws and 暗杠 stay hidden). Terms are
written one way: the Chinese term, its English gloss (`gloss`); rule ids (D16) are left
to ``fangcheng score --explain``."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Final

from rich.cells import cell_len
from rich.text import Text

from fangcheng.ai.advice import SEAT_NAMES
from fangcheng.protocol import events as ev
from fangcheng.protocol.actions import Act, Action
from fangcheng.protocol.observation import Observation, Phase
from fangcheng.scoring.payments import effective_base
from fangcheng.scoring.scorer import Payment, Score, cap_of
from fangcheng.scoring.situation import Situation
from fangcheng.tiles.melds import Meld, MeldKind
from fangcheng.tiles.notation import format_counts, format_tiles, glyph, parse_tiles, tile_name
from fangcheng.ui.terminal.game import Game, default_records, replay_command

__all__ = ["board", "event_line", "help_text", "settlement", "standings", "tiles_text"]

KEY: Final = "bold reverse"
MINE: Final = "bold cyan"
ERROR: Final = "bold red"
BACK: Final = chr(0x1F02B)  # 🀫, a tile face down
SUITS_CN: Final = ("万", "饼", "条")

HELP: Final = """\
Type a key, then Enter. The keys of the moment are listed under your hand.
  3          discard the tile at position 3 (positions are above your hand)
  5m  C      discard by notation: 1m-9m 1p-9p 1s-9s, E S W N, C F P (中发白);
             Chinese (五万, 红中) and tile glyphs work too
  t3  t5m    discard and declare 报听 (ready), where the rules allow it
  h 胡 win    p 碰 peng    g 杠 kong (g5m when there are several)
  c 吃 chi (c1 c2 c3 when several runs)    n 过 pass (let it go)
  x 旋风杠 whirlwind kong: lay 中发白   a add a dragon to it (aC: several)
  m p s      定缺 (void suit): the suit you will not keep (sichuan)
  0 5 10     漂 (bet): × 底注 (base stake) (baishan_platform)
  Enter      alone: the only thing there is to do
  hint       the expert bot's choice and why: waits, useful tiles, danger
  ascii      tiles as notation (5m) instead of glyphs, or back
  help       this page (F1)    q  quit (asks first; the hand's record is kept)
In a claim window the claim keys come first: P is 碰 peng there, not 白板.
Text forms work too: discard 5m, chi 345m, peng 5m, bugang 5m, que m.
PageUp/PageDown scroll the log (or a long page). Esc, Enter: back to the table."""


def _face(t: int, ascii: bool) -> str:
    """One tile: its notation, or its glyph with the notation beside it (a font without
    mahjong tiles shows boxes, and the notation still tells them apart)."""
    return tile_name(t) if ascii else glyph(t) + tile_name(t)


def tiles_text(tiles: Iterable[int], ascii: bool) -> str:
    """Tiles in a row: notation, or glyphs side by side with the notation after them."""
    tiles = list(tiles)
    if ascii:
        return " ".join(tile_name(t) for t in tiles)
    return "".join(glyph(t) for t in tiles) + " " + format_tiles(tiles, sort=False)


#: Where a term of the engine's settlement gets its English gloss: 中文 (gloss).
GLOSS: Final = (
    ("three treasure", "三宝 (three treasure tiles)"),
    ("查花猪 flower pig", "查花猪 (flower pig check)"),
    ("查大叫 not ready", "查大叫 (not-ready check)"),
    ("退税 kong money returned", "退税 (kong money returned)"),
    ("撵庄 chasing the dealer", "撵庄 (chasing the dealer)"),
    ("流局 dealer pays", "流局 (drawn hand: the dealer pays)"),
    ("逃跑 escape", "逃跑 (escape)"),
    ("中发白 (concealed)", "中发白 (concealed dragon set)"),
    ("大杠", "大杠 (big kong)"),
    ("旋风杠", "旋风杠 (whirlwind kong)"),
    ("明杠", "明杠 (exposed kong)"),
    ("暗杠", "暗杠 (concealed kong)"),
    ("补杠", "补杠 (added kong)"),
    ("叉宝", "叉宝 (treasure pung)"),
    ("胡", "胡 (win)"),
)
RULE_IDS: Final = re.compile(r"\s*\((?:D\d+(?: [a-z])?(?:, )?)+\)|,\s*D\d+(?: [a-z])?(?=\))")


def gloss(text: str) -> str:
    """An engine's reason as the table writes terms: the Chinese term, its English
    gloss in brackets (``查大叫 not ready`` → ``查大叫 (not-ready check)``)."""
    for term, shown in GLOSS:
        if text == term or text.startswith(term + " "):
            rest = text[len(term) :]
            if term == "大杠":  # the kong's own name follows
                return shown + " " + gloss(rest.strip())
            return shown + rest
    return text


def plain(why: str) -> str:
    """A fan's reason without its rule ids (D16): those are for ``--explain``."""
    return RULE_IDS.sub("", why)


def _seat_name(game: Game, seat: int) -> str:
    return "you" if _you(game, seat) else SEAT_NAMES[seat]


def _you(game: Game, seat: int) -> bool:
    """Whether ``seat`` is called "you": the player's, not a replay's side."""
    return seat == game.seat and not game.named


def _pad(text: str, width: int) -> str:
    """Pad to ``width`` terminal cells (CJK and some glyphs take two)."""
    return text + " " * max(0, width - cell_len(text))


def _meld(meld: Meld, ascii: bool) -> str:
    """A laid meld, the notation after the glyphs; the 旋风杠 keeps its laying order
    (中发白, then additions)."""
    name = format_tiles(meld.tiles, sort=meld.kind is not MeldKind.XUANFENG)
    return name if ascii else "".join(glyph(t) for t in meld.tiles) + name


def _flags(obs: Observation, seat: int) -> str:
    view = obs.seats[seat]
    flags = []
    if seat == obs.dealer:
        flags.append("庄")
    if view.ready:
        flags.append("听")
    if view.que is not None:
        flags.append("缺" + "mps"[view.que])
    if view.piao:
        flags.append(f"漂{view.piao}")
    if view.won:
        flags.append("胡")
    return " ".join(flags)


def _header(game: Game, obs: Observation, ascii: bool) -> Text:
    match = game.match
    rules = match.rules
    parts = [f"{rules.name} {rules.chinese.split()[0]}", game.where(), f"wall {obs.wall}"]
    if obs.treasure is not None:
        parts.append(f"宝 {_face(obs.treasure, ascii)}")
    parts.append(f"seed {game.seed}")
    return Text(" · ".join(parts), style="bold")


def _seat_lines(game: Game, obs: Observation, seat: int, width: int, ascii: bool) -> list[Text]:
    view = obs.seats[seat]
    mover = obs.phase in (Phase.TURN, Phase.FENZHANG) and obs.turn == seat
    open_claim = obs.last_discard is not None and obs.last_discard[0] == seat
    who = ("side" if game.named else "you") if seat == game.seat else game.bot_name
    total = game.before[seat]
    moved = obs.scores[seat]
    score = f"{total:>5}" + (f" {moved:+d}" if moved else "")
    line = Text(">" if mover else " ", style="bold")
    style = MINE if seat == game.seat else ""
    line.append(f" {SEAT_NAMES[seat]:<6}{who:<9}", style=style)
    line.append(_pad(score, 11))
    line.append(_pad(_flags(obs, seat), 15), style="bold")
    melds = [_meld(m, ascii) for m in view.melds]
    melds += ["####" if ascii else BACK * 4 + "####"] * view.hidden_kongs
    line.append(" ".join(melds))
    rows = [line]
    river = Text("      ")
    for i, t in enumerate(view.river):
        last = open_claim and i == len(view.river) - 1
        face = Text(_face(t, ascii), style="reverse" if last else "")
        if river.cell_len + face.cell_len >= width:  # a long river takes another row
            rows.append(river)
            river = Text("      ")
        river.append_text(face)
        river.append(" ")
    if view.revealed is not None and seat != game.seat:
        river.append(" hand " + tiles_text(parse_tiles(format_counts(view.revealed)), ascii))
    return [*rows, river]


def _hand_lines(game: Game, obs: Observation, ascii: bool) -> list[Text]:
    order = game.order(obs)
    if not order:  # 漂 is bet before the deal
        return []
    drawn = obs.drawn is not None
    positions, faces, names = Text("hand  "), Text("      "), Text("      ")
    for i, t in enumerate(order, 1):
        gap = "  " if drawn and i == len(order) else ""
        positions.append(gap + f"{i:<3}", style="dim")
        style = MINE + (" reverse" if drawn and i == len(order) else "")
        if ascii:
            names.append(gap + _pad(tile_name(t), 3), style=style)
        else:
            faces.append(gap + _pad(glyph(t), 3), style=style)
            names.append(gap + _pad(tile_name(t), 3), style="dim")
    return [positions, names] if ascii else [positions, faces, names]


def _label(a: Action, ascii: bool) -> str:
    name = tile_name(a.tile) if a.tile is not None else ""
    kind = a.kind
    if kind is Act.CHI:
        return "吃 chi " + tiles_text(a.run, ascii)
    if kind is Act.QUE:
        return f"缺{SUITS_CN[a.value]} void {'mps'[a.value]}"
    if kind is Act.PIAO:
        return f"漂 {a.value}"
    labels = {
        Act.HU: "胡 win",
        Act.PASS: "过 pass",
        Act.PENG: "碰 peng",
        Act.GANG: "杠 kong",
        Act.AN_GANG: "暗杠 concealed kong",
        Act.BU_GANG: "补杠 added kong",
        Act.XUANFENG: "旋风杠 whirlwind kong 中发白",
        Act.ADD: "补 add to the 旋风杠",
    }
    return f"{labels[kind]} {name}".rstrip()


#: Shown above a win offered in sichuan's last four tiles (D56, D79), before the rule bites.
MUST_WIN: Final = (
    "  the last four tiles: passing this win makes you a 花猪"
    " (16× the base to each seat that is not one)"
)


#: Why a seat holding no 缺 tile is a 花猪 all the same (D56), in the settlement.
PASSED_WIN: Final = "passed a win in the last four tiles: 花猪"


def _title(game: Game, obs: Observation) -> str:
    phase = obs.phase
    if phase is Phase.PIAO:
        return "漂 (bet): yours for this hand, × 底注 (base stake)"
    if phase is Phase.QUE:
        return "定缺 (void suit): the suit you will not keep"
    if obs.last_discard is not None:
        seat, t = obs.last_discard
        verb = "discarded" if phase is Phase.CLAIM else "adds"
        return f"{_seat_name(game, seat)} {verb} {tile_name(t)}: your call"
    if phase is Phase.FENZHANG:
        return "分张 (last tiles): win on the tile you drew?"
    if obs.seats[game.seat].ready or obs.seats[game.seat].won:
        return "your turn (hand locked: 听 ready or 胡 won)"
    return "your turn"


def _action_lines(game: Game, obs: Observation, width: int, ascii: bool) -> list[Text]:
    keys = game.keys(obs)
    items: list[tuple[str, str]] = []
    discards = [k for k in keys if k.action.kind is Act.DISCARD]
    if len(discards) == 1:  # a locked hand: the tile drawn
        only = discards[0]
        position = game.order(obs).index(parse_tiles(only.key)[0]) + 1
        alone = " (or Enter)" if len(keys) == 1 else ""
        items.append((str(position), f"discard {only.key}{alone}"))
    elif discards:
        items.append((f"1-{len(game.order(obs))}", "or a tile (5m): discard"))
    items += [
        (k.key, f"报听 declare ready, discarding {k.key[1:]}")
        for k in keys
        if k.action.kind is Act.READY
    ]
    items += [
        (k.key, _label(k.action, ascii))
        for k in keys
        if k.action.kind not in (Act.DISCARD, Act.READY)
    ]
    items += [("hint", "suggest"), ("help", "keys"), ("q", "quit")]
    lines = [Text(_title(game, obs) + ":", style="bold")]
    if obs.must_win:
        lines.append(Text(MUST_WIN, style="bold red"))
    line = Text("  ")
    for key, label in items:
        item = Text()
        item.append(f" {key} ", style=KEY)
        item.append(f" {label}  ")
        if line.cell_len + item.cell_len > width and line.cell_len > 2:
            lines.append(line)
            line = Text("  ")
        line.append_text(item)
    lines.append(line)
    return lines


def board(
    game: Game,
    log: Sequence[str],
    width: int = 80,
    height: int = 22,
    ascii: bool = False,
    *,
    back: int = 0,
    actions: bool = True,
) -> Text:
    """The table as the player sees it, with the player's hand and (with ``actions``)
    legal actions; the rows that ``height`` leaves over show the log (at least two):
    its latest lines, or ``back`` lines before them (see `log_rows`)."""
    obs = game.observe()
    table = [_header(game, obs, ascii)]
    for seat in range(4):
        table += _seat_lines(game, obs, seat, width, ascii)
    below = _hand_lines(game, obs, ascii)
    if actions and obs.legal:
        below += _action_lines(game, obs, width, ascii)
    rows = log_rows(game, width, height, ascii, actions=actions)
    end = len(log) - min(back, max(0, len(log) - rows))
    shown = list(log[max(0, end - rows) : end])
    if end < len(log):
        shown[-1] = f"-- {len(log) - end} newer lines: PageDown --"
    events = [Text(line, style="dim") for line in [""] * (rows - len(shown)) + shown]
    return Text("\n").join(table + events + below)


def log_rows(game: Game, width: int, height: int, ascii: bool, *, actions: bool = True) -> int:
    """How many rows of the log the table leaves in ``height`` (at least two)."""
    obs = game.observe()
    used = 1 + sum(len(_seat_lines(game, obs, s, width, ascii)) for s in range(4))
    used += len(_hand_lines(game, obs, ascii))
    if actions and obs.legal:
        used += len(_action_lines(game, obs, width, ascii))
    return max(2, height - used)


# --- the log of public events ---------------------------------------------------------


def event_line(game: Game, event: ev.Event) -> str | None:
    """One event of the player's redacted stream (`Game.events`) as a line; None for
    noise (another seat's draw). It prints what the event holds: what the player may
    not know was blanked before it came here."""
    if isinstance(event, ev.Deal):
        return f"hand {game.hands} dealt; " + _does(game, event.dealer, "deal")
    if isinstance(event, ev.Treasure):
        return f"宝 (treasure) indicator: {event.tile}" if event.tile else "no 宝 (treasure) left"
    if isinstance(event, ev.Piao):
        bets = ", ".join(f"{_seat_name(game, s)} {b}" for s, b in enumerate(event.bets))
        return "漂 (bets): " + bets
    if isinstance(event, ev.Que):
        que = ", ".join(f"{_seat_name(game, s)} {q}" for s, q in enumerate(event.suits))
        return "定缺 (void suits): " + que
    if isinstance(event, ev.Draw | ev.Replacement):
        if event.tile is None:
            return None
        how = (
            " (replacement)"
            if isinstance(event, ev.Replacement)
            else (" (分张 last tiles)" if event.fenzhang else "")
        )
        return f"{_does(game, event.seat, 'draw')} {event.tile}{how}"
    if isinstance(event, ev.Discard):
        mine = _you(game, event.seat)
        ready = " and declare" + ("" if mine else "s") + " 报听 (ready)" if event.ready else ""
        return f"{_does(game, event.seat, 'discard')} {event.tile}{ready}"
    if isinstance(event, ev.Call):
        verb = {"chi": "吃 chi", "peng": "碰 peng", "ming_gang": "杠 kong"}[event.kind]
        source = _seat_name(game, event.source)
        return f"{_does(game, event.seat, 'call')} {verb} {event.tiles} from {source}"
    if isinstance(event, ev.Kong):
        if event.kind == "an_gang":
            face = f" of {event.tile}" if event.tile else ""
            return _does(game, event.seat, "make") + " a 暗杠 (concealed kong)" + face
        if event.kind == "xuanfeng":
            return _does(game, event.seat, "lay") + " the 旋风杠 (whirlwind kong) 中发白"
        return None  # a 补杠 or dragon addition was announced by its "add" event
    if isinstance(event, ev.Add):
        what = "补杠 added kong" if event.kind == "bugang" else "to the 旋风杠 whirlwind kong"
        return f"{_does(game, event.seat, 'add')} {event.tile} ({what})"
    if isinstance(event, ev.Robbed):
        whose = "your" if _you(game, event.seat) else f"{SEAT_NAMES[event.seat]}'s"
        return f"{whose} {event.tile} is robbed (抢杠)"
    if isinstance(event, ev.Win):
        how = event.by.replace("_", " ")
        if event.source is not None:
            how += f" from {_seat_name(game, event.source)}"
        fans = ", ".join(event.fans)
        won = f"胡: {_does(game, event.seat, 'win')} on {event.tile} by {how}"
        return won + (f": {fans}" if fans else "")
    if isinstance(event, ev.Payment):
        return f"paid: {gloss(event.text)}"
    if isinstance(event, ev.Fenzhang):
        return "分张 (last tiles): one to each seat"
    if isinstance(event, ev.Exhausted):
        return "流局 (drawn hand): the wall is exhausted"
    if isinstance(event, ev.FlowerPig):
        return f"{_seat_name(game, event.seat)} {PASSED_WIN}"
    return None


def _does(game: Game, seat: int, verb: str) -> str:
    """``you discard``, ``South discards``."""
    return f"you {verb}" if _you(game, seat) else f"{SEAT_NAMES[seat]} {verb}s"


# --- end of a hand, end of the match --------------------------------------------------


def _win_lines(game: Game, result: Score, width: int, ascii: bool) -> list[Text]:
    s = result.situation
    reading = result.reading
    assert reading is not None
    how = s.win_by.value.replace("_", " ")
    if s.source is not None:
        how += f" from {_seat_name(game, s.source)}"
    winner = _seat_name(game, s.winner)
    lines = [
        Text(f"{_does(game, s.winner, 'win')} on {tile_name(s.win_tile)} by {how}", style="bold"),
        Text("  " + _hand(s.seats[s.winner].concealed, (), ascii))
        + Text(f" + {_face(s.win_tile, ascii)}", style="bold")
        + Text(_hand(bytes(34), s.seats[s.winner].melds, ascii)),
    ]
    if reading.tile != s.win_tile:
        stands = f"  the 宝 {tile_name(s.win_tile)} stands in for {tile_name(reading.tile)}"
        lines.append(Text(stands))
    for a in reading.fans:
        times = f"×{a.times} " if a.times > 1 else ""
        fan = f"  {_pad(a.fan.name, 10)}{_pad(a.fan.en, 27)}{a.value:>3}  {times}"
        why = _winners(plain(a.fan.why), winner)
        if cell_len(fan + why) <= width:
            lines.append(Text(fan + why))
        else:
            lines += [Text(fan), Text(f"      {why}", style="dim")]
    if not reading.fans:
        lines.append(Text("  (no fans)"))
    for p in reading.payers:
        own = "".join(f" + {a.fan.name} {a.value}" for a in p.fans[len(reading.fans) :])
        whose = "" if s.winner == game.seat else f"{winner}'s "
        lines.append(
            Text(
                f"  {_pad(_does(game, p.seat, 'pay'), 12)} {p.amount:>4}:"
                f" N = {whose}{sum(a.value for a in reading.fans)}{own} = {p.total}" + capped(s, p)
            )
        )
    for t in result.piao:
        lines.append(Text(f"  漂 (bet): {_does(game, t.payer, 'pay')} {t.amount}"))
    return lines


def _winners(why: str, winner: str) -> str:
    """A winner's fan reason with the winner named: ``won on a tile it drew`` → ``won on
    a tile West drew``, ``its own`` → ``your own``."""
    whose = "your" if winner == "you" else f"{winner}'s"
    return re.sub(r"\bits\b", whose, re.sub(r"\bit drew\b", f"{winner} drew", why))


def capped(s: Situation, p: Payment) -> str:
    """Why a payment is not 底注 × 2^N: a flat payment, or the cap 封顶 (D39, D51)."""
    if any(a.fan.flat is not None for a in p.fans):
        return " (a flat payment)"
    cap = cap_of(s, p)
    if cap is None:
        return ""
    base = effective_base(s.options, s.base)
    if cap.fans is not None:
        return f" · 封顶 (cap) at {cap.fans} fans: 2^{cap.fans} × {base}"
    return f" · 2^{p.total} × {base} = {cap.uncapped}, 封顶 (cap) {cap.coins}"


def _hand(concealed: bytes, melds: Sequence[Meld], ascii: bool) -> str:
    hand = tiles_text(parse_tiles(format_counts(concealed)), ascii)
    return hand + "".join(f"  {_meld(m, ascii)}" for m in melds)


def _row(label: str, values: Sequence[int], signed: bool = True) -> Text:
    cells = "".join(f"{v:>+8d}" if signed and v else f"{v:>8d}" for v in values)
    return Text(_pad(f"  {label}", 30) + cells)


def _reason(game: Game, reason: str) -> str:
    """The engine's ``胡 seat 2`` as ``胡 West``."""
    head, _, seat = reason.rpartition(" seat ")
    return f"{head} {_seat_name(game, int(seat))}" if head and seat.isdigit() else reason


def settlement(game: Game, width: int = 80, ascii: bool = False, footer: str | None = None) -> Text:
    """The hand's settlement: each win's fans and payers, every item, fees, totals, and
    every seat's hand laid open; ``footer`` (default: what Enter does next) last."""
    r = game.round
    s = r.settlement
    assert s is not None
    ends = {"win": "won", "draw": "drawn (流局)", "escape": "abandoned"}
    lines = [Text(f"hand {game.hands} {ends.get(s['end'], s['end'])}", style="bold reverse")]
    for result in r.win_scores:
        lines += _win_lines(game, result, width, ascii)
    names = "".join(f"{_seat_name(game, i):>8}" for i in range(4))
    lines.append(Text(_pad("", 30) + names, style="bold"))
    for item in s["items"]:
        lines.append(_row(gloss(_reason(game, item["reason"])), item["deltas"]))
    for seat in sorted(r.flower_pigs):  # the cause of a 查花猪 that no suit explains
        lines.append(Text(f"  {_seat_name(game, seat)} {PASSED_WIN}", style="dim"))
    if any(s["fees"]):
        lines.append(_row("台费 (service fee)", [-f for f in s["fees"]]))
    lines.append(_row("this hand", s["total"]))
    lines.append(_row("running total", game.match.scores, signed=False))
    for seat in range(4):
        if seat not in r.won:
            hand = _hand(r.revealed(seat), r.melds[seat], ascii)
            lines.append(Text(f"  {_pad(_seat_name(game, seat), 6)} {hand}", style="dim"))
    if game.record is not None:
        lines.append(Text(f"record: {game.record}"))
    if game.save_error:
        lines.append(Text(game.save_error, style=ERROR))
    if footer is None:
        after = (
            "the final standings"
            if game.match.over
            else f"the next hand ({_does(game, game.match.dealer, 'deal')})"
        )
        footer = f"Enter: {after}"
    lines.append(Text(footer, style=KEY))
    return Text("\n").join(lines)


def standings(game: Game) -> Text:
    """The final standings of the match."""
    match = game.match
    lines = [
        Text(
            f"match over: {match.rules.name}, {match.quan} 圈 (round{_s(match.quan)}),"
            f" {game.hands} hands,"
            f" seed {game.seed}",
            style="bold",
        )
    ]
    ranked = sorted(range(4), key=lambda s: -match.scores[s])
    for place, seat in enumerate(ranked, 1):
        who = "you" if seat == game.seat else game.bot_name
        style = MINE if seat == game.seat else ""
        lines.append(
            Text(f"  {place}. {SEAT_NAMES[seat]:<6} {who:<9}{match.scores[seat]:>+8d}", style=style)
        )
    where = game.saved[-1].parent if game.saved else default_records()
    lines.append(Text(f"records: {len(game.saved)} hands in {where}"))
    if game.saved:
        lines.append(Text("see the last hand again, step by step (after you quit):"))
        lines.append(Text(f"  {replay_command(game.saved[-1])}"))
    lines.append(Text("Enter: exit", style=KEY))
    return Text("\n").join(lines)


def _s(n: int) -> str:
    return "s" if n != 1 else ""


def help_text() -> Text:
    return Text(HELP)
