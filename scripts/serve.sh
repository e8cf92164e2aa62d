#!/usr/bin/env bash
# The production server: uvicorn serving the ASGI application (tutor.asgi), used by `make serve`
# and by `make run`. Each setting comes from the environment:
#   RUN_ADDR             host:port to listen on (127.0.0.1:8000)
#   WEB_CONCURRENCY      worker processes (2; each one serves many turns at once)
#   WEB_KEEPALIVE        seconds an idle keep-alive connection stays open (5)
#   WEB_GRACEFUL_TIMEOUT seconds a stopping worker gives its requests and turns (30); new requests get a
#                        503 meanwhile, and turns still running near the end an `error` event
#                        (tutor.server.Drain, docs/operations.md)
#   WEB_BACKLOG          pending connections the socket queues (2048)
#   WEB_WORKER_HEALTHCHECK_SECONDS  seconds a worker process has to answer its supervisor's health
#                        check, its start-up included (60); one that does not is killed and started
#                        again, so a value below a loaded machine's start-up never serves
#   WEB_MAX_URL_BYTES    longer URLs get a JSON 414 (16384)
#   WEB_FORWARDED_ALLOW_IPS  the proxies (addresses or networks, comma-separated) whose X-Forwarded-For
#                        and X-Forwarded-Proto uvicorn trusts (127.0.0.1,::1): the client's address
#                        (sign-in's rate and lockouts) is the proxy's own unless it is listed here
#   WEB_ACCESS_LOG       1: log every request (off: the proxy in front logs them, and it costs CPU)
#   PROMETHEUS_MULTIPROC_DIR  where the worker processes write their metrics for /metrics to add up
#                        (var/metrics/web-<port>); emptied here at each start (core.metrics)
set -euo pipefail
cd "$(dirname "$0")/.."
PY="${VENV:-.venv}/bin/python"
ADDR="${RUN_ADDR:-127.0.0.1:8000}"
export PROMETHEUS_MULTIPROC_DIR="${PROMETHEUS_MULTIPROC_DIR:-var/metrics/web-${ADDR##*:}}"
rm -rf "$PROMETHEUS_MULTIPROC_DIR" && mkdir -p "$PROMETHEUS_MULTIPROC_DIR"
# uvicorn's own lines, its supervisor's included, in the project's format (LOG_FORMAT: the
# settings' LOGGING, tutor.settings.logs), from a file written at each start.
LOG_CONFIG="${TUTOR_VAR_DIR:-var}/uvicorn-logging-${ADDR##*:}.json"
mkdir -p "$(dirname "$LOG_CONFIG")"
DJANGO_SETTINGS_MODULE="${DJANGO_SETTINGS_MODULE:-tutor.settings.base}" "$PY" -c \
  'import json; from django.conf import settings; print(json.dumps(settings.LOGGING))' >"$LOG_CONFIG"
exec "$PY" -m uvicorn tutor.asgi:application \
  --host "${ADDR%:*}" --port "${ADDR##*:}" \
  --workers "${WEB_CONCURRENCY:-2}" \
  --timeout-keep-alive "${WEB_KEEPALIVE:-5}" \
  --timeout-graceful-shutdown "${WEB_GRACEFUL_TIMEOUT:-30}" \
  --backlog "${WEB_BACKLOG:-2048}" \
  --timeout-worker-healthcheck "${WEB_WORKER_HEALTHCHECK_SECONDS:-60}" \
  --proxy-headers --forwarded-allow-ips "${WEB_FORWARDED_ALLOW_IPS:-127.0.0.1,::1}" \
  --no-server-header --lifespan on --http tutor.server:HttpProtocol --log-config "$LOG_CONFIG" \
  $([ "${WEB_ACCESS_LOG:-0}" = 1 ] && echo --access-log || echo --no-access-log) \
  "$@"
