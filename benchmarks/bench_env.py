"""Environment throughput: agent decisions per second with a random masked agent.

    .venv/bin/python benchmarks/bench_env.py [--steps N] [--repeat R] [--rules RULES]

Times, in one process run and in process CPU time (other work on the machine does not
count), the best of ``--repeat`` runs of about ``--steps`` decisions each:

* ``aec raw``: `FangchengEnv`, every agent's ``last()`` (observation tensor and mask)
  then a uniform choice among the mask's legal indices, ``ask_all=True`` (the default:
  every seat answers every claim window) and ``ask_all=False`` (only the seats that can
  claim are asked);
* ``aec env()``: the same through `fangcheng.ai.env.env` (`CheckedEnv`: PettingZoo's
  wrappers' guarantees, our own); ``aec, PettingZoo's wrappers``: the raw environment in
  PettingZoo's three standard wrappers, which ``env`` used to return;
* ``single seat``: `SingleSeatEnv` against three random bots, one decision per step;
* riichienv 0.4.11 (the ``bench`` extra), its Rust engine and random agent, each
  decision with its observation encoded (``encode()``) and its mask read;
* ``riichienv single seat``: the same hands, seat 0's decisions alone counted and
  encoded, the other three seats still deciding: what our single seat does per step.

A step is one agent decision everywhere (a dead agent's ``step(None)`` is not counted);
a single seat's step also plays the opponents' decisions up to the seat's next one.
The ratios are to riichienv's all-seat rate; the single seats' to each other are
printed apart.
"""

from __future__ import annotations

import argparse
import random
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from fangcheng.ai.env import FangchengEnv, SingleSeatEnv, env


def aec(make: Callable[[], Any], steps: int, seed: int) -> tuple[float, float]:
    e = make()
    rng = random.Random(seed)
    done = 0
    hand = seed
    start = time.process_time()
    while done < steps:
        e.reset(seed=hand)
        hand += 1
        for _ in e.agent_iter():
            obs, _, terminated, truncated, _ = e.last()
            if terminated or truncated:
                e.step(None)
                continue
            e.step(rng.choice(np.flatnonzero(obs["action_mask"])))
            done += 1
    spent = time.process_time() - start
    return done / spent, (hand - seed) / spent


def pettingzoo_wrapped(rules: str) -> Any:
    """`FangchengEnv` in PettingZoo's TerminateIllegal, AssertOutOfBounds and
    OrderEnforcing wrappers."""
    from pettingzoo.utils import wrappers

    wrapped = wrappers.TerminateIllegalWrapper(FangchengEnv(rules), illegal_reward=-1.0)
    return wrappers.OrderEnforcingWrapper(wrappers.AssertOutOfBoundsWrapper(wrapped))


def single(rules: str, steps: int, seed: int) -> tuple[float, float]:
    e = SingleSeatEnv(rules)
    rng = random.Random(seed)
    done = 0
    hand = seed
    start = time.process_time()
    while done < steps:
        obs, _ = e.reset(seed=hand)
        hand += 1
        terminated = False
        while not terminated:
            obs, _, terminated, _, _ = e.step(rng.choice(np.flatnonzero(obs["action_mask"])))
            done += 1
    spent = time.process_time() - start
    return done / spent, (hand - seed) / spent


def riichienv_rate(steps: int, seed: int, seat: int | None = None) -> tuple[float, float] | None:
    """riichienv's decisions/s and hands/s, each counted decision's observation encoded
    and masked: every seat's, or (``seat``) one seat's, as our single seat plays them."""
    try:
        from riichienv import RiichiEnv
        from riichienv.agents import RandomAgent
    except ImportError:
        return None
    agent = RandomAgent(seed)
    done = hands = 0
    start = time.process_time()
    while done < steps:
        hands += 1
        e = RiichiEnv()
        obs = e.reset()
        while not e.done():
            for player, o in obs.items():
                if seat is None or player == seat:
                    o.encode()
                    o.mask()
                    done += 1
            obs = e.step({player: agent.act(o) for player, o in obs.items()})
    spent = time.process_time() - start
    return done / spent, hands / spent


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=20000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--rules", default="baishan")
    args = parser.parse_args()
    n, s, rules = args.steps, args.seed, args.rules
    cases: dict[str, Callable[[], tuple[float, float] | None]] = {
        "riichienv": lambda: riichienv_rate(n, s),
        "aec raw, ask_all": lambda: aec(lambda: FangchengEnv(rules), n, s),
        "aec raw, ask_all=False": lambda: aec(lambda: FangchengEnv(rules, ask_all=False), n, s),
        "aec env(), ask_all": lambda: aec(lambda: env(rules=rules), n, s),
        "aec, PettingZoo's wrappers": lambda: aec(lambda: pettingzoo_wrapped(rules), n, s),
        "single seat (3 random)": lambda: single(rules, n // 4, s),
        "riichienv single seat": lambda: riichienv_rate(n // 4, s, seat=0),
    }
    best: dict[str, tuple[float, float]] = {}
    for _ in range(args.repeat):  # the cases in turn in each round, as the machine drifts
        for name, run in cases.items():
            rate = run()
            if rate is not None:
                best[name] = max(best.get(name, (0.0, 0.0)), rate)
    peer = best.get("riichienv", (0.0, 0.0))[0]
    print(f"{rules}: best of {args.repeat}, process CPU time")
    print(f"{'':<26}{'decisions/s':>12}{'ratio':>8}{'hands/s':>10}")
    for name, (rate, hands) in best.items():
        ratio = f"{rate / peer:>7.2f}x" if peer else ""
        print(f"{name:<26}{rate:>12,.0f}{ratio:>8}{hands:>10,.0f}")
    if not peer:
        print("riichienv not installed (pip install '.[bench]')")
        return
    ours, theirs = best["single seat (3 random)"][0], best["riichienv single seat"][0]
    print(f"single seat against riichienv's single seat: {ours / theirs:.2f}x")
    raw, checked = best["aec raw, ask_all"][0], best["aec env(), ask_all"][0]
    print(f"an env() step takes {raw / checked:.2f}x the raw step's time")


if __name__ == "__main__":
    main()
