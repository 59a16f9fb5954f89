"""Scoring one win, beside riichienv's Rust scorer and ``mahjong``'s Python one.

    .venv/bin/python benchmarks/bench_scoring.py [--repeat R] [--random N] [--profile]

Our wins are every winning situation of the golden corpus (``tests/golden/scoring.jsonl.gz``:
the wins the engine scored in bot games of all four rule sets, and seeded variations of
them) and the hand-written golden cases of ``tests/cases``; each is scored whole by
`score` (the best reading, every payer's fans and coins, kongs, 漂 and fees). The
peers score riichi wins: five discard wins (riichi-shaped hands, won on their last tile)
and ``--random`` random closed self-drawn wins, riichienv 0.4.11 by
``HandEvaluator(tiles).calc`` (decomposition, yaku, fu and points) and ``mahjong``
2.1.0 by ``HandCalculator.estimate_hand_value``.

Every contender scores its whole set once per round, the rounds taking turns in one
process (process CPU time, so other work on the machine does not count, though it still
slows what is measured); a contender's figure is its best round, and each ratio is of
two best rounds of the same run. The scorer keeps the legal readings of a hand it has
seen and the facts of its tiles (`fangcheng.rules.requirements.legal_win`): ``warm`` is
the rounds after the first, as a long-running engine or bot meets wins, ``cold`` the same
with the memos emptied before each round (`RuleSet.forget`), so that every win is new to
it.
"""

from __future__ import annotations

import argparse
import cProfile
import gzip
import json
import pstats
import random
import time
from collections.abc import Callable
from pathlib import Path

from fangcheng.scoring.scorer import score
from fangcheng.scoring.situation import Situation, load_situation

TESTS = Path(__file__).resolve().parent.parent / "tests"
#: Complete riichi hands (man, pin, sou, honours); each wins on its last tile.
RIICHI_HANDS = (
    ("123456789", "123", "55", ""),
    ("234567", "234", "234", "77"),
    ("11123456789999", "", "", ""),
    ("123456", "456", "789", "11"),
    ("22", "345678", "666789", ""),
)


def our_wins() -> list[Situation]:
    """The golden corpus's winning situations, then the golden cases."""
    out = []
    with gzip.open(TESTS / "golden" / "scoring.jsonl.gz", "rt", encoding="utf-8") as lines:
        for line in lines:
            entry = json.loads(line)
            if entry["output"].get("win"):
                out.append(load_situation(entry["input"]))
    for path in sorted((TESTS / "cases").glob("*.json")):
        out.append(load_situation(json.loads(path.read_text(encoding="utf-8"))))
    return out


def random_closed_win(rng: random.Random) -> list[int]:
    """Fourteen tile ids (136 format) of a closed complete hand: four melds and a pair,
    no face above four copies; the last tile is the one won on."""
    while True:
        counts = [0] * 34
        for _ in range(4):
            if rng.random() < 0.6:
                suit, start = rng.randrange(3), rng.randrange(7)
                for t in range(9 * suit + start, 9 * suit + start + 3):
                    counts[t] += 1
            else:
                counts[rng.randrange(34)] += 3
        counts[rng.randrange(34)] += 2
        if max(counts) <= 4:
            break
    tiles = [4 * face + copy for face, n in enumerate(counts) for copy in range(n)]
    rng.shuffle(tiles)
    return tiles


def riichi_wins(count: int, seed: int) -> list[tuple[list[int], bool]]:
    """The five discard wins, then ``count`` random closed self-drawn wins: (tiles, tsumo)."""
    from mahjong.tile import TilesConverter

    out = [
        (TilesConverter.string_to_136_array(man=m, pin=p, sou=s, honors=z), False)
        for m, p, s, z in RIICHI_HANDS
    ]
    rng = random.Random(seed)
    return out + [(random_closed_win(rng), True) for _ in range(count)]


def contenders(
    wins: list[Situation], riichi: list[tuple[list[int], bool]]
) -> dict[str, tuple[Callable[[], object], int]]:
    """Each contender's round (a callable) and how many wins it scores."""

    def ours() -> None:
        for s in wins:
            score(s)

    tables = {id(s.rules): s.rules for s in wins}.values()  # presets, and those with options

    def forget() -> None:
        for rules in tables:
            rules.forget()

    out: dict[str, tuple[Callable[[], object], int]] = {
        "fangcheng score, warm": (ours, len(wins)),
        "fangcheng score, cold": ((forget, ours), len(wins)),  # type: ignore[dict-item]
    }
    try:
        from riichienv import _riichienv as rc
    except ImportError:
        print("riichienv not installed (pip install '.[bench]')")
    else:
        ron, tsumo = rc.Conditions(), rc.Conditions(tsumo=True)
        split = [(tiles[:13], tiles[13], tsumo if drawn else ron) for tiles, drawn in riichi]

        def riichienv() -> None:
            for hand, tile, conditions in split:
                rc.HandEvaluator(hand, []).calc(tile, [], [], conditions)

        out["riichienv HandEvaluator.calc"] = (riichienv, len(split))
    from mahjong.hand_calculating.hand import HandCalculator
    from mahjong.hand_calculating.hand_config import HandConfig

    calculator = HandCalculator()
    configs = {False: HandConfig(), True: HandConfig(is_tsumo=True)}
    whole = [(tiles, tiles[13], configs[drawn]) for tiles, drawn in riichi]

    def mahjong() -> None:
        for tiles, tile, config in whole:
            calculator.estimate_hand_value(tiles, tile, config=config)

    out["mahjong estimate_hand_value"] = (mahjong, len(whole))
    return out


def timed(run: object) -> float:
    """Process CPU seconds of one round; a (prepare, run) pair times ``run`` alone."""
    if isinstance(run, tuple):
        prepare, run = run
        prepare()
    start = time.process_time()
    run()  # type: ignore[operator]
    return time.process_time() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=7, help="rounds (default 7)")
    parser.add_argument("--random", type=int, default=2000, help="random riichi wins")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--profile", action="store_true", help="profile our rounds instead")
    args = parser.parse_args()
    wins = our_wins()
    if args.profile:
        profile = cProfile.Profile()
        profile.runcall(lambda: [score(s) for _ in range(args.repeat) for s in wins])
        pstats.Stats(profile).sort_stats("tottime").print_stats(25)
        return
    cases = contenders(wins, riichi_wins(args.random, args.seed))
    for run, _ in cases.values():  # a first round unmeasured: imports, tables, the memo
        timed(run)
    best = dict.fromkeys(cases, float("inf"))
    for _ in range(args.repeat):  # the contenders in turn in each round, as the machine drifts
        for name, (run, count) in cases.items():
            best[name] = min(best[name], timed(run) / count)
    print(f"best of {args.repeat} rounds, process CPU time; {len(wins)} wins of ours,")
    print(f"{args.random + len(RIICHI_HANDS)} riichi wins for the peers")
    print(f"{'':<30}{'µs/win':>8}{'vs riichienv':>14}{'vs mahjong':>12}")
    peer = best.get("riichienv HandEvaluator.calc")
    slow = best["mahjong estimate_hand_value"]
    for name, each in best.items():
        versus = f"{peer / each:>13.2f}x" if peer else f"{'':>14}"
        print(f"{name:<30}{each * 1e6:>8.2f}{versus}{slow / each:>11.2f}x")


if __name__ == "__main__":
    main()
