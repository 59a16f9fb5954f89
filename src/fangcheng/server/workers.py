"""The workers the server's experts think in (`fangcheng.server.thinking`).

Processes are spawned, not forked: the server runs threads (the event loop's helpers, the
log's writer), which a fork would copy mid-step. A worker imports what its work needs as
it starts (`fangcheng.ai.advice` and the expert), not the server. It ends when the server
that started it does: a server killed outright cannot say so, and its worker would
otherwise wait on its queue for ever.
"""

from __future__ import annotations

import importlib
import multiprocessing
import os
import threading
import time
from concurrent.futures import Executor, ProcessPoolExecutor, ThreadPoolExecutor
from typing import Final

__all__ = ["start_workers"]

#: How often a worker looks whether its server still runs, s.
_WATCH_S: Final = 1.0


def start_workers(workers: int) -> Executor:
    """``workers`` processes, the first started now (about a second, its imports
    included); 0: one thread of this process."""
    if workers == 0:
        return ThreadPoolExecutor(1, thread_name_prefix="expert")
    spawn = multiprocessing.get_context("spawn")
    pool = ProcessPoolExecutor(workers, spawn, initializer=_begin, initargs=(os.getpid(),))
    pool.submit(os.getpid)
    return pool


def _begin(server: int) -> None:
    """A worker's start: it imports what the searches need (the first would wait for
    it), and ends once its server is gone (it then has another parent)."""
    importlib.import_module("fangcheng.ai.advice")

    def watch() -> None:
        while os.getppid() == server:
            time.sleep(_WATCH_S)
        os._exit(0)

    threading.Thread(target=watch, name="server-watch", daemon=True).start()
