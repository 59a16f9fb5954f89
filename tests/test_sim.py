"""The simulator: deterministic for any worker count, duplicate rotation, JSON, records."""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path

import pytest

from fangcheng.ai.sim import Job, RayUnavailableError, _progress, main, play_hand, simulate
from fangcheng.engine.record import replay

SEATS = ["efficient", "random", "strong", "random"]


def test_same_seed_same_result_for_any_workers() -> None:
    one = simulate("baishan", 20, SEATS, seed=11, workers=1)
    two = simulate("baishan", 20, SEATS, seed=11, workers=2)
    assert one.results == two.results
    assert one.seats == two.seats
    assert [r.index for r in two.results] == list(range(20))
    other = simulate("baishan", 20, SEATS, seed=12, workers=1)
    assert other.results != one.results


def test_play_hand_is_a_pure_function_of_seed_and_index() -> None:
    job = Job("baicheng", tuple(SEATS), seed=3)
    assert play_hand(job, 5) == play_hand(job, 5)
    assert play_hand(job, 5) != play_hand(job, 6)


def test_duplicate_rotates_the_bots_over_one_wall(tmp_path: Path) -> None:
    summary = simulate(
        "baicheng", 6, SEATS, seed=2, duplicate=True, records_dir=tmp_path
    )  # rounded up to two walls of four hands
    assert summary.hands == 8
    first = summary.results[:4]
    assert [r.seat_of for r in first] == [(0, 1, 2, 3), (1, 2, 3, 0), (2, 3, 0, 1), (3, 0, 1, 2)]
    assert {r.wall for r in first} == {0} and {r.wall for r in summary.results[4:]} == {1}
    records = [json.loads((tmp_path / f"hand-{i:06d}.json").read_text()) for i in range(8)]
    assert len({(r["wall"], r["seed"], r["dealer"]) for r in records[:4]}) == 1
    assert records[0]["wall"] != records[4]["wall"]
    # every player sat in every seat of the wall once
    for p in range(4):
        assert sorted(r.seat_of[p] for r in first) == [0, 1, 2, 3]


def test_duplicate_rotations_share_each_seats_random_choices() -> None:
    """Common random numbers: a seat's random stream is fixed by the wall and the seat,
    so with the same bot in every seat the four rotations of a wall play one game."""
    summary = simulate("baishan", 8, ["random"] * 4, seed=5, duplicate=True)
    for wall in (0, 1):
        games = {
            tuple(r.totals[r.seat_of.index(seat)] for seat in range(4))
            for r in summary.results
            if r.wall == wall
        }
        assert len(games) == 1
    assert len({tuple(r.totals) for r in summary.results}) > 1  # the walls do differ


def test_saved_records_replay_identically(tmp_path: Path) -> None:
    simulate("baishan_platform", 6, SEATS, seed=4, records_dir=tmp_path)
    files = sorted(tmp_path.glob("hand-*.json"))
    assert len(files) == 6
    for path in files:
        result = replay(json.loads(path.read_text(encoding="utf-8")))
        assert result.divergence is None, path.name


def test_summary_rates_and_intervals() -> None:
    summary = simulate("baicheng", 24, SEATS, seed=8)
    wins = sum(sum(r.wins) for r in summary.results)
    assert wins == pytest.approx(sum(s.win_rate for s in summary.seats) * 24)
    for s in summary.seats:
        assert 0 <= s.win_rate <= 1 and 0 <= s.deal_in_rate <= 1 and s.ci > 0
    # baicheng has no fees: every hand's coins sum to zero
    assert sum(s.mean for s in summary.seats) == pytest.approx(0)


def test_cli_json(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["--rules", "baishan", "--hands", "8", "--seats", ",".join(SEATS), "--json"]
    assert main([*argv, "--seed", "1", "--workers", "2"]) == 0
    out = capsys.readouterr()
    data = json.loads(out.out)
    assert data["hands"] == 8 and data["rules"] == "baishan"
    assert [s["bot"] for s in data["seats"]] == SEATS
    assert {"win_rate", "deal_in_rate", "mean", "ci95"} <= set(data["seats"][0])
    assert "8/8 hands" in out.err  # the progress bar


def test_cli_table(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--rules", "baicheng", "--hands", "4", "--duplicate"]) == 0
    out = capsys.readouterr().out
    assert "score/hand" in out and "duplicate" in out


@pytest.mark.parametrize(
    "argv",
    [
        ["--rules", "baishan", "--seats", "efficient,random"],
        ["--rules", "baishan", "--seats", "efficient,random,random,genius"],
        ["--rules", "baishan", "--seats", "efficient,random,random,strong@8"],
        ["--rules", "baishan", "--seats", "efficient,random,random,expert@0"],
        ["--rules", "nowhere"],
        ["--rules", "baishan", "--hands", "0"],
    ],
)
def test_cli_rejects_bad_arguments(argv: list[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        main(argv)
    assert exc.value.code == 2


def test_ray_without_ray_installed_says_which_extra(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    monkeypatch.setitem(sys.modules, "ray", None)  # `import ray` now fails as if absent
    with pytest.raises(RayUnavailableError, match=r"pip install 'fangcheng\[ray\]'"):
        simulate("baicheng", 4, SEATS, records_dir=tmp_path / "out", ray="auto")
    assert not (tmp_path / "out").exists()  # failed before doing anything
    assert main(["--rules", "baicheng", "--hands", "4", "--ray", "auto"]) == 2
    out = capsys.readouterr()
    assert out.out == ""
    assert out.err.splitlines() == [
        "fangcheng simulate: error: the Ray backend needs Ray: pip install 'fangcheng[ray]'"
    ]


def test_cli_ray_and_workers_are_exclusive() -> None:
    with pytest.raises(SystemExit) as exc:
        main(["--rules", "baicheng", "--ray", "auto", "--workers", "2"])
    assert exc.value.code == 2


class _Stream(io.StringIO):
    def __init__(self, tty: bool) -> None:
        super().__init__()
        self.tty = tty

    def isatty(self) -> bool:
        return self.tty


def test_progress_off_a_terminal_is_plain_lines(monkeypatch: pytest.MonkeyPatch) -> None:
    """No carriage returns nor bar where stderr is a file or a pipe: a line a tenth."""
    for name in ("FORCE_COLOR", "TTY_COMPATIBLE", "TTY_INTERACTIVE"):
        monkeypatch.delenv(name, raising=False)
    stream = _Stream(tty=False)
    with _progress(stream) as show:
        for done in range(0, 101, 4):
            show(done, 100)
    lines = stream.getvalue().splitlines()
    assert "\r" not in stream.getvalue() and len(lines) == 10
    assert lines[-1].startswith("100/100 hands")


def test_progress_on_a_terminal_is_richs_bar(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("TERM", "NO_COLOR", "TTY_COMPATIBLE", "TTY_INTERACTIVE"):
        monkeypatch.delenv(name, raising=False)
    stream = _Stream(tty=True)
    with _progress(stream) as show:
        show(0, 8)
        show(8, 8)
    text = stream.getvalue()
    assert "8/8" in text and "━" in text  # Rich's bar and its M/N column
