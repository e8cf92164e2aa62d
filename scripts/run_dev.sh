#!/usr/bin/env bash
# The development server with a real Celery worker (and beat) beside it.
set -euo pipefail
cd "$(dirname "$0")/.."
PY="${VENV:-.venv}/bin/python"
"$PY" -m celery -A tutor worker -B -l INFO --concurrency=2 -Q "${CELERY_QUEUE:-tutor}" &
WORKER=$!
trap 'kill $WORKER 2>/dev/null; wait $WORKER 2>/dev/null' EXIT INT TERM
"$PY" manage.py runserver "${RUN_ADDR:-127.0.0.1:8000}"
