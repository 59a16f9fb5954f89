# The compiled observation encoder (_encode.c): env.py sets it up once with its layout.
from typing import Any

def setup(
    offsets: tuple[int, ...],
    phases: tuple[Any, ...],
    meld_kinds: tuple[Any, Any, Any, Any],
    first_dragon: int,
    piao_bets: tuple[int, ...],
    /,
) -> None: ...
def encode(obs: Any, out: Any, base: int, facts: Any, /) -> None: ...
