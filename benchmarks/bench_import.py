"""What a process pays to start: the CPU time of ``import fangcheng``, of ``fangcheng
--help`` and of importing the server (what ``fangcheng serve`` pays before it listens),
each in a fresh interpreter, a bare interpreter's subtracted, and the peak memory
(RSS) each leaves.

    .venv/bin/python benchmarks/bench_import.py [--repeat N] [--compare SRC]

Each is run ``--repeat`` times and the least CPU (user + system) kept; the bytecode is
cached first (in a folder of the run's own, whatever PYTHONDONTWRITEBYTECODE says), as
an installed package's is. ``--compare SRC`` runs the same against another tree's
``src`` folder (``git archive`` of an older commit, its compiled kernel copied in),
alternated with this one, and prints the ratio. Where the time goes: ``python -X
importtime -c "import fangcheng"``. Figures: benchmarks/RESULTS.md, "Analysis".
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

#: What is measured: a name and the statement a fresh interpreter runs.
CASES = {
    "bare interpreter": "pass",
    "import fangcheng": "import fangcheng",
    "fangcheng --help": (
        "import contextlib, io, sys\n"
        "sys.argv = ['fangcheng', '--help']\n"
        "from fangcheng.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()), contextlib.suppress(SystemExit):\n"
        "    main()"
    ),
    "the server's import": "import fangcheng.server.app, uvicorn",
}

PROBE = (
    "import resource\n{statement}\n"
    "used = resource.getrusage(resource.RUSAGE_SELF)\n"
    "print(used.ru_utime + used.ru_stime, used.ru_maxrss)"
)


def cpu(statement: str, src: Path, cache: Path) -> tuple[float, int]:
    """Seconds of CPU a fresh interpreter takes to run ``statement`` with ``src`` first
    on its path, and its peak RSS, KiB."""
    env = dict(os.environ, PYTHONPATH=str(src))
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    done = subprocess.run(
        [sys.executable, "-X", f"pycache_prefix={cache}", "-c", PROBE.format(statement=statement)],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    seconds, rss = done.stdout.split()[-2:]
    return float(seconds), int(rss)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=7, help="runs of each, the least kept")
    parser.add_argument("--compare", type=Path, help="another tree's src folder, alternated")
    args = parser.parse_args()
    trees = {"this tree": ROOT / "src"}
    if args.compare is not None:
        trees["compared"] = args.compare.resolve()
    best: dict[tuple[str, str], float] = {}
    memory: dict[tuple[str, str], int] = {}
    with tempfile.TemporaryDirectory(prefix="bench_import_") as folder:
        caches = {name: Path(folder) / str(i) for i, name in enumerate(trees)}
        for name, src in trees.items():  # the bytecode cached, as an installed package's
            for statement in CASES.values():
                cpu(statement, src, caches[name])
        for _ in range(args.repeat):
            for case, statement in CASES.items():
                for name, src in trees.items():
                    took, rss = cpu(statement, src, caches[name])
                    best[name, case] = min(best.get((name, case), took), took)
                    memory[name, case] = rss
    print(
        f"CPU ms, least of {args.repeat} runs, the bare interpreter's subtracted;"
        f" load average {' '.join(f'{x:.1f}' for x in os.getloadavg())}"
    )
    for case in list(CASES)[1:]:
        line = f"  {case:22s}"
        for name in trees:
            own = (best[name, case] - best[name, "bare interpreter"]) * 1000
            line += f"  {name} {own:7.1f} ({memory[name, case] / 1024:.0f} MiB RSS)"
        if len(trees) == 2:
            mine, theirs = (best[name, case] - best[name, "bare interpreter"] for name in trees)
            line += f"  ratio {theirs / mine:5.2f}x"
        print(line)


if __name__ == "__main__":
    main()
