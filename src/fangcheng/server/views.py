"""What a seat (or a spectator) is shown of a hand, as JSON-able values.

A seat's observation is the engine's redaction (`Round.observe`); a spectator's is
assembled from the seats' *public* parts only: each seat's view as another seat sees it,
no concealed tiles, no legal actions. Tiles are in notation at this edge.
"""

from __future__ import annotations

from typing import Any

from fangcheng.engine import Round
from fangcheng.protocol import Observation, SeatView
from fangcheng.tiles.melds import Meld
from fangcheng.tiles.notation import format_counts, format_tiles, tile_name

__all__ = ["observation_json", "public_json"]


def _meld(m: Meld) -> dict[str, Any]:
    return {"kind": m.kind.value, "tiles": format_tiles(m.tiles, sort=False), "from": m.source}


def _seat(view: SeatView) -> dict[str, Any]:
    return {
        "melds": [_meld(m) for m in view.melds],
        "hidden_kongs": view.hidden_kongs,
        "river": format_tiles(view.river, sort=False),
        "concealed": view.concealed,
        "ready": view.ready,
        "que": None if view.que is None else "mps"[view.que],
        "won": view.won,
        "piao": view.piao,
        "revealed": None if view.revealed is None else format_counts(view.revealed),
    }


def _tile(t: int | None) -> str | None:
    return None if t is None else tile_name(t)


def observation_json(obs: Observation) -> dict[str, Any]:
    """The observation of docs/protocol.md ("The observation in JSON")."""
    return {
        "seat": obs.seat,
        "rules": obs.rules.name,
        "phase": obs.phase.value,
        "dealer": obs.dealer,
        "turn": obs.turn,
        "base": obs.base,
        "wall": obs.wall,
        "treasure": _tile(obs.treasure),
        "retired": format_tiles(obs.retired, sort=False),
        "hand": format_counts(obs.hand),
        "drawn": _tile(obs.drawn),
        "seats": [_seat(v) for v in obs.seats],
        "scores": list(obs.scores),
        "last_discard": None
        if obs.last_discard is None
        else [obs.last_discard[0], tile_name(obs.last_discard[1])],
        "legal": [str(a) for a in obs.legal],
        "must_win": obs.must_win,
    }


def public_json(round_: Round) -> dict[str, Any]:
    """A spectator's observation: every seat as the other seats see it (seat 0 as seat
    1 does), no hand, no drawn tile, no legal actions."""
    base = round_.observe(0)
    seats = (round_.observe(1).seats[0], *base.seats[1:])
    view = observation_json(base._replace(seats=seats, legal=(), must_win=False, drawn=None))
    view.update(seat=None, hand="")
    return view
