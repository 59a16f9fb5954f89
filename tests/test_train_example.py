"""The training example (``examples/train_ppo.py``) runs end to end, where the ``train``
extra is installed (torch, stable-baselines3, sb3-contrib); skipped elsewhere, so `make
test` needs none of it."""

from __future__ import annotations

import importlib.util
import math
import sys
from pathlib import Path

import pytest

pytest.importorskip("sb3_contrib")

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "train_ppo.py"


def test_the_training_example_trains_and_measures_its_policy() -> None:
    spec = importlib.util.spec_from_file_location("train_ppo", EXAMPLE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    mean, half = module.main(["--steps", "256", "--hands", "8", "--rules", "sichuan"])
    assert math.isfinite(mean) and math.isfinite(half)
