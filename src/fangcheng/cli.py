"""The ``fangcheng`` command."""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from fangcheng import __version__
from fangcheng.ai.expert import TABLE_PLAYOUTS, TABLE_SECONDS, TABLE_WORKERS
from fangcheng.analysis.hand import CLASSIC, Shapes, shanten, wait_shapes
from fangcheng.tiles.notation import (
    InvalidNotationError,
    TileCountError,
    format_counts,
    glyph,
    parse_counts,
)

if TYPE_CHECKING:
    from sqlalchemy.engine import Engine

    from fangcheng.engine.record import RecordInput
    from fangcheng.platform.check import Report as LedgerReport
    from fangcheng.platform.service import Platform

#: Hands the demo analyses when none is given: one of each kind of wait.
#: (title, hand, shapes it is read with: None for the command's own)
DEMO_HANDS: tuple[tuple[str, str, Shapes | None], ...] = (
    ("two-sided (两面)", "23m567p345s789s99p", None),
    ("closed (坎)", "13m567p345s789s99p", None),
    ("edge (三七边)", "12m456p789s111p99s", None),
    ("two pairs (对倒)", "11m99p123s456s789s", None),
    ("four-tile run (两头吊)", "1234m567p345s999p", None),
    ("dragon sandwich (baicheng)", "CF123m456p789s11p", Shapes(dragon_set=True)),
    ("seven pairs", "1122m3344p5566sE", None),
    ("thirteen orphans, 13-sided", "19m19p19sESWNCFP", None),
    ("nine gates", "1112345678999m", None),
    ("one away", "13m468p3579s1134z", None),
)

SHAPE_NAMES = {
    "EDGE": "edge 边",
    "CLOSED": "closed 坎",
    "TWO_SIDED": "two-sided 两面",
    "SINGLE": "single 单吊",
    "SINGLE_RUN_END": "run-end single 两头吊",
    "PUNG": "pung 对倒",
    "DRAGONS": "dragon sandwich 中发白",
}


def _describe(hand: str, shapes: Shapes) -> str:
    counts = parse_counts(hand)
    glyphs = "".join(glyph(t) for t in range(34) for _ in range(counts[t]))
    lines = [f"  hand     {format_counts(counts)}   {glyphs}"]
    n = shanten(counts, shapes=shapes)
    lines.append(f"  shanten  {n}" + ("  (complete)" if n < 0 else "  (ready)" if n == 0 else ""))
    if n == 0 and sum(counts) % 3 == 1:
        for tile, found in wait_shapes(counts, shapes=shapes).items():
            names = ", ".join(sorted(SHAPE_NAMES[s.name] for s in found))
            lines.append(
                f"  wait     {format_counts([int(t == tile) for t in range(34)])}: {names}"
            )
    return "\n".join(lines)


def _demo(args: argparse.Namespace) -> int:
    shapes = Shapes(dragon_set=True) if args.dragon_set else CLASSIC
    hands: list[tuple[str, str, Shapes | None]] = [("your hand", h, None) for h in args.hands]
    hands = hands or list(DEMO_HANDS)
    for title, hand, own in hands:
        print(f"{title}:")
        try:
            print(_describe(hand, own or shapes))
        except (InvalidNotationError, TileCountError) as exc:
            print(f"  error: {exc}", file=sys.stderr)
            return 2
    return 0


def _score(args: argparse.Namespace) -> int:
    from fangcheng.scoring.scorer import score
    from fangcheng.scoring.situation import SituationError, read_situation

    text = _read(args.file, "score")
    try:
        result = score(read_situation(text))
    except SituationError as exc:
        print(f"fangcheng score: {args.file}: {exc}", file=sys.stderr)
        return 2
    if args.explain:
        print(result.explain())
    else:
        print(json.dumps(result.to_json(), ensure_ascii=False))
    return 0


def _read(path: str, command: str) -> bytes | str:
    """The content of a file (or stdin for ``-``), undecoded: the reader of the contract
    names bad UTF-8 and bad JSON. A message and SystemExit(2) if it cannot be read."""
    source = "<stdin>" if path == "-" else path
    try:
        if path == "-":
            stdin = getattr(sys.stdin, "buffer", sys.stdin)  # a test may swap in a text stream
            content: bytes | str = stdin.read()
            return content
        with open(path, "rb") as handle:
            return handle.read()
    except OSError as exc:
        print(f"fangcheng {command}: cannot read {source}: {exc.strerror}", file=sys.stderr)
    raise SystemExit(2)


def _replay(args: argparse.Namespace) -> int:
    import msgspec

    from fangcheng.engine.record import RecordError, read_record, replay

    text = _read(args.file, "replay")
    try:
        record = read_record(text)
        result = replay(record)
    except RecordError as exc:
        print(f"fangcheng replay: {args.file}: {exc}", file=sys.stderr)
        return 2
    if args.show:
        return _show(args, record)
    if result.scripted:
        for event in result.round.events:
            print(json.dumps(msgspec.to_builtins(event), ensure_ascii=False))
        if result.round.settlement is not None:
            print(json.dumps({"settlement": result.round.settlement}, ensure_ascii=False))
        return 0
    if result.divergence is not None:
        print(f"fangcheng replay: {args.file}: diverges at {result.divergence}", file=sys.stderr)
        return 1
    print(f"{args.file}: {len(result.round.events)} events and the settlement replay identically")
    return 0


def _show(args: argparse.Namespace, record: RecordInput) -> int:
    """``replay --show``: step through the hand on the terminal table."""
    try:
        from fangcheng.ui.terminal.app import PlayApp
        from fangcheng.ui.terminal.game import ReplayView
    except ModuleNotFoundError as exc:
        print(
            f"fangcheng replay --show needs {exc.name}: pip install 'fangcheng[play]'",
            file=sys.stderr,
        )
        return 2
    if not sys.stdout.isatty() or args.file == "-":  # the keys come from stdin
        print("fangcheng replay --show needs a terminal and a file", file=sys.stderr)
        return 2
    view = ReplayView(record, seat=args.seat, path=Path(args.file))
    PlayApp(view, ascii=args.ascii).run()
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="fangcheng",
        description="Baishan, Baicheng and Sichuan mahjong: analysis, scoring, play.",
        epilog="exit codes:\n  0  success\n"
        "  1  a replay that diverges from its record (naming the first divergent event)\n"
        "  2  invalid input: one line on stderr names the field and the problem, quoting\n"
        "     at most 80 characters of the value (never a traceback)",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"fangcheng {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)
    demo = sub.add_parser("demo", help="parse hands and show shanten, waits and wait shapes")
    demo.add_argument("hands", nargs="*", help="hands in notation, e.g. 1234m567p345s999p")
    demo.add_argument("--dragon-set", action="store_true", help="count 中发白 as a meld (baicheng)")
    demo.set_defaults(run=_demo)
    score = sub.add_parser(
        "score",
        help="score one win described in JSON (see ARCHITECTURE: Win situation)",
    )
    score.add_argument("file", help="the situation JSON file, or - for stdin")
    score.add_argument(
        "--explain", action="store_true", help="print a readable table instead of JSON"
    )
    score.set_defaults(run=_score)
    replay = sub.add_parser(
        "replay",
        help="re-run a game record and check it replays identically, or --show it",
    )
    replay.add_argument("file", help="the record JSON file, or - for stdin")
    replay.add_argument(
        "--show", action="store_true", help="step through the hand on the terminal table"
    )
    replay.add_argument(
        "--seat", type=int, default=0, choices=range(4), help="--show: whose side (0 E … 3 N)"
    )
    replay.add_argument("--ascii", action="store_true", help="--show: tiles as notation")
    replay.set_defaults(run=_replay)
    _ledger_parser(sub)
    _admin_parser(sub)
    _db_parser(sub)
    # Parsed by the terminal game and the simulator themselves (see main); listed for --help.
    sub.add_parser("play", help="play a match against three bots (fangcheng play -h)")
    sub.add_parser(
        "simulate", help="play many hands between bots and summarise (fangcheng simulate -h)"
    )
    serve = sub.add_parser("serve", help="run the table server: play in a browser")
    serve.add_argument("--host", default="127.0.0.1", help="address to listen on")
    serve.add_argument("--port", type=int, default=8000)
    serve.add_argument(
        "--db", help="SQLAlchemy database URL (default: $FANGCHENG_DB, else DATA/fangcheng.db)"
    )
    serve.add_argument("--data", default="data", help="data directory (default ./data)")
    serve.add_argument(
        "--origin",
        action="append",
        default=[],
        help="another page origin allowed to open the websocket (behind a proxy); repeatable",
    )
    serve.add_argument(
        "--trusted-proxy",
        action="append",
        default=[],
        metavar="ADDR",
        help="a reverse proxy (an address or a network, 10.0.0.0/24; repeatable or a comma"
        " list) whose X-Forwarded-For names the client; nobody else's is believed",
    )
    serve.add_argument(
        "--bot-ms", type=int, help="every table's bot pace in ms (default: each table's own)"
    )
    serve.add_argument(
        "--between-ms", type=int, help="the pause between hands in ms (default: each table's)"
    )
    serve.add_argument(
        "--match-wait-ms",
        type=int,
        default=15_000,
        help="coin tables: the quick match's wait before house bots fill (default 15000)",
    )
    serve.add_argument(
        "--rate", type=float, default=20.0, help="frames a second one connection may send"
    )
    serve.add_argument(
        "--expert-playouts",
        type=int,
        default=TABLE_PLAYOUTS,
        metavar="N",
        help="the expert bot's playouts per decision, at tables and in hints (default"
        " %(default)s, at most 256)",
    )
    serve.add_argument(
        "--expert-seconds",
        type=float,
        default=TABLE_SECONDS,
        metavar="S",
        help="the time an expert decision or hint may take from when it is asked, its wait"
        " for a worker counted; then the strong bot's choice (default %(default)s)",
    )
    serve.add_argument(
        "--expert-workers",
        type=int,
        default=TABLE_WORKERS,
        metavar="N",
        help="the processes the expert bots and hints think in, beside the server's"
        " (default %(default)s; 0: a thread of the server's own, which holds up every"
        " table's frames while an expert thinks)",
    )
    serve.add_argument(
        "--metrics-token",
        metavar="T",
        default=os.environ.get("FANGCHENG_METRICS_TOKEN"),
        help="GET /metrics answers loopback, and elsewhere only 'Authorization: Bearer T'"
        " (default $FANGCHENG_METRICS_TOKEN, which keeps it out of the process list)",
    )
    serve.add_argument(
        "--metrics-address",
        metavar="HOST:PORT",
        help="also serve GET /metrics alone on this listener (an internal address) to"
        " whoever reaches it",
    )
    many = serve.add_argument_group(
        "many processes (docs/deploy.md)",
        "with --redis this is one of N interchangeable processes behind one address, sharing "
        "--db (PostgreSQL) and Redis: each table is leased to one process, the others pass "
        "its requests on, and a table whose process dies is rebuilt by another from its log",
    )
    many.add_argument("--redis", metavar="URL", help="Redis URL, e.g. redis://127.0.0.1:6379/0")
    many.add_argument(
        "--redis-prefix", default="fangcheng:", help="prefix of every Redis key (%(default)s)"
    )
    many.add_argument(
        "--advertise",
        metavar="URL",
        help="this process's URL as the other processes reach it (default http://HOST:PORT)",
    )
    many.add_argument(
        "--lease-ms",
        type=int,
        default=2000,
        help="a table lease's ttl: a dead process's tables move after about this (default 2000)",
    )
    serve.set_defaults(run=_serve)
    sub.add_parser("bot", help="play a seat at a server's table with a bot (fangcheng bot -h)")
    return parser


def _serve(args: argparse.Namespace) -> int:
    import importlib.util
    import ipaddress
    from pathlib import Path

    try:
        import uvicorn

        from fangcheng.server import faults
        from fangcheng.server.app import ServerSettings, create_app
        from fangcheng.server.security import setup_logging
        from fangcheng.server.store import default_url
        from fangcheng.server.thinking import MAX_PLAYOUTS, MAX_WORKERS
    except ImportError as exc:
        print(
            f"fangcheng serve: {exc.name} is missing: pip install 'fangcheng[server]'",
            file=sys.stderr,
        )
        return 2
    url = args.db or os.environ.get("FANGCHENG_DB") or default_url(Path(args.data))
    if url.startswith("postgresql") and importlib.util.find_spec("psycopg") is None:
        print(
            "fangcheng serve: PostgreSQL needs psycopg: pip install 'fangcheng[postgres]'",
            file=sys.stderr,
        )
        return 2
    if args.redis is not None:
        try:
            import httpx  # noqa: F401
            import redis  # noqa: F401
        except ImportError as exc:
            print(
                f"fangcheng serve: {exc.name} is missing: pip install 'fangcheng[cluster]'",
                file=sys.stderr,
            )
            return 2
        if args.lease_ms < 300:
            print("fangcheng serve: --lease-ms: at least 300", file=sys.stderr)
            return 2
    if not 1 <= args.expert_playouts <= MAX_PLAYOUTS:
        print(f"fangcheng serve: --expert-playouts: 1..{MAX_PLAYOUTS}", file=sys.stderr)
        return 2
    if not args.expert_seconds >= 0:
        print("fangcheng serve: --expert-seconds: 0 or more", file=sys.stderr)
        return 2
    if not 0 <= args.expert_workers <= MAX_WORKERS:
        print(f"fangcheng serve: --expert-workers: 0..{MAX_WORKERS}", file=sys.stderr)
        return 2
    proxies = [p.strip() for arg in args.trusted_proxy for p in arg.split(",") if p.strip()]
    for proxy in proxies:
        try:
            ipaddress.ip_network(proxy, strict=False)
        except ValueError:
            print(
                f"fangcheng serve: --trusted-proxy: {proxy!r} is not an address or a network",
                file=sys.stderr,
            )
            return 2
    metrics_address = None
    if args.metrics_address is not None:
        host, _, port = args.metrics_address.rpartition(":")
        if not host or not port.isdigit() or not 0 < int(port) < 65536:
            print("fangcheng serve: --metrics-address: HOST:PORT", file=sys.stderr)
            return 2
        metrics_address = (host.strip("[]"), int(port))
    if args.metrics_token is not None and len(args.metrics_token) < 16:
        print("fangcheng serve: --metrics-token: at least 16 characters", file=sys.stderr)
        return 2
    try:
        faults.install()  # the fault-injection run's plan, if any (tests/chaos.py)
    except ValueError as exc:
        print(f"fangcheng serve: {exc}", file=sys.stderr)
        return 2
    setup_logging()
    settings = ServerSettings(
        db=url,
        origins=frozenset(args.origin),
        trusted_proxies=frozenset(proxies),
        bot_ms=args.bot_ms,
        between_ms=args.between_ms,
        match_wait_ms=args.match_wait_ms,
        rate=args.rate,
        burst=2 * args.rate,
        expert_playouts=args.expert_playouts,
        expert_seconds=args.expert_seconds,
        expert_workers=args.expert_workers,
        redis=args.redis,
        redis_prefix=args.redis_prefix,
        advertise=args.advertise or f"http://{args.host}:{args.port}",
        lease_ms=args.lease_ms,
        metrics_token=args.metrics_token,
        metrics_address=metrics_address,
    )
    app = create_app(settings)
    many = "" if args.redis is None else f", one of many via {args.redis}"
    print(f"fangcheng: open http://{args.host}:{args.port}/  (database {url}{many})", flush=True)
    uvicorn.run(  # (the app reads forwarded headers itself, from its trusted proxies only)
        app,
        host=args.host,
        port=args.port,
        log_level="warning",
        ws_max_size=65536,
        proxy_headers=False,
    )
    return 0


# --- fangcheng ledger: the coin platform's operator commands ---------------------------

#: The ``--db`` of the ledger, admin and db commands.
DB_HELP = "SQLAlchemy database URL (default: $FANGCHENG_DB, else data/fangcheng.db)"


def _ledger_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    ledger = sub.add_parser("ledger", help="check the coin ledger, or grant coins (operator)")
    commands = ledger.add_subparsers(dest="ledger_command", required=True)
    check = commands.add_parser(
        "check",
        help="reconcile balances, journals and every hand's record; exit 1 at a mismatch",
    )
    check.add_argument("--db", help=DB_HELP)
    check.set_defaults(run=_ledger_check)
    grant = commands.add_parser("grant", help="grant coins from issuance to a person")
    grant.add_argument("name", help="the person's account name")
    grant.add_argument("amount", type=int, help="coins, a positive whole number")
    grant.add_argument("--reason", required=True, help="why (kept in the journal)")
    grant.add_argument("--db", help=DB_HELP)
    grant.set_defaults(run=_ledger_grant)


def _ledger_database(
    args: argparse.Namespace, command: str = "ledger", *, migrate: bool = True
) -> Engine | None:
    """The database of ``--db`` (migrated, unless not ``migrate``), or None after saying
    why it cannot be opened (``fangcheng COMMAND: …``)."""
    try:
        import sqlalchemy

        from fangcheng.platform.database import connect, database_url
    except ImportError as exc:
        print(
            f"fangcheng {command}: {exc.name} is missing: pip install 'fangcheng[platform]'",
            file=sys.stderr,
        )
        return None

    url = database_url(args.db)
    try:
        engine = connect(url, migrate_schema=False)
        if migrate:
            from fangcheng.platform.database import migrate as upgrade

            upgrade(engine)
        return engine
    except (sqlalchemy.exc.SQLAlchemyError, ValueError, OSError) as exc:
        reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        print(f"fangcheng {command}: cannot open the database {url}: {reason}", file=sys.stderr)
        return None


def _on_platform(args: argparse.Namespace, command: str, act: Callable[[Platform], int]) -> int:
    """``act``'s exit code on the platform of ``--db``; 2 after saying why where the
    database does not open (``fangcheng GROUP: …``, the group of ``command``) or the
    platform refuses (a `PlatformError`: ``fangcheng COMMAND: …``)."""
    from fangcheng.platform.errors import PlatformError
    from fangcheng.platform.service import Platform

    engine = _ledger_database(args, command.partition(" ")[0])
    if engine is None:
        return 2
    try:
        return act(Platform(engine))
    except PlatformError as exc:
        print(f"fangcheng {command}: {exc}", file=sys.stderr)
        return 2


def _ledger_check(args: argparse.Namespace) -> int:
    from fangcheng.platform.check import check_ledger

    engine = _ledger_database(args)
    if engine is None:
        return 2
    report = check_ledger(engine)
    if report.problems:
        _print_problems("ledger check", report.problems, "the ledger does not add up")
        return 1
    print(f"{_clean(report)}; {report.issued} coins issued, house {report.house}")
    print(f"adjustments: {report.adjustments}, {report.adjusted:+d} coins to people (net)")
    return 0


def _ledger_grant(args: argparse.Namespace) -> int:
    def act(platform: Platform) -> int:
        journal = platform.grant(args.name, args.amount, args.reason)
        person = platform.person(args.name)
        balance = platform.balance(person.id)
        print(
            f"granted {args.amount} coins to {person.name} (journal {journal}); balance {balance}"
        )
        return 0

    return _on_platform(args, "ledger grant", act)


# --- fangcheng admin: operators and their acts, for scripts ---------------------------


def _admin_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    admin = sub.add_parser(
        "admin",
        help="operators: create or disable one; freeze, unfreeze or adjust an account; the audit",
    )
    commands = admin.add_subparsers(dest="admin_command", required=True)
    create = commands.add_parser(
        "create", help="a new operator (its password asked twice, or read from stdin)"
    )
    create.add_argument("--name", required=True, help="the operator's name")
    create.add_argument(
        "--role",
        choices=("support", "admin"),
        default="support",
        help="support reads; admin also writes (default %(default)s)",
    )
    create.add_argument(
        "--password-stdin", action="store_true", help="read the password from stdin's first line"
    )
    create.add_argument("--db", help=DB_HELP)
    create.set_defaults(run=_admin_create)
    for name, verb in (("freeze", "freeze"), ("unfreeze", "unfreeze")):
        act = commands.add_parser(
            name,
            help=f"{verb} an account (D90: a frozen one cannot sign in, sit or be matched)",
        )
        act.add_argument("--operator", required=True, metavar="OP", help="an admin operator")
        act.add_argument("name", help="the person's account name, or #ID")
        act.add_argument("--reason", required=True, help="why (kept in the audit)")
        act.add_argument("--db", help=DB_HELP)
        act.set_defaults(run=_admin_freeze, unfreeze=name == "unfreeze")
    disable = commands.add_parser(
        "disable", help="disable an operator: it can no longer log in or act (audited)"
    )
    disable.add_argument("--operator", required=True, metavar="OP", help="an admin operator")
    disable.add_argument("name", help="the operator to disable")
    disable.add_argument("--reason", required=True, help="why (kept in the audit)")
    disable.add_argument("--db", help=DB_HELP)
    disable.set_defaults(run=_admin_disable)
    adjust = commands.add_parser(
        "adjust",
        help="a coin adjustment between a person and the house (D91), idempotent by --key",
    )
    adjust.add_argument("--operator", required=True, metavar="OP", help="an admin operator")
    adjust.add_argument("name", help="the person's account name, or #ID")
    adjust.add_argument(
        "amount", type=int, help="coins: positive gives, negative takes (never below 0)"
    )
    adjust.add_argument("--reason", required=True, help="why (kept in the journal and audit)")
    adjust.add_argument(
        "--key", required=True, help="the adjustment's own key: the same key again books nothing"
    )
    adjust.add_argument(
        "--counts-in-score", action="store_true", help="count it in the person's 积分 too"
    )
    adjust.add_argument("--db", help=DB_HELP)
    adjust.set_defaults(run=_admin_adjust)
    audit = commands.add_parser("audit", help="the operators' audit, newest first")
    audit.add_argument("--limit", type=int, default=50, help="rows (1..1000, default 50)")
    audit.add_argument("--target", help="only of one target, e.g. person:17 or table:ABCD")
    audit.add_argument("--db", help=DB_HELP)
    audit.set_defaults(run=_admin_audit)


#: What the audit records as the address of an act done by this command.
CLI_ADDRESS = "cli"


def _admin_create(args: argparse.Namespace) -> int:
    import getpass

    if args.password_stdin:
        password = sys.stdin.readline().rstrip("\r\n")
    else:
        try:
            password = getpass.getpass(f"password for operator {args.name}: ")
            again = getpass.getpass("the same again: ")
        except (EOFError, KeyboardInterrupt):
            print("\nfangcheng admin create: no password given", file=sys.stderr)
            return 2
        if password != again:
            print("fangcheng admin create: the passwords differ", file=sys.stderr)
            return 2

    def act(platform: Platform) -> int:
        operator = platform.create_operator(args.name, password, args.role)
        print(f"operator {operator.name} created ({operator.role}, id {operator.id})")
        return 0

    return _on_platform(args, "admin create", act)


def _admin_person(platform: Platform, name: str) -> int:
    """A person's id from a name or ``#ID``."""
    from fangcheng.platform.errors import UnknownPerson

    digits = name.removeprefix("#")
    if name.startswith("#") and digits.isdigit():
        found = [p.id for p in platform.find_people(name) if p.id == int(digits)]
        if not found:
            raise UnknownPerson(f"no account {name}")
        return found[0]
    return platform.person(name).id


def _admin_freeze(args: argparse.Namespace) -> int:
    def act(platform: Platform) -> int:
        operator = platform.operator_named(args.operator)
        person_id = _admin_person(platform, args.name)
        change = platform.unfreeze if args.unfreeze else platform.freeze
        person = change(operator, person_id, args.reason, CLI_ADDRESS)
        done = "unfrozen" if args.unfreeze else "frozen"
        print(f"{person.name} (#{person.id}) {done} by {operator.name}: {args.reason}")
        return 0

    return _on_platform(args, "admin unfreeze" if args.unfreeze else "admin freeze", act)


def _admin_disable(args: argparse.Namespace) -> int:
    def act(platform: Platform) -> int:
        operator = platform.operator_named(args.operator)
        disabled = platform.disable_operator(operator, args.name, args.reason, CLI_ADDRESS)
        done = f"disabled by {operator.name}: {args.reason}"
        print(f"operator {disabled.name} (#{disabled.id}) {done}")
        return 0

    return _on_platform(args, "admin disable", act)


def _admin_adjust(args: argparse.Namespace) -> int:
    def act(platform: Platform) -> int:
        operator = platform.operator_named(args.operator)
        person_id = _admin_person(platform, args.name)
        done = platform.adjust(
            operator,
            person_id,
            args.amount,
            args.reason,
            args.key,
            counts_in_score=args.counts_in_score,
            address=CLI_ADDRESS,
        )
        booked = "adjusted" if done.applied else "already adjusted under this key"
        print(
            f"{booked}: {done.amount:+d} coins to #{done.person_id} (journal {done.journal_id});"
            f" balance {done.balance}"
        )
        return 0

    return _on_platform(args, "admin adjust", act)


def _admin_audit(args: argparse.Namespace) -> int:
    from datetime import UTC, datetime

    def act(platform: Platform) -> int:
        for row in platform.audit_rows(limit=args.limit, target=args.target):
            at = datetime.fromtimestamp(row.at, UTC).strftime("%Y-%m-%d %H:%M:%S")
            change = json.dumps({"before": row.before, "after": row.after}, ensure_ascii=False)
            why = f" — {row.reason}" if row.reason else ""
            print(
                f"{row.id}  {at}Z  {row.operator}  {row.action}  {row.target}"
                f"  from {row.address or '-'}{why}  {change}"
            )
        return 0

    return _on_platform(args, "admin audit", act)


# --- fangcheng db: the schema and SQLite's backups ---------------------------------------

#: Where PostgreSQL's backup and restore are told (pg_dump and pg_restore do them).
PG_BACKUP_DOC = "docs/operations.md (Backups)"


def _db_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    db = sub.add_parser("db", help="the database: upgrade its schema; back up or restore SQLite")
    commands = db.add_subparsers(dest="db_command", required=True)
    upgrade = commands.add_parser(
        "upgrade",
        help="migrate the schema to the newest (as fangcheng serve does at its start)",
    )
    upgrade.add_argument("--db", help=DB_HELP)
    upgrade.set_defaults(run=_db_upgrade)
    backup = commands.add_parser(
        "backup", help="copy a SQLite database, consistently while it is in use, to FILE"
    )
    backup.add_argument("file", help="the backup to write (not an existing file)")
    backup.add_argument("--db", help=DB_HELP)
    backup.set_defaults(run=_db_backup)
    restore = commands.add_parser(
        "restore",
        help="restore a SQLite backup whose ledger checks clean, then check the result",
    )
    restore.add_argument("file", help="a backup written by fangcheng db backup")
    restore.add_argument(
        "--replace",
        action="store_true",
        help="overwrite the database if it exists (stop the server first)",
    )
    restore.add_argument("--db", help=DB_HELP)
    restore.set_defaults(run=_db_restore)


def _db_upgrade(args: argparse.Namespace) -> int:
    import sqlalchemy
    from alembic.migration import MigrationContext

    from fangcheng.platform.database import migrate

    engine = _ledger_database(args, "db upgrade", migrate=False)
    if engine is None:
        return 2
    shown = engine.url.render_as_string(hide_password=True)
    try:
        with engine.connect() as conn:
            before = MigrationContext.configure(conn).get_current_revision()
        migrate(engine)
        with engine.connect() as conn:
            after = MigrationContext.configure(conn).get_current_revision()
    except sqlalchemy.exc.SQLAlchemyError as exc:
        reason = str(exc).splitlines()[0]
        print(f"fangcheng db upgrade: {shown}: {reason}", file=sys.stderr)
        return 2
    finally:
        engine.dispose()
    if before == after:
        print(f"{shown}: at the newest schema, {after}")
    else:
        print(f"{shown}: upgraded from {before or 'nothing'} to {after}")
    return 0


def _sqlite_file(args: argparse.Namespace, command: str) -> Path | None:
    """The file of ``--db``, a SQLite database; None after saying why not (PostgreSQL:
    where its recipe is)."""
    from sqlalchemy.engine import make_url
    from sqlalchemy.exc import ArgumentError

    from fangcheng.platform.database import database_url

    url = database_url(args.db)
    try:
        parsed = make_url(url)
    except ArgumentError:
        print(f"fangcheng db {command}: {url!r} is not a database URL", file=sys.stderr)
        return None
    if parsed.get_backend_name() == "postgresql":
        print(
            f"fangcheng db {command}: a PostgreSQL database is backed up and restored with"
            f" pg_dump and pg_restore, then checked with fangcheng ledger check: see"
            f" {PG_BACKUP_DOC}",
            file=sys.stderr,
        )
        return None
    if parsed.get_backend_name() != "sqlite" or parsed.database in (None, "", ":memory:"):
        print(f"fangcheng db {command}: {url}: not a SQLite file or PostgreSQL", file=sys.stderr)
        return None
    return Path(parsed.database)


def _sqlite_copy(source: Path, target: Path) -> None:
    """``source`` copied into ``target`` by SQLite's online backup: consistent while
    another process writes (its WAL included), and a whole database or nothing."""
    import contextlib
    import sqlite3

    with (
        contextlib.closing(sqlite3.connect(f"file:{source}?mode=ro", uri=True)) as src,
        contextlib.closing(sqlite3.connect(target)) as dst,
    ):
        src.backup(dst)


def _sqlite_problem(path: Path) -> str | None:
    """Why ``path`` is not a sound SQLite database (None: it is)."""
    import contextlib
    import sqlite3

    try:
        with contextlib.closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True)) as db:
            result = db.execute("PRAGMA integrity_check").fetchone()[0]
            if result != "ok":
                return f"its integrity check says {result}"
            tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master")}
    except sqlite3.DatabaseError as exc:
        return str(exc)
    if "journals" not in tables:
        return "it holds no coin ledger (no journals table)"
    return None


def _db_backup(args: argparse.Namespace) -> int:
    import sqlite3

    database = _sqlite_file(args, "backup")
    if database is None:
        return 2
    target = Path(args.file)
    if not database.is_file():
        print(f"fangcheng db backup: no database at {database}", file=sys.stderr)
        return 2
    if target.exists():
        print(f"fangcheng db backup: {target} exists: name a new file", file=sys.stderr)
        return 2
    try:
        _sqlite_copy(database, target)
    except (sqlite3.Error, OSError) as exc:
        target.unlink(missing_ok=True)
        print(f"fangcheng db backup: {database} to {target}: {exc}", file=sys.stderr)
        return 2
    print(f"backed up {database} to {target} ({target.stat().st_size:,} bytes)")
    return 0


def _db_restore(args: argparse.Namespace) -> int:
    import sqlite3
    import tempfile

    from fangcheng.platform.check import check_ledger
    from fangcheng.platform.database import connect

    database = _sqlite_file(args, "restore")
    if database is None:
        return 2
    backup = Path(args.file)
    if not backup.is_file():
        print(f"fangcheng db restore: no backup at {backup}", file=sys.stderr)
        return 2
    problem = _sqlite_problem(backup)
    if problem:
        print(f"fangcheng db restore: {backup} is not a sound backup: {problem}", file=sys.stderr)
        return 2
    if database.exists() and not args.replace:
        print(
            f"fangcheng db restore: {database} exists: --replace overwrites it (stop the"
            " server first)",
            file=sys.stderr,
        )
        return 2
    with tempfile.TemporaryDirectory() as scratch:  # checked before anything is replaced
        trial = Path(scratch) / "restore.db"
        _sqlite_copy(backup, trial)
        engine = connect(f"sqlite:///{trial}")  # (an older backup: migrated)
        try:
            report = check_ledger(engine)
        finally:
            engine.dispose()
        if report.problems:
            _print_problems("db restore", report.problems, f"{backup} is not restored")
            return 1
        try:
            database.parent.mkdir(parents=True, exist_ok=True)
            _sqlite_copy(trial, database)
        except (sqlite3.Error, OSError) as exc:
            print(f"fangcheng db restore: {backup} to {database}: {exc}", file=sys.stderr)
            return 2
    engine = connect(f"sqlite:///{database}")
    try:
        report = check_ledger(engine)
    finally:
        engine.dispose()
    if report.problems:
        _print_problems("db restore", report.problems, f"{database} was restored")
        return 1
    print(f"restored {backup} to {database}; {_clean(report)}")
    return 0


def _clean(report: LedgerReport) -> str:
    """A clean ledger's counts, as `ledger check` and `db restore` both say them."""
    return (
        f"ledger clean: {report.accounts} accounts, {report.journals} journals,"
        f" {report.hands} hands"
    )


def _print_problems(command: str, problems: list[str], outcome: str) -> None:
    """A ledger's problems, every one, after what they mean for the command."""
    count = len(problems)
    print(f"fangcheng {command}: {outcome}; ledger check: {count} problem(s):", file=sys.stderr)
    for problem in problems:
        print(f"  {problem}", file=sys.stderr)


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] == "simulate":  # its own options: argparse cannot pass them through
        from fangcheng.ai.sim import main as simulate_main

        return simulate_main(argv[1:])
    if argv and argv[0] == "play":
        from fangcheng.ui.terminal.play import main as play_main

        return play_main(argv[1:])
    if argv and argv[0] == "bot":  # the reference outside-bot client (the server layer)
        from fangcheng.server.botclient import main as bot_main

        return bot_main(argv[1:])
    args = build_parser().parse_args(argv)
    result: int = args.run(args)
    return result


if __name__ == "__main__":
    sys.exit(main())
