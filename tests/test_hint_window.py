"""A hint asked at a claim window searches no longer than the window has left, less the
time to reach the browser (issue 41: baishan's 3 s window closed before hints of 1.4 s
median, 2.7 s at most, came): out of time it is the strong bot's choice, said so."""

from __future__ import annotations

import time

import pytest

from fangcheng.server.tables import Prompt
from fangcheng.server.thinking import HINT_MARGIN_S, Thinker


@pytest.mark.parametrize(("ago", "budget"), [(0.0, 2.0), (1.5, 1.0), (2.6, 0.0)])
def test_a_hint_at_a_claim_window_keeps_to_what_is_left_of_it(ago: float, budget: float) -> None:
    thinker = Thinker(4, lambda table: None, seconds=2.0, workers=0)
    window = Prompt(seq=7, issued=0, deadline=3_000, window=True)
    thinker._opened[("t", 0)] = (7, time.monotonic() - ago)
    left = 3.0 - ago - HINT_MARGIN_S
    assert thinker._budget(("t", 0), window) == pytest.approx(max(0.0, min(budget, left)), abs=0.05)


def test_a_turn_or_an_unknown_prompt_keeps_the_servers_budget() -> None:
    thinker = Thinker(4, lambda table: None, seconds=2.0, workers=0)
    thinker._opened[("t", 0)] = (7, time.monotonic() - 2.9)
    turn = Prompt(seq=7, issued=0, deadline=30_000, window=False)
    assert thinker._budget(("t", 0), turn) == 2.0
    other = Prompt(seq=8, issued=0, deadline=3_000, window=True)  # not the prompt read
    assert thinker._budget(("t", 0), other) == 2.0
