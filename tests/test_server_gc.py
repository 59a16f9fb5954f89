"""The server's collector policy (`fangcheng.server.collector.collector`): it freezes the heap
so that collections walk little, and still frees the cyclic garbage it froze."""

from __future__ import annotations

import asyncio
import gc
import itertools

import pytest

from fangcheng.server.collector import collector


class _Stop(Exception):
    pass


def test_collector_keeps_frozen_heap_bounded_and_releases_it() -> None:
    """Each period, what was alive (cycles, as a finished table's coroutines and
    closures are) dies while frozen and as much again is made: without sweeps the frozen
    heap would grow by that much a period; with them it stays under twice what is live
    plus a period's worth, and on stop nothing is left frozen."""
    per_period, periods = 20_000, 60
    alive: list[list[object]] = []
    counts: list[int] = []

    async def sleep(seconds: float) -> None:
        assert seconds == 5.0
        counts.append(gc.get_freeze_count())
        if len(counts) > periods:
            raise _Stop
        alive.clear()  # frozen at the last period: garbage the collector cannot see
        for _ in range(per_period):
            cycle: list[object] = []
            cycle.append(cycle)
            alive.append(cycle)

    with pytest.raises(_Stop):
        asyncio.run(collector(5.0, sleep))
    start = counts[0]
    assert start > 0  # the heap was frozen at once
    live = start + per_period  # what a sweep keeps: the heap and the period's cycles
    assert max(counts) <= 2 * live + per_period  # swept, not 60 periods' garbage
    sweeps = sum(b < a - per_period for a, b in itertools.pairwise(counts))
    assert 0 < sweeps < periods // 4  # swept, but only as the frozen heap doubled
    assert gc.get_freeze_count() == 0
