"""Issue 20: the per-hand functions of `fangcheng.analysis.hand` give the same results
and the same errors with the compiled kernel as with their Python code (the reference),
on seeded random hands of every size and every `Shapes` the rule sets use."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable

import numpy as np
import pytest

from fangcheng.analysis import hand
from fangcheng.analysis.hand import Shapes
from test_analysis_batch import SHAPES, sample

built = pytest.mark.skipif(hand._K is None, reason="the compiled kernel was not built")


class Raised(tuple[type, str]):
    """An error as its type and text."""


def both(monkeypatch: pytest.MonkeyPatch, call: Callable[[], object]) -> tuple[object, object]:
    """``call`` with the kernel, then on the Python code."""
    out: list[object] = []
    kernel = hand._K
    for k in (kernel, None):
        monkeypatch.setattr(hand, "_K", k)
        try:
            out.append(call())
        except ValueError as error:
            out.append(Raised((type(error), str(error))))
    monkeypatch.setattr(hand, "_K", kernel)
    return out[0], out[1]


@built
@pytest.mark.parametrize("shapes", SHAPES)
def test_every_function_agrees_with_its_python_code(
    shapes: Shapes, monkeypatch: pytest.MonkeyPatch
) -> None:
    rng = np.random.default_rng(20)
    rows = [bytes(h) for tiles in range(1, 15) for h in sample(rng, 150, tiles)]
    functions: list[Callable[[bytes], object]] = [
        lambda h: hand.is_win(h, shapes=shapes),
        lambda h: hand.shanten(h, shapes=shapes),
        lambda h: hand.shanten_standard(h, shapes=shapes),
        lambda h: hand.waits(h, shapes=shapes),
        lambda h: hand.waits(h, shapes=shapes, melds=["111z"]),
        lambda h: hand.draw_shanten(h, shapes=shapes),
        lambda h: hand.discard_shanten(h, shapes=shapes),
        lambda h: hand.decompositions(h, shapes=shapes),
    ]
    compared = 0
    for h in rows:
        for func in functions:
            with_kernel, reference = both(monkeypatch, lambda: func(h))  # noqa: B023
            assert with_kernel == reference, (list(h), with_kernel, reference)
            compared += not isinstance(reference, Raised)
    assert compared > len(rows) * 3  # most calls are legal, not errors


def _complete(rng: np.random.Generator, melds: int, faces: list[int]) -> bytes | None:
    """A hand of ``melds`` groups and a pair, of ``faces``: pungs, chows, 中发白 sets, and
    now and then three chows of one start (three pungs too) where readings multiply."""
    counts = [0] * 34
    left = melds
    while left:
        kind, t = rng.integers(4), int(rng.choice(faces))
        run = t < 27 and t % 9 < 7
        if kind == 0 and run:
            group = [t, t + 1, t + 2]
        elif kind == 1 and run and left >= 3:
            group, left = [t, t + 1, t + 2] * 3, left - 2
        elif kind == 2 and rng.integers(3) == 0:
            group = [31, 32, 33]
        else:
            group = [t] * 3
        left -= 1
        for g in group:
            counts[g] += 1
    counts[int(rng.choice(faces))] += 2
    return bytes(counts) if max(counts) <= 4 else None


@built
@pytest.mark.parametrize("shapes", SHAPES)
def test_decompositions_of_complete_hands_agree_with_the_python_code(
    shapes: Shapes, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every reading, in the order found (the scorer keeps the first of equal ones, D2),
    of complete hands of every size, most of one suit and the honours where readings
    multiply."""
    rng = np.random.default_rng(40)
    several = compared = 0
    for _ in range(3000):
        suit = 9 * int(rng.integers(3))
        kind = rng.integers(3)  # every face; one suit; one suit, E and C
        honours = [27, 31] if kind == 2 else []
        faces = list(range(34)) if kind == 0 else [*range(suit, suit + 9), *honours]
        h = _complete(rng, int(rng.choice([0, 1, 2, 3, 4, 4, 4])), faces)
        if h is None:
            continue
        with_kernel, reference = both(
            monkeypatch,
            lambda: hand.decompositions(h, shapes=shapes),  # noqa: B023
        )
        assert with_kernel == reference, (list(h), with_kernel, reference)
        assert hand._K.decompose1(h, shapes.dragon_set) is not None  # the kernel answered
        compared += 1
        several += isinstance(reference, list) and len(reference) > 1
    assert compared > 2000 and several > 200


@built
def test_bad_hands_raise_the_python_codes_errors(monkeypatch: pytest.MonkeyPatch) -> None:
    fifth = bytes([5] + [0] * 33)
    too_many = bytes([3] * 5 + [0] * 29)
    for h in (fifth, too_many, bytes(34)):
        for func in (hand.is_win, hand.shanten, hand.waits, hand.draw_shanten, hand.decompositions):
            with_kernel, reference = both(monkeypatch, lambda: func(h))  # noqa: B023
            assert isinstance(reference, Raised)
            assert with_kernel == reference
    # the unchecked bytes function too, on a hand it must not be given: the same answer
    assert (
        hand.draw_shanten_bytes(bytes([1] * 13 + [0] * 21), hand.CLASSIC)
        == both(
            monkeypatch, lambda: hand.draw_shanten_bytes(bytes([1] * 13 + [0] * 21), hand.CLASSIC)
        )[1]
    )


def test_without_the_kernel_analysis_runs_on_python_and_says_so_once() -> None:
    """As on a machine that had no C compiler at install: the module cannot be imported."""
    script = """
import sys
sys.modules["fangcheng.analysis._kernel"] = None  # import fails, as when never built
from fangcheng.analysis import batch, hand
import fangcheng.analysis.hand
assert hand._K is None and not batch.KERNEL
assert hand.shanten("123m456p789s1122z") == 0
assert batch.waits([list(hand._counts("123m456p789s1122z"))]).nonzero()[1].tolist() == [27, 28]
"""
    done = subprocess.run(
        [sys.executable, "-W", "default", "-c", script], capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    assert done.stderr.count("the compiled kernel was not built") == 1
