"""Simulations: many hands of bots, summarised per seat, reproduced by one seed.

The unit of work is `play_hand(job, index)`, a pure function: the wall comes from
``(seed, wall index)`` and each bot's generator from ``(seed, hand index, seat)``.
`play_chunk` maps it over a fixed range of indices; local workers (or any other backend,
such as Ray) map `play_chunk` over the same fixed chunks and the results are merged in
index order, so a seed gives the same summary for any number of workers.

Scale-out on Ray (the optional extra, ``pip install 'fangcheng[ray]'``): ``--ray auto`` (or
``simulate(..., ray="auto")``) attaches to the Ray instance this machine already runs (one
from ``ray start``, or ``RAY_ADDRESS``) or else starts a local one with no dashboard;
``--ray ADDRESS`` connects to a cluster. The same chunks are played as Ray tasks and merged
in index order, so the summary and the records are those of ``--workers 1``. On a real
cluster, with the same Python, Ray and fangcheng (``pip install 'fangcheng[ray]'``) on every
machine::

    ray start --head --port 6379                # on the head machine
    ray start --address HEAD:6379               # on each other machine
    fangcheng simulate --rules baishan --hands 100000 --ray HEAD:6379   # on any of them

Ray's token authentication, when on, needs the head's token on every machine and on the
one that runs the simulation (``ray get-auth-token`` on the head prints it; copy it to
``~/.ray/auth_token`` or set ``RAY_AUTH_TOKEN``). fangcheng turns Ray's usage statistics
off unless ``RAY_USAGE_STATS_ENABLED`` is set. The time and rate reported leave out
connecting to (or starting) Ray; an address where no cluster answers makes Ray retry for
minutes before it gives up.

In duplicate mode each wall is played four times with the bots rotated one seat further
each time (same seed, same wall, same dealer), so every bot meets every deal from every
seat; confidence intervals are then taken over walls, which cancels most of the luck of
the deal. A seat's random choices, too, are drawn from a stream fixed by the wall and the
seat, whoever sits there (common random numbers): where the bots of two rotations decide
alike, their games stay alike, so the rotations differ only by what the bots do
differently.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import hashlib
import importlib
import json
import math
import multiprocessing
import os
import random
import sys
import time
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any, Final

from fangcheng.engine.record import record_of
from fangcheng.engine.round import Round
from fangcheng.players.bots import BOTS, bot_kind, make_bot
from fangcheng.protocol.events import Win
from fangcheng.rules.ruleset import ALL_RULES, find_rules

__all__ = [
    "HandResult",
    "Job",
    "RayUnavailableError",
    "SeatStats",
    "Summary",
    "main",
    "play_chunk",
    "play_hand",
    "simulate",
]

CHUNK: Final = 8  # hands per unit of work: a multiple of 4, so a wall's rotations stay together
Z95: Final = 1.959964


@dataclass(frozen=True, slots=True)
class Job:
    """What every hand of a simulation shares."""

    rules: str
    seats: tuple[str, ...]  # the bot of each player, by name
    seed: int
    duplicate: bool = False
    records: bool = False  # return each hand's record with its result


@dataclass(frozen=True, slots=True)
class HandResult:
    """One hand, seen per player (the entries of ``Job.seats``), not per table seat."""

    index: int
    wall: int  # the deal played: the hand index, or index // 4 in duplicate mode
    seat_of: tuple[int, ...]  # the table seat each player sat at
    totals: tuple[int, ...]  # coins won or lost, after fees
    wins: tuple[bool, ...]
    deal_ins: tuple[bool, ...]  # discarded (or had robbed) a tile someone won on
    end: str
    record: dict[str, Any] | None = None


def derive(seed: int, *parts: int) -> int:
    """A 63-bit seed from the simulation seed and indices, the same on every machine."""
    text = ":".join(str(p) for p in (seed, *parts))
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big") >> 1


def play_hand(job: Job, index: int) -> HandResult:
    """Play hand ``index`` of ``job`` to the end; deterministic in (job, index)."""
    wall, rotation = (index // 4, index % 4) if job.duplicate else (index, 0)
    seat_of = tuple((p + rotation) % 4 for p in range(4))
    player_at = {seat: p for p, seat in enumerate(seat_of)}
    round_ = Round(job.rules, seed=derive(job.seed, wall), dealer=wall % 4)
    bots = [
        make_bot(job.seats[player_at[seat]], random.Random(derive(job.seed, wall, seat)))
        for seat in range(4)
    ]
    while not round_.over:
        for seat in round_.pending():
            round_.act(seat, bots[seat].act(round_.observe(seat)))
    assert round_.settlement is not None
    total = round_.settlement["total"]
    wins = [e for e in round_.events if type(e) is Win]
    winners = {e.seat for e in wins}
    sources = {e.source for e in wins if e.source is not None}
    return HandResult(
        index=index,
        wall=wall,
        seat_of=seat_of,
        totals=tuple(total[s] for s in seat_of),
        wins=tuple(s in winners for s in seat_of),
        deal_ins=tuple(s in sources for s in seat_of),
        end=round_.settlement["end"],
        record=record_of(round_) if job.records else None,
    )


def play_chunk(job: Job, span: tuple[int, int]) -> list[HandResult]:
    """Hands ``span[0]`` to ``span[1] - 1``, in order: the unit a worker runs."""
    return [play_hand(job, i) for i in range(*span)]


def chunks(hands: int) -> list[tuple[int, int]]:
    """The fixed split of a simulation into units of work (independent of workers)."""
    return [(start, min(start + CHUNK, hands)) for start in range(0, hands, CHUNK)]


def _run_local(job: Job, hands: int, workers: int) -> Iterator[list[HandResult]]:
    spans = chunks(hands)
    if workers <= 1:
        for span in spans:
            yield play_chunk(job, span)
        return
    with multiprocessing.Pool(workers) as pool:
        yield from pool.imap(partial(play_chunk, job), spans)


# --- Ray -------------------------------------------------------------------------------

RAY_EXTRA: Final = "pip install 'fangcheng[ray]'"


class RayUnavailableError(ImportError):
    """``ray=...`` was asked for but Ray is not installed."""

    def __init__(self) -> None:
        super().__init__(f"the Ray backend needs Ray: {RAY_EXTRA}")


def _import_ray() -> Any:
    # by name, so that mypy does not follow into Ray (which it would check for ~15 s)
    try:
        return importlib.import_module("ray")
    except ImportError as exc:
        raise RayUnavailableError() from exc


@contextlib.contextmanager
def _ray_session(ray: Any, address: str) -> Iterator[None]:
    """Connected to Ray inside: to the Ray this process already uses, else to ``address``
    (``"auto"``: the instance this machine runs, from ``ray start`` or ``RAY_ADDRESS``, or
    else a new local one), disconnecting at the end from what it connected to itself."""
    if ray.is_initialized():
        yield
        return
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    ray.init(
        address=None if address == "auto" else address,
        include_dashboard=False,
        logging_level="warning",
    )
    try:
        yield
    finally:
        ray.shutdown()


def _ray_cpus(ray: Any) -> int:
    return max(1, int(ray.cluster_resources().get("CPU", 1)))


def _run_ray(job: Job, hands: int, ray: Any) -> Iterator[list[HandResult]]:
    """The chunks of ``_run_local`` as Ray tasks, yielded in index order. At most a few
    chunks per CPU are in flight, so a long simulation does not fill the object store."""
    task = ray.remote(play_chunk)
    window = 4 * _ray_cpus(ray)
    pending: deque[Any] = deque()
    waiting = deque(chunks(hands))
    while waiting or pending:
        while waiting and len(pending) < window:
            pending.append(task.remote(job, waiting.popleft()))
        chunk: list[HandResult] = ray.get(pending.popleft())
        yield chunk


# --- summary ---------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class SeatStats:
    """One player's results: rates per hand, and the mean score with its 95% interval."""

    player: int
    bot: str
    hands: int
    win_rate: float
    deal_in_rate: float
    mean: float
    ci: float  # half-width of the 95% confidence interval of the mean

    def to_json(self) -> dict[str, object]:
        return {
            "seat": self.player,
            "bot": self.bot,
            "hands": self.hands,
            "win_rate": self.win_rate,
            "deal_in_rate": self.deal_in_rate,
            "mean": self.mean,
            "ci95": self.ci,
        }


def mean_ci(values: Sequence[float]) -> tuple[float, float]:
    """Mean and the half-width of its normal 95% confidence interval."""
    n = len(values)
    if n == 0:
        return 0.0, math.nan
    mean = math.fsum(values) / n
    if n < 2:
        return mean, math.nan
    var = math.fsum((v - mean) ** 2 for v in values) / (n - 1)
    return mean, Z95 * math.sqrt(var / n)


@dataclass(frozen=True)
class Summary:
    job: Job
    hands: int
    workers: int
    seconds: float
    results: tuple[HandResult, ...] = field(repr=False)
    backend: str = "local"  # or "ray"; with Ray, ``workers`` is the cluster's CPUs

    @property
    def hands_per_second(self) -> float:
        return self.hands / self.seconds if self.seconds > 0 else math.inf

    def units(self, players: Sequence[int]) -> list[float]:
        """Per unit of luck (a hand, or a wall in duplicate mode) the mean score of
        ``players``: the samples every interval here is taken over."""
        groups: dict[int, list[float]] = {}
        for r in self.results:
            key = r.wall if self.job.duplicate else r.index
            groups.setdefault(key, []).extend(r.totals[p] for p in players)
        return [math.fsum(v) / len(v) for v in groups.values()]

    @property
    def seats(self) -> tuple[SeatStats, ...]:
        n = len(self.results)
        out = []
        for p, bot in enumerate(self.job.seats):
            mean, ci = mean_ci(self.units([p]))
            out.append(
                SeatStats(
                    player=p,
                    bot=bot,
                    hands=n,
                    win_rate=sum(r.wins[p] for r in self.results) / n if n else 0.0,
                    deal_in_rate=sum(r.deal_ins[p] for r in self.results) / n if n else 0.0,
                    mean=mean,
                    ci=ci,
                )
            )
        return tuple(out)

    def players_of(self, bot: str) -> list[int]:
        return [p for p, name in enumerate(self.job.seats) if name == bot]

    def bot_mean(self, bot: str) -> tuple[float, float]:
        """A bot's mean score per hand over all the players it is, with its interval."""
        return mean_ci(self.units(self.players_of(bot)))

    def difference(self, a: str, b: str) -> tuple[float, float]:
        """Mean score per hand of bot ``a`` minus bot ``b``, paired by hand (or wall)."""
        ua, ub = self.units(self.players_of(a)), self.units(self.players_of(b))
        return mean_ci([x - y for x, y in zip(ua, ub, strict=True)])

    def bots(self) -> list[str]:
        return list(dict.fromkeys(self.job.seats))

    def to_json(self) -> dict[str, object]:
        bots = self.bots()
        return {
            "rules": self.job.rules,
            "hands": self.hands,
            "seed": self.job.seed,
            "duplicate": self.job.duplicate,
            "backend": self.backend,
            "workers": self.workers,
            "seconds": self.seconds,
            "hands_per_second": self.hands_per_second,
            "seats": [s.to_json() for s in self.seats],
            "bots": [{"bot": b, "mean": m, "ci95": c} for b in bots for m, c in [self.bot_mean(b)]],
            "differences": [
                {"bot": a, "minus": b, "mean": m, "ci95": c}
                for a in bots[:1]
                for b in bots[1:]
                for m, c in [self.difference(a, b)]
            ],
        }

    def table(self) -> str:
        job = self.job
        mode = ", duplicate" if job.duplicate else ""
        where = (
            f"{self.workers} Ray CPU(s)" if self.backend == "ray" else f"{self.workers} worker(s)"
        )
        lines = [
            f"{job.rules}: {self.hands} hands{mode}, seed {job.seed}, {where}, "
            f"{self.seconds:.1f} s ({self.hands_per_second:.1f} hands/s)",
            f"{'seat':<6}{'bot':<12}{'win':>8}{'deal-in':>9}{'score/hand':>13}{'95% CI':>11}",
        ]
        for s in self.seats:
            lines.append(
                f"{s.player:<6}{s.bot:<12}{s.win_rate:>8.1%}{s.deal_in_rate:>9.1%}"
                f"{s.mean:>+13.2f}{'±' + format(s.ci, '.2f'):>11}"
            )
        bots = self.bots()
        if len(bots) > 1:
            for a in bots[:1]:
                for b in bots[1:]:
                    m, c = self.difference(a, b)
                    lines.append(f"{a} − {b}: {m:+.2f} ± {c:.2f} per hand (95%)")
        return "\n".join(lines)


def simulate(
    rules: str,
    hands: int,
    seats: Sequence[str],
    seed: int = 0,
    workers: int = 1,
    duplicate: bool = False,
    records_dir: str | Path | None = None,
    progress: Callable[[int, int], None] | None = None,
    ray: str | None = None,
) -> Summary:
    """Play ``hands`` hands (rounded up to whole walls in duplicate mode) and summarise.

    ``ray``: ``"auto"`` or a cluster's address, to play on Ray instead of in ``workers``
    local processes, with the same results; `RayUnavailableError` if Ray is not installed.
    The time reported leaves out connecting to (or starting) Ray."""
    find_rules(rules)
    if len(seats) != 4:
        raise ValueError(f"a table has four seats, got {len(seats)}: {','.join(seats)}")
    for name in seats:
        bot_kind(name)
    ray_module = _import_ray() if ray is not None else None
    total = -(-hands // 4) * 4 if duplicate else hands
    job = Job(rules, tuple(seats), seed, duplicate, records=records_dir is not None)
    out_dir = Path(records_dir) if records_dir is not None else None
    if out_dir is not None:
        out_dir.mkdir(parents=True, exist_ok=True)
    results: list[HandResult] = []
    with contextlib.ExitStack() as stack:
        if ray is None:
            runs = _run_local(job, total, workers)
        else:
            stack.enter_context(_ray_session(ray_module, ray))
            workers = _ray_cpus(ray_module)
            runs = _run_ray(job, total, ray_module)
        start = time.perf_counter()
        if progress is not None:
            progress(0, total)
        for chunk in runs:
            for r in chunk:
                if out_dir is not None and r.record is not None:
                    path = out_dir / f"hand-{r.index:06d}.json"
                    path.write_text(json.dumps(r.record, ensure_ascii=False), encoding="utf-8")
                results.append(dataclasses.replace(r, record=None))  # written; keep it small
            if progress is not None:
                progress(len(results), total)
        seconds = time.perf_counter() - start
    backend = "local" if ray is None else "ray"
    return Summary(job, total, workers, seconds, tuple(results), backend)


# --- command line ----------------------------------------------------------------------


@contextlib.contextmanager
def _progress(stream: Any) -> Iterator[Callable[[int, int], None]]:
    """Progress on ``stream``: Rich's live bar where it is a terminal (Rich judges, and
    is there with the play extra), else a plain line at each tenth and at the end."""
    try:
        from rich.console import Console
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeRemainingColumn
    except ModuleNotFoundError:
        console = None
    else:
        console = Console(file=stream)
    if console is not None and console.is_terminal:
        columns = (BarColumn(), MofNCompleteColumn(), "hands", TimeRemainingColumn())
        with Progress(*columns, console=console) as bar:
            task = bar.add_task("simulate", total=None)
            yield lambda done, total: bar.update(task, completed=done, total=total)
        return
    start, shown = time.perf_counter(), 0

    def line(done: int, total: int) -> None:
        nonlocal start, shown
        if done == 0:  # the work starts now (after any connecting): rate from here
            start = time.perf_counter()
        tenth = 10 * done // max(1, total)
        if tenth > shown:
            shown = tenth
            rate = done / max(time.perf_counter() - start, 1e-9)
            print(f"{done}/{total} hands {rate:.1f}/s", file=stream, flush=True)

    yield line


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="fangcheng simulate",
        description="Play many hands of bots and summarise each seat's results.",
    )
    parser.add_argument("--rules", required=True, choices=[r.name for r in ALL_RULES])
    parser.add_argument("--hands", type=int, default=100, help="hands to play (default 100)")
    parser.add_argument(
        "--seats",
        default="efficient,efficient,efficient,efficient",
        help=f"four bots, comma-separated; bots: {', '.join(BOTS)}; expert@N: the expert"
        " with N playouts a decision",
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--workers", type=int, help="local processes (default 1)")
    parser.add_argument(
        "--ray",
        metavar="auto|ADDRESS",
        help="play on Ray: 'auto' (this machine's Ray, started if need be) or a cluster's "
        f"HOST:PORT; same results as local ({RAY_EXTRA})",
    )
    parser.add_argument(
        "--duplicate", action="store_true", help="play each wall four times, bots rotated"
    )
    parser.add_argument("--records", metavar="DIR", help="save every hand's record here")
    parser.add_argument("--json", action="store_true", help="print the summary as JSON")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    seats = [s.strip() for s in args.seats.split(",")]
    if len(seats) != 4:
        parser.error(f"--seats needs four of {', '.join(BOTS)}, got {args.seats!r}")
    for seat in seats:
        try:
            bot_kind(seat)
        except ValueError as exc:
            parser.error(f"--seats: {exc}")
    if args.hands < 1 or (args.workers is not None and args.workers < 1):
        parser.error("--hands and --workers must be at least 1")
    if args.ray is not None and args.workers is not None:
        parser.error("--workers is for local runs; with --ray the cluster's CPUs do the work")
    try:
        with _progress(sys.stderr) as progress:
            summary = simulate(
                args.rules,
                args.hands,
                seats,
                seed=args.seed,
                workers=args.workers or 1,
                duplicate=args.duplicate,
                records_dir=args.records,
                progress=progress,
                ray=args.ray,
            )
    except RayUnavailableError as exc:
        print(f"{parser.prog}: error: {exc}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps(summary.to_json(), ensure_ascii=False))
    else:
        print(summary.table())
    return 0


if __name__ == "__main__":
    sys.exit(main())
