"""The environment loops of `bench_env.py` for an instruction count under callgrind.

    valgrind --tool=callgrind --callgrind-out-file=/dev/null \\
        .venv/bin/python benchmarks/cg_env.py CASE STEPS

``CASE`` is ``single`` (the single-seat environment against three random bots),
``aec`` (`FangchengEnv`, ``ask_all=True``) or ``aecF`` (``ask_all=False``), baishan, seed
1; ``STEPS`` 0 runs only the interpreter's start-up and the imports, to be subtracted.
Instructions do not move with the machine's load, where timings do. Another tree is
measured by ``PYTHONPATH=that/src`` (the loops use only the environments' public API).
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
import bench_env
from fangcheng.ai.env import FangchengEnv


def main() -> None:
    case, steps = sys.argv[1], int(sys.argv[2])
    if case not in ("single", "aec", "aecF"):
        raise SystemExit(f"case {case!r}: single, aec or aecF")
    if not steps:
        return
    if case == "single":
        bench_env.single("baishan", steps, 1)
    else:
        bench_env.aec(lambda: FangchengEnv("baishan", ask_all=case == "aec"), steps, 1)


if __name__ == "__main__":
    main()
