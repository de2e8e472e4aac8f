# One entry point for every job; the README names `make demo` and `make test`, .ci/run calls `make test`.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: setup demo test test-python test-extension lint typecheck bench bench-quick fuzz clean
NODE_STAMP := node_modules/.installed

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

setup: $(STAMP)

$(NODE_STAMP): package.json package-lock.json
	npm ci --no-audit --no-fund
	touch $(NODE_STAMP)

## Diagnose the bundled 8-rank example (the main job).
demo: $(STAMP)
	$(BIN)/faultline diagnose examples/oom-cascade || test $$? -eq 1

lint: $(STAMP)
	$(BIN)/ruff check server tests bench scripts

typecheck: $(STAMP)
	$(BIN)/mypy

test-python: $(STAMP)
	$(BIN)/python -m pytest -q

## The VS Code extension: tsc --strict, eslint, unit tests, VSIX packaging and the end-to-end test in a
## real VS Code (code-server + headless Chromium; installs them on first use).
test-extension: $(STAMP) $(NODE_STAMP)
	node scripts/test-extension.mjs

## The whole test suite: lint, types, Python tests (engine, signatures, corpus accuracy, language server,
## hardening) and the extension's tests.
test: lint typecheck test-python test-extension

## A long fuzzing search, a new seed each run (the suite's own pass is short and seeded): FUZZ_SECONDS per target;
## what it finds is left as crash-* in $(FUZZ_OUT).
FUZZ_SECONDS ?= 300
FUZZ_OUT ?= /tmp/faultline-fuzz
fuzz: $(STAMP)
	mkdir -p $(FUZZ_OUT)
	cd tests/hardening && for target in line_reader matcher pipeline; do \
	  mkdir -p $(FUZZ_OUT)/$$target && \
	  $(abspath $(BIN))/python fuzz_targets.py $$target $(FUZZ_OUT)/$$target fuzz_corpus/$$target \
	    -max_total_time=$(FUZZ_SECONDS) -max_len=4096 -timeout=20 -rss_limit_mb=2048 \
	    -artifact_prefix=$(FUZZ_OUT)/ || exit 1; \
	done

bench-quick: $(STAMP)
	$(BIN)/python bench/run.py --quick

bench: $(STAMP)
	$(BIN)/python bench/run.py

clean:
	rm -rf $(VENV) node_modules .pytest_cache .mypy_cache .ruff_cache
