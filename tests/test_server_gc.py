"""The server's collector policy (`fangcheng.server.collector.collector`): it freezes the heap
so that collections walk little, sweeps the frozen heap as often as the cyclic garbage it
finds needs, and not because the heap of live tables grew."""

from __future__ import annotations

import asyncio
import gc
from collections.abc import Callable

import pytest

from fangcheng.server import collector as policy
from fangcheng.server.collector import GARBAGE_SHARE, collector

#: The policy's first and longest waits, shortened for a short run (the same rule).
FIRST, LONGEST = 60.0, 300.0


class _Stop(Exception):
    pass


def _cycles(n: int) -> list[list[object]]:
    """``n`` objects that only the collector can free once dropped."""
    out: list[list[object]] = []
    for _ in range(n):
        cycle: list[object] = []
        cycle.append(cycle)
        out.append(cycle)
    return out


def _run(
    periods: int, each: Callable[[], None], monkeypatch: pytest.MonkeyPatch
) -> tuple[list[int], list[float]]:
    """The policy for ``periods`` periods of 5 s on a clock of its own, ``each`` run every
    period; the frozen heap's size at each, and when each sweep (a full collection)
    happened."""
    now = 0.0
    counts: list[int] = []
    sweeps: list[float] = []
    collect = gc.collect

    def counted(generation: int = 2) -> int:
        sweeps.append(now)
        return collect(generation)

    async def sleep(seconds: float) -> None:
        nonlocal now
        assert seconds == 5.0
        counts.append(gc.get_freeze_count())
        if len(counts) > periods:
            raise _Stop
        now += seconds
        each()

    monkeypatch.setattr(policy.gc, "collect", counted)
    monkeypatch.setattr(policy, "FIRST_SWEEP_S", FIRST)
    monkeypatch.setattr(policy, "MAX_SWEEP_S", LONGEST)
    with pytest.raises(_Stop):
        asyncio.run(collector(5.0, sleep, lambda: now))
    assert gc.get_freeze_count() == 0  # on stop nothing is left frozen
    return counts, sweeps[1:]  # the first: the heap collected once as the policy starts


def test_collector_sweeps_as_often_as_the_garbage_it_finds_needs(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Each period, what was alive (cycles, as a finished table's coroutines and
    closures are) dies while frozen and as much again is made: the sweeps come as
    often as keeps that garbage near its share of the live heap."""
    # a twentieth of the heap a period (2,000 at least): the policy's budget is a share of
    # the heap, which in a whole suite's process is many times a lone test's
    per_period, periods = max(2_000, len(gc.get_objects()) // 20), 100
    alive: list[list[object]] = []

    def each() -> None:
        alive[:] = _cycles(per_period)  # the last period's die frozen: the collector's

    counts, sweeps = _run(periods, each, monkeypatch)
    start = counts[0]
    assert start > 0  # the heap was frozen at once
    assert sweeps[0] == FIRST
    assert len(sweeps) >= 3  # swept again and again, the garbage being large
    live = start + per_period
    # The garbage between sweeps stays near its share of the live heap (a period's
    # worth of slack: the sweeps fall on the periods).
    assert max(counts[20:]) <= live * (1 + GARBAGE_SHARE) + 2 * per_period


def test_collector_does_not_sweep_for_a_heap_of_live_tables(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Tables opened one after another, every object of them alive (in cycles, as a
    table's are), no garbage: the heap grows many times over, and after the first sweep
    (which finds nothing) the next waits its longest. Sweeping when the frozen heap
    doubled paused every table each time the heap of tables doubled."""
    periods = int((FIRST + LONGEST) // 5) + 3
    tables: list[list[list[object]]] = []

    def each() -> None:  # a table a period, of a thirtieth of the heap at the start
        tables.append(_cycles(len(tables[0]) if tables else gc.get_freeze_count() // 30))

    counts, sweeps = _run(periods, each, monkeypatch)
    assert counts[-1] > 3 * counts[0]  # the heap doubled, and again
    assert sweeps == [FIRST, FIRST + LONGEST]


def test_collector_collects_the_young_generation_less_often_while_it_runs() -> None:
    """While the policy runs the youngest generation waits for `YOUNG_THRESHOLD`
    allocations (a sixth of a loaded server's CPU went to its collections at 700); once
    it stops, the process's thresholds are as they were."""
    before = gc.get_threshold()
    seen: list[tuple[int, int, int]] = []

    async def sleep(seconds: float) -> None:
        seen.append(gc.get_threshold())
        raise _Stop

    with pytest.raises(_Stop):
        asyncio.run(collector(5.0, sleep))
    assert seen == [(policy.YOUNG_THRESHOLD, *before[1:])]
    assert before[0] < policy.YOUNG_THRESHOLD and gc.get_threshold() == before
