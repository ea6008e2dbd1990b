# Two entry points do all set-up: `make run` and `make test`.
PY      ?= python3.11
VENV    := .venv
BIN     := $(VENV)/bin
STAMP   := $(VENV)/.installed
# Nothing is written here but .venv/, duplirank.egg-info/ and data/warehouse/: Prefect's state
# and the run logs go to the user's state folder (flows/prefect_env.py, flows/runlog.py).

.PHONY: run test lint bench clean

$(STAMP): requirements.lock pyproject.toml
	test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -r requirements.lock
	$(BIN)/python -m pip install -q --no-deps -e .
	touch $(STAMP)

run: $(STAMP)
	$(BIN)/duplirank nightly --landing data/sample --warehouse data/warehouse

# the tests in TEST_WORKERS processes (pytest-xdist): many wait on subprocesses, servers and
# the disk, so three keep two cores busy
TEST_WORKERS ?= 3

# lint first: a lint or format error fails the suite before any test runs
test: lint
	$(BIN)/python -m pytest -n $(TEST_WORKERS)

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

bench: $(STAMP)
	$(BIN)/python bench/run_all.py

clean:
	rm -rf data/warehouse
