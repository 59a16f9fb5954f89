"""The server's garbage-collector policy: the heap frozen every few seconds, swept when
it has doubled (why: `collector`'s docstring)."""

from __future__ import annotations

import asyncio
import gc
from collections.abc import Awaitable, Callable

__all__ = ["collector"]


async def collector(
    every_s: float, sleep: Callable[[float], Awaitable[None]] = asyncio.sleep
) -> None:
    """The server's garbage-collector policy, for as long as it runs.

    Left alone, CPython's full collections walk every object it tracks (about 900 a
    table: the coroutines, closures, dicts and lists of each websocket and table), and at
    500 tables each stopped the event loop for 0.2-0.8 s, several times a minute, which
    every answer then waited out (benchmarks/RESULTS.md, "The table server"). So every
    ``every_s`` we move what has survived into the permanent generation (`gc.freeze`,
    O(1)): collections then walk only what is newer than a few seconds.

    Why it does not leak: an object that dies in a reference cycle while frozen is
    never freed by the collector. So the frozen heap is swept (`gc.unfreeze`, one full
    collection) whenever it has doubled since the last sweep, the heap-growth rule of
    Go's collector: the frozen heap stays under twice what was live at the last sweep,
    and a server of a steady number of tables sweeps seldom (one full pause then, not
    several a minute). Objects freed by reference counting leave the frozen generation
    at once, so only cyclic garbage counts towards the doubling."""
    gc.collect()
    gc.freeze()
    swept = gc.get_freeze_count()
    try:
        while True:
            await sleep(every_s)
            if gc.get_freeze_count() > 2 * swept:
                gc.unfreeze()
                gc.collect()
                gc.freeze()
                swept = gc.get_freeze_count()
            else:
                gc.freeze()
    finally:  # the process may go on (tests): its heap is the collector's again
        gc.unfreeze()
