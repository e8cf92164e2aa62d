#!/usr/bin/env bash
# Each benchmark at its smallest size (`--smoke`), as a CI step: the benchmarks still run from
# end to end with the code as it is now, and their results go to a temporary directory, never
# to bench/results/. The timings of a smoke run mean nothing; bench/README.md has the measured
# ones.
#
#     DATABASE_URL=postgres://... bench/smoke.sh      # a PostgreSQL with pgvector (scripts/pgsearch.py)
#
# DATABASE_URL names a PostgreSQL database the benchmarks may write to (each one creates and
# drops what it needs). Every command below must pass; the script stops at the first that fails.
set -euo pipefail
cd "$(dirname "$0")/.."

PY="${VENV:-.venv}/bin/python"
: "${DATABASE_URL:?bench/smoke.sh needs DATABASE_URL: a PostgreSQL with pgvector (scripts/pgsearch.py start DIR)}"
OUT="$(mktemp -d -t tutor-bench-smoke-XXXXXX)"
export TUTOR_VAR_DIR="$OUT/var"
mkdir -p "$TUTOR_VAR_DIR"

times=()
run() {
  local started
  started=$(date +%s)
  printf '\n== bench smoke: %s\n' "$*"
  "$@"
  times+=("$(printf '%5d s  %s' "$(( $(date +%s) - started ))" "$*")")
}

# One command per benchmark, each at its smallest size.
SERVER_URL="${DATABASE_URL%/*}"
RECALL_SET="${RECALL_SET:-../shared/bench-data/locomo-session-memories.json}"
run "$PY" bench/chat_turn.py --smoke --output "$OUT/chat_turn.json"
run "$PY" bench/screening.py --smoke --output "$OUT/screening.json"
# Its own server on the embedded SQLite default, in a temporary directory, whatever DATABASE_URL says.
run "$PY" bench/safety_api.py --smoke
run env BENCH_PG_SERVER="$SERVER_URL" "$PY" bench/load.py --smoke --redis-db "${BENCH_REDIS_DB:-14}"
run "$PY" manage.py migrate --noinput -v 0
run "$PY" bench/recall_latency.py --smoke --json "$OUT/recall_latency.json"
run "$PY" bench/lexical_alternatives.py --smoke
run "$PY" bench/embeddings.py latency --smoke --json "$OUT/embeddings.json"
run "$PY" bench/embeddings.py parts --smoke --json "$OUT/embeddings_parts.json"
run env -u DATABASE_URL "$PY" bench/recall_memory.py --smoke --json "$OUT/recall_memory.json"
run "$PY" bench/roster_import.py --smoke --json "$OUT/roster_import.json"
run "$PY" bench/access_log.py --smoke --json "$OUT/access_log.json"
run "$PY" bench/middleware.py --smoke --json "$OUT/middleware.json"
# The recall set is LoCoMo (CC BY-NC), read where it lies, never copied into the project.
if [ -f "$RECALL_SET" ]; then
  run "$PY" bench/lexical_quality.py "$RECALL_SET" --smoke
  run env EMBEDDINGS_BACKEND=local "$PY" bench/peers.py "$RECALL_SET" --smoke --json "$OUT/peers.json"
  run env -u DATABASE_URL "$PY" bench/embeddings_int8.py "$RECALL_SET" --smoke
else
  printf '
== bench smoke: no recall set at %s: lexical_quality, peers and embeddings_int8 not run
' "$RECALL_SET"
fi

printf '\n== bench smoke: every benchmark ran (results in %s)\n' "$OUT"
printf '%s\n' "${times[@]}"
