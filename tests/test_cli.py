"""The `fangcheng` command: demo, score, replay and the simulate pass-through."""

from __future__ import annotations

import json
import random
import subprocess
import sys
from pathlib import Path

import pytest

from fangcheng.cli import main
from fangcheng.engine.record import record_of
from fangcheng.engine.round import Round

CASES = Path(__file__).parent / "cases"


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    try:
        code = main(argv)
    except SystemExit as exc:  # argparse and unreadable input
        code = int(exc.code or 0)
    out, err = capsys.readouterr()
    return code, out, err


def situation_file(tmp_path: Path, name: str) -> tuple[Path, dict[str, object]]:
    data = json.loads((CASES / name).read_text(encoding="utf-8"))
    expect = data.pop("expect")
    path = tmp_path / name
    path.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    return path, expect


def test_demo_shows_waits_and_shapes(capsys):
    code, out, _ = run(["demo", "1234m567p345s999p"], capsys)
    assert code == 0 and "两头吊" in out and "shanten  0" in out


def test_demo_names_bad_notation(capsys):
    code, _, err = run(["demo", "12x"], capsys)
    assert code == 2 and "'x' at position 2" in err


def test_score_prints_the_contract_json(tmp_path, capsys):
    path, expect = situation_file(tmp_path, "baicheng-B1.json")
    code, out, _ = run(["score", str(path)], capsys)
    result = json.loads(out)
    assert code == 0 and result["win"] is True
    assert result["total"] == expect["final"] and result["kongs"] == expect["kong_deltas"]


def test_score_explain_is_a_table(tmp_path, capsys):
    path, _ = situation_file(tmp_path, "baicheng-B5.json")
    code, out, _ = run(["score", "--explain", str(path)], capsys)
    assert code == 0 and "杠上开花" in out and "total" in out


def test_score_reads_stdin(tmp_path, capsys, monkeypatch):
    path, expect = situation_file(tmp_path, "sichuan-S1.json")
    monkeypatch.setattr("sys.stdin", path.open(encoding="utf-8"))
    code, out, _ = run(["score", "-"], capsys)
    assert code == 0 and json.loads(out)["total"] == expect["final"]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("{not json", "is not JSON"),
        ('{"rules": "mahjong"}', "base: missing"),
        ("[]", ""),
    ],
)
def test_score_rejects_malformed_input_with_exit_2(tmp_path, capsys, text, message):
    path = tmp_path / "bad.json"
    path.write_text(text, encoding="utf-8")
    code, out, err = run(["score", str(path)], capsys)
    assert code == 2 and out == "" and message in err


def test_score_names_an_unknown_rule_set(tmp_path, capsys):
    path, _ = situation_file(tmp_path, "baicheng-B1.json")
    data = json.loads(path.read_text(encoding="utf-8"))
    data["rules"] = "riichi"
    path.write_text(json.dumps(data), encoding="utf-8")
    code, _, err = run(["score", str(path)], capsys)
    assert code == 2 and "riichi" in err and "baicheng" in err


def test_score_of_a_missing_file(capsys):
    code, _, err = run(["score", "/nonexistent/x.json"], capsys)
    assert code == 2 and "cannot read" in err


def finished_record(seed: int) -> dict[str, object]:
    r = Round("baishan", seed=seed)
    rng = random.Random(seed)
    while not r.over:
        for seat in r.pending():
            r.act(seat, rng.choice(r.legal_actions(seat)))
    return json.loads(json.dumps(record_of(r)))


def test_replay_of_a_faithful_record_exits_0(tmp_path, capsys):
    path = tmp_path / "hand.json"
    path.write_text(json.dumps(finished_record(4)), encoding="utf-8")
    code, out, _ = run(["replay", str(path)], capsys)
    assert code == 0 and "replay identically" in out


def test_replay_names_the_first_divergence_and_exits_1(tmp_path, capsys):
    record = finished_record(4)
    record["settlement"]["total"] = [1, 2, 3, 4]
    path = tmp_path / "hand.json"
    path.write_text(json.dumps(record), encoding="utf-8")
    code, _, err = run(["replay", str(path)], capsys)
    assert code == 1 and "settlement" in err


def test_replay_of_a_scripted_hand_prints_the_events(tmp_path, capsys):
    script = {
        "format": "fangcheng-record",
        "version": 1,
        "rules": "baishan",
        "seed": 1,
        "dealer": 0,
        "wall": {
            "hands": [
                "6m2m8m1p3p5p7p1s3s8sSWNF",
                "111m234p567s99s45m",
                "2s4s6s8p6p9m7mSWNFCP",
                "999p234s678mEE45m",
            ]
        },
        "decisions": [
            {"seat": 0, "action": "discard 6m"},
            {"seat": 1, "action": "hu"},
            {"seat": 3, "action": "pass"},
        ],
    }
    path = tmp_path / "script.json"
    path.write_text(json.dumps(script), encoding="utf-8")
    code, out, _ = run(["replay", str(path)], capsys)
    lines = [json.loads(line) for line in out.splitlines()]
    assert code == 0 and lines[-1]["settlement"]["end"] == "win"
    assert any(e.get("type") == "win" and e["seat"] == 1 for e in lines)


def test_replay_reports_an_illegal_scripted_decision(tmp_path, capsys):
    script = {
        "format": "fangcheng-record",
        "version": 1,
        "rules": "baicheng",
        "seed": 2,
        "wall": {"head": ""},
        "decisions": [{"seat": 2, "action": "discard 5m"}],
    }
    path = tmp_path / "script.json"
    path.write_text(json.dumps(script), encoding="utf-8")
    code, _, err = run(["replay", str(path)], capsys)
    assert code == 2 and "decisions[0]" in err and "seat 2 cannot discard 5m" in err


def test_simulate_takes_its_own_options_through_the_main_command(capsys):
    argv = ["simulate", "--rules", "baicheng", "--hands", "4", "--workers", "1", "--json"]
    code, out, _ = run(argv, capsys)
    assert code == 0 and json.loads(out)["hands"] == 4


def test_python_dash_m_runs_the_same_commands() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "fangcheng", "score", "-"],
        input="{not json",
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 2 and "JSON" in done.stderr


def test_help_states_what_each_exit_code_means(capsys):
    code, out, _ = run(["--help"], capsys)
    assert code == 0 and "1  a replay that diverges" in out and "2  invalid input" in out


def test_a_record_that_is_not_an_object_exits_2(tmp_path, capsys):
    path = tmp_path / "list.json"
    path.write_text("[1, 2]", encoding="utf-8")
    code, _, err = run(["replay", str(path)], capsys)
    assert code == 2 and "record: expected an object, got list" in err


def test_replay_show_checks_the_record_first_and_needs_a_terminal(tmp_path, capsys):
    path = tmp_path / "hand.json"
    path.write_text(json.dumps(finished_record(4)), encoding="utf-8")
    code, out, err = run(["replay", str(path), "--show", "--seat", "2"], capsys)
    assert code == 2 and out == "" and "--show needs a terminal" in err  # pytest is no tty
    path.write_text("{not json", encoding="utf-8")
    code, _, err = run(["replay", str(path), "--show"], capsys)
    assert code == 2 and "is not JSON" in err
    code, _, err = run(["replay", str(path), "--show", "--seat", "4"], capsys)
    assert code == 2 and "--seat" in err
