# The two commands a newcomer needs: `make run` and `make test`.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
# Two stamps: what running needs (the package and its dependencies), and that plus the
# development extras (tests, linters, profilers), which every other target wants.
RUN_STAMP := $(VENV)/.run-stamp
STAMP := $(VENV)/.installed-stamp
export INTAKE_DATABASE_URL ?= sqlite:///.intake/intake.db
# Compiled bytecode is kept in the virtual environment, never beside the sources. A
# caller's PYTHONDONTWRITEBYTECODE would make every run, and every test worker, compile
# every module again (9 s of each worker's collection in `make test-fast`).
ifeq ($(PYTHONPYCACHEPREFIX),)
export PYTHONPYCACHEPREFIX := $(CURDIR)/$(VENV)/pycache
endif
export PYTHONDONTWRITEBYTECODE :=

.PHONY: install run test test-js test-fast test-faults fuzz bench bench-spam browser screenshots lint typecheck checks format clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

# The optional native accelerators (src/intake/domain/native/*.c), built in place by the
# install (hatch_build.py): a changed source or header installs again. Without a C compiler the
# install goes on, and NATIVE_CHECK says in one line that intake runs its Python code.
NATIVE_SOURCES := $(wildcard src/intake/domain/native/*.c)
NATIVE_MODULES := $(subst /,.,$(patsubst src/%.c,%,$(NATIVE_SOURCES)))
INSTALL_INPUTS := pyproject.toml hatch_build.py $(NATIVE_SOURCES) \
  $(wildcard src/intake/domain/native/*.h)
NATIVE_CHECK := $(BIN)/python -c 'import importlib, sys; [importlib.import_module(m) for m in \
  sys.argv[1:]]' $(NATIVE_MODULES) 2>/dev/null || echo "warning: intake's native accelerators \
  did not build (no C compiler?): intake runs its pure-Python code, slower" >&2

$(STAMP): $(INSTALL_INPUTS) | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	@$(NATIVE_CHECK)
	touch $(STAMP)

# The development extras include what running needs: installed since the install's inputs
# last changed, they satisfy `run` as they are.
$(RUN_STAMP): $(INSTALL_INPUTS) | $(BIN)/python
	@if [ -n "$$(find $(INSTALL_INPUTS) -newer $(STAMP) 2>/dev/null)" ] || [ ! -e $(STAMP) ]; \
	  then $(BIN)/python -m pip install --quiet -e . || exit 1; $(NATIVE_CHECK); fi
	touch $(RUN_STAMP)

install: $(STAMP)

# Only what running needs, so that a first run is quick; `make test` adds the rest.
run: $(RUN_STAMP)
	$(BIN)/intake migrate
	$(BIN)/intake demo
	@echo "the intake command is $(BIN)/intake (or run \`source $(BIN)/activate\` first)"
	$(BIN)/intake serve

lint: install
	$(BIN)/ruff check src tests bench vulture_whitelist.py
	$(BIN)/ruff format --check src tests bench vulture_whitelist.py
	$(BIN)/vulture src vulture_whitelist.py --min-confidence 60

typecheck: install
	$(BIN)/mypy

# Both at once, each output kept whole (-O): mypy on a clean clone takes about 30 s of CPU
# and the linters about 2 s, of which one core each. Either failing fails this target, once
# both have finished.
checks: install
	@$(MAKE) --no-print-directory -j2 -O lint typecheck

# Parallel workers (pytest-xdist): much of the suite waits on servers it starts, so three
# keep two cores busy. Each test file stays on one worker, as its tests share servers and,
# for two of them, a Redis database of the file's own; the browser package stays on one
# worker whole, as its files share a browser and services. They are dealt longest first,
# by their times in earlier runs (tests/support/file_order.py). The HTTP suite runs on
# SQLite, and its PostgreSQL smoke set on PostgreSQL too (tests/README.md). Branch
# coverage of src/intake is measured across the workers, and the run fails under the floor
# that pyproject.toml's [tool.coverage.report] sets (`.venv/bin/coverage report` lists it
# by file).
TEST_WORKERS ?= 3
test: install browser test-js
	@$(MAKE) --no-print-directory -j3 -O lint typecheck $(BYTECODE)
	$(BIN)/pytest -q -m "not faults" -n $(TEST_WORKERS) --dist loadfile --cov --cov-report=

# The bytecode of what the tests import, the dependencies' included (it is kept under
# $(VENV)/pycache, not beside them), compiled by one process before the test workers
# start: on a clean clone each worker compiled the same modules at once, about 9 s of CPU
# each. Made again after an install; `make test` makes it beside the checks, where mypy
# alone keeps a core busy.
BYTECODE := $(VENV)/.bytecode-stamp
$(BYTECODE): $(STAMP)
	$(BIN)/pytest -q --collect-only tests >/dev/null
	touch $@

# intake.js's logic under Node's own test runner (no npm packages). Without node the
# target says so and passes, unless INTAKE_REQUIRE_SERVICES=1 asks for every check.
test-js:
	@if command -v node >/dev/null 2>&1; then node --test tests/js/; \
	elif [ "$$INTAKE_REQUIRE_SERVICES" = 1 ]; then echo "node is not installed" >&2; exit 1; \
	else echo "node is not installed: the JavaScript tests are skipped"; fi

# The fault-injection scenarios start their own servers and run for minutes: a target
# of their own (CI runs both). Chosen by the marker alone, as `make test` leaves them out
# by it: a test marked `faults` anywhere runs here, so none falls between the two.
test-faults: install
	$(BIN)/pytest -q -s -m faults

# A longer fuzzing run than the time-bounded one in `make test`.
FUZZ_SECONDS ?= 600
fuzz: install
	$(BIN)/python -m tests.fuzz.run --seconds $(FUZZ_SECONDS)

bench: install
	$(BIN)/python -m bench $(BENCH_ARGS)

# The learning spam filter against bogofilter, online over the SpamAssassin public corpus,
# fetched once into ~/.cache/intake-bench/spam (docs/scoring.md, "Measured").
bench-spam: install
	$(BIN)/python -m bench.spam $(BENCH_SPAM_ARGS)

# Debian's Chromium for the browser tests; no browser is ever downloaded by a test tool.
browser:
	@command -v chromium >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    apt-get install -y -q chromium >/dev/null 2>&1 \
	      || { apt-get update -q >/dev/null 2>&1 && apt-get install -y -q chromium >/dev/null; } \
	      || echo "could not install chromium"; \
	  else echo "chromium is not installed: the browser tests will skip"; fi; }

# The screenshots of docs/dashboard.md and docs/browsers.md, taken by browser tests in Chromium.
screenshots: install browser
	INTAKE_DOCS_SCREENSHOTS=docs/images/dashboard $(BIN)/pytest -q \
	  tests/browser/test_dashboard_look.py -k test_the_docs_screenshots
	INTAKE_DOCS_SCREENSHOTS=docs/images/dashboard $(BIN)/pytest -q \
	  tests/browser/test_dashboard_charts.py
	INTAKE_DOCS_SCREENSHOTS=docs/images/dashboard $(BIN)/pytest -q \
	  tests/browser/test_dashboard_inbox_tools.py
	INTAKE_DOCS_SCREENSHOTS=docs/images/browsers $(BIN)/pytest -q \
	  tests/browser/test_client_form.py tests/browser/test_plain_form_states.py -k "sqlite or states"

# The inner loop, in under a minute: the unit, property and contract tests and the
# in-process HTTP suite, on the memory and SQLite stores, with fewer Hypothesis examples
# (the `fast` profile of tests/conftest.py). What needs PostgreSQL or Redis, starts
# processes, or drives a browser is left to `make test`, and so is coverage. Files are
# dealt to the workers whole, as in `make test`, and to three of them: the third fills a
# core while another waits on a child process (the template workers, a fresh
# interpreter), and on a machine others share, it ended the run sooner (a quarter less
# wall time in alternated runs) for a few seconds more CPU, its own collection. Pass
# pytest options in ARGS, e.g. `make test-fast ARGS=--lf` to rerun only what failed last
# time.
FAST_TESTS := tests/unit tests/property tests/contract tests/http
FAST_MARKERS := not services and not slow and not faults and not browser
FAST_WORKERS ?= 3
test-fast: install $(BYTECODE)
	INTAKE_TEST_HYPOTHESIS_PROFILE=fast $(BIN)/pytest -q -x -m "$(FAST_MARKERS)" \
	  -n $(FAST_WORKERS) --dist loadfile $(FAST_TESTS) $(ARGS)

format: install
	$(BIN)/ruff check --fix src tests
	$(BIN)/ruff format src tests

clean:
	rm -f src/intake/domain/native/*.so
	rm -rf $(VENV) .intake .mypy_cache .ruff_cache .pytest_cache .hypothesis .coverage .coverage.*
