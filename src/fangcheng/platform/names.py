"""Account names as compared: one account per name as a person reads it.

A name is kept as typed (NFKC-normalised). It is found by its key (NFKC, case-folded:
``ann`` logs in as ``Ann``), and it is unique by its skeleton: the key with the letters
of other scripts that look like Latin ones read as those, so that ``Аlice`` (a Cyrillic
А) cannot sign up beside ``Alice``. The skeleton maps only such lookalikes: Chinese
names, and Cyrillic or Greek names without a Latin twin, are their own.
"""

from __future__ import annotations

import unicodedata
from typing import Final

__all__ = ["name_key", "name_skeleton"]

#: Case-folded Cyrillic and Greek letters that read as a Latin letter (or digit), in
#: either case: the common homoglyphs of Unicode's confusables list (UTS #39).
_LOOKALIKES: Final = str.maketrans(
    {
        # Cyrillic
        "а": "a", "в": "b", "е": "e", "з": "3", "і": "i", "ј": "j", "к": "k", "м": "m",
        "н": "h", "о": "o", "р": "p", "с": "c", "т": "t", "у": "y", "х": "x", "ѕ": "s",
        "ԁ": "d", "һ": "h", "ӏ": "l", "ԛ": "q", "ԝ": "w", "ү": "y",
        # Greek
        "α": "a", "β": "b", "ε": "e", "ζ": "z", "η": "h", "ι": "i", "κ": "k", "μ": "m",
        "ν": "v", "ο": "o", "ρ": "p", "τ": "t", "υ": "y", "χ": "x", "ω": "w",
    }
)  # fmt: skip


def name_key(name: str) -> str:
    """How a name is looked up: NFKC, case-folded."""
    return unicodedata.normalize("NFKC", name).casefold()


def name_skeleton(name: str) -> str:
    """What a name reads as: its key with lookalike letters as their Latin twins."""
    return name_key(name).translate(_LOOKALIKES)
