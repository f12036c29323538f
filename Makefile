# Two commands on a fresh clone: `make run` (install + open the app on sample_kb/) and `make test`.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-$(shell cksum pyproject.toml | cut -d' ' -f1)

.PHONY: lint run test fuzz bench check clean

# -qq on the project install: pip shows a local build's backend messages at warning level, and
# setuptools always says "Editable installation" for the remapped config/ and sample_kb/ packages;
# errors still show.
# One stamp per extra, each keyed to pyproject.toml: `make run` installs the runtime only
# (textual, numpy, nltk, pydantic), `make test` adds the test extra and `make bench` the bench
# extra (the BM25 peers), each on top of what is already there rather than reinstalling it.
$(VENV)/.created:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	touch $@

$(STAMP)-%: pyproject.toml $(VENV)/.created
	$(BIN)/python -m pip install -qq -e '.$(if $(filter-out runtime,$*),[$*])'
	rm -f $(VENV)/.installed-*-$*
	touch $@

run: $(STAMP)-runtime
	$(BIN)/mrptui $(ARGS)

# Lint, format and types before the tests (issue 37): ruff's rules and layout (pyproject.toml), mypy
# (strict on core/kernel and core/question; its cache makes a rerun ~2 s). `make lint` alone too.
lint: $(STAMP)-test
	$(BIN)/ruff check --quiet .
	$(BIN)/ruff format --check --quiet .
	$(BIN)/mypy

# Three workers on the two cores (pytest-xdist): with two, a quiet run kept the cores 80% busy (458
# CPU s in 288 s of wall, 2026-11-30): the rest was a worker waiting (Pilot's idle checks, CLI
# subprocesses, Dask and HTTP servers), which a third worker fills. Distributed by file, so a
# module's fixtures are built once and one worker judges all of a file's snapshots
# (tests/conftest.py). `make test PYTEST_WORKERS=0` runs everything in one process.
PYTEST_WORKERS ?= 3

# Bytecode written once up front: where the environment sets PYTHONDONTWRITEBYTECODE, each of the
# suite's CLI subprocesses would otherwise compile the engine again (~0.3 CPU s each). pytest runs
# without that variable: with it, every xdist worker rewrites the asserts of all ~300 test modules
# again on every run (collecting took 13.8 CPU s per worker, 5.5 with the rewritten modules cached).
# numba's two kernels compiled (or loaded from their disk cache, `__pycache__/*.nbi`) beside lint,
# on the core mypy leaves idle: in a clean clone that compile (~18 CPU s) was paid inside pytest.
WARM_KERNELS := import core.retrieval.bm25.prune, core.retrieval.hdc.kernel

test: $(STAMP)-test
	{ $(BIN)/python -m compileall -q core mrptui benchmarks && $(BIN)/python -c '$(WARM_KERNELS)'; } & warm=$$!; \
	$(MAKE) --no-print-directory lint || { wait $$warm; exit 1; }; wait $$warm
	env -u PYTHONDONTWRITEBYTECODE $(BIN)/python -m pytest -n $(PYTEST_WORKERS) --dist loadfile $(PYTEST_ARGS)

# The property, fault and fuzz suites with the `fuzz` hypothesis profile (tests/conftest.py): ten
# times the examples of `make test`, fresh ones each run, with per-test counts printed.
FUZZ_TESTS ?= $(wildcard tests/properties/test_*.py)

fuzz: $(STAMP)-test
	HYPOTHESIS_PROFILE=fuzz $(BIN)/python -m pytest -q --hypothesis-show-statistics $(FUZZ_TESTS) $(PYTEST_ARGS)

bench: $(STAMP)-bench
	$(BIN)/python -m benchmarks $(ARGS)

check: $(STAMP)-runtime
	$(BIN)/mrptui check sample_kb config

clean:
	rm -rf $(VENV) build *.egg-info
