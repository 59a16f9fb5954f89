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
tabulated too. The file is ``data/tables.bin`` (zlib). `read` gives its arrays as they
are (`Packed`, a few milliseconds: what the compiled kernel copies); `load` turns them
into dicts keyed by the component's count bytes, so a lookup is one slice of the hand and
one dict probe (a quarter of a second: what the Python code reads, built on its first use).
"""

from __future__ import annotations

import pkgutil
import struct
import sys
import zlib
from array import array
from dataclasses import dataclass
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
class PackedComponent:
    """One component as the file keeps it: an entry per config (in `configs` order), and
    the wait words of the configs that have one, by their ordinal in that order."""

    size: int  # number of distinct distance vectors
    entries: array[int]  # 'I'
    wait_at: array[int]  # 'I'
    wait_words: array[int]  # 'I'


@dataclass(frozen=True, slots=True)
class PackedHonours:
    component: PackedComponent
    pairs: array[int]  # 'H': suit id * component.size + honour id -> joined id
    size: int
    final: bytes


@dataclass(frozen=True, slots=True)
class Packed:
    """The whole file, its arrays as they are."""

    suit: PackedComponent
    two_suits: array[int]  # 'H'
    two_suits_size: int
    honours: PackedHonours
    dragon_set: PackedHonours


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

    def array(self) -> array[int]:
        count, size = struct.unpack_from("<IB", self.data, self.pos)
        self.pos += 5
        out = array({1: "B", 2: "H", 4: "I"}[size])
        out.frombytes(self.data[self.pos : self.pos + count * size])
        if sys.byteorder == "big":
            out.byteswap()
        self.pos += count * size
        return out

    def number(self) -> int:
        (value,) = self.array()
        return value

    def component(self) -> PackedComponent:
        return PackedComponent(self.number(), self.array(), self.array(), self.array())

    def honours(self, component: PackedComponent) -> PackedHonours:
        pairs = self.array()
        size = self.number()
        return PackedHonours(component, pairs, size, self.array().tobytes())


def write_array(values: list[int] | bytes, size: int) -> bytes:
    """One array of the file: count, item size, little-endian items."""
    code = {1: "B", 2: "H", 4: "I"}[size]
    return struct.pack(f"<IB{len(values)}{code}", len(values), size, *values)


def read(blob: bytes | None = None) -> Packed:
    """Read ``data/tables.bin`` (or ``blob``) as it is."""
    if blob is None:  # pkgutil, not importlib.resources: that imports 8 ms of modules
        blob = pkgutil.get_data("fangcheng.analysis", "data/tables.bin")
    if blob is None:
        raise FileNotFoundError("fangcheng.analysis: data/tables.bin is not installed")
    data = zlib.decompress(blob)
    if data[:4] != MAGIC or data[4] != FORMAT_VERSION:
        raise ValueError("data/tables.bin is not a fangcheng table file of this version")
    reader = _Reader(data, 5)
    suit, plain, dragons = reader.component(), reader.component(), reader.component()
    two_suits = reader.array()
    two_suits_size = reader.number()
    return Packed(suit, two_suits, two_suits_size, reader.honours(plain), reader.honours(dragons))


def load(blob: bytes | None = None) -> Tables:
    """Read ``data/tables.bin`` (or ``blob``) into lookup dicts."""
    packed = read(blob)
    suit_keys, honour_keys = configs(9), configs(7)

    def component(c: PackedComponent, keys: list[bytes]) -> Component:
        waits = {keys[i]: w for i, w in zip(c.wait_at, c.wait_words, strict=True)}
        return Component(c.size, dict(zip(keys, c.entries, strict=True)), waits)

    def honours(h: PackedHonours) -> Honours:
        return Honours(component(h.component, honour_keys), list(h.pairs), h.size, h.final)

    return Tables(
        component(packed.suit, suit_keys),
        list(packed.two_suits),
        packed.two_suits_size,
        honours(packed.honours),
        honours(packed.dragon_set),
    )
