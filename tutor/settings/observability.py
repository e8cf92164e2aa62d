"""Health and metrics (core.health, core.metrics, docs/operations.md#health-and-metrics)."""

from __future__ import annotations

from .env import env_int, env_list, env_str

# /metrics answers a scraper with `Authorization: Bearer <METRICS_TOKEN>`; without a token, only
# clients at a loopback or private address (REMOTE_ADDR). Set one behind a load balancer.
METRICS_TOKEN = env_str("METRICS_TOKEN", secret=True)
# Other processes' sample folders this server's /metrics adds to its own (PROMETHEUS_MULTIPROC_DIR):
# the Celery worker's on the same host (scripts/run_dev.sh sets both).
METRICS_EXTRA_DIRS = env_list("METRICS_EXTRA_DIRS", "")
# A worker node's own metrics endpoint, "host:port" on a loopback or private address (no token):
# the samples of that worker's processes, served by its main process (core.metrics). Empty: none
# (a web node on the same host adds the worker's folder through METRICS_EXTRA_DIRS instead).
WORKER_METRICS_ADDR = env_str("WORKER_METRICS_ADDR", "")
# The Celery queues whose depth and oldest task /metrics reports (empty: every queue configured).
METRICS_QUEUES = env_list("METRICS_QUEUES", "")
# Each worker names the queues it reads in the broker this often (core.consumers); a queue that no
# worker named for three of these has no consumer: a warning on /health/ready, a log line, and
# tutor_queue_consumers 0 on /metrics.
QUEUE_HEARTBEAT_SECONDS = env_int("QUEUE_HEARTBEAT_SECONDS", 10, minimum=1)
# How many of a queue's oldest messages a scrape reads to count the waiting tasks by name
# (tutor_queue_tasks; a deeper queue's counts are scaled to its depth).
METRICS_QUEUE_SCAN = env_int("METRICS_QUEUE_SCAN", 500, minimum=1)
# Rows waiting for background work, counted at each scrape with an indexed filter:
# {kind: ("app_label.Model", {field: value})}.
METRICS_BACKLOGS: dict[str, tuple[str, dict[str, object]]] = {
    "summaries": ("conversations.Conversation", {"summary_status": "pending"}),
    "file_extraction": ("conversations.ConversationFile", {"status": "pending"}),
}
# /health/ready's checks beyond the database, migrations, broker and cache: {name: dotted path
# of a callable that raises core.health.CheckFailed (or CheckWarning), or returns False when it
# does not apply}.
HEALTH_READY_CHECKS = {
    "embedder": "memory.search.embeddings.embedder_ready",
    "safety_alerts": "safety.unrouted.ready_check",
    "scheduler": "tutor.beat.ready_check",
}
# /health/* and /metrics are answered by the first middleware (core.health.OperationsEndpoints),
# before the HTTPS redirect, the host check, sessions, CSRF and authentication: a balancer or a
# scraper polls a node by its address, over plain HTTP. Listed here for SecurityMiddleware too.
SECURE_REDIRECT_EXEMPT = [r"^health/(live|ready)$", r"^metrics$"]
