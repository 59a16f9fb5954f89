"""Accounts and sessions (issue 18, RULES.md §8.5, D86): sign-up with its grant, log-in
with argon2id, hashed session tokens that expire, log-out everywhere, daily relief; bad
input is a clear refusal and moves nothing. On SQLite and PostgreSQL."""

from __future__ import annotations

import pytest
import sqlalchemy as sa

import ledgerdb
from fangcheng.platform import (
    RELIEF,
    SIGNUP_GRANT,
    BadName,
    BadPassword,
    InvalidToken,
    LoginFailed,
    NameTaken,
    ReliefRefused,
    UnknownPerson,
    schema,
)
from fangcheng.platform.accounts import token_hash
from ledgerdb import invariants, settle, sign_up

# the fixtures every test here takes
db_url, clock, platform = ledgerdb.db_url, ledgerdb.clock, ledgerdb.platform
DAY = 24 * 3600


def sessions(platform) -> list[str]:
    with platform.engine.connect() as conn:
        return conn.execute(sa.select(schema.login_sessions.c.token_hash)).scalars().all()


def test_d86_sign_up_grants_2000_coins_from_issuance(platform):
    session = platform.sign_up("小明", "correct horse")
    assert session.person.name == "小明"
    assert platform.authenticate(session.token) == session.person
    balances = invariants(platform)
    assert balances[session.person.id] == SIGNUP_GRANT == 2_000
    assert balances[platform.issuance] == -2_000
    profile = platform.profile(session.person.id)
    assert (profile.balance, profile.points, profile.title, profile.hands) == (2_000, 0, "木骰", 0)


def test_passwords_are_argon2id_and_tokens_are_stored_hashed(platform):
    session = platform.sign_up("alice", "correct horse")
    with platform.engine.connect() as conn:
        stored = conn.execute(sa.select(schema.people.c.password_hash)).scalar_one()
    assert stored.startswith("$argon2id$") and "correct horse" not in stored
    assert sessions(platform) == [token_hash(session.token)]


def test_names_are_one_account_per_spelling_and_must_be_plain(platform):
    platform.sign_up("Alice", "correct horse")
    before = invariants(platform)
    for name in ("alice", "ALICE", "Ａｌｉｃｅ"):  # case and full-width forms are one name
        with pytest.raises(NameTaken, match="is taken"):
            platform.sign_up(name, "another password")
    for name, problem in (
        ("", "1 to 20"),
        ("a" * 21, "1 to 20"),
        ("a b", "no spaces"),
        ("a\x00", "control"),
    ):
        with pytest.raises(BadName, match=problem):
            platform.sign_up(name, "correct horse")
    for password in ("short", "x" * 1025, None):
        with pytest.raises(BadPassword, match="8 to 1024"):
            platform.sign_up("bob", password)  # type: ignore[arg-type]
    assert invariants(platform) == before


def test_a_wrong_password_or_unknown_name_is_one_refusal_and_moves_nothing(platform):
    platform.sign_up("alice", "correct horse")
    before, tokens = invariants(platform), sessions(platform)
    for name, password in (("alice", "wrong horse"), ("nobody", "correct horse"), ("alice", None)):
        with pytest.raises(LoginFailed, match=r"^wrong name or password$"):
            platform.log_in(name, password)  # type: ignore[arg-type]
    assert invariants(platform) == before and sessions(platform) == tokens
    session = platform.log_in(" ALICE ", "correct horse")
    assert session.person.name == "alice"


def test_forged_logged_out_and_expired_tokens_are_refused(platform, clock):
    first = platform.sign_up("alice", "correct horse")
    second = platform.log_in("alice", "correct horse")
    altered = first.token[:-1] + ("B" if first.token.endswith("A") else "A")  # one char off
    for forged in ("", "x" * 300, altered, 42):
        with pytest.raises(InvalidToken):
            platform.authenticate(forged)  # type: ignore[arg-type]
    platform.log_out(first.token)
    with pytest.raises(InvalidToken, match="logged-out"):
        platform.authenticate(first.token)
    assert platform.authenticate(second.token).name == "alice"
    clock.advance(platform.session_seconds)
    with pytest.raises(InvalidToken, match="expired"):
        platform.authenticate(second.token)
    assert sessions(platform) == []  # the expired session is gone too


def test_log_out_everywhere_ends_every_session_of_that_person_only(platform):
    tokens = [platform.sign_up("alice", "correct horse").token]
    tokens += [platform.log_in("alice", "correct horse").token for _ in range(2)]
    bob = platform.sign_up("bob", "correct horse")
    alice = platform.authenticate(tokens[0])
    assert platform.log_out_everywhere(alice.id) == 3
    for token in tokens:
        with pytest.raises(InvalidToken):
            platform.authenticate(token)
    assert platform.authenticate(bob.token).name == "bob"


def test_d86_relief_below_100_once_per_utc_day(platform, clock):
    people = [sign_up(platform, f"p{i}") for i in range(4)]
    with pytest.raises(ReliefRefused, match="below 100; the balance is 2000"):
        platform.claim_relief(people[1])
    settle(platform, "h1", "anti_cheat", people, seed=3, escape_at=0)  # seat 0 keeps 2 coins
    assert platform.balance(people[0]) == 2
    assert platform.claim_relief(people[0]) == 2 + RELIEF
    before = invariants(platform)
    with pytest.raises(ReliefRefused, match="below 100; the balance is 502"):
        platform.claim_relief(people[0])
    assert invariants(platform) == before
    # below 100 again later that day (two more escapes at a stake of 1): refused; the next
    # UTC day: granted
    clock.advance(60)
    for hand in ("h2", "h3"):
        settle(platform, hand, "anti_cheat", people, seed=3, escape_at=0)
    low = platform.balance(people[0])
    assert low == 1
    with pytest.raises(ReliefRefused, match="already claimed on"):
        platform.claim_relief(people[0])
    clock.advance(DAY)
    assert platform.claim_relief(people[0]) == low + RELIEF
    with pytest.raises(UnknownPerson):
        platform.claim_relief(10_000)
    invariants(platform)
