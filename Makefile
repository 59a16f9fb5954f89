# Two entry points: `make demo` (the main job) and `make test` (the whole suite).
# Each creates .venv and installs what it needs on first use.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin

$(BIN)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $@

.PHONY: demo test lint bench tables
demo: $(BIN)/.installed
	$(BIN)/fangcheng demo

lint: $(BIN)/.installed
	$(BIN)/ruff check src tests benchmarks tools
	$(BIN)/ruff format --check src tests benchmarks tools
	$(BIN)/mypy

test: lint
	$(BIN)/pytest -q src tests

bench: $(BIN)/.installed
	-$(BIN)/python -m pip install --quiet -e '.[bench]'
	$(BIN)/python benchmarks/bench_analysis.py
	$(BIN)/python benchmarks/bench_engine.py

tables: $(BIN)/.installed
	$(BIN)/python tools/gen_tables.py
