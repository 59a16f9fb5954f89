"""Generate ``src/fangcheng/analysis/data/tables.bin``, the tables behind hand analysis.

Run ``python tools/gen_tables.py`` (needs numpy, a development dependency). The output
is deterministic; ``tests/test_tables.py`` regenerates it and compares bytes.

Distance vectors are computed by a separable min-plus transform: start with distance 0
on every exact target (``m`` melds and ``p`` pairs, no face above 4) and infinity
elsewhere, then relax one face axis at a time with ``cost = max(0, target - have)``.
After all axes, ``d(c) = min over targets T of sum(max(0, T_i - c_i))``.
"""

from __future__ import annotations

import importlib.util
import itertools
import sys
import zlib
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent


def _tables_module():  # type: ignore[no-untyped-def]
    """``fangcheng.analysis.tables`` alone: importing the package would load the file we write."""
    spec = importlib.util.spec_from_file_location(
        "_fangcheng_tables", ROOT / "src/fangcheng/analysis/tables.py"
    )
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


T = _tables_module()

INF = 99


def meld_shapes(faces: int, chows: bool, dragon_set: bool) -> list[tuple[int, ...]]:
    shapes = [tuple(3 if i == f else 0 for i in range(faces)) for f in range(faces)]
    if chows:
        shapes += [
            tuple(1 if f <= i < f + 3 else 0 for i in range(faces)) for f in range(faces - 2)
        ]
    if dragon_set:  # honours: 4 winds then P F C
        shapes.append((0, 0, 0, 0, 1, 1, 1))
    return shapes


def distances(faces: int, melds: list[tuple[int, ...]]) -> np.ndarray:
    """Array [m, p, c_0, ..., c_{faces-1}] of distances."""
    shape = (5,) * faces
    out = np.full((5, 2, *shape), INF, dtype=np.int16)
    for m in range(5):
        for p in range(2):
            dist = np.full(shape, INF, dtype=np.int16)
            for combo in itertools.combinations_with_replacement(range(len(melds)), m):
                base = [sum(melds[k][i] for k in combo) for i in range(faces)]
                for pair in [None] if p == 0 else range(faces):
                    target = list(base)
                    if pair is not None:
                        target[pair] += 2
                    if max(target, default=0) <= 4:
                        dist[tuple(target)] = 0
            for axis in range(faces):
                moved = np.moveaxis(dist, axis, 0)
                relaxed = np.stack(
                    [
                        np.min(np.stack([moved[x] + max(0, x - v) for x in range(5)]), axis=0)
                        for v in range(5)
                    ]
                )
                dist = np.moveaxis(relaxed, 0, axis)
            out[m, p] = dist
    return out


def component(faces: int, melds: list[tuple[int, ...]]) -> tuple[bytes, list[bytes]]:
    """The file section of one component, and its distance vectors by id."""
    dist = distances(faces, melds)
    keys = T.configs(faces)
    index = {k: i for i, k in enumerate(keys)}
    digits = np.frombuffer(b"".join(keys), dtype=np.uint8).reshape(len(keys), faces)
    table = np.minimum(dist.reshape(T.VECTOR_LEN, *dist.shape[2:])[(slice(None), *digits.T)].T, 255)
    flat = table.astype(np.uint8).tobytes()
    vectors: list[bytes] = []
    vector_ids: dict[bytes, int] = {}
    ids: list[int] = []
    complete: list[int] = []
    for i, key in enumerate(keys):
        vec = flat[i * T.VECTOR_LEN : (i + 1) * T.VECTOR_LEN]
        vid = vector_ids.get(vec)
        if vid is None:
            vid = vector_ids[vec] = len(vectors)
            vectors.append(vec)
        ids.append(vid)
        total = sum(key)
        if total % 3 == 0 and vec[(total // 3) * 2] == 0:
            complete.append(0)
        elif total % 3 == 2 and vec[((total - 2) // 3) * 2 + 1] == 0:
            complete.append(1)
        else:
            complete.append(T.INCOMPLETE)
    words = list(complete)
    for key, i in index.items():
        if sum(key) >= T.MAX_TILES:
            continue
        for face in range(faces):
            if key[face] == 4:
                continue
            grown = key[:face] + bytes((key[face] + 1,)) + key[face + 1 :]
            done = complete[index[grown]]
            if done != T.INCOMPLETE:
                words[i] |= 1 << (face + (T.W1_SHIFT if done else T.W0_SHIFT))
    entries = [
        vid << T.ID_SHIFT
        | sum(key) << T.COUNT_SHIFT
        | (T.NOT_COMPLETE if done == T.INCOMPLETE else done + 16 * ((sum(key) - 2 * done) // 3))
        for key, vid, done in zip(keys, ids, complete, strict=True)
    ]
    section = (
        T.write_array([len(vectors)], 2)
        + T.write_array(entries, 4)
        + T.write_array([i for i, w in enumerate(words) if w != T.INCOMPLETE], 4)
        + T.write_array([w for w in words if w != T.INCOMPLETE], 4)
    )
    return section, vectors


def combine(a: bytes, b: bytes) -> bytes:
    """Min-plus combination of two distance vectors."""
    out = []
    for m in range(5):
        for p in range(2):
            out.append(
                min(
                    a[m1 * 2 + p1] + b[(m - m1) * 2 + (p - p1)]
                    for m1 in range(m + 1)
                    for p1 in range(p + 1)
                )
            )
    return bytes(min(x, 255) for x in out)


def pair_table(left: list[bytes], right: list[bytes]) -> tuple[bytes, list[bytes]]:
    vectors: dict[bytes, int] = {}
    ids = [vectors.setdefault(combine(a, b), len(vectors)) for a in left for b in right]
    return T.write_array(ids, 2), list(vectors)


def final_table(suits: list[bytes], rest: list[bytes]) -> bytes:
    """Distance of the whole hand, by (two-suit id, suit-and-honours id, melds wanted)."""
    return T.write_array(
        bytes(
            min(
                255,
                min(
                    a[m * 2 + p] + b[(melds - m) * 2 + 1 - p]
                    for m in range(melds + 1)
                    for p in range(2)
                ),
            )
            for a in suits
            for b in rest
            for melds in range(5)
        ),
        1,
    )


def build() -> bytes:
    suit_section, suit_vectors = component(9, meld_shapes(9, chows=True, dragon_set=False))
    honour_section, honour_vectors = component(7, meld_shapes(7, chows=False, dragon_set=False))
    dragon_section, dragon_vectors = component(7, meld_shapes(7, chows=False, dragon_set=True))
    body = T.MAGIC + bytes((T.FORMAT_VERSION,)) + suit_section + honour_section + dragon_section
    two_suits, two_suit_vectors = pair_table(suit_vectors, suit_vectors)
    body += two_suits + T.write_array([len(two_suit_vectors)], 2)
    for honours in (honour_vectors, dragon_vectors):
        pairs, vectors = pair_table(suit_vectors, honours)
        body += pairs + T.write_array([len(vectors)], 2)
        body += final_table(two_suit_vectors, vectors)
    return zlib.compress(body, 9)


def main() -> None:
    out = ROOT / "src" / "fangcheng" / "analysis" / "data" / "tables.bin"
    blob = build()
    out.write_bytes(blob)
    print(f"wrote {out.relative_to(ROOT)}: {len(blob):,} bytes")


if __name__ == "__main__":
    main()
