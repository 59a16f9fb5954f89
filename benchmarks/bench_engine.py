"""Engine throughput: complete hands per second with four random legal agents.

    .venv/bin/python benchmarks/bench_engine.py [--hands N] [--seed S] [--profile RULES]

Every rule set plays ``--hands`` hands (records kept: the engine logs every event and
decision as it goes, and each finished hand's record is built). In the same process run,
if the ``riichienv`` package is installed (``pip install '.[bench]'``), its Rust engine
plays the same number of one-round (kyoku) games with its own random agent, and the
ratio is printed. One core, timed in this process's CPU time (other work on the machine
does not count); the best of ``--repeat`` runs. ``--profile RULES`` profiles
that rule set's play loop instead (cProfile, by own time and by cumulative time).
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import random
import time

from fangcheng.engine.record import record_of
from fangcheng.engine.round import Round
from fangcheng.rules.ruleset import ALL_RULES


def play_random(rules: str, seed: int) -> Round:
    round_ = Round(rules, seed=seed, dealer=seed % 4)
    bits = random.Random(seed).getrandbits
    while not round_.over:
        for seat in round_.pending():
            legal = round_.legal_actions(seat)
            # rng.choice(legal), draw for draw (k random bits, again while past the end),
            # without its two Python calls
            n = len(legal)
            k = n.bit_length()
            i = bits(k)
            while i >= n:
                i = bits(k)
            round_.act(seat, legal[i])
    return round_


def ours(rules: str, hands: int, seed: int) -> float:
    start = time.process_time()
    for k in range(hands):
        record_of(play_random(rules, seed + k))
    return hands / (time.process_time() - start)


def riichienv_rate(hands: int, seed: int) -> float | None:
    try:
        from riichienv import RiichiEnv
        from riichienv.agents import RandomAgent
    except ImportError:
        return None
    agent = RandomAgent(seed)
    start = time.process_time()
    for _ in range(hands):
        env = RiichiEnv()
        obs = env.reset()
        while not env.done():
            obs = env.step({player: agent.act(o) for player, o in obs.items()})
    return hands / (time.process_time() - start)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hands", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--profile", metavar="RULES", help="profile one rule set's play loop")
    args = parser.parse_args()
    if args.profile:
        profile = cProfile.Profile()
        profile.runcall(ours, args.profile, args.hands, args.seed)
        for order in ("tottime", "cumtime"):
            pstats.Stats(profile).sort_stats(order).print_stats(25)
        return
    peer = max(
        (r for r in (riichienv_rate(args.hands, args.seed) for _ in range(args.repeat)) if r),
        default=None,
    )
    print(f"{'rule set':<18}{'hands/s':>10}{'riichienv/s':>14}{'ratio':>8}")
    for rules in ALL_RULES:
        rate = max(ours(rules.name, args.hands, args.seed) for _ in range(args.repeat))
        if peer is None:
            print(f"{rules.name:<18}{rate:>10,.0f}{'not installed':>14}")
        else:
            print(f"{rules.name:<18}{rate:>10,.0f}{peer:>14,.0f}{rate / peer:>7.2f}x")


if __name__ == "__main__":
    main()
