# The compiled kernel (_kernel.c): every call returns the first refused row, or -1.
from typing import Any

def load(
    kind: int,
    suit: Any,
    suit_waits: Any,
    honours: Any,
    honour_waits: Any,
    two_suits: Any,
    pairs: Any,
    final: Any,
    n_suit: int,
    n_honours: int,
    size: int,
    /,
) -> None: ...
def shanten(
    kind: int, flags: int, rest: int, hands: Any, least: Any, std: Any, pairs: Any, orphans: Any, /
) -> int: ...
def is_win(kind: int, flags: int, hands: Any, out: Any, /) -> int: ...
def waits(kind: int, flags: int, hands: Any, out: Any, /) -> int: ...
def after(kind: int, flags: int, step: int, hands: Any, out: Any, /) -> int: ...
