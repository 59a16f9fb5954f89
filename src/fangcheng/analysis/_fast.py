"""The compiled kernel (``_kernel.c``), where the install built it, with the tables
handed over: `kernel` gives the module, or None (and a `RuntimeWarning` says so, once:
`fangcheng.analysis.hand` calls it on import).

The kernel copies the table file's arrays (`fangcheng.analysis.tables.read`, not the
dicts `load` builds from them) into dense arrays of its own, so neither this module nor
`fangcheng.analysis.hand` needs numpy, and loading it takes milliseconds.
"""

from __future__ import annotations

import warnings
from array import array
from types import ModuleType

from fangcheng.analysis.tables import Packed


def kernel(t: Packed) -> ModuleType | None:
    try:
        from fangcheng.analysis import _kernel
    except ImportError:
        warnings.warn(
            "fangcheng.analysis: the compiled kernel was not built (no C compiler when the"
            " package was installed); hand analysis runs on its Python code, several times"
            " slower",
            RuntimeWarning,
            stacklevel=2,
        )
        return None
    if array("i").itemsize != 4 or array("I").itemsize != 4:  # never so on a mainstream platform
        return None
    suit = t.suit
    _kernel.load_suit(
        suit.entries, suit.wait_at, suit.wait_words, array("i", t.two_suits), suit.size
    )
    for kind, honours in enumerate((t.honours, t.dragon_set)):
        c = honours.component
        _kernel.load_honours(
            kind,
            c.entries,
            c.wait_at,
            c.wait_words,
            array("i", honours.pairs),
            honours.final,
            c.size,
            honours.size,
        )
    return _kernel
