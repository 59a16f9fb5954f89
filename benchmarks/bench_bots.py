"""Bot strength and speed against the targets of issue 5.

    .venv/bin/python benchmarks/bench_bots.py [--hands N] [--duplicate-hands M]
        [--speed-hands K] [--rules NAME ...] [--workers W] [--seed S]

A count of 0 leaves its section out (``--hands 0 --duplicate-hands 0`` times the bots only).

1. ``efficient`` against three ``random``: its mean score per hand with the 95% interval
   (target: positive, the interval excluding zero, over 10,000 hands per rule set).
2. ``strong`` against three ``efficient`` in duplicate mode: strong's mean minus
   efficient's, paired by wall, with the 95% interval (target: above zero). The edge is
   about one coin per hand against a spread of tens, so the interval needs thousands of
   hands to exclude zero (baishan, whose uncapped fans spread widest, ten thousand).
3. Throughput on one core: four ``efficient`` seats (target ≥ 100 hands/s) and one
   ``strong`` seat with three ``efficient`` (target ≥ 5 hands/s).
"""

from __future__ import annotations

import argparse

from fangcheng.rules import ALL_RULES
from fangcheng.sim import simulate


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hands", type=int, default=2000, help="efficient vs random hands")
    parser.add_argument("--duplicate-hands", type=int, default=2400, help="strong vs efficient")
    parser.add_argument("--speed-hands", type=int, default=100)
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
    print(f"3. throughput, one core, {args.speed_hands} hands (hands/s)")
    for rules in args.rules:
        four = simulate(rules, args.speed_hands, ["efficient"] * 4, seed=args.seed)
        one = simulate(rules, args.speed_hands, ["strong", "efficient", "efficient", "efficient"],
                       seed=args.seed)  # fmt: skip
        print(f"   {rules:<18}4 efficient {four.hands_per_second:7.1f}"
              f"   1 strong + 3 efficient {one.hands_per_second:7.1f}")  # fmt: skip


if __name__ == "__main__":
    main()
