"""The service's metrics, in the Prometheus format (prometheus-client), and where they are read.

Each metric is defined here once; the code that knows an event calls the small helpers below
(`turn_observed`, `usage_observed`...), never prometheus-client itself, so that names, labels
and buckets stay in one place. Labels are bounded sets (an outcome, a purpose, a URL pattern's
name), never a user, a conversation or a raw path.

Multiprocess mode: with PROMETHEUS_MULTIPROC_DIR set in the environment before the process
starts (scripts/serve.sh, scripts/run_dev.sh and the Celery worker set it), every process writes
its samples to files there and `/metrics` (core.metrics_views) adds them up. The directory is
emptied when the server or the worker starts (`multiprocess_dir_reset`), and a process that
exits is marked dead (`process_exited`). Without it (the in-process tests, one-off commands) the
samples stay in this process's default registry.

The queue depths, the oldest task's age and the backlogs are not counted by anyone: the
collector of core.metrics_collector reads them from the broker and the database at each scrape.
"""

from __future__ import annotations

import atexit
import os
import time
from decimal import Decimal
from pathlib import Path

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, multiprocess

MULTIPROC_ENV = "PROMETHEUS_MULTIPROC_DIR"

if os.environ.get(MULTIPROC_ENV):
    # prometheus-client writes a file there for each metric without labels as it is defined.
    Path(os.environ[MULTIPROC_ENV]).mkdir(parents=True, exist_ok=True)

# Seconds: the first token and a whole turn against a model, recall, a wait for a connection.
_TURN_BUCKETS = (0.1, 0.25, 0.5, 1, 2, 3, 5, 8, 13, 20, 30, 60, 120)
_FAST_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10)
_LAG_BUCKETS = (1, 2, 5, 10, 20, 30, 60, 120, 300, 600, 1800, 3600, 4 * 3600, 24 * 3600)

TURNS = Counter("tutor_turns", "Chat turns that ended, by outcome (ok, or the error code).", ["outcome"])
TURN_FIRST_TOKEN = Histogram(
    "tutor_turn_first_token_seconds", "From a turn's claim to the first token of its reply.", buckets=_TURN_BUCKETS
)
TURN_SECONDS = Histogram(
    "tutor_turn_seconds", "From a turn's claim to its end (reply stored, or error).", buckets=_TURN_BUCKETS
)
MODEL_ERRORS = Counter("tutor_model_errors", "Failed model calls, by purpose and kind.", ["purpose", "kind"])
MODEL_TOKENS = Counter("tutor_model_tokens", "Tokens of the model calls, by purpose and kind.", ["purpose", "kind"])
MODEL_COST = Counter("tutor_model_cost_usd", "Cost of the model calls in USD, by purpose.", ["purpose"])
SUMMARY_LAG = Histogram(
    "tutor_summary_lag_seconds", "From a conversation's end to its summary stored.", buckets=_LAG_BUCKETS
)
RECALL_SECONDS = Histogram(
    "tutor_recall_seconds", "Recall of the memories shown for a message (its database step).", buckets=_FAST_BUCKETS
)
DB_POOL_WAIT = Histogram(
    "tutor_db_pool_wait_seconds", "Waits for a pooled database connection (PostgreSQL).", buckets=_FAST_BUCKETS
)
DB_POOL_TIMEOUTS = Counter("tutor_db_pool_timeouts", "Waits for a database connection that timed out.")
THROTTLED = Counter("tutor_throttled_requests", "Requests refused by a throttle or a sign-in limit.", ["scope"])
RESPONSES = Counter(
    "tutor_http_responses", "HTTP responses by URL pattern name, method and status.", ["route", "method", "status"]
)
SAFETY_UNROUTED = Counter(
    "tutor_safety_alerts_unrouted",
    "Crisis alerts that reached none of the student's own recipients, by who got them instead "
    "(fallback: the safety lead or staff; nobody).",
    ["outcome"],
)
TURNS_RUNNING = Gauge("tutor_turns_running", "Chat turns in progress.", multiprocess_mode="livesum")


def turn_first_token(seconds: float) -> None:
    TURN_FIRST_TOKEN.observe(seconds)


def turn_observed(*, outcome: str, seconds: float) -> None:
    """A turn ended: `outcome` is "ok" or the error code its feed ended with."""
    TURNS.labels(outcome=outcome).inc()
    TURN_SECONDS.observe(seconds)


def usage_observed(*, purpose: str, prompt_tokens: int, completion_tokens: int, cost: float | Decimal) -> None:
    """A model call counted (llm.gateway): its tokens and cost under its purpose."""
    MODEL_TOKENS.labels(purpose=purpose, kind="prompt").inc(prompt_tokens)
    MODEL_TOKENS.labels(purpose=purpose, kind="completion").inc(completion_tokens)
    MODEL_COST.labels(purpose=purpose).inc(float(cost))


def model_error(*, purpose: str, kind: str) -> None:
    MODEL_ERRORS.labels(purpose=purpose, kind=kind).inc()


def summary_stored(*, ended_at: float | None) -> None:
    """A summary stored for the first time; `ended_at`: the conversation's end (a timestamp)."""
    if ended_at is not None:
        SUMMARY_LAG.observe(max(0.0, time.time() - ended_at))


def throttled(scope: str) -> None:
    THROTTLED.labels(scope=scope).inc()


def safety_alert_unrouted(*, outcome: str) -> None:
    SAFETY_UNROUTED.labels(outcome=outcome).inc()


def response_observed(*, route: str, method: str, status: int) -> None:
    RESPONSES.labels(route=route, method=method, status=str(status)).inc()


# --- Multiprocess mode ------------------------------------------------------------------------


def multiprocess_dir() -> Path | None:
    """The directory the processes share their samples in, or None (one process)."""
    value = os.environ.get(MULTIPROC_ENV, "")
    return Path(value) if value else None


def multiprocess_dir_reset() -> None:
    """Empty the shared directory: called once by the process that starts the others (the
    server's supervisor, the Celery main process) before any of them writes a sample. Samples of
    an earlier run would otherwise be added to this run's."""
    directory = multiprocess_dir()
    if directory is None:
        return
    own = f"_{os.getpid()}.db"
    if directory.exists():
        for path in directory.glob("*.db"):
            if not path.name.endswith(own):  # this process's own files are open already
                path.unlink(missing_ok=True)
    directory.mkdir(parents=True, exist_ok=True)


def process_exited(pid: int | None = None) -> None:
    """Drop the live gauges of a process that has stopped (its counters stay in the sums)."""
    if multiprocess_dir() is not None:
        multiprocess.mark_process_dead(pid or os.getpid())


def default_registry() -> CollectorRegistry:
    from prometheus_client import REGISTRY

    return REGISTRY


def registry(extra_dirs: list[str] | tuple[str, ...] = ()) -> CollectorRegistry:
    """The registry `/metrics` reads: in multiprocess mode, the samples of every process writing
    to this process's directory and to `extra_dirs` (METRICS_EXTRA_DIRS: the Celery worker's on
    the same host); else this process's default registry."""
    directory = multiprocess_dir()
    if directory is None:
        return default_registry()
    shared = CollectorRegistry()
    multiprocess.MultiProcessCollector(shared, path=str(directory))
    for extra in extra_dirs:
        if extra and Path(extra).is_dir() and Path(extra) != directory:
            multiprocess.MultiProcessCollector(shared, path=extra)
    return shared


def exposition_start(address: str) -> tuple[str, int]:
    """Serve this process group's samples at `http://<address>/metrics` from a thread of this
    process (prometheus-client's own HTTP server): a worker node, which runs no web server, is
    scraped there (WORKER_METRICS_ADDR, "host:port"). The server has no token, so the host must
    be a loopback or private address; anything else raises ValueError. Returns where it listens
    (port 0: a free port)."""
    import ipaddress

    from prometheus_client import start_http_server

    host, _, port = address.rpartition(":")
    host = host.strip("[]")
    ip = ipaddress.ip_address(host)
    if ip.is_unspecified or not (ip.is_loopback or ip.is_private):
        raise ValueError(f"WORKER_METRICS_ADDR: {host} is not a loopback or private address")
    server, _thread = start_http_server(int(port), addr=host, registry=registry())
    return host, int(server.server_port)


if multiprocess_dir() is not None:
    # A uvicorn worker (a spawned process) runs its atexit handlers as it stops; Celery's forked
    # pool processes do not, and are marked dead by tutor.celery instead.
    atexit.register(process_exited)
