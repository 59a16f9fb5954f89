"""Batched hand analysis for numpy arrays: ``N × 34`` count rows in, arrays out.

The same tables as `fangcheng.analysis.hand` (`fangcheng.analysis.tables`), laid out
densely — each component's counts read as a base-5 number index a flat array — so a
whole batch is a handful of numpy gathers instead of ``N`` interpreter calls. Where the
package was installed with a C compiler at hand, a small compiled kernel
(``_kernel.c``, built by ``setup.py``) walks the same arrays in plain C loops, several
times faster again; without it (`KERNEL` is False: `fangcheng.analysis.hand` warned
once, on import) the numpy code runs. The numpy code is also the kernel's reference. Every
function agrees with its per-hand counterpart on every legal hand (the differential
tests and ``benchmarks/bench_batch.py`` check it); a row the per-hand function would
refuse (a fifth copy, more than 14 tiles, a tile count of the wrong residue) is a
`TileCountError` naming the first such row.

>>> import numpy as np
>>> from fangcheng.tiles.notation import parse_counts
>>> hands = np.array([parse_counts("123m456p789s11122z"), parse_counts("123m456p789s11123z")])
>>> is_win(hands).tolist()
[True, False]
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from types import ModuleType
from typing import Final

import numpy as np
from numpy.typing import ArrayLike, NDArray

from fangcheng.analysis import hand as _hand
from fangcheng.analysis import tables
from fangcheng.analysis.hand import CLASSIC, Shapes, _dicts
from fangcheng.tiles.notation import KINDS, TileCountError, format_counts

__all__ = [
    "KERNEL",
    "NO_CHANGE",
    "discard_shanten",
    "draw_shanten",
    "is_win",
    "shanten",
    "shanten_forms",
    "waits",
]

#: Reported for a form a hand cannot take (seven pairs below 13 tiles, a form the shapes
#: forbid) and, as in the per-hand API, for a face that cannot be drawn or discarded.
NO_CHANGE: Final = 99

_ORPHAN_FACES: Final = np.array((0, 9, 18, 8, 17, 26, 27, 28, 29, 30, 31, 32, 33))
_WIN_CODES: Final = np.array([16 * melds + 1 for melds in range(5)])
_ID: Final = tables.ID_SHIFT
_COUNT: Final = tables.COUNT_SHIFT
_P9: Final = 5 ** np.arange(9, dtype=np.int64)
_P7: Final = _P9[:7]
_STARTS: Final = (0, 9, 18, 27)


@dataclass(frozen=True, slots=True)
class _Dense:
    """One honours kind's tables as flat arrays indexed by base-5 component keys."""

    suit: NDArray[np.int32]  # 5**9: packed entry, -1 where no hand (over 14 tiles)
    suit_waits: NDArray[np.int32]  # 5**9: wait word (INCOMPLETE where none is stored)
    honours: NDArray[np.int32]  # 5**7
    honour_waits: NDArray[np.int32]
    two_suits: NDArray[np.int32]
    n_suit: int
    pairs: NDArray[np.int32]
    n_honours: int
    size: int
    final: NDArray[np.int16]


def _index(keys: list[bytes], faces: int) -> NDArray[np.int64]:
    rows = np.frombuffer(b"".join(keys), np.uint8).reshape(-1, faces).astype(np.int64)
    return rows @ _P9[:faces]


def _flat(entries: dict[bytes, int], faces: int, fill: int) -> NDArray[np.int32]:
    out = np.full(5**faces, fill, np.int32)
    if entries:
        out[_index(list(entries), faces)] = np.fromiter(entries.values(), np.int64)
    return out


@cache
def _dense(dragon_set: bool) -> _Dense:
    """Built on first use (a fraction of a second; about 17 MB, shared by both kinds'
    suit arrays)."""
    t = _dicts()
    honours = t.dragon_set if dragon_set else t.honours
    return _Dense(
        suit=_suit_entries(),
        suit_waits=_suit_waits(),
        honours=_flat(honours.component.entries, 7, -1),
        honour_waits=_flat(honours.component.waits, 7, tables.INCOMPLETE),
        two_suits=np.array(t.two_suits, np.int32),
        n_suit=t.suit.size,
        pairs=np.array(honours.pairs, np.int32),
        n_honours=honours.component.size,
        size=honours.size,
        final=np.frombuffer(honours.final, np.uint8).astype(np.int16),
    )


@cache
def _suit_entries() -> NDArray[np.int32]:
    return _flat(_dicts().suit.entries, 9, -1)


@cache
def _suit_waits() -> NDArray[np.int32]:
    return _flat(_dicts().suit.waits, 9, tables.INCOMPLETE)


def _rows(hands: ArrayLike) -> NDArray[np.uint8]:
    h = np.asarray(hands)
    if h.ndim != 2 or h.shape[1] != KINDS:
        raise TileCountError(f"a batch is N × 34 counts, got shape {h.shape}")
    if h.dtype != np.uint8:
        if h.size and (h.min() < 0 or h.max() > 255):
            raise TileCountError("counts are 0..4")
        h = h.astype(np.uint8)
    return np.ascontiguousarray(h)


def _keys(h: NDArray[np.uint8]) -> tuple[NDArray[np.int64], ...]:
    return (
        h[:, 0:9] @ _P9,
        h[:, 9:18] @ _P9,
        h[:, 18:27] @ _P9,
        h[:, 27:34] @ _P7,
    )


def _refuse(h: NDArray[np.uint8], bad: NDArray[np.bool_], why: str) -> TileCountError:
    row = int(np.flatnonzero(bad)[0])
    return TileCountError(f"row {row}: hand {format_counts(bytes(h[row]))} {why}")


def _checked(h: NDArray[np.uint8], rest: tuple[int, ...]) -> NDArray[np.int64]:
    """The hands' tile counts, every row checked."""
    if h.size and h.max() > 4:
        raise _refuse(h, np.asarray((h > 4).any(axis=1)), "holds a fifth copy")
    n = np.asarray(h.sum(axis=1, dtype=np.int64))
    bad = (n > 14) | ~np.isin(n % 3, rest)
    if bad.any():
        ok = " or ".join({0: "3k", 1: "13 - 3k", 2: "14 - 3k"}[r] for r in rest)
        raise _refuse(h, bad, f"has a tile count other than {ok} (at most 14)")
    return n


def _standard(
    d: _Dense, keys: tuple[NDArray[np.int64], ...], n: NDArray[np.int64]
) -> NDArray[np.int16]:
    """Standard-form shanten of checked hands, toward ``n // 3`` melds and a pair."""
    a, b, c, e = d.suit[keys[0]], d.suit[keys[1]], d.suit[keys[2]], d.honours[keys[3]]
    two = d.two_suits[(a >> _ID) * d.n_suit + (b >> _ID)]
    joined = d.pairs[(c >> _ID) * d.n_honours + (e >> _ID)]
    return np.asarray(d.final[(two.astype(np.int64) * d.size + joined) * 5 + n // 3] - 1, np.int16)


def _seven_pairs(h: NDArray[np.uint8], quad_pairs: bool) -> NDArray[np.int16]:
    pairs = (h >= 2).sum(axis=1, dtype=np.int16)
    if quad_pairs:
        return np.asarray(6 - pairs - (h == 4).sum(axis=1, dtype=np.int16), np.int16)
    kinds = (h > 0).sum(axis=1, dtype=np.int16)
    return np.asarray(6 - pairs + np.maximum(7 - kinds, 0), np.int16)


def _thirteen_orphans(h: NDArray[np.uint8]) -> NDArray[np.int16]:
    o = h[:, _ORPHAN_FACES]
    return np.asarray((o == 0).sum(axis=1, dtype=np.int16) - (o >= 2).any(axis=1), np.int16)


def _forms(
    h: NDArray[np.uint8], n: NDArray[np.int64], shapes: Shapes
) -> tuple[NDArray[np.int16], NDArray[np.int16], NDArray[np.int16]]:
    standard = _standard(_dense(shapes.dragon_set), _keys(h), n)
    closed = n >= 13
    far = np.int16(NO_CHANGE)
    pairs = np.full(len(h), far, np.int16)
    orphans = np.full(len(h), far, np.int16)
    if shapes.seven_pairs:
        pairs = np.where(closed, _seven_pairs(h, shapes.quad_pairs), far)
    if shapes.thirteen_orphans:
        orphans = np.where(closed, _thirteen_orphans(h), far)
    return standard, pairs, orphans


def _np_shanten_forms(
    hands: ArrayLike, *, shapes: Shapes = CLASSIC
) -> tuple[NDArray[np.int8], NDArray[np.int8], NDArray[np.int8]]:
    """Each form's shanten (standard, seven pairs, thirteen orphans) of ``13 - 3k`` or
    ``14 - 3k`` tile hands; `NO_CHANGE` where a form is not allowed or the hand has
    melds laid down (fewer than 13 tiles)."""
    h = _rows(hands)
    n = _checked(h, (1, 2))
    standard, pairs, orphans = _forms(h, n, shapes)
    return standard.astype(np.int8), pairs.astype(np.int8), orphans.astype(np.int8)


def _np_shanten(hands: ArrayLike, *, shapes: Shapes = CLASSIC) -> NDArray[np.int8]:
    """The least shanten over the allowed forms, per row (-1: complete, 0: ready)."""
    h = _rows(hands)
    n = _checked(h, (1, 2))
    return np.asarray(np.minimum.reduce(_forms(h, n, shapes)), np.int8)


def _np_is_win(hands: ArrayLike, *, shapes: Shapes = CLASSIC) -> NDArray[np.bool_]:
    """Whether each ``14 - 3k`` tile hand is complete."""
    h = _rows(hands)
    n = _checked(h, (2,))
    return np.asarray(np.minimum.reduce(_forms(h, n, shapes)) < 0)


def _mask_bits(words: NDArray[np.int64], faces: int) -> NDArray[np.bool_]:
    return ((words[:, None] >> np.arange(faces)) & 1).astype(bool)


def _np_waits(hands: ArrayLike, *, shapes: Shapes = CLASSIC) -> NDArray[np.bool_]:
    """``N × 34``: the faces that complete each ``13 - 3k`` tile hand (by shape, as
    `fangcheng.analysis.hand.waits` without melds)."""
    h = _rows(hands)
    n = _checked(h, (1,))
    d = _dense(shapes.dragon_set)
    keys = _keys(h)
    words = np.stack(
        [
            d.suit_waits[keys[0]],
            d.suit_waits[keys[1]],
            d.suit_waits[keys[2]],
            d.honour_waits[keys[3]],
        ],
        axis=1,
    ).astype(np.int64)
    codes = words & 3
    incomplete = codes == tables.INCOMPLETE
    short = incomplete.sum(axis=1)
    total = codes.sum(axis=1)
    melds_only = (words >> tables.W0_SHIFT) & 511
    with_pair = (words >> tables.W1_SHIFT) & 511
    # One component short: it completes as melds only if another holds the pair, else
    # with the pair; none short and two pairs: either pair becomes a pung.
    pairs_elsewhere = total - tables.INCOMPLETE
    one_short = (short == 1) & (pairs_elsewhere <= 1)
    chosen = np.where(pairs_elsewhere[:, None] >= 1, melds_only, with_pair)
    active = np.where(
        one_short[:, None],
        np.where(incomplete, chosen, 0),
        np.where(((short == 0) & (total == 2))[:, None] & (codes == 1), melds_only, 0),
    )
    out = np.zeros(h.shape, bool)
    for i, start in enumerate(_STARTS):
        faces = 7 if start == 27 else 9
        out[:, start : start + faces] = _mask_bits(active[:, i], faces)
    closed = n == 13
    if shapes.seven_pairs:
        odd = (h & 1).astype(bool)
        single = closed & (odd.sum(axis=1) == 1)
        if not shapes.quad_pairs:
            single &= ~(h == 3).any(axis=1) & ~(h == 4).any(axis=1)
        out |= single[:, None] & odd
    if shapes.thirteen_orphans:
        o = h[:, _ORPHAN_FACES]
        missing = (o == 0).sum(axis=1)
        ready = closed & (o.sum(axis=1, dtype=np.int64) == 13) & (missing <= 1)
        out[:, _ORPHAN_FACES] |= (ready & (missing == 0))[:, None] | (ready[:, None] & (o == 0))
    return out


def _after_each(hands: ArrayLike, step: int, shapes: Shapes) -> NDArray[np.int8]:
    h = _rows(hands)
    n = _checked(h, (1,) if step == 1 else (2,))
    out = np.full(h.shape, NO_CHANGE, np.int8)
    changed = h.copy()
    m = n + step
    for t in range(KINDS):
        column = h[:, t]
        ok = column < 4 if step == 1 else column > 0
        if not ok.any():
            continue
        changed[:, t] = column + step if step == 1 else column - 1
        rows = changed[ok]
        out[ok, t] = np.minimum.reduce(_forms(rows, m[ok], shapes))
        changed[:, t] = column
    return out


def _np_draw_shanten(hands: ArrayLike, *, shapes: Shapes = CLASSIC) -> NDArray[np.int8]:
    """``N × 34``: each ``13 - 3k`` tile hand's shanten after drawing each face
    (`NO_CHANGE` for a face held four times)."""
    return _after_each(hands, 1, shapes)


def _np_discard_shanten(hands: ArrayLike, *, shapes: Shapes = CLASSIC) -> NDArray[np.int8]:
    """``N × 34``: each ``14 - 3k`` tile hand's shanten after discarding each face
    (`NO_CHANGE` for a face not held)."""
    return _after_each(hands, -1, shapes)


# --- the compiled kernel, where it was built -------------------------------------------


_K: ModuleType | None = _hand._K
#: Whether the compiled kernel is in use.
KERNEL: Final = _K is not None


def _flags(shapes: Shapes) -> tuple[int, int]:
    """The kernel's honours kind and shape flags."""
    flags = shapes.seven_pairs | shapes.quad_pairs << 1 | shapes.thirteen_orphans << 2
    return int(shapes.dragon_set), flags


def _failed(bad: int, h: NDArray[np.uint8], rest: tuple[int, ...]) -> None:
    """Raise the numpy path's error for the row the kernel refused."""
    if bad >= 0:
        _checked(h[: bad + 1], rest)  # the rows before it passed: it is the first
        raise AssertionError("the kernel refused a row the checks accept")  # pragma: no cover


def shanten_forms(
    hands: ArrayLike, *, shapes: Shapes = CLASSIC
) -> tuple[NDArray[np.int8], NDArray[np.int8], NDArray[np.int8]]:
    """Each form's shanten (standard, seven pairs, thirteen orphans) of ``13 - 3k`` or
    ``14 - 3k`` tile hands; `NO_CHANGE` where a form is not allowed or the hand has
    melds laid down (fewer than 13 tiles)."""
    if _K is None:
        return _np_shanten_forms(hands, shapes=shapes)
    h = _rows(hands)
    out = np.empty((4, len(h)), np.int8)
    _failed(_K.shanten(*_flags(shapes), 6, h, out[0], out[1], out[2], out[3]), h, (1, 2))
    return out[1], out[2], out[3]


def shanten(hands: ArrayLike, *, shapes: Shapes = CLASSIC) -> NDArray[np.int8]:
    """The least shanten over the allowed forms, per row (-1: complete, 0: ready)."""
    if _K is None:
        return _np_shanten(hands, shapes=shapes)
    h = _rows(hands)
    out = np.empty((4, len(h)), np.int8)
    _failed(_K.shanten(*_flags(shapes), 6, h, out[0], out[1], out[2], out[3]), h, (1, 2))
    return np.asarray(out[0], np.int8)


def is_win(hands: ArrayLike, *, shapes: Shapes = CLASSIC) -> NDArray[np.bool_]:
    """Whether each ``14 - 3k`` tile hand is complete."""
    if _K is None:
        return _np_is_win(hands, shapes=shapes)
    h = _rows(hands)
    out = np.empty(len(h), np.bool_)
    _failed(_K.is_win(*_flags(shapes), h, out), h, (2,))
    return out


def waits(hands: ArrayLike, *, shapes: Shapes = CLASSIC) -> NDArray[np.bool_]:
    """``N × 34``: the faces that complete each ``13 - 3k`` tile hand (by shape, as
    `fangcheng.analysis.hand.waits` without melds)."""
    if _K is None:
        return _np_waits(hands, shapes=shapes)
    h = _rows(hands)
    out = np.empty(h.shape, np.bool_)
    _failed(_K.waits(*_flags(shapes), h, out), h, (1,))
    return out


def draw_shanten(hands: ArrayLike, *, shapes: Shapes = CLASSIC) -> NDArray[np.int8]:
    """``N × 34``: each ``13 - 3k`` tile hand's shanten after drawing each face
    (`NO_CHANGE` for a face held four times)."""
    if _K is None:
        return _np_draw_shanten(hands, shapes=shapes)
    h = _rows(hands)
    out = np.empty(h.shape, np.int8)
    _failed(_K.after(*_flags(shapes), 1, h, out), h, (1,))
    return out


def discard_shanten(hands: ArrayLike, *, shapes: Shapes = CLASSIC) -> NDArray[np.int8]:
    """``N × 34``: each ``14 - 3k`` tile hand's shanten after discarding each face
    (`NO_CHANGE` for a face not held)."""
    if _K is None:
        return _np_discard_shanten(hands, shapes=shapes)
    h = _rows(hands)
    out = np.empty(h.shape, np.int8)
    _failed(_K.after(*_flags(shapes), -1, h, out), h, (2,))
    return out
