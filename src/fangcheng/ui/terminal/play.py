"""The ``fangcheng play`` command: its arguments, and a match run on the terminal table
(`fangcheng.ui.terminal.game` plays it, `view` draws it, `app` runs it with Textual)."""

from __future__ import annotations

import argparse
import os
import random
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

from fangcheng.ai.advice import SEAT_NAMES
from fangcheng.players.bots import BOTS, bot_kind
from fangcheng.rules.ruleset import ALL_RULES
from fangcheng.scoring.situation import MAX_BASE
from fangcheng.ui.terminal.game import Game, default_records, replay_command

__all__ = ["build_parser", "glyphs_likely", "main"]


def glyphs_likely(env: Mapping[str, str], encoding: str | None) -> bool:
    """Whether the terminal can be expected to draw the mahjong glyphs: not a console
    with a fixed font (the Linux console, a dumb terminal), not a non-UTF-8 locale.
    (No terminal reports its font; the first screen also offers ``ascii``.)"""
    if env.get("TERM", "") in ("linux", "dumb", "vt100", "vt220"):
        return False
    return (encoding or "").lower().replace("-", "") in ("utf8", "utf16")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="fangcheng play",
        description="Play a match against three bots in the terminal (keyboard only).",
    )
    parser.add_argument(
        "--rules", default="baicheng", choices=[r.name for r in ALL_RULES], help="the rule set"
    )
    parser.add_argument(
        "--seat", type=int, default=0, choices=range(4), help="your seat: 0 E, 1 S, 2 W, 3 N"
    )
    parser.add_argument(
        "--bots",
        default="strong",
        type=bot_kind,
        help=f"the three bots: {', '.join(BOTS)}; expert@N: N playouts a decision",
    )
    parser.add_argument("--seed", type=int, help="the match seed (default: random, shown)")
    parser.add_argument("--base", type=int, default=1, help="底注 (base stake)")
    parser.add_argument(
        "--quan", type=int, default=1, help="圈 (rounds of deals) to play: default 1; 4 make a 局"
    )
    parser.add_argument(
        "--speed",
        type=float,
        default=0.4,
        metavar="SECONDS",
        help="the pause after each bot move (default 0.4; 0: at once)",
    )
    parser.add_argument(
        "--ascii",
        action="store_true",
        help="tiles as notation only (glyphs otherwise, the notation beside them)",
    )
    parser.add_argument("--no-color", action="store_true", help="no colours")
    parser.add_argument("--records", type=Path, help="where hand records go")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if args.quan < 1 or not 1 <= args.base <= MAX_BASE or args.speed < 0:
        print(
            f"fangcheng play: --quan must be at least 1, --base 1..{MAX_BASE},"
            " --speed not negative",
            file=sys.stderr,
        )
        return 2
    try:
        from fangcheng.ui.terminal.app import PlayApp
    except ModuleNotFoundError as exc:
        print(f"fangcheng play needs {exc.name}: pip install 'fangcheng[play]'", file=sys.stderr)
        return 2
    if not sys.stdout.isatty():
        print("fangcheng play needs a terminal", file=sys.stderr)
        return 2
    seed = args.seed if args.seed is not None else random.SystemRandom().randrange(10**6)
    game = Game(
        args.rules,
        seat=args.seat,
        bots=args.bots,
        seed=seed,
        base=args.base,
        quan=args.quan,
        records=args.records or default_records(),
        paced=args.speed > 0,
    )
    ascii = args.ascii or not glyphs_likely(os.environ, sys.stdout.encoding)
    PlayApp(game, ascii=ascii, color=not args.no_color, pace=args.speed).run()
    game.quit()
    for path in game.saved:
        print(f"record: {path}")
    if game.saved:
        print(f"see a hand again: {replay_command(game.saved[-1])}")
    scores = ", ".join(f"{SEAT_NAMES[s]} {v:+d}" for s, v in enumerate(game.match.scores))
    hands = f"{game.hands} hand" + ("s" if game.hands > 1 else "")
    print(f"{game.rules} seed {seed}, {hands}: {scores}")
    return 0
