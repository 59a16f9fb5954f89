"""Issue 20: the batched analysis (`fangcheng.analysis.batch`), its compiled kernel and
its numpy path each, against the per-hand functions it vectorises, on seeded random
hands of every size and every `Shapes` the rule sets use (the long run of a million
hands is ``benchmarks/bench_batch.py``)."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pytest
from numpy.typing import NDArray

from fangcheng.analysis import batch, hand
from fangcheng.analysis.hand import CLASSIC, Shapes
from fangcheng.tiles.notation import TileCountError

SHAPES = [
    CLASSIC,
    Shapes(seven_pairs=True, quad_pairs=True, thirteen_orphans=False),  # sichuan
    Shapes(seven_pairs=False, thirteen_orphans=False, dragon_set=True),  # baicheng
    Shapes(seven_pairs=False, thirteen_orphans=False),
]


@pytest.fixture(autouse=True, params=["kernel", "numpy"])
def path(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """Each test runs on both paths; the kernel's only where it was built."""
    if request.param == "numpy":
        monkeypatch.setattr(batch, "_K", None)
    elif not batch.KERNEL:
        pytest.skip("the compiled kernel was not built")
    yield request.param


def sample(rng: np.random.Generator, size: int, tiles: int) -> NDArray[np.uint8]:
    """``size`` hands of ``tiles`` tiles: random draws from the 136, and (a third) from
    one suit and the honours, or near seven pairs and thirteen orphans, where the rarer
    branches live."""
    out = np.zeros((size, 34), np.uint8)
    for row in out:
        kind = rng.integers(5)
        if kind == 0:
            faces = np.arange(34)
        elif kind == 1:
            faces = np.r_[np.arange(9) + 9 * rng.integers(3), np.arange(27, 34)]
        elif kind == 2:
            faces = rng.choice(34, 8, replace=False)
        elif kind == 3:
            faces = np.unique(np.r_[0, 8, 9, 17, 18, 26, 27:34, rng.integers(34)])
        else:
            faces = np.arange(9) + 9 * rng.integers(3)
        pool = np.repeat(faces, 4)
        np.add.at(row, rng.choice(pool, min(tiles, len(pool)), replace=False), 1)
    return out[out.sum(axis=1) == tiles]


@pytest.mark.parametrize("shapes", SHAPES)
@pytest.mark.parametrize("tiles", [2, 5, 8, 11, 14])
def test_win_check_and_discard_shanten_agree(shapes: Shapes, tiles: int) -> None:
    hands = sample(np.random.default_rng(tiles), 600, tiles)
    rows = [bytes(h) for h in hands]
    assert batch.is_win(hands, shapes=shapes).tolist() == [
        hand.is_win(h, shapes=shapes) for h in rows
    ]
    assert batch.shanten(hands, shapes=shapes).tolist() == [
        hand.shanten(h, shapes=shapes) for h in rows
    ]
    assert batch.discard_shanten(hands, shapes=shapes).tolist() == [
        list(hand.discard_shanten(h, shapes=shapes)) for h in rows
    ]


@pytest.mark.parametrize("shapes", SHAPES)
@pytest.mark.parametrize("tiles", [1, 4, 7, 10, 13])
def test_shanten_waits_and_draw_shanten_agree(shapes: Shapes, tiles: int) -> None:
    hands = sample(np.random.default_rng(100 + tiles), 600, tiles)
    rows = [bytes(h) for h in hands]
    standard, pairs, orphans = batch.shanten_forms(hands, shapes=shapes)
    assert standard.tolist() == [hand.shanten_standard(h, shapes=shapes) for h in rows]
    if tiles == 13:
        if shapes.seven_pairs:
            assert pairs.tolist() == [hand.shanten_seven_pairs(h, shapes=shapes) for h in rows]
        if shapes.thirteen_orphans:
            assert orphans.tolist() == [hand.shanten_thirteen_orphans(h) for h in rows]
    assert batch.shanten(hands, shapes=shapes).tolist() == [
        hand.shanten(h, shapes=shapes) for h in rows
    ]
    mask = batch.waits(hands, shapes=shapes)
    assert [tuple(np.flatnonzero(m).tolist()) for m in mask] == [
        hand.waits(h, shapes=shapes) for h in rows
    ]
    assert batch.draw_shanten(hands, shapes=shapes).tolist() == [
        list(hand.draw_shanten(h, shapes=shapes)) for h in rows
    ]


def test_ready_hands_wait() -> None:
    """A sample of random hands holds few ready ones: every ready hand of the sample's
    13-tile hands is checked again on its own, and some exist."""
    hands = sample(np.random.default_rng(7), 3000, 13)
    ready = hands[batch.shanten(hands) == 0]
    assert len(ready) > 20
    assert all(batch.waits(ready).any(axis=1))


def test_bad_rows_are_refused_by_row() -> None:
    good = np.zeros((3, 34), np.uint8)
    good[:, 0] = 2
    bad = good.copy()
    bad[1, 5] = 5
    with pytest.raises(TileCountError, match="row 1"):
        batch.shanten(bad)
    with pytest.raises(TileCountError, match="row 0"):
        batch.waits(good)  # two tiles: not 13 - 3k
    with pytest.raises(TileCountError, match="shape"):
        batch.is_win(np.zeros((2, 33), np.uint8))
