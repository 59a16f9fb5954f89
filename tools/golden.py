"""Regenerate the golden corpus under ``tests/golden`` (``make golden``).

``tests/test_golden_corpus.py`` checks the committed corpus against the code; it never
writes it. After an intended change of play or scoring, run this tool and review the
summary it prints (and ``git diff``): every changed record or situation is a change of
behaviour someone meant.

Three parts, each deterministic in the code alone:

- ``records/<rules>.jsonl.gz``: seeded bot matches, one line per hand, ``{"id", "bots",
  "record"}`` where ``record`` is `record_of` the hand. The test replays each record from
  its wall and decisions and compares the events one by one, then the settlement.
- ``scripted/<name>.json``: hand-written scripted hands (records without events, the wall
  as hands, draws and tail); this tool writes each one's expected ``fangcheng replay``
  output beside it as ``<name>.out.jsonl``. The records themselves are never rewritten.
- ``scoring.jsonl.gz``: win situations (the ``fangcheng score`` input) captured from bot
  play, plus seeded mutations of them (other ways to win, options, flags, tiles: some
  no longer win, a few are refused), each with its expected output: the score JSON, or
  ``{"error": message}`` where ``fangcheng score`` exits 2.

Lines hold JSON with sorted keys, so that ``git diff`` (with ``gzip -dc`` as the textconv
of ``*.gz``, see ``tests/golden/README.md``) shows what changed line by line; the gzip
stream has no timestamp, so regenerating unchanged content leaves the files unchanged.
"""

from __future__ import annotations

import contextlib
import dataclasses
import gzip
import hashlib
import io
import json
import random
import sys
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any, Final

from fangcheng.cli import main as cli_main
from fangcheng.engine.match import first_dealer, next_dealer
from fangcheng.engine.record import record_of, replay
from fangcheng.engine.round import Round
from fangcheng.players.bots import make_bot
from fangcheng.rules.ruleset import find_rules
from fangcheng.scoring.scorer import score
from fangcheng.scoring.situation import Situation, SituationError, load_situation, situation_json
from fangcheng.tiles.notation import (
    InvalidNotationError,
    TileCountError,
    tile_name,
)

ROOT: Final = Path(__file__).resolve().parent.parent
GOLDEN: Final = ROOT / "tests" / "golden"
RECORDS: Final = GOLDEN / "records"
SCRIPTED: Final = GOLDEN / "scripted"
SCORING: Final = GOLDEN / "scoring.jsonl.gz"
RULES: Final = ("baicheng", "baishan", "baishan_platform", "sichuan")
SEED: Final = 13  # the issue that asked for this corpus

# --- reading, writing and comparing ----------------------------------------------------


def _builtin(value: object) -> object:
    """JSON for what `json` does not know: typed events (msgspec structs or dataclasses)
    as their fields, so that the corpus compares values, not one Python shape of them."""
    msgspec = sys.modules.get("msgspec")
    if msgspec is not None and isinstance(value, msgspec.Struct):
        return msgspec.to_builtins(value)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return dataclasses.asdict(value)
    raise TypeError(f"not JSON-encodable: {type(value).__name__}")


def dumps(value: object) -> str:
    """One line of canonical JSON: sorted keys, no spaces, Chinese as is."""
    return json.dumps(
        value, sort_keys=True, ensure_ascii=False, separators=(",", ":"), default=_builtin
    )


def plain(value: object) -> Any:
    """``value`` as decoded JSON: the form every comparison of the corpus is made in."""
    return json.loads(dumps(value))


def read_lines(path: Path) -> list[Any]:
    """The JSON values of a ``.jsonl.gz`` (or ``.jsonl``) file, one per line."""
    data = path.read_bytes()
    text = (gzip.decompress(data) if path.suffix == ".gz" else data).decode("utf-8")
    return [json.loads(line) for line in text.splitlines()]


def write_lines(path: Path, values: Iterable[object]) -> None:
    """Write JSON lines, gzipped for ``.gz`` without a timestamp (same content, same bytes)."""
    text = "".join(dumps(v) + "\n" for v in values).encode("utf-8")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(
        gzip.compress(text, compresslevel=9, mtime=0) if path.suffix == ".gz" else text
    )


def replayed(record: Mapping[str, Any]) -> Any:
    """The record the engine produces from ``record``'s wall and decisions, as JSON."""
    return plain(record_of(replay(record).round))


def first_difference(want: Mapping[str, Any], got: Mapping[str, Any]) -> str | None:
    """Where a replayed record first departs from the recorded one: the event (by index),
    else the settlement, else another field; None if they are identical."""
    events, produced = want.get("events", []), got.get("events", [])
    for i, (a, b) in enumerate(zip(events, produced, strict=False)):
        if a != b:
            return f"event {i}:\n  recorded {dumps(a)}\n  replayed {dumps(b)}"
    if len(events) != len(produced):
        i = min(len(events), len(produced))
        extra = events[i] if len(events) > i else produced[i]
        return (
            f"event {i}: the record has {len(events)} events, the replay {len(produced)}; "
            f"first unmatched: {dumps(extra)}"
        )
    for key in ("settlement", *sorted(set(want) | set(got))):
        if want.get(key) != got.get(key):
            return f"{key}:\n  recorded {dumps(want.get(key))}\n  replayed {dumps(got.get(key))}"
    return None


def score_output(data: object) -> Any:
    """What ``fangcheng score`` gives for ``data``: the JSON it prints, or ``{"error":
    message}`` for input it refuses (exit 2)."""
    try:
        return plain(score(load_situation(data)).to_json())
    except (SituationError, InvalidNotationError, TileCountError) as exc:
        return {"error": str(exc)}


def cli_lines(argv: list[str]) -> tuple[int, list[Any]]:
    """Run the ``fangcheng`` command in-process: its exit code and its stdout lines, each
    decoded from JSON."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        code = cli_main(argv)
    return code, [json.loads(line) for line in out.getvalue().splitlines()]


def scripted_output(path: Path) -> list[Any]:
    """``fangcheng replay`` of a scripted hand: each event, then the settlement, if any."""
    code, lines = cli_lines(["replay", str(path)])
    if code != 0:
        raise ValueError(f"fangcheng replay {path.name} exits {code}")
    return lines


def scripted_paths() -> list[Path]:
    return sorted(p for p in SCRIPTED.glob("*.json"))


def expected_path(path: Path) -> Path:
    return path.with_suffix(".out.jsonl")


# --- bot matches -----------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Table:
    """Some hands in a row at one table: bots by seat, options, base, ``ask_all``."""

    name: str
    bots: tuple[str, str, str, str]
    hands: int
    options: Mapping[str, object] = dataclasses.field(default_factory=dict)
    base: int = 1
    ask_all: bool = False


_MIXED: Final = ("strong", "efficient", "random", "strong")
_COMMON: Final = (
    Table("random", ("random",) * 4, 14),
    Table("efficient", ("efficient",) * 4, 14),
    Table("mixed", _MIXED, 12),
    Table("ask_all", ("efficient", "strong", "efficient", "random"), 12, base=2, ask_all=True),
)
#: What each rule set adds: its options (漂 chosen or fixed, rooms, 定缺, caps).
_OWN: Final[Mapping[str, tuple[Table, ...]]] = {
    "baicheng": (Table("strong", ("strong",) * 4, 16),),
    "baishan": (Table("strong", ("strong",) * 4, 16),),
    "baishan_platform": (
        Table("piao_fixed", _MIXED, 8, {"piao": [0, 5, 10, 0]}),
        Table(
            "anti_cheat",
            ("efficient", "strong", "random", "efficient"),
            8,
            {"room": "anti_cheat"},
            base=5,
        ),
        Table("junior_cap", ("strong",) * 4, 8, {"room": "junior", "cap": 40}, ask_all=True),
    ),
    "sichuan": (
        Table("que_fixed", _MIXED, 8, {"que": ["m", "p", "s", "m"]}),
        Table("cap", ("strong", "random", "strong", "efficient"), 8, {"cap": 3}),
        Table("strong", ("strong",) * 4, 8, ask_all=True),
    ),
}


class _Capturing(Round):
    """A `Round` that keeps every win situation it scores (the scoring corpus's seeds)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self.captured: list[Situation] = []
        super().__init__(*args, **kwargs)

    def _situation(self, winner: int, tile: int, by: Any, source: int | None) -> Situation:
        situation = super()._situation(winner, tile, by, source)
        self.captured.append(situation)
        return situation


def play_table(rules: str, index: int, table: Table) -> tuple[list[dict[str, Any]], list[Any]]:
    """The hands of one table, as corpus lines, and the situations their wins were scored on."""
    seed = SEED * 1000 + RULES.index(rules) * 100 + index
    rng = random.Random(seed)
    dealer = first_dealer(find_rules(rules), rng)
    lines, situations = [], []
    for hand in range(table.hands):
        round_ = _Capturing(
            rules,
            seed=rng.randrange(2**63),
            dealer=dealer,
            base=table.base,
            options=table.options,
            ask_all=table.ask_all,
        )
        bots = [make_bot(b, random.Random(f"{seed}:{hand}:{s}")) for s, b in enumerate(table.bots)]
        while not round_.over:
            for seat in round_.pending():
                round_.act(seat, bots[seat].act(round_.observe(seat)))
        ident = f"{rules}/{index:02d}-{table.name}/{hand:02d}"
        lines.append({"id": ident, "bots": list(table.bots), "record": plain(record_of(round_))})
        for situation in round_.captured:
            data = situation_json(situation)
            if score_output(data) != plain(score(situation).to_json()):
                raise RuntimeError(f"{ident}: the score input does not say what the engine scored")
            situations.append(data)
        dealer = next_dealer(round_.rules, round_)
    return lines, situations


def tables(rules: str) -> tuple[Table, ...]:
    return (*_COMMON, *_OWN[rules])


# --- win situations --------------------------------------------------------------------


Mutation = Callable[[dict[str, Any], random.Random, list[str]], None]


def _other_seat(d: dict[str, Any], rng: random.Random) -> int:
    return rng.choice([s for s in range(4) if s != d["winner"]])


def _win_by(d: dict[str, Any], rng: random.Random, faces: list[str]) -> None:
    kinds = ["discard", "self_draw", "robbed_kong"]
    if d["rules"] == "baicheng":
        kinds += ["treasure", "fenzhang"]
    d["win_by"] = by = rng.choice(kinds)
    d.pop("from", None)
    d.pop("fenzhang_drawn", None)
    if by != "self_draw":
        d["first_draw"] = False
    if by == "discard":
        d["from"] = _other_seat(d, rng)
    elif by == "robbed_kong":
        _robbed(d, rng)
    elif by == "treasure" and d.get("treasure"):
        d["win_tile"] = d["treasure"]
    elif by == "fenzhang":  # the others may hold a kept 分张 tile: one tile more
        d["after_kong"] = False
        kept = sorted(rng.sample([s for s in range(4) if s != d["winner"]], rng.randrange(3)))
        for seat in kept:
            d["seats"][seat]["concealed"] += rng.choice(faces)
        if kept:
            d["fenzhang_drawn"] = kept


def _robbed(d: dict[str, Any], rng: random.Random) -> None:
    """抢杠 from a seat with a peng of the winning face; else such a peng is made for a
    seat from three of its concealed tiles if no other copy of the face is in sight;
    else some other seat's peng is robbed (of a face the winner hardly waits on)."""
    d["after_kong"] = False
    tile = d["win_tile"]
    pengs = [
        (seat, _parse(meld["tiles"])[0])
        for seat, hand in enumerate(d["seats"])
        if seat != d["winner"]
        for meld in hand["melds"]
        if meld["kind"] == "peng"
    ]
    on_tile = [p for p in pengs if p[1] == tile]
    in_sight = sum(
        _parse(hand["concealed"]).count(tile)
        + sum(_parse(m["tiles"]).count(tile) for m in hand["melds"])
        for hand in d["seats"]
    )
    if on_tile or (pengs and in_sight):
        d["from"], d["win_tile"] = rng.choice(on_tile or pengs)
        return
    d["from"] = konger = _other_seat(d, rng)
    hand = d["seats"][konger]
    tiles = _parse(hand["concealed"])
    if in_sight or len(tiles) < 3:
        return  # refused: no peng to rob
    for _ in range(3):
        tiles.pop(rng.randrange(len(tiles)))
    hand["concealed"] = "".join(tiles)
    caller = rng.choice([s for s in range(4) if s != konger])
    hand["melds"].append({"kind": "peng", "tiles": tile * 3, "from": caller})


def _flags(d: dict[str, Any], rng: random.Random, faces: list[str]) -> None:
    key = rng.choice(["after_kong", "last_tile"])
    d[key] = not d[key]


def _first_draw(d: dict[str, Any], rng: random.Random, faces: list[str]) -> None:
    """天胡 / 地胡: a self-draw on the first tiles, so no call before it. Every opening meld
    goes back into its hand as three concealed tiles (a kong's fourth leaves the table)."""
    for seat in d["seats"]:
        for meld in [m for m in seat["melds"] if m["kind"] != "an_gang"]:
            seat["melds"].remove(meld)
            seat["concealed"] += "".join(_parse(meld["tiles"])[:3])
    d.update(win_by="self_draw", first_draw=True, after_kong=False, last_tile=False)
    d.pop("from", None)


def _table(d: dict[str, Any], rng: random.Random, faces: list[str]) -> None:
    d["dealer"] = rng.randrange(4)
    d["base"] = rng.choice([1, 2, 3, 10])


def _options(d: dict[str, Any], rng: random.Random, faces: list[str]) -> None:
    options = d["options"]
    if d["rules"] == "baishan_platform":
        options["room"] = rng.choice(["free", "junior", "intermediate", "anti_cheat"])
        options["piao"] = [rng.choice([0, 5, 10]) for _ in range(4)]
        if rng.random() < 0.3:
            options["cap"] = rng.choice([10, 40, 100])
    elif d["rules"] == "sichuan":
        options["que"] = [rng.choice("mps") for _ in range(4)]
        options["cap"] = rng.choice([2, 3, 4, 6])
    else:
        d["base"] = rng.choice([1, 2, 5])


def _won(d: dict[str, Any], rng: random.Random, faces: list[str]) -> None:
    others = [s for s in range(4) if s != d["winner"]]
    d["won"] = sorted(rng.sample(others, rng.choice([0, 1, 1, 2])))


def _ready(d: dict[str, Any], rng: random.Random, faces: list[str]) -> None:
    ready = d["declared_ready"]
    ready[d["winner"]] = not ready[d["winner"]]


def _treasure(d: dict[str, Any], rng: random.Random, faces: list[str]) -> None:
    d["treasure"] = rng.choice(faces)
    d["retired_treasure"] = rng.sample(faces, rng.choice([0, 0, 1, 2]))
    if d["win_by"] == "treasure":
        d["win_tile"] = d["treasure"]


def _tile(d: dict[str, Any], rng: random.Random, faces: list[str]) -> None:
    """Swap one of the winner's concealed tiles, or the winning tile, for another face."""
    if rng.random() < 0.5:
        d["win_tile"] = rng.choice(faces)
        return
    seat = d["seats"][d["winner"]]
    tiles = _parse(seat["concealed"])
    if tiles:
        tiles[rng.randrange(len(tiles))] = rng.choice(faces)
        seat["concealed"] = "".join(tiles)


def _winner(d: dict[str, Any], rng: random.Random, faces: list[str]) -> None:
    """Another seat claims the win: mostly no win at all."""
    d["winner"] = _other_seat(d, rng)
    if d.get("from") == d["winner"]:
        d["from"] = _other_seat(d, rng)


def _kong(d: dict[str, Any], rng: random.Random, faces: list[str]) -> None:
    """A meld grows: a peng becomes a kong, or a concealed triplet (or 中发白) is laid."""
    seat_index = rng.randrange(4)
    seat = d["seats"][seat_index]
    pengs = [m for m in seat["melds"] if m["kind"] == "peng"]
    if pengs and rng.random() < 0.5:
        meld = rng.choice(pengs)
        meld["kind"] = rng.choice(["bu_gang", "ming_gang"])
        meld["tiles"] += meld["tiles"][-2:] if meld["tiles"][-1] in "mps" else meld["tiles"][-1]
        meld.pop("treasure", None)
        return
    tiles = _parse(seat["concealed"])
    dragons = ["C", "F", "P"]
    if d["rules"] == "baicheng" and all(t in tiles for t in dragons) and rng.random() < 0.5:
        for t in dragons:
            tiles.remove(t)
        seat["melds"].append({"kind": "xuanfeng", "tiles": "CFP"})
    else:
        triples = sorted({t for t in tiles if tiles.count(t) >= 3})
        if not triples:
            return
        face = rng.choice(triples)
        for _ in range(3):
            tiles.remove(face)
        seat["melds"].append({"kind": "an_gang", "tiles": face * 4})
    seat["concealed"] = "".join(tiles)


def _parse(text: str) -> list[str]:
    """A canonical hand's tiles as one-tile notations (``"1m"``, ``"C"``)."""
    out, digits = [], ""
    for ch in text:
        if ch.isdigit():
            digits += ch
        elif ch in "mps":
            out += [f"{n}{ch}" for n in digits]
            digits = ""
        else:
            out.append(ch)
    return out


_MUTATIONS: Final[Mapping[str, tuple[Mutation, ...]]] = {
    "baicheng": (_win_by, _flags, _first_draw, _table, _options, _treasure, _tile, _winner, _kong),
    "baishan": (_win_by, _flags, _first_draw, _table, _options, _ready, _tile, _winner, _kong),
    "baishan_platform": (_win_by, _flags, _first_draw, _table, _options, _tile, _winner, _kong),
    "sichuan": (_win_by, _flags, _first_draw, _table, _options, _won, _tile, _winner, _kong),
}
MUTANTS: Final = 10  # mutations kept per captured situation
ERROR_SHARE: Final = 0.1  # of refused mutants, the share kept (the rest are drawn again)


def mutants(rules: str, seeds: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Seeded variations of the captured situations, ``MUTANTS`` per situation. Each
    situation's are drawn from a seed of its own content, so that a change of what `score`
    refuses (which redraws a mutant) changes only the mutants of the situations it touches."""
    faces = sorted({tile_name(t) for t in find_rules(rules).faces})
    seen = {dumps(d) for d in seeds}
    out = []
    for base in seeds:
        rng = random.Random(f"{SEED}:{rules}:{dumps(base)}")
        kept = 0
        for _ in range(20 * MUTANTS):
            if kept == MUTANTS:
                break
            d = json.loads(json.dumps(base))
            for mutate in rng.sample(_MUTATIONS[rules], rng.choice([1, 1, 2, 3])):
                mutate(d, rng, faces)
            text = dumps(d)
            if text in seen or ("error" in score_output(d) and rng.random() >= ERROR_SHARE):
                continue
            seen.add(text)
            out.append(d)
            kept += 1
    return out


# --- regenerating ----------------------------------------------------------------------


def generate() -> tuple[dict[str, list[dict[str, Any]]], list[dict[str, Any]]]:
    """Every rule set's record lines, and the scoring corpus's lines."""
    records: dict[str, list[dict[str, Any]]] = {}
    scoring: list[dict[str, Any]] = []
    for rules in RULES:
        lines: list[dict[str, Any]] = []
        captured: list[dict[str, Any]] = []
        for index, table in enumerate(tables(rules)):
            got, wins = play_table(rules, index, table)
            lines += got
            captured += wins
        if not captured:
            raise RuntimeError(
                f"{rules}: no win situation captured; does the engine still build them "
                "in Round._situation?"
            )
        unique = list({dumps(d): d for d in captured}.values())
        records[rules] = lines
        situations = unique + mutants(rules, unique)
        # named by content, so that a situation keeps its name when others come or go
        named = {
            f"{rules}-{hashlib.sha256(dumps(d).encode()).hexdigest()[:10]}": d for d in situations
        }
        scoring += [{"id": k, "input": d, "output": score_output(d)} for k, d in named.items()]
    return records, scoring


def _changes(old: list[Any], new: list[Any], describe: Callable[[Any, Any], str]) -> list[str]:
    """Lines of a summary: added, removed and changed entries by id (first five shown)."""
    before, after = {x["id"]: x for x in old}, {x["id"]: x for x in new}
    changed = [i for i in after if i in before and before[i] != after[i]]
    added = [i for i in after if i not in before]
    removed = [i for i in before if i not in after]
    lines = [f"{len(changed)} changed, {len(added)} added, {len(removed)} removed"]
    lines += [f"  {i}: {describe(before[i], after[i])}" for i in changed[:5]]
    return lines


def _describe_record(old: Any, new: Any) -> str:
    return first_difference(old["record"], new["record"]) or "labels"


def _describe_situation(old: Any, new: Any) -> str:
    if old["input"] != new["input"]:
        return f"another situation:\n    was {dumps(old['input'])}\n    now {dumps(new['input'])}"
    return f"output\n    was {dumps(old['output'])}\n    now {dumps(new['output'])}"


def main() -> int:
    records, scoring = generate()
    for rules, lines in records.items():
        path = RECORDS / f"{rules}.jsonl.gz"
        old = read_lines(path) if path.exists() else []
        print(
            f"{path.relative_to(ROOT)}: {len(lines)} hands; "
            + "\n".join(_changes(old, lines, _describe_record))
        )
        write_lines(path, lines)
    old = read_lines(SCORING) if SCORING.exists() else []
    print(
        f"{SCORING.relative_to(ROOT)}: {len(scoring)} situations; "
        + "\n".join(_changes(old, scoring, _describe_situation))
    )
    write_lines(SCORING, scoring)
    for path in scripted_paths():
        lines = scripted_output(path)
        out = expected_path(path)
        old = read_lines(out) if out.exists() else []
        if not old:
            print(f"{out.relative_to(ROOT)}: new, {len(lines)} lines")
        elif old != lines:
            pairs = zip(old, lines, strict=False)
            at = next((i for i, (a, b) in enumerate(pairs) if a != b), min(len(old), len(lines)))
            print(f"{out.relative_to(ROOT)}: changed from line {at + 1}")
        write_lines(out, lines)
    return 0


if __name__ == "__main__":
    sys.exit(main())
