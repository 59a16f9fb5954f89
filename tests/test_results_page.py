"""benchmarks/RESULTS.md stays honest: every figure on it can be produced again.

The page's row format (its opening paragraph documents it): under each area's ``##``
heading, tables with the header ``| measured | figure | peer ratio | target | command |
commit | date |``. Each row's command is one code span, ``python benchmarks/X.py``,
``python tools/X.py``, ``python examples/X.py`` or ``fangcheng SUB``, with its flags; the
commit a short hash; the date ISO. The check runs each command's ``--help`` (with its
subcommand, if any) and finds every flag the row passes in it, so a flag renamed or a
script removed fails here; no benchmark is run (``make results``).
"""

from __future__ import annotations

import functools
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PAGE = ROOT / "benchmarks" / "RESULTS.md"
HEADER = ["measured", "figure", "peer ratio", "target", "command", "commit", "date"]
AREAS = [
    "Analysis",
    "Scoring",
    "Engine",
    "Environments",
    "Bots and their strength",
    "Server",
    "Ledger",
    "Scale-out",
    "Failover",
    "Mutation",
]
FLAG = re.compile(r"--[a-z][a-z0-9-]*")


def _cells(line: str) -> list[str]:
    return [cell.strip() for cell in line.strip().strip("|").split("|")]


def _rows() -> list[tuple[str, int, dict[str, str]]]:
    """Every figure row: its area, its line number and its cells by column."""
    rows = []
    area = ""
    in_table = False
    for number, line in enumerate(PAGE.read_text(encoding="utf-8").splitlines(), 1):
        if line.startswith("## "):
            area = line[3:].strip()
        if not line.startswith("|"):
            in_table = False
            continue
        cells = _cells(line)
        if cells == HEADER:
            in_table = True
        elif in_table and not set(line) <= set("|-: "):
            assert len(cells) == len(HEADER), f"line {number}: {len(cells)} cells: {line}"
            rows.append((area, number, dict(zip(HEADER, cells, strict=True))))
    return rows


ROWS = _rows()


@functools.cache
def _help(program: tuple[str, ...]) -> str:
    """What the program (a script and its subcommands) prints for ``--help``."""
    done = subprocess.run(
        [sys.executable, *program, "--help"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    if done.returncode != 0 and "ModuleNotFoundError" in done.stderr and len(program) == 1:
        # a script of an extra not installed here (examples/train_ppo.py: torch): its
        # flags as its parser declares them
        return " ".join(
            re.findall(r"add_argument\(\s*\"(--[\w-]+)\"", (ROOT / program[0]).read_text())
        )
    assert done.returncode == 0, f"{' '.join(program)} --help failed:\n{done.stderr}"
    return done.stdout


def _program(words: list[str]) -> tuple[tuple[str, ...], list[str]]:
    """The interpreter's arguments that name the program (script or module, and the
    subcommands before the first flag), and the arguments after them."""
    if words[0] == "fangcheng":
        head, rest = ["-m", "fangcheng"], words[1:]
    else:
        assert words[0] == "python" and len(words) > 1, f"not python or fangcheng: {words}"
        script = words[1]
        assert re.fullmatch(r"(benchmarks|tools|examples)/\w+\.py", script), (
            f"{script}: not a script"
        )
        assert (ROOT / script).is_file(), f"{script} does not exist"
        head, rest = [script], words[2:]
    while rest and not rest[0].startswith("-"):
        head.append(rest.pop(0))
    return tuple(head), rest


def test_the_page_has_its_areas_in_order():
    headings = [
        line[3:].strip()
        for line in PAGE.read_text(encoding="utf-8").splitlines()
        if line.startswith("## ")
    ]
    assert headings == AREAS
    assert {area for area, _, _ in ROWS} == set(AREAS), "an area without figures"


def test_every_link_on_the_page_resolves():
    text = PAGE.read_text(encoding="utf-8")
    for target in re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", text):
        if "://" not in target:
            assert (PAGE.parent / target).exists(), f"{target}: no such file"


@pytest.mark.parametrize(("area", "line", "row"), ROWS, ids=[f"line{n}" for _, n, _ in ROWS])
def test_a_figure_names_its_command_commit_and_date(area, line, row):
    assert row["measured"] and row["figure"], f"line {line}: nothing measured"
    assert re.fullmatch(r"[0-9a-f]{7,40}", row["commit"]), f"line {line}: commit"
    assert re.fullmatch(r"20\d\d-\d\d-\d\d", row["date"]), f"line {line}: date"
    target = row["target"]
    assert target == "—" or re.search(r": (met|not met)\b", target), f"line {line}: target"
    spans = re.findall(r"`([^`]+)`", row["command"])
    assert spans, f"line {line}: no command"
    program, arguments = _program(shlex.split(spans[0]))
    text = _help(program)
    for argument in arguments:
        if argument.startswith("--"):
            flag = argument.split("=", 1)[0]
            assert FLAG.fullmatch(flag), f"line {line}: {flag}"
            assert re.search(rf"(?<![\w-]){flag}(?![\w-])", text), (
                f"line {line}: {' '.join(program)} takes no {flag}"
            )
