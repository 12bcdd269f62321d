# steptp developer entry points. `make demo` and `make test` are the two set-up commands of the README;
# both create .venv on first use and (re)install only when pyproject.toml changed since the last install.

PYTHON ?= python3.11
VENV ?= .venv
BIN := $(VENV)/bin
PY := $(BIN)/python
# Touched after a successful install; make compares its mtime with pyproject.toml's.
STAMP := $(VENV)/.steptp-installed
# Touched after `npm ci` and the copy into static/vendor; remade when the lock file or the manifest changes.
ASSETS := static/vendor/.steptp-assets
HOST ?= 127.0.0.1
PORT ?= 8000
# `make test` runs the suite in this many pytest-xdist processes (one per core on the CI machine).
TEST_PROCESSES ?= 2
# Every queue but verify.cuda, which only GPU machines serve (make worker-gpu).
CPU_QUEUES := generate,verify.cpu,export,tune

.PHONY: install assets demo test lint bench worker worker-gpu

install: $(STAMP) $(ASSETS)

assets: $(ASSETS)

$(ASSETS): package.json package-lock.json scripts/build_assets.py
	npm ci --no-audit --no-fund --ignore-scripts
	$(PYTHON) scripts/build_assets.py
	touch $@

$(PY):
	$(PYTHON) -m venv $(VENV)

$(STAMP): pyproject.toml | $(PY)
	$(PY) -m pip install -e '.[test]'
	touch $@

demo: $(STAMP) $(ASSETS)
	$(PY) manage.py migrate --noinput
	$(PY) manage.py demo --host $(HOST) --port $(PORT)

test: $(STAMP) $(ASSETS)
	$(PY) -m pytest -n $(TEST_PROCESSES) --dist loadgroup
	$(BIN)/ruff check .

lint: $(STAMP)
	$(BIN)/ruff check .

bench: $(STAMP)
	@set -e; for script in bench/[!_]*.py; do \
		[ -e "$$script" ] || { echo "no benchmarks in bench/"; break; }; \
		echo "== $$script"; $(PY) "$$script"; \
	done

worker: $(STAMP)
	$(BIN)/celery -A steptp_web worker -Q $(CPU_QUEUES) -n cpu@%h --pool threads --concurrency 2 -l INFO

worker-gpu: $(STAMP)
	$(BIN)/celery -A steptp_web worker -Q verify.cuda -n gpu@%h --pool threads --concurrency 1 -l INFO
