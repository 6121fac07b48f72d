# The two commands a newcomer needs: `make run` and `make test`.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-stamp
export INTAKE_DATABASE_URL ?= sqlite:///.intake/intake.db

.PHONY: install run test test-fast lint typecheck format clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

install: $(STAMP)

run: install
	$(BIN)/intake migrate
	$(BIN)/intake demo
	$(BIN)/intake serve

lint: install
	$(BIN)/ruff check src tests
	$(BIN)/ruff format --check src tests

typecheck: install
	$(BIN)/mypy

test: lint typecheck
	$(BIN)/pytest -q

test-fast: install
	$(BIN)/pytest -q -x

format: install
	$(BIN)/ruff check --fix src tests
	$(BIN)/ruff format src tests

clean:
	rm -rf $(VENV) .intake .mypy_cache .ruff_cache .hypothesis
