"""Train one seat with masked PPO, then measure it against the random bot.

    make train-example                       # installs the ``train`` extra, then runs this
    .venv/bin/python examples/train_ppo.py [--rules sichuan] [--minutes 4] [--hands 2000]

The learner is `fangcheng.ai.env.SingleSeatEnv` (seat 0, three random opponents), its
observation tensor and action mask as the environment gives them; the algorithm is
``MaskablePPO`` of sb3-contrib: Stable-Baselines3's PPO (maintained, on PyPI, CPU torch
is enough) with illegal actions masked out of the policy, so it never wastes a step on
one and needs no penalty for them. The trained policy then plays as a bot kind
(``ppo``) in `fangcheng.ai.sim.simulate`, the engine behind ``fangcheng simulate``: one
learner against three random bots in duplicate mode (every wall dealt once to each seat
in turn), its score per hand less the random bots' with a 95% interval.
"""

from __future__ import annotations

import argparse
import random
import time
from typing import Any, ClassVar

import gymnasium
import numpy as np
import torch
from numpy.typing import NDArray
from sb3_contrib import MaskablePPO
from stable_baselines3.common.callbacks import BaseCallback

from fangcheng.ai.env import (
    ACTION_SIZE,
    SingleSeatEnv,
    encode_observation,
    index_to_action,
    legal_mask,
)
from fangcheng.ai.sim import simulate
from fangcheng.players.bots import Bot, register_bot
from fangcheng.protocol.actions import Action
from fangcheng.protocol.observation import Observation


class Masked(gymnasium.Wrapper[NDArray[np.float32], np.int64, dict[str, Any], np.int64]):
    """The single seat with the observation tensor alone, and its mask offered as
    ``action_masks()``, where MaskablePPO looks for it."""

    def __init__(self, env: SingleSeatEnv) -> None:
        super().__init__(env)
        self.observation_space = env.observation_space["observation"]
        self.mask: NDArray[np.bool_] = np.ones(ACTION_SIZE, dtype=np.bool_)

    def reset(self, **kwargs: Any) -> tuple[NDArray[np.float32], dict[str, Any]]:
        obs, info = self.env.reset(**kwargs)
        self.mask = obs["action_mask"].astype(bool)
        return obs["observation"], info

    def step(self, action: np.int64) -> tuple[NDArray[np.float32], Any, bool, bool, dict[str, Any]]:
        obs, reward, terminated, truncated, info = self.env.step(action)
        self.mask = obs["action_mask"].astype(bool)
        return obs["observation"], reward, terminated, truncated, info

    def action_masks(self) -> NDArray[np.bool_]:
        return self.mask


class Minutes(BaseCallback):
    """Stops training once it has taken ``minutes`` of the process's CPU time: on a shared
    machine wall time would train less the busier it is."""

    def __init__(self, minutes: float) -> None:
        super().__init__()
        self.end = time.process_time() + 60 * minutes

    def _on_step(self) -> bool:
        return time.process_time() < self.end


class PolicyBot(Bot):
    """The trained policy as a bot kind: its most likely legal action."""

    name = "ppo"
    model: ClassVar[MaskablePPO | None] = None

    def act(self, observation: Observation) -> Action:
        assert self.model is not None, "train or load a model first"
        tensor = encode_observation(observation)
        mask = legal_mask(observation.legal).astype(bool)
        index, _ = self.model.predict(tensor, action_masks=mask, deterministic=True)
        return index_to_action(int(index))


def train(rules: str, minutes: float, steps: int | None, seed: int) -> MaskablePPO:
    """A MaskablePPO policy trained on the single seat for ``minutes`` (or ``steps``)."""
    env = Masked(SingleSeatEnv(rules, opponents="random"))
    env.reset(seed=seed)
    model = MaskablePPO(
        "MlpPolicy", env, n_steps=512, batch_size=128, seed=seed, device="cpu", verbose=0
    )
    if steps is not None:
        model.learn(total_timesteps=steps)
    else:
        model.learn(total_timesteps=10**9, callback=Minutes(minutes))
    return model


def main(argv: list[str] | None = None) -> tuple[float, float]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rules", default="sichuan")
    parser.add_argument("--minutes", type=float, default=4.0, help="training CPU time")
    parser.add_argument("--steps", type=int, default=None, help="train this many steps instead")
    parser.add_argument("--hands", type=int, default=2000, help="hands of the evaluation")
    parser.add_argument("--seed", type=int, default=1)
    # one: the network is small, and two threads on a busy 2-core machine trained 18× slower
    parser.add_argument("--threads", type=int, default=1, help="torch threads")
    args = parser.parse_args(argv)
    torch.set_num_threads(args.threads)
    random.seed(args.seed)
    start = time.process_time()
    model = train(args.rules, args.minutes, args.steps, args.seed)
    print(f"trained {model.num_timesteps} steps in {time.process_time() - start:.0f} s of CPU")
    PolicyBot.model = model
    register_bot(PolicyBot)
    summary = simulate(
        args.rules, args.hands, ["ppo", "random", "random", "random"], seed=args.seed,
        duplicate=True,
    )  # fmt: skip
    mean, half = summary.difference("ppo", "random")
    print(
        f"{args.rules}, {summary.hands} hands in duplicate: ppo − random = "
        f"{mean:+.2f} ± {half:.2f} coins a hand (95%)"
    )
    return mean, half


if __name__ == "__main__":
    main()
