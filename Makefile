# One entry point for every job; the README names `make demo` and `make test`, .ci/run calls `make test`.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: setup demo test test-python lint typecheck bench bench-quick clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

setup: $(STAMP)

## Diagnose the bundled 8-rank example (the main job).
demo: $(STAMP)
	$(BIN)/faultline diagnose examples/oom-cascade || test $$? -eq 1

lint: $(STAMP)
	$(BIN)/ruff check server tests bench

typecheck: $(STAMP)
	$(BIN)/mypy

test-python: $(STAMP)
	$(BIN)/python -m pytest -q

## The whole test suite: lint, types, Python tests (engine, signatures, corpus accuracy, language server).
test: lint typecheck test-python

bench-quick: $(STAMP)
	$(BIN)/python bench/run.py --quick

bench: $(STAMP)
	$(BIN)/python bench/run.py

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache
