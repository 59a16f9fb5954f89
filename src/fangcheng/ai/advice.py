"""A hint for one decision: the expert bot's choice and why, from one observation.

The terminal game's ``hint`` and the table server's ``hint`` frame both ask `advise`.
It receives the seat's `Observation` and nothing else (a generator and a budget), so a
hint cannot use what the seat may not know: two tables that differ only in the others'
concealed tiles or the wall give the same hint. The reason names only the seat's own
tiles and public ones: the waits and their unseen copies when ready, else the shanten
and the useful tiles unseen, a discard's chance of dealing in when another seat may be
ready (the strong bot's measures), a call's by the hand after it, and, where the
expert's playouts overruled the strong bot, the strong bot's choice.
"""

from __future__ import annotations

import random
from typing import Final

from fangcheng.ai.expert import TABLE_CPU, TABLE_PLAYOUTS, ExpertBot
from fangcheng.analysis.hand import shanten
from fangcheng.players.bots import StrongBot, table_of
from fangcheng.protocol.actions import Act, Action, called_meld
from fangcheng.protocol.observation import Observation
from fangcheng.rules.requirements import wait_set
from fangcheng.tiles.melds import Meld, MeldKind
from fangcheng.tiles.notation import KINDS, SUITS, format_tiles, tile_name

__all__ = ["SEAT_NAMES", "advise", "measures"]

SEAT_NAMES: Final = ("East", "South", "West", "North")
_CALLS: Final = frozenset({Act.CHI, Act.PENG, Act.GANG})
#: What a hint says of the actions it does not measure a hand for.
_SAID: Final = {
    Act.HU: "胡: a win",
    Act.XUANFENG: "旋风杠 money (中发白 laid), and a replacement draw",
    Act.ADD: "a dragon added to the 旋风杠: its money, and a replacement draw",
    Act.PIAO: "漂: the bet the strong bot makes (the search does not value bets)",
}


def advise(
    obs: Observation,
    rng: random.Random,
    playouts: int = TABLE_PLAYOUTS,
    strong: StrongBot | None = None,
    deadline: float | None = None,
    cpu: float | None = TABLE_CPU,
) -> tuple[Action, str]:
    """The expert's choice at ``obs`` (``playouts`` per decision, drawn from ``rng``) and
    why: the measures of `measures`, and the strong bot's own choice where the playouts
    overruled it. ``strong``: a strong bot that has tracked the hand (the terminal's),
    else a fresh one reads the observation alone. ``deadline``: the `time.monotonic`
    time by which the search must be done, and ``cpu`` the CPU seconds it may take, else
    the strong bot's choice is given (and the reason says so)."""
    strong = strong or StrongBot(random.Random(0))
    strong.rng = random.Random(rng.getrandbits(64))  # its ties broken alike each time
    plain = strong.act(obs)
    expert = ExpertBot(rng, playouts=playouts, cpu=cpu)
    # the table as the adviser read it: the faces each seat let pass, which the expert's
    # worlds keep out of the others' waits (a fresh reading would see only this moment)
    expert.strong.follow(strong)
    action = expert.act(obs, deadline)
    why = measures(obs, action, strong)
    said = ""
    if expert.late:
        said = "no time to search: the strong bot's choice"
    elif action != plain:
        said = f"{playouts} playouts chose it over the strong bot's {plain}"
    if said:
        why = f"{why} · {said}" if why else said
    return action, why


def measures(obs: Observation, action: Action, bot: StrongBot) -> str:
    """Why ``action``, by ``bot``'s measures of the hand it leaves: the waits and their
    unseen tiles when ready, else the shanten and the useful tiles unseen; for a
    discard, its chance of dealing in when another seat may be ready. A call (吃, 碰, 杠
    on a discard) is measured by the hand after it and, but for a kong, the discard the
    strong bot would make then; a discard win passed says why (sichuan's self-draw, paid
    by every seat still playing). A kong of one's own says it is paid for and measures
    the hand before its replacement draw; a 旋风杠 or its addition, a win, 漂 and 定缺
    say what they are."""
    table = table_of(obs)
    h, melds = bytearray(obs.hand), list(table.melds)
    said: list[str] = []
    kind = action.kind
    if kind in _SAID:
        return _SAID[kind]
    if kind is Act.QUE:
        count = sum(obs.hand[9 * action.value : 9 * action.value + 9])
        return f"缺 {SUITS[action.value]}: {count} tiles of it to shed first"
    if kind in (Act.AN_GANG, Act.BU_GANG) and action.tile is not None:
        said.append("kong money, and a replacement draw")
        h[action.tile] -= 4 if kind is Act.AN_GANG else 1
        if kind is Act.AN_GANG:
            melds.append(Meld(MeldKind.AN_GANG, (action.tile,) * 4))
    elif kind in _CALLS and obs.last_discard is not None:
        source, tile = obs.last_discard
        meld, used = called_meld(action, tile, source)
        for t in used:
            h[t] -= 1
        melds.append(meld)
        if kind is not Act.GANG:  # a discard follows the call
            held = [Action(Act.DISCARD, t) for t in range(KINDS) if h[t]]
            faces = bot.discard_faces(table, held)  # 缺 tiles first
            then = bot.ranked(table, bytes(h), melds, faces)[0][2]
            h[then] -= 1
            said.append(f"then discard {tile_name(then)}")
    elif kind is Act.PASS and any(a.kind is Act.HU for a in obs.legal):
        passed = "a discard win passed"
        if table.rules.discarder_only and table.rules.unfinished_pay_self_draw:
            passed += " for a self-draw, which every seat still playing pays"
        said.append(passed)
    discard = action.kind in (Act.DISCARD, Act.READY) and action.tile is not None
    if discard and action.tile is not None:
        h[action.tile] -= 1
    hand = bytes(h)
    if sum(hand) % 3 != 1:  # 14 - 3k tiles: a win or a kong is the suggestion
        return ""
    rules, unseen = table.rules, table.unseen
    n = shanten(hand, shapes=rules.shapes)
    waits = wait_set(rules, hand, melds, table.que) if n == 0 else ()
    if waits:
        live = sum(unseen[w] for w in waits)
        shown = " ".join(f"{tile_name(w)}×{unseen[w]}" for w in waits)
        said.append(f"听 ready: waits {shown} ({live} unseen)")
    else:
        d = bot.distance(table, hand, melds)
        useful = bot.useful_faces(table, hand, melds, d)
        count = sum(unseen[t] for t in useful)
        shown = format_tiles(t for t in useful if unseen[t])
        extra = f" ({d} with the win requirements)" if d != n else ""
        said += [f"向听 (shanten) {n}{extra}", f"{count} useful tiles unseen: {shown or 'none'}"]
    threat = bot.threats(obs)
    if discard and action.tile is not None and max(threat) > 0:
        risk = bot.danger(table, action.tile, threat)
        ready = [SEAT_NAMES[s] for s, p in enumerate(threat) if p >= 1.0]
        told = f", {' '.join(ready)} 报听" if ready else ""
        said.append(f"danger {risk:.0%} (deal-in risk{told})")
    return " · ".join(said)
