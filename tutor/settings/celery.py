"""Celery: the broker (REDIS_URL, else a filesystem broker under var/ that needs no server), task
acknowledgement, the queues each task goes to, and the scheduler. The periodic tasks are declared by
each app (core.background.periodic)."""

from __future__ import annotations

from kombu import Exchange, Queue

from .django import VAR_DIR
from .env import env_int, env_str, env_url
from .services import REDIS_URL

# The filesystem broker's URL names a host, which it ignores: without one kombu warns at every
# connection that it falls back to localhost.
CELERY_BROKER_URL = env_url("CELERY_BROKER_URL", REDIS_URL or "filesystem://localhost/", host=False, secret=True)
BROKER_DIR = VAR_DIR / "broker"
CELERY_BROKER_TRANSPORT_OPTIONS: dict[str, object] = {}
if CELERY_BROKER_URL.startswith("filesystem://"):
    # kombu's filesystem transport: a broker that needs no server, for the embedded default.
    for _folder in ("out", "processed", "control"):
        (BROKER_DIR / _folder).mkdir(parents=True, exist_ok=True)
    CELERY_BROKER_TRANSPORT_OPTIONS = {
        "data_folder_in": str(BROKER_DIR / "out"),
        "data_folder_out": str(BROKER_DIR / "out"),
        "processed_folder": str(BROKER_DIR / "processed"),
        "control_folder": str(BROKER_DIR / "control"),
        "store_processed": False,
    }
elif CELERY_BROKER_URL.startswith("redis"):
    # An unacknowledged task (worker killed mid-task) is redelivered after this many seconds.
    CELERY_BROKER_TRANSPORT_OPTIONS = {"visibility_timeout": env_int("CELERY_VISIBILITY_TIMEOUT", 3600, minimum=1)}
CELERY_TASK_IGNORE_RESULT = True
CELERY_RESULT_BACKEND = None
# A task is acknowledged after it ran, so a worker that dies mid-task loses nothing; every
# task is idempotent for that reason (see each task's docstring).
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
# A prefork pool process whose resident memory passed this many KiB is replaced after its task,
# so that memory a task left behind goes back to the system (0: never). Well above what a pool
# process holds with the local embedder loaded (docs/operations.md).
CELERY_WORKER_MAX_MEMORY_PER_CHILD = env_int("CELERY_WORKER_MAX_MEMORY_PER_CHILD", 1536 * 1024, minimum=0) or None

# The queues (docs/operations.md, "Queues, workers and the scheduler"): summaries, background
# memory work and file extraction each have a queue of their own, so that a backlog on one does
# not delay the others; every other task goes to `default`. Each name gets CELERY_QUEUE_PREFIX
# (several deployments, or test runs, on one Redis). CELERY_QUEUE=<name> instead sends every task
# to that one queue (tutor.celery.route).
CELERY_QUEUE_PREFIX = env_str("CELERY_QUEUE_PREFIX", "")
QUEUE_NAMES = ("default", "summaries", "memory", "files")
TASK_QUEUES = {
    "conversations.tasks.conversation_summarize": "summaries",
    "conversations.tasks.summaries_sweep": "summaries",
    # Their names before they moved to conversations.tasks, for messages queued during an upgrade.
    "memory.tasks.conversation_summarize": "summaries",
    "memory.tasks.summaries_sweep": "summaries",
    "conversations.tasks.conversations_end_idle": "summaries",
    "memory.tasks.memory_facts_extract": "memory",
    "memory.tasks.memory_consolidate": "memory",
    "memory.tasks.memories_consolidate_due": "memory",
    "memory.tasks.memory_embed": "memory",
    "memory.tasks.embeddings_sweep": "memory",
    "memory.tasks.student_reindex": "memory",
    "conversations.tasks.file_extract": "files",
    "conversations.tasks.files_sweep": "files",
}
CELERY_QUEUE = env_str("CELERY_QUEUE", "")
CELERY_TASK_DEFAULT_QUEUE = CELERY_QUEUE or f"{CELERY_QUEUE_PREFIX}default"
# Declared, so that a worker started without -Q (`celery -A tutor worker`) reads every one of them;
# -Q picks some. Each queue has its exchange and routing key of the same name, as Celery gives a
# queue it creates on the fly: a message sent to one queue reaches that queue only.
CELERY_TASK_QUEUES = tuple(
    Queue(name, Exchange(name), routing_key=name)
    for name in ([CELERY_QUEUE] if CELERY_QUEUE else [CELERY_QUEUE_PREFIX + q for q in QUEUE_NAMES])
)
CELERY_TASK_ROUTES = ("tutor.celery.route",)

# The scheduler: with Redis, RedBeat, which keeps the schedule in Redis and runs only while it
# holds a lock there, so that any number of beats may start and one sends the periodic tasks (a
# beat that dies holding it is replaced by a waiting one within the lock's timeout plus the loop
# interval). Without Redis (the embedded default, one host), Celery's own scheduler and its file.
CELERY_BEAT_SCHEDULE_FILENAME = str(VAR_DIR / "celerybeat-schedule")
CELERY_BEAT_MAX_LOOP_INTERVAL = env_int("BEAT_LOOP_SECONDS", 5, minimum=1)
_BEAT_REDIS = REDIS_URL or (CELERY_BROKER_URL if CELERY_BROKER_URL.startswith("redis") else "")
if _BEAT_REDIS:
    # RedBeat's scheduler, kept running through a Redis outage (tutor.beat).
    CELERY_BEAT_SCHEDULER = "tutor.beat:Scheduler"
    CELERY_REDBEAT_REDIS_URL = _BEAT_REDIS
    CELERY_REDBEAT_REDIS_OPTIONS: dict[str, object] = {}
    CELERY_REDBEAT_KEY_PREFIX = f"{CELERY_QUEUE_PREFIX}redbeat:"
    CELERY_REDBEAT_LOCK_TIMEOUT = env_int("BEAT_LOCK_SECONDS", 30, minimum=CELERY_BEAT_MAX_LOOP_INTERVAL * 2)
else:
    CELERY_BEAT_SCHEDULER = "celery.beat:PersistentScheduler"
