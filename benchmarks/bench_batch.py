"""Batched hand analysis (`fangcheng.analysis.batch`): the differential run and the rates.

    .venv/bin/python benchmarks/bench_batch.py [--hands N] [--timed M] [--repeat R]

First the differential run: ``--hands`` seeded 14-tile hands (half drawn from all 136
tiles, half from one suit and the honours, where complete and ready hands are common)
and their 13-tile heads go through the compiled kernel, the numpy path and the per-hand
pure-Python functions, and every win check, shanten, waits mask, draw and discard shanten
must agree (the per-hand functions' Python code under `CLASSIC`; the kernel and numpy
under every `Shapes` the rule sets use). Then, on the first ``--timed`` hands, each
library's rate in hands per second, in this process's CPU time, the best of ``--repeat``
runs, every contender timed in turn within each run: fangcheng per call (``bytes`` in)
on its Python code (``python``: the per-hand API before the kernel) and with the kernel
(``per call``), the batch on numpy and on the kernel, riichienv 0.4.11
(``calculate_shanten`` on 136-tile ids, 14 tiles for the win check, and
``HandEvaluator.get_waits``), ``mahjong`` 2.1.0 (34-count lists; waits as 34
``is_agari`` probes), and the limit: ``benchmarks/limit.c``, plain C loops over the same
tables with no checks and no Python, compiled here with ``cc -O2``
(skipped without a compiler).
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from fangcheng.analysis import batch, hand
from fangcheng.analysis.hand import CLASSIC, Shapes

SHAPES = [
    CLASSIC,
    Shapes(seven_pairs=True, quad_pairs=True, thirteen_orphans=False),  # sichuan
    Shapes(seven_pairs=False, thirteen_orphans=False, dragon_set=True),  # baicheng
    Shapes(seven_pairs=False, thirteen_orphans=False),  # baishan
]
FUNCTIONS = ("is_win", "shanten", "waits", "draw_shanten", "discard_shanten")


def hands(n: int, seed: int) -> tuple[NDArray[np.uint8], NDArray[np.uint8]]:
    """``n`` 14-tile hands and their first 13 tiles, as N × 34 counts."""
    rng = np.random.default_rng(seed)
    h14 = np.zeros((n, 34), np.uint8)
    h13 = np.zeros((n, 34), np.uint8)
    chunk = 50_000
    for start in range(0, n, chunk):
        size = min(chunk, n - start)
        order = rng.random((size, 136)).argsort(axis=1)[:, :14]
        faces = order // 4
        flush = rng.random(size) < 0.5
        # one suit and the honours: 64 tiles, ids 0..63 -> 9 faces of the suit, 7 honours
        small = rng.random((size, 64)).argsort(axis=1)[:, :14] // 4
        suit = rng.integers(3, size=size)[:, None]
        small = np.where(small < 9, small + 9 * suit, small - 9 + 27)
        faces = np.where(flush[:, None], small, faces)
        rows = np.arange(size)[:, None]
        np.add.at(h14[start : start + size], (rows, faces), 1)
        np.add.at(h13[start : start + size], (rows, faces[:, :13]), 1)
    return h14, h13


def differential(h14: NDArray[np.uint8], h13: NDArray[np.uint8]) -> int:
    checks = 0
    kernel = batch._K
    for shapes in SHAPES:
        for name in FUNCTIONS:
            h = h14 if name in ("is_win", "discard_shanten") else h13
            ours = getattr(batch, name)(h, shapes=shapes)
            batch._K = None
            try:
                reference = getattr(batch, name)(h, shapes=shapes)
            finally:
                batch._K = kernel
            if not np.array_equal(ours, reference):
                row = int(np.flatnonzero((ours != reference).reshape(len(h), -1).any(axis=1))[0])
                sys.exit(f"{name} {shapes}: kernel and numpy differ on row {row}: {h[row]}")
            checks += len(h)
    rows14 = [bytes(r) for r in h14]
    rows13 = [bytes(r) for r in h13]
    per_hand: list[tuple[str, Any, list[bytes], Callable[[bytes], object]]] = [
        ("is_win", batch.is_win(h14).tolist(), rows14, hand.is_win),
        ("shanten", batch.shanten(h13).tolist(), rows13, hand.shanten),
        ("waits", [tuple(np.flatnonzero(m)) for m in batch.waits(h13)], rows13, hand.waits),
        (
            "draw_shanten",
            [tuple(r) for r in batch.draw_shanten(h13).tolist()],
            rows13,
            hand.draw_shanten,
        ),
        (
            "discard_shanten",
            [tuple(r) for r in batch.discard_shanten(h14).tolist()],
            rows14,
            hand.discard_shanten,
        ),
    ]
    fast = hand._K
    hand._K = None  # the per-hand functions' Python code, the reference
    try:
        for name, got, rows, func in per_hand:
            for row, (g, h) in enumerate(zip(got, rows, strict=True)):
                if g != func(h):
                    sys.exit(f"{name}: batch and per-hand differ on row {row}: {list(h)}")
            checks += len(rows)
    finally:
        hand._K = fast
    return checks


def per_call(func: Callable[[Any], object], items: Sequence[Any]) -> float:
    start = time.process_time()
    for item in items:
        func(item)
    return len(items) / (time.process_time() - start)


def whole(func: Callable[[Any], object], h: NDArray[np.uint8]) -> float:
    start = time.process_time()
    func(h)
    return len(h) / (time.process_time() - start)


def limit(h14: NDArray[np.uint8], h13: NDArray[np.uint8], repeat: int) -> list[float] | None:
    cc = shutil.which("cc")
    if cc is None:
        return None
    d = batch._dense(False)
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp)
        for name in ("suit", "suit_waits", "honours", "honour_waits", "two_suits", "pairs"):
            (out / name).write_bytes(getattr(d, name).tobytes())
        (out / "final").write_bytes(d.final.tobytes())
        (out / "dims").write_bytes(np.array([d.n_suit, d.n_honours, d.size], np.int32).tobytes())
        (out / "hands14").write_bytes(h14.tobytes())
        (out / "hands13").write_bytes(h13.tobytes())
        exe = out / "limit"
        source = Path(__file__).with_name("limit.c")
        subprocess.run([cc, "-O2", "-o", str(exe), str(source)], check=True)
        done = subprocess.run(
            [str(exe), tmp, str(repeat)], check=True, capture_output=True, text=True
        )
    ns = [float(x) for x in done.stdout.split()[:3]]
    return [1e9 / x for x in ns]


def ids136(h: NDArray[np.uint8]) -> list[list[int]]:
    return [[4 * t + k for t in range(34) for k in range(int(row[t]))] for row in h]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hands", type=int, default=1_000_000, help="differential run")
    parser.add_argument("--timed", type=int, default=100_000, help="hands timed")
    parser.add_argument("--seed", type=int, default=20)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    print(f"compiled kernel: {'yes' if batch.KERNEL else 'no (numpy only)'}")
    h14, h13 = hands(args.hands, args.seed)
    start = time.process_time()
    checks = differential(h14, h13) if args.hands else 0
    print(
        f"differential: {args.hands:,} hands of 14 and of 13 tiles, {checks:,} results,"
        f" all equal ({time.process_time() - start:.0f} s CPU)"
    )
    t14, t13 = h14[: args.timed], h13[: args.timed]
    b14, b13 = [bytes(r) for r in t14], [bytes(r) for r in t13]
    l14, l13 = [list(r) for r in b14], [list(r) for r in b13]
    i14, i13 = ids136(t14), ids136(t13)
    kernel = batch._K

    def python(func: Callable[[Any], object]) -> Callable[[], float]:
        def run() -> float:
            fast = hand._K
            hand._K = None
            try:
                return per_call(
                    func, b13 if func in (hand.shanten, hand.waits, hand.draw_shanten) else b14
                )
            finally:
                hand._K = fast

        return run

    def numpy_path(func: Callable[[Any], object]) -> Callable[[Any], object]:
        def run(h: Any) -> object:
            batch._K = None
            try:
                return func(h)
            finally:
                batch._K = kernel

        return run

    contenders: dict[str, dict[str, Callable[[], float]]] = {
        "win check": {
            "python": python(hand.is_win),
            "per call": lambda: per_call(hand.is_win, b14),
            "numpy": lambda: whole(numpy_path(batch.is_win), t14),
            "kernel": lambda: whole(batch.is_win, t14),
        },
        "shanten": {
            "python": python(hand.shanten),
            "per call": lambda: per_call(hand.shanten, b13),
            "numpy": lambda: whole(numpy_path(batch.shanten), t13),
            "kernel": lambda: whole(batch.shanten, t13),
        },
        "waits": {
            "python": python(hand.waits),
            "per call": lambda: per_call(hand.waits, b13),
            "numpy": lambda: whole(numpy_path(batch.waits), t13),
            "kernel": lambda: whole(batch.waits, t13),
        },
        "draw shanten": {
            "python": python(hand.draw_shanten),
            "per call": lambda: per_call(hand.draw_shanten, b13),
            "numpy": lambda: whole(numpy_path(batch.draw_shanten), t13),
            "kernel": lambda: whole(batch.draw_shanten, t13),
        },
        "discard shanten": {
            "python": python(hand.discard_shanten),
            "per call": lambda: per_call(hand.discard_shanten, b14),
            "numpy": lambda: whole(numpy_path(batch.discard_shanten), t14),
            "kernel": lambda: whole(batch.discard_shanten, t14),
        },
    }
    try:
        from mahjong.agari import Agari
        from mahjong.shanten import Shanten

        def mahjong_waits(counts: list[int]) -> list[int]:
            found = []
            for t in range(34):
                if counts[t] < 4:
                    counts[t] += 1
                    if Agari.is_agari(counts):
                        found.append(t)
                    counts[t] -= 1
            return found

        contenders["win check"]["mahjong"] = lambda: per_call(Agari.is_agari, l14)
        contenders["shanten"]["mahjong"] = lambda: per_call(Shanten.calculate_shanten, l13)
        contenders["waits"]["mahjong"] = lambda: per_call(mahjong_waits, l13)
    except ImportError:
        print("mahjong not installed")
    try:
        from riichienv import _riichienv as rc

        contenders["win check"]["riichienv"] = lambda: per_call(rc.calculate_shanten, i14)
        contenders["shanten"]["riichienv"] = lambda: per_call(rc.calculate_shanten, i13)
        contenders["waits"]["riichienv"] = lambda: per_call(
            lambda t: rc.HandEvaluator(t).get_waits(), i13
        )
    except ImportError:
        print("riichienv not installed (pip install '.[bench]')")
    best: dict[tuple[str, str], float] = {}
    for _ in range(args.repeat):
        for task, runs in contenders.items():
            for who, run in runs.items():
                best[task, who] = max(best.get((task, who), 0.0), run())
    c_limit = limit(t14, t13, args.repeat)
    if c_limit is not None:
        for task, value in zip(("win check", "shanten", "waits"), c_limit, strict=True):
            best[task, "C limit"] = value
    columns = ["python", "per call", "numpy", "kernel", "C limit", "riichienv", "mahjong"]
    print(f"\n{args.timed:,} hands timed, hands/s, best of {args.repeat}, process CPU time")
    print(f"{'task':<17}" + "".join(f"{c:>12}" for c in columns) + f"{'k/riichi':>10}{'C/k':>7}")
    for task in contenders:
        cells = [best.get((task, c)) for c in columns]
        line = f"{task:<17}" + "".join(f"{v:>12,.0f}" if v else f"{'':>12}" for v in cells)
        k, c, r = (
            best.get((task, "kernel")),
            best.get((task, "C limit")),
            best.get((task, "riichienv")),
        )
        line += f"{k / r:>9.1f}x" if k and r else f"{'':>10}"
        line += f"{c / k:>6.1f}x" if k and c else ""
        print(line)
    for task in ("win check", "shanten", "waits"):
        k = best.get((task, "kernel"))
        if k:
            print(f"{task}: kernel {1e9 / k:.0f} ns/hand", end="")
            c = best.get((task, "C limit"))
            print(f", C limit {1e9 / c:.0f} ns/hand" if c else "")


if __name__ == "__main__":
    main()
