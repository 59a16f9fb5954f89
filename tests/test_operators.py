"""Operators (RULES §8.8, issue 37) in the platform, on SQLite and PostgreSQL: operator
accounts and their short sessions, kept apart from players'; the append-only audit of
every write; freezing an account (D90: no log-in, no seat, its sessions ended) and coin
adjustments (D91: balanced journals person ⇄ house, idempotent by key, never below zero,
not 积分 unless asked, `fangcheng ledger check` clean and counting them); support
operators refused every write."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import pytest
import sqlalchemy as sa
from alembic import command
from alembic.config import Config
from argon2 import PasswordHasher

import ledgerdb
from fangcheng.cli import main
from fangcheng.platform import (
    OPERATOR_SESSION_S,
    SIGNUP_GRANT,
    Conflict,
    Forbidden,
    Frozen,
    Insufficient,
    InvalidToken,
    LoginFailed,
    Malformed,
    NameTaken,
    Operator,
    Platform,
    Unauthorized,
    UnknownPerson,
    check_ledger,
    schema,
)
from fangcheng.platform.accounts import SESSION_SECONDS
from fangcheng.platform.database import MIGRATIONS
from ledgerdb import FakeClock, invariants, settle, sign_up

db_url, clock, platform = ledgerdb.db_url, ledgerdb.clock, ledgerdb.platform
PASSWORD = "a password"


@pytest.fixture
def admin(platform: Platform) -> Operator:
    return platform.create_operator("boss", "operator password", "admin")


@pytest.fixture
def support(platform: Platform) -> Operator:
    return platform.create_operator("helper", "operator password", "support")


def journals(platform: Platform, kind: str) -> list[tuple[int, str, str]]:
    with platform.engine.connect() as conn:
        return [
            tuple(r)
            for r in conn.execute(
                sa.select(schema.journals.c.id, schema.journals.c.key, schema.journals.c.memo)
                .where(schema.journals.c.kind == kind)
                .order_by(schema.journals.c.id)
            )
        ]


def lines(platform: Platform, journal: int) -> list[tuple[int, int]]:
    with platform.engine.connect() as conn:
        return sorted(
            conn.execute(
                sa.select(schema.journal_lines.c.account_id, schema.journal_lines.c.amount).where(
                    schema.journal_lines.c.journal_id == journal
                )
            ).all()
        )


# --- D91: coin adjustments -------------------------------------------------------------


def test_d91_an_adjustment_is_a_balanced_journal_between_the_person_and_the_house(
    platform: Platform, admin: Operator
) -> None:
    person = sign_up(platform, "alice")
    given = platform.adjust(admin, person, 300, "lost coins in outage #12", "k1", address="::1")
    assert (given.balance, given.amount, given.applied, given.counts_in_score) == (
        2_300, 300, True, False,
    )  # fmt: skip
    taken = platform.adjust(admin, person, -500, "double relief", "k2")
    assert taken.balance == 1_800
    assert [(k, m) for _, k, m in journals(platform, "adjustment")] == [
        ("adjust:k1", "lost coins in outage #12"),
        ("adjust:k2", "double relief"),
    ]
    for adjustment, amount in ((given, 300), (taken, -500)):
        booked = lines(platform, adjustment.journal_id)
        assert len(booked) == 2 and sum(n for _, n in booked) == 0
        assert (person, amount) in booked
        assert next(a for a, _ in booked if a != person) in platform.houses
    balances = invariants(platform)
    assert balances[person] == 1_800
    assert platform.house_balance() == 200
    rows = platform.audit_rows(target=f"person:{person}")
    assert [r.action for r in rows] == ["adjust", "adjust"]
    first = rows[1]
    assert (first.operator, first.address) == ("boss", "::1")
    assert first.reason == "lost coins in outage #12"
    assert first.before == {"balance": 2_000, "points": 0}
    assert first.after == {
        "balance": 2_300, "points": 0, "journal": given.journal_id, "amount": 300,
        "key": "k1", "counts_in_score": False,
    }  # fmt: skip


def test_d91_the_same_key_again_returns_the_first_adjustment_and_books_nothing(
    platform: Platform, admin: Operator
) -> None:
    person = sign_up(platform, "alice")
    first = platform.adjust(admin, person, 250, "refund", "once")
    again = platform.adjust(admin, person, 250, "refund, retried", "once")
    assert not again.applied
    assert (again.journal_id, again.balance) == (first.journal_id, first.balance) == (
        first.journal_id, 2_250,
    )  # fmt: skip
    with pytest.raises(Conflict, match="'once' was used by another adjustment"):
        platform.adjust(admin, person, 251, "refund", "once")
    with pytest.raises(Conflict):
        platform.adjust(admin, person, 250, "refund", "once", counts_in_score=True)
    assert len(journals(platform, "adjustment")) == 1
    assert len(platform.audit_rows(target=f"person:{person}")) == 1
    assert invariants(platform)[person] == 2_250


def test_d91_one_key_sent_at_once_from_many_places_books_once(
    platform: Platform, admin: Operator
) -> None:
    person = sign_up(platform, "alice")
    with ThreadPoolExecutor(6) as pool:
        done = list(pool.map(lambda _: platform.adjust(admin, person, 70, "r", "k"), range(6)))
    assert sum(a.applied for a in done) == 1
    assert {(a.journal_id, a.balance) for a in done} == {(done[0].journal_id, 2_070)}
    assert invariants(platform)[person] == 2_070


def test_d91_an_adjustment_that_would_leave_a_balance_negative_is_refused(
    platform: Platform, admin: Operator
) -> None:
    person = sign_up(platform, "alice")
    with pytest.raises(Insufficient, match="has 2000 coins: taking 2001 would leave -1"):
        platform.adjust(admin, person, -2_001, "chargeback", "k")
    assert journals(platform, "adjustment") == []
    assert platform.audit_rows(target=f"person:{person}") == []
    assert platform.balance(person) == 2_000
    assert platform.adjust(admin, person, -2_000, "chargeback", "k").balance == 0
    invariants(platform)


@pytest.mark.parametrize(
    ("amount", "reason", "key", "problem"),
    [
        (0, "r", "k", "not 0"),
        (1.5, "r", "k", "whole number"),
        (True, "r", "k", "whole number"),
        (10**9 + 1, "r", "k", "at most"),
        (5, " ", "k", "a reason is required"),
        (5, "x" * 201, "k", "at most 200"),
        (5, "r", "", "a key is"),
        (5, "r", "k" * 101, "a key is"),
    ],
)
def test_d91_an_adjustment_as_given_that_cannot_be_is_named(
    platform: Platform, admin: Operator, amount: object, reason: str, key: str, problem: str
) -> None:
    person = sign_up(platform, "alice")
    with pytest.raises(Malformed, match=problem):
        platform.adjust(admin, person, amount, reason, key)  # type: ignore[arg-type]
    with pytest.raises(UnknownPerson):
        platform.adjust(admin, 999_999, 5, "r", "k")
    with pytest.raises(UnknownPerson):  # the house is no person
        platform.adjust(admin, platform.houses[0], 5, "r", "k")
    assert journals(platform, "adjustment") == []


def test_d91_an_adjustment_counts_in_points_only_when_asked(
    platform: Platform, admin: Operator, db_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    people = [sign_up(platform, f"p{i}") for i in range(4)]
    settle(platform, "h1", "free", people, seed=3, bot="efficient")
    points = [platform.profile(p).points for p in people]
    platform.adjust(admin, people[0], 400, "compensation", "a")
    assert platform.profile(people[0]).points == points[0]
    platform.adjust(admin, people[1], -50, "a wrongly paid win", "b", counts_in_score=True)
    assert platform.profile(people[1]).points == points[1] - 50
    assert check_ledger(platform.engine).problems == []
    assert main(["ledger", "check", "--db", db_url]) == 0
    out = capsys.readouterr().out
    assert "ledger clean:" in out and "adjustments: 2, +350 coins to people (net)" in out
    # 积分 that forgot the counted adjustment is found wrong
    with platform.engine.begin() as conn:
        conn.execute(
            sa.update(schema.accounts)
            .where(schema.accounts.c.id == people[1])
            .values(points=schema.accounts.c.points + 50)
        )
    assert main(["ledger", "check", "--db", db_url]) == 1
    assert f"account {people[1]} (p1): 积分 {points[1]}, " in capsys.readouterr().err


def test_d91_ledger_check_names_an_adjustment_journal_without_its_row(
    platform: Platform, admin: Operator
) -> None:
    person = sign_up(platform, "alice")
    platform.adjust(admin, person, 10, "r", "k")
    with platform.engine.begin() as conn:
        if conn.dialect.name == "postgresql":
            conn.exec_driver_sql("ALTER TABLE adjustments DISABLE TRIGGER USER")
        else:
            conn.exec_driver_sql("DROP TRIGGER tr_adjustments_no_delete")
        conn.execute(schema.adjustments.delete())
    assert check_ledger(platform.engine).problems == [
        "journal 2 (adjust:k) is an adjustment's but no adjustment is stored"
    ]


# --- D90: frozen accounts ----------------------------------------------------------------


def test_d90_a_frozen_account_cannot_log_in_or_sit_and_its_sessions_end(
    platform: Platform, admin: Operator
) -> None:
    alice = platform.sign_up("alice", PASSWORD)
    other = platform.log_in("alice", PASSWORD)
    assert platform.sit(alice.person.id, "t1") == SIGNUP_GRANT
    platform.stand(alice.person.id, "t1")
    assert platform.freeze(admin, alice.person.id, "colluding at table ABCD", "10.0.0.9").name == (
        "alice"
    )
    for token in (alice.token, other.token):
        with pytest.raises(InvalidToken):
            platform.authenticate(token)
    with pytest.raises(Frozen, match="the account is frozen: colluding at table ABCD") as refused:
        platform.log_in("alice", PASSWORD)
    assert refused.value.code == "frozen" and refused.value.reason == "colluding at table ABCD"
    with pytest.raises(LoginFailed):  # the wrong password learns nothing of the freeze
        platform.log_in("alice", "not the password")
    with pytest.raises(Frozen):  # a quick match seats through `sit`: no match either
        platform.sit(alice.person.id, "t2")
    assert platform.seated_at(alice.person.id) is None
    with pytest.raises(Conflict, match="frozen already"):
        platform.freeze(admin, alice.person.id, "again", None)
    (row,) = platform.audit_rows(target=f"person:{alice.person.id}")
    assert (row.action, row.address) == ("freeze", "10.0.0.9")
    assert row.reason == "colluding at table ABCD"
    assert row.before == {"frozen": None}
    assert row.after == {"frozen": "colluding at table ABCD", "sessions_ended": 2}
    assert platform.find_people("ali")[0].frozen
    frozen = platform.admin_profile(alice.person.id)["frozen"]
    assert frozen["reason"] == "colluding at table ABCD" and frozen["by"] == "boss"


def test_d90_a_session_made_as_the_account_froze_is_refused(
    platform: Platform, admin: Operator
) -> None:
    alice = platform.sign_up("alice", PASSWORD)
    with platform.engine.begin() as conn:  # frozen behind the sessions' back
        conn.execute(sa.update(schema.people).values(frozen_reason="abuse"))
    with pytest.raises(Frozen, match="abuse"):
        platform.authenticate(alice.token)


def test_d90_unfreezing_restores_log_in_and_seats(platform: Platform, admin: Operator) -> None:
    person = sign_up(platform, "alice")
    platform.freeze(admin, person, "under review")
    with pytest.raises(Conflict, match="not frozen"):
        platform.unfreeze(admin, sign_up(platform, "bob"), "x")
    assert platform.unfreeze(admin, person, "cleared", "10.0.0.9").id == person
    session = platform.log_in("alice", PASSWORD)
    assert platform.authenticate(session.token).id == person
    assert platform.sit(person, "t1") == SIGNUP_GRANT
    newest = platform.audit_rows(target=f"person:{person}")[0]
    assert (newest.action, newest.after, newest.reason) == ("unfreeze", {"frozen": None}, "cleared")
    assert newest.before["frozen"] == "under review"
    assert platform.admin_profile(person)["frozen"] is None


# --- roles, sessions, the audit ----------------------------------------------------------


def test_a_support_operator_is_refused_every_write(
    platform: Platform, admin: Operator, support: Operator
) -> None:
    person = sign_up(platform, "alice")
    assert admin.may_write and not support.may_write
    platform.freeze(admin, person, "review")
    writes = [
        lambda: platform.freeze(support, sign_up(platform, "bob"), "r"),
        lambda: platform.unfreeze(support, person, "r"),
        lambda: platform.adjust(support, person, 5, "r", "k"),
    ]
    for write in writes:
        with pytest.raises(Forbidden, match="helper is support: it only reads") as refused:
            write()
        assert refused.value.code == "forbidden"
    assert platform.admin_profile(person)["frozen"]["reason"] == "review"
    assert journals(platform, "adjustment") == []
    assert [r.action for r in platform.audit_rows()] == [
        "freeze", "operator_create", "operator_create",
    ]  # fmt: skip


def test_the_audit_and_the_adjustments_are_append_only(platform: Platform, admin: Operator) -> None:
    platform.adjust(admin, sign_up(platform, "alice"), 5, "r", "k")
    for sql in (
        "UPDATE audit SET reason = 'nothing happened'",
        "DELETE FROM audit",
        "UPDATE adjustments SET amount = 1",
        "DELETE FROM adjustments",
    ):
        with pytest.raises(sa.exc.DBAPIError, match="append-only"), platform.engine.begin() as c:
            c.exec_driver_sql(sql)
    if platform.engine.dialect.name == "postgresql":
        with pytest.raises(sa.exc.DBAPIError, match="append-only"), platform.engine.begin() as c:
            c.exec_driver_sql("TRUNCATE audit")
    assert len(platform.audit_rows()) == 2
    invariants(platform)


def test_operator_sessions_expire_sooner_than_players(
    platform: Platform, admin: Operator, clock: FakeClock
) -> None:
    assert OPERATOR_SESSION_S < SESSION_SECONDS
    session = platform.operator_log_in("BOSS", "operator password", "10.0.0.9")
    assert session.operator == admin and session.expires == clock.now + OPERATOR_SESSION_S
    clock.advance(OPERATOR_SESSION_S - 1)
    assert platform.operator(session.token) == admin
    clock.advance(1)
    with pytest.raises(Unauthorized, match="expired") as refused:
        platform.operator(session.token)
    assert refused.value.code == "unauthorized"
    with pytest.raises(Unauthorized, match="unknown"):  # and it is gone
        platform.operator(session.token)
    again = platform.operator_log_in("boss", "operator password")
    platform.operator_log_out(again.token)
    with pytest.raises(Unauthorized):
        platform.operator(again.token)
    log_ins = [r for r in platform.audit_rows() if r.action == "log_in"]
    assert [r.address for r in log_ins] == [None, "10.0.0.9"]


def test_operator_tokens_are_not_player_tokens_nor_the_other_way(
    platform: Platform, admin: Operator
) -> None:
    player = platform.sign_up("boss", PASSWORD)  # a player may have an operator's name
    operator = platform.operator_log_in("boss", "operator password")
    with pytest.raises(InvalidToken):
        platform.authenticate(operator.token)
    with pytest.raises(Unauthorized):
        platform.operator(player.token)
    for bad in ("", "x" * 201, None):
        with pytest.raises(Unauthorized):
            platform.operator(bad)  # type: ignore[arg-type]


def test_operator_log_in_and_creation_refusals(platform: Platform, admin: Operator) -> None:
    for name, password in (("boss", "wrong password"), ("nobody", "operator password")):
        with pytest.raises(Unauthorized, match="wrong operator name or password"):
            platform.operator_log_in(name, password)
    with pytest.raises(NameTaken):
        platform.create_operator("BOSS", "operator password", "support")
    with pytest.raises(Malformed, match="role 'root': one of support, admin"):
        platform.create_operator("root", "operator password", "root")
    assert platform.operator_named("Boss") == admin
    with pytest.raises(Unauthorized, match="no operator is named 'nobody'"):
        platform.operator_named("nobody")
    with platform.engine.begin() as conn:
        conn.execute(sa.update(schema.operators).values(disabled=True))
    with pytest.raises(Unauthorized):
        platform.operator_log_in("boss", "operator password")


def test_record_audit_and_its_pages(platform: Platform, admin: Operator) -> None:
    for i in range(5):
        platform.record_audit(
            admin, "table_close", f"table:T{i}", "::1", {"hand": i}, {"closed": True}, "cheat"
        )
    page = platform.audit_rows(limit=2)
    assert [r.target for r in page] == ["table:T4", "table:T3"]
    older = platform.audit_rows(limit=2, before_id=page[-1].id)
    assert [r.target for r in older] == ["table:T2", "table:T1"]
    (one,) = platform.audit_rows(target="table:T0")
    assert (one.before, one.after, one.reason, one.operator) == (
        {"hand": 0}, {"closed": True}, "cheat", "boss",
    )  # fmt: skip
    with pytest.raises(Malformed):
        platform.audit_rows(limit=0)
    with pytest.raises(Malformed):
        platform.record_audit(admin, "", "table:T0", None, None, None, "")
    with pytest.raises(Malformed, match="JSON"):
        platform.record_audit(admin, "table_close", "table:T0", None, {"x": object()}, None, "")
    assert len(platform.audit_rows()) == 6  # (and the operator's creation)


# --- reads: search and profile -------------------------------------------------------------


def test_find_people_by_name_prefix_or_id(platform: Platform) -> None:
    ids = {name: sign_up(platform, name) for name in ("Alice", "alfred", "bob", "a_b", "axb")}
    assert [p.name for p in platform.find_people("AL")] == ["alfred", "Alice"]
    assert [p.id for p in platform.find_people(f"#{ids['bob']}")] == [ids["bob"]]
    assert [p.name for p in platform.find_people(str(ids["bob"]))] == ["bob"]
    assert [p.name for p in platform.find_people("a_")] == ["a_b"]  # `_` is no wildcard
    bob = platform.find_people("bob")[0]
    assert (bob.balance, bob.points, bob.frozen) == (2_000, 0, False)
    assert platform.find_people("") == [] and platform.find_people("zz") == []


def test_an_operators_profile_of_a_person(platform: Platform, admin: Operator) -> None:
    people = [sign_up(platform, f"p{i}") for i in range(4)]
    settled = settle(platform, "h1", "free", people, seed=3, bot="efficient")
    platform.log_in("p0", PASSWORD, "203.0.113.7")
    platform.log_in("p0", PASSWORD, "203.0.113.7")
    platform.adjust(admin, people[0], 50, "outage", "k")
    profile = platform.admin_profile(people[0])
    assert (profile["name"], profile["hands"], profile["frozen"]) == ("p0", 1, None)
    assert profile["balance"] == 2_050 + settled.total[0]
    (hand,) = profile["recent"]
    assert hand["hand_id"] == "h1" and hand["total"] == settled.total[0]
    assert sum(line["amount"] for line in hand["lines"]) == 0
    assert {line["name"] for line in hand["lines"]} >= {"p0"}
    sessions = profile["sessions"]  # sign-up's and log-ins'
    assert [s["address"] for s in sessions] == [None, "203.0.113.7", "203.0.113.7"]
    assert all(set(s) == {"created", "expires", "address"} for s in sessions)
    assert profile["addresses"] == ["203.0.113.7"]
    home = platform.sign_up("home", PASSWORD, "198.51.100.1").person.id
    platform.log_in("home", PASSWORD, "203.0.113.9")
    assert platform.admin_profile(home)["addresses"] == ["198.51.100.1", "203.0.113.9"]
    assert [(h["kind"], h["amount"]) for h in profile["history"]] == [
        ("signup", 2_000), ("adjustment", 50),
    ]  # fmt: skip
    (adjustment,) = profile["adjustments"]
    assert (adjustment["operator"], adjustment["key"], adjustment["balance_after"]) == (
        "boss", "k", profile["balance"],
    )  # fmt: skip
    with pytest.raises(UnknownPerson):
        platform.admin_profile(999_999)


# --- the migration -------------------------------------------------------------------------


def _migrate_to(platform: Platform, revision: str, down: bool) -> None:
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    with platform.engine.begin() as conn:
        config.attributes["connection"] = conn
        (command.downgrade if down else command.upgrade)(config, revision)


def test_a_database_with_its_ledger_upgrades_to_operators_and_adjusts(
    platform: Platform,
) -> None:
    """0005 on a 0004 database that holds journals, their lines and hands (SQLite widens
    the journals' CHECK in place: its foreign keys, triggers and rows stay sound); and no
    way back below it once adjustments are booked."""
    people = [sign_up(platform, f"p{i}") for i in range(4)]
    settle(platform, "h1", "free", people, seed=1)
    platform.freeze(platform.create_operator("old", "operator password", "admin"), people[3], "r")
    _migrate_to(platform, "0004", down=True)
    _migrate_to(platform, "head", down=False)
    with platform.engine.connect() as conn:
        if conn.dialect.name == "sqlite":
            assert conn.exec_driver_sql("PRAGMA integrity_check").scalar() == "ok"
            assert conn.exec_driver_sql("PRAGMA foreign_key_check").all() == []
    boss = platform.create_operator("boss", "operator password", "admin")
    assert platform.adjust(boss, people[0], 7, "r", "k").applied
    assert check_ledger(platform.engine).problems == []
    with pytest.raises(sa.exc.DBAPIError, match="append-only"), platform.engine.begin() as c:
        c.exec_driver_sql("DELETE FROM journals")
    with pytest.raises(sa.exc.IntegrityError), platform.engine.begin() as c:
        c.exec_driver_sql("INSERT INTO journals (key, kind, created_at) VALUES ('x', 'gift', 0)")
    with pytest.raises(RuntimeError, match="holds adjustments: it cannot go below 0005"):
        _migrate_to(platform, "0004", down=True)
    assert platform.adjust(boss, people[0], 7, "r", "k2").balance == platform.balance(people[0])


def test_a_log_in_rehashes_a_password_hashed_with_older_parameters(
    platform: Platform, admin: Operator, clock: FakeClock
) -> None:
    person = sign_up(platform, "alice")
    stronger = Platform(platform.engine, clock=clock, hasher=PasswordHasher(2, 16, 1))
    stronger.operator_log_in("boss", "operator password")
    stronger.log_in("alice", PASSWORD)
    with platform.engine.connect() as conn:
        hashes = [
            conn.execute(sa.select(table.c.password_hash).where(table.c.id == who)).scalar_one()
            for table, who in ((schema.operators, admin.id), (schema.people, person))
        ]
    assert all(not stronger.hasher.check_needs_rehash(h) for h in hashes)
    assert platform.operator_log_in("boss", "operator password").operator == admin
