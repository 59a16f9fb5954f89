"""What a deployment's monitoring reads of a server process (docs/operations.md): its
counters and histograms in a `prometheus_client` registry of the app's own (several apps
in one process, as in the tests, count apart), and the state of its tables read when
scraped (`Census`). Each place an event happens counts it with one call.

Labels are kinds, outcomes and the process's id, never a name, a token, an address or a
table's code: a scrape shows how the server is doing, not who plays where.
"""

from __future__ import annotations

import asyncio
import gc
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Final, Literal

from prometheus_client import CollectorRegistry, Counter, Histogram, generate_latest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

__all__ = ["LAG_PROBE_S", "UNCOUNTED", "Census", "Metrics"]

#: How often the event loop's lag is probed, s.
LAG_PROBE_S: Final = 0.5
_SHORT: Final = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5)


@dataclass
class Census:
    """This process's tables as they stand: by kind (``practice``, ``private``, ``coin``),
    the people seated, the open websockets, the seats in 托管; and the ledger's journals
    by kind (empty where the process has not opened the coin platform)."""

    process: str
    tables: Mapping[str, int] = field(default_factory=dict)
    seated: int = 0
    connections: int = 0
    tuoguan: int = 0
    journals: Mapping[str, int] = field(default_factory=dict)


class Metrics(Collector):
    """The app's registry and what is counted in it (each name ``fangcheng_…``)."""

    def __init__(self) -> None:
        self.registry = r = CollectorRegistry()
        #: Websocket frames from clients and to them: plain counts (every frame counts,
        #: so as cheaply as can be), reported as the counter ``fangcheng_frames``.
        self.frames_in = self.frames_out = 0
        self._census: Callable[[], Census] | None = None
        r.register(self)
        self.action_seconds = Histogram(
            "fangcheng_action_seconds",
            "Time to apply a seat's move on the event loop (its log's commit not counted)",
            buckets=_SHORT,
            registry=r,
        )
        self.timeouts = Counter(
            "fangcheng_timeouts",
            "Prompts a person let run out (the seat goes into 托管), by kind",
            ["prompt"],
            registry=r,
        )
        self.settlements = Counter(
            "fangcheng_settlements",
            "Coin hands' bookings: booked, failed (kept, booked again) or refused",
            ["outcome"],
            registry=r,
        )
        self.settlement_retries = Counter(
            "fangcheng_settlement_retries", "Bookings tried again after a failure", registry=r
        )
        self.login_failures = Counter(
            "fangcheng_login_failures", "Log-ins refused for a wrong name or password", registry=r
        )
        self.rate_limited = Counter(
            "fangcheng_rate_limited",
            "Answers refused by a rate limit (HTTP 429, a socket's 4429, a frame's rate)",
            ["where"],
            registry=r,
        )
        self.expert_given_up = Counter(
            "fangcheng_expert_given_up",
            "Expert searches given up at their time budget (the strong bot's choice played)",
            registry=r,
        )
        self.loop_lag = Histogram(
            "fangcheng_event_loop_lag_seconds",
            f"How late the event loop woke a {LAG_PROBE_S} s sleep",
            buckets=_SHORT,
            registry=r,
        )
        self.gc_pause = Histogram(
            "fangcheng_gc_pause_seconds",
            "Garbage collections' durations, by generation",
            ["generation"],
            buckets=_SHORT,
            registry=r,
        )
        for counter, values in (  # every series from the start: a rate of 0 is a rate
            (self.timeouts, ("claim", "turn")),
            (self.settlements, ("booked", "failed", "refused")),
            (self.rate_limited, ("http", "socket", "frame")),
            (self.gc_pause, ("0", "1", "2")),
        ):
            for value in values:
                counter.labels(value)
        #: The ledger's journals by kind, as last read (`fangcheng.server.health`), when.
        self.journals: dict[str, int] = {}
        self.journals_read = float("-inf")
        self._gc_started = 0.0

    # --- counting, one call where it happens --------------------------------------------

    def timed_out(self, window: bool) -> None:
        """A person's prompt ran out: a claim window's or a turn's timer."""
        self.timeouts.labels("claim" if window else "turn").inc()

    def settled(self, outcome: Literal["booked", "failed", "refused"]) -> None:
        self.settlements.labels(outcome).inc()

    def refused(self, code: str, where: Literal["http", "socket", "frame"]) -> None:
        """An answer with error ``code``: counted if a rate limit refused it."""
        if code == "rate":
            self.rate_limited.labels(where).inc()

    # --- read when scraped ----------------------------------------------------------------

    def watch(self, census: Callable[[], Census]) -> None:
        """Report ``census()`` at every scrape."""
        self._census = census

    def collect(self) -> Iterator[Metric]:
        """What is read when scraped: the frames' counts, and the census's gauges
        (nothing to keep up meanwhile)."""
        frames = CounterMetricFamily("fangcheng_frames", "Websocket frames", labels=["direction"])
        frames.add_metric(["in"], self.frames_in)
        frames.add_metric(["out"], self.frames_out)
        yield frames
        if self._census is None:
            return
        now = self._census()
        process = [now.process]
        tables = GaugeMetricFamily(
            "fangcheng_tables", "Tables this process runs", labels=["kind", "process"]
        )
        for kind in ("point", "practice", "coin"):
            tables.add_metric([kind, now.process], now.tables.get(kind, 0))
        yield tables
        for name, help_, value in (
            ("fangcheng_people_seated", "People (and outside bots) seated here", now.seated),
            ("fangcheng_connections", "Open websockets", now.connections),
            ("fangcheng_tuoguan_seats", "Seats of people played by 托管 now", now.tuoguan),
        ):
            gauge = GaugeMetricFamily(name, help_, labels=["process"])
            gauge.add_metric(process, value)
            yield gauge
        journals = GaugeMetricFamily(
            "fangcheng_ledger_journals", "Journals in the ledger, by kind", labels=["kind"]
        )
        for kind, count in sorted(now.journals.items()):
            journals.add_metric([kind], count)
        yield journals

    def text(self) -> bytes:
        """The Prometheus text exposition of everything above."""
        return generate_latest(self.registry)

    # --- the probes, for the app's life -------------------------------------------------------

    def _gc(self, phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            self._gc_started = time.perf_counter()
        else:
            pause = time.perf_counter() - self._gc_started
            self.gc_pause.labels(str(info["generation"])).observe(pause)

    async def probe(self) -> None:
        """For as long as it runs: time every garbage collection (`gc.callbacks`) and
        how late the loop wakes a sleep of `LAG_PROBE_S` (what every answer waits)."""
        gc.callbacks.append(self._gc)
        loop = asyncio.get_running_loop()
        try:
            while True:
                asked = loop.time() + LAG_PROBE_S
                await asyncio.sleep(LAG_PROBE_S)
                self.loop_lag.observe(max(0.0, loop.time() - asked))
        finally:
            gc.callbacks.remove(self._gc)


#: Where a table made without a server counts (tests, tools): a registry nobody reads.
UNCOUNTED: Final = Metrics()
