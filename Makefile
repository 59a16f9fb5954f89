# Entry points: `make serve` (the table server: play in a browser), `make play` (a match
# against three bots in the terminal) and `make test` (the whole suite). Each creates
# .venv and installs what it needs on first use. `make play ARGS="--rules sichuan --quan
# 4"` passes options on; `make serve ARGS="--port 9000"` as well.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
ARGS ?=

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

# What playing needs (textual), and what the tests and benchmarks need (pinned). An
# install builds the C extensions in place, so a change of their sources reinstalls.
BUILT := pyproject.toml setup.py $(wildcard src/fangcheng/*/*.c)

$(VENV)/.play: $(BUILT) | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e '.[play]'
	touch $@

$(VENV)/.server: $(BUILT) | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e '.[server]'
	touch $@

$(VENV)/.dev: $(BUILT) | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $@

.PHONY: serve play demo test lint bench results tables golden mutation chaos train-example
serve: $(VENV)/.server
	$(BIN)/fangcheng serve --host 127.0.0.1 --port 8000 $(ARGS)

play: $(VENV)/.play
	$(BIN)/fangcheng play $(ARGS)

demo: $(VENV)/.play
	$(BIN)/fangcheng demo

lint: $(VENV)/.dev
	$(BIN)/ruff check src tests benchmarks tools
	$(BIN)/ruff format --check src tests benchmarks tools
	$(BIN)/mypy
	$(BIN)/lint-imports

test: lint
	$(BIN)/pytest -q src tests

bench: $(VENV)/.dev
	-$(BIN)/python -m pip install --quiet -e '.[bench]'
	$(BIN)/python benchmarks/bench_analysis.py
	$(BIN)/python benchmarks/bench_engine.py
	$(BIN)/python benchmarks/bench_scoring.py
	$(BIN)/python benchmarks/bench_env.py
	$(BIN)/python benchmarks/bench_batch.py

# Train one seat with masked PPO for a few minutes of CPU, then measure it against the
# random bot (examples/train_ppo.py); the `train` extra (torch) is installed here only.
train-example: $(VENV)/.dev
	$(BIN)/python -m pip install --quiet -e '.[train]'
	nice $(BIN)/python examples/train_ppo.py $(ARGS)

# Check benchmarks/RESULTS.md without running a benchmark: every figure has its command,
# commit and date, and each command's script takes the flags it is given.
results: $(VENV)/.dev
	$(BIN)/pytest -q tests/test_results_page.py

tables: $(VENV)/.dev
	$(BIN)/python tools/gen_tables.py

# Rewrite tests/golden from the code as it is (only when a change of play or scoring is
# intended): prints what changed; review it and the diff before committing.
golden: $(VENV)/.dev
	$(BIN)/python tools/golden.py

# A seeded mutation run (tools/mutate.py): 150 one-token changes to the rules-bearing
# modules, the suite run against each; prints each mutant's verdict (timeouts apart, run
# again with more time) and the score, killed / (run - equivalent - timed out twice), the
# equivalent ones judged in tools/equivalent_mutants.toml (benchmarks/RESULTS.md,
# "Mutation"). About half an hour on two idle cores.
MUTANTS ?= 150
SEED ?= 14
mutation: $(VENV)/.dev
	nice $(BIN)/python tools/mutate.py --mutants $(MUTANTS) --seed $(SEED)

# The fault-injection run (tests/chaos.py; issue 35): people at coin tables while
# processes are killed -9, database connections terminated, Redis keys deleted and
# stores failed at seeded random moments; prints what it counted and fails on any broken
# promise. One process on SQLite, then three on PostgreSQL with Redis (127.0.0.1); a few
# minutes. `make test` runs a short form (tests/test_chaos.py, `pytest -m chaos`).
CHAOS_SECONDS ?= 60
CHAOS_SEED ?= 1
chaos: $(VENV)/.dev
	$(BIN)/python tools/chaos.py --db sqlite --seed $(CHAOS_SEED) --seconds $(CHAOS_SECONDS)
	$(BIN)/python tools/chaos.py --db postgresql --processes 3 --seed $(CHAOS_SEED) --seconds $(CHAOS_SECONDS)
