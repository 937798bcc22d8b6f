# evalbench — `make report` renders every study, `make test` runs the test suite.
# Both set up .venv on first use (uv when it is on PATH, else python3 -m venv + pip).

VENV   ?= .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed
UV     := $(shell command -v uv 2>/dev/null)
PYTEST_ARGS ?=
# pytest-xdist processes for `make test` / `make test-fast` (0: one process; `--dist loadgroup`
# keeps the tests of one xdist_group in one process). 3 on this project's 2-core machines: a
# third of the suite's time is waiting (processes and kernels starting, servers, timeouts),
# which a third process fills: full suite 261 s with 3 vs 297 s with 2 (2026-11-29).
# Bytecode is written (__pycache__, ignored by git) even under PYTHONDONTWRITEBYTECODE: without
# it pytest rewrites every test file and each kernel compiles evalbench again, at every start.
TEST_JOBS ?= 3
PYTEST := env -u PYTHONDONTWRITEBYTECODE $(PY) -m pytest -n $(TEST_JOBS) --dist loadgroup
# BFCL multi-turn runs in the official backend classes: bfcl-eval without its dependency set
BFCL_EVAL ?= bfcl-eval==2026.3.23
LAB_ARGS ?=
# Jupyter refuses to run as root without --allow-root (the user of many containers)
ALLOW_ROOT = $(if $(filter 0,$(shell id -u)),--allow-root)

.PHONY: setup report test test-fast lab check bench clean

setup: $(STAMP)

$(STAMP): pyproject.toml
ifneq ($(UV),)
	uv venv --allow-existing --python python3 $(VENV)
	UV_COMPILE_BYTECODE=1 uv pip install --python $(PY) -e '.[dev,lab]'
	uv pip install --python $(PY) --no-deps $(BFCL_EVAL)
else
	python3 -m venv $(VENV)
	$(PY) -m pip install --quiet --disable-pip-version-check -e '.[dev,lab]'
	$(PY) -m pip install --quiet --disable-pip-version-check --no-deps $(BFCL_EVAL)
endif
	@touch $(STAMP)

report: $(STAMP)       ## render every study in params/ and outputs/index.html
	$(VENV)/bin/evalbench report

test: $(STAMP)         ## the full test suite
	$(PYTEST) $(PYTEST_ARGS)

test-fast: $(STAMP)    ## the suite without the slow (studies rendered, processes, > ~0.2 s CPU) and browser tests
	$(PYTEST) -m "not slow and not browser" $(PYTEST_ARGS)

lab: $(STAMP)          ## JupyterLab on the notebooks (LAB_ARGS: more jupyter lab options)
	$(VENV)/bin/jupyter lab --notebook-dir=notebooks $(ALLOW_ROOT) $(LAB_ARGS)

check: $(STAMP)        ## lint, format check, types
	$(VENV)/bin/ruff check evalbench tests notebooks
	$(VENV)/bin/ruff format --check evalbench tests notebooks
	$(VENV)/bin/mypy

bench: $(STAMP)        ## performance benchmarks, side by side with peers -> outputs/bench/*.json
	-$(PY) tests/bench_peers.py   # FastChat + Arena-Hard files, a bfcl-eval venv (~/.cache/evalbench/bench-peers)
	$(PY) tests/bench_models.py
	$(PY) tests/bench_local.py     # a real model evalbench serves (local extra; skipped without it)
	$(PY) tests/bench_bfcl.py
	$(PY) tests/bench_arena.py
	$(PY) tests/bench_agents.py
	$(PY) tests/bench_ray.py      # needs the ray extra; reported as skipped without it
	$(PY) tests/agents/bench_sandbox.py
	$(PY) tests/bench_sweep.py       # a 64-cell sweep of the GAIA demo, report included

clean:                 ## remove the virtualenv and generated outputs (keeps the caches)
	rm -rf $(VENV) outputs/*/ outputs/index.html
