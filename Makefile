# Suanli: the two commands are `make run` and `make test`; both bootstrap .venv themselves.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
# `make run` binds SUANLI_HOST/SUANLI_PORT from the environment (default 127.0.0.1:8000);
# HOST=… PORT=… on the make command line override them.
HOST   ?= $(SUANLI_HOST)
PORT   ?= $(SUANLI_PORT)
# The tested versions of every dependency (pip freeze of the dev venv): installs never
# pick an untested release. Regenerate with `make constraints` after changing pyproject.
CONSTRAINTS := constraints.txt

.PHONY: run test lint typecheck openapi bench load clean constraints

$(BIN)/python:
	@$(PYTHON) -c 'import sys; assert sys.version_info >= (3, 11), "Suanli needs Python >= 3.11"'
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

# Runtime install (what `make run` needs).
$(VENV)/.installed: pyproject.toml $(CONSTRAINTS) | $(BIN)/python
	$(BIN)/python -m pip install --quiet -c $(CONSTRAINTS) -e .
	@touch $@

# Dev install: test tools and every cloud SDK extra. The example third-party plugin is
# installed into .test-plugins/ (which only the test suite puts on sys.path), so that
# `make run` never serves the example provider.
$(VENV)/.installed-dev: pyproject.toml $(CONSTRAINTS) examples/provider-example/pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -c $(CONSTRAINTS) -e '.[dev,all-clouds]'
	rm -rf .test-plugins
	$(BIN)/python -m pip install --quiet --no-deps --target .test-plugins examples/provider-example
	@touch $(VENV)/.installed $@

run: $(VENV)/.installed
	$(BIN)/suanli serve $(if $(HOST),--host $(HOST)) $(if $(PORT),--port $(PORT))

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

constraints: $(VENV)/.installed-dev
	{ echo "# Tested versions: pip freeze of the dev venv (make constraints), minus suanli itself."; \
	  $(BIN)/python -m pip freeze --exclude-editable | grep -v '^suanli'; } > $(CONSTRAINTS)

clean:
	rm -rf $(VENV) .test-plugins .pytest_cache .mypy_cache .ruff_cache .hypothesis
