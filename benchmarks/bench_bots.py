"""Bot strength and speed against the targets of issue 5.

    .venv/bin/python benchmarks/bench_bots.py [--hands N] [--duplicate-hands M]
        [--speed-hands K] [--repeat R] [--rules NAME ...] [--workers W] [--seed S]

A count of 0 leaves its section out (``--hands 0 --duplicate-hands 0`` times the bots only).

1. ``efficient`` against three ``random``: its mean score per hand with the 95% interval
   (target: positive, the interval excluding zero, over 10,000 hands per rule set).
2. ``strong`` against three ``efficient`` in duplicate mode: strong's mean minus
   efficient's, paired by wall, with the 95% interval (target: above zero). The edge is
   about one coin per hand against a spread of tens, so the interval needs thousands of
   hands to exclude zero (baishan, whose uncapped fans spread widest, ten thousand).
3. Throughput on one core: four ``efficient`` seats (target ≥ 100 hands/s) and one
   ``strong`` seat with three ``efficient`` (target ≥ 5 hands/s), timed in this
   process's CPU time (other work on the machine does not count), the best of
   ``--repeat`` runs.
"""

from __future__ import annotations

import argparse
import time

from fangcheng.ai.sim import simulate
from fangcheng.rules.ruleset import ALL_RULES


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hands", type=int, default=2000, help="efficient vs random hands")
    parser.add_argument("--duplicate-hands", type=int, default=2400, help="strong vs efficient")
    parser.add_argument("--speed-hands", type=int, default=100)
    parser.add_argument("--repeat", type=int, default=2, help="speed runs; the best counts")
    parser.add_argument("--rules", nargs="*", default=[r.name for r in ALL_RULES])
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()

    if args.hands:
        strength(args)
    if args.duplicate_hands:
        duplicate(args)
    if args.speed_hands:
        speed(args)


def strength(args: argparse.Namespace) -> None:
    print(f"1. efficient vs 3 random, {args.hands} hands: efficient's score/hand (95% CI)")
    for rules in args.rules:
        s = simulate(rules, args.hands, ["efficient", "random", "random", "random"],
                     seed=args.seed, workers=args.workers)  # fmt: skip
        e = s.seats[0]
        print(f"   {rules:<18}{e.mean:+9.2f} ± {e.ci:6.2f}   win {e.win_rate:.1%}"
              f"   deal-in {e.deal_in_rate:.1%}")  # fmt: skip


def duplicate(args: argparse.Namespace) -> None:
    print(f"2. strong vs 3 efficient, duplicate, {args.duplicate_hands} hands: "
          "strong − efficient per hand (95% CI)")  # fmt: skip
    for rules in args.rules:
        s = simulate(rules, args.duplicate_hands, ["strong", "efficient", "efficient", "efficient"],
                     seed=args.seed, workers=args.workers, duplicate=True)  # fmt: skip
        diff, ci = s.difference("strong", "efficient")
        st = s.seats[0]
        print(f"   {rules:<18}{diff:+9.2f} ± {ci:6.2f}   strong win {st.win_rate:.1%}"
              f"   deal-in {st.deal_in_rate:.1%}")  # fmt: skip


def speed(args: argparse.Namespace) -> None:
    print(f"3. throughput, one core, {args.speed_hands} hands, best of {args.repeat} (hands/s)")
    for rules in args.rules:
        four = rate(rules, args, ["efficient"] * 4)
        one = rate(rules, args, ["strong", "efficient", "efficient", "efficient"])
        print(f"   {rules:<18}4 efficient {four:7.1f}   1 strong + 3 efficient {one:7.1f}")


def rate(rules: str, args: argparse.Namespace, seats: list[str]) -> float:
    """Hands per second of process CPU time, the best of ``--repeat`` runs in this
    process (one worker: the bots play here)."""
    best = 0.0
    for _ in range(args.repeat):
        start = time.process_time()
        simulate(rules, args.speed_hands, seats, seed=args.seed)
        best = max(best, args.speed_hands / (time.process_time() - start))
    return best


if __name__ == "__main__":
    main()
