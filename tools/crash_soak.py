"""A longer crash soak than `make test` runs: ``fangcheng serve`` killed -9 at random
points, many seeds, each a run of several deaths (tests/crashing.py says how):

    .venv/bin/python tools/crash_soak.py --seeds 20 --crashes 8

Prints each run's deaths, hands and last ledger check; exits non-zero at the first run
that fails (its server log is kept and named)."""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
import traceback
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from crashing import lives_for, run


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--first", type=int, default=100, help="the first seed")
    parser.add_argument("--crashes", type=int, default=6, help="deaths per run")
    parser.add_argument("--people", type=int, default=2)
    args = parser.parse_args()
    for seed in range(args.first, args.first + args.seeds):
        tmp = Path(tempfile.mkdtemp(prefix=f"crash-soak-{seed}-"))
        started = time.monotonic()
        try:
            outcome = run(tmp, seed, lives_for(seed, args.crashes), args.people)
        except Exception:
            traceback.print_exc()
            print(f"seed {seed}: FAILED; the server's log: {tmp / 'server.log'}")
            return 1
        print(
            f"seed {seed}: {outcome.crashed} kill -9, {outcome.hands} hands settled once, "
            f"{time.monotonic() - started:.1f} s; {outcome.checks[-1]}",
            flush=True,
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
