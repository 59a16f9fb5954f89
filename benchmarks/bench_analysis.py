"""Hand analysis throughput: fangcheng against the ``mahjong`` package, side by side.

    .venv/bin/python benchmarks/bench_analysis.py [--hands N] [--seed S] [--repeat R]

Builds three fixed, seeded sets of 14-tile hands (random from 136 tiles, random from the
108 suit tiles, and near-complete: a complete hand with 0-2 tiles replaced) and their
13-tile versions (one tile removed), then times, in this one process, each library on
the same hands, each fed its own native format: fangcheng ``bytes`` of 34 counts,
``mahjong`` a list of 34 counts. ``mahjong`` has no waits function, so its waits are
the usual 34 ``Agari.is_agari`` probes. Each figure is the best of ``--repeat`` runs, the
two libraries timed in turn, in this process's CPU time (other work on the machine does
not count).

Before timing, every hand is checked for agreement: standard-form shanten
(``calculate_shanten_for_regular_hand``) and the win check must match exactly.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from collections.abc import Callable, Sequence

from mahjong.agari import Agari
from mahjong.shanten import Shanten

import fangcheng
from fangcheng.analysis.hand import shanten_standard

Hand = bytes


def random_hands(rng: random.Random, faces: range, n: int) -> list[Hand]:
    wall = [t for t in faces for _ in range(4)]
    out = []
    for _ in range(n):
        counts = [0] * 34
        for t in rng.sample(wall, 14):
            counts[t] += 1
        out.append(bytes(counts))
    return out


def complete_hand(rng: random.Random) -> list[int]:
    while True:
        counts = [0] * 34
        for _ in range(4):
            if rng.random() < 0.4:
                t = rng.randrange(34)
                counts[t] += 3
            else:
                t = rng.randrange(3) * 9 + rng.randrange(7)
                for x in (t, t + 1, t + 2):
                    counts[x] += 1
        counts[rng.randrange(34)] += 2
        if max(counts) <= 4:
            return counts


def near_complete_hands(rng: random.Random, n: int) -> list[Hand]:
    out = []
    for _ in range(n):
        counts = complete_hand(rng)
        for _ in range(rng.randrange(3)):
            held = [t for t in range(34) for _ in range(counts[t])]
            old, new = rng.choice(held), rng.randrange(34)
            if new != old and counts[new] < 4:
                counts[old] -= 1
                counts[new] += 1
        out.append(bytes(counts))
    return out


def drop_one(rng: random.Random, hands: Sequence[Hand]) -> list[Hand]:
    out = []
    for h in hands:
        counts = bytearray(h)
        counts[rng.choice([t for t in range(34) if counts[t]])] -= 1
        out.append(bytes(counts))
    return out


def mahjong_waits(counts: list[int]) -> list[int]:
    found = []
    for t in range(34):
        if counts[t] < 4:
            counts[t] += 1
            if Agari.is_agari(counts):
                found.append(t)
            counts[t] -= 1
    return found


def rate(func: Callable[[object], object], hands: Sequence[object]) -> float:
    start = time.process_time()
    for h in hands:
        func(h)
    return len(hands) / (time.process_time() - start)


def best_rates(
    ours: Callable[[object], object],
    our_hands: Sequence[object],
    peer: Callable[[object], object],
    peer_hands: Sequence[object],
    repeat: int,
) -> tuple[float, float]:
    """The best rate of each library over ``repeat`` rounds, the two timed in turn within
    each round, so a change in the machine's speed touches both alike."""
    best = (0.0, 0.0)
    for _ in range(repeat):
        best = (max(best[0], rate(ours, our_hands)), max(best[1], rate(peer, peer_hands)))
    return best


def check_agreement(sets: dict[str, tuple[list[Hand], list[Hand]]]) -> int:
    checked = 0
    for name, (h14, h13) in sets.items():
        for h in h14 + h13:
            ours = shanten_standard(h)
            theirs = Shanten.calculate_shanten_for_regular_hand(list(h))
            if ours != theirs:
                sys.exit(
                    f"{name}: shanten differs on {fangcheng.format_counts(h)}: {ours} vs {theirs}"
                )
            checked += 1
        for h in h14:
            ours_win = fangcheng.is_win(h)
            if ours_win != Agari.is_agari(list(h)):
                sys.exit(f"{name}: win check differs on {fangcheng.format_counts(h)}")
            checked += 1
    return checked


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hands", type=int, default=20_000, help="hands per set (default 20000)")
    parser.add_argument("--seed", type=int, default=20261129)
    parser.add_argument("--repeat", type=int, default=3, help="timed runs, best kept")
    args = parser.parse_args()

    rng = random.Random(args.seed)
    sets: dict[str, tuple[list[Hand], list[Hand]]] = {}
    for name, hands in (
        ("random 136", random_hands(rng, range(34), args.hands)),
        ("random 108 suits", random_hands(rng, range(27), args.hands)),
        ("near-complete", near_complete_hands(rng, args.hands)),
    ):
        sets[name] = (hands, drop_one(rng, hands))

    checked = check_agreement(sets)
    print(f"agreement: {checked:,} checks of standard shanten and win check, all equal")
    print(f"python {sys.version.split()[0]}, {args.hands:,} hands per set, best of {args.repeat}")
    print()
    header = f"{'task':<16}{'hand set':<18}{'fangcheng/s':>14}{'mahjong/s':>14}{'ratio':>8}"
    print(header)
    print("-" * len(header))
    for name, (h14, h13) in sets.items():
        l14 = [list(h) for h in h14]
        l13 = [list(h) for h in h13]
        rows = (
            ("win check", fangcheng.is_win, h14, Agari.is_agari, l14),
            ("shanten (13)", fangcheng.shanten, h13, Shanten.calculate_shanten, l13),
            ("waits (13)", fangcheng.waits, h13, mahjong_waits, l13),
        )
        for task, ours, our_hands, peer, peer_hands in rows:
            ours_rate, peer_rate = best_rates(
                ours,  # type: ignore[arg-type]
                our_hands,
                peer,  # type: ignore[arg-type]
                peer_hands,
                args.repeat,
            )
            print(
                f"{task:<16}{name:<18}{ours_rate:>14,.0f}{peer_rate:>14,.0f}"
                f"{ours_rate / peer_rate:>7.1f}x"
            )


if __name__ == "__main__":
    main()
