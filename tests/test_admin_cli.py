"""The operator's commands (issue 37): ``fangcheng admin create|disable|freeze|unfreeze|adjust|
audit`` and ``fangcheng db upgrade|backup|restore``, through `fangcheng.cli.main` on a
SQLite file (and the PostgreSQL backup recipe of docs/operations.md, run as written)."""

from __future__ import annotations

import io
import shutil
import sqlite3
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
import sqlalchemy as sa
from alembic import command
from alembic.config import Config
from alembic.script import ScriptDirectory

import ledgerdb
from fangcheng.cli import main
from fangcheng.platform import Platform, check_ledger, connect, schema
from fangcheng.platform.database import MIGRATIONS
from fangcheng.platform.errors import Unauthorized
from ledgerdb import FAST_HASHER, invariants, settle, sign_up


@pytest.fixture
def url(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'live.db'}"


@pytest.fixture
def platform(url: str) -> Iterator[Platform]:
    engine = connect(url)
    try:
        yield Platform(engine, hasher=FAST_HASHER)
    finally:
        engine.dispose()


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    try:
        code = main(argv)
    except SystemExit as exc:  # argparse's refusals
        code = int(exc.code or 0)
    out, err = capsys.readouterr()
    return code, out, err


def create(url: str, name: str, role: str, capsys: pytest.CaptureFixture[str]) -> str:
    stdin = io.StringIO("operator password\n")
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr("sys.stdin", stdin)
        code, out, err = run(
            ["admin", "create", "--name", name, "--role", role, "--password-stdin", "--db", url],
            capsys,
        )
    assert code == 0, err
    return out


# --- fangcheng admin ---------------------------------------------------------------------


def test_admin_create_asks_the_password_twice(
    url: str, platform: Platform, capsys: pytest.CaptureFixture[str], monkeypatch
) -> None:
    answers = iter(["operator password", "operator password"])
    monkeypatch.setattr("getpass.getpass", lambda prompt: next(answers))
    code, out, _ = run(["admin", "create", "--name", "root", "--db", url], capsys)
    assert code == 0 and out == "operator root created (support, id 1)\n"
    assert platform.operator_log_in("root", "operator password").operator.role == "support"
    answers = iter(["operator password", "another password"])
    code, _, err = run(["admin", "create", "--name", "root2", "--db", url], capsys)
    assert code == 2 and "the passwords differ" in err
    answers = iter(["short", "short"])
    code, _, err = run(["admin", "create", "--name", "root2", "--db", url], capsys)
    assert code == 2 and "a password has 8 to 1024 characters" in err
    assert "an operator is named 'ROOT'" in create_refused(url, "ROOT", capsys)


def create_refused(url: str, name: str, capsys: pytest.CaptureFixture[str]) -> str:
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr("sys.stdin", io.StringIO("operator password\n"))
        code, _, err = run(
            ["admin", "create", "--name", name, "--password-stdin", "--db", url], capsys
        )
    assert code == 2
    return err


def test_d90_admin_freeze_and_unfreeze(
    url: str, platform: Platform, capsys: pytest.CaptureFixture[str]
) -> None:
    create(url, "root", "admin", capsys)
    person = sign_up(platform, "alice")
    code, out, _ = run(
        ["admin", "freeze", "--operator", "root", "alice", "--reason", "bot farm", "--db", url],
        capsys,
    )
    assert code == 0 and out == f"alice (#{person}) frozen by root: bot farm\n"
    assert platform.find_people("alice")[0].frozen
    code, _, err = run(
        ["admin", "freeze", "--operator", "root", "alice", "--reason", "x", "--db", url], capsys
    )
    assert code == 2 and "is frozen already: bot farm" in err
    code, out, _ = run(
        ["admin", "unfreeze", "--operator", "root", f"#{person}", "--reason", "ok", "--db", url],
        capsys,
    )
    assert code == 0 and out == f"alice (#{person}) unfrozen by root: ok\n"
    assert not platform.find_people("alice")[0].frozen
    (last,) = platform.audit_rows(limit=1)
    assert (last.action, last.address, last.reason) == ("unfreeze", "cli", "ok")


def test_admin_commands_name_what_they_refuse(
    url: str, platform: Platform, capsys: pytest.CaptureFixture[str]
) -> None:
    create(url, "helper", "support", capsys)
    sign_up(platform, "alice")
    for argv, problem in (
        (["freeze", "--operator", "helper", "alice", "--reason", "r"], "it only reads"),
        (["freeze", "--operator", "nobody", "alice", "--reason", "r"], "no operator is named"),
        (["freeze", "--operator", "helper", "bob", "--reason", "r"], "no account is named 'bob'"),
        (["unfreeze", "--operator", "helper", "#999", "--reason", "r"], "no account #999"),
        (["adjust", "--operator", "helper", "alice", "5", "--reason", "r", "--key", "k"], "reads"),
        (["audit", "--limit", "0"], "limit: 1 to 1000"),
    ):
        code, out, err = run(["admin", *argv, "--db", url], capsys)
        assert code == 2 and problem in err and out == "", argv
    assert [r.action for r in platform.audit_rows()] == ["operator_create"]


def test_d91_admin_adjust_is_idempotent_by_key_and_audited(
    url: str, platform: Platform, capsys: pytest.CaptureFixture[str]
) -> None:
    create(url, "root", "admin", capsys)
    person = sign_up(platform, "alice")
    adjust = ["admin", "adjust", "--operator", "root", "alice", "--db", url]
    code, out, _ = run([*adjust, "-300", "--reason", "refund", "--key", "t-1"], capsys)
    assert code == 0 and out.startswith(f"adjusted: -300 coins to #{person} (journal ")
    assert out.endswith("; balance 1700\n")
    code, out, _ = run([*adjust, "-300", "--reason", "refund", "--key", "t-1"], capsys)
    assert code == 0 and out.startswith("already adjusted under this key: -300")
    code, _, err = run([*adjust, "-1701", "--reason", "refund", "--key", "t-2"], capsys)
    assert code == 2 and "taking 1701 would leave -1" in err
    code, out, _ = run(
        [*adjust, "25", "--reason", "prize", "--key", "t-3", "--counts-in-score"], capsys
    )
    assert code == 0 and platform.profile(person).points == 25
    assert invariants(platform)[person] == 1_725
    code, out, _ = run(["ledger", "check", "--db", url], capsys)
    assert code == 0 and "adjustments: 2, -275 coins to people (net)" in out
    code, out, _ = run(["admin", "audit", "--limit", "2", "--db", url], capsys)
    newest, older = out.splitlines()
    assert " root  adjust  person:" in newest and "from cli — prize" in newest
    assert '"counts_in_score": true' in newest and '"key": "t-1"' in older
    code, out, _ = run(["admin", "audit", "--target", "operator:1", "--db", url], capsys)
    assert code == 0 and len(out.splitlines()) == 1 and "operator_create" in out


# --- fangcheng db ------------------------------------------------------------------------


def revision(url: str) -> str | None:
    with sa.create_engine(url).connect() as conn:
        return conn.execute(sa.text("SELECT version_num FROM alembic_version")).scalar()


def test_db_upgrade_migrates_to_the_newest_schema_once(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    head = ScriptDirectory.from_config(config).get_current_head()
    url = f"sqlite:///{tmp_path / 'old.db'}"
    engine = connect(url)
    with engine.begin() as conn:  # at 0004, as a database made before operators were
        config.attributes["connection"] = conn
        command.downgrade(config, "0004")
    engine.dispose()
    assert revision(url) == "0004"
    code, out, _ = run(["db", "upgrade", "--db", url], capsys)
    assert code == 0 and out == f"{url}: upgraded from 0004 to {head}\n"
    code, out, _ = run(["db", "upgrade", "--db", url], capsys)
    assert code == 0 and out == f"{url}: at the newest schema, {head}\n"
    fresh = f"sqlite:///{tmp_path / 'new' / 'fresh.db'}"
    code, out, _ = run(["db", "upgrade", "--db", fresh], capsys)
    assert code == 0 and out == f"{fresh}: upgraded from nothing to {head}\n"
    code, _, err = run(["db", "upgrade", "--db", "nonsense://x"], capsys)
    assert code == 2 and "cannot open the database nonsense://x" in err


def test_db_upgrade_hides_a_password_in_the_url(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(
        ["db", "upgrade", "--db", "postgresql://u:secret@127.0.0.1:1/none?connect_timeout=2"],
        capsys,
    )
    assert code == 2 and "secret" not in err and "***" in err


def populated(platform: Platform) -> list[int]:
    people = [sign_up(platform, f"p{i}") for i in range(4)]
    settle(platform, "h1", "free", people, seed=2, bot="efficient")
    admin = platform.create_operator("root", "operator password", "admin")
    platform.adjust(admin, people[0], 40, "refund", "k")
    return people


def test_db_backup_and_restore_a_sqlite_database(
    url: str, platform: Platform, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    people = populated(platform)
    backup = tmp_path / "backup.db"
    code, out, _ = run(["db", "backup", str(backup), "--db", url], capsys)
    assert code == 0 and out.startswith(f"backed up {tmp_path / 'live.db'} to {backup} (")
    code, _, err = run(["db", "backup", str(backup), "--db", url], capsys)
    assert code == 2 and "exists: name a new file" in err
    before = invariants(platform)
    platform.adjust(platform.operator_named("root"), people[1], 99, "after the backup", "k2")
    code, _, err = run(["db", "restore", str(backup), "--db", url], capsys)
    assert code == 2 and "exists: --replace overwrites it" in err
    code, out, _ = run(["db", "restore", str(backup), "--replace", "--db", url], capsys)
    assert code == 0 and "ledger clean: 37 accounts, 6 journals, 1 hands" in out
    assert invariants(platform) == before  # the adjustment after the backup is gone
    elsewhere = f"sqlite:///{tmp_path / 'elsewhere' / 'new.db'}"
    code, out, _ = run(["db", "restore", str(backup), "--db", elsewhere], capsys)
    assert code == 0 and check_ledger(connect(elsewhere)).problems == []


def test_db_restore_refuses_a_backup_whose_ledger_is_wrong(
    url: str, platform: Platform, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    people = populated(platform)
    backup = tmp_path / "backup.db"
    assert run(["db", "backup", str(backup), "--db", url], capsys)[0] == 0
    with sqlite3.connect(backup) as db:  # a balance edited in the backup
        db.execute("UPDATE accounts SET balance = balance + 5 WHERE id = ?", (people[2],))
    code, _, err = run(["db", "restore", str(backup), "--replace", "--db", url], capsys)
    assert code == 1
    assert f"{backup} is not restored; ledger check: 2 problem(s):" in err
    assert f"account {people[2]} (p2): balance" in err
    assert invariants(platform)[people[2]] != 0  # the live database untouched
    (tmp_path / "junk.db").write_bytes(b"not a database at all, no, not one")
    code, _, err = run(["db", "restore", str(tmp_path / "junk.db"), "--db", url], capsys)
    assert code == 2 and "is not a sound backup" in err
    code, _, err = run(["db", "restore", str(tmp_path / "none.db"), "--db", url], capsys)
    assert code == 2 and "no backup at" in err


def test_db_backup_and_restore_point_postgresql_at_the_recipe(
    capsys: pytest.CaptureFixture[str],
) -> None:
    for verb in ("backup", "restore"):
        code, _, err = run(["db", verb, "x.db", "--db", "postgresql://h/db"], capsys)
        assert code == 2 and "pg_dump" in err and "docs/operations.md" in err


def test_the_postgresql_backup_recipe_restores_a_clean_ledger(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """docs/operations.md's recipe, command for command: pg_dump in its custom format,
    pg_restore into a new database, `fangcheng ledger check` on it."""
    if shutil.which("pg_dump") is None or shutil.which("pg_restore") is None:
        pytest.skip("pg_dump and pg_restore are not installed")
    for source in ledgerdb.database("postgresql", tmp_path):
        engine = connect(source)
        try:
            populated(Platform(engine, hasher=FAST_HASHER))
        finally:
            engine.dispose()
        dump = tmp_path / "fangcheng.dump"
        subprocess.run(
            ["pg_dump", "--format=custom", f"--file={dump}", source], check=True, timeout=60
        )
        for target in ledgerdb.database("postgresql", tmp_path):
            subprocess.run(
                ["pg_restore", "--exit-on-error", "--no-owner", f"--dbname={target}", str(dump)],
                check=True,
                timeout=60,
            )
            code, out, err = run(["ledger", "check", "--db", target], capsys)
            assert code == 0, err
            assert "ledger clean: 37 accounts, 6 journals, 1 hands" in out
            with (
                sa.create_engine(target.replace("postgresql:", "postgresql+psycopg:")).begin() as c,
                pytest.raises(sa.exc.DBAPIError, match="append-only"),
            ):
                c.execute(sa.delete(schema.audit))


def test_admin_disable_ends_an_operators_sessions_and_log_ins_and_is_audited(
    url: str, platform: Platform, capsys: pytest.CaptureFixture[str]
) -> None:
    create(url, "root", "admin", capsys)
    create(url, "helper", "support", capsys)
    session = platform.operator_log_in("helper", "operator password")
    assert platform.operator(session.token).name == "helper"
    disable = ["admin", "disable", "--operator", "root", "--db", url]
    code, out, _ = run([*disable, "HELPER", "--reason", "left the team"], capsys)
    assert code == 0 and out == "operator helper (#2) disabled by root: left the team\n"
    with pytest.raises(Unauthorized):
        platform.operator(session.token)
    with pytest.raises(Unauthorized):
        platform.operator_log_in("helper", "operator password")
    (last,) = platform.audit_rows(limit=1)
    assert (last.action, last.target, last.address, last.reason) == (
        "operator_disable",
        "operator:2",
        "cli",
        "left the team",
    )
    assert last.operator == "root" and last.after == {"disabled": True, "sessions_ended": 1}
    for argv, problem in (
        (["helper", "--reason", "r"], "is disabled already"),
        (["root", "--reason", "r"], "cannot disable itself"),
        (["nobody", "--reason", "r"], "no operator is named 'nobody'"),
    ):
        code, out, err = run([*disable, *argv], capsys)
        assert code == 2 and problem in err and out == "", argv
    code, _, err = run(["admin", "disable", "--operator", "helper", "root", "--reason", "r",
                        "--db", url], capsys)  # fmt: skip
    assert code == 2 and "no operator is named 'helper'" in err  # (disabled: acts no more)
    assert platform.operator_log_in("root", "operator password").operator.name == "root"
