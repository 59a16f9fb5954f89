"""What importing fangcheng costs (issue 38, start-up): every process and CLI call pays
it, so `import fangcheng` builds no table dicts and imports no server, database or
numeric module, and the server's modules leave alembic to the migration that needs it
and redis to a server of many processes.
Checked by what a fresh interpreter holds afterwards, not by timing
(benchmarks/RESULTS.md, "Start-up", has the CPU figures)."""

from __future__ import annotations

import json
import subprocess
import sys

#: Modules `import fangcheng` must not load: each is tens of milliseconds or more.
HEAVY = (
    "alembic",
    "fangcheng.analysis.batch",
    "fangcheng.platform",
    "fangcheng.server",
    "fangcheng.ui",
    "numpy",
    "redis",
    "sqlalchemy",
    "starlette",
    "textual",
    "uvicorn",
)


def _fresh(script: str) -> dict[str, object]:
    """What ``script`` (run in a new interpreter) prints as JSON."""
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    found: dict[str, object] = json.loads(done.stdout)
    return found


def test_import_fangcheng_builds_no_table_dicts_and_imports_nothing_heavy() -> None:
    found = _fresh(
        "import json, sys\n"
        "import fangcheng\n"
        "from fangcheng.analysis import hand\n"
        f"heavy = [m for m in sys.modules if m.split('.')[0] in {HEAVY!r}"
        f" or any(m == h or m.startswith(h + '.') for h in {HEAVY!r})]\n"
        "dicts, kernel = hand._T is not None, hand.KERNEL is not None\n"
        "hand._K = None\n"  # the Python code, as without a compiler: its dicts now
        "print(json.dumps({'heavy': heavy, 'dicts': dicts, 'kernel': kernel,"
        " 'win': hand.is_win('123m456p789s11122z'), 'shanten': hand.shanten('1122z'),"
        " 'waits': hand.waits('1234m'), 'draw': hand.draw_shanten('1234z')[27],"
        " 'dicts_then': hand._T is not None}))\n"
    )
    assert found.pop("heavy") == []
    # The compiled kernel loads from the file's arrays (where it was built, as on every
    # CI machine); the Python code's dicts wait for their first use.
    assert found == {
        "dicts": False,
        "kernel": True,
        "win": True,
        "shanten": 0,
        "waits": [0, 3],
        "draw": 1,
        "dicts_then": True,
    }


def test_the_server_imports_alembic_only_to_migrate_and_redis_only_for_a_cluster() -> None:
    found = _fresh(
        "import json, sys\n"
        "import fangcheng.server.app\n"
        "before = [m for m in ('alembic', 'redis') if m in sys.modules]\n"
        "from fangcheng.platform.database import connect\n"
        "connect('sqlite://')\n"
        "print(json.dumps({'before': before, 'after': 'alembic' in sys.modules}))\n"
    )
    assert found == {"before": [], "after": True}
