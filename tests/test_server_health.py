"""Health and metrics (issue 37, item 3): ``/healthz``, ``/readyz`` for a load balancer
(503 naming the check that failed: the database, Redis, the leases), ``/metrics`` in
Prometheus's text format, read here by `prometheus_client`'s own parser, answered to
loopback, to the bearer of ``--metrics-token`` or on ``--metrics-address``'s listener,
and carrying no name, address, token or table code. The alerting rules of
docs/operations.md are valid YAML and name metrics that exist.

The app runs on a fake clock with no timer tasks (`test_server_protocol`); the client's
address is a trusted proxy's ``X-Forwarded-For`` (`test_trust_http`)."""

from __future__ import annotations

import contextlib
import gc
import re
import threading
import urllib.error
import urllib.request
import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from prometheus_client.parser import text_string_to_metric_families

from clustering import RedisServer, free_port, redis_problem
from ledgerdb import _pg_admin, database
from test_server_coins import TEST_SETTINGS, WAIT_MS, _play_hand
from test_server_protocol import T0, Clock, Seat

with warnings.catch_warnings():  # starlette's notice that httpx2 is preferred
    warnings.simplefilter("ignore")
    from starlette.testclient import TestClient

from fangcheng.cli import build_parser, main
from fangcheng.server import health
from fangcheng.server.app import ServerSettings, create_app
from fangcheng.server.hub import SESSIONS_PER_MINUTE, Hub

PROXY = ("10.0.0.2", 40_000)
HERE = {"x-forwarded-for": "127.0.0.1"}  # this machine, as the trusted proxy says
TOKEN = "a-metrics-token-of-ours"
#: Each sample's value by its name and labels.
Samples = dict[tuple[str, tuple[tuple[str, str], ...]], float]
OPERATIONS = Path(__file__).parent.parent / "docs" / "operations.md"


@dataclass
class Server:
    client: TestClient
    clock: Clock
    hub: Hub

    def tick(self) -> None:
        assert self.client.portal is not None
        self.client.portal.call(self.hub.tick)

    def scrape(self, **headers: str) -> Samples:
        """``/metrics`` from loopback, parsed: each sample's value by name and labels."""
        answer = self.client.get("/metrics", headers={**HERE, **headers})
        assert answer.status_code == 200, answer.text
        assert answer.headers["content-type"].startswith("text/plain")
        return {
            (s.name, tuple(sorted(s.labels.items()))): s.value
            for family in text_string_to_metric_families(answer.text)
            for s in family.samples
        }


@contextlib.contextmanager
def serving(db: str = "sqlite://", **options: Any) -> Iterator[Server]:
    clock = Clock()
    settings = ServerSettings(
        db=db,
        clock=clock,
        **{
            **TEST_SETTINGS,
            "trusted_proxies": frozenset({PROXY[0]}),
            "freeze_s": None,
            **options,
        },
    )
    app = create_app(settings)
    try:
        with TestClient(app, client=PROXY) as client:
            yield Server(client, clock, app.state.hub)
    finally:
        hub: Hub = app.state.hub
        if hub.platform_opened is not None:
            hub.platform_opened.engine.dispose()
        hub.store.engine.dispose()


def value(samples: Samples, name: str, **labels: str) -> float:
    return samples.get((name, tuple(sorted(labels.items()))), 0.0)


def _sign_up(server: Server, name: str, address: str) -> dict[str, str]:
    answer = server.client.post(
        "/api/account/signup",
        json={"name": name, "password": "correct horse"},
        headers={"x-forwarded-for": address},
    )
    assert answer.status_code == 200, answer.text
    return {"Authorization": f"Bearer {answer.json()['token']}"}


def _a_coin_hand(server: Server, name: str, address: str) -> tuple[str, str, Samples]:
    """``name`` signs up from ``address``, plays a coin hand at quick match, lets its
    next prompt run out (托管), fails a log-in and is rate-limited once; the table's
    code, the session's token and a scrape made while its socket is open."""
    c = server.client
    me = _sign_up(server, name, address)
    joined = c.post("/api/coins/match", json={"room": "free"}, headers=me)
    assert joined.status_code == 200, joined.text
    code = joined.json()["code"]
    server.clock.now = T0 + WAIT_MS  # house bots fill the table
    server.tick()
    with c.websocket_connect("/ws", headers={"x-forwarded-for": address}) as ws:
        seat = Seat(ws)
        end = _play_hand(seat, me, code)
        assert end["coins"]["balances"], end
        prompt = seat.prompt() or next(f for f in seat.drain() if f["type"] == "prompt")
        server.clock.now = prompt["deadline"]  # the next hand's first prompt runs out
        server.tick()
        seat.drain()
        wrong = c.post(
            "/api/account/login",
            json={"name": name, "password": "wrong horse"},
            headers={"x-forwarded-for": address},
        )
        assert wrong.status_code == 403
        answers: list[int] = []  # new sessions from the address until one is refused
        while 429 not in answers and len(answers) <= 2 * SESSIONS_PER_MINUTE:
            post = c.post("/api/session", json={}, headers={"x-forwarded-for": address})
            answers.append(post.status_code)
        assert answers[-1] == 429
        return code, me["Authorization"].split()[1], server.scrape()


def test_metrics_parse_and_count_a_played_coin_hand() -> None:
    with serving() as server:
        before = server.scrape()
        assert value(before, "fangcheng_frames_total", direction="in") == 0
        gc.collect()  # timed by the app's probe (`gc.callbacks`)
        assert value(server.scrape(), "fangcheng_gc_pause_seconds_count", generation="2") >= 1
        _, _, during = _a_coin_hand(server, "Qiaolian", "198.51.100.23")
        after = server.scrape()
    for samples in (during, after):
        assert value(samples, "fangcheng_frames_total", direction="in") > 0
        assert value(samples, "fangcheng_frames_total", direction="out") > 0
        assert value(samples, "fangcheng_action_seconds_count") > 0
        assert (
            value(samples, "fangcheng_timeouts_total", prompt="turn")
            + value(samples, "fangcheng_timeouts_total", prompt="claim")
            == 1
        )
        assert value(samples, "fangcheng_settlements_total", outcome="booked") >= 1
        assert value(samples, "fangcheng_settlements_total", outcome="failed") == 0
        assert value(samples, "fangcheng_login_failures_total") == 1
        assert value(samples, "fangcheng_rate_limited_total", where="http") == 1
        assert value(samples, "fangcheng_ledger_journals", kind="signup") == 1
        assert value(samples, "fangcheng_ledger_journals", kind="hand") >= 1
        assert value(samples, "fangcheng_tables", kind="coin", process="local") == 1
        assert value(samples, "fangcheng_people_seated", process="local") == 1
    assert value(during, "fangcheng_connections", process="local") == 1
    assert value(during, "fangcheng_tuoguan_seats", process="local") == 1  # (timed out)
    assert value(after, "fangcheng_connections", process="local") == 0


def test_metrics_and_readyz_carry_no_personal_data() -> None:
    """The same hand played by two people of different names and addresses: the
    samples' names and labels are the same, and no name, address, token or code shows."""
    seen = []
    for name, address in (("Qiaolian", "198.51.100.23"), ("Wenjuan", "203.0.113.77")):
        with serving() as server:
            code, token, samples = _a_coin_hand(server, name, address)
            text = server.client.get("/metrics", headers=HERE).text
            ready = server.client.get("/readyz", headers=HERE).text
        for secret in (name, address, token, code):
            assert secret not in text and secret not in ready
        assert not re.search(r"\d+\.\d+\.\d+\.\d+", text)  # no address at all
        seen.append(set(samples))
    assert seen[0] == seen[1]


def test_metrics_answer_loopback_and_elsewhere_only_the_token() -> None:
    elsewhere = {"x-forwarded-for": "198.51.100.23"}
    with serving() as server:
        assert server.client.get("/metrics", headers=HERE).status_code == 200
        assert server.client.get("/metrics", headers=elsewhere).status_code == 404
    with serving(metrics_token=TOKEN) as server:
        c = server.client
        assert c.get("/metrics", headers=elsewhere).status_code == 403
        wrong = {**elsewhere, "authorization": "Bearer not-the-token"}
        assert c.get("/metrics", headers=wrong).status_code == 403
        right = {**elsewhere, "authorization": f"Bearer {TOKEN}"}
        answer = c.get("/metrics", headers=right)
        assert answer.status_code == 200
        families = text_string_to_metric_families(answer.text)
        assert any(f.name == "fangcheng_frames" for f in families)
        assert c.get("/metrics", headers=HERE).status_code == 200  # loopback needs none
        # the probes are for anyone (a load balancer), and refuse nobody for a rate
        for _ in range(3 * SESSIONS_PER_MINUTE):
            assert c.get("/healthz", headers=elsewhere).json() == {"status": "ok"}
            assert c.get("/readyz", headers=elsewhere).status_code == 200


def test_tables_are_counted_by_kind() -> None:
    with serving() as server:
        c = server.client
        token = c.post("/api/session", json={"name": "Ann"}, headers=HERE).json()["token"]
        me = {**HERE, "authorization": f"Bearer {token}"}
        assert c.post("/api/practice", json={"bot": "efficient"}, headers=me).status_code == 200
        samples = server.scrape()
    kinds = {
        dict(labels)["kind"]: n
        for (name, labels), n in samples.items()
        if name == "fangcheng_tables"
    }
    assert kinds == {"point": 0, "practice": 1, "coin": 0}
    assert value(samples, "fangcheng_people_seated", process="local") == 1


def test_metrics_address_serves_them_on_a_listener_of_their_own() -> None:
    port = free_port()
    with serving(metrics_address=("127.0.0.1", port)):
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as answer:
            text = answer.read().decode()
        assert any(f.name == "fangcheng_tables" for f in text_string_to_metric_families(text))
        with pytest.raises(urllib.error.HTTPError) as other:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/api/lobby", timeout=10)
        assert other.value.code == 404


def test_serve_takes_the_metrics_settings(capsys: pytest.CaptureFixture[str]) -> None:
    args = build_parser().parse_args(
        ["serve", "--metrics-token", TOKEN, "--metrics-address", "10.0.0.5:9100"]
    )
    assert (args.metrics_token, args.metrics_address) == (TOKEN, "10.0.0.5:9100")
    for wrong in (["--metrics-token", "short"], ["--metrics-address", "10.0.0.5"]):
        assert main(["serve", *wrong]) == 2  # refused before anything starts
        assert wrong[0] in capsys.readouterr().err


def test_readyz_is_503_when_the_database_is_gone(tmp_path: Path) -> None:
    for url in database("postgresql", tmp_path):
        with serving(url) as server:
            c = server.client
            _sign_up(server, "Qiaolian", "198.51.100.23")
            assert c.get("/readyz").json() == {"status": "ok"}
            assert value(server.scrape(), "fangcheng_ledger_journals", kind="signup") == 1
            _pg_admin(f"DROP DATABASE {url.rsplit('/', 1)[1]} WITH (FORCE)")
            gone = c.get("/readyz")
            assert (gone.status_code, gone.json()) == (
                503,
                {"status": "unavailable", "failed": ["database"]},
            )
            assert c.get("/healthz").status_code == 200  # up, but not ready
            server.scrape()  # the metrics are still answered


def test_readyz_is_503_when_redis_is_unreachable(tmp_path: Path) -> None:
    problem = redis_problem()
    if problem:
        pytest.skip(problem)
    redis = RedisServer()
    try:
        db = f"sqlite:///{tmp_path / 'cluster.db'}"
        with serving(db, redis=redis.url, redis_prefix=f"fc-health-{free_port()}:") as server:
            assert server.client.get("/readyz").json() == {"status": "ok"}
            samples = server.scrape()
            process = server.hub.directory.id
            assert value(samples, "fangcheng_tables", kind="coin", process=process) == 0
            assert ("fangcheng_tables", (("kind", "coin"), ("process", process))) in samples
            redis.kill()
            gone = server.client.get("/readyz")
            assert gone.status_code == 503 and gone.json()["failed"][0] == "redis"
    finally:
        redis.kill()


def test_the_alerting_rules_of_the_operations_guide_load_and_name_real_metrics() -> None:
    yaml = pytest.importorskip("yaml")
    text = OPERATIONS.read_text(encoding="utf-8")
    blocks = re.findall(r"```yaml\n(.*?)```", text, re.S)
    rules = [yaml.safe_load(b) for b in blocks if "alert:" in b]
    assert rules, "docs/operations.md has no alerting rules"
    alerts = [r for doc in rules for g in doc["groups"] for r in g["rules"]]
    assert all({"alert", "expr", "labels", "annotations"} <= set(a) for a in alerts)
    with serving() as server:
        names = {name for name, _ in server.scrape()}
    used = {a["alert"]: set(re.findall(r"\bfangcheng_\w+", a["expr"])) for a in alerts}
    assert all(names >= series for series in used.values()), used
    assert sum(bool(series) for series in used.values()) >= len(alerts) - 1  # (`up`'s)


def test_readyz_reads_the_database_once_while_it_hangs(monkeypatch: pytest.MonkeyPatch) -> None:
    """A database that hangs (no refusal, no answer) makes every probe 503 within
    `READY_S`, and the probes share one read: a read a probe would otherwise hold a pool
    thread (which every request shares) until the driver gave up. Once it answers, ready."""
    monkeypatch.setattr(health, "READY_S", 0.2)
    with serving() as server:
        engine = server.hub.store.engine
        connect, hung, reads = engine.connect, threading.Event(), list[int]()

        def hanging() -> Any:
            reads.append(1)
            hung.wait(30)
            return connect()

        monkeypatch.setattr(engine, "connect", hanging)
        for _ in range(4):
            gone = server.client.get("/readyz")
            assert (gone.status_code, gone.json()["failed"]) == (503, ["database"])
        assert len(reads) == 1
        hung.set()
        for _ in range(50):  # (the one read ends once the database answers)
            if server.client.get("/readyz").status_code == 200:
                break
            threading.Event().wait(0.05)
        assert server.client.get("/readyz").json() == {"status": "ok"}
