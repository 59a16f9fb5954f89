"""Scoring throughput: wins scored per second, next to ``mahjong``'s riichi scorer.

    .venv/bin/python benchmarks/bench_scoring.py [--repeat R] [--rounds N]

Scores every golden case of ``tests/cases`` (all four rule sets: decomposition, win
requirements, fan evaluation, payments, kongs and fees) ``--rounds`` times per run and
reports the best of ``--repeat`` runs. For scale, the same number of riichi hands go
through ``mahjong``'s ``HandCalculator.estimate_hand_value`` (a pure-Python scorer).
The issue's target is 20,000 wins/s on one core.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from mahjong.hand_calculating.hand import HandCalculator
from mahjong.tile import TilesConverter

from fangcheng.scoring.scorer import score
from fangcheng.scoring.situation import Situation, load_situation

CASES = Path(__file__).resolve().parent.parent / "tests" / "cases"
#: Complete riichi hands (man, pin, sou, honours); each wins on its last tile.
RIICHI_HANDS = (
    ("123456789", "123", "55", ""),
    ("234567", "234", "234", "77"),
    ("11123456789999", "", "", ""),
    ("123456", "456", "789", "11"),
    ("22", "345678", "666789", ""),
)


def situations() -> list[Situation]:
    out = []
    for path in sorted(CASES.glob("*.json")):
        data = json.loads(path.read_text(encoding="utf-8"))
        out.append(load_situation(data))
    return out


def best_rate(run: object, count: int, repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.process_time()
        run()  # type: ignore[operator]
        best = min(best, time.process_time() - start)
    return count / best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--rounds", type=int, default=400)
    args = parser.parse_args()
    wins = situations()

    def ours() -> None:
        for _ in range(args.rounds):
            for s in wins:
                score(s)

    calculator = HandCalculator()
    riichi = []
    for man, pin, sou, honors in RIICHI_HANDS:
        tiles = TilesConverter.string_to_136_array(man=man, pin=pin, sou=sou, honors=honors)
        riichi.append((tiles, tiles[-1]))

    def theirs() -> None:
        per_hand = args.rounds * len(wins) // len(riichi)
        for _ in range(per_hand):
            for tiles, win_tile in riichi:
                calculator.estimate_hand_value(tiles, win_tile)

    rate = best_rate(ours, args.rounds * len(wins), args.repeat)
    print(f"fangcheng score(): {rate:10,.0f} wins/s over {len(wins)} golden cases")
    reference = best_rate(theirs, args.rounds * len(wins) // len(riichi) * len(riichi), 3)
    print(f"mahjong estimate_hand_value: {reference:10,.0f} hands/s (riichi, for scale)")


if __name__ == "__main__":
    main()
