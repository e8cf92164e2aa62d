#!/usr/bin/env bash
# `make run`: the production server (scripts/serve.sh) with a real Celery worker (and beat) beside it.
set -euo pipefail
cd "$(dirname "$0")/.."
PY="${VENV:-.venv}/bin/python"
"$PY" -m celery -A tutor worker -B -l INFO --concurrency=2 -Q "${CELERY_QUEUE:-tutor}" &
WORKER=$!
trap 'kill $WORKER 2>/dev/null; wait $WORKER 2>/dev/null' EXIT INT TERM
VENV="${VENV:-.venv}" ./scripts/serve.sh
