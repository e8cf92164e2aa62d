# Two commands: `make run` (server + Celery worker and beat, embedded SQLite and filesystem
# broker, no external service) and `make test` (ruff, mypy, migrations check, pytest).
# `make serve` is the production server alone (uvicorn, scripts/serve.sh); `make run` uses it too.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python

.PHONY: run serve test install install-dev lint bench bench-load clean

$(VENV)/.runtime: requirements.txt
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -r requirements.txt
	touch $@

# The test suite exercises the local embedder for real, so `make test` installs it too
# (CPU torch; `make run` does not need it).
$(VENV)/.dev: $(VENV)/.runtime requirements-dev.txt requirements-embeddings.txt
	$(PY) -m pip install --quiet -r requirements-dev.txt -r requirements-embeddings.txt
	touch $@

install: $(VENV)/.runtime
install-dev: $(VENV)/.dev

run: install
	$(PY) manage.py migrate --noinput
	$(PY) manage.py seed_demo
	VENV=$(VENV) ./scripts/run_dev.sh

serve: install
	VENV=$(VENV) ./scripts/serve.sh

lint: install-dev
	$(PY) -m ruff check .
	$(PY) -m mypy .
	$(PY) manage.py makemigrations --check --dry-run

test: lint
	$(PY) -m pytest

bench: install-dev
	$(PY) bench/chat_turn.py

# The chat turn under load: 200 students against the production server, beside the previous
# synchronous code (bench/README.md). Needs PostgreSQL and Redis on their default ports.
bench-load: install-dev
	$(PY) -m pip install --quiet -r requirements-bench.txt
	$(PY) bench/load.py

clean:
	rm -rf var .pytest_cache .mypy_cache .ruff_cache
