"""The Ray backend: the same summary and records as a local run, on a local Ray instance.

Ray is the optional extra ``fangcheng[ray]`` (in the dev extra too); these tests skip only
where it is not installed. Everything stays on this machine: no dashboard, no usage stats.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

# Read by Ray when it is imported, here and in the subprocesses: test instances on the
# loopback address (Ray otherwise binds to the machine's network address, for other machines
# to join), no usage statistics, and token authentication (Ray's default) said outright.
RAY_ENV = {
    "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0",
    "RAY_USAGE_STATS_ENABLED": "0",
    "RAY_AUTH_MODE": "token",
}
os.environ.update(RAY_ENV)
os.environ.pop("RAY_ADDRESS", None)  # never a cluster this machine did not start here
ray = pytest.importorskip("ray")

from fangcheng.ai.sim import main, simulate  # noqa: E402

SEATS = ["random", "efficient", "random", "efficient"]
ARGV = ["--rules", "baicheng", "--hands", "16", "--seats", ",".join(SEATS), "--seed", "5"]
TIMEOUT = 120  # seconds for a subprocess; the whole file takes about 30


def comparable(data: dict[str, Any]) -> dict[str, Any]:
    """A JSON summary without what depends on the machine: time, backend, workers."""
    return {k: v for k, v in data.items() if k not in {"seconds", "hands_per_second"}} | {
        "backend": None,
        "workers": None,
    }


def run_cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "fangcheng.ai.sim", *args],
        capture_output=True,
        text=True,
        env=os.environ | RAY_ENV,
        timeout=TIMEOUT,
        check=False,
    )


def test_cli_ray_auto_starts_a_local_ray_and_matches_the_local_run() -> None:
    # a fresh process with no Ray running: --ray auto starts one, plays, and shuts it down
    on_ray = run_cli(*ARGV, "--ray", "auto", "--json")
    assert on_ray.returncode == 0, on_ray.stderr
    data = json.loads(on_ray.stdout)  # stdout is the JSON alone, whatever Ray logs
    assert data["backend"] == "ray" and data["workers"] >= 1
    assert "16/16 hands" in on_ray.stderr
    local = simulate("baicheng", 16, SEATS, seed=5)
    assert comparable(data) == comparable(local.to_json())


@pytest.fixture(scope="module")
def local_ray() -> Iterator[str]:
    """A Ray instance in this process, for the rest of the file; its address."""
    ray.init(num_cpus=2, include_dashboard=False, logging_level="warning")
    try:
        yield ray.get_runtime_context().gcs_address
    finally:
        ray.shutdown()


def test_ray_summary_and_records_equal_the_local_run(local_ray: str, tmp_path: Path) -> None:
    local = simulate("baicheng", 16, SEATS, seed=5, records_dir=tmp_path / "local")
    on_ray = simulate("baicheng", 16, SEATS, seed=5, records_dir=tmp_path / "ray", ray="auto")
    assert ray.is_initialized()  # it used this process's Ray and left it running
    assert on_ray.backend == "ray" and on_ray.workers == 2
    assert on_ray.results == local.results
    assert on_ray.seats == local.seats
    assert on_ray.job == local.job and on_ray.hands == local.hands == 16
    names = sorted(p.name for p in (tmp_path / "local").iterdir())
    assert names == sorted(p.name for p in (tmp_path / "ray").iterdir()) and len(names) == 16
    for name in names:
        assert (tmp_path / "ray" / name).read_bytes() == (tmp_path / "local" / name).read_bytes()


def test_ray_duplicate_mode_and_many_chunks(local_ray: str) -> None:
    # more chunks than the in-flight window (4 per CPU), merged back in index order
    hands = 8 * 4 * 2 + 4
    seats = ["random"] * 4
    local = simulate("sichuan", hands, seats, seed=9, duplicate=True)
    on_ray = simulate("sichuan", hands, seats, seed=9, duplicate=True, ray="auto")
    assert [r.index for r in on_ray.results] == list(range(hands))
    assert on_ray.results == local.results


def test_cli_ray_auto_json_in_process(local_ray: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main([*ARGV, "--ray", "auto", "--json"]) == 0
    on_ray = json.loads(capsys.readouterr().out)
    assert main([*ARGV, "--json"]) == 0
    local = json.loads(capsys.readouterr().out)
    assert on_ray["backend"] == "ray" and local["backend"] == "local"
    assert comparable(on_ray) == comparable(local)
    assert main([*ARGV, "--ray", "auto"]) == 0
    assert "Ray CPU(s)" in capsys.readouterr().out


def test_cli_ray_address_connects_to_a_running_cluster(local_ray: str) -> None:
    # another process joins the cluster this one started, by its address, as on a real one
    on_ray = run_cli(*ARGV, "--ray", local_ray, "--json")
    assert on_ray.returncode == 0, on_ray.stderr
    data = json.loads(on_ray.stdout)
    assert data["backend"] == "ray" and data["workers"] == 2
    assert local_ray.startswith("127.0.0.1:")
    local = simulate("baicheng", 16, SEATS, seed=5)
    assert [s["mean"] for s in data["seats"]] == [s.mean for s in local.seats]
    assert comparable(data) == comparable(local.to_json())
