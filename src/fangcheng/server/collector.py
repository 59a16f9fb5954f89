"""The server's garbage-collector policy: the heap frozen every few seconds, swept as
seldom as the cyclic garbage it finds allows (why: `collector`'s docstring)."""

from __future__ import annotations

import asyncio
import gc
import time
from collections.abc import Awaitable, Callable
from typing import Final

__all__ = ["FIRST_SWEEP_S", "MAX_SWEEP_S", "YOUNG_THRESHOLD", "collector"]

#: Seconds from the start to the first sweep, which measures the garbage rate.
FIRST_SWEEP_S: Final = 300.0
#: The longest wait between sweeps, however little garbage the last one found.
MAX_SWEEP_S: Final = 1800.0
#: The cyclic garbage let pile up between sweeps, as a share of the live heap.
GARBAGE_SHARE: Final = 0.25
#: The youngest generation's threshold (allocations less deallocations between its
#: collections) while the policy runs: at CPython's 700 the young collections, walking
#: the futures, coroutines and frames of every action in flight, were a sixth of a
#: 200-table server's CPU (perf, benchmarks/history/2026-12-06-server-cpu-2.md).
YOUNG_THRESHOLD: Final = 10_000


async def collector(
    every_s: float,
    sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    clock: Callable[[], float] = time.monotonic,
) -> None:
    """The server's garbage-collector policy, for as long as it runs.

    Left alone, CPython's full collections walk every object it tracks (about 950 a
    table: the coroutines, closures, dicts and lists of each websocket and table), and at
    500 tables each stopped the event loop for 0.2-0.8 s, several times a minute, which
    every answer then waited out (benchmarks/RESULTS.md, "Server"). So every ``every_s``
    we move what has survived into the permanent generation (`gc.freeze`, O(1)):
    collections then walk only what is newer than a few seconds.

    An object that dies in a reference cycle while frozen is never freed by the
    collector, so the frozen heap must be swept now and then (`gc.unfreeze`, one full
    collection: a pause of the whole heap, about a second at 1,000 tables). Sweeping
    when the frozen heap had doubled swept whenever tables were opened, garbage or not
    (at 150 tables the heap of the tables alone doubles the server's own), though play
    makes next to no cyclic garbage that lives past a freeze (benchmarks/history,
    2026-12-06-server-gc.md). So the sweeps are paced by the garbage they find, as
    Go's collector paces itself by its heap's growth: each sweep counts what it freed
    since the last, and the next comes when that rate would have piled up
    `GARBAGE_SHARE` of the live heap, at most `MAX_SWEEP_S` later (the first after
    `FIRST_SWEEP_S`). Objects freed by reference counting leave the frozen generation at
    once; only cyclic garbage waits for a sweep. Meanwhile the youngest generation is
    collected every `YOUNG_THRESHOLD` allocations, not every 700."""
    thresholds = gc.get_threshold()
    gc.set_threshold(YOUNG_THRESHOLD, *thresholds[1:])
    gc.collect()
    gc.freeze()
    swept_at, wait = clock(), FIRST_SWEEP_S
    try:
        while True:
            await sleep(every_s)
            now = clock()
            if now - swept_at < wait:
                gc.freeze()
                continue
            gc.unfreeze()
            found = gc.collect()
            gc.freeze()
            budget = GARBAGE_SHARE * gc.get_freeze_count()
            wait = min(MAX_SWEEP_S, (now - swept_at) * budget / max(found, 1))
            swept_at = now
    finally:  # the process may go on (tests): its heap is the collector's again
        gc.unfreeze()
        gc.set_threshold(*thresholds)
