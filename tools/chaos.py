"""The fault-injection run (tests/chaos.py says what it does and checks), from the
command line; ``make chaos`` runs both modes:

    .venv/bin/python tools/chaos.py --db sqlite --seconds 60
    .venv/bin/python tools/chaos.py --db postgresql --processes 3 --seconds 90

Prints each run's counts; exits 1 if a check failed (the servers' logs are kept and
named), 2 if the services it needs are missing."""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from chaos import STORE_FAULTS, Plan, problem, run


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--db", choices=("sqlite", "postgresql"), default="sqlite")
    parser.add_argument("--processes", type=int, help="default: 1 on SQLite, 3 on PostgreSQL")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--seeds", type=int, default=1, help="runs, seed after seed")
    parser.add_argument("--people", type=int, default=6)
    parser.add_argument("--seconds", type=float, default=60.0, help="of play with faults")
    parser.add_argument("--every", type=float, default=4.0, help="mean seconds between faults")
    parser.add_argument("--store-faults", default=STORE_FAULTS, help="the FANGCHENG_FAULTS plan")
    parser.add_argument("--lease-ms", type=int, help="default: the server's")
    args = parser.parse_args()
    failed = False
    for seed in range(args.seed, args.seed + args.seeds):
        plan = Plan(
            seed=seed,
            db=args.db,
            processes=args.processes or (1 if args.db == "sqlite" else 3),
            people=args.people,
            seconds=args.seconds,
            every_s=args.every,
            store_faults=args.store_faults,
            lease_ms=args.lease_ms,
        )
        why = problem(plan)
        if why:
            print(f"chaos: cannot run: {why}", file=sys.stderr)
            return 2
        tmp = Path(tempfile.mkdtemp(prefix=f"chaos-{args.db}-{seed}-"))
        report = run(tmp, plan)
        print(report.text(), flush=True)
        if report.failures:
            print(f"  the servers' logs: {tmp}/p*.log", flush=True)
            failed = True
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
