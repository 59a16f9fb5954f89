"""The expert bot against the targets of issue 21: decision time and strength by budget.

    .venv/bin/python benchmarks/bench_expert.py time [--playouts P ...] [--hands N]
        [--rules NAME ...] [--seed S] [--cpu SECONDS|none]
    .venv/bin/python benchmarks/bench_expert.py worlds [--hands N] [--rules NAME ...]
        [--worlds K]
    .venv/bin/python benchmarks/bench_expert.py strength [--playouts P ...] [--hands N]
        [--rules NAME ...] [--seed S] [--workers W] [--policy efficient|strong]
        [--phases turn,claim,que] [--opponents efficient|strong] [--fold T|none] [--margin M]

``worlds``: how faithful the sampled worlds are, in ``N`` hands of four strong bots per
rule set, at each of seat 0's turns: of the other seats that are ready (holding a hand
one tile from a win by the rules), in the real round and in a world the expert samples
there (``K`` worlds a turn), how often a wait is a face the seat let pass since its hand
changed or one of its own discards, the waits and concealed pungs of a ready hand, and
how often a face of seat 0's hand is a wait of a ready hand, by the copies of it seat 0
cannot see; and of those not declared, the strong bot's threat against how often they
are ready, by tenths of the threat. ``time``: one expert (``P`` playouts per searched
decision) and three ``strong`` seats play ``N`` hands per rule set; each of the expert's
decisions with a choice is timed in process CPU time (other work on the machine does not
count): mean, median, 90th percentile and max, under the server's CPU budget a decision
(``--cpu``, `expert.TABLE_CPU` s; ``none``: unlimited), with the searches it cut.
``strength``: ``fangcheng simulate --duplicate`` of one expert against three ``strong``
at each budget, expert − strong per hand with its 95% interval, the walls whose
difference is not 0 (an expert that keeps the strong bot's every choice plays its very
game, so only walls where it overruled carry a difference), the expert's wins and
deal-ins per hand beside the strong players' range; ``--policy``, the seat's own playout
bot, ``--opponents`` the others', ``--phases``, the decisions searched (if not given,
the rule set's: `expert.searched`), ``--fold`` the threat from which the safest discard
is a rival, ``--margin`` the standard errors by which a rival must win. An expert other
than the default is a bot kind registered here,
``expert@P:policy:phases:opponents:fold:margin``.
"""

from __future__ import annotations

import argparse
import random
import time
from statistics import fmean, median, quantiles
from typing import Final

from fangcheng.ai.expert import FOLD, MARGIN, PLAYOUTS, TABLE_CPU, ExpertBot, sample_world
from fangcheng.ai.sim import simulate
from fangcheng.engine.round import Round
from fangcheng.players.bots import EfficientBot, StrongBot, make_bot, register_bot, table_of
from fangcheng.protocol.observation import Phase
from fangcheng.rules.requirements import wait_set
from fangcheng.rules.ruleset import ALL_RULES, RuleSet, find_rules
from fangcheng.tiles.melds import Meld

POLICIES: Final = {"efficient": EfficientBot, "strong": StrongBot}


def kind(playouts: int, args: argparse.Namespace) -> str:
    """The bot kind of an expert of these arguments, registered on first use."""
    phases = frozenset(Phase(p) for p in args.phases.split(",")) if args.phases else None
    fold = None if args.fold == "none" else float(args.fold)
    options = {
        "playouts": playouts,
        "policy": POLICIES[args.policy],
        "phases": phases,
        "opponents": POLICIES[args.opponents],
        "fold": fold,
        "margin": args.margin,
    }
    defaults = (PLAYOUTS, StrongBot, None, EfficientBot, FOLD, MARGIN)
    if tuple(options.values()) == defaults:
        return "expert"
    searched = "+".join(sorted(p.value for p in phases)) if phases else "default"
    name = f"expert@{playouts}:{args.policy}:{searched}:{args.opponents}:{args.fold}:{args.margin}"

    class Variant(ExpertBot):
        def __init__(self, rng: random.Random) -> None:
            super().__init__(rng, **options)

    Variant.name = name
    register_bot(Variant)
    return name


def timing(args: argparse.Namespace) -> None:
    cpu = None if args.cpu == "none" else float(args.cpu)
    for playouts in args.playouts:
        budget = "no CPU budget" if cpu is None else f"a CPU budget of {cpu} s"
        print(f"expert at {playouts} playouts, {budget}, 3 strong, {args.hands} hands per rule set")
        for rules in args.rules:
            times: list[float] = []
            late = 0
            for hand in range(args.hands):
                round_ = Round(rules, seed=args.seed * 1000 + hand, dealer=hand % 4)
                bots = [
                    make_bot(kind(playouts, args), random.Random(hand)),
                    *(StrongBot(random.Random(hand * 4 + s)) for s in (1, 2, 3)),
                ]
                expert = bots[0]
                assert isinstance(expert, ExpertBot)
                expert.cpu = cpu
                while not round_.over:
                    for seat in round_.pending():
                        obs = round_.observe(seat)
                        start = time.process_time()
                        action = bots[seat].act(obs)
                        if seat == 0 and len(obs.legal) > 1:
                            times.append(time.process_time() - start)
                        round_.act(seat, action)
                late += expert.late
            p90 = quantiles(times, n=10)[-1]
            print(
                f"   {rules:<18}{len(times):5} decisions  mean {fmean(times) * 1e3:6.0f} ms"
                f"  median {median(times) * 1e3:5.0f}  p90 {p90 * 1e3:5.0f}"
                f"  max {max(times) * 1e3:5.0f}  cut by the budget {late}"
            )


def _waits(rules: RuleSet, hand: bytearray, melds: list[Meld], que: int | None) -> set[int]:
    return set(wait_set(rules, bytes(hand), melds, que))


def worlds(args: argparse.Namespace) -> None:
    for name in args.rules:
        rules = find_rules(name)
        hits = {"real": [0, 0, 0], "sampled": [0, 0, 0]}  # ready seat-turns, passed, river
        shape = {"real": [0, 0, 0], "sampled": [0, 0, 0]}  # ready hands, waits, pungs
        # a face of seat 0's hand, by its copies seat 0 cannot see: (ready hands, waits)
        held = {"real": [[0, 0] for _ in range(5)], "sampled": [[0, 0] for _ in range(5)]}
        tenths = [[0, 0.0, 0] for _ in range(10)]  # seats, threat, ready
        for hand in range(args.hands):
            round_ = Round(rules, seed=args.seed * 1000 + hand, dealer=hand % 4)
            expert = ExpertBot(random.Random(hand))
            bots = [expert.strong, *(StrongBot(random.Random(hand * 4 + s)) for s in (1, 2, 3))]
            rng = random.Random(hand)
            while not round_.over:
                for seat in round_.pending():
                    obs = round_.observe(seat)
                    action = bots[seat].act(obs)
                    if seat == 0 and obs.phase is Phase.TURN and obs.turn == 0:
                        passed, threat = expert.strong.passed(), expert.strong.threats(obs)
                        unseen = table_of(obs).unseen
                        tables = [("real", round_)] + [
                            ("sampled", sample_world(obs, rng, expert.readiness(obs), passed))
                            for _ in range(args.worlds)
                        ]
                        for s, view in enumerate(obs.seats[1:], 1):
                            if view.won or view.revealed is not None:
                                continue
                            for key, at in tables:
                                waits = _waits(rules, at.hands[s], at.melds[s], view.que)
                                if not waits:
                                    continue
                                c = hits[key]
                                c[0] += 1
                                c[1] += not waits.isdisjoint(passed[s])
                                c[2] += not waits.isdisjoint(view.river)
                                c = shape[key]
                                c[0] += 1
                                c[1] += len(waits)
                                c[2] += sum(n >= 3 for n in at.hands[s])
                                for t in range(34):
                                    if obs.hand[t]:
                                        held[key][unseen[t]][0] += 1
                                        held[key][unseen[t]][1] += t in waits
                            if not view.ready:
                                ready = _waits(rules, round_.hands[s], round_.melds[s], view.que)
                                row = tenths[min(9, int(threat[s] * 10))]
                                row[0] += 1
                                row[1] += threat[s]
                                row[2] += bool(ready)
                    round_.act(seat, action)
        for key, (n, passed_hit, river_hit) in hits.items():
            n = max(1, n)
            hands, waits, pungs = shape[key]
            by_copies = "  ".join(
                f"{c}: {w / h:.3f}" for c, (h, w) in enumerate(held[key]) if h >= 20
            )
            print(
                f"   {name:<18}{key:<8} ready seat-turns {n:5}  a wait let pass"
                f" {passed_hit / n:6.1%}  a wait of its own discards {river_hit / n:6.1%}"
                f"  waits {waits / max(1, hands):.2f} and concealed pungs"
                f" {pungs / max(1, hands):.2f} a ready hand\n{'':<26}a face of seat 0's hand"
                f" a wait, by its copies seat 0 cannot see  {by_copies}"
            )
        undeclared = "  ".join(
            f"{t / 10:.1f}: {n} read {p / n:.2f} ready {r / n:.2f}"
            for t, (n, p, r) in enumerate(tenths)
            if n >= 20
        )
        print(f"   {name:<18}undeclared seats by threat  {undeclared}", flush=True)


def strength(args: argparse.Namespace) -> None:
    for playouts in args.playouts:
        name = kind(playouts, args)
        for rules in args.rules:
            start = time.monotonic()
            s = simulate(rules, args.hands, [name, "strong", "strong", "strong"],
                         seed=args.seed, workers=args.workers, duplicate=True)  # fmt: skip
            diff, ci = s.difference(name, "strong")
            mine, theirs = s.units([0]), s.units(s.players_of("strong"))
            moved = sum(a != b for a, b in zip(mine, theirs, strict=True))
            me, strongs = s.seats[0], s.seats[1:]
            print(
                f"   {name:<28}{rules:<18}{s.hands:6} hands  expert − strong {diff:+6.2f}"
                f" ± {ci:5.2f}  walls differing {moved}/{len(mine)}"
                f"  expert wins {me.win_rate:.1%} deals in {me.deal_in_rate:.1%}"
                f"  strongs {min(x.win_rate for x in strongs):.1%}"
                f"–{max(x.win_rate for x in strongs):.1%}"
                f" / {min(x.deal_in_rate for x in strongs):.1%}"
                f"–{max(x.deal_in_rate for x in strongs):.1%}"
                f"  ({time.monotonic() - start:.0f} s)",
                flush=True,
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("what", choices=["time", "strength", "worlds"])
    parser.add_argument("--playouts", type=int, nargs="*", default=[PLAYOUTS])
    parser.add_argument("--hands", type=int, default=8)
    parser.add_argument("--rules", nargs="*", default=[r.name for r in ALL_RULES])
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--worlds", type=int, default=1, help="worlds: sampled per turn")
    parser.add_argument(
        "--cpu",
        default=str(TABLE_CPU),
        help="time: the CPU seconds a decision may take, as the server's (or none)",
    )
    parser.add_argument("--policy", choices=list(POLICIES), default="strong",
                        help="the expert seat's own playout bot")  # fmt: skip
    parser.add_argument(
        "--phases", default="", help="decisions searched: turn,claim,que (the rule set's)"
    )
    parser.add_argument("--opponents", choices=list(POLICIES), default="efficient",
                        help="the other seats' playout bot")  # fmt: skip
    parser.add_argument(
        "--fold",
        default=str(FOLD),
        help="the threat from which the safest discard is searched, or none",
    )
    parser.add_argument(
        "--margin", type=float, default=MARGIN, help="standard errors by which a rival must win"
    )
    args = parser.parse_args()
    {"time": timing, "strength": strength, "worlds": worlds}[args.what](args)


if __name__ == "__main__":
    main()
