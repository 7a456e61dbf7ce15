# Suanli: the two commands are `make run` and `make test`; both bootstrap .venv themselves.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
HOST   ?= 127.0.0.1
PORT   ?= 8000

.PHONY: run test lint typecheck openapi bench load clean

$(BIN)/python:
	@$(PYTHON) -c 'import sys; assert sys.version_info >= (3, 11), "Suanli needs Python >= 3.11"'
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

# Runtime install (what `make run` needs).
$(VENV)/.installed: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e .
	@touch $@

# Dev install: test tools and every cloud SDK extra. The example third-party plugin is
# installed into .test-plugins/ (which only the test suite puts on sys.path), so that
# `make run` never serves the example provider.
$(VENV)/.installed-dev: pyproject.toml examples/provider-example/pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e '.[dev,all-clouds]'
	rm -rf .test-plugins
	$(BIN)/python -m pip install --quiet --no-deps --target .test-plugins examples/provider-example
	@touch $(VENV)/.installed $@

run: $(VENV)/.installed
	$(BIN)/suanli serve --host $(HOST) --port $(PORT)

lint: $(VENV)/.installed-dev
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy

test: lint
	$(BIN)/python -m pytest $(PYTEST_ARGS)

openapi: $(VENV)/.installed-dev
	$(BIN)/suanli openapi --output openapi/openapi.json

bench: $(VENV)/.installed-dev
	$(BIN)/python bench/bench.py $(BENCH_ARGS)

load: $(VENV)/.installed-dev
	$(BIN)/python bench/load.py $(LOAD_ARGS)

clean:
	rm -rf $(VENV) .test-plugins .pytest_cache .mypy_cache .ruff_cache .hypothesis
