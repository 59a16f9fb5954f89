"""The web client served small and cached (issue 41, `fangcheng.server.assets`), and the
one line `fangcheng serve` says when a PostgreSQL URL lacks its driver."""

from __future__ import annotations

import importlib.util
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from fangcheng.cli import main
from fangcheng.server.app import ServerSettings, create_app
from fangcheng.server.assets import version_of
from fangcheng.server.routes import STATIC

testclient = pytest.importorskip("starlette.testclient")


@pytest.fixture(scope="module")
def client() -> Iterator[testclient.TestClient]:
    with testclient.TestClient(create_app(ServerSettings(db="sqlite://"))) as c:
        yield c


def test_the_start_page_names_the_client_by_its_version(client: testclient.TestClient) -> None:
    page = client.get("/")
    version = version_of(STATIC)
    assert page.headers["cache-control"] == "no-cache"
    assert page.headers["etag"] == f'"{version}"'
    assert f'"/static/v/{version}/js/app.js"' in page.text
    assert f'"/static/v/{version}/app.css"' in page.text
    assert not re.search(r'"/static/(?!v/)', page.text)
    again = client.get("/", headers={"if-none-match": f'"{version}"'})
    assert again.status_code == 304 and again.content == b""


def test_versioned_files_are_kept_a_year_and_compressed(client: testclient.TestClient) -> None:
    version = version_of(STATIC)
    for name in ("js/table.js", "js/feel.js", "app.css", "tiles/back.svg"):
        answer = client.get(f"/static/v/{version}/{name}", headers={"accept-encoding": "gzip"})
        assert answer.status_code == 200, name
        assert answer.headers["cache-control"] == "public, max-age=31536000, immutable"
        assert answer.content == (STATIC / name).read_bytes()  # (decoded by the client)
        if len(answer.content) > 500:
            assert answer.headers["content-encoding"] == "gzip", name
    # an older version's address still answers (an open page's), revalidated each time
    stale = client.get("/static/v/000000000000/js/app.js")
    assert stale.status_code == 200 and stale.headers["cache-control"] == "no-cache"
    plain = client.get("/static/js/app.js")
    assert plain.status_code == 200 and plain.headers["cache-control"] == "no-cache"
    assert client.get(f"/static/v/{version}/js/nothing.js").status_code == 404


def test_the_version_follows_every_file(tmp_path: Path) -> None:
    (tmp_path / "a.js").write_text("one")
    first = version_of(tmp_path)
    (tmp_path / "a.js").write_text("two")
    assert version_of(tmp_path) != first


def test_serve_names_the_missing_postgres_extra(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == "psycopg" else real(name)
    )
    assert main(["serve", "--db", "postgresql+psycopg://u@localhost/fangcheng"]) == 2
    err = capsys.readouterr().err
    assert err.splitlines() == [
        "fangcheng serve: PostgreSQL needs psycopg: pip install 'fangcheng[postgres]'"
    ]
