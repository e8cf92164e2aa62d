#!/usr/bin/env bash
# `make run`: the production server (scripts/serve.sh) with a real Celery worker (and beat) beside it.
# Once the server answers, `seed_demo --wait-for` prints the demo accounts, which model answers and
# where to go (GET /'s links at RUN_ADDR), after the start-up lines. Ctrl+C or SIGTERM stops every
# process started here.
#
# What differs from a deployment, for a first run on one machine (each may be set to override it):
#   the demo model       with neither LLM_BASE_URL nor LLM_API_KEY set, llm/demo_model.py (scripted
#                        answers, on a free port) answers, with LLM_DEMO_MODEL=1 so that the pages and
#                        the banner say so (DEMO_MODEL=0: no model, the chat answers 503)
#   LLM_MAX_REPLY_TOKENS 400: a small local model writes a few tokens a second
#   EMBEDDINGS_BACKEND   none (lexical recall): `make test` installs the local embedder in the same
#                        virtualenv, which would otherwise take ~400 MB in each process; set it to
#                        local to use it
#   WORKER_LOG_LEVEL     WARNING: the worker's and the scheduler's lines of every task would push
#                        the banner off the screen; errors still show
set -euo pipefail
cd "$(dirname "$0")/.."
export VENV="${VENV:-.venv}"
PY="$VENV/bin/python"
ADDR="${RUN_ADDR:-127.0.0.1:8000}"
HOST="${ADDR%:*}"
# A server listening on every interface is reached from this machine at 127.0.0.1.
case "$HOST" in 0.0.0.0 | :: | "[::]") HOST=127.0.0.1 ;; esac

# On Ctrl+C, SIGTERM or the server's exit, each process started here gets one SIGTERM (Ctrl+C alone
# would not reach the banner: bash starts background processes with SIGINT ignored), and the
# script returns once all of them have stopped. A worker still in its warm shutdown after
# STOP_SECONDS gets SIGQUIT (Celery's cold shutdown, which ends its pool too), then SIGKILL.
# The worker and the server run in sessions of their own (setsid), so a SIGTERM sent to this
# script's process group (a service manager, `kill -- -PGID`) reaches their main processes only,
# through this script: Celery's pool processes and uvicorn's workers are stopped by their parent.
# A SIGTERM reaching a pool process directly killed it mid-task, and the worker, in its warm
# shutdown, started new pool processes in its place (docs/operations.md, "Stopping cleanly").
WORKER="" SERVER="" BANNER="" DEMO=""
STOP_SECONDS="${STOP_SECONDS:-20}"
running() {
  local pid
  for pid in "$@"; do kill -0 "$pid" 2>/dev/null && return 0; done
  return 1
}
wait_stopped() {
  local tenths=$(($1 * 10))
  shift
  while running "$@" && [ "$tenths" -gt 0 ]; do sleep 0.1; tenths=$((tenths - 1)); done
}
stop_all() {
  kill $BANNER $SERVER $WORKER $DEMO 2>/dev/null || true
  wait_stopped "$STOP_SECONDS" $BANNER $SERVER $WORKER $DEMO
  if [ -n "$WORKER" ] && running "$WORKER"; then
    kill -QUIT "$WORKER" 2>/dev/null || true
    wait_stopped 5 "$WORKER"
  fi
  kill -KILL $BANNER $SERVER $WORKER $DEMO 2>/dev/null || true
  wait
}
trap stop_all EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

if [ -z "${LLM_BASE_URL:-}" ] && [ -z "${LLM_API_KEY:-}" ] && [ "${DEMO_MODEL:-1}" != 0 ]; then
  DEMO_PORT="${DEMO_MODEL_PORT:-$("$PY" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')}"
  "$PY" -m llm.demo_model --port "$DEMO_PORT" &
  DEMO=$!
  export LLM_BASE_URL="http://127.0.0.1:$DEMO_PORT/v1" LLM_MODEL="${LLM_MODEL:-demo}" LLM_DEMO_MODEL=1
  # Its window is set: nothing asks a server that may not listen yet.
  export LLM_CONTEXT_WINDOW="${LLM_CONTEXT_WINDOW:-8192}"
fi
export LLM_MAX_REPLY_TOKENS="${LLM_MAX_REPLY_TOKENS:-400}"
export EMBEDDINGS_BACKEND="${EMBEDDINGS_BACKEND:-none}"

# Each process group writes its metrics to a folder of its own (emptied at its start); the
# server's /metrics adds the worker's (METRICS_EXTRA_DIRS, core.metrics).
WORKER_METRICS_DIR="${WORKER_METRICS_DIR:-var/metrics/worker}"
export METRICS_EXTRA_DIRS="${METRICS_EXTRA_DIRS:-$WORKER_METRICS_DIR}"
mkdir -p "$WORKER_METRICS_DIR"
# One worker reads every queue (without -Q: every queue declared, tutor/settings/celery.py), with beat.
PROMETHEUS_MULTIPROC_DIR="$WORKER_METRICS_DIR" setsid "$PY" -m celery -A tutor --quiet worker -B \
  -l "${WORKER_LOG_LEVEL:-WARNING}" --concurrency=2 &
WORKER=$!
setsid ./scripts/serve.sh &
SERVER=$!
"$PY" manage.py seed_demo --wait-for "http://$HOST:${ADDR##*:}/" &
BANNER=$!
wait "$SERVER"
