"""The precomputed per-component tables behind `fangcheng.analysis.hand`.

A hand splits into four independent *components*: the three suits (9 faces each, melds
are pungs and chows) and the honours (7 faces, melds are pungs — and, in baicheng, the
中发白 set). For every count vector of a component holding at most 14 tiles the
generator (``tools/gen_tables.py``) stores:

* a **distance vector** ``d[m][p]``: the fewest tiles to add so the component holds ``m``
  melds and ``p`` pairs (never a fifth copy). A hand's shanten is the best split of its
  melds and pair over the components, minus one (Tomohxx's method);
* the tile count and whether the component is complete (melds only, or melds and a
  pair), packed with the vector id into one *entry*;
* a **wait word**: whether the component is complete (melds only, or melds and one
  pair) and, for each face, whether one more of it completes it either way.

Distance vectors repeat a lot (126 distinct ones for a suit), so the file keeps each
once and the per-config entry is a small id; the pairwise combinations of ids are
tabulated too. The file is ``data/tables.bin`` (zlib); `load` turns it into dicts keyed
by the component's count bytes, so a lookup is one slice of the hand and one dict probe.
"""

from __future__ import annotations

import struct
import zlib
from dataclasses import dataclass
from importlib import resources
from typing import Final

#: Index of ``d[m][p]`` in a flattened distance vector.
VECTOR_LEN: Final = 10
MAX_TILES: Final = 14
FORMAT_VERSION: Final = 1
MAGIC: Final = b"FCTB"

#: Entry layout: the win code (pair + 16 × melds when complete, else NOT_COMPLETE) in
#: bits 0-9, the component's tile count in bits 10-15, the distance vector id above. So
#: the sum of a hand's four entries has the hand's win code and tile count in its low bits.
NOT_COMPLETE: Final = 128
COUNT_SHIFT: Final = 10
ID_SHIFT: Final = 16

#: Wait-word layout: bits 0-1 completeness, then one bit per face for each way.
INCOMPLETE: Final = 2
W0_SHIFT: Final = 2  # faces that complete the component as melds only
W1_SHIFT: Final = 11  # faces that complete it as melds plus one pair


def configs(faces: int, limit: int = MAX_TILES) -> list[bytes]:
    """Every count vector of ``faces`` faces (0..4 each) with at most ``limit`` tiles.

    The order is lexicographic; generator and loader share it, so the file need not
    store the keys.
    """
    split = faces // 2

    def level(n: int) -> list[tuple[bytes, int]]:
        out: list[tuple[bytes, int]] = [(b"", 0)]
        for _ in range(n):
            out = [(k + bytes((c,)), s + c) for k, s in out for c in range(5)]
        return out

    left, right = level(split), level(faces - split)
    upto: list[list[bytes]] = [[] for _ in range(limit + 1)]
    for key, total in right:
        for bound in range(total, limit + 1):
            upto[bound].append(key)
    return [lk + rk for lk, ls in left if ls <= limit for rk in upto[limit - ls]]


@dataclass(frozen=True, slots=True)
class Component:
    """One component's tables."""

    size: int  # number of distinct distance vectors
    entries: dict[bytes, int]  # count bytes -> packed entry (see ID_SHIFT)
    waits: dict[bytes, int]  # count bytes -> wait word, for complete or one-short configs


@dataclass(frozen=True, slots=True)
class Honours:
    """The honour component of one kind, and how it joins the suits."""

    component: Component
    pairs: list[int]  # suit id * component.size + honour id -> joined id
    size: int  # number of joined ids
    final: bytes  # (two-suit id * size + joined id) * 5 + melds -> whole-hand distance


@dataclass(frozen=True, slots=True)
class Tables:
    suit: Component
    two_suits: list[int]  # suit id * suit.size + suit id -> two-suit id
    two_suits_size: int
    honours: Honours  # winds and dragons, pungs only
    dragon_set: Honours  # the same with 中发白 as a meld (baicheng)


class _Reader:
    def __init__(self, data: bytes, pos: int) -> None:
        self.data, self.pos = data, pos

    def array(self) -> bytes | list[int]:
        count, size = struct.unpack_from("<IB", self.data, self.pos)
        self.pos += 5
        raw = self.data[self.pos : self.pos + count * size]
        self.pos += count * size
        if size == 1:
            return raw
        return list(struct.unpack(f"<{count}{'H' if size == 2 else 'I'}", raw))

    def number(self) -> int:
        (value,) = self.array()
        return value

    def component(self, keys: list[bytes]) -> Component:
        size = self.number()
        entries = dict(zip(keys, self.array(), strict=True))
        where, words = self.array(), self.array()
        return Component(size, entries, {keys[i]: w for i, w in zip(where, words, strict=True)})


def write_array(values: list[int] | bytes, size: int) -> bytes:
    """One array of the file: count, item size, little-endian items."""
    code = {1: "B", 2: "H", 4: "I"}[size]
    return struct.pack(f"<IB{len(values)}{code}", len(values), size, *values)


def load(blob: bytes | None = None) -> Tables:
    """Read ``data/tables.bin`` (or ``blob``) into lookup dicts."""
    if blob is None:
        blob = resources.files("fangcheng.analysis").joinpath("data/tables.bin").read_bytes()
    data = zlib.decompress(blob)
    if data[:4] != MAGIC or data[4] != FORMAT_VERSION:
        raise ValueError("data/tables.bin is not a fangcheng table file of this version")
    reader = _Reader(data, 5)
    honour_keys = configs(7)
    suit = reader.component(configs(9))
    plain, dragons = reader.component(honour_keys), reader.component(honour_keys)
    two_suits = list(reader.array())
    two_suits_size = reader.number()

    def honours(component: Component) -> Honours:
        pairs = list(reader.array())
        size = reader.number()
        return Honours(component, pairs, size, bytes(reader.array()))

    return Tables(suit, two_suits, two_suits_size, honours(plain), honours(dragons))
